//! [`AppSignals`]: semaphores and a fence of the app's that an execution signals, for the app's
//! own frame pacing and for work it submits itself.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::queue::Queue;
use ash::vk;

/// The app's own semaphores and fence, for an execution to signal
/// ([`crate::Planned::execute_signalling`], [`crate::HeldPlan::execute_signalling`]).
///
/// - **A semaphore on a queue** (binary, or a timeline value) is signalled when the
///   execution's work on that queue is done: it joins the signals of that queue's last batch,
///   at `ALL_COMMANDS`. It costs nothing beyond the signal: it rides on the `vkQueueSubmit2`
///   the execution makes anyway. The queue must have work in the execution.
/// - **A fence** is signalled when all of the execution is done, on every queue. Each queue's
///   `vkQueueSubmit2` already carries the library's own fence (which [`crate::ExecutionFence`]
///   waits on and which decides when the execution's objects are released), and a submit takes
///   one fence, so the app's fence costs one more `vkQueueSubmit2`: an empty batch on the queue
///   submitted to last, after its other submits, waiting at `ALL_COMMANDS` for the other queues'
///   last timeline values. A fence signal covers everything submitted to its queue before, so
///   the fence signals once every queue's part is complete. The execution must have work.
///
/// ```no_run
/// # fn f(planned: vk_baton::Planned<'_>, gfx: &vk_baton::Queue, frame_done: vk_baton::ash::vk::Fence,
/// #      rendered: vk_baton::ash::vk::Semaphore) -> vk_baton::Result<()> {
/// use vk_baton::AppSignals;
/// let signals = AppSignals::new().binary(gfx, rendered).fence(frame_done);
/// // SAFETY: `frame_done` is unsignalled and not in use; `rendered` is unsignalled with no
/// // signal pending, and waited on later; both live until the fence signals.
/// let fence = unsafe { planned.execute_signalling(&signals)? };
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct AppSignals {
    /// (queue, semaphore, the timeline value to signal; `None` for a binary semaphore).
    pub(crate) semaphores: Vec<(Queue, vk::Semaphore, Option<u64>)>,
    pub(crate) fence: vk::Fence,
}

impl AppSignals {
    /// Nothing to signal.
    pub fn new() -> Self {
        Self::default()
    }

    /// Signals the binary `semaphore` when the execution's work on `queue` is done.
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue, s: vk_baton::ash::vk::Semaphore) {
    /// let signals = vk_baton::AppSignals::new().binary(q, s);
    /// # }
    /// ```
    pub fn binary(mut self, queue: &Queue, semaphore: vk::Semaphore) -> Self {
        self.semaphores.push((queue.clone(), semaphore, None));
        self
    }

    /// Signals the timeline `semaphore` with `value` when the execution's work on `queue` is
    /// done. A value of 0 is refused when the execution starts (no signal can set it).
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue, s: vk_baton::ash::vk::Semaphore, frame: u64) {
    /// let signals = vk_baton::AppSignals::new().timeline(q, s, frame + 1);
    /// # }
    /// ```
    pub fn timeline(mut self, queue: &Queue, semaphore: vk::Semaphore, value: u64) -> Self {
        self.semaphores
            .push((queue.clone(), semaphore, Some(value)));
        self
    }

    /// Signals `fence` when all of the execution is done (one more `vkQueueSubmit2`: see the
    /// type's docs).
    ///
    /// ```no_run
    /// # fn f(fence: vk_baton::ash::vk::Fence) {
    /// let signals = vk_baton::AppSignals::new().fence(fence);
    /// # }
    /// ```
    pub fn fence(mut self, fence: vk::Fence) -> Self {
        self.fence = fence;
        self
    }
}

/// Refuses signals `plan` (on `queues`) cannot carry, before anything is recorded: a
/// semaphore on a queue without work in the plan, or a fence for a plan without work.
pub(crate) fn check(plan: &Plan, queues: &[Queue], signals: &AppSignals) -> Result<()> {
    for (queue, _, value) in &signals.semaphores {
        if *value == Some(0) {
            return Err(Error::InvalidArgument(format!(
                "an app timeline semaphore to signal with 0 on queue `{}`: a signal must \
                 raise the value",
                queue.name()
            )));
        }
        let with_work = (queues.iter().position(|q| q == queue))
            .filter(|&q| !plan.queues[q].batches.is_empty());
        if with_work.is_none() {
            return Err(Error::InvalidArgument(format!(
                "an app semaphore to signal on queue `{}`, which has no work in this execution",
                queue.name()
            )));
        }
    }
    let any_work = plan.queues.iter().any(|q| !q.batches.is_empty());
    if signals.fence != vk::Fence::null() && !any_work {
        return Err(Error::InvalidArgument(
            "an app fence to signal for an execution without work".into(),
        ));
    }
    Ok(())
}
