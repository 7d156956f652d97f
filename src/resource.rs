//! State-tracked images and buffers: [`StImage`] and [`StBuffer`], used as `Arc`s.
//!
//! Each holds its handle, its description and its tracked state: per cell (image: `mip *
//! array_layers + layer`; buffer: byte), the layout, whether the contents are defined, the
//! owning queue family, and the last write plus the reads since, each as a queue and timeline
//! value. Graphs read that state when they plan and write it back when they execute.
//!
//! ```no_run
//! # fn f(device: &ash::Device, alloc: &std::sync::Arc<parking_lot::Mutex<gpu_allocator::vulkan::Allocator>>) -> vk_baton::Result<()> {
//! use std::sync::Arc;
//! use vk_baton::{ash::vk, ImageDesc, StImage};
//! let desc = ImageDesc::storage_2d(256, 256, vk::Format::R8G8B8A8_UNORM).mips(4);
//! let img = Arc::new(StImage::new(device, alloc, desc, "mandelbrot")?);
//! assert_eq!(img.state().layout(), Some(vk::ImageLayout::UNDEFINED));
//! # Ok(()) }
//! ```

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::{Recorded, SegmentState};
use crate::queue::Queue;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator};
use gpu_allocator::MemoryLocation;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod declare_access;
mod host;
mod staleness;
mod state;

pub use host::{HostMapping, HostMemory};
use host::{Mapped, MAX_NON_COHERENT_ATOM_SIZE};
pub use state::StateSnapshot;
pub(crate) use state::Tracked;

/// The allocator type resources are created with.
///
/// ```no_run
/// # fn main() -> vk_baton::Result<()> {
/// use vk_baton::{Context, SharedAllocator};
/// let ctx = Context::new()?;
/// // Every resource and stock pass allocates through this one handle; clones share it.
/// let allocator: SharedAllocator = ctx.allocator().clone();
/// let report = allocator.lock().generate_report();
/// println!("{} bytes allocated", report.total_allocated_bytes);
/// # Ok(()) }
/// ```
pub type SharedAllocator = Arc<Mutex<Allocator>>;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The sharing mode of a resource.
///
/// ```
/// use vk_baton::Sharing;
/// assert_eq!(Sharing::default(), Sharing::Exclusive);
/// let s = Sharing::Concurrent(vec![0, 2]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Sharing {
    /// `VK_SHARING_MODE_EXCLUSIVE`: queue-family ownership transfers move it between families.
    #[default]
    Exclusive,
    /// `VK_SHARING_MODE_CONCURRENT` between these distinct families: semaphores only, no
    /// transfers. Fewer than two families means EXCLUSIVE (Vulkan needs two).
    Concurrent(Vec<u32>),
}

impl Sharing {
    fn vk_mode(&self) -> (vk::SharingMode, &[u32]) {
        match self {
            // Vulkan needs at least two distinct families for CONCURRENT.
            Sharing::Concurrent(f) if f.len() > 1 => (vk::SharingMode::CONCURRENT, f.as_slice()),
            _ => (vk::SharingMode::EXCLUSIVE, &[]),
        }
    }

    /// Whether the planner treats the resource as concurrent (no ownership transfers).
    ///
    /// ```
    /// assert!(vk_baton::Sharing::Concurrent(vec![0, 1]).is_concurrent());
    /// assert!(!vk_baton::Sharing::Concurrent(vec![0]).is_concurrent());
    /// ```
    pub fn is_concurrent(&self) -> bool {
        // The same test as the mode the resource is created with: a one-family list is
        // created EXCLUSIVE, so it must be planned with ownership transfers.
        self.vk_mode().0 == vk::SharingMode::CONCURRENT
    }
}

