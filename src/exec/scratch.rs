//! Emptied vectors and spent completion tokens, kept for the next execution so that a frame
//! like the last one makes no heap allocation.
//!
//! Each execution takes what it needs here and gives it back, emptied, when it is done (the
//! lists and scratch when it is submitted, what it kept alive once its fences signal). The
//! lists are bounded, so a burst of executions in flight does not keep memory for good.
//!
//! Here too is the plain data of recording: the pieces a batch is cut into, the jobs that
//! record them, and the per-frame lists that hold both.

use crate::completion::CompletionToken;
use crate::extensions::Piece;
use crate::plan::{SubmissionRun, TimelineValues};
use crate::queue::{Queue, QueueLock};
use crate::resource::{Resource, Tracked};
use ash::vk;
use parking_lot::MutexGuard;
use std::any::Any;
use std::ops::Range;

/// How many emptied vectors of one kind are kept: one per execution in flight is enough for
/// a frame loop; more only holds memory.
const KEPT: usize = 8;

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

/// What the executions of one graph hand back for the next one.
#[derive(Default)]
pub(crate) struct Spares {
    pub(super) resources: Vec<Vec<Resource>>,
    pub(super) queues: Vec<Vec<Queue>>,
    pub(super) reached: Vec<Vec<u64>>,
    pub(super) fences: Vec<Vec<vk::Fence>>,
    pub(super) cmds: Vec<Vec<(super::PoolKey, vk::CommandBuffer)>>,
    pub(super) keep: Vec<Vec<Box<dyn Any + Send + Sync>>>,
    pub(super) queue_fences: Vec<Vec<Option<vk::Fence>>>,
    pub(super) batch_start: Vec<Vec<usize>>,
    pub(super) batch_ends: Vec<Vec<usize>>,
    pub(super) batch_cmds: Vec<Vec<vk::CommandBuffer>>,
    /// Tokens of finished executions; one nobody else holds any more is reused.
    pub(super) tokens: Vec<CompletionToken>,
    /// The scratch of recording and submitting, lent to one execution at a time (boxed: it
    /// moves out and back every frame).
    pub(super) frame: Option<Box<FrameScratch>>,
}

impl Spares {
    /// A token for a new execution: a spent one that only this list still holds, reset, or a
    /// new one.
    pub(super) fn token(&mut self, device: &std::sync::Arc<ash::Device>) -> CompletionToken {
        if let Some(i) = self
            .tokens
            .iter_mut()
            .position(CompletionToken::reset_if_unique)
        {
            return self.tokens.swap_remove(i);
        }
        CompletionToken::new(device.clone())
    }

    /// What an execution records and submits with: a token, the frame scratch, the list its
    /// fence will report reached values in, and the lists its fence keeps the resources and
    /// queues alive in. Taken under one lock; the scratch goes back with
    /// [`Spares::keep_frame`], the lists once the fence is done.
    #[allow(clippy::type_complexity)]
    pub(super) fn start_frame(
        &mut self,
        device: &std::sync::Arc<ash::Device>,
    ) -> (
        CompletionToken,
        Box<FrameScratch>,
        Vec<u64>,
        (Vec<Resource>, Vec<Queue>),
    ) {
        let lists = (take(&mut self.resources), take(&mut self.queues));
        let frame = self.frame.take().unwrap_or_default();
        (self.token(device), frame, take(&mut self.reached), lists)
    }

    /// Keeps an execution's frame scratch for the next one.
    pub(super) fn keep_frame(&mut self, frame: Box<FrameScratch>) {
        self.frame = Some(frame);
    }

    /// Keeps a spent token for [`Spares::token`].
    pub(super) fn give_token(&mut self, token: CompletionToken) {
        if self.tokens.len() < KEPT {
            self.tokens.push(token);
        }
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
