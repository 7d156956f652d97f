//! The swapchain handoff: a small [`Swapchain`] helper, and the [`SwapchainAcquire`] and
//! [`SwapchainPresent`] passes.
//!
//! Semaphores follow the Vulkan guide's swapchain semaphore reuse rules:
//!
//! - **acquire**: one binary semaphore per frame in flight. A frame slot's semaphore is reused
//!   only once the execution that waited on it has completed (its [`CompletionToken`]), and
//!   never while an acquire signalled it without a submission waiting on it.
//! - **present**: one binary semaphore per swapchain image, signalled by the graph and waited
//!   on by `vkQueuePresentKHR`. It is reused only when the presentation engine hands the same
//!   image back from `vkAcquireNextImageKHR`, which is what guarantees the earlier present's
//!   wait is done.
//!
//! [`SwapchainSync`] holds that bookkeeping as plain data, testable without a surface.
//!
//! The transition to PRESENT_SRC_KHR is the graph's: [`SwapchainPresent`] declares
//! [`Access::PRESENT`] on the image and signals the image's present semaphore. Presenting
//! from a queue of another family than the one that rendered works the same way: insert
//! [`SwapchainPresent`] on the present queue and the graph releases the image on the
//! rendering family and acquires it on the present family before the signal. Out-of-date and
//! suboptimal are values ([`AcquireOutcome`], [`PresentOutcome`]), not errors.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton::Context, sc: &mut vk_baton_passes::Swapchain, render: &mut dyn vk_baton::Pass) -> vk_baton_passes::Result<()> {
//! use vk_baton_passes::{AcquireOutcome, PresentOutcome};
//! let graph = ctx.graph()?;
//! let frame = match sc.acquire(u64::MAX)? {
//!     AcquireOutcome::Acquired(frame) => frame,
//!     AcquireOutcome::OutOfDate => { sc.recreate(None)?; return Ok(()); }
//! };
//! let (mut acquire, mut present) = (frame.acquire_pass(), frame.present_pass());
//! let fence = graph.record()
//!     .insert_pass("acquire", &mut acquire, &ctx.graphics)
//!     .insert_pass("render", render, &ctx.graphics)        // writes frame.image()
//!     .insert_pass("present", &mut present, &ctx.graphics)
//!     .finish()?.execute()?;
//! if sc.present(&ctx.graphics, &frame)? != PresentOutcome::Optimal || frame.suboptimal() {
//!     sc.recreate(None)?;
//! }
//! # drop(fence); Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use vk_baton::{
    Access, CompletionToken, Declare, Destroy, ImageDesc, Pass, Queue, Recorder, ResourceState,
    StImage,
};

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
    /// is the execution that signals it (a [`SwapchainPresent`] recorded), if any.
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
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// let s = SwapchainSync::<vk_baton::CompletionToken>::new(2, 3);
    /// ```
    pub fn new(frames_in_flight: usize, images: usize) -> Self {
        Self {
            slots: vec![Slot::Free; frames_in_flight.max(1)],
            images: vec![ImageState::Idle; images],
            frame: 0,
        }
    }

    /// Frames in flight (acquire semaphores).
    ///
    /// ```
    /// # use vk_baton_passes::swapchain::SwapchainSync;
    /// assert_eq!(SwapchainSync::<vk_baton::CompletionToken>::new(2, 3).frames_in_flight(), 2);
    /// ```
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

/// `want` within `[min, max]`. Not `u32::clamp`, which panics when `min > max`, as a
/// minimized surface may report (`maxImageExtent` zero); the result is then `max`, zero, and
/// no swapchain is created.
fn fit(want: u32, min: u32, max: u32) -> u32 {
    want.max(min).min(max)
}

/// What [`Swapchain::acquire`] returned.
///
/// ```no_run
/// # fn f(sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::AcquireOutcome;
/// match sc.acquire(u64::MAX)? {
///     AcquireOutcome::Acquired(frame) => {
///         // Record a graph with frame.acquire_pass(), rendering into frame.image(), and
///         // frame.present_pass(); then present it.
///         println!("rendering into swapchain image {:?}", frame.image());
///     }
///     // Nothing was acquired: recreate and try again next frame.
///     AcquireOutcome::OutOfDate => {
///         sc.recreate(None)?;
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub enum AcquireOutcome {
    /// An image to render this frame into (it may be suboptimal: see [`Frame::suboptimal`]).
    Acquired(Frame),
    /// The swapchain no longer matches the surface: recreate it. No semaphore was signalled.
    OutOfDate,
}

