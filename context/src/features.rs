//! What [`Context`](super::Context) enables on its device.
//!
//! Always, since vk-baton and a raster frame need them (all are required of a Vulkan 1.3
//! device): `synchronization2` and `dynamicRendering` (1.3), `timelineSemaphore` (1.2). Where
//! the device has them: `hostQueryReset` (1.2, GPU timings reset their queries with it),
//! `separateDepthStencilLayouts` (1.2, which a barrier on one aspect of a depth/stencil image
//! needs: see [`Use::aspect`](vk_baton::pass::Use::aspect)) and the core features a renderer
//! usually needs, listed in [`where_supported`]. Then whatever the app asks for in
//! [`ContextOptions::features`](super::ContextOptions::features) and
//! [`ContextOptions::device_extensions`](super::ContextOptions::device_extensions), which the
//! device must have.

use ash::vk;
use std::ffi::CString;
use vk_baton::{Error, Result};

/// Core features the context enables when the device has them: what raster frames commonly
/// use (independent blending, multi-draw and first-instance indirect draws, stores from vertex
/// and fragment shaders, anisotropic sampling, sample shading, depth clamping, wireframes).
pub(crate) fn where_supported() -> vk::PhysicalDeviceFeatures {
    vk::PhysicalDeviceFeatures {
        independent_blend: vk::TRUE,
        multi_draw_indirect: vk::TRUE,
        draw_indirect_first_instance: vk::TRUE,
        vertex_pipeline_stores_and_atomics: vk::TRUE,
        fragment_stores_and_atomics: vk::TRUE,
        sampler_anisotropy: vk::TRUE,
        sample_rate_shading: vk::TRUE,
        depth_clamp: vk::TRUE,
        fill_mode_non_solid: vk::TRUE,
        ..Default::default()
    }
}

/// The features as one `VkBool32` per feature, in declaration order.
fn words(f: &vk::PhysicalDeviceFeatures) -> &[vk::Bool32] {
    const N: usize = std::mem::size_of::<vk::PhysicalDeviceFeatures>() / 4;
    const { assert!(N * 4 == std::mem::size_of::<vk::PhysicalDeviceFeatures>()) };
    // SAFETY: `VkPhysicalDeviceFeatures` is `repr(C)` with only `VkBool32` (u32) fields, so it
    // is `N` consecutive, aligned u32 values, borrowed for as long as `f`.
    unsafe { std::slice::from_raw_parts((f as *const vk::PhysicalDeviceFeatures).cast(), N) }
}

/// The features set in both `a` and `b`.
fn both(
    a: &vk::PhysicalDeviceFeatures,
    b: &vk::PhysicalDeviceFeatures,
) -> vk::PhysicalDeviceFeatures {
    let mut out = *a;
    for (o, y) in words_mut(&mut out).iter_mut().zip(words(b)) {
        *o = u32::from(*o != 0 && *y != 0);
    }
    out
}

/// The names of the features set in `f` (for messages), as ash spells its fields.
pub(crate) fn names(f: &vk::PhysicalDeviceFeatures) -> Vec<String> {
    let text = format!("{f:?}");
    let body = text
        .split_once('{')
        .and_then(|(_, b)| b.rsplit_once('}'))
        .map_or("", |(b, _)| b);
    body.split(',')
        .filter_map(|kv| kv.split_once(':'))
        .filter(|(_, v)| v.trim() != "0")
        .map(|(k, _)| k.trim().to_owned())
        .collect()
}

/// What to enable on the device: the core features, whether `hostQueryReset` and
/// `separateDepthStencilLayouts` are on, and the device extensions the app asked for.
pub(crate) struct Chosen {
    pub(crate) core: vk::PhysicalDeviceFeatures,
    pub(crate) host_query_reset: bool,
    pub(crate) separate_depth_stencil_layouts: bool,
    pub(crate) extensions: Vec<CString>,
    /// The features some accesses need, enabled with their extensions
    /// ([`super::extension_features`]).
    pub(crate) device_features: vk_baton::access::DeviceFeatures,
    /// `bufferDeviceAddress` (1.2), which acceleration structures need.
    pub(crate) buffer_device_address: bool,
}

