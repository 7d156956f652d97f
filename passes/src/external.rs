//! Binary semaphores shared with code outside the graph: [`WaitExternal`] and
//! [`SignalExternal`]. Neither records a command; they end or start a batch on their queue.
//!
//! ```no_run
//! # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, ready: ash::vk::Semaphore, done: ash::vk::Semaphore,
//! #      work: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
//! use vk_baton::ash::vk;
//! use vk_baton_passes::{SignalExternal, WaitExternal};
//! let mut wait = WaitExternal::new(ready, vk::PipelineStageFlags2::COMPUTE_SHADER);
//! let mut signal = SignalExternal::new(done);
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
/// let wait = vk_baton_passes::WaitExternal::new(sem, ash::vk::PipelineStageFlags2::TRANSFER);
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
    /// let wait = vk_baton_passes::WaitExternal::new(sem, ash::vk::PipelineStageFlags2::FRAGMENT_SHADER);
    /// # }
    /// ```
    pub fn new(semaphore: vk::Semaphore, stages: vk::PipelineStageFlags2) -> Self {
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
    /// let wait = vk_baton_passes::WaitExternal::guarding(sem, img);
    /// # }
    /// ```
    pub fn guarding(semaphore: vk::Semaphore, image: Arc<StImage>) -> Self {
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
            Some(img) => d.wait_binary(self.semaphore, Some(img)),
            None => d.wait_binary_at(self.semaphore, self.stages),
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
/// let signal = vk_baton_passes::SignalExternal::new(sem);
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
    /// ```no_run
    /// # fn f(sem: ash::vk::Semaphore) {
    /// let signal = vk_baton_passes::SignalExternal::new(sem);
    /// # }
    /// ```
    pub fn new(semaphore: vk::Semaphore) -> Self {
        Self {
            semaphore,
            stages: None,
        }
    }

    /// Signals once `stages` of the earlier work on the queue are done.
    ///
    /// ```no_run
    /// # fn f(sem: ash::vk::Semaphore) {
    /// let signal = vk_baton_passes::SignalExternal::at(sem, ash::vk::PipelineStageFlags2::ALL_COMMANDS);
    /// # }
    /// ```
    pub fn at(semaphore: vk::Semaphore, stages: vk::PipelineStageFlags2) -> Self {
        Self {
            semaphore,
            stages: Some(stages),
        }
    }
}

impl Pass for SignalExternal {
    fn declare(&self, d: &mut Declare<'_>) {
        match self.stages {
            Some(s) => d.signal_binary_at(self.semaphore, s),
            None => d.signal_binary(self.semaphore),
        };
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!("{}: signals {:?}", r.pass_name(), self.semaphore);
        Ok(())
    }
}