/// What [`Swapchain::present`] returned.
///
/// ```
/// use vk_baton_passes::PresentOutcome;
/// fn must_recreate(outcome: PresentOutcome) -> bool {
///     outcome != PresentOutcome::Optimal
/// }
/// assert!(!must_recreate(PresentOutcome::Optimal));
/// assert!(must_recreate(PresentOutcome::Suboptimal));
/// assert!(must_recreate(PresentOutcome::OutOfDate));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresentOutcome {
    /// Presented; the swapchain matches the surface.
    Optimal,
    /// Presented, but the swapchain no longer matches the surface exactly: recreate soon.
    Suboptimal,
    /// Not presented: the swapchain is out of date; recreate it.
    OutOfDate,
}

struct Shared {
    sync: Mutex<SwapchainSync<CompletionToken>>,
    /// Set when the swapchain is recreated or dropped: its semaphores are destroyed, and the
    /// frames and passes holding their handles must not use them.
    retired: AtomicBool,
}

impl Shared {
    fn new(frames_in_flight: usize, images: usize) -> Arc<Self> {
        Arc::new(Self {
            sync: Mutex::new(SwapchainSync::new(frames_in_flight, images)),
            retired: AtomicBool::new(false),
        })
    }

    fn retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// Fails if the swapchain `what` came from was recreated or dropped.
    fn check_live(&self, what: &dyn std::fmt::Debug) -> Result<()> {
        if self.retired() {
            return Err(Error::Swapchain(format!(
                "{what:?} belongs to a swapchain since recreated or dropped (its semaphores are destroyed); acquire a new frame"
            )));
        }
        Ok(())
    }
}

/// One acquired image: what the frame's acquire and present passes use.
///
/// ```no_run
/// # fn f(frame: &vk_baton_passes::Frame) {
/// println!("image {} ({:?})", frame.index(), frame.image().handle());
/// # }
/// ```
pub struct Frame {
    swapchain: vk::SwapchainKHR,
    slot: usize,
    index: u32,
    image: Arc<StImage>,
    acquire_semaphore: vk::Semaphore,
    present_semaphore: vk::Semaphore,
    suboptimal: bool,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Frame(slot {}, image {}, suboptimal {})",
            self.slot, self.index, self.suboptimal
        )
    }
}

impl Frame {
    /// The swapchain image index.
    ///
    /// ```no_run
    /// # fn f(frame: &vk_baton_passes::Frame) {
    /// let i: u32 = frame.index();
    /// # }
    /// ```
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The acquired image, to declare in the frame's passes.
    ///
    /// ```no_run
    /// # fn f(frame: &vk_baton_passes::Frame) {
    /// let img = frame.image().clone();
    /// # }
    /// ```
    pub fn image(&self) -> &Arc<StImage> {
        &self.image
    }

    /// Whether the acquire reported the swapchain suboptimal (recreate after presenting).
    ///
    /// ```no_run
    /// # fn f(frame: &vk_baton_passes::Frame) {
    /// if frame.suboptimal() { /* recreate soon */ }
    /// # }
    /// ```
    pub fn suboptimal(&self) -> bool {
        self.suboptimal
    }

    /// The pass that waits on the acquire semaphore before the image's first use.
    ///
    /// ```no_run
    /// # fn f(frame: &vk_baton_passes::Frame) {
    /// let acquire = frame.acquire_pass();
    /// # }
    /// ```
    pub fn acquire_pass(&self) -> SwapchainAcquire {
        SwapchainAcquire {
            slot: self.slot,
            semaphore: self.acquire_semaphore,
            image: self.image.clone(),
            shared: self.shared.clone(),
        }
    }

