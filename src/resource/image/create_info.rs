//! [`StImage::from_create_info`]: wrapping an app's image from the `VkImageCreateInfo` it was
//! made with, rather than restating it as an [`ImageDesc`].

use super::StImage;
use crate::error::{Error, Result};
use crate::resource::{Destroy, ImageDesc, ResourceState, Sharing};
use ash::vk;

impl StImage {
    /// Wraps an image the app created with `vkCreateImage(info)`: [`StImage::from_raw`] with
    /// the description read from `info`, so that nothing is restated by hand.
    ///
    /// Errors, creating nothing: an `info` no image can be created with (an extent, mip or
    /// layer count of 0; `CONCURRENT` sharing with fewer than two families) is
    /// [`Error::InvalidArgument`], and so is an `initial` state that contradicts
    /// `info.initial_layout`: an image is in `UNDEFINED` or `PREINITIALIZED` only as created
    /// (no transition ends in either), so an `initial` layout of either must be `info`'s. A
    /// `PREINITIALIZED` image the app has not used yet is wrapped with
    /// `ResourceState::defined(vk::ImageLayout::PREINITIALIZED)`.
    ///
    /// In debug builds the handle is checked against `info`: the memory requirements Vulkan
    /// reports for `handle` must be those it reports for `info`
    /// (`vkGetDeviceImageMemoryRequirements`), else [`Error::InvalidArgument`] naming both.
    /// This catches another image's handle or info (a wrong extent, format, mip or layer
    /// count, sample count) wherever they change the memory the image needs. Images that
    /// query cannot describe are not compared: sparse and disjoint images, DRM format
    /// modifier tiling, and infos chaining a swapchain or an external (Android, QNX) format.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, raw: ash::vk::Image, info: &ash::vk::ImageCreateInfo<'_>) -> vk_baton::Result<()> {
    /// use vk_baton::{Destroy, ResourceState, StImage};
    /// // SAFETY: `raw` was created from `info` on `device` and bound to memory; never used
    /// // yet; the app destroys it after the last `Arc` of the wrapper is gone.
    /// let img = unsafe {
    ///     StImage::from_create_info(device, raw, info, "app image", ResourceState::undefined(), Destroy::AppKeeps)?
    /// };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::from_raw`], with `info` in place of the description: `handle` was
    /// created on `device` with `info` (its `pNext` chain included) and bound to memory.
    /// `info`'s pointers (`pQueueFamilyIndices`, `pNext`) are valid, as ash's builders make
    /// them.
    pub unsafe fn from_create_info(
        device: &ash::Device,
        handle: vk::Image,
        info: &vk::ImageCreateInfo<'_>,
        name: &str,
        initial: ResourceState,
        destroy: Destroy,
    ) -> Result<Self> {
        // SAFETY: the caller guarantees `info`'s pointers.
        let desc = unsafe { desc_of(info, name) }?;
        check_initial_layout(info, &initial, name)?;
        // SAFETY: `info`'s pNext chain is valid (the contract).
        if cfg!(debug_assertions) && unsafe { requirements_comparable(info) } {
            // SAFETY: `handle` is a live image of `device` and `info` valid (the contract),
            // one whose requirements Vulkan can state from `info` alone.
            unsafe { check_requirements(device, handle, info, name) }?;
        }
        // SAFETY: the caller's contract is `from_raw`'s, and `desc` is `info`'s.
        Ok(unsafe { StImage::from_raw(device, handle, desc, name, initial, destroy) })
    }
}