/// Everything needed to create an image.
///
/// ```
/// use vk_baton::{ash::vk, ImageDesc};
/// let d = ImageDesc::new_2d(64, 64, vk::Format::R8G8B8A8_UNORM, vk::ImageUsageFlags::SAMPLED)
///     .mips(7)
///     .layers(2)
///     .usage(vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::SAMPLED);
/// assert_eq!(d.aspect(), vk::ImageAspectFlags::COLOR);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageDesc {
    /// Pixel format.
    pub format: vk::Format,
    /// Size in texels.
    pub extent: vk::Extent3D,
    /// Mip levels.
    pub mip_levels: u32,
    /// Array layers.
    pub array_layers: u32,
    /// Usage flags.
    pub usage: vk::ImageUsageFlags,
    /// Sharing mode.
    pub sharing: Sharing,
    /// 1D, 2D or 3D.
    pub image_type: vk::ImageType,
    /// Samples per texel.
    pub samples: vk::SampleCountFlags,
    /// Tiling.
    pub tiling: vk::ImageTiling,
    /// Creation flags.
    pub flags: vk::ImageCreateFlags,
}

impl ImageDesc {
    /// A 2D image, one mip level and one layer, exclusive, optimal tiling.
    ///
    /// ```
    /// use vk_baton::{ash::vk, ImageDesc};
    /// let d = ImageDesc::new_2d(8, 8, vk::Format::D32_SFLOAT, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT);
    /// assert_eq!(d.aspect(), vk::ImageAspectFlags::DEPTH);
    /// ```
    pub fn new_2d(width: u32, height: u32, format: vk::Format, usage: vk::ImageUsageFlags) -> Self {
        Self {
            format,
            extent: vk::Extent3D {
                width,
                height,
                depth: 1,
            },
            mip_levels: 1,
            array_layers: 1,
            usage,
            sharing: Sharing::Exclusive,
            image_type: vk::ImageType::TYPE_2D,
            samples: vk::SampleCountFlags::TYPE_1,
            tiling: vk::ImageTiling::OPTIMAL,
            flags: vk::ImageCreateFlags::empty(),
        }
    }

    /// A 2D image a compute shader writes: usage STORAGE, SAMPLED, TRANSFER_SRC and TRANSFER_DST.
    ///
    /// ```
    /// use vk_baton::{ash::vk, ImageDesc};
    /// let d = ImageDesc::storage_2d(1024, 1024, vk::Format::R8G8B8A8_UNORM);
    /// assert!(d.usage.contains(vk::ImageUsageFlags::STORAGE));
    /// ```
    pub fn storage_2d(width: u32, height: u32, format: vk::Format) -> Self {
        use vk::ImageUsageFlags as U;
        Self::new_2d(
            width,
            height,
            format,
            U::STORAGE | U::SAMPLED | U::TRANSFER_SRC | U::TRANSFER_DST,
        )
    }

    /// The same description with `n` mip levels.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// assert_eq!(ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).mips(3).mip_levels, 3);
    /// ```
    pub fn mips(mut self, n: u32) -> Self {
        self.mip_levels = n;
        self
    }

    /// The same description with `n` array layers.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// assert_eq!(ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).layers(6).array_layers, 6);
    /// ```
    pub fn layers(mut self, n: u32) -> Self {
        self.array_layers = n;
        self
    }

    /// The same description with these usage flags (replacing the old ones).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// let d = ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).usage(vk::ImageUsageFlags::SAMPLED);
    /// assert_eq!(d.usage, vk::ImageUsageFlags::SAMPLED);
    /// ```
    pub fn usage(mut self, usage: vk::ImageUsageFlags) -> Self {
        self.usage = usage;
        self
    }

    /// The same description, shared CONCURRENT between `families` (no ownership transfers).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc, Sharing};
    /// let d = ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).concurrent(&[0, 1]);
    /// assert_eq!(d.sharing, Sharing::Concurrent(vec![0, 1]));
    /// ```
    pub fn concurrent(mut self, families: &[u32]) -> Self {
        let mut f = families.to_vec();
        f.sort_unstable();
        f.dedup();
        self.sharing = Sharing::Concurrent(f);
        self
    }

    /// The aspects of the format: DEPTH and/or STENCIL for depth formats, COLOR otherwise.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// let d = ImageDesc::new_2d(4, 4, vk::Format::D24_UNORM_S8_UINT, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT);
    /// assert_eq!(d.aspect(), vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL);
    /// ```
    pub fn aspect(&self) -> vk::ImageAspectFlags {
        use vk::Format as F;
        use vk::ImageAspectFlags as A;
        match self.format {
            F::D16_UNORM | F::D32_SFLOAT | F::X8_D24_UNORM_PACK32 => A::DEPTH,
            F::S8_UINT => A::STENCIL,
            F::D16_UNORM_S8_UINT | F::D24_UNORM_S8_UINT | F::D32_SFLOAT_S8_UINT => {
                A::DEPTH | A::STENCIL
            }
            _ => A::COLOR,
        }
    }

