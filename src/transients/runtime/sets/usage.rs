//! Which heap set an execution binds: a free one, a new one, or the oldest once it is done;
//! and who uses each set ([`Use`]), so that no wait lasts forever (the parent module's docs
//! say why a set can be lost).

use super::{HeapSet, HeapSets, MAX_SETS};
use crate::completion::CompletionToken;
use crate::error::{Error, Result};
use std::time::{Duration, Instant};

/// How long binding waits for a busy set by default before it fails with
/// [`Error::TransientSetsBusy`]: far beyond any frame, so only work that never finishes (GPU
/// work waiting on a semaphore nobody signals) gets there.
pub(super) const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Who uses a heap set.
#[derive(Default)]
pub(super) enum Use {
    /// Nobody: it may be bound.
    #[default]
    Free,
    /// The last execution bound to it, until its token is seen complete.
    Busy(CompletionToken),
    /// An execution that failed without completing (some of it may still run on the GPU), or
    /// whose completion could not be queried: never bound again, leaked when the graph drops.
    Lost,
}

/// What [`HeapSet::poll`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Free,
    Busy,
    Lost,
}

impl HeapSet {
    /// Whether no execution is using it (forgetting a completed one), and whether it is lost
    /// (turning a set whose execution failed without completing into a lost one). An error
    /// querying the fences (device loss) loses the set too, and is returned.
    pub(super) fn poll(&mut self) -> Result<Status> {
        let token = match &self.user {
            Use::Free => return Ok(Status::Free),
            Use::Lost => return Ok(Status::Lost),
            Use::Busy(token) => token,
        };
        // Read before polling: every path that fails a token after settling it completes it
        // first, so a token failed by now and not complete is failed for good.
        let failed = token.has_failed();
        match token.poll() {
            Ok(true) => {
                self.user = Use::Free;
                Ok(Status::Free)
            }
            Ok(false) if failed => {
                log::error!(
                    "transient heap set: its execution failed while the GPU may still use it; \
                     never binding it again, and leaking its {} heap(s)",
                    self.heaps.len()
                );
                self.user = Use::Lost;
                Ok(Status::Lost)
            }
            Ok(false) => Ok(Status::Busy),
            Err(e) => {
                // The error goes to the caller; this says what becomes of the set.
                log::debug!("transient heap set: {e}; never binding it again");
                self.user = Use::Lost;
                Err(e)
            }
        }
    }

    fn is_lost(&self) -> bool {
        matches!(self.user, Use::Lost)
    }
}

impl HeapSets {
    /// A set no execution uses: the one bound longest ago whose heaps fit, else any free one
    /// (longest ago first), else a new one,
    /// else (at [`MAX_SETS`] sets not lost) the one bound longest ago once it is done.
    ///
    /// Finite: each round either returns, or found the set it waited for lost, and the next
    /// round then makes a new set in its place; a wait lasts at most [`HeapSets::wait_limit`].
    pub(super) fn choose_set(&mut self) -> Result<usize> {
        let mut deadline = None;
        loop {
            if let Some(i) = self.free_set()? {
                return Ok(i);
            }
            if self.sets.iter().filter(|s| !s.is_lost()).count() < MAX_SETS {
                self.sets.push(HeapSet::default());
                return Ok(self.sets.len() - 1);
            }
            let oldest = (0..self.sets.len())
                .filter(|&i| !self.sets[i].is_lost())
                .min_by_key(|&i| self.sets[i].last_bound)
                .expect("MAX_SETS sets that are not lost");
            log::debug!("transients: every heap set is in use; waiting for the oldest");
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + self.wait_limit);
            if self.wait_for(oldest, deadline)? {
                return Ok(oldest);
            }
        }
    }

    /// The free set bound longest ago among those whose heaps fit, else among all free ones.
    /// Longest ago, not first: frames in flight then keep taking the sets in the same turn
    /// after a wait that freed every set, so each keeps meeting the set its recordings were
    /// made with ([`crate::Graph::set_replay`] keys them on the objects bound).
    ///
    /// Sets are polled oldest first and the search ends at the first free one that fits, so
    /// the sets of the frames still in flight, bound after it, are not polled: a poll of a
    /// busy set asks the driver for its fences' status. A newer set whose execution failed
    /// is found lost (and logged) once it is polled: when it is the oldest, or none fits.
    fn free_set(&mut self) -> Result<Option<usize>> {
        let mut free = None;
        let mut after = None;
        while let Some(i) = self.next_oldest(after) {
            after = Some((self.sets[i].last_bound, i));
            if self.sets[i].poll()? == Status::Free {
                if self.sets[i].fits(&self.need) {
                    return Ok(Some(i));
                }
                free = free.or(Some(i));
            }
        }
        Ok(free)
    }

    /// The set bound longest ago after `after` (by when it was bound, then its index).
    fn next_oldest(&self, after: Option<(u64, usize)>) -> Option<usize> {
        let bound = self.sets.iter().enumerate().map(|(i, s)| (s.last_bound, i));
        let later = bound.filter(|k| after.is_none_or(|a| *k > a));
        later.min().map(|(_, i)| i)
    }

    /// Waits until set `s` is free (`true`) or lost (`false`), or fails once `deadline` has
    /// passed. Polls rather than waiting on the fences: the pools may recycle them meanwhile.
    fn wait_for(&mut self, s: usize, deadline: Instant) -> Result<bool> {
        loop {
            match self.sets[s].poll()? {
                Status::Free => return Ok(true),
                Status::Lost => return Ok(false),
                Status::Busy if Instant::now() >= deadline => {
                    return Err(Error::TransientSetsBusy {
                        sets: MAX_SETS,
                        waited: self.wait_limit,
                    });
                }
                Status::Busy => std::thread::sleep(Duration::from_micros(50)),
            }
        }
    }
}
