//! [`Planned`]: a builder's frame, planned, to inspect, execute or hold; and
//! [`Planned::execute_signalling`], an execution that also signals the app's own semaphores
//! and fence.

use super::{Graph, HeldPlan, Returned};
use crate::error::Result;
use crate::exec;
use crate::fence::ExecutionFence;
use crate::pass::PassEntry;
use crate::plan::{Plan, Schedule};
use crate::prepared::{PreparedFrame, Tier};
use crate::queue::Queue;
use crate::signals::AppSignals;
use std::fmt;

/// A planned graph: inspect or print its [`Plan`], then [`Planned::execute`] it.
///
/// ```no_run
/// # fn f(planned: vk_baton::Planned<'_>) -> vk_baton::Result<()> {
/// println!("{planned}");            // queues, batches, barriers, semaphores
/// assert!(planned.plan().barrier_commands() <= 2);
/// let fence = planned.execute()?;
/// # Ok(()) }
/// ```
pub struct Planned<'a> {
    /// Borrowed so that the graph outlives its plans.
    pub(super) graph: &'a Graph,
    /// The frame `finish()` took from the graph's cache or planned.
    pub(super) frame: Box<PreparedFrame>,
    /// The passes, in program order (the plan's pass indices).
    pub(super) passes: Vec<PassEntry<'a>>,
    /// What the last builder frame handed this one, to hand on to the next.
    pub(super) returned: Box<Returned>,
    /// The tier at which `finish()` reused one of the graph's kept frames, if it did.
    pub(super) tier: Option<Tier>,
    /// The builder's schedule, for a held plan to re-plan with.
    pub(super) schedule: Schedule,
}

impl<'a> Planned<'a> {
    /// The plan.
    ///
    /// ```no_run
    /// # fn f(planned: &vk_baton::Planned<'_>) {
    /// let batches = planned.plan().batch_count();
    /// # }
    /// ```
    pub fn plan(&self) -> &Plan {
        &self.frame.plan
    }

    /// Whether this is a plan the graph executed before, rebound to this frame's timeline
    /// values and semaphores instead of planned anew. `finish()` reuses one of the plans of
    /// the last four executions (the most recent that fits) when the frame declares the same
    /// passes, uses and resource states (up to names, timeline values and binary semaphores);
    /// see [`crate::plan::Rebinder`].
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// for frame in 0..3 {
    ///     let planned = graph.record().insert_pass("p", &mut *p, q).finish()?;
    ///     // From the second or third frame on, the states repeat and the plan is reused.
    ///     println!("frame {frame}: reused {}", planned.reused());
    ///     planned.execute()?.wait()?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn reused(&self) -> bool {
        self.tier.is_some()
    }

    /// Whether `finish()` [reused](Planned::reused) the plan the graph executed last without
    /// reading or comparing any resource's state: the frame declared what that plan's frame
    /// declared, and every resource was still at the version that execution left it in
    /// (nothing else touched it), so only the timeline values moved on. The usual case of a
    /// frame loop that owns its resources, from the frame after the plan's first reuse on.
    /// Resources that swap places from frame to frame (ping-pong) are compared in full.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// for frame in 0..4 {
    ///     let planned = graph.record().insert_pass("p", &mut *p, q).finish()?;
    ///     println!("frame {frame}: reused {}, at rest {}", planned.reused(), planned.at_rest());
    ///     planned.execute()?.wait()?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn at_rest(&self) -> bool {
        self.tier == Some(Tier::AtRest)
    }

    /// The queues the plan's queue indices refer to.
    ///
    /// ```no_run
    /// # fn f(planned: &vk_baton::Planned<'_>) {
    /// for q in planned.queues() { println!("{}", q.name()); }
    /// # }
    /// ```
    pub fn queues(&self) -> &[Queue] {
        &self.frame.queues
    }

    /// Records and submits the plan (one `vkQueueSubmit2` per queue) and commits the
    /// resources' new states. Fails with [`Error::StalePlan`](crate::Error::StalePlan), submitting nothing, if a
    /// resource's state changed since `finish()` in a way that alters what this plan must
    /// do: a write, a layout or ownership change, or reads by others where this plan writes.
    /// Other executions' reads where this plan only reads keep it valid (and are kept in
    /// the state it commits).
    ///
    /// ```no_run
    /// # fn f(planned: vk_baton::Planned<'_>) -> vk_baton::Result<()> {
    /// planned.execute()?.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn execute(self) -> Result<ExecutionFence> {
        self.execute_with(&AppSignals::default())
    }

    /// Executes, notes where the execution left the resources, then hands the frame and
    /// passes back to the graph.
    pub(super) fn execute_with(mut self, signals: &AppSignals) -> Result<ExecutionFence> {
        let fence = exec::run(
            &self.graph.pools,
            &mut self.passes,
            &mut self.frame,
            signals,
        );
        self.frame.note_ran();
        self.graph.executed(self.frame, self.passes, self.returned);
        fence
    }

    /// Keeps the plan to execute again and again: see [`HeldPlan`]. Each
    /// [`HeldPlan::execute`] re-checks it against the resources' states and rebinds or re-plans
    /// it.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let mut held = graph.record().insert_pass("p", p, q).finish()?.hold();
    /// held.execute()?.wait()?;
    /// held.execute()?.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn hold(self) -> HeldPlan<'a> {
        // The lists go back for the next builder; the frame and passes are the held plan's.
        self.graph.hand_back(self.returned);
        HeldPlan::new(self.graph, (self.frame, self.passes), self.schedule)
    }

    /// Records the plan into command buffers and discards them: no submit, no state change.
    /// For benchmarks of planning plus recording cost.
    #[doc(hidden)]
    pub fn record_only(mut self) -> Result<()> {
        exec::record_only(&self.graph.pools, &mut self.passes, &mut self.frame)
    }
}

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

impl fmt::Display for Planned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.frame.plan, f)
    }
}

impl fmt::Debug for Planned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Planned")
            .field("graph", self.graph)
            .field("queues", &self.frame.queues)
            .field("resources", &self.frame.resources)
            .finish_non_exhaustive()
    }
}
