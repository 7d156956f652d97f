//! [`Planned::execute_signalling`]: an execution that also signals the app's own semaphores and
//! fence.

use super::Planned;
use crate::error::Result;
use crate::exec::AppSignals;
use crate::fence::ExecutionFence;

impl Planned<'_> {
    /// [`Planned::execute`], also signalling the app's own semaphores and fence (for its frame
    /// pacing, or for work it submits itself): a semaphore when the execution's work on its
    /// queue is done, the fence when all of it is. See [`AppSignals`] for how, and what the
    /// fence costs (one more `vkQueueSubmit2`). The returned [`ExecutionFence`] works as
    /// ever: the app's fence says when the GPU is done, the `ExecutionFence` still decides
    /// when the execution's objects are released.
    ///
    /// Fails with [`Error::InvalidArgument`](crate::Error::InvalidArgument), submitting nothing, for a semaphore on a queue
    /// without work in the plan, or a fence for a plan without work.
    ///
    /// ```no_run
    /// # fn f(planned: vk_baton::Planned<'_>, device: &vk_baton::ash::Device,
    /// #      frame_done: vk_baton::ash::vk::Fence) -> vk_baton::Result<()> {
    /// let signals = vk_baton::AppSignals::new().fence(frame_done);
    /// // SAFETY: `frame_done` is an unsignalled fence of the graph's device that no other
    /// // submit uses, and it lives until it signals.
    /// let _fence = unsafe { planned.execute_signalling(&signals)? };
    /// // SAFETY: the fence is alive.
    /// unsafe { device.wait_for_fences(&[frame_done], true, u64::MAX) }.unwrap();
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// The library submits the raw handles and cannot check them. Each is of the graph's
    /// device and stays alive until the execution is complete. The fence is unsignalled and
    /// not in use by another pending submit. Each binary semaphore is unsignalled with no
    /// signal pending, and nothing waits on it before this execution is submitted. Each
    /// timeline semaphore's `value` is greater than its current value and than every value
    /// already pending a signal.
    pub unsafe fn execute_signalling(self, signals: &AppSignals) -> Result<ExecutionFence> {
        self.execute_with(signals)
    }
}
