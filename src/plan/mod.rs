//! The plan: what the planner decides, as plain data.
//!
//! [`PlanInput`] is the declarations (queues, resources with their tracked state, passes with
//! their uses). [`plan`] turns it into a [`Plan`]: per queue, batches of semaphore waits,
//! barrier commands and passes, and semaphore signals. No Vulkan call is made, so plans are
//! built, printed and checked without a GPU; the executor translates a plan one to one into
//! `vkCmdPipelineBarrier2` and `vkQueueSubmit2`.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{Access, ash::vk};
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
//!                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
//!     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
//!     passes: vec![
//!         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
//!         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ],
//! };
//! let plan = plan(&input).unwrap();
//! // The image moves from family 1 to family 0: a release on compute, an acquire on graphics.
//! assert_eq!(plan.queues[0].batches.len(), 1);
//! assert_eq!(plan.queues[1].batches[0].waits.len(), 1);
//! println!("{plan}");
//! ```

mod display;
mod planner;
mod presented;
mod queue_stages;
mod state;
mod submission;

pub use planner::{plan, plan_owned};
pub use state::{Recorded, SegmentState};
pub(crate) use submission::{submission_runs, SubmissionRun};

use crate::access::Access;
use crate::range::{BufferRange, ImageRange, SubRange};
use ash::vk;

// ---------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------

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
}

