//! The device features that some named accesses need
//! ([`DeviceFeatures`]: mesh and task shaders, acceleration structures, ray tracing, ray
//! queries), `maintenance8`, `maintenance9` and `unifiedImageLayouts`, each enabled with its
//! extensions through `pNext`, and told to every graph the context makes.

use ash::vk;
use std::ffi::CStr;
use vk_baton::access::DeviceFeatures as F;
use vk_baton::access::DeviceFeatures;
use vk_baton::{Error, Result};

/// Each feature, the extensions it needs, and whether it needs `bufferDeviceAddress`
/// (acceleration structures are built from device addresses).
const EXTENSIONS: [(F, &[&CStr], bool); 9] = [
    (F::TASK_SHADER, &[ash::ext::mesh_shader::NAME], false),
    (F::MESH_SHADER, &[ash::ext::mesh_shader::NAME], false),
    (
        F::ACCELERATION_STRUCTURE,
        &[
            ash::khr::acceleration_structure::NAME,
            ash::khr::deferred_host_operations::NAME,
        ],
        true,
    ),
    (F::RAY_QUERY, &[ash::khr::ray_query::NAME], true),
    (
        F::RAY_TRACING_PIPELINE,
        &[ash::khr::ray_tracing_pipeline::NAME],
        true,
    ),
    (
        F::RAY_TRACING_MAINTENANCE1,
        &[ash::khr::ray_tracing_maintenance1::NAME],
        true,
    ),
    (F::MAINTENANCE8, &[c"VK_KHR_maintenance8"], false),
    (F::MAINTENANCE9, &[c"VK_KHR_maintenance9"], false),
    (
        F::UNIFIED_IMAGE_LAYOUTS,
        &[c"VK_KHR_unified_image_layouts"],
        false,
    ),
];

/// Each feature of [`DeviceFeatures`] alone.
pub(crate) const EACH: [DeviceFeatures; EXTENSIONS.len()] = {
    let mut each = [F::NONE; EXTENSIONS.len()];
    let mut i = 0;
    while i < EXTENSIONS.len() {
        each[i] = EXTENSIONS[i].0;
        i += 1;
    }
    each
};

/// `VkPhysicalDeviceMaintenance8FeaturesKHR` (`VK_KHR_maintenance8`) or
/// `VkPhysicalDeviceMaintenance9FeaturesKHR` (`VK_KHR_maintenance9`), which ash 0.38 lacks:
/// the `sType`/`pNext` header every chained structure starts with, then the one feature both
/// have.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct MaintenanceFeatures {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    enabled: vk::Bool32,
}

/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_8_FEATURES_KHR`.
const MAINTENANCE_8_FEATURES: vk::StructureType = vk::StructureType::from_raw(1_000_574_000);
/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_9_FEATURES_KHR`.
const MAINTENANCE_9_FEATURES: vk::StructureType = vk::StructureType::from_raw(1_000_584_000);

impl MaintenanceFeatures {
    /// The structure of `s_type`, its feature off.
    fn of(s_type: vk::StructureType) -> Self {
        MaintenanceFeatures {
            s_type,
            p_next: std::ptr::null_mut(),
            enabled: vk::FALSE,
        }
    }
}

/// `VkPhysicalDeviceUnifiedImageLayoutsFeaturesKHR` (`VK_KHR_unified_image_layouts`), which
/// ash 0.38 lacks. Only `unifiedImageLayouts` is ever enabled: the graph keeps the video
/// layouts, so `unifiedImageLayoutsVideo` would change nothing.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct UnifiedImageLayoutsFeatures {
    s_type: vk::StructureType,
    p_next: *mut std::ffi::c_void,
    unified_image_layouts: vk::Bool32,
    unified_image_layouts_video: vk::Bool32,
}

