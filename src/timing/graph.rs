//! What timing adds to the graph and its fences: [`Graph::set_gpu_timings`] turns it on,
//! [`ExecutionFence::take_gpu_timings`] hands the times over.

use super::queries::{ExecutionTimer, GraphTiming};
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
        let mut extensions = self.pools().extensions();
        if support.is_none() && extensions.timing.is_none() {
            return;
        }
        let part = (extensions.timing).get_or_insert_with(|| Box::<GraphTiming>::default());
        if let Some(timing) = part.as_any_mut().downcast_mut::<GraphTiming>() {
            timing.support = support;
        }
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
        let mut completed = self.extensions()?;
        let timer = completed.timing.as_mut()?.as_any_mut();
        timer.downcast_mut::<ExecutionTimer>()?.take_times()
    }
}

/// The times of an execution's timing part (`run`, what [`crate::extensions::TimingRun`]
/// gives as `Any`) once it completed, without taking them from its fence.
#[allow(
    dead_code,
    reason = "only the report leaf calls it: unused without its feature"
)]
pub(crate) fn completed_times(run: &mut dyn std::any::Any) -> Option<&GpuTimings> {
    run.downcast_mut::<ExecutionTimer>()?.times()
}