impl QueueDecl {
    /// A queue of `family` with capabilities `caps`.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::QueueDecl};
    /// let q = QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER);
    /// assert_eq!(q.family, 2);
    /// assert_eq!(q.caps, vk::QueueFlags::TRANSFER);
    /// ```
    pub fn new(name: &str, family: u32, caps: vk::QueueFlags) -> Self {
        Self {
            name: name.into(),
            family,
            caps,
        }
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
    /// The tracked state per cell range (images: `mip * layers + layer`; buffers: bytes),
    /// as earlier graphs or the app left it. Queue fields index [`PlanInput::queues`].
    pub initial: Vec<(std::ops::Range<u64>, SegmentState<usize>)>,
}

impl ResourceDecl {
    /// A fresh (undefined, unowned) exclusive color image.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::{ResourceDecl, ResourceKind}};
    /// let r = ResourceDecl::image("hdr", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT);
    /// let ResourceKind::Image { aspect, .. } = r.kind else { unreachable!() };
    /// assert_eq!(aspect, vk::ImageAspectFlags::COLOR);
    /// assert_eq!(r.initial[0].1.layout, vk::ImageLayout::UNDEFINED);
    /// assert_eq!(r.initial[0].1.owner, None);
    /// ```
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
        }
    }

    /// A fresh (undefined, unowned) exclusive buffer.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::ResourceDecl};
    /// let r = ResourceDecl::buffer("vertices", 4096, vk::BufferUsageFlags::VERTEX_BUFFER);
    /// // Buffers are tracked per byte.
    /// assert_eq!(r.kind.cells(), 4096);
    /// assert_eq!(r.initial[0].0, 0..4096);
    /// assert!(!r.initial[0].1.defined);
    /// ```
    pub fn buffer(name: &str, size: u64, usage: vk::BufferUsageFlags) -> Self {
        let kind = ResourceKind::Buffer { size, usage };
        Self {
            name: name.into(),
            kind,
            concurrent: false,
            initial: vec![(0..size, SegmentState::default())],
        }
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
    /// Number of tracking cells: mips × layers for images, bytes for buffers.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::ResourceKind};
    /// let img = ResourceKind::Image {
    ///     mips: 4, layers: 6, aspect: vk::ImageAspectFlags::COLOR, usage: vk::ImageUsageFlags::SAMPLED,
    /// };
    /// assert_eq!(img.cells(), 24);
    /// let buf = ResourceKind::Buffer { size: 256, usage: vk::BufferUsageFlags::UNIFORM_BUFFER };
    /// assert_eq!(buf.cells(), 256);
    /// ```
    pub fn cells(&self) -> u64 {
        match *self {
            Self::Image { mips, layers, .. } => mips as u64 * layers as u64,
            Self::Buffer { size, .. } => size,
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

/// One declared use of a resource by a pass.
///
/// ```
/// use vk_baton::{plan::UseDecl, Access, BufferRange, SubRange};
/// let u = UseDecl::new(2, Access::TRANSFER_WRITE)
///     .range(SubRange::Buffer(BufferRange { offset: 64, size: 64 }))
///     .discard();
/// assert_eq!(u.resource, 2);
/// assert!(u.access.is_write() && u.discard);
/// assert_eq!(u.range, Some(SubRange::Buffer(BufferRange { offset: 64, size: 64 })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseDecl {
    /// Index into [`PlanInput::resources`].
    pub resource: usize,
    /// How the pass touches it.
    pub access: Access,
    /// Which part; `None` is the whole resource.
    pub range: Option<SubRange>,
    /// The pass overwrites every byte of the range without reading it: old contents are not
    /// needed, so there is no ownership transfer and images transition from UNDEFINED.
    pub discard: bool,
}

impl UseDecl {
    /// A use of the whole resource.
    ///
    /// ```
    /// use vk_baton::{plan::UseDecl, Access};
    /// let u = UseDecl::new(0, Access::COMPUTE_SHADER_READ);
    /// assert_eq!(u.range, None); // the whole resource
    /// assert!(!u.discard);
    /// ```
    pub fn new(resource: usize, access: Access) -> Self {
        Self {
            resource,
            access,
            range: None,
            discard: false,
        }
    }
    /// The same use, limited to `range`.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access, BufferRange, SubRange};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
    /// #     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
    /// #     passes: vec![
    /// #         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    /// #         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
    /// #             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
    /// #     ],
    /// # };
    /// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
    /// let plan = plan(&input).unwrap();
    /// // The barrier before `read` covers only the bytes it reads.
    /// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[1] else { unreachable!() };
    /// assert_eq!(b.buffers[0].range, BufferRange { offset: 0, size: 64 });
    /// ```
    pub fn range(mut self, range: SubRange) -> Self {
        self.range = Some(range);
        self
    }
    /// The same use, promising to overwrite the whole range.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let first_old_layout = |u: UseDecl| {
    ///     let state = SegmentState::handed_over(vk::ImageLayout::GENERAL, Some(0), None);
    ///     let input = PlanInput {
    ///         queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///         resources: vec![ResourceDecl::image("target", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT).with_state(state)],
    ///         passes: vec![PassDecl::new("draw", 0).with_use(u)],
    ///     };
    ///     let plan = plan(&input).unwrap();
    ///     let Command::Barrier(b) = &plan.queues[0].batches[0].commands[0] else { unreachable!() };
    ///     b.images[0].old_layout
    /// };
    /// let write = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE);
    /// // Old contents kept: a GENERAL -> COLOR_ATTACHMENT_OPTIMAL transition.
    /// assert_eq!(first_old_layout(write), vk::ImageLayout::GENERAL);
    /// // Discarded: the transition starts from UNDEFINED.
    /// assert_eq!(first_old_layout(write.discard()), vk::ImageLayout::UNDEFINED);
    /// ```
    pub fn discard(mut self) -> Self {
        self.discard = true;
        self
    }
}

/// A binary semaphore a pass waits on (swapchain acquire, external producers).
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk::{self, Handle}, Access};
/// # let (acquired, rendered) = (vk::Semaphore::from_raw(1), vk::Semaphore::from_raw(2));
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
/// #     resources: vec![ResourceDecl::image("swap", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT)],
/// #     passes: vec![
/// #         PassDecl::new("draw", 0)
/// #             .with_wait(BinaryWaitDecl { semaphore: acquired, guards: vec![0], stages: None })
/// #             .with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).discard()),
/// #         PassDecl::new("present", 0)
/// #             .with_use(UseDecl::new(0, Access::PRESENT))
/// #             .with_signal(BinarySignalDecl { semaphore: rendered, stages: None }),
/// #     ],
/// # };
/// // `draw` waits for `acquired` and renders; `present` signals `rendered`.
/// let plan = plan(&input).unwrap();
/// // The wait lands on the batch, at the stage of the guarded image's first use.
/// let w = plan.queues[0].batches[0].waits[0];
/// assert_eq!(w.target, WaitTarget::Binary(acquired));
/// assert_eq!(w.stages, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT);
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
    pub stages: Option<vk::PipelineStageFlags2>,
}

