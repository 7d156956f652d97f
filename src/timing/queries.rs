//! The timestamp queries of timed executions, and the `timing` feature's hooks
//! ([`TimingHooks`]): what the executor calls to time each pass.
//!
//! An execution of a timed graph takes one `VkQueryPool` big enough for two queries per pass
//! ([`GraphTiming::start`]); it comes back with the execution's other objects once the
//! fences signal, after [`ExecutionTimer::finish`] has read the results. A steady frame takes
//! back the pool the last one used: nothing is created.

use super::{GpuTimings, PassTiming, TimestampSupport, TimingSpares};
use crate::error::{Error, Result};
use crate::extensions::TimingHooks;
use crate::pass::PassEntry;
use crate::plan::{Batch, Command};
use crate::queue::Queue;
use ash::vk;
use std::ops::Range;

/// The smallest query pool made: room for 32 passes.
const MIN_QUERIES: u32 = 64;

/// One query pool with room for `capacity` queries, the array its results are read into, and
/// the list of each pass's first query, both kept with the pool.
struct QuerySlot {
    pool: vk::QueryPool,
    capacity: u32,
    raw: Vec<u64>,
    /// Per pass of the execution: its first query, if timed.
    queries: Vec<Option<u32>>,
}

/// The graph's part of timing, kept with its command pools (locked while recording).
#[derive(Default)]
pub(crate) struct GraphTiming {
    /// `Some`: executions are timed ([`crate::Graph::set_gpu_timings`]).
    pub(super) support: Option<TimestampSupport>,
    /// Query pools not in use.
    free: Vec<QuerySlot>,
    /// The finished timings' strings and lists.
    spares: TimingSpares,
}

/// The timestamp queries of one execution, and the passes they time.
pub(crate) struct ExecutionTimer {
    slot: QuerySlot,
    period_ns: f32,
    /// Reset with `vkResetQueryPool` already; otherwise each batch resets its queries.
    host_reset: bool,
    /// The timed passes, in recording order; the `i`th uses queries `2i` and `2i + 1`.
    passes: Vec<PassTiming>,
    spares: TimingSpares,
}

impl GraphTiming {
    /// A timer for an execution of `passes` passes, when timings are on: a free query pool
    /// with room for two queries per pass, or a new one. With host reset, its queries are
    /// reset here.
    fn timer(&mut self, device: &ash::Device, passes: usize) -> Result<Option<ExecutionTimer>> {
        let Some(support) = &self.support else {
            return Ok(None);
        };
        if passes == 0 {
            return Ok(None);
        }
        let needed = u32::try_from(passes * 2)
            .map_err(|_| Error::InvalidArgument(format!("{passes} passes are too many to time")))?;
        let mut slot = match self.free.iter().position(|s| s.capacity >= needed) {
            Some(i) => self.free.swap_remove(i),
            None => {
                let capacity = needed.next_power_of_two().max(MIN_QUERIES);
                let info = vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(capacity);
                // SAFETY: valid create info on a live device; the pool is destroyed by
                // `destroy` once no execution uses it.
                let pool = unsafe { device.create_query_pool(&info, None) }
                    .map_err(|e| Error::vk("vkCreateQueryPool", e))?;
                QuerySlot {
                    pool,
                    capacity,
                    raw: Vec::new(),
                    queries: Vec::new(),
                }
            }
        };
        slot.queries.clear();
        slot.queries.resize(passes, None);
        if support.host_query_reset() {
            // SAFETY: the pool is not in use (new, or back from a completed or never submitted
            // execution), and the device has hostQueryReset (`with_host_query_reset`'s
            // contract).
            unsafe { device.reset_query_pool(slot.pool, 0, needed) };
        }
        Ok(Some(ExecutionTimer {
            slot,
            period_ns: support.period_ns(),
            host_reset: support.host_query_reset(),
            passes: self.spares.list(),
            spares: self.spares.clone(),
        }))
    }

    /// Takes back an execution's timer, done with (or never submitted).
    fn give(&mut self, timer: ExecutionTimer) {
        let ExecutionTimer {
            slot,
            passes,
            spares,
            ..
        } = timer;
        spares.give(passes);
        self.free.push(slot);
    }
}

