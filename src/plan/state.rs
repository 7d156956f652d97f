//! The tracked state of one segment of a resource (a run of image cells or buffer bytes).
//!
//! It is what rule 8 of the contract needs to carry across graphs: the layout, whether the
//! contents mean anything, the owning family, and the last write plus the reads since, each
//! with the queue and timeline value to wait on and the stages and accesses to chain from.

use ash::vk;

/// One access remembered for later synchronization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded<Q> {
    /// The queue it ran on.
    pub queue: Q,
    /// The queue's timeline value that is signalled once it is done. `None` inside a plan's
    /// final state means "this execution's last value on that queue". `Some(0)` means nothing
    /// to wait for (the app synchronized its own work).
    pub value: Option<u64>,
    /// Its pipeline stages.
    pub stages: vk::PipelineStageFlags2,
    /// Its access flags (for a write, the ones a later barrier must make available).
    pub access: vk::AccessFlags2,
}

/// The state of one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentState<Q> {
    /// Current image layout (`UNDEFINED` for buffers and fresh images).
    pub layout: vk::ImageLayout,
    /// Whether the contents mean anything. Undefined contents need no ownership transfer.
    pub defined: bool,
    /// The queue family that owns an EXCLUSIVE resource, if any has used it.
    pub owner: Option<u32>,
    /// The last write (or layout transition / ownership transfer, which count as writes).
    pub write: Option<Recorded<Q>>,
    /// Reads since that write, at most one entry per queue.
    pub reads: Vec<Recorded<Q>>,
}

impl<Q> Default for SegmentState<Q> {
    fn default() -> Self {
        Self {
            layout: vk::ImageLayout::UNDEFINED,
            defined: false,
            owner: None,
            write: None,
            reads: Vec::new(),
        }
    }
}

impl<Q: Copy> SegmentState<Q> {
    /// A segment the app hands over: its contents are defined, it is in `layout`, owned by
    /// `owner`, and was last written by `stages`/`access` on `queue` (its own work, already
    /// ordered by submission order or the app's own semaphores, so nothing is waited on).
    pub fn handed_over(
        layout: vk::ImageLayout,
        owner: Option<u32>,
        last: Option<(Q, vk::PipelineStageFlags2, vk::AccessFlags2)>,
    ) -> Self {
        Self {
            layout,
            defined: true,
            owner,
            write: last.map(|(queue, stages, access)| Recorded {
                queue,
                value: Some(0),
                stages,
                access,
            }),
            reads: Vec::new(),
        }
    }

    /// The same state with every queue mapped through `f`.
    pub fn map_queue<R>(&self, mut f: impl FnMut(Q) -> R) -> SegmentState<R> {
        let mut m = |r: &Recorded<Q>| Recorded {
            queue: f(r.queue),
            value: r.value,
            stages: r.stages,
            access: r.access,
        };
        SegmentState {
            layout: self.layout,
            defined: self.defined,
            owner: self.owner,
            write: self.write.as_ref().map(&mut m),
            reads: self.reads.iter().map(m).collect(),
        }
    }
}
