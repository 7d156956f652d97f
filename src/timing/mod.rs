//! Per-pass GPU times, from timestamp queries written around each pass.
//!
//! Timing is off by default and then costs nothing. [`crate::Graph::set_gpu_timings`] turns it
//! on for one graph with the device's [`TimestampSupport`]; every execution then writes a
//! timestamp before and after each pass on the queues that have timestamps, and once the
//! execution is complete its fence hands over the times:
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
//! let graph = ctx.graph()?;
//! graph.set_gpu_timings(Some(ctx.timestamp_support()));
//! let fence = graph.record().insert_pass("blur", pass, q).finish()?.execute()?;
//! fence.wait()?;
//! if let Some(times) = fence.take_gpu_timings() {
//!     for t in &times {
//!         println!("{} on {}: {:.3} ms", t.pass(), t.queue().name(), t.duration_ms());
//!     }
//!     println!("{times}"); // "blur 0.120 ms (graphics)"
//! }
//! # Ok(()) }
//! ```
//!
//! With the `log` crate at debug level for the target `vk_baton::timing`
//! (`RUST_LOG=vk_baton::timing=debug` with `env_logger`), every completed execution of a timed
//! graph also logs one line of its times (`gpu: blur 0.120 ms (graphics), ...`), whether or not
//! anything takes them from the fence.
//!
//! # What a time means
//!
//! The start is written with `VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT` after the barriers before
//! the pass, the end with `VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT` after its last command. So a
//! pass's time is from when the queue reached it to when all of its work (and anything still
//! running before it) finished: on a queue that runs one pass at a time, the pass's own time.
//! Vulkan only promises that timestamps of one queue compare with each other: compare starts
//! and ends on the same queue, and durations across queues.

use crate::queue::Queue;
use ash::vk;
use parking_lot::Mutex;
use std::fmt;
use std::sync::Arc;

mod graph;

#[allow(
    unused_imports,
    reason = "only the report leaf calls it: unused without its feature"
)]
pub(crate) use graph::completed_times;
mod queries;

/// The `log` target of the per-execution line of GPU times.
pub(crate) const LOG_TARGET: &str = "vk_baton::timing";

/// What a device can time: the length of one timestamp tick and, per queue family, how many
/// bits of a timestamp are valid (0: the family has no timestamps, and its passes are not
/// timed). From `vk_baton_context::Context::timestamp_support`, or
/// [`TimestampSupport::query`] for an app's own device.
///
/// ```no_run
/// # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice) {
/// // SAFETY: `physical_device` belongs to `instance`, which is alive.
/// let support = unsafe { vk_baton::timing::TimestampSupport::query(instance, physical_device) };
/// println!("one tick is {} ns; family 0 has {} valid bits", support.period_ns(), support.valid_bits(0));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TimestampSupport {
    period_ns: f32,
    /// `timestampValidBits` by queue family index.
    valid_bits: Vec<u32>,
    host_reset: bool,
}

impl TimestampSupport {
    /// Reads `timestampPeriod` and every queue family's `timestampValidBits`. Queries are
    /// then reset with `vkCmdResetQueryPool`, which only graphics and compute queues allow:
    /// passes on transfer-only queues are timed only with
    /// [`TimestampSupport::with_host_query_reset`].
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// // SAFETY: the context's physical device belongs to its instance.
    /// let support = unsafe {
    ///     vk_baton::timing::TimestampSupport::query(ctx.instance(), ctx.physical_device())
    /// };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// `physical_device` is a physical device of `instance`, and `instance` is alive.
    pub unsafe fn query(instance: &ash::Instance, physical_device: vk::PhysicalDevice) -> Self {
        // SAFETY: plain queries on a physical device of `instance` (this function's contract).
        let (props, families) = unsafe {
            (
                instance.get_physical_device_properties(physical_device),
                instance.get_physical_device_queue_family_properties(physical_device),
            )
        };
        TimestampSupport {
            period_ns: props.limits.timestamp_period,
            valid_bits: families.iter().map(|f| f.timestamp_valid_bits).collect(),
            host_reset: false,
        }
    }

