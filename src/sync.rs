//! [`Mutex`]: the one mutex type of the graph, its executions and their fences, a thin
//! wrapper over `parking_lot`'s that unit tests can count; and [`Slot`], which hands a value
//! from one frame to the next without a lock.
//!
//! A frame's cost includes the locks it takes. The graph's and executor's own mutexes (the
//! graph's kept frames, the pools, an execution fence's contents) are all this type, so a test
//! counts how many a frame takes on its thread (`graph/tests.rs`: at most three for a reused
//! builder frame and for a held frame). Not among them, as `parking_lot`'s own: the
//! per-resource state locks (`resource::TrackedState`, which the same test counts apart)
//! and the queues' submit locks, which a frame takes for each resource and queue it uses, and
//! the completion token's, which a frame takes a few times to mark its execution submitted
//! and complete.

use parking_lot::MutexGuard;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A mutex of the graph or its executor: `parking_lot::Mutex`, whose acquisitions test
/// builds count per thread (`acquisitions()`).
#[derive(Default)]
pub(crate) struct Mutex<T>(parking_lot::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) const fn new(value: T) -> Self {
        Mutex(parking_lot::const_mutex(value))
    }

    /// Blocks until the lock is free, and takes it.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(test)]
        TAKEN.with(|t| t.set((t.get().0 + 1, t.get().1)));
        self.0.lock()
    }

    /// The value, without locking: `self` is borrowed uniquely.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

#[cfg(test)]
thread_local! {
    /// The [`Mutex`]es and the resources' state locks this thread has taken.
    static TAKEN: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Counts a resource state lock taken on this thread (`resource::TrackedState::lock`).
#[cfg(test)]
pub(crate) fn note_state_lock() {
    TAKEN.with(|t| t.set((t.get().0, t.get().1 + 1)));
}

/// How many times this thread has taken a [`Mutex`], and a resource's state lock, so far.
#[cfg(test)]
pub(crate) fn acquisitions() -> (u64, u64) {
    TAKEN.with(std::cell::Cell::get)
}

/// One boxed value that threads hand each other without a lock: [`Slot::take`] and
/// [`Slot::put`] are one atomic swap each. For what one frame hands the next (a graph's
/// builder lists and last frame), where a lock would only guard a move.
pub(crate) struct Slot<T>(AtomicPtr<T>);

// SAFETY: a `Slot` only moves its `T` between threads, whole, and never lends it: `T: Send`
// is enough for both.
unsafe impl<T: Send> Send for Slot<T> {}
// SAFETY: as above; `&Slot` allows only the atomic swaps, each of which hands the value to
// one thread.
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot(AtomicPtr::new(std::ptr::null_mut()))
    }
}

impl<T> Slot<T> {
    /// The value, if there is one, leaving the slot empty.
    pub(crate) fn take(&self) -> Option<Box<T>> {
        let p = self.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: a non-null pointer in the slot came from `Box::into_raw` in `put`, and the
        // swap gave it to this thread alone.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Puts `value` in the slot; returns the value it held, if any.
    pub(crate) fn put(&self, value: Box<T>) -> Option<Box<T>> {
        let p = self.0.swap(Box::into_raw(value), Ordering::AcqRel);
        // SAFETY: as in `take`.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}
