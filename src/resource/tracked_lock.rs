//! [`TrackedState`]: a resource's [`Tracked`] state behind its lock, with the state's version
//! also published outside the lock.
//!
//! A reused frame asks of every resource whether it is still where the plan's last execution
//! left it: whether its version is the one that execution's commit gave it. That question
//! needs no lock: [`TrackedState::version`] is one atomic load. The answer is only a hint, as
//! a locked read would be too once the lock is let go: at submit time the executor takes
//! each lock once, compares the version again under it (the staleness check), and commits.
//! So a frame takes each resource's lock once, not twice.

use super::Tracked;
use parking_lot::{Mutex, MutexGuard};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

/// A resource's tracked state and its published version.
#[derive(Debug)]
pub(crate) struct TrackedState {
    tracked: Mutex<Tracked>,
    /// `tracked.version` as the last holder of the lock left it.
    version: AtomicU64,
}

impl TrackedState {
    pub(crate) fn new(tracked: Tracked) -> Self {
        TrackedState {
            version: AtomicU64::new(tracked.version),
            tracked: Mutex::new(tracked),
        }
    }

    /// Blocks until the lock is free, and takes it. Whatever the holder does to the version
    /// is published when the guard goes.
    pub(crate) fn lock(&self) -> TrackedGuard<'_> {
        #[cfg(test)]
        TAKEN.with(|t| t.set(t.get() + 1));
        TrackedGuard {
            guard: self.tracked.lock(),
            published: &self.version,
        }
    }

    /// The state, without locking: `self` is borrowed uniquely.
    pub(crate) fn unlocked(&mut self) -> &Tracked {
        self.tracked.get_mut()
    }

    /// The version, without the lock: the one the last holder left, which may have moved on
    /// by the time the caller acts. A hint to check again under the lock before relying on it.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}

#[cfg(test)]
thread_local! {
    static TAKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many resource state locks this thread has taken so far.
#[cfg(test)]
pub(crate) fn acquisitions() -> u64 {
    TAKEN.with(std::cell::Cell::get)
}

/// The lock on a resource's [`Tracked`] state; publishes its version when dropped.
pub(crate) struct TrackedGuard<'t> {
    guard: MutexGuard<'t, Tracked>,
    published: &'t AtomicU64,
}

impl Deref for TrackedGuard<'_> {
    type Target = Tracked;
    fn deref(&self) -> &Tracked {
        &self.guard
    }
}

impl DerefMut for TrackedGuard<'_> {
    fn deref_mut(&mut self) -> &mut Tracked {
        &mut self.guard
    }
}

impl Drop for TrackedGuard<'_> {
    fn drop(&mut self) {
        // Still under the lock (the guard field goes after this): every holder's version is
        // published in the order the holders took the lock.
        self.published.store(self.guard.version, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::SegmentState;

    #[test]
    fn a_version_changed_under_the_lock_is_published_when_the_lock_goes() {
        let state = TrackedState::new(Tracked::new(16, SegmentState::default()));
        assert_eq!(state.version(), 0);
        let mut g = state.lock();
        g.commit(vec![(0..16, SegmentState::default())]);
        // Not yet: the holder may still change it.
        assert_eq!(state.version(), 0);
        drop(g);
        assert_eq!(state.version(), 1);
        assert_eq!(state.lock().version, 1);
    }
}
