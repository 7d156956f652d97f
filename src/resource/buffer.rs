//! [`StBuffer`]: a state-tracked buffer.

mod host_access;

use super::host::{Mapped, MAX_NON_COHERENT_ATOM_SIZE};
use super::memory::{allocate, free, next_id, Memory, SharedAllocator};
use super::CurrentHandle;
use super::{BufferDesc, Destroy, ResourceState, StateSnapshot, Tracked, TrackedState};
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::SegmentState;
use ash::vk;
use parking_lot::Mutex;

/// A state-tracked buffer. Use it as `Arc<StBuffer>`.
///
/// Host-visible buffers (`CpuToGpu`, `GpuToCpu`) are mapped: use [`StBuffer::write`] and
/// [`StBuffer::read`] once the GPU work that touches the bytes is complete (wait for the
/// graph's fence); before that they return [`Error::InUseByGpu`]. On non-coherent memory they flush and invalidate the
/// buffer's own bytes only, never its neighbours' in a shared memory object.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
/// use vk_baton::{ash::vk, BufferDesc, StBuffer};
/// let staging = StBuffer::new(device, alloc, BufferDesc::upload(16, vk::BufferUsageFlags::TRANSFER_SRC), "staging")?;
/// staging.write(0, &[1, 2, 3, 4])?;
/// # Ok(()) }
/// ```
// In declaration order (`repr(C)`): what a frame reads first, as for `StImage`.
#[repr(C)]
pub struct StBuffer {
    pub(super) id: u64,
    /// A transient's changes with each execution (see `transient.rs`).
    pub(super) handle: CurrentHandle,
    pub(super) state: TrackedState,
    pub(super) memory: Memory,
    pub(super) desc: BufferDesc,
    /// Boxed: its function tables take 1.5 KB.
    pub(super) device: Box<ash::Device>,
    pub(super) name: String,
    /// Host-visible buffers only: the mapped pointer and where the bytes are in memory.
    pub(super) mapped: Option<Mapped>,
    /// Serializes host reads and writes through `read`/`write`.
    pub(super) host: Mutex<()>,
    /// What must outlive the buffer and its memory ([`StBuffer::keep_alive_with`]: what destroys
    /// the device); the last field, so it drops after `memory` and its allocator.
    pub(super) device_owner: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

// SAFETY: the raw mapped pointer is only dereferenced under the `host` mutex (or through
// `&mut self`), and the mapping stays valid for the buffer's life; everything else is Send+Sync.
unsafe impl Send for StBuffer {}
// SAFETY: as above.
unsafe impl Sync for StBuffer {}

impl StBuffer {
    /// Keeps `owner` alive until this buffer has dropped, and drops it after destroying the
    /// buffer and freeing its memory. Meant for what destroys the device, in its `Drop` (the
    /// `vk-baton-context` crate's `Context` gives its buffers the owner of its device): the
    /// device then outlives the buffer. Set once, right after [`StBuffer::new`]; a second call is
    /// ignored (and drops its `owner` at once).
    ///
    /// ```no_run
    /// # fn f(x: vk_baton::StBuffer, owner: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
    /// let x = std::sync::Arc::new(x.keep_alive_with(owner));
    /// # }
    /// ```
    pub fn keep_alive_with(
        mut self,
        owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        if self.device_owner.is_none() {
            self.device_owner = Some(owner);
        }
        self
    }

