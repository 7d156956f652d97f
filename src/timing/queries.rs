//! The timestamp queries of timed executions: the `timing` feature's part of the graph
//! ([`GraphTiming`], its [`TimingHooks`]) and of each execution ([`ExecutionTimer`], its
//! [`TimingRun`]).
//!
//! An execution of a timed graph takes one `VkQueryPool` big enough for two queries per pass
//! when its recording starts; the pool goes back to the graph once the execution completed,
//! after [`ExecutionTimer::finish`] has read the results, and the execution's timer (with its
//! lists, and the times until they are taken) once its fence drops. A steady frame takes back
//! the pool and the timer the last one used: nothing is created.
//!
//! A recording kept to be replayed keeps its pool ([`KeptQueries`], shared with the
//! executions that read it through a [`KeptSlot`]): each replay's timer reads the same
//! queries, which the recording resets (or the timer resets on the host) before writing. The
//! pool goes back once the recording and every execution of it are done.

use super::{GpuTimings, PassTiming, TimestampSupport, TimingSpares};
use crate::error::{Error, Result};
use crate::extensions::{KeptTiming, TimingHooks, TimingRun};
use crate::pass::PassEntry;
use crate::plan::{Batch, Command};
use crate::queue::Queue;
use ash::vk;
use parking_lot::Mutex;
use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

/// The smallest query pool made: room for 32 passes.
const MIN_QUERIES: u32 = 64;

/// How many released timers are kept for the next executions.
const KEPT_TIMERS: usize = 8;

/// One query pool, with room for `capacity` queries.
#[derive(Clone, Copy, Debug, PartialEq)]
struct QuerySlot {
    pool: vk::QueryPool,
    capacity: u32,
}

/// What timed executions gave back, for the next ones.
#[derive(Default)]
struct Free {
    /// Query pools not in use.
    slots: Vec<QuerySlot>,
    /// Released timers, with their lists.
    #[allow(
        clippy::vec_box,
        reason = "each goes out as a `Box<dyn TimingRun>`, made once"
    )]
    timers: Vec<Box<ExecutionTimer>>,
}

/// A query pool that a kept recording writes into: back with the free ones once the
/// recording and every execution reading it let go.
pub(super) struct KeptSlot {
    slot: QuerySlot,
    free: Arc<Mutex<Free>>,
}

impl Drop for KeptSlot {
    fn drop(&mut self) {
        self.free.lock().slots.push(self.slot);
    }
}

/// A kept recording's timestamps: its pool, each pass's first query, and the passes timed
/// (their times unset), for the timers of its replays.
struct KeptQueries {
    slot: Arc<KeptSlot>,
    queries: Vec<Option<u32>>,
    passes: Vec<PassTiming>,
}