/// A binary semaphore a pass signals (present, external consumers).
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk::{self, Handle}, Access};
/// # let (acquired, rendered) = (vk::Semaphore::from_raw(1), vk::Semaphore::from_raw(2));
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
/// #     resources: vec![ResourceDecl::image("swap", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT)],
/// #     passes: vec![
/// #         PassDecl::new("draw", 0)
/// #             .with_wait(BinaryWaitDecl { semaphore: acquired, guards: vec![0], stages: None })
/// #             .with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).discard()),
/// #         PassDecl::new("present", 0)
/// #             .with_use(UseDecl::new(0, Access::PRESENT))
/// #             .with_signal(BinarySignalDecl { semaphore: rendered, stages: None }),
/// #     ],
/// # };
/// // `draw` waits for `acquired` and renders; `present` signals `rendered`.
/// let plan = plan(&input).unwrap();
/// // Signalled at the end of the batch, after the stages that made the image ready.
/// assert_eq!(
///     plan.queues[0].batches[0].binary_signals,
///     vec![(rendered, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT)]
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinarySignalDecl {
    /// The semaphore.
    pub semaphore: vk::Semaphore,
    /// An explicit stage mask; `None` uses the stages of the pass's own uses (for present:
    /// the stages that made the image ready).
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
    ///
    /// ```
    /// use vk_baton::plan::PassDecl;
    /// let p = PassDecl::new("tonemap", 0);
    /// assert_eq!((p.name.as_str(), p.queue), ("tonemap", 0));
    /// assert!(p.uses.is_empty());
    /// ```
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
    ///
    /// ```
    /// use vk_baton::{plan::{PassDecl, UseDecl}, Access};
    /// let copy = PassDecl::new("copy", 0)
    ///     .with_use(UseDecl::new(0, Access::TRANSFER_READ))
    ///     .with_use(UseDecl::new(1, Access::TRANSFER_WRITE));
    /// assert_eq!(copy.uses[1], UseDecl::new(1, Access::TRANSFER_WRITE));
    /// ```
    pub fn with_use(mut self, u: UseDecl) -> Self {
        self.uses.push(u);
        self
    }
    /// Adds a binary wait.
    ///
    /// ```
    /// use vk_baton::ash::vk::{self, Handle};
    /// use vk_baton::plan::{BinaryWaitDecl, PassDecl};
    /// let acquired = vk::Semaphore::from_raw(1);
    /// let draw = PassDecl::new("draw", 0)
    ///     .with_wait(BinaryWaitDecl { semaphore: acquired, guards: vec![0], stages: None });
    /// assert_eq!(draw.waits[0].semaphore, acquired);
    /// assert_eq!(draw.waits[0].guards, vec![0]);
    /// ```
    pub fn with_wait(mut self, w: BinaryWaitDecl) -> Self {
        self.waits.push(w);
        self
    }
    /// Adds a binary signal.
    ///
    /// ```
    /// use vk_baton::ash::vk::{self, Handle};
    /// use vk_baton::plan::{BinarySignalDecl, PassDecl};
    /// let done = vk::Semaphore::from_raw(2);
    /// let stages = Some(vk::PipelineStageFlags2::ALL_TRANSFER);
    /// let export = PassDecl::new("export", 0).with_signal(BinarySignalDecl { semaphore: done, stages });
    /// assert_eq!(export.signals, vec![BinarySignalDecl { semaphore: done, stages }]);
    /// ```
    pub fn with_signal(mut self, s: BinarySignalDecl) -> Self {
        self.signals.push(s);
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/// The planner's answer: per queue, the batches to submit.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// // Compute (family 1) writes an image, graphics (family 0) samples it.
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
///                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
///     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
///     passes: vec![
///         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
///         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
///     ],
/// };
/// let plan = plan(&input).unwrap();
/// assert_eq!(plan.queues.len(), 2);
/// assert_eq!(plan.input.passes.len(), 2);
/// // The image ends up sampled on family 0.
/// let (cells, state) = &plan.final_states[0][0];
/// assert_eq!(*cells, 0..1);
/// assert_eq!(state.owner, Some(0));
/// assert_eq!(state.layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
/// assert!(plan.to_string().contains("family 1 -> 0"));
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    /// The declarations this plan was made from.
    pub input: PlanInput,
    /// One entry per [`PlanInput::queues`] entry, in the same order. A queue with no batch
    /// gets no submit.
    pub queues: Vec<QueuePlan>,
    /// Per resource, the state it is left in. `Recorded::value == None` means "this
    /// execution's final timeline value on that queue", filled in by the executor.
    pub final_states: Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>>,
}

/// The batches of one queue: one `VkSubmitInfo2` each, all in one `vkQueueSubmit2`.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER),
///                  QueueDecl::new("transfer", 1, vk::QueueFlags::TRANSFER)],
///     resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::TRANSFER_DST)],
///     passes: vec![PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE))],
/// };
/// let plan = plan(&input).unwrap();
/// assert_eq!(plan.queues[0].batches.len(), 1);
/// // The transfer queue has no work: no batch, so no submit.
/// assert_eq!(plan.queues[1], QueuePlan::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueuePlan {
    /// In submission order.
    pub batches: Vec<Batch>,
}

