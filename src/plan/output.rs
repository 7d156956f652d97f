//! The planner's output: per queue, batches of semaphore waits, barrier commands and
//! passes, and semaphore signals.

mod order;
mod transients;
pub use transients::{TransientHeap, TransientPlacement, TransientPlan, UseSite};

use super::schedule::Schedule;
use super::{PlanInput, SegmentState};
use crate::range::{BufferRange, ImageRange};
use ash::vk;

/// The planner's answer: per queue, the batches to submit.
///
/// See the [module example](crate::plan).
#[derive(Clone, Debug)]
pub struct Plan {
    /// The declarations this plan was made from.
    pub input: PlanInput,
    /// One entry per [`PlanInput::queues`] entry, in the same order. A queue with no batch
    /// gets no submit.
    pub queues: Vec<QueuePlan>,
    /// Per resource, the state it is left in. `Recorded::value == None` means "this
    /// execution's final timeline value on that queue", filled in by the executor. A
    /// transient ends fresh: its contents do not outlive the execution.
    pub final_states: Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>>,
    /// Where the transients' memory is (empty without transients).
    pub transients: TransientPlan,
    /// The passes in the order the planner took them, as indices into [`PlanInput::passes`]:
    /// `0..n` in program order; another order (or fewer passes) under a
    /// [`Schedule`](super::Schedule). A pass missing here was culled and is never recorded.
    pub order: Vec<usize>,
    /// The schedule the plan was asked for: [`Schedule::PROGRAM_ORDER`](super::Schedule)
    /// from [`plan`](super::plan). A plan is reused for a later frame under the same schedule
    /// ([`Rebinder::rebind_scheduled`](super::Rebinder::rebind_scheduled)), and a plan that is
    /// not [`Plan::reordered`] nor culled also for program order (it is the program-order
    /// answer), so a program-order frame may run a plan whose `schedule` says `REORDER`.
    pub schedule: Schedule,
    /// Whether the passes were taken level by level and the batches regrouped: `false` in
    /// program order, and where [`Schedule::fallback`](super::Schedule::fallback) kept the
    /// program-order plan (then the plan is exactly what [`plan`](super::plan) answers).
    pub reordered: bool,
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
/// See the [module example](crate::plan).
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
/// See the [module example](crate::plan).
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
/// See the [`UseDecl::range`](crate::plan::UseDecl::range) example.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// One `vkCmdPipelineBarrier2`.
    Barrier(BarrierCmd),
    /// Record pass `n` (index into [`PlanInput::passes`]).
    Pass(usize),
}

/// The contents of one `vkCmdPipelineBarrier2`.
///
/// See the [`UseDecl::range`](crate::plan::UseDecl::range) example.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarrierCmd {
    /// Image memory barriers.
    pub images: Vec<ImageBarrier>,
    /// Buffer memory barriers.
    pub buffers: Vec<BufferBarrier>,
}

impl BarrierCmd {
    /// No barrier at all.
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.buffers.is_empty()
    }
}

/// Scopes shared by both barrier kinds.
///
/// See the [`UseDecl::range`](crate::plan::UseDecl::range) example.
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
/// See the [module example](crate::plan) for a release and its acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageBarrier {
    /// Index into [`PlanInput::resources`].
    pub resource: usize,
    /// The mip levels and layers.
    pub range: ImageRange,
    /// The aspects: every aspect of the format, or DEPTH or STENCIL alone where the two
    /// planes of a depth/stencil image are in different states
    /// ([`UseDecl::aspect`](super::UseDecl::aspect)).
    pub aspect: vk::ImageAspectFlags,
    /// Stages, accesses and ownership.
    pub scopes: Scopes,
    /// Layout before.
    pub old_layout: vk::ImageLayout,
    /// Layout after.
    pub new_layout: vk::ImageLayout,
}

/// One buffer memory barrier.
///
/// See the [`UseDecl::range`](crate::plan::UseDecl::range) example.
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
    pub fn barrier_commands(&self) -> usize {
        self.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.commands)
            .filter(|c| matches!(c, Command::Barrier(_)))
            .count()
    }

    /// Total semaphore waits over all queues.
    pub fn semaphore_waits(&self) -> usize {
        self.queues
            .iter()
            .flat_map(|q| &q.batches)
            .map(|b| b.waits.len())
            .sum()
    }

    /// Total batches over all queues.
    pub fn batch_count(&self) -> usize {
        self.queues.iter().map(|q| q.batches.len()).sum()
    }
}
