//! [`StImage`]: a state-tracked image.

mod create_info;

use super::memory::{allocate, free, next_id, Memory, SharedAllocator};
use super::CurrentHandle;
use super::{Destroy, ImageDesc, ResourceState, StateSnapshot, Tracked, TrackedState};
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::SegmentState;
use ash::vk;
use gpu_allocator::MemoryLocation;

/// A state-tracked image. Use it as `Arc<StImage>`.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
/// use std::sync::Arc;
/// use vk_baton::{ash::vk, ImageDesc, StImage};
/// let img = Arc::new(StImage::new(device, alloc, ImageDesc::storage_2d(64, 64, vk::Format::R8G8B8A8_UNORM), "target")?);
/// println!("{} is {:?}", img.name(), img.handle());
/// # Ok(()) }
/// ```
// In declaration order (`repr(C)`): what a frame reads of every resource (its id, handle,
// tracked state and transient slot) comes first, beside the `Arc`'s counts, in fewer cache
// lines than behind the description.
#[repr(C)]
pub struct StImage {
    pub(super) id: u64,
    /// A transient's changes with each execution (see `transient.rs`).
    pub(super) handle: CurrentHandle,
    pub(super) state: TrackedState,
    pub(super) memory: Memory,
    pub(super) desc: ImageDesc,
    /// Boxed: its function tables take 1.5 KB.
    pub(super) device: Box<ash::Device>,
    pub(super) name: String,
    /// What must outlive the image and its memory ([`StImage::keep_alive_with`]: what destroys
    /// the device); the last field, so it drops after `memory` and its allocator.
    pub(super) device_owner: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

impl StImage {
    /// Keeps `owner` alive until this image has dropped, and drops it after destroying the
    /// image and freeing its memory. Meant for what destroys the device, in its `Drop` (the
    /// `vk-baton-context` crate's `Context` gives its images the owner of its device): the
    /// device then outlives the image. Set once, right after [`StImage::new`]; a second call is
    /// ignored (and drops its `owner` at once).
    ///
    /// ```no_run
    /// # fn f(x: vk_baton::StImage, owner: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
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

