//! The semaphore bookkeeping of a swapchain as plain data: which acquire semaphore a frame
//! slot may reuse, and which image's present semaphore is free, by the completion of the
//! executions that used them. Testable without a surface.

use crate::error::{Error, Result};
use vk_baton::CompletionToken;

/// Something that says whether GPU work has completed; [`CompletionToken`] in real use.
///
/// ```
/// use vk_baton_passes::swapchain::IsComplete;
/// struct Done;
/// impl IsComplete for Done { fn is_complete(&self) -> bool { true } }
/// assert!(Done.is_complete());
/// assert!(!Done.failed());
/// ```
pub trait IsComplete {
    /// Whether the work has completed.
    fn is_complete(&self) -> bool;

    /// Whether the work failed before it reached the GPU: it never completes, and the
    /// semaphores it was to wait on or signal were left as they were. `false` by default.
    ///
    /// ```
    /// use vk_baton_passes::swapchain::IsComplete;
    /// struct Failed;
    /// impl IsComplete for Failed {
    ///     fn is_complete(&self) -> bool { false }
    ///     fn failed(&self) -> bool { true }
    /// }
    /// assert!(Failed.failed());
    /// ```
    fn failed(&self) -> bool {
        false
    }
}

impl IsComplete for CompletionToken {
    fn is_complete(&self) -> bool {
        CompletionToken::is_complete(self)
    }

    fn failed(&self) -> bool {
        matches!(self.check(), Err(vk_baton::Error::NotExecuted))
    }
}

/// Where the execution behind a token stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Submitted (or being recorded) and not complete yet.
    Pending,
    /// Complete on the GPU.
    Done,
    /// Failed before it reached the GPU: its waits and signals never happen.
    Failed,
}