    /// The same support, resetting queries on the host with `vkResetQueryPool` before each
    /// execution instead of in its command buffers: cheaper, and it times transfer-only
    /// queues too.
    ///
    /// ```no_run
    /// # fn f(support: vk_baton::timing::TimestampSupport) {
    /// // SAFETY: the app created its device with `hostQueryReset` enabled.
    /// let support = unsafe { support.with_host_query_reset() };
    /// assert!(support.host_query_reset());
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The device of every graph this support is given to was created with the
    /// `hostQueryReset` feature (Vulkan 1.2) enabled.
    pub unsafe fn with_host_query_reset(mut self) -> Self {
        self.host_reset = true;
        self
    }

    /// Nanoseconds per timestamp tick (`timestampPeriod`).
    pub fn period_ns(&self) -> f32 {
        self.period_ns
    }

    /// `timestampValidBits` of queue family `family` (0 for a family the device does not have).
    pub fn valid_bits(&self, family: u32) -> u32 {
        self.valid_bits.get(family as usize).copied().unwrap_or(0)
    }

    /// Whether queries are reset on the host ([`TimestampSupport::with_host_query_reset`]).
    pub fn host_query_reset(&self) -> bool {
        self.host_reset
    }

    /// The mask of a timestamp's valid bits on a queue of `family` with capabilities `caps`, or
    /// `None` where its passes cannot be timed: no valid bits, or no way to reset the queries
    /// (`vkCmdResetQueryPool` needs a graphics or compute queue).
    pub(crate) fn mask(&self, family: u32, caps: vk::QueueFlags) -> Option<u64> {
        let bits = self.valid_bits(family);
        let resettable =
            self.host_reset || caps.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE);
        match bits {
            0 => None,
            _ if !resettable => None,
            64.. => Some(u64::MAX),
            b => Some((1u64 << b) - 1),
        }
    }

    #[cfg(test)]
    pub(crate) fn for_tests(period_ns: f32, valid_bits: Vec<u32>, host_reset: bool) -> Self {
        TimestampSupport {
            period_ns,
            valid_bits,
            host_reset,
        }
    }
}

/// The GPU time of one pass of one execution: see the [module](self) for what it measures.
///
/// ```no_run
/// # fn f(t: &vk_baton::timing::PassTiming) {
/// println!("{} on {}: {} ns from {} to {}", t.pass(), t.queue().name(), t.duration_ns(), t.start_ns(), t.end_ns());
/// # }
/// ```
#[derive(Clone)]
pub struct PassTiming {
    pass: String,
    queue: Queue,
    start_ns: u64,
    end_ns: u64,
    /// The pass's index in program order.
    pub(crate) order: usize,
    /// Its first query (the start; the end is the next one).
    pub(crate) query: u32,
    /// The valid bits of its queue's timestamps.
    pub(crate) mask: u64,
}

impl PassTiming {
    /// A pass about to be timed with queries `query` and `query + 1`; `name` is a spare
    /// string, refilled.
    pub(crate) fn new(
        mut name: String,
        pass: &str,
        queue: &Queue,
        order: usize,
        query: u32,
        mask: u64,
    ) -> Self {
        name.clear();
        name.push_str(pass);
        PassTiming {
            pass: name,
            queue: queue.clone(),
            start_ns: 0,
            end_ns: 0,
            order,
            query,
            mask,
        }
    }

    /// The pass's name.
    pub fn pass(&self) -> &str {
        &self.pass
    }

    /// The queue it ran on.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// When the queue reached the pass, in nanoseconds of the queue's timestamp clock.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// When the pass's work had finished, on the same clock; never before the start.
    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// `end_ns - start_ns`.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// The duration in milliseconds.
    pub fn duration_ms(&self) -> f64 {
        self.duration_ns() as f64 / 1e6
    }