/// One `VkSubmitInfo2`.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
/// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
/// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
/// #     passes: vec![
/// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
/// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
/// #     ],
/// # };
/// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
/// let plan = plan(&input).unwrap();
/// let shade = &plan.queues[1].batches[0];
/// // Wait for compute, acquire the image, shade, then signal the graphics timeline.
/// assert_eq!(shade.waits.len(), 1);
/// assert!(matches!(shade.commands[..], [Command::Barrier(_), Command::Pass(1)]));
/// assert!(shade.signal.is_some());
/// assert!(shade.binary_signals.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Batch {
    /// Semaphore waits, at most one timeline wait per other queue.
    pub waits: Vec<Wait>,
    /// Barrier commands and passes in recording order. A barrier command sits only at a pass
    /// boundary (or at the end, as the release phase), at most one per boundary.
    pub commands: Vec<Command>,
    /// The stage mask of this batch's signal of its queue's timeline, if it signals. The value
    /// is assigned at execution: signalling batches take consecutive values.
    pub signal: Option<vk::PipelineStageFlags2>,
    /// Binary semaphores signalled at the end of the batch.
    pub binary_signals: Vec<(vk::Semaphore, vk::PipelineStageFlags2)>,
}

/// One semaphore wait of a batch.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
/// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
/// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
/// #     passes: vec![
/// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
/// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
/// #     ],
/// # };
/// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
/// let plan = plan(&input).unwrap();
/// let w = plan.queues[1].batches[0].waits[0];
/// // Graphics waits for the batch of queue 0 (compute) that released the image.
/// assert_eq!(w.target, WaitTarget::Batch { queue: 0, batch: 0 });
/// assert!(!w.stages.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// What is waited on.
    pub target: WaitTarget,
    /// The second synchronization scope: stages of this batch (and later work) that wait.
    pub stages: vk::PipelineStageFlags2,
}

/// The semaphore of a [`Wait`].
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// // An earlier graph wrote the buffer on queue 0; its batch signalled value 5.
/// let state = SegmentState {
///     defined: true,
///     write: Some(Recorded {
///         queue: 0,
///         value: Some(5),
///         stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
///         access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
///     }),
///     ..SegmentState::default()
/// };
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
///                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
///     resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::STORAGE_BUFFER)
///         .concurrent()
///         .with_state(state)],
///     passes: vec![PassDecl::new("read", 1).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))],
/// };
/// let plan = plan(&input).unwrap();
/// assert_eq!(plan.queues[1].batches[0].waits[0].target, WaitTarget::Value { queue: 0, value: 5 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitTarget {
    /// Another queue's timeline, at the value signalled by batch `batch` of this execution.
    Batch {
        /// Queue index.
        queue: usize,
        /// Batch index on that queue; that batch signals.
        batch: usize,
    },
    /// Another queue's timeline, at a value signalled by an earlier execution.
    Value {
        /// Queue index.
        queue: usize,
        /// The timeline value.
        value: u64,
    },
    /// A binary semaphore (swapchain acquire, external).
    Binary(vk::Semaphore),
}

/// One command in a batch.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access, BufferRange, SubRange};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
/// #     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
/// #     passes: vec![
/// #         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
/// #         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
/// #             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
/// #     ],
/// # };
/// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
/// let plan = plan(&input).unwrap();
/// assert!(matches!(
///     plan.queues[0].batches[0].commands[..],
///     [Command::Pass(0), Command::Barrier(_), Command::Pass(1)]
/// ));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// One `vkCmdPipelineBarrier2`.
    Barrier(BarrierCmd),
    /// Record pass `n` (index into [`PlanInput::passes`]).
    Pass(usize),
}

