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
mod state;

pub use planner::{plan, plan_owned};
pub use state::{Recorded, SegmentState};

use crate::access::Access;
use crate::range::{BufferRange, ImageRange, SubRange};
use ash::vk;

// ---------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------

/// Everything the planner needs: the queues, the resources (with the state earlier graphs left
/// them in) and the passes in program order.
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
    pub fn new(name: &str, family: u32, caps: vk::QueueFlags) -> Self {
        Self {
            name: name.into(),
            family,
            caps,
        }
    }
}

/// What kind of resource, and its extent in state-tracking cells.
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
    pub fn concurrent(mut self) -> Self {
        self.concurrent = true;
        self
    }

    /// The same resource, starting in `state` everywhere.
    pub fn with_state(mut self, state: SegmentState<usize>) -> Self {
        self.initial = vec![(0..self.kind.cells(), state)];
        self
    }
}

impl ResourceKind {
    /// Number of tracking cells: mips × layers for images, bytes for buffers.
    pub fn cells(&self) -> u64 {
        match *self {
            Self::Image { mips, layers, .. } => mips as u64 * layers as u64,
            Self::Buffer { size, .. } => size,
        }
    }

    /// The whole resource as a range.
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
    pub fn new(resource: usize, access: Access) -> Self {
        Self {
            resource,
            access,
            range: None,
            discard: false,
        }
    }
    /// The same use, limited to `range`.
    pub fn range(mut self, range: SubRange) -> Self {
        self.range = Some(range);
        self
    }
    /// The same use, promising to overwrite the whole range.
    pub fn discard(mut self) -> Self {
        self.discard = true;
        self
    }
}

/// A binary semaphore a pass waits on (swapchain acquire, external producers).
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinarySignalDecl {
    /// The semaphore.
    pub semaphore: vk::Semaphore,
    /// An explicit stage mask; `None` uses the stages of the pass's own uses (for present:
    /// the stages that made the image ready).
    pub stages: Option<vk::PipelineStageFlags2>,
}

/// A pass as the planner sees it.
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

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/// The planner's answer: per queue, the batches to submit.
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
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueuePlan {
    /// In submission order.
    pub batches: Vec<Batch>,
}

/// One `VkSubmitInfo2`.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// What is waited on.
    pub target: WaitTarget,
    /// The second synchronization scope: stages of this batch (and later work) that wait.
    pub stages: vk::PipelineStageFlags2,
}

/// The semaphore of a [`Wait`].
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
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// One `vkCmdPipelineBarrier2`.
    Barrier(BarrierCmd),
    /// Record pass `n` (index into [`PlanInput::passes`]).
    Pass(usize),
}

/// The contents of one `vkCmdPipelineBarrier2`.
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

/// The timeline values one execution of a plan signals, per queue and batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineValues {
    /// `per_batch[q][b]`: the value batch `b` of queue `q` signals, if it signals.
    pub per_batch: Vec<Vec<Option<u64>>>,
    /// Per queue: the last value this execution signals there (`None`: no work there).
    pub last: Vec<Option<u64>>,
}

impl Plan {
    /// Gives every signalling batch the next value of its queue's timeline. `last_signalled[q]`
    /// is the highest value queue `q`'s timeline has been given so far; it is advanced.
    pub fn assign_values(&self, last_signalled: &mut [u64]) -> TimelineValues {
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
        TimelineValues { per_batch, last }
    }

    /// The value a wait waits for, given this execution's values.
    pub fn wait_value(&self, target: WaitTarget, values: &TimelineValues) -> Option<u64> {
        match target {
            WaitTarget::Batch { queue, batch } => values.per_batch[queue][batch],
            WaitTarget::Value { value, .. } => Some(value),
            WaitTarget::Binary(_) => None,
        }
    }

    /// The final states with "this execution" filled in with each queue's last value: the
    /// state to plan the next graph from.
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
