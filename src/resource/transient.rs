//! Transient images and buffers: handles whose memory a graph binds anew for each execution.
//!
//! A transient [`StImage`] or [`StBuffer`] is made by a graph
//! ([`Graph::transient_image`](crate::Graph::transient_image)) from a description alone. It
//! carries the memory requirements that images or buffers of that description have (asked of
//! the driver once, with a probe object), which the planner places, and the id of the graph it
//! belongs to. Its `VkImage` or `VkBuffer` is one of the graph's, bound at the place the plan
//! chose: the graph sets it before recording each execution, so [`StImage::handle`] (and
//! [`StImage::view`]) return the objects of the execution being recorded.

// Without the `transients` feature no transient is made: only the queries are used.
#![cfg_attr(not(feature = "transients"), allow(dead_code, unused_imports))]

use super::memory::{next_id, Memory, TransientSlot};
use super::CurrentHandle;
use super::{BufferDesc, ImageDesc, Resource, StBuffer, StImage, Tracked};
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::{SegmentState, TransientMemory};
use ash::vk;
use gpu_allocator::MemoryLocation;
use parking_lot::Mutex;
use std::sync::atomic::Ordering;

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
pub(crate) fn create_image(
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
pub(crate) fn create_view(
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
pub(crate) fn create_buffer(
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

impl StImage {
    /// A transient image of `desc` for the graph `graph`: no `VkImage` of its own, and the
    /// memory requirements of one (asked of a probe image, destroyed at once).
    #[cfg(feature = "transients")]
    pub(crate) fn new_transient(
        device: &ash::Device,
        desc: ImageDesc,
        name: &str,
        buffer_image_granularity: u64,
        graph: u64,
    ) -> Result<Self> {
        desc.check(name)?;
        let (probe, req) = create_image(device, &desc)?;
        // SAFETY: the probe was never bound or used.
        unsafe { device.destroy_image(probe, None) };
        let mut memory = TransientMemory::image(req.size, req.alignment, req.memory_type_bits)
            .with_granularity(buffer_image_granularity);
        memory.linear = desc.tiling == vk::ImageTiling::LINEAR;
        let cells = desc.cells();
        Ok(Self {
            id: next_id(),
            device: device.clone(),
            handle: CurrentHandle::new(vk::Image::null()),
            desc,
            name: name.to_owned(),
            memory: Memory::Transient(TransientSlot::new(memory, graph)),
            state: Mutex::new(Tracked::new(cells, SegmentState::default())),
            device_owner: None,
        })
    }

    /// Whether the image is transient: made by a graph
    /// ([`Graph::transient_image`](crate::Graph::transient_image)), its contents living only
    /// inside one execution and its memory possibly shared with other transients.
    pub fn is_transient(&self) -> bool {
        matches!(self.memory, Memory::Transient(_))
    }

    /// A transient image's view of all of it (every mip level, array layer and aspect, in its
    /// own format), made by the graph together with the `VkImage` it binds for the execution
    /// being recorded: use it inside [`Pass::record`](crate::Pass::record), where it is valid
    /// until that execution completes. `None` for an image that is not transient, or whose
    /// usage allows no view (transfer only).
    ///
    /// Both the view and [`StImage::handle`] may be other objects in the next execution (the
    /// graph keeps one set of them per execution in flight), so a pass that writes them into a
    /// descriptor set keeps a set per view, or updates it when the view changes.
    ///
    /// ```no_run
    /// # fn f(r: &mut vk_baton::Recorder<'_>, img: &vk_baton::StImage) -> vk_baton::Result<()> {
    /// let view = img.view().ok_or(vk_baton::Error::PassFailed("no view".into()))?;
    /// let info = vk_baton::ash::vk::DescriptorImageInfo::default()
    ///     .image_view(view)
    ///     .image_layout(vk_baton::ash::vk::ImageLayout::GENERAL);
    /// # Ok(()) }
    /// ```
    pub fn view(&self) -> Option<vk::ImageView> {
        match &self.memory {
            Memory::Transient(slot) => {
                let raw = slot.view.load(Ordering::Relaxed);
                (raw != 0).then(|| vk::Handle::from_raw(raw))
            }
            _ => None,
        }
    }

    /// Makes `image` and `view` this transient's objects for the execution about to be
    /// recorded.
    #[cfg(feature = "transients")]
    pub(crate) fn bind_transient(&self, image: vk::Image, view: vk::ImageView) {
        if let Memory::Transient(slot) = &self.memory {
            self.handle.set(image);
            slot.view.store(vk::Handle::as_raw(view), Ordering::Relaxed);
        }
    }
}

impl ImageDesc {
    /// Refuses a zero extent, mip count or layer count.
    pub(super) fn check(&self, name: &str) -> Result<()> {
        let e = self.extent;
        if e.width == 0
            || e.height == 0
            || e.depth == 0
            || self.mip_levels == 0
            || self.array_layers == 0
        {
            return Err(Error::InvalidArgument(format!(
                "image `{name}`: a zero extent, mip count or layer count"
            )));
        }
        Ok(())
    }
}

impl StBuffer {
    /// A transient buffer of `desc` for the graph `graph`: no `VkBuffer` of its own, and the
    /// memory requirements of one (asked of a probe buffer, destroyed at once).
    #[cfg(feature = "transients")]
    pub(crate) fn new_transient(
        device: &ash::Device,
        desc: BufferDesc,
        name: &str,
        buffer_image_granularity: u64,
        graph: u64,
    ) -> Result<Self> {
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
        Ok(Self {
            id: next_id(),
            device: device.clone(),
            handle: CurrentHandle::new(vk::Buffer::null()),
            name: name.to_owned(),
            memory: Memory::Transient(TransientSlot::new(memory, graph)),
            mapped: None,
            host: Mutex::new(()),
            state: Mutex::new(Tracked::new(desc.size, SegmentState::default())),
            device_owner: None,
            desc,
        })
    }

    /// Whether the buffer is transient: made by a graph
    /// ([`Graph::transient_buffer`](crate::Graph::transient_buffer)), its contents living only
    /// inside one execution and its memory possibly shared with other transients.
    pub fn is_transient(&self) -> bool {
        matches!(self.memory, Memory::Transient(_))
    }

    /// Makes `buffer` this transient's buffer for the execution about to be recorded.
    #[cfg(feature = "transients")]
    pub(crate) fn bind_transient(&self, buffer: vk::Buffer) {
        if let Memory::Transient(_) = &self.memory {
            self.handle.set(buffer);
        }
    }
}

impl Resource {
    /// A transient's memory requirements and the graph it belongs to.
    pub(crate) fn transient(&self) -> Option<(TransientMemory, u64)> {
        let memory = match self {
            Resource::Image(i) => &i.memory,
            Resource::Buffer(b) => &b.memory,
        };
        match memory {
            Memory::Transient(slot) => Some((slot.memory, slot.graph)),
            _ => None,
        }
    }
}

/// Names a graph's object of a transient: its debug name, with the heap set it belongs to.
pub(crate) fn name_object<H: vk::Handle>(
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
