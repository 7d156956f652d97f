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
//! - **present fences**, where the device has `VK_EXT_swapchain_maintenance1`
//!   ([`Swapchain::use_present_fences`]): each present signals a fence, and the swapchain
//!   waits for those fences before it destroys its semaphores or a retired swapchain, which is
//!   the only way to know that the presentation engine let go of them.
//!
//! [`SwapchainSync`] holds that bookkeeping as plain data, testable without a surface.
//!
//! A swapchain the app made itself (and acquires from and presents itself) adopts the same
//! passes: [`wrap_swapchain_images`] wraps its images, and [`SwapchainAcquire::from_raw`] and
//! [`SwapchainPresent::from_raw`] take the app's semaphores (module `app`'s example). An app
//! that presents on a queue the library submits to presents under [`Queue::lock`].
//!
//! The transition to PRESENT_SRC_KHR is the graph's: [`SwapchainPresent`] declares
//! [`Access::PRESENT`] on the image and signals the image's present semaphore. Presenting
//! from a queue of another family than the one that rendered works the same way: insert
//! [`SwapchainPresent`] on the present queue and the graph releases the image on the
//! rendering family and acquires it on the present family before the signal. Out-of-date and
//! suboptimal are values ([`AcquireOutcome`], [`PresentOutcome`]), not errors.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, sc: &mut vk_baton_passes::Swapchain, render: &mut dyn vk_baton::Pass) -> vk_baton_passes::Result<()> {
//! use vk_baton_passes::{AcquireOutcome, PresentOutcome};
//! let graph = ctx.graph()?;
//! let frame = match sc.acquire(u64::MAX)? {
//!     AcquireOutcome::Acquired(frame) => frame,
//!     AcquireOutcome::OutOfDate => { sc.recreate(None)?; return Ok(()); }
//! };
//! let (mut acquire, mut present) = (frame.acquire_pass(), frame.present_pass());
//! let fence = graph.record()
//!     .insert_pass("acquire", &mut acquire, ctx.graphics())
//!     .insert_pass("render", render, ctx.graphics())        // writes frame.image()
//!     .insert_pass("present", &mut present, ctx.graphics())
//!     .finish()?.execute()?;
//! if sc.present(ctx.graphics(), &frame)? != PresentOutcome::Optimal || frame.suboptimal() {
//!     sc.recreate(None)?;
//! }
//! # drop(fence); Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use vk_baton::pass::ReplayKey;
use vk_baton::{
    Access, CompletionToken, Declare, Destroy, ImageDesc, Pass, Queue, Recorder, ResourceState,
    StImage,
};

mod app;
mod handle;
mod present_fences;
mod sync;

pub use app::wrap_swapchain_images;
pub use handle::{Swapchain, SwapchainConfig};
pub use sync::{IsComplete, SwapchainSync};

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
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The acquired image, to declare in the frame's passes.
    pub fn image(&self) -> &Arc<StImage> {
        &self.image
    }

    /// Whether the acquire reported the swapchain suboptimal (recreate after presenting).
    pub fn suboptimal(&self) -> bool {
        self.suboptimal
    }

    /// The pass that waits on the acquire semaphore before the image's first use.
    pub fn acquire_pass(&self) -> SwapchainAcquire {
        SwapchainAcquire {
            slot: self.slot,
            semaphore: self.acquire_semaphore,
            image: self.image.clone(),
            shared: Some(self.shared.clone()),
        }
    }

    /// The pass that moves the image to PRESENT_SRC_KHR (through the graph) and signals the
    /// image's present semaphore. Insert it on the queue you will present from.
    pub fn present_pass(&self) -> SwapchainPresent {
        SwapchainPresent {
            index: self.index,
            semaphore: self.present_semaphore,
            image: self.image.clone(),
            shared: Some(self.shared.clone()),
        }
    }
}

