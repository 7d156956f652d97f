//! The planner's input: queues, resources with the state earlier graphs left them in, and
//! passes with their uses and binary semaphores; and, for a transient resource, the memory it
//! needs ([`TransientMemory`]).

use super::SegmentState;
use crate::range::{BufferRange, CellGrid, ImageRange, SubRange};
use ash::vk;

mod unordered;
mod uses;
pub use unordered::{Region, Unordered};
pub use uses::{RenderPassLayouts, UseDecl};

/// Everything the planner needs: the queues, the resources (with the state earlier graphs left
/// them in) and the passes in program order.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER)],
///     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER)],
///     passes: vec![
///         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
///         PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
///     ],
/// };
/// let plan = plan(&input).unwrap();
/// // One queue, one batch: `fill`, a barrier, `draw`.
/// assert_eq!(plan.batch_count(), 1);
/// assert_eq!(plan.barrier_commands(), 1);
/// // No declarations, no work.
/// assert_eq!(vk_baton::plan::plan(&PlanInput::default()).unwrap().batch_count(), 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct PlanInput {
    /// Distinct queues. Two logical queues that share one `VkQueue` must appear once.
    pub queues: Vec<QueueDecl>,
    /// Resources, referred to by index.
    pub resources: Vec<ResourceDecl>,
    /// Passes in program (insertion) order.
    pub passes: Vec<PassDecl>,
}

/// A queue as the planner sees it.
///
/// ```
/// use vk_baton::{ash::vk, plan::QueueDecl};
/// let q = QueueDecl::new("async compute", 1, vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER);
/// assert_eq!((q.name.as_str(), q.family), ("async compute", 1));
/// assert!(!q.caps.contains(vk::QueueFlags::GRAPHICS));
/// ```
#[derive(Clone, Debug)]
pub struct QueueDecl {
    /// Debug name.
    pub name: String,
    /// Queue family index.
    pub family: u32,
    /// The family's capabilities.
    pub caps: vk::QueueFlags,
    /// The device has `VK_KHR_maintenance8`'s `maintenance8` enabled, and ownership transfers
    /// recorded on this queue carry `QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES`: a
    /// release's second scope and an acquire's first scope then apply, so the semaphore wait
    /// before an acquire waits at the acquiring use's stages instead of `ALL_COMMANDS`, and
    /// the signal after a release covers the release's stages. The planner uses this path
    /// only between two queues that both have it.
    pub transfers_use_all_stages: bool,
    /// `Some(mask)`: the device has `VK_KHR_maintenance9`'s `maintenance9` feature enabled,
    /// and `mask` is this queue's family's `optimalImageTransferToQueueFamilies`
    /// (`VkQueueFamilyOwnershipTransferPropertiesKHR`). Contents of an `EXCLUSIVE` resource
    /// owned by this family then stay defined when another family of the device implicitly
    /// acquires them: always for a buffer, and for an image created without attachment usage
    /// when the other family's bit is in `mask`. The planner makes no ownership transfer
    /// there, only the semaphore wait. (The specification keeps linear images too; the
    /// planner does not know tiling and transfers them.)
    pub maintenance9: Option<u32>,
}

impl QueueDecl {
    /// A queue of `family` with capabilities `caps`.
    pub fn new(name: &str, family: u32, caps: vk::QueueFlags) -> Self {
        Self {
            name: name.into(),
            family,
            caps,
            transfers_use_all_stages: false,
            maintenance9: None,
        }
    }

    /// The same queue on a device with `maintenance9` enabled, its family's
    /// `optimalImageTransferToQueueFamilies` being `optimal_image_transfers`
    /// ([`QueueDecl::maintenance9`]).
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::QueueDecl};
    /// // Family 0 hands optimal images to family 1 with their contents.
    /// let q = QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS).with_maintenance9(0b10);
    /// assert_eq!(q.maintenance9, Some(0b10));
    /// ```
    pub fn with_maintenance9(mut self, optimal_image_transfers: u32) -> Self {
        self.maintenance9 = Some(optimal_image_transfers);
        self
    }

    /// The same queue on a device with `maintenance8` enabled
    /// ([`QueueDecl::transfers_use_all_stages`]).
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::QueueDecl};
    /// let q = QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS).with_transfers_using_all_stages();
    /// assert!(q.transfers_use_all_stages);
    /// ```
    pub fn with_transfers_using_all_stages(mut self) -> Self {
        self.transfers_use_all_stages = true;
        self
    }
}