/// Timing in an execution: a query pool taken when recording starts, each batch's queries
/// handed out (and reset by its first piece without host reset), a timestamp written before
/// and after each pass, and the results read once the execution completed.
impl TimingHooks for GraphTiming {
    /// `None` when the graph is untimed, or the execution has no pass.
    type Execution = Option<ExecutionTimer>;
    /// `None` when untimed, and after the fence's first call took them.
    type Completed = Option<GpuTimings>;

    fn start(&mut self, device: &ash::Device, passes: usize) -> Result<Self::Execution> {
        self.timer(device, passes)
    }

    fn time_batch(
        &self,
        run: &mut Self::Execution,
        batch: &Batch,
        passes: &[PassEntry<'_>],
        queue: &Queue,
    ) -> Option<Range<u32>> {
        let mask = self.support.as_ref()?.mask(queue.family(), queue.caps())?;
        let t = run.as_mut()?;
        let first = t.next_query();
        for c in &batch.commands {
            if let Command::Pass(i) = c {
                let (query, spare) = (t.next_query(), t.spares.name());
                let timing = PassTiming::new(spare, &passes[*i].name, queue, *i, query, mask);
                t.passes.push(timing);
                t.slot.queries[*i] = Some(query);
            }
        }
        (!t.host_reset).then(|| first..t.next_query())
    }

    fn begin_piece(
        run: &Self::Execution,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        reset: &Range<u32>,
    ) {
        let Some(t) = run else { return };
        // SAFETY: `cmd` is recording, outside any render pass, on a timed queue; the queries
        // are the batch's, within the execution's pool, and written only after this reset in
        // submission order (later in this command buffer or in the batch's next ones).
        unsafe { device.cmd_reset_query_pool(cmd, t.slot.pool, reset.start, reset.len() as u32) };
    }

    #[inline]
    fn before_pass(
        run: &Self::Execution,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        pass: usize,
    ) {
        if let Some((pool, q)) = run.as_ref().and_then(|t| t.query(pass)) {
            let top = vk::PipelineStageFlags2::TOP_OF_PIPE;
            // SAFETY: `cmd` is recording on a queue with timestamps; the query was reset (on
            // the host, or at the start of the batch) and is written once.
            unsafe { device.cmd_write_timestamp2(cmd, top, pool, q) };
        }
    }

    #[inline]
    fn after_pass(
        run: &Self::Execution,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        pass: usize,
    ) {
        if let Some((pool, q)) = run.as_ref().and_then(|t| t.query(pass)) {
            let all = vk::PipelineStageFlags2::ALL_COMMANDS;
            // SAFETY: as in `before_pass`, for the pass's second query.
            unsafe { device.cmd_write_timestamp2(cmd, all, pool, q + 1) };
        }
    }

    fn complete(run: &mut Self::Execution, device: &ash::Device) -> Self::Completed {
        run.as_mut()?.finish(device)
    }

    fn complete_unseen(run: &mut Self::Execution, device: &ash::Device) {
        // Only to log them, if anyone reads the log.
        if log::log_enabled!(target: super::LOG_TARGET, log::Level::Debug) {
            if let Some(t) = run {
                t.finish(device);
            }
        }
    }

    fn recycle(&mut self, run: Self::Execution) {
        if let Some(t) = run {
            self.give(t);
        }
    }

    fn destroy(&mut self, device: &ash::Device) {
        for slot in self.free.drain(..) {
            // SAFETY: no execution uses a free pool, and none is in flight (the caller's
            // contract).
            unsafe { device.destroy_query_pool(slot.pool, None) };
        }
    }
}

impl ExecutionTimer {
    /// The query pool and first query of pass `pass`, if it is timed.
    #[inline]
    fn query(&self, pass: usize) -> Option<(vk::QueryPool, u32)> {
        let q = self.slot.queries.get(pass).copied().flatten()?;
        Some((self.slot.pool, q))
    }

    /// The first of the two queries for the next pass timed.
    fn next_query(&self) -> u32 {
        2 * self.passes.len() as u32
    }