/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_UNIFIED_IMAGE_LAYOUTS_FEATURES_KHR`.
const UNIFIED_IMAGE_LAYOUTS_FEATURES: vk::StructureType =
    vk::StructureType::from_raw(1_000_527_000);

impl Default for UnifiedImageLayoutsFeatures {
    fn default() -> Self {
        UnifiedImageLayoutsFeatures {
            s_type: UNIFIED_IMAGE_LAYOUTS_FEATURES,
            p_next: std::ptr::null_mut(),
            unified_image_layouts: vk::FALSE,
            unified_image_layouts_video: vk::FALSE,
        }
    }
}

// SAFETY: `repr(C)`, the `sType`/`pNext` header of `VkBaseOutStructure`, then the two
// `VkBool32` members of `VkPhysicalDeviceUnifiedImageLayoutsFeaturesKHR` in the
// specification's order, with that structure's `sType` (set by `default`, the only
// constructor); the specification lets it extend both.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for UnifiedImageLayoutsFeatures {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for UnifiedImageLayoutsFeatures {}

// SAFETY: the structure is `repr(C)` and starts with `sType` and `pNext` as
// `VkBaseOutStructure` does, with an `sType` the specification gives it (`of` is only called
// with the two above); the specification lets both extend `VkPhysicalDeviceFeatures2` and
// `VkDeviceCreateInfo`.
unsafe impl vk::ExtendsPhysicalDeviceFeatures2 for MaintenanceFeatures {}
// SAFETY: as above.
unsafe impl vk::ExtendsDeviceCreateInfo for MaintenanceFeatures {}

/// The features' structures for `pNext`, for a query or for device creation.
pub(crate) struct FeatureStructs {
    mesh: vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>,
    acceleration: vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>,
    ray_query: vk::PhysicalDeviceRayQueryFeaturesKHR<'static>,
    pipeline: vk::PhysicalDeviceRayTracingPipelineFeaturesKHR<'static>,
    maintenance1: vk::PhysicalDeviceRayTracingMaintenance1FeaturesKHR<'static>,
    maintenance8: MaintenanceFeatures,
    maintenance9: MaintenanceFeatures,
    unified_layouts: UnifiedImageLayoutsFeatures,
}

impl Default for FeatureStructs {
    fn default() -> Self {
        FeatureStructs {
            mesh: Default::default(),
            acceleration: Default::default(),
            ray_query: Default::default(),
            pipeline: Default::default(),
            maintenance1: Default::default(),
            maintenance8: MaintenanceFeatures::of(MAINTENANCE_8_FEATURES),
            maintenance9: MaintenanceFeatures::of(MAINTENANCE_9_FEATURES),
            unified_layouts: Default::default(),
        }
    }
}

impl FeatureStructs {
    /// The structures with `wanted`'s features set, for device creation.
    pub(crate) fn enabling(wanted: DeviceFeatures) -> Self {
        let on = |f| vk::Bool32::from(wanted.contains(f));
        let mut s = Self::default();
        s.mesh.task_shader = on(F::TASK_SHADER);
        s.mesh.mesh_shader = on(F::MESH_SHADER);
        s.acceleration.acceleration_structure = on(F::ACCELERATION_STRUCTURE);
        s.ray_query.ray_query = on(F::RAY_QUERY);
        s.pipeline.ray_tracing_pipeline = on(F::RAY_TRACING_PIPELINE);
        s.maintenance1.ray_tracing_maintenance1 = on(F::RAY_TRACING_MAINTENANCE1);
        s.maintenance8.enabled = on(F::MAINTENANCE8);
        s.maintenance9.enabled = on(F::MAINTENANCE9);
        s.unified_layouts.unified_image_layouts = on(F::UNIFIED_IMAGE_LAYOUTS);
        s
    }

    /// The features these structures say are there (after a query).
    fn present(&self) -> DeviceFeatures {
        let pairs = [
            (self.mesh.task_shader, F::TASK_SHADER),
            (self.mesh.mesh_shader, F::MESH_SHADER),
            (
                self.acceleration.acceleration_structure,
                F::ACCELERATION_STRUCTURE,
            ),
            (self.ray_query.ray_query, F::RAY_QUERY),
            (self.pipeline.ray_tracing_pipeline, F::RAY_TRACING_PIPELINE),
            (
                self.maintenance1.ray_tracing_maintenance1,
                F::RAY_TRACING_MAINTENANCE1,
            ),
            (self.maintenance8.enabled, F::MAINTENANCE8),
            (self.maintenance9.enabled, F::MAINTENANCE9),
            (
                self.unified_layouts.unified_image_layouts,
                F::UNIFIED_IMAGE_LAYOUTS,
            ),
        ];
        pairs
            .into_iter()
            .filter(|(b, _)| *b == vk::TRUE)
            .fold(F::NONE, |m, (_, f)| m | f)
    }
}

/// Chains onto `$info` the structures of `$s` (a [`FeatureStructs`]) for the extensions
/// `$wanted` needs, and only those: a structure of an extension the device lacks may not be
/// chained.
macro_rules! chain_wanted {
    ($s:expr, $wanted:expr, $info:expr) => {{
        let (s, wanted, mut info) = ($s, $wanted, $info);
        if wanted.contains(F::TASK_SHADER) || wanted.contains(F::MESH_SHADER) {
            info = info.push_next(&mut s.mesh);
        }
        if wanted.contains(F::ACCELERATION_STRUCTURE) {
            info = info.push_next(&mut s.acceleration);
        }
        if wanted.contains(F::RAY_QUERY) {
            info = info.push_next(&mut s.ray_query);
        }
        if wanted.contains(F::RAY_TRACING_PIPELINE) {
            info = info.push_next(&mut s.pipeline);
        }
        if wanted.contains(F::RAY_TRACING_MAINTENANCE1) {
            info = info.push_next(&mut s.maintenance1);
        }
        if wanted.contains(F::MAINTENANCE8) {
            info = info.push_next(&mut s.maintenance8);
        }
        if wanted.contains(F::MAINTENANCE9) {
            info = info.push_next(&mut s.maintenance9);
        }
        if wanted.contains(F::UNIFIED_IMAGE_LAYOUTS) {
            info = info.push_next(&mut s.unified_layouts);
        }
        info
    }};
}

impl FeatureStructs {
    /// `info` with the structures of `wanted` chained, for device creation.
    pub(crate) fn chain_create<'a>(
        &'a mut self,
        wanted: DeviceFeatures,
        info: vk::DeviceCreateInfo<'a>,
    ) -> vk::DeviceCreateInfo<'a> {
        chain_wanted!(self, wanted, info)
    }
}

/// The extensions `wanted` needs, each once, and whether it needs `bufferDeviceAddress`.
pub(crate) fn extensions(wanted: DeviceFeatures) -> (Vec<&'static CStr>, bool) {
    let mut names: Vec<&'static CStr> = Vec::new();
    let mut address = false;
    for (f, exts, needs_address) in EXTENSIONS {
        if wanted.contains(f) {
            address |= needs_address;
            for e in exts {
                if !names.contains(e) {
                    names.push(e);
                }
            }
        }
    }
    (names, address)
}

/// Fails with [`Error::Environment`] unless the device has every feature of `wanted` (its
/// extensions are checked by the caller first).
///
/// # Safety
///
/// `physical_device` is a physical device of the live `instance`, which has every extension
/// [`extensions`] names for `wanted`.
pub(crate) unsafe fn check_supported(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    wanted: DeviceFeatures,
) -> Result<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let mut structs = FeatureStructs::default();
    {
        let mut query = chain_wanted!(&mut structs, wanted, vk::PhysicalDeviceFeatures2::default());
        // SAFETY: a plain query on a physical device of `instance`, chaining only structures
        // of extensions it has (this function's contract).
        unsafe { instance.get_physical_device_features2(physical_device, &mut query) };
    }
    let missing = wanted.without(structs.present());
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Environment(format!(
            "the device lacks features the app asked for: {}",
            missing.names().collect::<Vec<_>>().join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The raw structures have the C layout of the specification's: the `sType`/`pNext`
    /// header of `VkBaseOutStructure`, then each `VkBool32` in order. No device here has
    /// `VK_KHR_unified_image_layouts`, so this is what checks its structure.
    #[test]
    fn raw_feature_structures_have_the_specifications_layout() {
        let header = size_of::<vk::BaseOutStructure<'static>>();
        assert_eq!(offset_of!(MaintenanceFeatures, enabled), header);
        type U = UnifiedImageLayoutsFeatures;
        assert_eq!(offset_of!(U, unified_image_layouts), header);
        assert_eq!(offset_of!(U, unified_image_layouts_video), header + 4);
        assert_eq!(size_of::<U>(), header + 8);
        let s = FeatureStructs::enabling(F::UNIFIED_IMAGE_LAYOUTS);
        assert_eq!(s.unified_layouts.s_type.as_raw(), 1_000_527_000);
        assert_eq!(s.unified_layouts.unified_image_layouts, vk::TRUE);
        assert_eq!(s.unified_layouts.unified_image_layouts_video, vk::FALSE);
        assert_eq!(s.present(), F::UNIFIED_IMAGE_LAYOUTS);
    }
}