/// What kind of resource, and its extent in state-tracking cells.
///
/// ```
/// use vk_baton::{ash::vk, plan::{ResourceDecl, ResourceKind}};
/// let r = ResourceDecl::image("shadow", 4, 6, vk::ImageUsageFlags::SAMPLED);
/// assert!(matches!(r.kind, ResourceKind::Image { mips: 4, layers: 6, .. }));
/// let b = ResourceKind::Buffer { size: 1024, usage: vk::BufferUsageFlags::UNIFORM_BUFFER };
/// assert_eq!(b.cells(), 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    /// An image of `mips` levels and `layers` array layers.
    Image {
        /// Mip levels.
        mips: u32,
        /// Array layers.
        layers: u32,
        /// The aspects barriers name (COLOR, or DEPTH|STENCIL, ...).
        aspect: vk::ImageAspectFlags,
        /// Creation usage flags.
        usage: vk::ImageUsageFlags,
    },
    /// A buffer of `size` bytes.
    Buffer {
        /// Size in bytes.
        size: u64,
        /// Creation usage flags.
        usage: vk::BufferUsageFlags,
    },
}

/// The memory a transient resource needs, as `vkGetImageMemoryRequirements` or
/// `vkGetBufferMemoryRequirements` report it, and how it may sit next to other resources.
///
/// ```
/// use vk_baton::plan::TransientMemory;
/// // A 1080p RGBA16F render target: optimal tiling.
/// let hdr = TransientMemory::image(1920 * 1080 * 8, 65536, 0b0110);
/// assert!(!hdr.linear);
/// // A storage buffer: linear, next to optimal images only 1 KiB pages apart.
/// let tiles = TransientMemory::buffer(4096, 256, 0b0111).with_granularity(1024);
/// assert!(tiles.linear && tiles.buffer_image_granularity == 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransientMemory {
    /// `VkMemoryRequirements::size`.
    pub size: u64,
    /// `VkMemoryRequirements::alignment` (a power of two).
    pub alignment: u64,
    /// `VkMemoryRequirements::memoryTypeBits`: the memory types it may be bound to.
    pub memory_type_bits: u32,
    /// A buffer or a linear-tiling image (`true`), or an optimal-tiling image (`false`). A
    /// linear and an optimal resource closer than
    /// [`buffer_image_granularity`](Self::buffer_image_granularity) alias.
    pub linear: bool,
    /// The device's `VkPhysicalDeviceLimits::bufferImageGranularity` (a power of two; 1 when
    /// linear and optimal resources never share memory). The planner uses the largest given.
    pub buffer_image_granularity: u64,
}

impl TransientMemory {
    /// An optimal-tiling image's requirements (granularity 1: see
    /// [`with_granularity`](Self::with_granularity)).
    pub fn image(size: u64, alignment: u64, memory_type_bits: u32) -> Self {
        Self {
            size,
            alignment,
            memory_type_bits,
            linear: false,
            buffer_image_granularity: 1,
        }
    }

    /// A buffer's requirements (linear; granularity 1: see
    /// [`with_granularity`](Self::with_granularity)).
    pub fn buffer(size: u64, alignment: u64, memory_type_bits: u32) -> Self {
        Self {
            linear: true,
            ..Self::image(size, alignment, memory_type_bits)
        }
    }

    /// The same requirements on a device whose `bufferImageGranularity` is `granularity`.
    pub fn with_granularity(mut self, granularity: u64) -> Self {
        self.buffer_image_granularity = granularity;
        self
    }
}