/// The description of an image created with `info`.
///
/// # Safety
///
/// `info.p_queue_family_indices` points at `info.queue_family_index_count` values when the
/// sharing mode is `CONCURRENT`.
unsafe fn desc_of(info: &vk::ImageCreateInfo<'_>, name: &str) -> Result<ImageDesc> {
    let e = info.extent;
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Err(Error::InvalidArgument(format!(
            "image `{name}`: its create info's extent {}x{}x{} is empty",
            e.width, e.height, e.depth
        )));
    }
    if info.mip_levels == 0 || info.array_layers == 0 {
        return Err(Error::InvalidArgument(format!(
            "image `{name}`: its create info has {} mip level(s) and {} layer(s); an image needs one of each at least",
            info.mip_levels, info.array_layers
        )));
    }
    let sharing = if info.sharing_mode == vk::SharingMode::CONCURRENT {
        let count = info.queue_family_index_count as usize;
        if count < 2 || info.p_queue_family_indices.is_null() {
            return Err(Error::InvalidArgument(format!(
                "image `{name}`: its create info is CONCURRENT with {count} queue famil(ies); Vulkan needs two at least"
            )));
        }
        // SAFETY: non-null, and pointing at `count` values (the caller's contract).
        let families = unsafe { std::slice::from_raw_parts(info.p_queue_family_indices, count) };
        Sharing::Concurrent(families.to_vec())
    } else {
        Sharing::Exclusive
    };
    Ok(ImageDesc {
        format: info.format,
        extent: info.extent,
        mip_levels: info.mip_levels,
        array_layers: info.array_layers,
        usage: info.usage,
        sharing,
        image_type: info.image_type,
        samples: info.samples,
        tiling: info.tiling,
        flags: info.flags,
    })
}

/// Checks that `initial` is a state an image created with `info` can be in: no transition
/// ends in `UNDEFINED` or `PREINITIALIZED`, so an image is in either only as created.
fn check_initial_layout(
    info: &vk::ImageCreateInfo<'_>,
    initial: &ResourceState,
    name: &str,
) -> Result<()> {
    let (stated, created) = (initial.layout, info.initial_layout);
    let creation_only = [vk::ImageLayout::UNDEFINED, vk::ImageLayout::PREINITIALIZED];
    if creation_only.contains(&stated) && stated != created {
        return Err(Error::InvalidArgument(format!(
            "image `{name}`: its initial state is in layout {stated:?}, but its create info \
             made it {created:?}, and an image is in {stated:?} only as created; pass the state \
             the image is in (unused: layout {created:?})"
        )));
    }
    Ok(())
}

/// Whether `vkGetDeviceImageMemoryRequirements` may be asked for `info` without a plane, and
/// so compared with the handle's requirements.
///
/// # Safety
///
/// `info.p_next` is null or a valid chain of Vulkan structures.
unsafe fn requirements_comparable(info: &vk::ImageCreateInfo<'_>) -> bool {
    // Vulkan forbids these queries on sparse images, and a disjoint image has one set of
    // requirements per plane.
    let per_plane = vk::ImageCreateFlags::SPARSE_BINDING | vk::ImageCreateFlags::DISJOINT;
    // A DRM format modifier image's query must name a memory plane
    // (VUID-VkDeviceImageMemoryRequirements-pCreateInfo-06420), and must not see its
    // explicit modifier info (-06776).
    if info.flags.intersects(per_plane) || info.tiling == vk::ImageTiling::DRM_FORMAT_MODIFIER_EXT {
        return false;
    }
    // The query must not see a swapchain's image info (-pCreateInfo-06416) nor an external
    // format (-pNext-06996 Android, -pNext-08962 QNX; those forbid a non-zero one, and an
    // app chains one only to use it).
    let forbidden = [
        vk::StructureType::IMAGE_SWAPCHAIN_CREATE_INFO_KHR,
        vk::StructureType::EXTERNAL_FORMAT_ANDROID,
        vk::StructureType::EXTERNAL_FORMAT_QNX,
    ];
    let mut next = info.p_next.cast::<vk::BaseInStructure<'_>>();
    while !next.is_null() {
        // SAFETY: a non-null link of a valid chain (the contract) starts with sType, pNext.
        let link = unsafe { &*next };
        if forbidden.contains(&link.s_type) {
            return false;
        }
        next = link.p_next;
    }
    true
}

