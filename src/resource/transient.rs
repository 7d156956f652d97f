//! Transient images and buffers: handles whose memory a graph binds anew for each execution.
//!
//! A transient [`StImage`] or [`StBuffer`] is made by a graph
//! ([`Graph::transient_image`](crate::Graph::transient_image)) from a description alone. It
//! carries the memory requirements that images or buffers of that description have, which the
//! planner places, and the id of the graph it belongs to. Its `VkImage` or `VkBuffer` is one of
//! the graph's, bound at the place the plan chose: the graph sets it before recording each
//! execution, so [`StImage::handle`] (and [`StImage::view`]) return the objects of the execution
//! being recorded.
//!
//! Only the plain data and the queries are here; the `transients` feature's runtime
//! (`src/transients/runtime/`) asks the driver for the memory requirements, makes the handles
//! with the constructors below and binds them.

// Without the `transients` feature nothing makes or binds a transient: only the queries are
// used. (A transient as a handle kind of its own would take this mode out of `StImage` and
// `StBuffer`; see `docs/transients.md`.)
#![cfg_attr(not(feature = "transients"), allow(dead_code))]

use super::memory::{next_id, Memory, TransientSlot};
use super::CurrentHandle;
use super::{BufferDesc, ImageDesc, Resource, StBuffer, StImage, Tracked, TrackedState};
use crate::plan::{SegmentState, TransientMemory};
use ash::vk;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

impl TransientSlot {
    fn memory(memory: TransientMemory, graph: u64) -> Memory {
        Memory::Transient(TransientSlot {
            memory,
            graph,
            view: AtomicU64::new(0),
            bound: AtomicU64::new(0),
        })
    }
}

impl StImage {
    /// A transient image of `desc` for the graph `graph`, whose images of that description
    /// need `memory`: no `VkImage` of its own until an execution binds one.
    pub(crate) fn new_transient(
        device: &ash::Device,
        desc: ImageDesc,
        name: &str,
        memory: TransientMemory,
        graph: u64,
    ) -> Self {
        let cells = desc.cells();
        Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(vk::Image::null()),
            desc,
            name: name.to_owned(),
            memory: TransientSlot::memory(memory, graph),
            state: TrackedState::new(Tracked::new(cells, SegmentState::default())),
            device_owner: None,
        }
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
    /// descriptor set keeps a set per bound object ([`StImage::bound_object`]), or updates it
    /// when the view changes.
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

    /// Which objects a transient image is bound to for the execution being recorded
    /// ([`StImage::handle`] and [`StImage::view`]), as a number no other objects ever get in
    /// this process: handle values may come back once the graph destroys objects and makes
    /// others, this does not. 0 for an image that is not transient, or not bound yet. A pass
    /// that keeps a descriptor set per view keys it on this, not on the view's handle.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, written_for: &mut u64) {
    /// if img.bound_object() != *written_for {
    ///     // Write the set with `img.view()`, then remember what it was written for.
    ///     *written_for = img.bound_object();
    /// }
    /// # }
    /// ```
    pub fn bound_object(&self) -> u64 {
        self.memory.bound_object()
    }

    /// Makes `image` and `view`, the object of serial `serial`, this transient's objects for
    /// the execution about to be recorded.
    pub(crate) fn bind_transient(&self, image: vk::Image, view: vk::ImageView, serial: u64) {
        if let Memory::Transient(slot) = &self.memory {
            self.handle.set(image);
            slot.view.store(vk::Handle::as_raw(view), Ordering::Relaxed);
            slot.bound.store(serial, Ordering::Relaxed);
        }
    }
}

impl StBuffer {
    /// A transient buffer of `desc` for the graph `graph`, whose buffers of that description
    /// need `memory`: no `VkBuffer` of its own until an execution binds one.
    pub(crate) fn new_transient(
        device: &ash::Device,
        desc: BufferDesc,
        name: &str,
        memory: TransientMemory,
        graph: u64,
    ) -> Self {
        Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(vk::Buffer::null()),
            name: name.to_owned(),
            memory: TransientSlot::memory(memory, graph),
            mapped: None,
            host: Mutex::new(()),
            state: TrackedState::new(Tracked::new(desc.size, SegmentState::default())),
            device_owner: None,
            desc,
        }
    }

    /// Whether the buffer is transient: made by a graph
    /// ([`Graph::transient_buffer`](crate::Graph::transient_buffer)), its contents living only
    /// inside one execution and its memory possibly shared with other transients.
    pub fn is_transient(&self) -> bool {
        matches!(self.memory, Memory::Transient(_))
    }

    /// Which `VkBuffer` a transient buffer is bound to for the execution being recorded, as a
    /// number no other buffer ever gets in this process (see [`StImage::bound_object`]). 0 for
    /// a buffer that is not transient, or not bound yet.
    ///
    /// ```no_run
    /// # fn f(buf: &vk_baton::StBuffer) {
    /// let written_for = buf.bound_object();
    /// # }
    /// ```
    pub fn bound_object(&self) -> u64 {
        self.memory.bound_object()
    }

    /// Makes `buffer`, the object of serial `serial`, this transient's buffer for the
    /// execution about to be recorded.
    pub(crate) fn bind_transient(&self, buffer: vk::Buffer, serial: u64) {
        if let Memory::Transient(slot) = &self.memory {
            self.handle.set(buffer);
            slot.bound.store(serial, Ordering::Relaxed);
        }
    }
}

impl Memory {
    /// A transient's bound object, by serial; 0 for other memory.
    fn bound_object(&self) -> u64 {
        match self {
            Memory::Transient(slot) => slot.bound.load(Ordering::Relaxed),
            _ => 0,
        }
    }
}

impl Resource {
    /// A transient's bound object for the execution being recorded, by serial (0 for a
    /// resource that is not transient, or not bound yet): what recordings that name its
    /// handle are checked against.
    pub(crate) fn bound_object(&self) -> u64 {
        match self {
            Resource::Image(i) => i.bound_object(),
            Resource::Buffer(b) => b.bound_object(),
        }
    }

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
