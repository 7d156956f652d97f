//! Tests of the swapchain bookkeeping (and of the extent fit), without a surface.

use super::*;
use crate::swapchain::handle::fit;
use std::cell::Cell;
use std::rc::Rc;

/// A token: `done` completes it, `failed` makes it a failed execution (never complete).
#[derive(Clone)]
struct Fake {
    done: Rc<Cell<bool>>,
    failed: Rc<Cell<bool>>,
}
impl IsComplete for Fake {
    fn is_complete(&self) -> bool {
        self.done.get() && !self.failed.get()
    }
    fn failed(&self) -> bool {
        self.failed.get()
    }
}

fn fake() -> (Fake, Rc<Cell<bool>>) {
    let f = Fake {
        done: Rc::new(Cell::new(false)),
        failed: Rc::new(Cell::new(false)),
    };
    let done = f.done.clone();
    (f, done)
}

fn failing() -> (Fake, Rc<Cell<bool>>) {
    let (f, _) = fake();
    let failed = f.failed.clone();
    (f, failed)
}

#[test]
fn a_failed_execution_leaves_its_slot_acquired_not_in_flight() {
    let mut s = SwapchainSync::<Fake>::new(1, 2);
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 0).unwrap();
    let (t, failed) = failing();
    s.submitted(slot, t).unwrap();
    // Pending: the slot is in flight.
    assert!(matches!(
        s.begin_acquire(),
        Err(Error::FrameInFlight { slot: 0 })
    ));
    // The execution failed before reaching the GPU: the semaphore is still signalled.
    // The slot is neither in flight forever nor free.
    failed.set(true);
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
    // Recording the frame again (a new graph) waits on it; once that completes, the
    // slot is free.
    let (t2, done2) = fake();
    s.submitted(slot, t2).unwrap();
    assert!(matches!(
        s.begin_acquire(),
        Err(Error::FrameInFlight { slot: 0 })
    ));
    done2.set(true);
    assert_eq!(s.begin_acquire().unwrap(), 0);
}

#[test]
fn a_failed_slot_is_not_freed_when_the_rotation_comes_back() {
    let mut s = SwapchainSync::<Fake>::new(2, 3);
    let (t0, failed0) = failing();
    let slot0 = s.begin_acquire().unwrap();
    s.acquired(slot0, 0).unwrap();
    s.submitted(slot0, t0).unwrap();
    failed0.set(true);
    let (t1, done1) = fake();
    let slot1 = s.begin_acquire().unwrap();
    s.acquired(slot1, 1).unwrap();
    s.submitted(slot1, t1).unwrap();
    s.present_signalled(1, fake().0).unwrap();
    s.presented(1).unwrap();
    done1.set(true);
    // Slot 0 again: its semaphore is still signalled.
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
}

#[test]
fn the_acquire_pass_executes_once() {
    let mut s = SwapchainSync::<Fake>::new(1, 1);
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 0).unwrap();
    let (t, done) = fake();
    s.submitted(slot, t).unwrap();
    // A second execution (pending or complete first one) would wait on an unsignalled
    // binary semaphore.
    assert!(matches!(
        s.submitted(slot, fake().0),
        Err(Error::Swapchain(_))
    ));
    done.set(true);
    assert!(matches!(
        s.submitted(slot, fake().0),
        Err(Error::Swapchain(_))
    ));
    // Nothing acquired on a free slot.
    assert_eq!(s.begin_acquire().unwrap(), 0);
    assert!(s.submitted(slot, fake().0).is_err());
    assert!(s.submitted(9, fake().0).is_err());
}

#[test]
fn present_needs_an_executed_present_pass() {
    let mut s = SwapchainSync::<Fake>::new(2, 2);
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 1).unwrap();
    s.submitted(slot, fake().0).unwrap();
    // No present signal submitted.
    assert!(matches!(s.ready_to_present(1), Err(Error::Swapchain(_))));
    assert!(s.ready_to_present(0).is_err()); // not acquired
    assert!(s.present_signalled(0, fake().0).is_err()); // not acquired
    let (t, failed) = failing();
    s.present_signalled(1, t).unwrap();
    s.ready_to_present(1).unwrap();
    // The present pass recorded twice (the same or a later graph) is refused.
    assert!(matches!(
        s.present_signalled(1, fake().0),
        Err(Error::Swapchain(_))
    ));
    // Its execution failed: presenting is refused until the pass executes again.
    failed.set(true);
    assert!(matches!(s.ready_to_present(1), Err(Error::Swapchain(_))));
    let (t2, done2) = fake();
    s.present_signalled(1, t2).unwrap();
    s.ready_to_present(1).unwrap(); // pending is fine: the signal is submitted
    done2.set(true);
    s.ready_to_present(1).unwrap();
    s.presented(1).unwrap();
    assert!(s.ready_to_present(1).is_err());
    assert!(s.present_signalled(1, fake().0).is_err());
    // Re-acquiring the image clears the old signal.
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 1).unwrap();
    assert!(s.ready_to_present(1).is_err());
    s.present_signalled(1, fake().0).unwrap();
}