    /// The pass that moves the image to PRESENT_SRC_KHR (through the graph) and signals the
    /// image's present semaphore. Insert it on the queue you will present from.
    ///
    /// ```no_run
    /// # fn f(frame: &vk_baton_passes::Frame) {
    /// let present = frame.present_pass();
    /// # }
    /// ```
    pub fn present_pass(&self) -> SwapchainPresent {
        SwapchainPresent {
            index: self.index,
            semaphore: self.present_semaphore,
            image: self.image.clone(),
            shared: self.shared.clone(),
        }
    }
}

/// Waits on a frame's acquire semaphore before the first use of its swapchain image; from
/// [`Frame::acquire_pass`]. The image's contents are undefined after the wait, so the first
/// use's layout transition starts from UNDEFINED and chains from the wait's stages.
///
/// ```no_run
/// # fn f(frame: &vk_baton_passes::Frame) {
/// let acquire = frame.acquire_pass();
/// # }
/// ```
pub struct SwapchainAcquire {
    slot: usize,
    semaphore: vk::Semaphore,
    image: Arc<StImage>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SwapchainAcquire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SwapchainAcquire(slot {}, `{}`)",
            self.slot,
            self.image.name()
        )
    }
}

impl Pass for SwapchainAcquire {
    fn declare(&self, d: &mut Declare<'_>) {
        if self.shared.retired() {
            // The semaphore and the image are destroyed: declare neither; `record` fails.
            log::error!("{self:?}: its swapchain was recreated or dropped");
            return;
        }
        // SAFETY: the swapchain's own semaphore, alive while the frame is live (`record`
        // checks), handed to the vkAcquireNextImageKHR that returned this image; `record`
        // refuses a second use of the frame's slot before anything is submitted.
        unsafe { d.wait_binary(self.semaphore, Some(&self.image)) };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.shared.check_live(self)?;
        log::trace!(
            "{}: waits for `{}` (slot {})",
            r.pass_name(),
            self.image.name(),
            self.slot
        );
        self.shared
            .sync
            .lock()
            .submitted(self.slot, r.completion())
            .map_err(vk_baton::Error::from)
    }
}

/// Moves a swapchain image to PRESENT_SRC_KHR and signals its present semaphore; from
/// [`Frame::present_pass`]. Records no command: the graph's barrier (or ownership transfer,
/// when the image was rendered on another family) does the transition.
///
/// ```no_run
/// # fn f(frame: &vk_baton_passes::Frame) {
/// let present = frame.present_pass();
/// # }
/// ```
pub struct SwapchainPresent {
    index: u32,
    semaphore: vk::Semaphore,
    image: Arc<StImage>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SwapchainPresent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SwapchainPresent(image {}, `{}`)",
            self.index,
            self.image.name()
        )
    }
}

impl Pass for SwapchainPresent {
    fn declare(&self, d: &mut Declare<'_>) {
        if self.shared.retired() {
            // The semaphore and the image are destroyed: declare neither; `record` fails.
            log::error!("{self:?}: its swapchain was recreated or dropped");
            return;
        }
        d.image(&self.image, Access::PRESENT);
        // SAFETY: the image's present semaphore, unsignalled since the present of its last
        // use waited on it; `record` refuses a second signal before anything is submitted.
        unsafe { d.signal_binary(self.semaphore) };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.shared.check_live(self)?;
        log::trace!("{}: `{}` to present", r.pass_name(), self.image.name());
        self.shared
            .sync
            .lock()
            .present_signalled(self.index as usize, r.completion())
            .map_err(vk_baton::Error::from)
    }
}

/// How to build a [`Swapchain`].
///
/// ```
/// let cfg = vk_baton_passes::SwapchainConfig { frames_in_flight: 3, ..Default::default() };
/// ```
#[derive(Clone, Debug)]
pub struct SwapchainConfig {
    /// Size when the surface leaves it to the swapchain (`currentExtent` = 0xFFFFFFFF).
    pub extent: vk::Extent2D,
    /// Frames in flight: the number of acquire semaphores.
    pub frames_in_flight: usize,
    /// Preferred present mode; FIFO (always supported) otherwise.
    pub present_mode: vk::PresentModeKHR,
    /// Preferred formats, in order; the surface's first format otherwise.
    pub formats: Vec<vk::SurfaceFormatKHR>,
    /// Image usage (COLOR_ATTACHMENT and TRANSFER_DST by default, for rendering and blits).
    pub usage: vk::ImageUsageFlags,
}