    /// Number of tracking cells: `mip_levels * array_layers`.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// assert_eq!(ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).mips(2).layers(3).cells(), 6);
    /// ```
    pub fn cells(&self) -> u64 {
        self.mip_levels as u64 * self.array_layers as u64
    }

    fn create_info(&self) -> vk::ImageCreateInfo<'_> {
        let (mode, families) = self.sharing.vk_mode();
        vk::ImageCreateInfo::default()
            .flags(self.flags)
            .image_type(self.image_type)
            .format(self.format)
            .extent(self.extent)
            .mip_levels(self.mip_levels)
            .array_layers(self.array_layers)
            .samples(self.samples)
            .tiling(self.tiling)
            .usage(self.usage)
            .sharing_mode(mode)
            .queue_family_indices(families)
            .initial_layout(vk::ImageLayout::UNDEFINED)
    }
}

/// Everything needed to create a buffer.
///
/// ```
/// use vk_baton::{ash::vk, BufferDesc};
/// let staging = BufferDesc::new(4096, vk::BufferUsageFlags::TRANSFER_SRC)
///     .location(gpu_allocator::MemoryLocation::CpuToGpu);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDesc {
    /// Size in bytes.
    pub size: u64,
    /// Usage flags.
    pub usage: vk::BufferUsageFlags,
    /// Sharing mode.
    pub sharing: Sharing,
    /// Where the memory lives: `GpuOnly` is device-local; `CpuToGpu` and `GpuToCpu` are
    /// host-visible and mapped.
    pub location: MemoryLocation,
}

impl BufferDesc {
    /// A device-local, exclusive buffer.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::new(256, vk::BufferUsageFlags::STORAGE_BUFFER);
    /// assert_eq!(d.location, gpu_allocator::MemoryLocation::GpuOnly);
    /// ```
    pub fn new(size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self {
            size,
            usage,
            sharing: Sharing::Exclusive,
            location: MemoryLocation::GpuOnly,
        }
    }

    /// A host-visible, mapped buffer the host writes and the GPU reads (`CpuToGpu`).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::upload(256, vk::BufferUsageFlags::TRANSFER_SRC);
    /// ```
    pub fn upload(size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self::new(size, usage).location(MemoryLocation::CpuToGpu)
    }

    /// A host-visible, mapped buffer the GPU writes and the host reads (`GpuToCpu`).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::readback(256, vk::BufferUsageFlags::TRANSFER_DST);
    /// ```
    pub fn readback(size: u64, usage: vk::BufferUsageFlags) -> Self {
        Self::new(size, usage).location(MemoryLocation::GpuToCpu)
    }

    /// The same description with the memory in `location`.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::new(4, vk::BufferUsageFlags::UNIFORM_BUFFER).location(gpu_allocator::MemoryLocation::CpuToGpu);
    /// ```
    pub fn location(mut self, location: MemoryLocation) -> Self {
        self.location = location;
        self
    }

    /// The same description with these usage flags (replacing the old ones).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::new(4, vk::BufferUsageFlags::empty()).usage(vk::BufferUsageFlags::VERTEX_BUFFER);
    /// ```
    pub fn usage(mut self, usage: vk::BufferUsageFlags) -> Self {
        self.usage = usage;
        self
    }

    /// The same description, shared CONCURRENT between `families`.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, BufferDesc};
    /// let d = BufferDesc::new(4, vk::BufferUsageFlags::STORAGE_BUFFER).concurrent(&[0, 1]);
    /// ```
    pub fn concurrent(mut self, families: &[u32]) -> Self {
        let mut f = families.to_vec();
        f.sort_unstable();
        f.dedup();
        self.sharing = Sharing::Concurrent(f);
        self
    }
}