/// The contents of one `vkCmdPipelineBarrier2`.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access, BufferRange, SubRange};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
/// #     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
/// #     passes: vec![
/// #         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
/// #         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
/// #             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
/// #     ],
/// # };
/// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
/// let plan = plan(&input).unwrap();
/// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[1] else { unreachable!() };
/// assert!(b.images.is_empty());
/// assert_eq!(b.buffers.len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarrierCmd {
    /// Image memory barriers.
    pub images: Vec<ImageBarrier>,
    /// Buffer memory barriers.
    pub buffers: Vec<BufferBarrier>,
}

impl BarrierCmd {
    /// No barrier at all.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// assert!(BarrierCmd::default().is_empty());
    /// // A plan never records an empty barrier command.
    /// for b in plan.queues.iter().flat_map(|q| &q.batches).flat_map(|b| &b.commands) {
    ///     if let Command::Barrier(cmd) = b {
    ///         assert!(!cmd.is_empty());
    ///     }
    /// }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.buffers.is_empty()
    }
}

/// Scopes shared by both barrier kinds.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access, BufferRange, SubRange};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
/// #     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
/// #     passes: vec![
/// #         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
/// #         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
/// #             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
/// #     ],
/// # };
/// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
/// let plan = plan(&input).unwrap();
/// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[1] else { unreachable!() };
/// // The transfer write is made available and visible to the compute shader's read.
/// assert_eq!(b.buffers[0].scopes, Scopes {
///     src_stages: vk::PipelineStageFlags2::ALL_TRANSFER,
///     src_access: vk::AccessFlags2::TRANSFER_WRITE,
///     dst_stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
///     dst_access: vk::AccessFlags2::SHADER_STORAGE_READ,
///     families: None,
/// });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scopes {
    /// First synchronization scope.
    pub src_stages: vk::PipelineStageFlags2,
    /// First access scope (writes to make available).
    pub src_access: vk::AccessFlags2,
    /// Second synchronization scope.
    pub dst_stages: vk::PipelineStageFlags2,
    /// Second access scope (accesses to make visible).
    pub dst_access: vk::AccessFlags2,
    /// Ownership transfer: (source family, destination family). `None`: no transfer.
    pub families: Option<(u32, u32)>,
}

/// One image memory barrier.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
/// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
/// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
/// #     passes: vec![
/// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
/// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
/// #     ],
/// # };
/// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
/// let plan = plan(&input).unwrap();
/// // The barrier after `simulate` on compute releases the image to family 0.
/// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[2] else { unreachable!() };
/// let release = b.images[0];
/// assert_eq!(release.resource, 0);
/// assert_eq!(release.scopes.families, Some((1, 0)));
/// assert_eq!(release.old_layout, vk::ImageLayout::GENERAL);
/// assert_eq!(release.new_layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageBarrier {
    /// Index into [`PlanInput::resources`].
    pub resource: usize,
    /// The mip levels and layers.
    pub range: ImageRange,
    /// Stages, accesses and ownership.
    pub scopes: Scopes,
    /// Layout before.
    pub old_layout: vk::ImageLayout,
    /// Layout after.
    pub new_layout: vk::ImageLayout,
}

/// One buffer memory barrier.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access, BufferRange, SubRange};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
/// #     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
/// #     passes: vec![
/// #         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
/// #         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
/// #             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
/// #     ],
/// # };
/// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
/// let plan = plan(&input).unwrap();
/// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[1] else { unreachable!() };
/// assert_eq!(b.buffers[0].resource, 0);
/// assert_eq!(b.buffers[0].range.bytes(), 0..64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferBarrier {
    /// Index into [`PlanInput::resources`].
    pub resource: usize,
    /// The bytes.
    pub range: BufferRange,
    /// Stages, accesses and ownership.
    pub scopes: Scopes,
}

impl Plan {
    /// Total barrier commands over all queues.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // Compute: UNDEFINED -> GENERAL, then the release; graphics: the acquire.
    /// assert_eq!(plan.barrier_commands(), 3);
    /// ```
    pub fn barrier_commands(&self) -> usize {
        self.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.commands)
            .filter(|c| matches!(c, Command::Barrier(_)))
            .count()
    }

    /// Total semaphore waits over all queues.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // Only graphics waits (for compute's release).
    /// assert_eq!(plan.semaphore_waits(), 1);
    /// ```
    pub fn semaphore_waits(&self) -> usize {
        self.queues
            .iter()
            .flat_map(|q| &q.batches)
            .map(|b| b.waits.len())
            .sum()
    }

    /// Total batches over all queues.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // One batch on each queue.
    /// assert_eq!(plan.batch_count(), 2);
    /// ```
    pub fn batch_count(&self) -> usize {
        self.queues.iter().map(|q| q.batches.len()).sum()
    }
}