/// Checks that `handle` needs the memory an image created with `info` needs.
///
/// # Safety
///
/// `handle` is a live image of `device`; `info` is valid and
/// [`requirements_comparable`].
unsafe fn check_requirements(
    device: &ash::Device,
    handle: vk::Image,
    info: &vk::ImageCreateInfo<'_>,
    name: &str,
) -> Result<()> {
    // SAFETY: a live, non-sparse, non-disjoint image of `device` (the contract).
    let actual = unsafe { device.get_image_memory_requirements(handle) };
    let query = vk::DeviceImageMemoryRequirements::default().create_info(info);
    let mut stated = vk::MemoryRequirements2::default();
    // SAFETY: a valid create info the query may see (the contract); Vulkan 1.3 core, which
    // the library requires of the device.
    unsafe { device.get_device_image_memory_requirements(&query, &mut stated) };
    let stated = stated.memory_requirements;
    let key = |r: &vk::MemoryRequirements| (r.size, r.alignment, r.memory_type_bits);
    if key(&actual) != key(&stated) {
        return Err(Error::InvalidArgument(format!(
            "image `{name}`: the handle does not match its create info ({:?} {}x{}x{}, {} mip(s), {} layer(s)): \
             the handle needs {} bytes (alignment {}, memory types {:#x}), an image of that info {} bytes \
             (alignment {}, memory types {:#x}); pass the info the handle was created with",
            info.format,
            info.extent.width,
            info.extent.height,
            info.extent.depth,
            info.mip_levels,
            info.array_layers,
            actual.size,
            actual.alignment,
            actual.memory_type_bits,
            stated.size,
            stated.alignment,
            stated.memory_type_bits
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> vk::ImageCreateInfo<'static> {
        vk::ImageCreateInfo::default()
            .format(vk::Format::R8G8B8A8_UNORM)
            .extent(vk::Extent3D {
                width: 4,
                height: 4,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
    }

    /// The handle check skips the create infos `vkGetDeviceImageMemoryRequirements` must not
    /// be given without a plane, as it skips sparse and disjoint images.
    #[test]
    fn infos_the_requirements_query_must_not_see_are_not_compared() {
        // SAFETY (each call): the infos' pNext chains are built by ash and live.
        assert!(unsafe { requirements_comparable(&info()) });
        let sparse = info().flags(vk::ImageCreateFlags::SPARSE_BINDING);
        assert!(!unsafe { requirements_comparable(&sparse) });
        let drm = info().tiling(vk::ImageTiling::DRM_FORMAT_MODIFIER_EXT);
        assert!(!unsafe { requirements_comparable(&drm) });
        let mut android = vk::ExternalFormatANDROID::default().external_format(7);
        let mut usage = vk::ImageStencilUsageCreateInfo::default();
        // The external format behind another link of the chain.
        let chained = info().push_next(&mut android).push_next(&mut usage);
        assert!(!unsafe { requirements_comparable(&chained) });
        let mut qnx = vk::ExternalFormatQNX::default().external_format(7);
        assert!(!unsafe { requirements_comparable(&info().push_next(&mut qnx)) });
        let mut usage = vk::ImageStencilUsageCreateInfo::default();
        assert!(unsafe { requirements_comparable(&info().push_next(&mut usage)) });
    }

    /// An initial state in `UNDEFINED` or `PREINITIALIZED` must be the create info's layout;
    /// any other layout is one the app may have transitioned the image to.
    #[test]
    fn an_initial_state_the_create_info_contradicts_is_refused() {
        let pre = info().initial_layout(vk::ImageLayout::PREINITIALIZED);
        let err = check_initial_layout(&pre, &ResourceState::undefined(), "img").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(
            text.contains("`img`") && text.contains("PREINITIALIZED"),
            "{text}"
        );
        let preinit = ResourceState::defined(vk::ImageLayout::PREINITIALIZED);
        assert!(check_initial_layout(&info(), &preinit, "img").is_err());
        assert!(check_initial_layout(&pre, &preinit, "img").is_ok());
        assert!(check_initial_layout(&info(), &ResourceState::undefined(), "img").is_ok());
        let general = ResourceState::defined(vk::ImageLayout::GENERAL);
        assert!(check_initial_layout(&pre, &general, "img").is_ok());
    }
}