/// A resource as the planner sees it.
///
/// ```
/// use vk_baton::{ash::vk, plan::ResourceDecl};
/// let img = ResourceDecl::image("albedo", 3, 2, vk::ImageUsageFlags::SAMPLED);
/// // One fresh segment over all 3 × 2 (mip, layer) cells.
/// assert_eq!(img.initial.len(), 1);
/// assert_eq!(img.initial[0].0, 0..6);
/// assert!(!img.initial[0].1.defined);
/// assert!(!img.concurrent);
/// ```
#[derive(Clone, Debug)]
pub struct ResourceDecl {
    /// Debug name.
    pub name: String,
    /// Image or buffer, with extent and usage.
    pub kind: ResourceKind,
    /// `VK_SHARING_MODE_CONCURRENT`: never an ownership transfer.
    pub concurrent: bool,
    /// The tracked state per cell range (images: `(mip * layers + layer) * planes + plane`,
    /// where a format with depth and stencil has two planes, depth then stencil, and others
    /// one; buffers: bytes), as earlier graphs or the app left it. Queue fields index [`PlanInput::queues`].
    pub initial: Vec<(std::ops::Range<u64>, SegmentState<usize>)>,
    /// `Some`: a transient, whose contents live only inside one execution and whose memory
    /// the plan places, possibly shared with other transients ([`ResourceDecl::transient`]).
    pub transient: Option<TransientMemory>,
}

impl ResourceDecl {
    /// A fresh (undefined, unowned) exclusive color image.
    pub fn image(name: &str, mips: u32, layers: u32, usage: vk::ImageUsageFlags) -> Self {
        let kind = ResourceKind::Image {
            mips,
            layers,
            aspect: vk::ImageAspectFlags::COLOR,
            usage,
        };
        Self {
            name: name.into(),
            kind,
            concurrent: false,
            initial: vec![(0..kind.cells(), SegmentState::default())],
            transient: None,
        }
    }

    /// A fresh (undefined, unowned) exclusive buffer.
    pub fn buffer(name: &str, size: u64, usage: vk::BufferUsageFlags) -> Self {
        let kind = ResourceKind::Buffer { size, usage };
        Self {
            name: name.into(),
            kind,
            concurrent: false,
            initial: vec![(0..size, SegmentState::default())],
            transient: None,
        }
    }

    /// The same resource as a transient needing `memory`: it starts every execution fresh, its
    /// first use must write all of it without reading, and the plan places it in
    /// [`Plan::transients`](crate::plan::Plan::transients), sharing memory with transients
    /// whose uses are all ordered before or after its own. See the
    /// [`transient` module](crate::plan::transient) for how.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access, Error};
    /// let scratch = ResourceDecl::buffer("scratch", 256, vk::BufferUsageFlags::STORAGE_BUFFER)
    ///     .transient(TransientMemory::buffer(256, 64, 0b1));
    /// let input = |first: Access| PlanInput {
    ///     queues: vec![QueueDecl::new("compute", 0, vk::QueueFlags::COMPUTE)],
    ///     resources: vec![scratch.clone()],
    ///     passes: vec![PassDecl::new("first", 0).with_use(UseDecl::new(0, first))],
    /// };
    /// let written = plan(&input(Access::COMPUTE_SHADER_WRITE)).unwrap();
    /// assert_eq!(written.transients.placement(0).unwrap().size, 256);
    /// // Reading a transient before any pass wrote it is refused.
    /// let err = plan(&input(Access::COMPUTE_SHADER_READ)).unwrap_err();
    /// assert!(matches!(err, Error::InvalidInput(_)));
    /// assert!(err.to_string().contains("first use of a transient must write all of it"));
    /// ```
    pub fn transient(mut self, memory: TransientMemory) -> Self {
        self.transient = Some(memory);
        self
    }

    /// The same resource with `VK_SHARING_MODE_CONCURRENT`.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let input = |concurrent: bool| {
    ///     let img = ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED);
    ///     PlanInput {
    ///         queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    ///                      QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    ///         resources: vec![if concurrent { img.concurrent() } else { img }],
    ///         passes: vec![
    ///             PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    ///             PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    ///         ],
    ///     }
    /// };
    /// let transfers = |p: &Plan| {
    ///     p.queues.iter().flat_map(|q| &q.batches).flat_map(|b| &b.commands)
    ///         .filter_map(|c| match c { Command::Barrier(b) => Some(b), Command::Pass(_) => None })
    ///         .flat_map(|b| &b.images)
    ///         .filter(|i| i.scopes.families.is_some())
    ///         .count()
    /// };
    /// // Exclusive: a release on family 1 and an acquire on family 0. Concurrent: no transfer.
    /// assert_eq!(transfers(&plan(&input(false)).unwrap()), 2);
    /// assert_eq!(transfers(&plan(&input(true)).unwrap()), 0);
    /// ```
    pub fn concurrent(mut self) -> Self {
        self.concurrent = true;
        self
    }