/// The timeline values one execution of a plan signals, per queue and batch.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
/// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
/// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
/// #     passes: vec![
/// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
/// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
/// #     ],
/// # };
/// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
/// let plan = plan(&input).unwrap();
/// let values = plan.assign_values(&mut [0, 0]);
/// assert_eq!(values, TimelineValues {
///     start: vec![0, 0],
///     per_batch: vec![vec![Some(1)], vec![Some(1)]],
///     last: vec![Some(1), Some(1)],
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineValues {
    /// Per queue: the highest value its timeline had been given before this execution. A wait
    /// for a value at or below it is satisfied by work submitted before this execution (an
    /// earlier graph, or the app's own submit).
    pub start: Vec<u64>,
    /// `per_batch[q][b]`: the value batch `b` of queue `q` signals, if it signals.
    pub per_batch: Vec<Vec<Option<u64>>>,
    /// Per queue: the last value this execution signals there (`None`: no work there).
    pub last: Vec<Option<u64>>,
}

impl Plan {
    /// Gives every signalling batch the next value of its queue's timeline. `last_signalled[q]`
    /// is the highest value queue `q`'s timeline has been given so far; it is advanced.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // The compute timeline is at 10 and the graphics one at 20 from earlier executions.
    /// let mut last = [10, 20];
    /// let values = plan.assign_values(&mut last);
    /// assert_eq!(values.per_batch, vec![vec![Some(11)], vec![Some(21)]]);
    /// assert_eq!(last, [11, 21]);
    /// ```
    pub fn assign_values(&self, last_signalled: &mut [u64]) -> TimelineValues {
        let start = last_signalled.to_vec();
        let mut per_batch = Vec::with_capacity(self.queues.len());
        let mut last = Vec::with_capacity(self.queues.len());
        for (q, qp) in self.queues.iter().enumerate() {
            let mut vals = Vec::with_capacity(qp.batches.len());
            let mut l = None;
            for b in &qp.batches {
                if b.signal.is_some() {
                    last_signalled[q] += 1;
                    l = Some(last_signalled[q]);
                    vals.push(l);
                } else {
                    vals.push(None);
                }
            }
            per_batch.push(vals);
            last.push(l);
        }
        TimelineValues {
            start,
            per_batch,
            last,
        }
    }

    /// The value a wait waits for, given this execution's values.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// let values = plan.assign_values(&mut [10, 20]);
    /// let wait = plan.queues[1].batches[0].waits[0];
    /// // Graphics waits for the compute batch's value.
    /// assert_eq!(plan.wait_value(wait.target, &values), Some(11));
    /// ```
    pub fn wait_value(&self, target: WaitTarget, values: &TimelineValues) -> Option<u64> {
        match target {
            WaitTarget::Batch { queue, batch } => values.per_batch[queue][batch],
            WaitTarget::Value { value, .. } => Some(value),
            WaitTarget::Binary(_) => None,
        }
    }

    /// The final states with "this execution" filled in with each queue's last value: the
    /// state to plan the next graph from.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // Left open in the plan: "this execution's last value on graphics".
    /// assert_eq!(plan.final_states[0][0].1.write.unwrap().value, None);
    /// let values = plan.assign_values(&mut [10, 20]);
    /// let next = plan.resolved_final_states(&values);
    /// assert_eq!(next[0][0].1.write.unwrap().value, Some(21));
    /// ```
    pub fn resolved_final_states(
        &self,
        values: &TimelineValues,
    ) -> Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>> {
        self.final_states
            .iter()
            .map(|segs| {
                segs.iter()
                    .map(|(c, s)| {
                        let mut s = s.clone();
                        for r in s.write.iter_mut().chain(s.reads.iter_mut()) {
                            if r.value.is_none() {
                                r.value = Some(values.last[r.queue].unwrap_or(0));
                            }
                        }
                        (c.clone(), s)
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_host_present;
#[cfg(test)]
mod tests_queues;