/// Who destroys a handle wrapped with `from_raw`.
///
/// ```
/// let d = vk_baton::Destroy::AppKeeps;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destroy {
    /// The app keeps the duty to destroy it (after the last `Arc` drops).
    AppKeeps,
    /// The library destroys the handle when the last `Arc` drops (not its memory: bind memory
    /// the app frees itself, or use the library's allocation).
    Library,
}

/// A state to declare for a resource: after the app's own hand-recorded work, or when wrapping
/// a handle with `from_raw`.
///
/// ```no_run
/// # fn f(graphics: &vk_baton::Queue) {
/// use vk_baton::{ash::vk, ResourceState};
/// // The app rendered into the image on `graphics` and left it as a color attachment.
/// let s = ResourceState::defined(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
///     .owned_by(graphics.family())
///     .last_access(graphics, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT, vk::AccessFlags2::COLOR_ATTACHMENT_WRITE);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceState {
    /// Current image layout (`UNDEFINED` for buffers).
    pub layout: vk::ImageLayout,
    /// Whether the contents mean anything (undefined contents need no ownership transfer).
    pub defined: bool,
    /// The family owning an EXCLUSIVE resource, if any.
    pub owner: Option<u32>,
    /// The last access: on which queue, with which stages and access flags. It was ordered by
    /// the app's own submission order or semaphores, so no timeline value is waited on; the
    /// planner chains its barriers from these stages.
    pub last_access: Option<(Queue, vk::PipelineStageFlags2, vk::AccessFlags2)>,
}

impl ResourceState {
    /// Never used, contents undefined.
    ///
    /// ```
    /// let s = vk_baton::ResourceState::undefined();
    /// assert!(!s.defined);
    /// ```
    pub fn undefined() -> Self {
        Self {
            layout: vk::ImageLayout::UNDEFINED,
            defined: false,
            owner: None,
            last_access: None,
        }
    }

    /// Defined contents in `layout` (use `UNDEFINED` for buffers), no owner, no last access.
    ///
    /// ```
    /// use vk_baton::{ash::vk, ResourceState};
    /// let s = ResourceState::defined(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    /// ```
    pub fn defined(layout: vk::ImageLayout) -> Self {
        Self {
            layout,
            defined: true,
            owner: None,
            last_access: None,
        }
    }

    /// The same state, owned by `family`.
    ///
    /// ```
    /// use vk_baton::{ash::vk, ResourceState};
    /// let s = ResourceState::defined(vk::ImageLayout::GENERAL).owned_by(0);
    /// ```
    pub fn owned_by(mut self, family: u32) -> Self {
        self.owner = Some(family);
        self
    }

    /// The same state, last accessed on `queue` with `stages` and `access`.
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue) {
    /// use vk_baton::{ash::vk, ResourceState};
    /// let s = ResourceState::defined(vk::ImageLayout::GENERAL)
    ///     .last_access(q, vk::PipelineStageFlags2::COMPUTE_SHADER, vk::AccessFlags2::SHADER_STORAGE_WRITE);
    /// # }
    /// ```
    pub fn last_access(
        mut self,
        queue: &Queue,
        stages: vk::PipelineStageFlags2,
        access: vk::AccessFlags2,
    ) -> Self {
        self.last_access = Some((queue.clone(), stages, access));
        self
    }

    /// As the tracked state of one segment.
    pub(crate) fn to_segment(&self) -> SegmentState<Queue> {
        SegmentState {
            layout: self.layout,
            defined: self.defined,
            owner: self.owner,
            write: self
                .last_access
                .as_ref()
                .map(|(q, stages, access)| Recorded {
                    queue: q.clone(),
                    value: Some(0),
                    stages: *stages,
                    access: *access,
                }),
            reads: Vec::new(),
        }
    }
}

enum Memory {
    Allocated {
        allocator: SharedAllocator,
        allocation: Option<Allocation>,
    },
    Raw(Destroy),
}

fn allocate(
    allocator: &SharedAllocator,
    name: &str,
    requirements: vk::MemoryRequirements,
    location: MemoryLocation,
    linear: bool,
) -> Result<Allocation> {
    let desc = AllocationCreateDesc {
        name,
        requirements,
        location,
        linear,
        allocation_scheme: AllocationScheme::GpuAllocatorManaged,
    };
    allocator
        .lock()
        .allocate(&desc)
        .map_err(|e| Error::allocation(name, requirements.size, e.into()))
}