    /// Creates a device-local image through gpu-allocator. Freed when the last `Arc` drops.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, ImageDesc, StImage};
    /// let img = StImage::new(device, alloc, ImageDesc::storage_2d(64, 64, vk::Format::R8G8B8A8_UNORM), "target")?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        desc: ImageDesc,
        name: &str,
    ) -> Result<Self> {
        desc.check(name)?;
        allocator.check_device(device, name)?;
        // SAFETY: a valid create info (Vulkan validates the rest) on a live device.
        let handle = unsafe { device.create_image(&desc.create_info(), None) }
            .map_err(|e| Error::vk("vkCreateImage", e))?;
        // SAFETY: `handle` is a live image of `device`.
        let req = unsafe { device.get_image_memory_requirements(handle) };
        let linear = desc.tiling == vk::ImageTiling::LINEAR;
        let allocation = match allocate(allocator, name, req, MemoryLocation::GpuOnly, linear) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the image was never used.
                unsafe { device.destroy_image(handle, None) };
                return Err(e);
            }
        };
        // SAFETY: the allocation satisfies the image's requirements and is not bound elsewhere.
        if let Err(e) =
            unsafe { device.bind_image_memory(handle, allocation.memory(), allocation.offset()) }
        {
            free(allocator, allocation, name);
            // SAFETY: the image was never used.
            unsafe { device.destroy_image(handle, None) };
            return Err(Error::vk("vkBindImageMemory", e));
        }
        log::debug!(
            "image `{name}` {handle:?}: {:?} {}x{}x{}, {} mips, {} layers",
            desc.format,
            desc.extent.width,
            desc.extent.height,
            desc.extent.depth,
            desc.mip_levels,
            desc.array_layers
        );
        let cells = desc.cells();
        Ok(Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(handle),
            desc,
            name: name.to_owned(),
            memory: Memory::Allocated {
                allocator: allocator.clone(),
                allocation: Some(allocation),
            },
            state: TrackedState::new(Tracked::new(cells, SegmentState::default())),
            device_owner: None,
        })
    }

    /// Wraps an image the app created, in the state `initial` (the same for every mip and
    /// layer). With [`Destroy::Library`] the image is destroyed when the last `Arc` drops;
    /// with [`Destroy::AppKeeps`] (swapchain images, images the app frees) it is not.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, raw: ash::vk::Image) {
    /// use vk_baton::{ash::vk, Destroy, ImageDesc, ResourceState, StImage};
    /// let desc = ImageDesc::new_2d(800, 600, vk::Format::B8G8R8A8_SRGB, vk::ImageUsageFlags::COLOR_ATTACHMENT);
    /// // SAFETY: `raw` is a live 800x600 B8G8R8A8_SRGB image of `device`, never used yet, and
    /// // the app destroys it only after the last `Arc` of the wrapper is gone.
    /// let img = unsafe {
    ///     StImage::from_raw(device, raw, desc, "swapchain 0", ResourceState::undefined(), Destroy::AppKeeps)
    /// };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// Unsafe with either [`Destroy`] choice: the library records barriers and commands for
    /// the handle and cannot check any of this, and a wrong handle or description is
    /// undefined behaviour in the Vulkan calls that follow.
    ///
    /// - `handle` is a valid `VkImage` of `device`, created with `desc` (its format, extent,
    ///   mip and layer counts, usage, sharing mode and families) and bound to memory.
    /// - It stays valid until the last `Arc` drops: with [`Destroy::AppKeeps`] the app
    ///   destroys it (and frees its memory) only after that; with [`Destroy::Library`] the
    ///   app never destroys it, and no other wrapper of it has `Destroy::Library`.
    /// - `initial` is true of every mip and layer: their layout, owner, and an access that
    ///   is complete or ordered before any later submission to the queue it names (and
    ///   complete before host access).
    /// - From now on the app uses the image only through graphs, or declares its own work
    ///   with [`StImage::declare_state`].
    pub unsafe fn from_raw(
        device: &ash::Device,
        handle: vk::Image,
        desc: ImageDesc,
        name: &str,
        initial: ResourceState,
        destroy: Destroy,
    ) -> Self {
        let cells = desc.cells();
        Self {
            id: next_id(),
            device: Box::new(device.clone()),
            handle: CurrentHandle::new(handle),
            desc,
            name: name.to_owned(),
            memory: Memory::Raw(destroy),
            state: TrackedState::new(Tracked::new(cells, initial.to_segment())),
            device_owner: None,
        }
    }

    /// Names the image (`VK_EXT_debug_utils`) with its debug name. Returns `self` for chaining.
    ///
    /// ```no_run
    /// # fn f(img: vk_baton::StImage, debug: &vk_baton::DebugUtils) {
    /// let img = img.named(Some(debug));
    /// # }
    /// ```
    pub fn named(self, debug: Option<&DebugUtils>) -> Self {
        if let Some(d) = debug {
            if d.device_handle() == self.device.handle() {
                // SAFETY: the handle is a live image of the loader's device (checked above).
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

    /// The `VkImage`. A transient's is the one the graph bound for the execution being
    /// recorded (see [`StImage::view`]); null before its first execution.
    pub fn handle(&self) -> vk::Image {
        self.handle.get()
    }

    /// The description it was created with.
    pub fn desc(&self) -> &ImageDesc {
        &self.desc
    }

    /// The debug name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `VkDevice` it belongs to.
    pub fn device_handle(&self) -> vk::Device {
        self.device.handle()
    }

    /// The full subresource range (every mip, layer and aspect).
    pub fn full_range(&self) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange {
            aspect_mask: self.desc.aspect(),
            base_mip_level: 0,
            level_count: self.desc.mip_levels,
            base_array_layer: 0,
            layer_count: self.desc.array_layers,
        }
    }

    /// A copy of the tracked state.
    pub fn state(&self) -> StateSnapshot {
        self.state.lock().snapshot()
    }

    /// Declares the state the image is in after the app's own hand-recorded work, for every
    /// mip and layer.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, q: &vk_baton::Queue) {
    /// use vk_baton::{ash::vk, ResourceState};
    /// // SAFETY: the app's copy into `img` was submitted to `q` after every graph that used
    /// // it, and left all of it in TRANSFER_DST_OPTIMAL.
    /// unsafe {
    ///     img.declare_state(ResourceState::defined(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
    ///         .owned_by(q.family())
    ///         .last_access(q, vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE));
    /// }
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The library plans its next barriers from `state` alone, and a barrier from a wrong
    /// layout, or one that misses a write, is undefined behaviour. So `state` is true of
    /// every mip and layer: its layout and owner are the image's, its `last_access` is the
    /// latest access and is complete or ordered before every later submission to the queue it
    /// names (by submission order there or the app's own semaphores), and every earlier access
    /// is ordered before it.
    pub unsafe fn declare_state(&self, state: ResourceState) {
        let cells = self.desc.cells();
        self.state
            .lock()
            .commit(vec![(0..cells, state.to_segment())]);
    }

    pub(crate) fn tracked(&self) -> &TrackedState {
        &self.state
    }
}

impl Drop for StImage {
    fn drop(&mut self) {
        super::note_dropped();
        let handle = self.handle();
        match &mut self.memory {
            Memory::Allocated {
                allocator,
                allocation,
            } => {
                // SAFETY: the last Arc is gone, and every graph execution that used the image
                // holds an Arc until its fence signals, so the GPU is done with it.
                unsafe { self.device.destroy_image(handle, None) };
                if let Some(a) = allocation.take() {
                    free(allocator, a, &self.name);
                }
            }
            // SAFETY: as above; the app handed the destroy duty to the library.
            Memory::Raw(Destroy::Library) => unsafe { self.device.destroy_image(handle, None) },
            // The graph that made it destroys its objects.
            Memory::Raw(Destroy::AppKeeps) | Memory::Transient(_) => {}
        }
    }
}

impl std::fmt::Debug for StImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StImage(#{} `{}` {:?})",
            self.id,
            self.name,
            self.handle()
        )
    }
}