/// Chooses the features and extensions of the context's device: [`where_supported`] as far as
/// the device has them, plus `wanted`, which it must have, as it must have every extension of
/// `extensions`.
///
/// # Safety
///
/// `physical_device` is a physical device of the live `instance`.
pub(crate) unsafe fn choose(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    wanted: &vk::PhysicalDeviceFeatures,
    extensions: &[CString],
    device_features: vk_baton::access::DeviceFeatures,
) -> Result<Chosen> {
    let (feature_extensions, buffer_device_address) =
        super::extension_features::extensions(device_features);
    let mut extensions = extensions.to_vec();
    for e in feature_extensions {
        if !extensions.iter().any(|x| x.as_c_str() == e) {
            extensions.push(e.to_owned());
        }
    }
    let mut has12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut has = vk::PhysicalDeviceFeatures2::default().push_next(&mut has12);
    // SAFETY: a plain query on a physical device of `instance` (this function's contract).
    unsafe { instance.get_physical_device_features2(physical_device, &mut has) };
    let supported = has.features;
    let missing = names(&both(wanted, &invert(&supported)));
    if !missing.is_empty() {
        return Err(Error::Environment(format!(
            "the device lacks features the app asked for: {}",
            missing.join(", ")
        )));
    }
    // SAFETY: as above.
    let available = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .map_err(|e| Error::vk("vkEnumerateDeviceExtensionProperties", e))?;
    if let Some(e) = extensions.iter().find(|e| {
        !available
            .iter()
            .any(|a| a.extension_name_as_c_str() == Ok(e.as_c_str()))
    }) {
        return Err(Error::Environment(format!(
            "the device lacks the extension the app asked for: {}",
            e.to_string_lossy()
        )));
    }
    // SAFETY: `physical_device` is of the live `instance` and has every extension the
    // features need (checked just above).
    unsafe {
        super::extension_features::check_supported(instance, physical_device, device_features)
    }?;
    if buffer_device_address && has12.buffer_device_address != vk::TRUE {
        return Err(Error::Environment(
            "the device lacks bufferDeviceAddress, which acceleration structures need".into(),
        ));
    }
    let mut core = both(&where_supported(), &supported);
    for (c, w) in words_mut(&mut core).iter_mut().zip(words(wanted)) {
        *c |= *w;
    }
    Ok(Chosen {
        core,
        host_query_reset: has12.host_query_reset == vk::TRUE,
        separate_depth_stencil_layouts: has12.separate_depth_stencil_layouts == vk::TRUE,
        extensions,
        device_features,
        buffer_device_address,
    })
}

/// The device's extensions, and the features of [`DeviceFeatures`](vk_baton::access::DeviceFeatures)
/// it has with their extensions: what it reports, for tests that need one
/// ([`Context::machine`](super::Context::machine)).
///
/// # Safety
///
/// `physical_device` is a physical device of the live `instance`.
pub(crate) unsafe fn supported(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> (Vec<String>, vk_baton::access::DeviceFeatures) {
    // SAFETY: a plain query on a physical device of `instance` (this function's contract).
    let available = unsafe { instance.enumerate_device_extension_properties(physical_device) }
        .unwrap_or_default();
    let names: Vec<String> = available
        .iter()
        .filter_map(|e| e.extension_name_as_c_str().ok())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let mut features = vk_baton::access::DeviceFeatures::NONE;
    for feature in super::extension_features::EACH {
        let (needed, _) = super::extension_features::extensions(feature);
        let has_extensions = needed
            .iter()
            .all(|e| names.iter().any(|n| n.as_bytes() == e.to_bytes()));
        // SAFETY: the device has every extension the feature needs (just checked).
        if has_extensions
            && unsafe {
                super::extension_features::check_supported(instance, physical_device, feature)
            }
            .is_ok()
        {
            features |= feature;
        }
    }
    (names, features)
}

/// The features not set in `f`.
fn invert(f: &vk::PhysicalDeviceFeatures) -> vk::PhysicalDeviceFeatures {
    let mut out = *f;
    for w in words_mut(&mut out) {
        *w = u32::from(*w == 0);
    }
    out
}

/// As [`words`], mutably.
fn words_mut(f: &mut vk::PhysicalDeviceFeatures) -> &mut [vk::Bool32] {
    let n = words(f).len();
    // SAFETY: as in `words`: `n` consecutive u32 fields, each of which stays a valid VkBool32
    // whatever u32 is written (Vulkan reads any non-zero value as true).
    unsafe { std::slice::from_raw_parts_mut((f as *mut vk::PhysicalDeviceFeatures).cast(), n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_sets_combine_field_by_field_and_name_their_fields() {
        let a = vk::PhysicalDeviceFeatures {
            independent_blend: vk::TRUE,
            wide_lines: vk::TRUE,
            ..Default::default()
        };
        let b = vk::PhysicalDeviceFeatures {
            wide_lines: vk::TRUE,
            inherited_queries: vk::TRUE,
            ..Default::default()
        };
        assert_eq!(names(&both(&a, &b)), ["wide_lines"]);
        assert_eq!(names(&a), ["independent_blend", "wide_lines"]);
        let not_a = invert(&a);
        assert!(names(&not_a).contains(&"inherited_queries".to_owned()));
        assert!(!names(&not_a).contains(&"wide_lines".to_owned()));
        assert_eq!(names(&both(&a, &not_a)), Vec::<String>::new());
        let zero = vk::PhysicalDeviceFeatures::default();
        assert_eq!(names(&zero), Vec::<String>::new());
        assert_eq!(words(&zero).len(), 55);
    }
}
