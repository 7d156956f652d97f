//! Emptied vectors kept for the next execution so that a frame like the last one makes no
//! heap allocation: [`take`] and [`give`] for the graph's spare lists (`pools::Spares`),
//! [`Spare`] for the vectors whose elements borrow, and the scratch one execution records
//! and submits with ([`FrameScratch`]). The spare lists are bounded, so a burst of
//! executions in flight does not keep memory for good.
//!
//! Here too is the plain data of recording: the pieces a batch is cut into, the jobs that
//! record them, and the per-frame lists that hold both.

use crate::extensions::Piece;
use crate::plan::{SubmissionRun, TimelineValues};
use crate::queue::QueueLock;
use crate::resource::Tracked;
use ash::vk;
use parking_lot::MutexGuard;
use std::ops::Range;

/// How many emptied vectors of one kind are kept: one per execution in flight is enough for
/// a frame loop; more only holds memory.
pub(super) const KEPT: usize = 8;

/// Takes an emptied vector from `list`, or a new one.
pub(crate) fn take<T>(list: &mut Vec<Vec<T>>) -> Vec<T> {
    list.pop().unwrap_or_default()
}

/// Empties `v` and keeps it in `list` (unless `list` is full or `v` never allocated).
pub(crate) fn give<T>(list: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    v.clear();
    if v.capacity() > 0 && list.len() < KEPT {
        list.push(v);
    }
}

/// An emptied vector of `A` as an empty vector of `B`, keeping its allocation where the two
/// have the same size and alignment (the standard library collects in place then; otherwise
/// this allocates nothing either, and the old buffer is freed). For element types that
/// borrow: the lists are kept with `'static` and used with the borrow at hand.
pub(crate) fn recast<A, B>(mut v: Vec<A>) -> Vec<B> {
    v.clear();
    v.into_iter()
        .map(|_| -> B { unreachable!("empty") })
        .collect()
}

/// An emptied vector's allocation, kept for element types that are not `Send` (they borrow,
/// or hold locks): it is stored as a vector of `W` machine words per element, which is
/// `Send` and `Sync`, and never holds an element. [`recast`] moves the allocation between
/// the two element types, keeping it where size and alignment agree (see [`words`]).
pub(crate) struct Spare<const W: usize>(Vec<[usize; W]>);

/// How many machine words an element of `T` takes: the `W` of `T`'s [`Spare`]. The unit
/// test `spares_keep_their_allocations` checks that every kept type fills whole words with
/// the alignment of a word, so that no frame allocates.
pub(crate) const fn words<T>() -> usize {
    std::mem::size_of::<T>() / std::mem::size_of::<usize>()
}

impl<const W: usize> Default for Spare<W> {
    fn default() -> Self {
        Spare(Vec::new())
    }
}

impl<const W: usize> Spare<W> {
    /// Keeps `v`'s allocation, dropping its elements.
    pub(crate) fn keep<A>(v: Vec<A>) -> Self {
        Spare(recast(v))
    }

    /// An empty vector with the kept allocation.
    pub(crate) fn take<B>(&mut self) -> Vec<B> {
        recast(std::mem::take(&mut self.0))
    }
}

/// The scratch of one execution, passed down by `&mut` through recording and submitting, and
/// kept by the graph for the next one: a frame like the last one allocates nothing.
#[derive(Default)]
pub(crate) struct FrameScratch {
    pub(super) recording: RecordingLists,
    pub(super) submit: SubmitScratch,
}

/// Scratch space of submitting, reused from one execution to the next. The
/// vectors whose elements borrow are kept `'static` and [`recast`] for each use.
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
