//! The Vulkan objects of transients: the probe that asks the driver what memory a description
//! needs (once per transient handle), and the images, buffers and views a heap set binds.

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::TransientMemory;
use crate::resource::{BufferDesc, ImageDesc, StBuffer, StImage};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// A transient image of `desc` for the graph `graph`: no `VkImage` of its own, and the
/// memory requirements of one (asked of a probe image, destroyed at once).
pub(super) fn transient_image(
    device: &ash::Device,
    desc: ImageDesc,
    name: &str,
    buffer_image_granularity: u64,
    graph: u64,
) -> Result<StImage> {
    desc.check(name)?;
    let (probe, req) = create_image(device, &desc)?;
    // SAFETY: the probe was never bound or used.
    unsafe { device.destroy_image(probe, None) };
    let mut memory = TransientMemory::image(req.size, req.alignment, req.memory_type_bits)
        .with_granularity(buffer_image_granularity);
    memory.linear = desc.tiling == vk::ImageTiling::LINEAR;
    Ok(StImage::new_transient(device, desc, name, memory, graph))
}

/// A transient buffer of `desc` for the graph `graph`: no `VkBuffer` of its own, and the
/// memory requirements of one (asked of a probe buffer, destroyed at once).
pub(super) fn transient_buffer(
    device: &ash::Device,
    desc: BufferDesc,
    name: &str,
    buffer_image_granularity: u64,
    graph: u64,
) -> Result<StBuffer> {
    if desc.size == 0 {
        return Err(Error::InvalidArgument(format!("buffer `{name}`: size 0")));
    }
    if desc.location != MemoryLocation::GpuOnly {
        return Err(Error::InvalidArgument(format!(
            "transient buffer `{name}`: its memory is device-local (MemoryLocation::GpuOnly); \
             only the GPU inside one execution touches a transient"
        )));
    }
    let (probe, req) = create_buffer(device, &desc)?;
    // SAFETY: the probe was never bound or used.
    unsafe { device.destroy_buffer(probe, None) };
    let memory = TransientMemory::buffer(req.size, req.alignment, req.memory_type_bits)
        .with_granularity(buffer_image_granularity);
    Ok(StBuffer::new_transient(device, desc, name, memory, graph))
}

/// Whether images with `usage` may have views (VUID-VkImageViewCreateInfo-image-04441).
fn viewable(usage: vk::ImageUsageFlags) -> bool {
    use vk::ImageUsageFlags as U;
    usage.intersects(
        U::SAMPLED
            | U::STORAGE
            | U::COLOR_ATTACHMENT
            | U::DEPTH_STENCIL_ATTACHMENT
            | U::INPUT_ATTACHMENT
            | U::TRANSIENT_ATTACHMENT,
    )
}

/// Creates an unbound image of `desc` and asks for its memory requirements.
pub(super) fn create_image(
    device: &ash::Device,
    desc: &ImageDesc,
) -> Result<(vk::Image, vk::MemoryRequirements)> {
    // SAFETY: a valid create info (Vulkan validates the rest) on a live device.
    let image = unsafe { device.create_image(&desc.create_info(), None) }
        .map_err(|e| Error::vk("vkCreateImage", e))?;
    // SAFETY: `image` is a live image of `device`.
    let req = unsafe { device.get_image_memory_requirements(image) };
    Ok((image, req))
}

/// A view of all of `image` (made from `desc`), or null when its usage allows none.
pub(super) fn create_view(
    device: &ash::Device,
    image: vk::Image,
    desc: &ImageDesc,
) -> Result<vk::ImageView> {
    if !viewable(desc.usage) {
        return Ok(vk::ImageView::null());
    }
    let layered = desc.array_layers > 1;
    let view_type = match (desc.image_type, layered) {
        (vk::ImageType::TYPE_1D, false) => vk::ImageViewType::TYPE_1D,
        (vk::ImageType::TYPE_1D, true) => vk::ImageViewType::TYPE_1D_ARRAY,
        (vk::ImageType::TYPE_3D, _) => vk::ImageViewType::TYPE_3D,
        (_, false) => vk::ImageViewType::TYPE_2D,
        (_, true) => vk::ImageViewType::TYPE_2D_ARRAY,
    };
    let info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(view_type)
        .format(desc.format)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: desc.aspect(),
            base_mip_level: 0,
            level_count: desc.mip_levels,
            base_array_layer: 0,
            layer_count: desc.array_layers,
        });
    // SAFETY: `image` is a live image of `device` made from `desc`, whose usage allows views.
    unsafe { device.create_image_view(&info, None) }.map_err(|e| Error::vk("vkCreateImageView", e))
}

/// Creates an unbound buffer of `desc` and asks for its memory requirements.
pub(super) fn create_buffer(
    device: &ash::Device,
    desc: &BufferDesc,
) -> Result<(vk::Buffer, vk::MemoryRequirements)> {
    let (mode, families) = desc.sharing.vk_mode();
    let info = vk::BufferCreateInfo::default()
        .size(desc.size)
        .usage(desc.usage)
        .sharing_mode(mode)
        .queue_family_indices(families);
    // SAFETY: a valid create info on a live device.
    let buffer =
        unsafe { device.create_buffer(&info, None) }.map_err(|e| Error::vk("vkCreateBuffer", e))?;
    // SAFETY: `buffer` is a live buffer of `device`.
    let req = unsafe { device.get_buffer_memory_requirements(buffer) };
    Ok((buffer, req))
}

/// Names a graph's object of a transient: its debug name, with the heap set it belongs to.
pub(super) fn name_object<H: vk::Handle>(
    debug: Option<&DebugUtils>,
    handle: H,
    name: &str,
    set: usize,
) {
    if let Some(d) = debug {
        // SAFETY: `handle` is a live object of the device the graph's debug functions were
        // loaded for (`Graph::new`'s contract).
        unsafe { d.set_name(handle, &format!("{name} (transient, heap set {set})")) };
    }
}