impl Default for SwapchainConfig {
    fn default() -> Self {
        let srgb = |format| vk::SurfaceFormatKHR {
            format,
            color_space: vk::ColorSpaceKHR::SRGB_NONLINEAR,
        };
        Self {
            extent: vk::Extent2D {
                width: 800,
                height: 600,
            },
            frames_in_flight: 2,
            present_mode: vk::PresentModeKHR::FIFO,
            formats: vec![
                srgb(vk::Format::B8G8R8A8_SRGB),
                srgb(vk::Format::B8G8R8A8_UNORM),
            ],
            usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST,
        }
    }
}

/// A swapchain on a surface, its images wrapped as [`StImage`]s (which the swapchain owns:
/// [`Destroy::AppKeeps`]), and its semaphores. The device needs `VK_KHR_swapchain` (with
/// [`vk_baton::Context`], `ContextOptions { swapchain: true, .. }`).
///
/// ```no_run
/// # fn f(ctx: &vk_baton::Context, surface: ash::vk::SurfaceKHR) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::{Swapchain, SwapchainConfig};
/// let sc = Swapchain::new(&ctx.entry, &ctx.instance, &ctx.device, ctx.physical_device, surface, SwapchainConfig::default())?;
/// println!("{} images of {:?}", sc.images().len(), sc.extent());
/// # Ok(()) }
/// ```
pub struct Swapchain {
    device: ash::Device,
    physical_device: vk::PhysicalDevice,
    surface: vk::SurfaceKHR,
    surface_fn: ash::khr::surface::Instance,
    swapchain_fn: ash::khr::swapchain::Device,
    config: SwapchainConfig,
    handle: vk::SwapchainKHR,
    format: vk::SurfaceFormatKHR,
    extent: vk::Extent2D,
    images: Vec<Arc<StImage>>,
    acquire_semaphores: Vec<vk::Semaphore>,
    present_semaphores: Vec<vk::Semaphore>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Swapchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Swapchain({:?}, {} images, {:?}, {:?})",
            self.handle,
            self.images.len(),
            self.format.format,
            self.extent
        )
    }
}