#[test]
fn a_failed_acquired_keeps_the_slot_signalled() {
    let mut s = SwapchainSync::<Fake>::new(1, 2);
    let slot = s.begin_acquire().unwrap();
    // The engine returned an image the bookkeeping cannot take: the semaphore is
    // signalled all the same, so the slot is never handed out as free.
    assert!(s.acquired(slot, 7).is_err());
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
    let mut s = SwapchainSync::<Fake>::new(2, 2);
    let slot0 = s.begin_acquire().unwrap();
    s.acquired(slot0, 0).unwrap();
    s.submitted(slot0, fake().0).unwrap();
    let slot1 = s.begin_acquire().unwrap();
    assert!(s.acquired(slot1, 0).is_err()); // image 0 acquired twice
    let (t, done) = fake();
    done.set(true);
    // Slot 1 holds a signalled semaphore: a later rotation onto it is refused.
    s.slots[slot0] = Slot::InFlight(t);
    assert_eq!(s.begin_acquire().unwrap(), 0);
    s.acquired(0, 1).unwrap();
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
    assert!(s.acquired(5, 0).is_err());
}

#[test]
fn acquire_semaphores_rotate_per_frame_in_flight() {
    let mut s = SwapchainSync::<Fake>::new(2, 3);
    let (t0, done0) = fake();
    let slot0 = s.begin_acquire().unwrap();
    assert_eq!(slot0, 0);
    s.acquired(slot0, 0).unwrap();
    s.submitted(slot0, t0).unwrap();
    s.presented(0).unwrap();
    let (t1, _done1) = fake();
    let slot1 = s.begin_acquire().unwrap();
    assert_eq!(slot1, 1);
    s.acquired(slot1, 1).unwrap();
    s.submitted(slot1, t1).unwrap();
    s.presented(1).unwrap();
    // Slot 0 again: refused while frame 0 runs, fine once it completed.
    assert!(matches!(
        s.begin_acquire(),
        Err(Error::FrameInFlight { slot: 0 })
    ));
    done0.set(true);
    assert_eq!(s.begin_acquire().unwrap(), 0);
}

#[test]
fn an_acquire_without_a_submission_blocks_its_slot() {
    let mut s = SwapchainSync::<Fake>::new(1, 2);
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 1).unwrap();
    // The app never inserted the acquire pass: the semaphore is still signalled.
    assert!(matches!(s.begin_acquire(), Err(Error::Swapchain(_))));
    assert!(s.submitted(slot, fake().0).is_ok());
}

#[test]
fn extent_fit_never_panics_on_a_minimized_surface() {
    assert_eq!(fit(800, 1, 4096), 800);
    assert_eq!(fit(0, 1, 4096), 1);
    assert_eq!(fit(9000, 1, 4096), 4096);
    // min > max (a minimized window on some platforms): zero, so nothing is created.
    assert_eq!(fit(800, 1, 0), 0);
}

#[test]
fn present_semaphores_follow_the_image() {
    let mut s = SwapchainSync::<Fake>::new(3, 2);
    assert!(s.present_semaphore(0).is_err());
    let (t, done) = fake();
    done.set(true);
    let slot = s.begin_acquire().unwrap();
    s.acquired(slot, 1).unwrap();
    s.submitted(slot, t.clone()).unwrap();
    assert_eq!(s.present_semaphore(1).unwrap(), 1);
    assert!(s.present_semaphore(0).is_err());
    // Acquiring image 1 again before presenting it is a bookkeeping error.
    let slot = s.begin_acquire().unwrap();
    assert!(s.acquired(slot, 1).is_err());
    s.presented(1).unwrap();
    // Presenting twice is refused; after re-acquiring the image its semaphore is free.
    assert!(s.presented(1).is_err());
    s.acquired(slot, 1).unwrap();
    s.submitted(slot, t).unwrap();
    assert_eq!(s.present_semaphore(1).unwrap(), 1);
    assert!(s.acquired(0, 5).is_err());
}
