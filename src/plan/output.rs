//! The planner's output: per queue, batches of semaphore waits, barrier commands and
//! passes, and semaphore signals.

use super::{PlanInput, SegmentState};
use crate::range::{BufferRange, ImageRange};
use ash::vk;

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