fn outcome<C: IsComplete>(c: &C) -> Outcome {
    if c.failed() {
        Outcome::Failed
    } else if c.is_complete() {
        Outcome::Done
    } else {
        Outcome::Pending
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Slot<C> {
    /// Unused, or its last waiter has completed.
    Free,
    /// An acquire signalled the semaphore; no submission waits on it yet.
    Acquired,
    /// A submission waits on it; reusable once that completes. If that execution failed
    /// before reaching the GPU, the semaphore is still signalled: the slot counts as
    /// [`Slot::Acquired`].
    InFlight(C),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum ImageState<C> {
    /// Never acquired, or presented (its present semaphore may be waited on by a pending
    /// present until the image is acquired again).
    Idle,
    /// Acquired and not yet presented: its present semaphore is free to signal. `present`
    /// is the execution that signals it (a [`SwapchainPresent`](super::SwapchainPresent) recorded), if any.
    Acquired { present: Option<C> },
}

/// The semaphore bookkeeping of a swapchain, as plain data: which acquire semaphore (frame
/// slot) and which present semaphore (image) may be used now.
///
/// An execution that failed before reaching the GPU (its token reports
/// [`IsComplete::failed`]) neither waited on the acquire semaphore nor signalled the present
/// semaphore: its slot still holds a signalled acquire semaphore, and its frame may be
/// recorded again.
///
/// ```
/// use vk_baton_passes::swapchain::{IsComplete, SwapchainSync};
/// #[derive(Clone, Debug)] struct Done(bool);
/// impl IsComplete for Done { fn is_complete(&self) -> bool { self.0 } }
/// let mut s = SwapchainSync::<Done>::new(2, 3);
/// let slot = s.begin_acquire().unwrap();      // acquire semaphore `slot`
/// s.acquired(slot, 1).unwrap();               // the engine returned image 1
/// s.submitted(slot, Done(true)).unwrap();     // the graph waits on it
/// assert_eq!(s.present_semaphore(1).unwrap(), 1);
/// s.present_signalled(1, Done(true)).unwrap(); // the graph signals the present semaphore
/// s.ready_to_present(1).unwrap();
/// s.presented(1).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct SwapchainSync<C> {
    slots: Vec<Slot<C>>,
    images: Vec<ImageState<C>>,
    frame: u64,
}

impl<C: IsComplete + Clone> SwapchainSync<C> {
    /// Bookkeeping for `frames_in_flight` acquire semaphores and `images` present semaphores.
    pub fn new(frames_in_flight: usize, images: usize) -> Self {
        Self {
            slots: vec![Slot::Free; frames_in_flight.max(1)],
            images: vec![ImageState::Idle; images],
            frame: 0,
        }
    }

    /// Frames in flight (acquire semaphores).
    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    /// The acquire semaphore (frame slot) for the next acquire. Fails with
    /// [`Error::FrameInFlight`] while the execution that last waited on it is pending, and
    /// with [`Error::Swapchain`] if an acquire signalled it but no submission that reached
    /// the GPU waited on it.
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// let mut s = SwapchainSync::<vk_baton::CompletionToken>::new(2, 3);
    /// assert_eq!(s.begin_acquire().unwrap(), 0);
    /// ```
    pub fn begin_acquire(&mut self) -> Result<usize> {
        let slot = (self.frame % self.slots.len() as u64) as usize;
        match &self.slots[slot] {
            Slot::Free => Ok(slot),
            Slot::InFlight(c) => match outcome(c) {
                Outcome::Done => {
                    self.slots[slot] = Slot::Free;
                    Ok(slot)
                }
                Outcome::Pending => Err(Error::FrameInFlight { slot }),
                Outcome::Failed => Err(Error::Swapchain(format!(
                    "acquire semaphore {slot} is still signalled: the execution that was to wait on it failed before reaching the GPU; record the frame's acquire pass in a new graph (or recreate the swapchain)"
                ))),
            },
            Slot::Acquired => Err(Error::Swapchain(format!(
                "acquire semaphore {slot} was signalled by an acquire that no submission waited on; insert the frame's acquire pass (or recreate the swapchain)"
            ))),
        }
    }

    /// Records that the acquire with `slot`'s semaphore returned `image`. The slot's
    /// semaphore counts as signalled even when this fails (an image out of range, or one
    /// already acquired): the slot is then blocked until the swapchain is recreated, never
    /// handed out again with a signalled semaphore.
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// let mut s = SwapchainSync::<vk_baton::CompletionToken>::new(2, 3);
    /// let slot = s.begin_acquire().unwrap();
    /// s.acquired(slot, 2).unwrap();
    /// ```
    pub fn acquired(&mut self, slot: usize, image: usize) -> Result<()> {
        if slot >= self.slots.len() {
            return Err(Error::Swapchain(format!("slot {slot} out of range")));
        }
        // The acquire succeeded: whatever happens below, the semaphore is signalled.
        self.slots[slot] = Slot::Acquired;
        self.frame += 1;
        match self.images.get(image) {
            None => Err(Error::Swapchain(format!(
                "image {image} out of range; recreate the swapchain"
            ))),
            Some(ImageState::Acquired { .. }) => Err(Error::Swapchain(format!(
                "image {image} acquired twice without a present; recreate the swapchain"
            ))),
            Some(ImageState::Idle) => {
                // The engine handed the image back: the present that used its semaphore has
                // waited.
                self.images[image] = ImageState::Acquired { present: None };
                Ok(())
            }
        }
    }

    /// Records that a submission waits on `slot`'s semaphore; `done` says when it completed.
    /// Refused unless an acquire signalled the semaphore and no execution that reached (or
    /// may reach) the GPU waits on it yet: a second wait on a binary semaphore with no new
    /// signal would never be satisfied. Re-recording after a failed execution is fine.
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::{IsComplete, SwapchainSync};
    /// # #[derive(Clone)] struct D; impl IsComplete for D { fn is_complete(&self) -> bool { true } }
    /// let mut s = SwapchainSync::<D>::new(1, 1);
    /// let slot = s.begin_acquire().unwrap();
    /// s.acquired(slot, 0).unwrap();
    /// s.submitted(slot, D).unwrap();
    /// assert!(s.submitted(slot, D).is_err()); // the acquire pass executed twice
    /// ```
    pub fn submitted(&mut self, slot: usize, done: C) -> Result<()> {
        match self.slots.get(slot) {
            Some(Slot::Acquired) => {}
            Some(Slot::InFlight(c)) if outcome(c) == Outcome::Failed => {}
            Some(Slot::InFlight(_)) => {
                return Err(Error::Swapchain(format!(
                    "the acquire semaphore of slot {slot} is already waited on by an execution; a frame's acquire pass executes once"
                )))
            }
            _ => {
                return Err(Error::Swapchain(format!(
                    "no acquire pending on slot {slot}"
                )))
            }
        }
        self.slots[slot] = Slot::InFlight(done);
        Ok(())
    }

    /// The present semaphore (index) to signal for `image`: the image must be acquired and
    /// not yet presented.
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// let mut s = SwapchainSync::<vk_baton::CompletionToken>::new(2, 3);
    /// assert!(s.present_semaphore(0).is_err()); // not acquired
    /// ```
    pub fn present_semaphore(&self, image: usize) -> Result<usize> {
        match self.images.get(image) {
            Some(ImageState::Acquired { .. }) => Ok(image),
            _ => Err(Error::Swapchain(format!("image {image} is not acquired"))),
        }
    }

    /// Records that an execution (`done`) signals `image`'s present semaphore. Refused if
    /// the image is not acquired, or if an earlier execution that did not fail already
    /// signals it (the present pass recorded twice).
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::{IsComplete, SwapchainSync};
    /// # #[derive(Clone)] struct D; impl IsComplete for D { fn is_complete(&self) -> bool { true } }
    /// let mut s = SwapchainSync::<D>::new(1, 1);
    /// let slot = s.begin_acquire().unwrap();
    /// s.acquired(slot, 0).unwrap();
    /// s.present_signalled(0, D).unwrap();
    /// assert!(s.present_signalled(0, D).is_err());
    /// ```
    pub fn present_signalled(&mut self, image: usize, done: C) -> Result<()> {
        match self.images.get(image) {
            Some(ImageState::Acquired { present: None }) => {}
            Some(ImageState::Acquired { present: Some(c) }) if outcome(c) == Outcome::Failed => {}
            Some(ImageState::Acquired { present: Some(_) }) => {
                return Err(Error::Swapchain(format!(
                    "the present semaphore of image {image} is already signalled by an execution; a frame's present pass executes once"
                )))
            }
            _ => {
                return Err(Error::Swapchain(format!(
                    "image {image} is not acquired"
                )))
            }
        }
        self.images[image] = ImageState::Acquired {
            present: Some(done),
        };
        Ok(())
    }

    /// Checks that `image` may be presented: it is acquired, and an execution that did not
    /// fail signals its present semaphore (otherwise `vkQueuePresentKHR` would wait on a
    /// semaphore nothing signals).
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::{IsComplete, SwapchainSync};
    /// # #[derive(Clone)] struct D; impl IsComplete for D { fn is_complete(&self) -> bool { true } }
    /// let mut s = SwapchainSync::<D>::new(1, 1);
    /// let slot = s.begin_acquire().unwrap();
    /// s.acquired(slot, 0).unwrap();
    /// assert!(s.ready_to_present(0).is_err()); // no present pass executed
    /// s.present_signalled(0, D).unwrap();
    /// s.ready_to_present(0).unwrap();
    /// ```
    pub fn ready_to_present(&self, image: usize) -> Result<()> {
        match self.images.get(image) {
            Some(ImageState::Acquired { present: Some(c) }) => match outcome(c) {
                Outcome::Failed => Err(Error::Swapchain(format!(
                    "the execution that was to signal the present semaphore of image {image} failed before reaching the GPU; execute the frame's present pass again before presenting"
                ))),
                Outcome::Done | Outcome::Pending => Ok(()),
            },
            Some(ImageState::Acquired { present: None }) => Err(Error::Swapchain(format!(
                "no execution signals the present semaphore of image {image}: insert the frame's present pass and execute the graph before presenting"
            ))),
            _ => Err(Error::Swapchain(format!("image {image} is not acquired"))),
        }
    }

    /// Records that `image` was handed to `vkQueuePresentKHR` (whatever it returned).
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// let mut s = SwapchainSync::<vk_baton::CompletionToken>::new(1, 1);
    /// let slot = s.begin_acquire().unwrap();
    /// s.acquired(slot, 0).unwrap();
    /// s.presented(0).unwrap();
    /// ```
    pub fn presented(&mut self, image: usize) -> Result<()> {
        self.present_semaphore(image)?;
        self.images[image] = ImageState::Idle;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
