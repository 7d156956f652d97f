//! The planner's output: per queue, batches of semaphore waits, barrier commands and
//! passes, and semaphore signals.
//!
//! Also here: what a [`Schedule`] did to a plan (the passes it culled and those it moved
//! before others: [`Plan::culled`], [`Plan::moved_before`]), and where the plan puts its
//! transients ([`TransientPlan`]; see the [`transient` module](crate::plan::transient)).

use super::schedule::Schedule;
use super::{PlanInput, SegmentState};
use crate::range::{BufferRange, ImageRange};
use ash::vk;

/// The planner's answer: per queue, the batches to submit.
///
/// See the [module example](crate::plan). The default is the empty plan, which submits
/// nothing.
#[derive(Clone, Debug, Default)]
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
    /// [`Schedule`]. A pass missing here was culled and is never recorded.
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
    /// Why the planner put it here; `None` in a barrier made by hand.
    pub cause: Option<Cause>,
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
    /// Why the planner put it here; `None` in a barrier made by hand.
    pub cause: Option<Cause>,
}

/// Why a barrier entry is there: the use it makes ready, and the earlier access it orders that
/// use after. An entry that serves several uses (joined with others on the same range) names
/// the first.
///
/// For a release, `pass` is the pass whose acquire needs it, on the other family's queue.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
///     resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::STORAGE_BUFFER)],
///     passes: vec![
///         PassDecl::new("write", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
///         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)),
///     ],
/// };
/// let plan = plan(&input).unwrap();
/// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[1] else { panic!() };
/// // The barrier before `read` is there because `write` wrote the buffer.
/// assert_eq!(b.buffers[0].cause, Some(Cause { pass: 1, after: Prior::Pass(0) }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause {
    /// The pass whose use the entry prepares (index into [`PlanInput::passes`]).
    pub pass: usize,
    /// What it orders that use after.
    pub after: Prior,
}

/// The access a barrier entry orders a use after ([`Cause::after`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prior {
    /// Nothing: the first use of contents that start here (a transition from the initial
    /// layout, or an ownership transfer of contents no queue of this plan touched).
    Nothing,
    /// A pass of this plan (index into [`PlanInput::passes`]).
    Pass(usize),
    /// The swapchain acquire (or other binary semaphore) that pass `0` waits on.
    BinaryWait(usize),
    /// A pass of this plan that used the memory before this transient took it (aliasing).
    SharedMemory(usize),
    /// Work of an earlier execution on a queue (index into [`PlanInput::queues`]).
    EarlierExecution {
        /// The queue.
        queue: usize,
    },
}

// What a schedule did to the plan.
impl Plan {
    /// The passes culled: in [`Plan::input`] but not in [`Plan::order`], in program order.
    ///
    /// See [`Schedule::with_culling`](crate::plan::Schedule::with_culling).
    pub fn culled(&self) -> Vec<usize> {
        let mut taken = vec![false; self.input.passes.len()];
        for &i in &self.order {
            if let Some(t) = taken.get_mut(i) {
                *t = true;
            }
        }
        (0..taken.len()).filter(|&i| !taken[i]).collect()
    }

    /// Per pass, the earliest pass inserted before it that it now comes before (what the
    /// printout calls "moved before"); `None` for passes that kept their place, or were culled.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("a", 64, usage), ResourceDecl::buffer("b", 64, usage)],
    ///     passes: vec![
    ///         PassDecl::new("write a", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("read a", 0).with_use(UseDecl::new(0, Access::TRANSFER_READ)),
    ///         PassDecl::new("write b", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
    ///     ],
    /// };
    /// // Without the fallback: moving `write b` saves no barrier, so `REORDER` keeps program
    /// // order.
    /// let p = plan_scheduled(&input, Schedule::REORDER.without_fallback()).unwrap();
    /// // `write b` depends on nothing: it joins `write a` before the barrier `read a` needs.
    /// assert_eq!(p.order, [0, 2, 1]);
    /// assert_eq!(p.moved_before(), [None, None, Some(1)]);
    /// ```
    pub fn moved_before(&self) -> Vec<Option<usize>> {
        let n = self.input.passes.len();
        let mut rank = vec![usize::MAX; n];
        for (k, &i) in self.order.iter().enumerate() {
            if let Some(r) = rank.get_mut(i) {
                *r = k;
            }
        }
        (0..n)
            .map(|i| {
                if rank[i] == usize::MAX {
                    return None;
                }
                (0..i).find(|&j| rank[j] != usize::MAX && rank[j] > rank[i])
            })
            .collect()
    }
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

