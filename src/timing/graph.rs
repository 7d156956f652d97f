//! What timing adds to the graph and its fences: [`Graph::set_gpu_timings`] turns it on,
//! [`ExecutionFence::take_gpu_timings`] hands the times over.

use super::{GpuTimings, TimestampSupport};
use crate::{ExecutionFence, Graph};

impl Graph {
    /// Times every pass on the GPU from now on (`Some`), or stops (`None`, the default). Each
    /// execution then writes a timestamp before and after each pass on the queues that have
    /// timestamps, and its fence hands over the times once complete
    /// ([`ExecutionFence::take_gpu_timings`]); see [`crate::timing`]. Off, nothing is written
    /// and no query pool is made.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let graph = ctx.graph()?;
    /// graph.set_gpu_timings(Some(ctx.timestamp_support()));
    /// let fence = graph.record().insert_pass("work", pass, q).finish()?.execute()?;
    /// fence.wait()?;
    /// println!("{}", fence.take_gpu_timings().expect("timed, and complete"));
    /// # Ok(()) }
    /// ```
    pub fn set_gpu_timings(&self, support: Option<TimestampSupport>) {
        self.pools().extensions().timing.support = support;
    }
}

impl ExecutionFence {
    /// The per-pass GPU times of the execution, once complete, for a graph with
    /// [`Graph::set_gpu_timings`] on; see [`crate::timing`]. `None` while the GPU is
    /// still running (this never blocks), for an untimed graph, and after the first call took
    /// them.
    ///
    /// ```no_run
    /// # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
    /// fence.wait()?;
    /// if let Some(times) = fence.take_gpu_timings() {
    ///     println!("gpu: {times}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn take_gpu_timings(&self) -> Option<GpuTimings> {
        self.completed()?.timing.take()
    }
}
