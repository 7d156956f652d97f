//! The scratch an execution of a frame records and submits with ([`FrameScratch`]), kept
//! with the frame so that its next execution makes no heap allocation; its vectors whose
//! elements borrow are kept as [`Spare`]s.
//!
//! Here too is the plain data of recording: the pieces a batch is cut into, the jobs that
//! record them, and the per-frame lists that hold both.

use crate::extensions::Piece;
use crate::plan::{SubmissionRun, TimelineValues};
use crate::queue::QueueLock;
use crate::resource::TrackedGuard;
use crate::spare::{words, Spare};
use ash::vk;
use std::ops::Range;

/// The scratch of one execution, passed down by `&mut` through recording and submitting, and
/// kept with the frame for its next one: a frame like the last one allocates nothing.
#[derive(Default)]
pub(crate) struct FrameScratch {
    pub(crate) recording: RecordingLists,
    pub(crate) submit: SubmitScratch,
}

/// Scratch space of submitting, reused from one execution to the next. The
/// vectors whose elements borrow are kept `'static` and recast for each use
/// ([`crate::spare::recast`]).
#[derive(Default)]
pub(crate) struct SubmitScratch {
    pub(crate) order: Vec<usize>,
    pub(crate) last: Vec<u64>,
    pub(crate) values: Option<TimelineValues>,
    /// The plan's submission runs for the queue order `order`, when `runs_known`: computed
    /// at the plan's first execution, forgotten with the plan.
    pub(crate) runs: Vec<SubmissionRun>,
    pub(crate) runs_known: bool,
    pub(crate) runs_next: Vec<usize>,
    pub(crate) last_run: Vec<Option<usize>>,
    pub(crate) started: Vec<bool>,
    pub(crate) res_order: Vec<usize>,
    /// Per resource, the version the commit gave it ([`crate::prepared::AtRest`]).
    pub(crate) committed: Vec<u64>,
    pub(crate) queue_locks: Spare<{ words::<Option<QueueLock<'static>>>() }>,
    pub(crate) state_locks: Spare<{ words::<Option<TrackedGuard<'static>>>() }>,
    /// The submit structs that borrow nothing (their `pNext` is always null).
    pub(crate) waits: Vec<vk::SemaphoreSubmitInfo<'static>>,
    pub(crate) signals: Vec<vk::SemaphoreSubmitInfo<'static>>,
    pub(crate) cbs: Vec<vk::CommandBufferSubmitInfo<'static>>,
    pub(crate) submits: Spare<{ words::<vk::SubmitInfo2<'static>>() }>,
}

/// A piece with its command buffer, ready to record.
pub(crate) struct Job {
    pub(crate) queue: usize,
    pub(crate) batch: usize,
    pub(crate) commands: Range<usize>,
    /// The thread that records it (0 without recording threads).
    pub(crate) thread: usize,
    pub(crate) cmd: vk::CommandBuffer,
    /// For the batch's first piece: what the extensions' `time_batch` gave the batch (the
    /// timestamp queries the piece resets, without host reset).
    pub(crate) reset: Option<Range<u32>>,
}

/// The per-frame lists of recording.
#[derive(Default)]
pub(crate) struct RecordingLists {
    pub(crate) pieces: Vec<Piece>,
    /// Per batch of every queue, in queue order: where its pieces end in `pieces`.
    pub(crate) piece_ends: Vec<usize>,
    pub(crate) jobs: Vec<Job>,
    /// The tables a recording fills (`Recording`'s), lent to it and given back.
    pub(crate) tables: BatchTables,
}

/// Where each queue's batches and their command buffers are in a recording.
#[derive(Default)]
pub(crate) struct BatchTables {
    /// Per queue, the fence its last submit signals (None for a queue with no batch).
    pub(crate) queue_fences: Vec<Option<vk::Fence>>,
    /// Per queue, where its batches start in `batch_ends`.
    pub(crate) batch_start: Vec<usize>,
    /// Per batch of every queue, in queue order: where its command buffers end in
    /// `batch_cmds` (they start where the previous batch's end).
    pub(crate) batch_ends: Vec<usize>,
    /// The command buffers of every batch, in submission order: none for a batch without
    /// commands, one per piece otherwise.
    pub(crate) batch_cmds: Vec<vk::CommandBuffer>,
}

impl BatchTables {
    /// Empties the tables, keeping their allocations.
    pub(crate) fn clear(&mut self) {
        self.queue_fences.clear();
        self.batch_start.clear();
        self.batch_ends.clear();
        self.batch_cmds.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::PassEntry;

    /// Keeps `v` as a spare and takes it back: the same allocation.
    fn round_trip<T, const W: usize>(v: Vec<T>) -> bool {
        let (ptr, cap) = (v.as_ptr() as usize, v.capacity());
        let mut spare = Spare::<W>::keep(v);
        let back: Vec<T> = spare.take();
        back.as_ptr() as usize == ptr && back.capacity() == cap
    }

    /// Every element type kept as a [`Spare`] keeps its allocation: a frame like the last
    /// one allocates nothing.
    #[test]
    fn spares_keep_their_allocations() {
        macro_rules! kept {
            ($t:ty) => {{
                let v: Vec<$t> = Vec::with_capacity(5);
                assert!(round_trip::<$t, { words::<$t>() }>(v), stringify!($t));
            }};
        }
        kept!(PassEntry<'static>);
        kept!(Option<QueueLock<'static>>);
        kept!(Option<TrackedGuard<'static>>);
        kept!(vk::SubmitInfo2<'static>);
    }
}