    /// Sets the times from the two raw timestamps. The end is taken as the start plus the
    /// ticks between them modulo the valid bits, so a counter that wrapped in between still
    /// gives the right duration and an end after the start.
    pub(crate) fn resolve(&mut self, start_ticks: u64, end_ticks: u64, period_ns: f32) {
        let start = start_ticks & self.mask;
        let ticks = end_ticks.wrapping_sub(start) & self.mask;
        let ns = |t: u64| (t as f64 * period_ns as f64) as u64;
        self.start_ns = ns(start);
        self.end_ns = self.start_ns.saturating_add(ns(ticks));
    }
}

impl fmt::Debug for PassTiming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PassTiming")
            .field("pass", &self.pass)
            .field("queue", &self.queue.name())
            .field("start_ns", &self.start_ns)
            .field("end_ns", &self.end_ns)
            .finish()
    }
}

/// Strings and lists of finished timings, for the next executions: a frame like the last one
/// allocates nothing for its timings either.
#[derive(Clone, Default)]
pub(crate) struct TimingSpares(Arc<Mutex<SpareLists>>);

#[derive(Default)]
struct SpareLists {
    names: Vec<String>,
    lists: Vec<Vec<PassTiming>>,
}

/// How many spare lists and names are kept at most.
const KEPT_LISTS: usize = 8;
const KEPT_NAMES: usize = 4096;

impl TimingSpares {
    /// An empty list, with the capacity of one used before if there is one.
    pub(crate) fn list(&self) -> Vec<PassTiming> {
        self.0.lock().lists.pop().unwrap_or_default()
    }

    /// A string to refill with a pass name.
    pub(crate) fn name(&self) -> String {
        self.0.lock().names.pop().unwrap_or_default()
    }

    /// Keeps `list`'s strings and allocation, emptying it.
    pub(crate) fn give(&self, mut list: Vec<PassTiming>) {
        if list.capacity() == 0 {
            return;
        }
        let mut s = self.0.lock();
        let room = KEPT_NAMES.saturating_sub(s.names.len());
        let names = list.drain(..).map(|t| t.pass).take(room);
        s.names.extend(names);
        list.clear();
        if s.lists.len() < KEPT_LISTS {
            s.lists.push(list);
        }
    }
}

/// The per-pass GPU times of one execution, in program order (passes on queues without
/// timestamps are left out). From [`crate::ExecutionFence::take_gpu_timings`]; see the
/// [module](self).
///
/// Displays as one line, `pass 0.120 ms (queue), ...`.
///
/// ```no_run
/// # fn f(times: &vk_baton::timing::GpuTimings, gfx: &vk_baton::Queue) {
/// let blur = times.get("blur").map(|t| t.duration_ms());
/// let busy_ms = times.busy_ns(gfx) as f64 / 1e6;
/// println!("{times}");
/// # }
/// ```
pub struct GpuTimings {
    passes: Vec<PassTiming>,
    spares: TimingSpares,
}

impl GpuTimings {
    /// Times of the passes, which `spares` gets back when these drop.
    pub(crate) fn new(mut passes: Vec<PassTiming>, spares: TimingSpares) -> Self {
        passes.sort_unstable_by_key(|t| t.order);
        GpuTimings { passes, spares }
    }

    /// Every timed pass, in program order.
    pub fn passes(&self) -> &[PassTiming] {
        &self.passes
    }

    /// The first timed pass named `pass`.
    pub fn get(&self, pass: &str) -> Option<&PassTiming> {
        self.passes.iter().find(|t| t.pass == pass)
    }

    /// The sum of the durations of the passes on `queue`.
    pub fn busy_ns(&self, queue: &Queue) -> u64 {
        self.passes
            .iter()
            .filter(|t| &t.queue == queue)
            .map(PassTiming::duration_ns)
            .sum()
    }

    /// From the first start to the last end of the passes on `queue` (`None`: no pass on it).
    pub fn span_ns(&self, queue: &Queue) -> Option<(u64, u64)> {
        let on = || self.passes.iter().filter(|t| &t.queue == queue);
        Some((
            on().map(|t| t.start_ns).min()?,
            on().map(|t| t.end_ns).max()?,
        ))
    }
}