    /// Reads the timestamps of a completed execution into its passes' times and hands them
    /// over; the timer keeps an empty list. `None`, with an error logged, if the results are
    /// not there (which a completed execution rules out).
    fn finish(&mut self, device: &ash::Device) -> Option<GpuTimings> {
        let count = self.next_query();
        if count == 0 {
            return None;
        }
        let raw = &mut self.slot.raw;
        raw.clear();
        raw.resize(count as usize, 0);
        // SAFETY: every one of these queries was reset and then written by the execution,
        // whose fences have signalled; the pool is alive until the timer is given back.
        let read = unsafe {
            device.get_query_pool_results(self.slot.pool, 0, raw, vk::QueryResultFlags::TYPE_64)
        };
        if let Err(e) = read {
            log::error!("vkGetQueryPoolResults of a completed execution failed: {e}");
            return None;
        }
        for t in &mut self.passes {
            let q = t.query as usize;
            t.resolve(raw[q], raw[q + 1], self.period_ns);
        }
        let passes = std::mem::take(&mut self.passes);
        let times = GpuTimings::new(passes, self.spares.clone());
        if log::log_enabled!(target: super::LOG_TARGET, log::Level::Debug) {
            log::debug!(target: super::LOG_TARGET, "gpu: {times}");
        }
        Some(times)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Access, BufferDesc, Context, Graph};
    use ash::vk;

    /// (pool handle, capacity) of every free query pool of `graph`.
    fn free(graph: &Graph) -> Vec<(vk::QueryPool, u32)> {
        let extensions = graph.pools().extensions();
        let free = &extensions.timing.free;
        free.iter().map(|s| (s.pool, s.capacity)).collect()
    }

    /// Executes `passes` fills of `buf` on the graphics queue.
    fn run(
        ctx: &Context,
        graph: &Graph,
        buf: &std::sync::Arc<crate::StBuffer>,
        passes: usize,
    ) -> crate::ExecutionFence {
        let mut b = graph.record();
        for _ in 0..passes {
            b = b.insert_fn(
                "fill",
                ctx.graphics(),
                |d| {
                    d.uses(buf, Access::TRANSFER_WRITE);
                },
                |r| {
                    // SAFETY: the buffer is alive and in the declared state.
                    unsafe { r.device().cmd_fill_buffer(r.cmd(), buf.handle(), 0, 64, 1) };
                    Ok(())
                },
            );
        }
        b.finish().unwrap().execute().unwrap()
    }

    #[test]
    fn query_pools_are_made_only_when_timed_and_reused_frame_after_frame() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let buf = ctx
            .buffer(
                BufferDesc::new(64, vk::BufferUsageFlags::TRANSFER_DST),
                "buf",
            )
            .unwrap();
        let graph = ctx.graph().unwrap();
        for _ in 0..2 {
            run(&ctx, &graph, &buf, 3).wait().unwrap();
        }
        assert_eq!(free(&graph), [], "untimed: no query pool at all");

        graph.set_gpu_timings(Some(ctx.timestamp_support()));
        run(&ctx, &graph, &buf, 3).wait().unwrap();
        let first = free(&graph);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].1, super::MIN_QUERIES);
        for _ in 0..3 {
            let fence = run(&ctx, &graph, &buf, 3);
            assert_eq!(free(&graph), [], "in use");
            fence.wait().unwrap();
            assert_eq!(free(&graph), first, "the same pool again");
        }

        // Two executions in flight take two pools; a larger one is made for more passes.
        let a = run(&ctx, &graph, &buf, 3);
        let b = run(&ctx, &graph, &buf, 40);
        a.wait().unwrap();
        b.wait().unwrap();
        let mut both = free(&graph);
        both.sort_by_key(|s| s.1);
        assert_eq!(both.len(), 2);
        assert_eq!((both[0], both[1].1), (first[0], 128));

        graph.set_gpu_timings(None);
        run(&ctx, &graph, &buf, 3).wait().unwrap();
        assert_eq!(free(&graph).len(), 2, "kept, unused, until the graph drops");
        drop(graph);
        let m = ctx.validation_messages();
        assert!(m == 0, "{m}");
    }
}