    /// Every image barrier of the plan, queue after queue, each queue's in recording order:
    /// to check its layouts or its ownership transfers.
    ///
    /// ```
    /// use vk_baton::ash::vk::{ImageLayout as L, ImageUsageFlags as U, QueueFlags as Q};
    /// use vk_baton::plan::*;
    /// use vk_baton::Access;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("graphics", 0, Q::GRAPHICS | Q::COMPUTE)],
    ///     resources: vec![ResourceDecl::image("lit", 1, 1, U::STORAGE | U::SAMPLED)],
    ///     passes: vec![
    ///         PassDecl::new("light", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    ///         PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    ///     ],
    /// };
    /// let p = plan(&input)?;
    /// let layouts: Vec<_> = p.image_barriers().map(|b| (b.old_layout, b.new_layout)).collect();
    /// assert_eq!(layouts, [(L::UNDEFINED, L::GENERAL), (L::GENERAL, L::SHADER_READ_ONLY_OPTIMAL)]);
    /// # Ok::<(), vk_baton::Error>(())
    /// ```
    pub fn image_barriers(&self) -> impl Iterator<Item = &ImageBarrier> + Clone + '_ {
        let commands = self.queues.iter().flat_map(|q| &q.batches);
        let barriers = commands.flat_map(|b| &b.commands).filter_map(|c| match c {
            Command::Barrier(b) => Some(b),
            Command::Pass(_) => None,
        });
        barriers.flat_map(|b| &b.images)
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

/// Where the plan puts its transients: heaps to allocate and an offset in one for each.
///
/// The executor allocates each heap (`size` bytes of a memory type among
/// `memory_type_bits`, aligned to `alignment`), binds each transient at its placement and
/// records the plan, whose barriers and semaphores already order every transient after the
/// ones whose memory it reuses. The memory belongs to one execution: it may serve another only
/// once that execution's fence has signalled.
///
/// See the [module example](crate::plan::transient).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransientPlan {
    /// The heaps, each one allocation.
    pub heaps: Vec<TransientHeap>,
    /// One per transient that a pass uses, in resource order.
    pub placements: Vec<TransientPlacement>,
    /// The memory without aliasing: the sum of the placed transients' sizes.
    pub unaliased_size: u64,
    /// The live-set lower bound: the largest sum of sizes of transients that are pairwise
    /// unordered (no use of one happens-before every use of the other, counting every chain of
    /// semaphores and submission order in the plan). Those need disjoint memory in any
    /// placement that keeps this plan's order, so no such placement needs less. Alignment
    /// padding is not counted: the bound is exact for sizes that are multiples of their
    /// alignment, as drivers report them.
    pub lower_bound: u64,
}

/// One memory allocation that transients are bound into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransientHeap {
    /// Bytes.
    pub size: u64,
    /// The largest alignment of the transients in it.
    pub alignment: u64,
    /// The memory types every transient in it accepts (never empty).
    pub memory_type_bits: u32,
}

/// Where one transient's memory is, and when it is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransientPlacement {
    /// Index into [`PlanInput::resources`](crate::plan::PlanInput::resources).
    pub resource: usize,
    /// Index into [`TransientPlan::heaps`].
    pub heap: usize,
    /// Byte offset in the heap (a multiple of the transient's alignment).
    pub offset: u64,
    /// Bytes, from [`TransientMemory::size`](crate::plan::TransientMemory::size).
    pub size: u64,
    /// Its first use, which writes all of it.
    pub first_use: UseSite,
    /// Its last use on each queue that uses it, in queue order.
    pub last_uses: Vec<UseSite>,
    /// The transients whose memory (under this one's) it reuses and whose last uses its first
    /// use is ordered after. An earlier transient wholly covered by a later one in that list
    /// is left out: ordering after the later one orders after both.
    pub after: Vec<usize>,
}

/// Where a pass is recorded in the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UseSite {
    /// Index into [`PlanInput::passes`](crate::plan::PlanInput::passes).
    pub pass: usize,
    /// Index into [`Plan::queues`](crate::plan::Plan::queues).
    pub queue: usize,
    /// Batch index on that queue.
    pub batch: usize,
    /// Index into that batch's commands.
    pub command: usize,
}

impl TransientPlan {
    /// The memory all heaps take.
    pub fn total_size(&self) -> u64 {
        self.heaps.iter().map(|h| h.size).sum()
    }

    /// The placement of resource `r`, if it is a transient that a pass uses.
    pub fn placement(&self, r: usize) -> Option<&TransientPlacement> {
        self.placements.iter().find(|p| p.resource == r)
    }
}