impl Swapchain {
    /// Creates a swapchain for `surface` (which the app keeps and destroys after the
    /// swapchain). If the surface's extent is zero (a minimized window), no swapchain is
    /// created yet: [`Swapchain::handle`] is null, [`Swapchain::acquire`] reports
    /// [`AcquireOutcome::OutOfDate`], and [`Swapchain::recreate`] creates it later.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context, surface: ash::vk::SurfaceKHR) -> vk_baton_passes::Result<()> {
    /// let sc = vk_baton_passes::Swapchain::new(&ctx.entry, &ctx.instance, &ctx.device, ctx.physical_device, surface, Default::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        entry: &ash::Entry,
        instance: &ash::Instance,
        device: &ash::Device,
        physical_device: vk::PhysicalDevice,
        surface: vk::SurfaceKHR,
        config: SwapchainConfig,
    ) -> Result<Self> {
        let mut sc = Self {
            device: device.clone(),
            physical_device,
            surface,
            surface_fn: ash::khr::surface::Instance::new(entry, instance),
            swapchain_fn: ash::khr::swapchain::Device::new(instance, device),
            config,
            handle: vk::SwapchainKHR::null(),
            format: vk::SurfaceFormatKHR::default(),
            extent: vk::Extent2D::default(),
            images: Vec::new(),
            acquire_semaphores: Vec::new(),
            present_semaphores: Vec::new(),
            shared: Shared::new(1, 0),
        };
        sc.build(vk::SwapchainKHR::null())?;
        Ok(sc)
    }

    /// Whether queue family `family` can present to the surface.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain, q: &vk_baton::Queue) -> vk_baton_passes::Result<()> {
    /// if !sc.supports_present(q.family())? { /* present from another queue */ }
    /// # Ok(()) }
    /// ```
    pub fn supports_present(&self, family: u32) -> Result<bool> {
        // SAFETY: a plain query on live handles.
        unsafe {
            self.surface_fn.get_physical_device_surface_support(
                self.physical_device,
                family,
                self.surface,
            )
        }
        .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceSupportKHR", e))
    }

    /// The images, by index.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain) {
    /// let n = sc.images().len();
    /// # }
    /// ```
    pub fn images(&self) -> &[Arc<StImage>] {
        &self.images
    }

    /// The image size.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain) {
    /// let e = sc.extent();
    /// # }
    /// ```
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The image format and color space.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain) {
    /// let f = sc.format().format;
    /// # }
    /// ```
    pub fn format(&self) -> vk::SurfaceFormatKHR {
        self.format
    }

    /// The `VkSwapchainKHR`.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain) {
    /// let raw = sc.handle();
    /// # }
    /// ```
    pub fn handle(&self) -> vk::SwapchainKHR {
        self.handle
    }

    /// Acquires the next image with the next frame slot's semaphore. Out-of-date is
    /// [`AcquireOutcome::OutOfDate`]; a slot whose previous frame is still executing gives
    /// [`Error::FrameInFlight`] (wait for that frame's fence first).
    ///
    /// ```no_run
    /// # fn f(sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
    /// if let vk_baton_passes::AcquireOutcome::Acquired(frame) = sc.acquire(u64::MAX)? { /* ... */ }
    /// # Ok(()) }
    /// ```
    pub fn acquire(&mut self, timeout_ns: u64) -> Result<AcquireOutcome> {
        if self.handle == vk::SwapchainKHR::null() {
            // The surface had a zero extent (minimized) at the last (re)creation.
            return Ok(AcquireOutcome::OutOfDate);
        }
        let slot = self.shared.sync.lock().begin_acquire()?;
        let sem = *self
            .acquire_semaphores
            .get(slot)
            .ok_or_else(|| Error::Swapchain(format!("no acquire semaphore for slot {slot}")))?;
        // SAFETY: live swapchain; the semaphore is unsignalled with no pending operation
        // (checked by the bookkeeping above).
        let r = unsafe {
            self.swapchain_fn
                .acquire_next_image(self.handle, timeout_ns, sem, vk::Fence::null())
        };
        let (index, suboptimal) = match r {
            Ok(v) => v,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                log::debug!("swapchain out of date at acquire");
                return Ok(AcquireOutcome::OutOfDate);
            }
            Err(e) => return Err(Error::vk("vkAcquireNextImageKHR", e)),
        };
        // Checks `index` against the images (which match the present semaphores): on failure
        // the slot stays blocked with its signalled semaphore until the next recreate.
        self.shared.sync.lock().acquired(slot, index as usize)?;
        let (Some(image), Some(&present_semaphore)) = (
            self.images.get(index as usize),
            self.present_semaphores.get(index as usize),
        ) else {
            return Err(Error::Swapchain(format!(
                "image {index} has no present semaphore; recreate the swapchain"
            )));
        };
        Ok(AcquireOutcome::Acquired(Frame {
            swapchain: self.handle,
            slot,
            index,
            image: image.clone(),
            acquire_semaphore: sem,
            present_semaphore,
            suboptimal,
            shared: self.shared.clone(),
        }))
    }

    /// Presents `frame`'s image on `queue` (the queue its [`SwapchainPresent`] was inserted
    /// on, after the graph executed), waiting on the image's present semaphore.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain, q: &vk_baton::Queue, frame: &vk_baton_passes::Frame) -> vk_baton_passes::Result<()> {
    /// let outcome = sc.present(q, frame)?;
    /// # Ok(()) }
    /// ```
    pub fn present(&self, queue: &Queue, frame: &Frame) -> Result<PresentOutcome> {
        frame.shared.check_live(frame)?;
        if frame.swapchain != self.handle || !Arc::ptr_eq(&frame.shared, &self.shared) {
            return Err(Error::Swapchain(format!(
                "{frame:?} was acquired from a swapchain since recreated; acquire again"
            )));
        }
        // The frame's present pass must have been executed, by an execution that did not
        // fail: otherwise the present would wait on a semaphore nothing signals.
        self.shared
            .sync
            .lock()
            .ready_to_present(frame.index as usize)?;
        let waits = [frame.present_semaphore];
        let swapchains = [self.handle];
        let indices = [frame.index];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let lock = queue.lock();
        // SAFETY: the queue is externally synchronized by its lock; the semaphore has a
        // pending signal from the graph's submit; the image is acquired.
        let r = unsafe { self.swapchain_fn.queue_present(lock.handle(), &info) };
        drop(lock);
        self.shared.sync.lock().presented(frame.index as usize)?;
        match r {
            Ok(false) => Ok(PresentOutcome::Optimal),
            Ok(true) => Ok(PresentOutcome::Suboptimal),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(PresentOutcome::OutOfDate),
            Err(e) => Err(Error::vk("vkQueuePresentKHR", e)),
        }
    }

    /// Recreates the swapchain (after out-of-date, suboptimal or a resize), with `extent`
    /// when the surface leaves the size to the swapchain. Waits for the device to be idle
    /// first, so no semaphore or image is in use; the old [`StImage`]s and [`Frame`]s must
    /// no longer be used afterwards (presenting an old frame is refused).
    ///
    /// Returns `false` when the surface has a zero extent (a minimized window): no
    /// swapchain exists until a later `recreate` returns `true`, and [`Swapchain::acquire`]
    /// reports [`AcquireOutcome::OutOfDate`] meanwhile.
    ///
    /// ```no_run
    /// # fn f(sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
    /// if !sc.recreate(Some(ash::vk::Extent2D { width: 1024, height: 768 }))? {
    ///     // minimized: wait for the next resize
    /// }
    /// # Ok(()) }
    /// ```
    pub fn recreate(&mut self, extent: Option<vk::Extent2D>) -> Result<bool> {
        if let Some(e) = extent {
            self.config.extent = e;
        }
        // SAFETY: waiting for idle has no preconditions on a live device.
        unsafe { self.device.device_wait_idle() }.map_err(|e| Error::vk("vkDeviceWaitIdle", e))?;
        // Frames and passes of the old swapchain hold handles about to be destroyed.
        self.shared.retire();
        let old = std::mem::take(&mut self.handle);
        self.destroy_semaphores();
        self.images.clear();
        let r = self.build(old);
        if old != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle; creating the new swapchain (successful or not)
            // retired the old one, whose handle is no longer stored anywhere.
            unsafe { self.swapchain_fn.destroy_swapchain(old, None) };
        }
        r
    }

    /// The extent a new swapchain would get: the surface's, or the configured one clamped
    /// to the surface's limits when the surface leaves it to the swapchain.
    fn target_extent(&self, caps: &vk::SurfaceCapabilitiesKHR) -> vk::Extent2D {
        if caps.current_extent.width != u32::MAX {
            return caps.current_extent;
        }
        vk::Extent2D {
            width: fit(
                self.config.extent.width,
                caps.min_image_extent.width,
                caps.max_image_extent.width,
            ),
            height: fit(
                self.config.extent.height,
                caps.min_image_extent.height,
                caps.max_image_extent.height,
            ),
        }
    }

    fn destroy_semaphores(&mut self) {
        for s in self
            .acquire_semaphores
            .drain(..)
            .chain(self.present_semaphores.drain(..))
        {
            // SAFETY: callers wait for the device to be idle first.
            unsafe { self.device.destroy_semaphore(s, None) };
        }
    }

    /// Creates the swapchain, its semaphores and fresh bookkeeping; `Ok(false)` (and no
    /// swapchain) when the surface's extent is zero.
    fn build(&mut self, old: vk::SwapchainKHR) -> Result<bool> {
        // Frames and passes of an earlier swapchain keep the old bookkeeping, so they can
        // neither corrupt nor pass for this one's.
        self.shared = Shared::new(self.config.frames_in_flight.max(1), 0);
        let (sf, pd, surface) = (&self.surface_fn, self.physical_device, self.surface);
        // SAFETY: plain queries on live handles.
        let caps = unsafe { sf.get_physical_device_surface_capabilities(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", e))?;
        let extent = self.target_extent(&caps);
        if extent.width == 0 || extent.height == 0 {
            log::debug!("surface extent {extent:?}: no swapchain until the next recreate");
            return Ok(false);
        }
        // SAFETY: as above.
        let formats = unsafe { sf.get_physical_device_surface_formats(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceFormatsKHR", e))?;
        // SAFETY: as above.
        let modes = unsafe { sf.get_physical_device_surface_present_modes(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfacePresentModesKHR", e))?;
        let format = self
            .config
            .formats
            .iter()
            .find(|f| formats.contains(f))
            .copied()
            .or_else(|| formats.first().copied())
            .ok_or_else(|| Error::Swapchain("the surface reports no formats".into()))?;
        let mode = if modes.contains(&self.config.present_mode) {
            self.config.present_mode
        } else {
            vk::PresentModeKHR::FIFO
        };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let usage = self.config.usage & caps.supported_usage_flags;
        let alpha = [
            vk::CompositeAlphaFlagsKHR::OPAQUE,
            vk::CompositeAlphaFlagsKHR::INHERIT,
            vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
            vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
        ]
        .into_iter()
        .find(|a| caps.supported_composite_alpha.contains(*a))
        .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(alpha)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: a valid create info on a live device with VK_KHR_swapchain.
        let handle = unsafe { self.swapchain_fn.create_swapchain(&info, None) }
            .map_err(|e| Error::vk("vkCreateSwapchainKHR", e))?;
        // SAFETY: a live swapchain.
        let raw = match unsafe { self.swapchain_fn.get_swapchain_images(handle) } {
            Ok(r) => r,
            Err(e) => {
                // SAFETY: never used.
                unsafe { self.swapchain_fn.destroy_swapchain(handle, None) };
                return Err(Error::vk("vkGetSwapchainImagesKHR", e));
            }
        };
        // All semaphores or none: a partial set would leave slots without semaphores.
        let frames = self.config.frames_in_flight.max(1);
        let mut semaphores = Vec::with_capacity(frames + raw.len());
        for _ in 0..frames + raw.len() {
            // SAFETY: plain object creation on a live device.
            match unsafe {
                self.device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            } {
                Ok(s) => semaphores.push(s),
                Err(e) => {
                    for s in semaphores {
                        // SAFETY: created above and never used.
                        unsafe { self.device.destroy_semaphore(s, None) };
                    }
                    // SAFETY: never used (no image acquired); its handle is stored nowhere,
                    // so the swapchain stays absent (acquire reports out-of-date).
                    unsafe { self.swapchain_fn.destroy_swapchain(handle, None) };
                    return Err(Error::vk("vkCreateSemaphore", e));
                }
            }
        }
        self.present_semaphores = semaphores.split_off(frames);
        self.acquire_semaphores = semaphores;
        self.handle = handle;
        self.format = format;
        self.extent = extent;
        let desc = ImageDesc::new_2d(extent.width, extent.height, format.format, usage);
        self.images = raw
            .iter()
            .enumerate()
            .map(|(i, &img)| {
                // SAFETY: live images of the swapchain, made with `desc`, which the
                // swapchain destroys only after the last frame's fence (AppKeeps).
                Arc::new(unsafe {
                    StImage::from_raw(
                        &self.device,
                        img,
                        desc.clone(),
                        &format!("swapchain image {i}"),
                        ResourceState::undefined(),
                        Destroy::AppKeeps,
                    )
                })
            })
            .collect();
        *self.shared.sync.lock() = SwapchainSync::new(frames, raw.len());
        log::info!(
            "swapchain {handle:?}: {} images {:?} {:?}, {mode:?}, {frames} frames in flight",
            raw.len(),
            format.format,
            extent
        );
        Ok(true)
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: waiting for idle has no preconditions; afterwards no semaphore or image
        // of the swapchain is in use by the device.
        if let Err(e) = unsafe { self.device.device_wait_idle() } {
            log::error!("vkDeviceWaitIdle failed while dropping the swapchain: {e}");
        }
        self.shared.retire();
        self.destroy_semaphores();
        self.images.clear();
        if self.handle != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle; the images are owned by the swapchain.
            unsafe { self.swapchain_fn.destroy_swapchain(self.handle, None) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