    /// The same image, of a format with these aspects (a [`ResourceDecl::image`] is COLOR):
    /// DEPTH, STENCIL, or both, which makes two planes per (mip, layer), tracked apart.
    /// Ignored for a buffer.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::ResourceDecl};
    /// use vk::ImageAspectFlags as A;
    /// let ds = ResourceDecl::image("ds", 1, 1, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
    ///     .aspect(A::DEPTH | A::STENCIL);
    /// // Depth (cell 0) and stencil (cell 1), fresh.
    /// assert_eq!(ds.initial[0].0, 0..2);
    /// ```
    pub fn aspect(mut self, aspect: vk::ImageAspectFlags) -> Self {
        if let ResourceKind::Image { aspect: a, .. } = &mut self.kind {
            *a = aspect;
            // A fresh image covers its new count of cells.
            if let [(range, state)] = self.initial.as_mut_slice() {
                if *state == SegmentState::default() {
                    *range = 0..self.kind.cells();
                }
            }
        }
        self
    }

    /// The same resource, starting in `state` everywhere.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// // The app uploaded the image itself and left it readable, owned by family 0.
    /// let state = SegmentState::handed_over(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL, Some(0), None);
    /// let logo = ResourceDecl::image("logo", 1, 1, vk::ImageUsageFlags::SAMPLED).with_state(state);
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///     resources: vec![logo],
    ///     passes: vec![PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ))],
    /// };
    /// // Already in the right layout and family: nothing to do before sampling it.
    /// assert_eq!(plan(&input).unwrap().barrier_commands(), 0);
    /// ```
    pub fn with_state(mut self, state: SegmentState<usize>) -> Self {
        self.initial = vec![(0..self.kind.cells(), state)];
        self
    }
}

impl ResourceKind {
    /// Number of tracking cells: mips × layers × planes for images (two planes, depth and
    /// stencil, for a format with both; one otherwise), bytes for buffers.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::ResourceKind};
    /// let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    /// let aspect = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
    /// // Depth and stencil of each (mip, layer) are tracked apart.
    /// assert_eq!(ResourceKind::Image { mips: 1, layers: 6, aspect, usage }.cells(), 12);
    /// let aspect = vk::ImageAspectFlags::DEPTH;
    /// assert_eq!(ResourceKind::Image { mips: 1, layers: 6, aspect, usage }.cells(), 6);
    /// ```
    pub fn cells(&self) -> u64 {
        match *self {
            Self::Image { mips, .. } => self.grid().map_or(0, |g| g.count(mips)),
            Self::Buffer { size, .. } => size,
        }
    }

    /// How an image's cells are numbered; `None` for a buffer.
    pub(crate) fn grid(&self) -> Option<CellGrid> {
        match *self {
            Self::Image { layers, aspect, .. } => Some(CellGrid::new(layers, aspect)),
            Self::Buffer { .. } => None,
        }
    }

    /// The whole resource as a range.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::{ResourceDecl, ResourceKind}, BufferRange, SubRange};
    /// let buf = ResourceKind::Buffer { size: 256, usage: vk::BufferUsageFlags::UNIFORM_BUFFER };
    /// assert_eq!(buf.whole(), SubRange::Buffer(BufferRange { offset: 0, size: 256 }));
    /// let img = ResourceDecl::image("cube", 4, 6, vk::ImageUsageFlags::SAMPLED).kind;
    /// let SubRange::Image(r) = img.whole() else { unreachable!() };
    /// assert_eq!((r.base_mip, r.mip_count, r.base_layer, r.layer_count), (0, 4, 0, 6));
    /// ```
    pub fn whole(&self) -> SubRange {
        match *self {
            Self::Image { mips, layers, .. } => SubRange::Image(ImageRange {
                base_mip: 0,
                mip_count: mips,
                base_layer: 0,
                layer_count: layers,
            }),
            Self::Buffer { size, .. } => SubRange::Buffer(BufferRange { offset: 0, size }),
        }
    }
}

