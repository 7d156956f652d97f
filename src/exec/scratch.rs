//! The scratch one execution records and submits with ([`FrameScratch`]), kept for the
//! next one so that a frame like the last one makes no heap allocation; its vectors whose
//! elements borrow are kept as [`Spare`]s.
//!
//! Here too is the plain data of recording: the pieces a batch is cut into, the jobs that
//! record them, and the per-frame lists that hold both.

use crate::extensions::Piece;
use crate::plan::{SubmissionRun, TimelineValues};
use crate::queue::QueueLock;
use crate::resource::Tracked;
use crate::spare::{words, Spare};
use ash::vk;
use parking_lot::MutexGuard;
use std::ops::Range;

/// The scratch of one execution, passed down by `&mut` through recording and submitting, and
/// kept by the graph for the next one: a frame like the last one allocates nothing.
#[derive(Default)]
pub(crate) struct FrameScratch {
    pub(super) recording: RecordingLists,
    pub(super) submit: SubmitScratch,
}

/// Scratch space of submitting, reused from one execution to the next. The
/// vectors whose elements borrow are kept `'static` and recast for each use
/// ([`crate::spare::recast`]).
#[derive(Default)]
pub(crate) struct SubmitScratch {
    pub(super) order: Vec<usize>,
    pub(super) last: Vec<u64>,
    pub(super) values: Option<TimelineValues>,
    pub(super) runs: Vec<SubmissionRun>,
    pub(super) runs_next: Vec<usize>,
    pub(super) last_run: Vec<Option<usize>>,
    pub(super) started: Vec<bool>,
    pub(super) res_order: Vec<usize>,
    /// Per resource, the version the commit gave it ([`crate::prepared::AtRest`]).
    pub(super) committed: Vec<u64>,
    pub(super) queue_locks: Spare<{ words::<Option<QueueLock<'static>>>() }>,
    pub(super) state_locks: Spare<{ words::<Option<MutexGuard<'static, Tracked>>>() }>,
    pub(super) waits: Spare<{ words::<vk::SemaphoreSubmitInfo<'static>>() }>,
    pub(super) signals: Spare<{ words::<vk::SemaphoreSubmitInfo<'static>>() }>,
    pub(super) cbs: Spare<{ words::<vk::CommandBufferSubmitInfo<'static>>() }>,
    pub(super) submits: Spare<{ words::<vk::SubmitInfo2<'static>>() }>,
}

/// A piece with its command buffer, ready to record.
pub(crate) struct Job {
    pub(super) queue: usize,
    pub(super) batch: usize,
    pub(super) commands: Range<usize>,
    /// The thread that records it (0 without recording threads).
    pub(super) thread: usize,
    pub(super) cmd: vk::CommandBuffer,
    /// For the batch's first piece: what the extensions' `time_batch` gave the batch (the
    /// timestamp queries the piece resets, without host reset).
    pub(super) reset: Option<Range<u32>>,
}

/// The per-frame lists of recording, kept in the graph's spares.
#[derive(Default)]
pub(crate) struct RecordingLists {
    pub(super) pieces: Vec<Piece>,
    /// Per batch of every queue, in queue order: where its pieces end in `pieces`.
    pub(super) piece_ends: Vec<usize>,
    pub(super) jobs: Vec<Job>,
    /// The tables a recording fills (`Recording`'s), lent to it and given back.
    pub(super) tables: BatchTables,
}

/// Where each queue's batches and their command buffers are in a recording.
#[derive(Default)]
pub(crate) struct BatchTables {
    /// Per queue, the fence its last submit signals (None for a queue with no batch).
    pub(super) queue_fences: Vec<Option<vk::Fence>>,
    /// Per queue, where its batches start in `batch_ends`.
    pub(super) batch_start: Vec<usize>,
    /// Per batch of every queue, in queue order: where its command buffers end in
    /// `batch_cmds` (they start where the previous batch's end).
    pub(super) batch_ends: Vec<usize>,
    /// The command buffers of every batch, in submission order: none for a batch without
    /// commands, one per piece otherwise.
    pub(super) batch_cmds: Vec<vk::CommandBuffer>,
}

impl BatchTables {
    /// Empties the tables, keeping their allocations.
    pub(super) fn clear(&mut self) {
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
        kept!(Option<MutexGuard<'static, Tracked>>);
        kept!(vk::SemaphoreSubmitInfo<'static>);
        kept!(vk::CommandBufferSubmitInfo<'static>);
        kept!(vk::SubmitInfo2<'static>);
    }
}
