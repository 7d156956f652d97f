//! Recording one execution on several threads ([`crate::Graph::set_recording_threads`]): the
//! `parallel-recording` feature, plugged into the executor as its [`ThreadHooks`] (installed
//! by the first call that sets the threads up).
//!
//! Passes inserted with [`crate::GraphBuilder::insert_send_pass`] or
//! [`crate::GraphBuilder::insert_send_fn`] are `Send` (a [`PassSlot`] kind). When an execution
//! starts recording, [`cut`] decides per batch which commands go into which piece and which
//! thread records it: a pure function of the batch's commands, which passes are `Send`, the
//! thread count and the fewest passes a thread gets. The executor then takes every command
//! buffer on the calling thread (each recording thread has its own command pool per family:
//! pools are externally synchronized), and [`spread`] records the pieces on the graph's
//! recording threads (a `rayon_core` pool, kept from one execution to the next, whose scope
//! lends them the execution's passes safely), the calling thread recording thread 0's pieces
//! meanwhile, each thread with the executor's one recording loop.
//!
//! Why separate primary command buffers rather than secondaries: a secondary must inherit the
//! render pass or dynamic rendering state it runs in, which a pass that begins its own
//! rendering cannot give, and a primary per piece needs nothing from its neighbours. A batch
//! submits its pieces' command buffers in order in one `VkSubmitInfo2`, and submission order
//! carries each barrier's scopes across command buffer boundaries, so the queue sees the same
//! dependencies as from one command buffer. A piece ends right after a pass, so barrier
//! commands stay with the pass they come before and no label straddles two pieces.

mod cut;
mod graph;
mod spread;

use crate::error::Result;
use crate::extensions::{Piece, SpreadWork, ThreadHooks};
use crate::pass::{Pass, PassEntry, PassSlot};
use crate::plan::Plan;
use std::any::Any;

/// The graph's part of recording threads: how executions spread their recording, and the
/// threads they spread it over. Kept with the command pools, locked while recording.
pub(crate) struct RecordingThreads {
    threads: usize,
    min_passes: usize,
    /// The threads that record beside the calling one, kept from one execution to the next
    /// (with the thread count they were made for): a driver sets up each new thread that
    /// records, which costs far more than recording a few passes.
    pool: Option<(usize, rayon_core::ThreadPool)>,
    /// The recording threads' emptied lists of objects to keep alive.
    spare_keeps: Vec<Vec<Box<dyn Any + Send + Sync>>>,
}

impl Default for RecordingThreads {
    fn default() -> Self {
        RecordingThreads {
            threads: 1,
            min_passes: crate::Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD,
            pool: None,
            spare_keeps: Vec::new(),
        }
    }
}

impl RecordingThreads {
    /// The pool of `threads - 1` recording threads, made the first time it is needed (and
    /// again when the count changes).
    fn pool(
        &mut self,
        threads: usize,
    ) -> std::result::Result<&rayon_core::ThreadPool, rayon_core::ThreadPoolBuildError> {
        let pool = match self.pool.take() {
            Some((n, pool)) if n == threads => pool,
            _ => rayon_core::ThreadPoolBuilder::new()
                .num_threads(threads.saturating_sub(1).max(1))
                .thread_name(|i| format!("vk-baton recording {}", i + 1))
                .build()?,
        };
        Ok(&self.pool.insert((threads, pool)).1)
    }
}

/// Recording threads in an execution: batches cut for them, then recorded on them.
impl ThreadHooks for RecordingThreads {
    fn cut(
        &self,
        plan: &Plan,
        passes: &[PassEntry<'_>],
        pieces: &mut Vec<Piece>,
        ends: &mut Vec<usize>,
    ) -> Option<usize> {
        cut::cut((self.threads, self.min_passes), plan, passes, pieces, ends)
    }

    fn record(
        &mut self,
        threads: usize,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()> {
        self.record_spread(threads, passes, work, keep)
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<'a> PassSlot<'a> {
    /// The pass, if it may be recorded on another thread.
    fn as_send(&mut self) -> Option<&mut (dyn Pass + Send + 'a)> {
        match self {
            PassSlot::BorrowedSend(p) => Some(&mut **p),
            PassSlot::OwnedSend(p) => Some(&mut **p),
            PassSlot::Borrowed(_) | PassSlot::Owned(_) => None,
        }
    }

    /// Whether the pass may be recorded on another thread.
    fn is_send(&self) -> bool {
        matches!(self, PassSlot::BorrowedSend(_) | PassSlot::OwnedSend(_))
    }
}

#[cfg(test)]
mod tests;