impl<'a> IntoIterator for &'a GpuTimings {
    type Item = &'a PassTiming;
    type IntoIter = std::slice::Iter<'a, PassTiming>;
    fn into_iter(self) -> Self::IntoIter {
        self.passes.iter()
    }
}

impl fmt::Display for GpuTimings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.passes.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(
                f,
                "{sep}{} {:.3} ms ({})",
                t.pass,
                t.duration_ms(),
                t.queue.name()
            )?;
        }
        Ok(())
    }
}

impl fmt::Debug for GpuTimings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.passes).finish()
    }
}

impl Drop for GpuTimings {
    fn drop(&mut self) {
        self.spares.give(std::mem::take(&mut self.passes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_follow_the_valid_bits_and_the_way_queries_are_reset() {
        use vk::QueueFlags as Q;
        let cmd = TimestampSupport::for_tests(1.0, vec![64, 36, 0, 48], false);
        assert_eq!(cmd.mask(0, Q::GRAPHICS), Some(u64::MAX));
        assert_eq!(cmd.mask(1, Q::COMPUTE), Some((1 << 36) - 1));
        assert_eq!(cmd.mask(2, Q::GRAPHICS), None, "no valid bits");
        assert_eq!(cmd.mask(3, Q::TRANSFER), None, "no vkCmdResetQueryPool");
        assert_eq!(cmd.mask(9, Q::GRAPHICS), None, "no such family");
        let host = TimestampSupport::for_tests(1.0, vec![64, 36, 0, 48], true);
        assert_eq!(host.mask(3, Q::TRANSFER), Some((1 << 48) - 1));
        assert_eq!(host.mask(2, Q::TRANSFER), None);
    }

    /// Ticks become nanoseconds with the period, and an end that wrapped around the valid
    /// bits still comes after the start by the right amount.
    #[test]
    fn raw_timestamps_become_nanoseconds_across_a_wrap() {
        let ctx = crate::Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let q = ctx.graphics();
        let mut t = PassTiming::new(String::new(), "p", q, 0, 0, (1 << 36) - 1);
        t.resolve(1000, 1250, 2.5);
        assert_eq!(
            (t.start_ns(), t.end_ns(), t.duration_ns()),
            (2500, 3125, 625)
        );
        // Bits above the valid ones are ignored; the counter wraps between the two.
        let top = (1u64 << 36) - 10;
        t.resolve(top | (1 << 40), 5, 1.0);
        assert_eq!((t.start_ns(), t.duration_ns()), (top, 15));
        assert_eq!(t.end_ns(), top + 15);
    }

    #[test]
    fn timings_display_sort_and_give_their_strings_back() {
        let ctx = crate::Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let q = ctx.graphics();
        let spares = TimingSpares::default();
        let mut list = spares.list();
        for (order, name, ticks) in [(2, "c", 3_000_000), (0, "a", 120_000), (1, "b", 0)] {
            let mut t = PassTiming::new(spares.name(), name, q, order, 0, u64::MAX);
            t.resolve(10, 10 + ticks, 1.0);
            list.push(t);
        }
        let times = GpuTimings::new(list, spares.clone());
        let names: Vec<&str> = times.passes().iter().map(PassTiming::pass).collect();
        assert_eq!(names, ["a", "b", "c"], "program order");
        assert_eq!(
            times.to_string(),
            "a 0.120 ms (graphics), b 0.000 ms (graphics), c 3.000 ms (graphics)"
        );
        assert_eq!(times.busy_ns(q), 3_120_000);
        assert_eq!(times.span_ns(q), Some((10, 3_000_010)));
        assert_eq!(times.get("c").map(PassTiming::duration_ns), Some(3_000_000));
        assert!(times.get("d").is_none());
        drop(times);
        let kept = spares.0.lock();
        assert_eq!((kept.names.len(), kept.lists.len()), (3, 1));
        assert!(kept.lists[0].is_empty() && kept.lists[0].capacity() >= 3);
    }
}