/// A binary semaphore a pass waits on (swapchain acquire, external producers).
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk::{self, Handle}, Access};
/// let (acquired, rendered) = (vk::Semaphore::from_raw(1), vk::Semaphore::from_raw(2));
/// // `draw` waits for `acquired` and renders; `present` signals `rendered`.
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
///     resources: vec![ResourceDecl::image("swap", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT)],
///     passes: vec![
///         PassDecl::new("draw", 0)
///             .with_wait(BinaryWaitDecl { semaphore: acquired, guards: vec![0], stages: None })
///             .with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).discard()),
///         PassDecl::new("present", 0)
///             .with_use(UseDecl::new(0, Access::PRESENT))
///             .with_signal(BinarySignalDecl { semaphore: rendered, stages: None }),
///     ],
/// };
/// let plan = plan(&input).unwrap();
/// let batch = &plan.queues[0].batches[0];
/// // The wait lands on the batch, at the stage of the guarded image's first use.
/// assert_eq!(batch.waits[0].target, WaitTarget::Binary(acquired));
/// assert_eq!(batch.waits[0].stages, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT);
/// // The signal ends the batch, after the stages that made the image ready.
/// assert_eq!(batch.binary_signals, vec![(rendered, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryWaitDecl {
    /// The semaphore.
    pub semaphore: vk::Semaphore,
    /// Resources whose contents the semaphore guards (the acquired swapchain image). Their
    /// state becomes "undefined, made ready by this wait", and the wait's stage mask becomes
    /// the stages of their first use.
    pub guards: Vec<usize>,
    /// An explicit stage mask; `None` lets the planner derive it from the guarded resources.
    /// A mask naming `HOST` is refused ([`Error::InvalidInput`](crate::Error::InvalidInput)).
    pub stages: Option<vk::PipelineStageFlags2>,
}

/// A binary semaphore a pass signals (present, external consumers).
///
/// See the [`BinaryWaitDecl`] example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinarySignalDecl {
    /// The semaphore.
    pub semaphore: vk::Semaphore,
    /// An explicit stage mask; `None` uses the stages of the pass's own uses (for present:
    /// the stages that made the image ready). A mask naming `HOST` is refused
    /// ([`Error::InvalidInput`](crate::Error::InvalidInput)).
    pub stages: Option<vk::PipelineStageFlags2>,
}

/// A pass as the planner sees it.
///
/// ```
/// use vk_baton::{plan::{PassDecl, UseDecl}, Access};
/// let blur = PassDecl::new("blur", 1)
///     .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_SAMPLED_READ))
///     .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE));
/// assert_eq!(blur.queue, 1);
/// assert_eq!(blur.uses.len(), 2);
/// assert!(blur.waits.is_empty() && blur.signals.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct PassDecl {
    /// Name, used in labels and reports.
    pub name: String,
    /// Index into [`PlanInput::queues`].
    pub queue: usize,
    /// Declared uses.
    pub uses: Vec<UseDecl>,
    /// Binary semaphores waited before the pass.
    pub waits: Vec<BinaryWaitDecl>,
    /// Binary semaphores signalled after the pass.
    pub signals: Vec<BinarySignalDecl>,
}

impl PassDecl {
    /// A pass with no uses yet.
    pub fn new(name: &str, queue: usize) -> Self {
        Self {
            name: name.into(),
            queue,
            uses: vec![],
            waits: vec![],
            signals: vec![],
        }
    }
    /// Adds a use.
    pub fn with_use(mut self, u: UseDecl) -> Self {
        self.uses.push(u);
        self
    }
    /// Adds a binary wait.
    pub fn with_wait(mut self, w: BinaryWaitDecl) -> Self {
        self.waits.push(w);
        self
    }
    /// Adds a binary signal.
    pub fn with_signal(mut self, s: BinarySignalDecl) -> Self {
        self.signals.push(s);
        self
    }
}