fn free(allocator: &SharedAllocator, allocation: Allocation, name: &str) {
    if let Err(e) = allocator.lock().free(allocation) {
        log::error!("`{name}`: freeing memory failed: {e}");
    }
}

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
pub struct StImage {
    id: u64,
    device: ash::Device,
    handle: vk::Image,
    desc: ImageDesc,
    name: String,
    memory: Memory,
    state: Mutex<Tracked>,
    /// What must outlive the image and its memory (the [`crate::Context`]'s device); the last
    /// field, so it drops after `memory` and its allocator.
    device_owner: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl StImage {
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
        let e = desc.extent;
        if e.width == 0
            || e.height == 0
            || e.depth == 0
            || desc.mip_levels == 0
            || desc.array_layers == 0
        {
            return Err(Error::InvalidInput(format!(
                "image `{name}`: a zero extent, mip count or layer count"
            )));
        }
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
            device: device.clone(),
            handle,
            desc,
            name: name.to_owned(),
            memory: Memory::Allocated {
                allocator: allocator.clone(),
                allocation: Some(allocation),
            },
            state: Mutex::new(Tracked::new(cells, SegmentState::default())),
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
    /// let img = StImage::from_raw(device, raw, desc, "swapchain 0", ResourceState::undefined(), Destroy::AppKeeps);
    /// # }
    /// ```
    pub fn from_raw(
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
            device: device.clone(),
            handle,
            desc,
            name: name.to_owned(),
            memory: Memory::Raw(destroy),
            state: Mutex::new(Tracked::new(cells, initial.to_segment())),
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
            d.set_name(self.handle, &self.name);
        }
        self
    }

    /// Keeps `owner` (what destroys the device) alive until this object has dropped.
    pub(crate) fn keep_alive_with(mut self, owner: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self.device_owner = Some(owner);
        self
    }

    /// A process-wide unique id.
    ///
    /// ```no_run
    /// # fn f(a: &vk_baton::StImage, b: &vk_baton::StImage) {
    /// assert_ne!(a.id(), b.id());
    /// # }
    /// ```
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `VkImage`.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let raw: ash::vk::Image = img.handle();
    /// # }
    /// ```
    pub fn handle(&self) -> vk::Image {
        self.handle
    }

    /// The description it was created with.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let w = img.desc().extent.width;
    /// # }
    /// ```
    pub fn desc(&self) -> &ImageDesc {
        &self.desc
    }

    /// The debug name.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// println!("{}", img.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `VkDevice` it belongs to.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, d: &ash::Device) {
    /// assert_eq!(img.device_handle(), d.handle());
    /// # }
    /// ```
    pub fn device_handle(&self) -> vk::Device {
        self.device.handle()
    }

    /// The full subresource range (every mip, layer and aspect).
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let r = img.full_range();
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let layout = img.state().layout();
    /// # }
    /// ```
    pub fn state(&self) -> StateSnapshot {
        self.state.lock().snapshot()
    }

    /// Declares the state the image is in after the app's own hand-recorded work, for every
    /// mip and layer. The app must have made its own work complete-or-ordered before the
    /// next graph (by submission order on the named queue, or its own semaphores).
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, q: &vk_baton::Queue) {
    /// use vk_baton::{ash::vk, ResourceState};
    /// img.declare_state(ResourceState::defined(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
    ///     .owned_by(q.family())
    ///     .last_access(q, vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE));
    /// # }
    /// ```
    pub fn declare_state(&self, state: ResourceState) {
        let cells = self.desc.cells();
        self.state
            .lock()
            .commit(vec![(0..cells, state.to_segment())]);
    }

    pub(crate) fn tracked(&self) -> &Mutex<Tracked> {
        &self.state
    }
}

