//! What a resource is made from (its description and sharing mode), who destroys a wrapped
//! handle, and the state an app declares for a resource.

use crate::plan::{Recorded, SegmentState};
use crate::queue::Queue;
use ash::vk;
use gpu_allocator::MemoryLocation;

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
    pub(crate) fn vk_mode(&self) -> (vk::SharingMode, &[u32]) {
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
#[non_exhaustive]
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
    /// Refuses a zero extent, mip count or layer count.
    pub(crate) fn check(&self, name: &str) -> crate::error::Result<()> {
        let e = self.extent;
        if e.width == 0
            || e.height == 0
            || e.depth == 0
            || self.mip_levels == 0
            || self.array_layers == 0
        {
            return Err(crate::error::Error::InvalidArgument(format!(
                "image `{name}`: a zero extent, mip count or layer count"
            )));
        }
        Ok(())
    }

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

    /// The same description with `samples` samples per texel (a multisampled render target).
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// let msaa = ImageDesc::new_2d(64, 64, vk::Format::R8G8B8A8_UNORM, vk::ImageUsageFlags::COLOR_ATTACHMENT)
    ///     .samples(vk::SampleCountFlags::TYPE_4);
    /// assert_eq!(msaa.samples, vk::SampleCountFlags::TYPE_4);
    /// ```
    pub fn samples(mut self, samples: vk::SampleCountFlags) -> Self {
        self.samples = samples;
        self
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

    /// Number of tracking cells: `mip_levels * array_layers * planes`, where a format with
    /// both depth and stencil has two planes (each aspect has its own layout and last
    /// accesses) and any other format one.
    ///
    /// ```
    /// # use vk_baton::{ash::vk, ImageDesc};
    /// assert_eq!(ImageDesc::storage_2d(4, 4, vk::Format::R8_UNORM).mips(2).layers(3).cells(), 6);
    /// let ds = ImageDesc::new_2d(4, 4, vk::Format::D32_SFLOAT_S8_UINT, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT);
    /// assert_eq!(ds.cells(), 2);
    /// ```
    pub fn cells(&self) -> u64 {
        self.grid().count(self.mip_levels)
    }

    /// How the image's cells are numbered.
    pub(crate) fn grid(&self) -> crate::range::CellGrid {
        crate::range::CellGrid::new(self.array_layers, self.aspect())
    }

    pub(crate) fn create_info(&self) -> vk::ImageCreateInfo<'_> {
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
#[non_exhaustive]
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
#[non_exhaustive]
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
            visible: Vec::new(),
        }
    }
}