    /// Creates a buffer through gpu-allocator: device-local for `GpuOnly`, host-visible and
    /// mapped otherwise. Freed when the last `Arc` drops.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc, StBuffer};
    /// let b = StBuffer::new(device, alloc, BufferDesc::new(1 << 20, vk::BufferUsageFlags::STORAGE_BUFFER), "particles")?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        desc: BufferDesc,
        name: &str,
    ) -> Result<Self> {
        if desc.size == 0 {
            return Err(Error::InvalidArgument(format!("buffer `{name}`: size 0")));
        }
        allocator.check_device(device, name)?;
        let (mode, families) = desc.sharing.vk_mode();
        let info = vk::BufferCreateInfo::default()
            .size(desc.size)
            .usage(desc.usage)
            .sharing_mode(mode)
            .queue_family_indices(families);
        // SAFETY: a valid create info on a live device.
        let handle = unsafe { device.create_buffer(&info, None) }.map_err(|e| match e {
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
                Error::allocation(name, desc.size, Error::vk("vkCreateBuffer", e))
            }
            e => Error::vk("vkCreateBuffer", e),
        })?;
        // SAFETY: `handle` is a live buffer of `device`.
        let mut req = unsafe { device.get_buffer_memory_requirements(handle) };
        // Aligned and padded to the largest non-coherent atom, so no other allocation shares
        // an atom with this buffer and its flushes touch only its own bytes (see `host`).
        // Memory types are only known after allocating, so every buffer is padded.
        req.alignment = req.alignment.max(MAX_NON_COHERENT_ATOM_SIZE);
        req.size = req.size.next_multiple_of(MAX_NON_COHERENT_ATOM_SIZE);
        let allocation = match allocate(allocator, name, req, desc.location, true) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: never used.
                unsafe { device.destroy_buffer(handle, None) };
                return Err(e);
            }
        };
        // SAFETY: the allocation satisfies the requirements and is not bound elsewhere.
        if let Err(e) =
            unsafe { device.bind_buffer_memory(handle, allocation.memory(), allocation.offset()) }
        {
            free(allocator, allocation, name);
            // SAFETY: never used.
            unsafe { device.destroy_buffer(handle, None) };
            return Err(Error::vk("vkBindBufferMemory", e));
        }
        let coherent = allocation
            .memory_properties()
            .contains(vk::MemoryPropertyFlags::HOST_COHERENT);
        let mapped = allocation.mapped_ptr().map(|p| {
            Mapped::new(
                p.cast::<u8>(),
                // SAFETY: only reads the handle of the allocation's memory object.
                unsafe { allocation.memory() },
                // The memory object's size for a block of its own; inside a shared block
                // (whose size gpu-allocator keeps a multiple of 4 MiB) a multiple of the atom.
                allocation.offset() + allocation.size(),
                allocation.offset(),
                desc.size,
                coherent,
                MAX_NON_COHERENT_ATOM_SIZE,
            )
        });
        log::debug!(
            "buffer `{name}` {handle:?}: {} bytes, {:?}, {:?}",
            desc.size,
            desc.usage,
            desc.location
        );
        Ok(Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(handle),
            name: name.to_owned(),
            memory: Memory::Allocated {
                allocator: allocator.clone(),
                allocation: Some(allocation),
            },
            mapped,
            host: Mutex::new(()),
            state: TrackedState::new(Tracked::new(desc.size, SegmentState::default())),
            device_owner: None,
            desc,
        })
    }

    /// Wraps a buffer the app created, in the state `initial` (use layout `UNDEFINED`).
    /// Such buffers are not mapped by the library; for one the app mapped, use
    /// [`StBuffer::from_raw_mapped`].
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, raw: ash::vk::Buffer) {
    /// use vk_baton::{ash::vk, BufferDesc, Destroy, ResourceState, StBuffer};
    /// // SAFETY: `raw` is a live 1 KiB vertex buffer of `device`, bound to memory; the app
    /// // wrote it and waited for the copy, and destroys it after the wrapper is gone.
    /// let b = unsafe {
    ///     StBuffer::from_raw(device, raw, BufferDesc::new(1024, vk::BufferUsageFlags::VERTEX_BUFFER), "mesh",
    ///         ResourceState::defined(vk::ImageLayout::UNDEFINED), Destroy::AppKeeps)
    /// };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::from_raw`](super::StImage::from_raw), with either [`Destroy`] choice:
    ///
    /// - `handle` is a valid `VkBuffer` of `device`, created with `desc` (size, usage,
    ///   sharing mode and families) and bound to memory.
    /// - It stays valid until the last `Arc` drops: with [`Destroy::AppKeeps`] the app
    ///   destroys it only after that; with [`Destroy::Library`] nobody else destroys it.
    /// - `initial` is true of every byte, and the access it names is complete or ordered
    ///   before any later submission to its queue (and complete before host access).
    /// - From now on the app uses the buffer only through graphs, or declares its own work
    ///   with [`StBuffer::declare_state`].
    pub unsafe fn from_raw(
        device: &ash::Device,
        handle: vk::Buffer,
        desc: BufferDesc,
        name: &str,
        initial: ResourceState,
        destroy: Destroy,
    ) -> Self {
        Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(handle),
            name: name.to_owned(),
            memory: Memory::Raw(destroy),
            mapped: None,
            host: Mutex::new(()),
            state: TrackedState::new(Tracked::new(desc.size, initial.to_segment())),
            device_owner: None,
            desc,
        }
    }

    /// Names the buffer (`VK_EXT_debug_utils`) with its debug name. Returns `self`.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton::StBuffer, debug: &vk_baton::DebugUtils) {
    /// let b = b.named(Some(debug));
    /// # }
    /// ```
    pub fn named(self, debug: Option<&DebugUtils>) -> Self {
        if let Some(d) = debug {
            if d.device_handle() == self.device.handle() {
                // SAFETY: the handle is a live buffer of the loader's device (checked above).
                unsafe { d.set_name(self.handle(), &self.name) };
            } else {
                log::warn!(
                    "`{}`: not named: the DebugUtils belong to another device",
                    self.name
                );
            }
        }
        self
    }

    /// A process-wide unique id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `VkBuffer`. A transient's is the one the graph bound for the execution being
    /// recorded; null before its first execution.
    pub fn handle(&self) -> vk::Buffer {
        self.handle.get()
    }

    /// The description it was created with.
    pub fn desc(&self) -> &BufferDesc {
        &self.desc
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.desc.size
    }

    /// The debug name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `VkDevice` it belongs to.
    pub fn device_handle(&self) -> vk::Device {
        self.device.handle()
    }

    /// A copy of the tracked state.
    pub fn state(&self) -> StateSnapshot {
        self.state.lock().snapshot()
    }

    /// Declares the state of every byte after the app's own hand-recorded work.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer, q: &vk_baton::Queue) {
    /// use vk_baton::{ash::vk, ResourceState};
    /// // SAFETY: the app's copy into `b` was submitted to `q` after every graph that used it.
    /// unsafe {
    ///     b.declare_state(ResourceState::defined(vk::ImageLayout::UNDEFINED)
    ///         .owned_by(q.family())
    ///         .last_access(q, vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE));
    /// }
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::declare_state`](super::StImage::declare_state): `state` is true of
    /// every byte, and its `last_access` is the latest access, complete or ordered before
    /// every later submission to the queue it names. Host access through
    /// [`StBuffer::read`] and [`StBuffer::write`] treats that access as complete, so it must
    /// be complete before them.
    pub unsafe fn declare_state(&self, state: ResourceState) {
        self.state
            .lock()
            .commit(vec![(0..self.desc.size, state.to_segment())]);
    }

    pub(crate) fn tracked(&self) -> &TrackedState {
        &self.state
    }
}

impl Drop for StBuffer {
    fn drop(&mut self) {
        super::note_dropped();
        let handle = self.handle();
        match &mut self.memory {
            Memory::Allocated {
                allocator,
                allocation,
            } => {
                // SAFETY: the last Arc is gone and every execution that used the buffer held
                // an Arc until its fence signalled: the GPU is done with it.
                unsafe { self.device.destroy_buffer(handle, None) };
                if let Some(a) = allocation.take() {
                    free(allocator, a, &self.name);
                }
            }
            // SAFETY: as above; the app handed over the destroy duty.
            Memory::Raw(Destroy::Library) => unsafe { self.device.destroy_buffer(handle, None) },
            // The graph that made it destroys its objects.
            Memory::Raw(Destroy::AppKeeps) | Memory::Transient(_) => {}
        }
    }
}

impl std::fmt::Debug for StBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StBuffer(#{} `{}` {:?})",
            self.id,
            self.name,
            self.handle()
        )
    }
}