impl Drop for StImage {
    fn drop(&mut self) {
        match &mut self.memory {
            Memory::Allocated {
                allocator,
                allocation,
            } => {
                // SAFETY: the last Arc is gone, and every graph execution that used the image
                // holds an Arc until its fence signals, so the GPU is done with it.
                unsafe { self.device.destroy_image(self.handle, None) };
                if let Some(a) = allocation.take() {
                    free(allocator, a, &self.name);
                }
            }
            // SAFETY: as above; the app handed the destroy duty to the library.
            Memory::Raw(Destroy::Library) => unsafe {
                self.device.destroy_image(self.handle, None)
            },
            Memory::Raw(Destroy::AppKeeps) => {}
        }
    }
}

impl std::fmt::Debug for StImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StImage(#{} `{}` {:?})", self.id, self.name, self.handle)
    }
}

/// A state-tracked buffer. Use it as `Arc<StBuffer>`.
///
/// Host-visible buffers (`CpuToGpu`, `GpuToCpu`) are mapped: use [`StBuffer::write`] and
/// [`StBuffer::read`], after the GPU work that touches the bytes is complete (for reads,
/// wait for the graph's fence). On non-coherent memory they flush and invalidate the
/// buffer's own bytes only, never its neighbours' in a shared memory object.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
/// use vk_baton::{ash::vk, BufferDesc, StBuffer};
/// let staging = StBuffer::new(device, alloc, BufferDesc::upload(16, vk::BufferUsageFlags::TRANSFER_SRC), "staging")?;
/// staging.write(0, &[1, 2, 3, 4])?;
/// # Ok(()) }
/// ```
pub struct StBuffer {
    id: u64,
    device: ash::Device,
    handle: vk::Buffer,
    desc: BufferDesc,
    name: String,
    memory: Memory,
    /// Host-visible buffers only: the mapped pointer and where the bytes are in memory.
    mapped: Option<Mapped>,
    /// Serializes host reads and writes through `read`/`write`.
    host: Mutex<()>,
    state: Mutex<Tracked>,
    /// What must outlive the buffer and its memory (the [`crate::Context`]'s device); the
    /// last field, so it drops after `memory` and its allocator.
    device_owner: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

// SAFETY: the raw mapped pointer is only dereferenced under the `host` mutex (or through
// `&mut self`), and the mapping stays valid for the buffer's life; everything else is Send+Sync.
unsafe impl Send for StBuffer {}
// SAFETY: as above.
unsafe impl Sync for StBuffer {}

impl StBuffer {
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
            return Err(Error::InvalidInput(format!("buffer `{name}`: size 0")));
        }
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
            device: device.clone(),
            handle,
            name: name.to_owned(),
            memory: Memory::Allocated {
                allocator: allocator.clone(),
                allocation: Some(allocation),
            },
            mapped,
            host: Mutex::new(()),
            state: Mutex::new(Tracked::new(desc.size, SegmentState::default())),
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
    /// let b = StBuffer::from_raw(device, raw, BufferDesc::new(1024, vk::BufferUsageFlags::VERTEX_BUFFER), "mesh",
    ///     ResourceState::defined(vk::ImageLayout::UNDEFINED), Destroy::AppKeeps);
    /// # }
    /// ```
    pub fn from_raw(
        device: &ash::Device,
        handle: vk::Buffer,
        desc: BufferDesc,
        name: &str,
        initial: ResourceState,
        destroy: Destroy,
    ) -> Self {
        Self {
            id: next_id(),
            device: device.clone(),
            handle,
            name: name.to_owned(),
            memory: Memory::Raw(destroy),
            mapped: None,
            host: Mutex::new(()),
            state: Mutex::new(Tracked::new(desc.size, initial.to_segment())),
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
            d.set_name(self.handle, &self.name);
        }
        self
    }

    /// Keeps `owner` (what destroys the device) alive until this object has dropped.
    pub(crate) fn keep_alive_with(mut self, owner: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self.device_owner = Some(owner);
        self
    }

    /// A process-wide unique id.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// let id = b.id();
    /// # }
    /// ```
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `VkBuffer`.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// let raw: ash::vk::Buffer = b.handle();
    /// # }
    /// ```
    pub fn handle(&self) -> vk::Buffer {
        self.handle
    }

