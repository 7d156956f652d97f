//! Emptied vectors and spent completion tokens, kept for the next execution so that a frame
//! like the last one makes no heap allocation.
//!
//! Each execution takes what it needs here and gives it back, emptied, when it is done (the
//! lists and scratch when it is submitted, what it kept alive once its fences signal). The
//! lists are bounded, so a burst of executions in flight does not keep memory for good.

use crate::completion::CompletionToken;
use crate::pass::PassEntry;
use crate::plan::{SubmissionRun, TimelineValues};
use crate::queue::{Queue, QueueLock};
use crate::resource::{Resource, Tracked};
use ash::vk;
use parking_lot::MutexGuard;
use std::any::Any;

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
/// or are Vulkan structs with raw pointers): it never holds an element, so it may be shared
/// between threads like plain memory.
pub(crate) struct EmptyVec<T>(Vec<Uninit<T>>);

/// `T`'s size and alignment, holding nothing.
#[repr(transparent)]
struct Uninit<T>(std::mem::MaybeUninit<T>);

// SAFETY: an `EmptyVec` never holds an element: `keep` empties the vector before taking its
// allocation and `take` hands out an empty vector. Only the allocation (plain memory, freed
// with the element layout it was allocated with) moves between threads.
unsafe impl<T> Send for EmptyVec<T> {}
// SAFETY: as for `Send`: there is no element to share.
unsafe impl<T> Sync for EmptyVec<T> {}

impl<T> Default for EmptyVec<T> {
    fn default() -> Self {
        EmptyVec(Vec::new())
    }
}

impl<T> EmptyVec<T> {
    /// Keeps `v`'s allocation, dropping its elements.
    pub(crate) fn keep<A>(v: Vec<A>) -> Self {
        EmptyVec(recast(v))
    }

    /// An empty vector with the kept allocation.
    pub(crate) fn take<B>(&mut self) -> Vec<B> {
        recast(std::mem::take(&mut self.0))
    }
}

/// What the executions of one graph hand back for the next one.
#[derive(Default)]
pub(crate) struct Spares {
    pub(crate) resources: Vec<Vec<Resource>>,
    pub(crate) queues: Vec<Vec<Queue>>,
    pub(crate) reached: Vec<Vec<u64>>,
    pub(crate) versions: Vec<Vec<u64>>,
    pub(crate) fences: Vec<Vec<vk::Fence>>,
    pub(crate) cmds: Vec<Vec<(super::PoolKey, vk::CommandBuffer)>>,
    pub(crate) keep: Vec<Vec<Box<dyn Any + Send + Sync>>>,
    /// The builder's pass list, emptied (its passes borrow; see [`recast`]).
    pub(crate) passes: EmptyVec<PassEntry<'static>>,
    pub(crate) queue_fences: Vec<Vec<Option<vk::Fence>>>,
    pub(crate) batch_start: Vec<Vec<usize>>,
    pub(crate) batch_ends: Vec<Vec<usize>>,
    pub(crate) batch_cmds: Vec<Vec<vk::CommandBuffer>>,
    /// The recording's barrier arrays.
    pub(crate) barriers: [EmptyVec<vk::MemoryBarrier2<'static>>; 3],
    /// Tokens of finished executions; one nobody else holds any more is reused.
    pub(crate) tokens: Vec<CompletionToken>,
    /// The submit path's scratch space.
    pub(crate) submit: Option<SubmitScratch>,
}

impl Spares {
    /// A token for a new execution: a spent one that only this list still holds, reset, or a
    /// new one.
    pub(crate) fn token(&mut self, device: &std::sync::Arc<ash::Device>) -> CompletionToken {
        if let Some(i) = self
            .tokens
            .iter_mut()
            .position(CompletionToken::reset_if_unique)
        {
            return self.tokens.swap_remove(i);
        }
        CompletionToken::new(device.clone())
    }

    /// Keeps a spent token for [`Spares::token`].
    pub(crate) fn give_token(&mut self, token: CompletionToken) {
        if self.tokens.len() < KEPT {
            self.tokens.push(token);
        }
    }
}

/// Scratch space of recording and submitting, reused from one execution to the next. The
/// vectors whose elements borrow are kept `'static` and [`recast`] for each use.
#[derive(Default)]
pub(crate) struct SubmitScratch {
    /// The semaphore waits submitted by the current execution so far.
    pub(crate) waits_submitted: usize,
    pub(crate) order: Vec<usize>,
    pub(crate) last: Vec<u64>,
    pub(crate) values: Option<TimelineValues>,
    pub(crate) runs: Vec<SubmissionRun>,
    pub(crate) runs_next: Vec<usize>,
    pub(crate) last_run: Vec<Option<usize>>,
    pub(crate) started: Vec<bool>,
    pub(crate) res_order: Vec<usize>,
    pub(crate) queue_locks: EmptyVec<Option<QueueLock<'static>>>,
    pub(crate) state_locks: EmptyVec<Option<MutexGuard<'static, Tracked>>>,
    pub(crate) waits: EmptyVec<vk::SemaphoreSubmitInfo<'static>>,
    pub(crate) signals: EmptyVec<vk::SemaphoreSubmitInfo<'static>>,
    pub(crate) cbs: EmptyVec<vk::CommandBufferSubmitInfo<'static>>,
    pub(crate) submits: EmptyVec<vk::SubmitInfo2<'static>>,
}

/// The arrays of one `VkDependencyInfo`, kept between commands so that recording a barrier
/// allocates nothing once they have grown.
#[derive(Default)]
pub(crate) struct BarrierScratch {
    pub(crate) memory: Vec<vk::MemoryBarrier2<'static>>,
    pub(crate) images: Vec<vk::ImageMemoryBarrier2<'static>>,
    pub(crate) buffers: Vec<vk::BufferMemoryBarrier2<'static>>,
}

impl BarrierScratch {
    /// The arrays the graph kept.
    pub(crate) fn from_spares(kept: &mut [EmptyVec<vk::MemoryBarrier2<'static>>; 3]) -> Self {
        BarrierScratch {
            memory: kept[0].take(),
            images: kept[1].take(),
            buffers: kept[2].take(),
        }
    }

    /// Gives the arrays back to the graph.
    pub(crate) fn into_spares(self, kept: &mut [EmptyVec<vk::MemoryBarrier2<'static>>; 3]) {
        *kept = [
            EmptyVec::keep(self.memory),
            EmptyVec::keep(self.images),
            EmptyVec::keep(self.buffers),
        ];
    }
}
