//! Binary semaphores shared with code outside the graph: [`WaitExternal`] and
//! [`SignalExternal`]. Neither records a command; they end or start a batch on their queue.
//!
//! ```no_run
//! # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, ready: ash::vk::Semaphore, done: ash::vk::Semaphore,
//! #      work: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
//! use vk_baton::ash::vk;
//! use vk_baton_passes::{SignalExternal, WaitExternal};
//! // SAFETY: the app submitted the signal of `ready` before this graph executes, and waits
//! // on `done` after it; both semaphores outlive the execution.
//! let (mut wait, mut signal) = unsafe {
//!     (WaitExternal::new(ready, vk::PipelineStageFlags2::COMPUTE_SHADER), SignalExternal::new(done))
//! };
//! graph.record()
//!     .insert_pass("wait", &mut wait, q)
//!     .insert_pass("work", work, q)
//!     .insert_pass("signal", &mut signal, q)
//!     .finish()?.execute()?;
//! # Ok(()) }
//! ```

use ash::vk;
use std::sync::Arc;
use vk_baton::{Declare, Pass, Recorder, StImage};

/// Waits on a binary semaphore signalled outside the graph (another API, another graph's
/// [`SignalExternal`], the app's own submit). Later work on the queue waits at `stages`.
///
/// ```no_run
/// # fn f(sem: ash::vk::Semaphore) {
/// // SAFETY: the app's submit that signals `sem` comes before every execution of the pass.
/// let wait = unsafe { vk_baton_passes::WaitExternal::new(sem, ash::vk::PipelineStageFlags2::TRANSFER) };
/// # }
/// ```
#[derive(Debug)]
pub struct WaitExternal {
    semaphore: vk::Semaphore,
    stages: vk::PipelineStageFlags2,
    guards: Option<Arc<StImage>>,
}

impl WaitExternal {
    /// Waits at `stages` (the stages of the work the semaphore must come before).
    ///
    /// ```no_run
    /// # fn f(sem: ash::vk::Semaphore) {
    /// // SAFETY: see the type's example.
    /// let wait = unsafe { vk_baton_passes::WaitExternal::new(sem, ash::vk::PipelineStageFlags2::FRAGMENT_SHADER) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// Every graph the pass is inserted in meets [`Declare::wait_binary`]'s contract when it
    /// executes: `semaphore` is a live binary semaphore of the graph's device, with a signal
    /// submitted that no other wait consumes.
    pub unsafe fn new(semaphore: vk::Semaphore, stages: vk::PipelineStageFlags2) -> Self {
        Self {
            semaphore,
            stages,
            guards: None,
        }
    }

    /// Waits before the first use of `image`, which the semaphore makes ready with undefined
    /// contents (as after a swapchain acquire): the wait's stages become those of the image's
    /// first use, and its layout transition chains from the wait.
    ///
    /// ```no_run
    /// # fn f(sem: ash::vk::Semaphore, img: std::sync::Arc<vk_baton::StImage>) {
    /// // SAFETY: `sem` is signalled by the acquire that made `img` ready.
    /// let wait = unsafe { vk_baton_passes::WaitExternal::guarding(sem, img) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`WaitExternal::new`].
    pub unsafe fn guarding(semaphore: vk::Semaphore, image: Arc<StImage>) -> Self {
        Self {
            semaphore,
            stages: vk::PipelineStageFlags2::NONE,
            guards: Some(image),
        }
    }
}

impl Pass for WaitExternal {
    fn declare(&self, d: &mut Declare<'_>) {
        match &self.guards {
            // SAFETY: the constructor's contract.
            Some(img) => unsafe { d.wait_binary(self.semaphore, Some(img)) },
            // SAFETY: the constructor's contract.
            None => unsafe { d.wait_binary_at(self.semaphore, self.stages) },
        };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!("{}: waits on {:?}", r.pass_name(), self.semaphore);
        Ok(())
    }
}

/// Signals a binary semaphore after the work inserted before it on the same queue.
///
/// ```no_run
/// # fn f(sem: ash::vk::Semaphore) {
/// // SAFETY: `sem` is unsignalled and waited on after each execution of the pass.
/// let signal = unsafe { vk_baton_passes::SignalExternal::new(sem) };
/// # }
/// ```
#[derive(Debug)]
pub struct SignalExternal {
    semaphore: vk::Semaphore,
    stages: Option<vk::PipelineStageFlags2>,
}

impl SignalExternal {
    /// Signals once the earlier work on the queue is done (the planner picks the stages).
    ///
    /// # Safety
    ///
    /// Every graph the pass is inserted in meets [`Declare::signal_binary`]'s contract when
    /// it executes: `semaphore` is a live binary semaphore of the graph's device, unsignalled,
    /// with no signal pending.
    pub unsafe fn new(semaphore: vk::Semaphore) -> Self {
        Self {
            semaphore,
            stages: None,
        }
    }

    /// Signals once `stages` of the earlier work on the queue are done.
    ///
    /// ```no_run
    /// # fn f(sem: ash::vk::Semaphore) {
    /// // SAFETY: see the type's example.
    /// let signal = unsafe { vk_baton_passes::SignalExternal::at(sem, ash::vk::PipelineStageFlags2::ALL_COMMANDS) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`SignalExternal::new`].
    pub unsafe fn at(semaphore: vk::Semaphore, stages: vk::PipelineStageFlags2) -> Self {
        Self {
            semaphore,
            stages: Some(stages),
        }
    }
}

impl Pass for SignalExternal {
    fn declare(&self, d: &mut Declare<'_>) {
        match self.stages {
            // SAFETY: the constructor's contract.
            Some(s) => unsafe { d.signal_binary_at(self.semaphore, s) },
            // SAFETY: the constructor's contract.
            None => unsafe { d.signal_binary(self.semaphore) },
        };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!("{}: signals {:?}", r.pass_name(), self.semaphore);
        Ok(())
    }
}