/// Waits on a frame's acquire semaphore before the first use of its swapchain image; from
/// [`Frame::acquire_pass`]. The image's contents are undefined after the wait, so the first
/// use's layout transition starts from UNDEFINED and chains from the wait's stages.
pub struct SwapchainAcquire {
    slot: usize,
    semaphore: vk::Semaphore,
    image: Arc<StImage>,
    /// The stock [`Swapchain`]'s bookkeeping; `None` for a swapchain the app made
    /// (`from_raw`), whose semaphores the app manages.
    shared: Option<Arc<Shared>>,
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
        if self.shared.as_ref().is_some_and(|s| s.retired()) {
            // The semaphore and the image are destroyed: declare neither; `record` returns
            // the error.
            log::debug!("{self:?}: its swapchain was recreated or dropped");
            return;
        }
        // SAFETY: the swapchain's own semaphore, alive while the frame is live (`record`
        // checks), handed to the vkAcquireNextImageKHR that returned this image; `record`
        // refuses a second use of the frame's slot before anything is submitted.
        unsafe { d.wait_binary(self.semaphore, Some(&self.image)) };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: waits for `{}` (slot {})",
            r.pass_name(),
            self.image.name(),
            self.slot
        );
        self.replayed(&r.completion())
    }

    /// Records no command. The stock swapchain's bookkeeping (which execution waits on the
    /// slot's semaphore) runs on replays too.
    fn replay_key(&self) -> Option<ReplayKey> {
        Some(no_command_key(0, &self.shared))
    }

    fn replayed(&mut self, completion: &CompletionToken) -> vk_baton::Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        shared.check_live(self)?;
        let mut sync = shared.sync.lock();
        sync.submitted(self.slot, completion.clone())
            .map_err(vk_baton::Error::from)
    }
}

/// The replay key of a swapchain pass, which records no command (its semaphore wait or
/// signal is in the submit, which the graph builds every frame): the same every frame, asking
/// for [`Pass::replayed`] where the stock swapchain keeps bookkeeping (`shared`).
fn no_command_key(value: u64, shared: &Option<Arc<Shared>>) -> ReplayKey {
    // SAFETY: the pass records no command.
    let key = unsafe { ReplayKey::new(value) };
    match shared {
        Some(_) => key.calling_replayed(),
        None => key,
    }
}

/// Moves a swapchain image to PRESENT_SRC_KHR and signals its present semaphore; from
/// [`Frame::present_pass`]. Records no command: the graph's barrier (or ownership transfer,
/// when the image was rendered on another family) does the transition.
pub struct SwapchainPresent {
    index: u32,
    semaphore: vk::Semaphore,
    image: Arc<StImage>,
    /// The stock [`Swapchain`]'s bookkeeping; `None` for a swapchain the app made
    /// (`from_raw`), whose semaphores the app manages.
    shared: Option<Arc<Shared>>,
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
        if self.shared.as_ref().is_some_and(|s| s.retired()) {
            // The semaphore and the image are destroyed: declare neither; `record` returns
            // the error.
            log::debug!("{self:?}: its swapchain was recreated or dropped");
            return;
        }
        d.uses(&self.image, Access::PRESENT);
        // SAFETY: the image's present semaphore, unsignalled since the present of its last
        // use waited on it; `record` refuses a second signal before anything is submitted.
        unsafe { d.signal_binary(self.semaphore) };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!("{}: `{}` to present", r.pass_name(), self.image.name());
        self.replayed(&r.completion())
    }

    /// Records no command. The stock swapchain's bookkeeping (which execution signals the
    /// image's present semaphore) runs on replays too.
    fn replay_key(&self) -> Option<ReplayKey> {
        Some(no_command_key(1, &self.shared))
    }

    fn replayed(&mut self, completion: &CompletionToken) -> vk_baton::Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        shared.check_live(self)?;
        let mut sync = shared.sync.lock();
        sync.present_signalled(self.index as usize, completion.clone())
            .map_err(vk_baton::Error::from)
    }
}