impl KeptTiming for KeptQueries {
    /// A timer that has not read the results yet holds the pool too (it lets go in
    /// `complete` or `release`).
    fn in_use(&self) -> bool {
        Arc::strong_count(&self.slot) > 1
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The graph's part of timing, installed by [`crate::Graph::set_gpu_timings`].
#[derive(Default)]
pub(super) struct GraphTiming {
    /// `Some`: executions are timed.
    pub(super) support: Option<TimestampSupport>,
    /// Shared with the timers, which give back to it from the fences.
    free: Arc<Mutex<Free>>,
    /// The finished timings' strings and lists.
    spares: TimingSpares,
}

/// The timestamp queries of one execution, the passes they time, and, once complete, the
/// times until a fence hands them over.
pub(super) struct ExecutionTimer {
    /// The query pool, until the execution completed.
    slot: Option<QuerySlot>,
    /// Or a kept recording's pool, which the timer reads but does not own.
    kept: Option<Arc<KeptSlot>>,
    period_ns: f32,
    /// Reset with `vkResetQueryPool` already; otherwise each batch resets its queries.
    host_reset: bool,
    /// Per pass of the execution: its first query, if timed.
    queries: Vec<Option<u32>>,
    /// The timed passes, in recording order; the `i`th uses queries `2i` and `2i + 1`.
    passes: Vec<PassTiming>,
    /// The raw results, read once complete.
    raw: Vec<u64>,
    /// The times, once complete, until taken.
    times: Option<GpuTimings>,
    free: Arc<Mutex<Free>>,
    spares: TimingSpares,
}

impl GraphTiming {
    /// A released timer, or a new one.
    fn timer(&self) -> Box<ExecutionTimer> {
        match self.free.lock().timers.pop() {
            Some(timer) => timer,
            None => Box::new(ExecutionTimer {
                slot: None,
                kept: None,
                period_ns: 0.0,
                host_reset: false,
                queries: Vec::new(),
                passes: Vec::new(),
                raw: Vec::new(),
                times: None,
                free: self.free.clone(),
                spares: self.spares.clone(),
            }),
        }
    }

    /// A free query pool with room for `needed` queries, or a new one.
    fn slot(&self, device: &ash::Device, needed: u32) -> Result<QuerySlot> {
        let mut free = self.free.lock();
        if let Some(i) = free.slots.iter().position(|s| s.capacity >= needed) {
            return Ok(free.slots.swap_remove(i));
        }
        let capacity = needed.next_power_of_two().max(MIN_QUERIES);
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(capacity);
        // SAFETY: valid create info on a live device; the pool is destroyed by `destroy` once
        // no execution uses it.
        let pool = unsafe { device.create_query_pool(&info, None) }
            .map_err(|e| Error::vk("vkCreateQueryPool", e))?;
        Ok(QuerySlot { pool, capacity })
    }
}

/// Timing in an execution: a query pool taken when recording starts, each batch's queries
/// handed out (and reset by its first piece without host reset), a timestamp written before
/// and after each pass, and the results read once the execution completed.
impl TimingHooks for GraphTiming {
    /// With host reset, the queries are reset here.
    fn start(&mut self, device: &ash::Device, passes: usize) -> Result<Option<Box<dyn TimingRun>>> {
        let Some(support) = &self.support else {
            return Ok(None);
        };
        if passes == 0 {
            return Ok(None);
        }
        let needed = u32::try_from(passes * 2)
            .map_err(|_| Error::InvalidArgument(format!("{passes} passes are too many to time")))?;
        let slot = self.slot(device, needed)?;
        if support.host_query_reset() {
            // SAFETY: the pool is not in use (new, or back from a completed or never submitted
            // execution), and the device has hostQueryReset (`with_host_query_reset`'s
            // contract).
            unsafe { device.reset_query_pool(slot.pool, 0, needed) };
        }
        let mut timer = self.timer();
        timer.slot = Some(slot);
        timer.period_ns = support.period_ns();
        timer.host_reset = support.host_query_reset();
        timer.queries.clear();
        timer.queries.resize(passes, None);
        timer.passes = self.spares.list();
        Ok(Some(timer))
    }

    fn mode(&self) -> u8 {
        match &self.support {
            None => 0,
            Some(s) if s.host_query_reset() => 2,
            Some(_) => 1,
        }
    }

    /// With host reset, the kept queries are reset here: no execution uses them (the
    /// recording is replayed only once its last execution completed).
    fn replay(
        &mut self,
        device: &ash::Device,
        kept: &dyn KeptTiming,
    ) -> Result<Option<Box<dyn TimingRun>>> {
        let (Some(support), Some(k)) = (&self.support, kept.as_any().downcast_ref::<KeptQueries>())
        else {
            return Ok(None);
        };
        let mut timer = self.timer();
        if support.host_query_reset() {
            let used = 2 * k.passes.len() as u32;
            // SAFETY: the pool is the kept recording's, whose executions are all complete;
            // the device has hostQueryReset (`with_host_query_reset`'s contract).
            unsafe { device.reset_query_pool(k.slot.slot.pool, 0, used) };
        }
        timer.kept = Some(k.slot.clone());
        timer.period_ns = support.period_ns();
        timer.host_reset = support.host_query_reset();
        timer.queries.clone_from(&k.queries);
        timer.passes = self.spares.list();
        let spares = &self.spares;
        let copy = |p: &PassTiming| {
            PassTiming::new(spares.name(), &p.pass, &p.queue, p.order, p.query, p.mask)
        };
        timer.passes.extend(k.passes.iter().map(copy));
        Ok(Some(timer))
    }

    fn time_batch(
        &self,
        run: &mut dyn TimingRun,
        batch: &Batch,
        passes: &[PassEntry<'_>],
        queue: &Queue,
    ) -> Option<Range<u32>> {
        let mask = self.support.as_ref()?.mask(queue.family(), queue.caps())?;
        let t = run.as_any_mut().downcast_mut::<ExecutionTimer>()?;
        let first = t.next_query();
        for c in &batch.commands {
            if let Command::Pass(i) = c {
                let (query, spare) = (t.next_query(), t.spares.name());
                let timing = PassTiming::new(spare, &passes[*i].name, queue, *i, query, mask);
                t.passes.push(timing);
                t.queries[*i] = Some(query);
            }
        }
        (!t.host_reset).then(|| first..t.next_query())
    }

    fn destroy(&mut self, device: &ash::Device) {
        let mut free = self.free.lock();
        for slot in free.slots.drain(..) {
            // SAFETY: no execution uses a free pool, and none is in flight (the caller's
            // contract).
            unsafe { device.destroy_query_pool(slot.pool, None) };
        }
        // They hold the list they were kept in.
        free.timers.clear();
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl TimingRun for ExecutionTimer {
    fn begin_piece(&self, device: &ash::Device, cmd: vk::CommandBuffer, reset: &Range<u32>) {
        let Some(slot) = self.pool() else { return };
        // SAFETY: `cmd` is recording, outside any render pass, on a timed queue; the queries
        // are the batch's, within the execution's pool, and written only after this reset in
        // submission order (later in this command buffer or in the batch's next ones).
        unsafe { device.cmd_reset_query_pool(cmd, slot.pool, reset.start, reset.len() as u32) };
    }

    fn before_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        if let Some((pool, q)) = self.query(pass) {
            let top = vk::PipelineStageFlags2::TOP_OF_PIPE;
            // SAFETY: `cmd` is recording on a queue with timestamps; the query was reset (on
            // the host, or at the start of the batch) and is written once.
            unsafe { device.cmd_write_timestamp2(cmd, top, pool, q) };
        }
    }

    fn after_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        if let Some((pool, q)) = self.query(pass) {
            let all = vk::PipelineStageFlags2::ALL_COMMANDS;
            // SAFETY: as in `before_pass`, for the pass's second query.
            unsafe { device.cmd_write_timestamp2(cmd, all, pool, q + 1) };
        }
    }

    /// Reads the times, and gives the query pool back (or lets go of the kept one).
    fn complete(&mut self, device: &ash::Device) {
        self.times = self.finish(device);
        if let Some(slot) = self.slot.take() {
            self.free.lock().slots.push(slot);
        }
        self.kept = None;
    }

    fn complete_unseen(&mut self, device: &ash::Device) {
        // Only to log them, if anyone reads the log.
        if log::log_enabled!(target: super::LOG_TARGET, log::Level::Debug) {
            self.finish(device);
        }
    }

    fn release(mut self: Box<Self>) {
        self.times = None;
        self.kept = None;
        self.spares.give(std::mem::take(&mut self.passes));
        let home = self.free.clone();
        let mut free = home.lock();
        if let Some(slot) = self.slot.take() {
            free.slots.push(slot);
        }
        if free.timers.len() < KEPT_TIMERS {
            free.timers.push(self);
        }
    }

    /// The pool becomes the kept recording's; this execution reads it as a replay would.
    fn keep_into(&mut self, kept: &mut Option<Box<dyn KeptTiming>>) {
        let Some(slot) = self.slot.take() else {
            *kept = None;
            return;
        };
        let free = self.free.clone();
        let shared = Arc::new(KeptSlot { slot, free });
        self.kept = Some(shared.clone());
        let old = kept
            .as_mut()
            .and_then(|k| k.as_any_mut().downcast_mut::<KeptQueries>());
        match old {
            // The old recording's pool goes back as its last holder lets go (here).
            Some(k) => {
                k.slot = shared;
                k.queries.clone_from(&self.queries);
                k.passes.clone_from(&self.passes);
            }
            None => {
                *kept = Some(Box::new(KeptQueries {
                    slot: shared,
                    queries: self.queries.clone(),
                    passes: self.passes.clone(),
                }))
            }
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl ExecutionTimer {
    /// The query pool it writes or reads: its own, or a kept recording's.
    fn pool(&self) -> Option<QuerySlot> {
        self.slot.or_else(|| self.kept.as_ref().map(|k| k.slot))
    }

    /// The first of the two queries for the next pass timed.
    fn next_query(&self) -> u32 {
        2 * self.passes.len() as u32
    }

    /// The query pool and first query of pass `pass`, if it is timed.
    #[inline]
    fn query(&self, pass: usize) -> Option<(vk::QueryPool, u32)> {
        let q = self.queries.get(pass).copied().flatten()?;
        Some((self.pool()?.pool, q))
    }

    /// The times read when the execution completed, handed over once.
    pub(super) fn take_times(&mut self) -> Option<GpuTimings> {
        self.times.take()
    }

    /// The times read when the execution completed, left for the fence to hand over.
    pub(super) fn times(&self) -> Option<&GpuTimings> {
        self.times.as_ref()
    }

    /// Reads the timestamps of a completed execution into its passes' times and hands them
    /// over; the timer keeps an empty list. `None`, with an error logged, if the results are
    /// not there (which a completed execution rules out).
    fn finish(&mut self, device: &ash::Device) -> Option<GpuTimings> {
        let count = self.next_query();
        let slot = self.pool().filter(|_| count > 0)?;
        let raw = &mut self.raw;
        raw.clear();
        raw.resize(count as usize, 0);
        // SAFETY: every one of these queries was reset and then written by the execution,
        // whose fences have signalled; the pool is alive until the timer gives it back.
        let read = unsafe {
            device.get_query_pool_results(slot.pool, 0, raw, vk::QueryResultFlags::TYPE_64)
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
        let mut extensions = graph.pools().extensions();
        let Some(timing) = extensions.timing.as_mut() else {
            return Vec::new();
        };
        let timing: &mut super::GraphTiming = timing.as_any_mut().downcast_mut().unwrap();
        let free = timing.free.lock();
        free.slots.iter().map(|s| (s.pool, s.capacity)).collect()
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