    /// The description it was created with.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// let size = b.desc().size;
    /// # }
    /// ```
    pub fn desc(&self) -> &BufferDesc {
        &self.desc
    }

    /// Size in bytes.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// let size: u64 = b.size();
    /// # }
    /// ```
    pub fn size(&self) -> u64 {
        self.desc.size
    }

    /// The debug name.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// println!("{}", b.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `VkDevice` it belongs to.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer, d: &ash::Device) {
    /// assert_eq!(b.device_handle(), d.handle());
    /// # }
    /// ```
    pub fn device_handle(&self) -> vk::Device {
        self.device.handle()
    }

    /// A copy of the tracked state.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// let owner = b.state().owner();
    /// # }
    /// ```
    pub fn state(&self) -> StateSnapshot {
        self.state.lock().snapshot()
    }

    /// Declares the state of every byte after the app's own hand-recorded work.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer, q: &vk_baton::Queue) {
    /// use vk_baton::{ash::vk, ResourceState};
    /// b.declare_state(ResourceState::defined(vk::ImageLayout::UNDEFINED)
    ///     .owned_by(q.family())
    ///     .last_access(q, vk::PipelineStageFlags2::COPY, vk::AccessFlags2::TRANSFER_WRITE));
    /// # }
    /// ```
    pub fn declare_state(&self, state: ResourceState) {
        self.state
            .lock()
            .commit(vec![(0..self.desc.size, state.to_segment())]);
    }

    pub(crate) fn tracked(&self) -> &Mutex<Tracked> {
        &self.state
    }
}

impl Drop for StBuffer {
    fn drop(&mut self) {
        match &mut self.memory {
            Memory::Allocated {
                allocator,
                allocation,
            } => {
                // SAFETY: the last Arc is gone and every execution that used the buffer held
                // an Arc until its fence signalled: the GPU is done with it.
                unsafe { self.device.destroy_buffer(self.handle, None) };
                if let Some(a) = allocation.take() {
                    free(allocator, a, &self.name);
                }
            }
            // SAFETY: as above; the app handed over the destroy duty.
            Memory::Raw(Destroy::Library) => unsafe {
                self.device.destroy_buffer(self.handle, None)
            },
            Memory::Raw(Destroy::AppKeeps) => {}
        }
    }
}

impl std::fmt::Debug for StBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "StBuffer(#{} `{}` {:?})",
            self.id, self.name, self.handle
        )
    }
}

/// An image or a buffer, for code that handles both.
///
/// ```no_run
/// # fn f(img: std::sync::Arc<vk_baton::StImage>) {
/// let r = vk_baton::Resource::Image(img);
/// println!("{}", r.name());
/// # }
/// ```
#[derive(Clone, Debug)]
pub enum Resource {
    /// An image.
    Image(Arc<StImage>),
    /// A buffer.
    Buffer(Arc<StBuffer>),
}

impl Resource {
    /// The resource's unique id.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let id = r.id();
    /// # }
    /// ```
    pub fn id(&self) -> u64 {
        match self {
            Resource::Image(i) => i.id(),
            Resource::Buffer(b) => b.id(),
        }
    }

    /// Number of state-tracking cells: mip levels × array layers, or bytes.
    pub(crate) fn cells(&self) -> u64 {
        match self {
            Resource::Image(i) => i.desc().cells(),
            Resource::Buffer(b) => b.size(),
        }
    }

    /// The debug name.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// println!("{}", r.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        match self {
            Resource::Image(i) => i.name(),
            Resource::Buffer(b) => b.name(),
        }
    }

    /// The `VkDevice` it belongs to.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let d = r.device_handle();
    /// # }
    /// ```
    pub fn device_handle(&self) -> vk::Device {
        match self {
            Resource::Image(i) => i.device_handle(),
            Resource::Buffer(b) => b.device_handle(),
        }
    }

    /// A copy of the tracked state.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let s = r.state();
    /// # }
    /// ```
    pub fn state(&self) -> StateSnapshot {
        self.tracked().lock().snapshot()
    }

    pub(crate) fn tracked(&self) -> &Mutex<Tracked> {
        match self {
            Resource::Image(i) => i.tracked(),
            Resource::Buffer(b) => b.tracked(),
        }
    }
}
