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
    /// [`Error::InvalidArgument`]. In debug builds the handle is checked against `info`: the
    /// memory requirements Vulkan reports for `handle` must be those it reports for `info`
    /// (`vkGetDeviceImageMemoryRequirements`), else [`Error::InvalidArgument`] naming both.
    /// This catches another image's handle or info (a wrong extent, format, mip or layer
    /// count, sample count) wherever they change the memory the image needs. Sparse and
    /// disjoint images are not compared.
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
        if cfg!(debug_assertions) {
            // SAFETY: `handle` is a live image of `device` and `info` valid (the contract).
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

/// Checks that `handle` needs the memory an image created with `info` needs.
///
/// # Safety
///
/// `handle` is a live image of `device`; `info` is valid.
unsafe fn check_requirements(
    device: &ash::Device,
    handle: vk::Image,
    info: &vk::ImageCreateInfo<'_>,
    name: &str,
) -> Result<()> {
    // Vulkan forbids these queries on sparse images, and a disjoint image has one set of
    // requirements per plane.
    let skip = vk::ImageCreateFlags::SPARSE_BINDING | vk::ImageCreateFlags::DISJOINT;
    if info.flags.intersects(skip) {
        return Ok(());
    }
    // SAFETY: a live, non-sparse, non-disjoint image of `device` (the contract).
    let actual = unsafe { device.get_image_memory_requirements(handle) };
    let query = vk::DeviceImageMemoryRequirements::default().create_info(info);
    let mut stated = vk::MemoryRequirements2::default();
    // SAFETY: a valid create info of a non-sparse, non-disjoint image; Vulkan 1.3 core, which
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
