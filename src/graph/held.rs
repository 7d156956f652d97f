//! [`HeldPlan`]: a plan the app keeps and executes frame after frame, re-checked against the
//! resources' states each time and re-planned only when they changed in a way that matters.

use super::{verify_in_debug, Graph, RecordedBy};
use crate::error::Result;
use crate::exec::{AppSignals, Execution};
use crate::fence::ExecutionFence;
use crate::plan::{refill_segments, Plan, PlanInput, Rebinder, Schedule};
use crate::queue::Queue;
use crate::resource::Resource;
use std::fmt;

/// A plan the app holds and executes again and again, from [`crate::Planned::hold`].
///
/// Each [`HeldPlan::execute`] reads the resources' current states and compares them with the
/// states the plan was made from. When they differ only in timeline values (the usual case in
/// a frame loop: the same passes touch the same resources in the same way), the plan is
/// rebound to the new values and recorded again: no declaration, no lowering, no planning.
/// Otherwise the passes are asked for their declarations again, and the graph's kept plans
/// are looked at as `finish()` does: a frame loop that alternates between a few shapes (an
/// upload every few frames, another graph that writes a resource now and then) takes the
/// plan of the shape that came back, and plans only a shape it has not met lately. The plan
/// it leaves goes to the graph's kept plans in turn. Either way the result is the plan
/// `finish()` would make ([`Rebinder`] says why), and debug builds verify it every time.
///
/// The passes stay borrowed, so the frame's declarations cannot change behind the plan's back;
/// a pass that declares something else from frame to frame (through interior mutability, or
/// another binary semaphore each frame, as a swapchain acquire does) needs the builder instead,
/// which reuses plans too, checking the declarations as well.
///
/// ```no_run
/// # fn f(graph: &vk_baton::Graph, compute: &vk_baton::Queue, gfx: &vk_baton::Queue,
/// #      sim: &mut dyn vk_baton::Pass, shade: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
/// let mut held = graph.record()
///     .insert_pass("simulate", sim, compute)
///     .insert_pass("shade", shade, gfx)
///     .finish()?
///     .hold();
/// for _frame in 0..100 {
///     held.execute()?.wait()?;
/// }
/// println!("{} of 100 frames re-planned", held.replanned());
/// # Ok(()) }
/// ```
pub struct HeldPlan<'a> {
    graph: &'a Graph,
    execution: Execution<'a>,
    /// A copy of the plan's input whose resource states are refilled each frame and matched.
    scratch: PlanInput,
    rebinder: Rebinder,
    /// Frames executed, how many of them were re-planned, how many of those took a plan the
    /// graph kept, and how many found every resource where the last execution left it.
    executed: u64,
    replanned: u64,
    took_kept: u64,
    at_rest: u64,
    /// The builder's schedule, which a re-plan follows too.
    schedule: Schedule,
}

impl<'a> HeldPlan<'a> {
    pub(super) fn new(graph: &'a Graph, execution: Execution<'a>, schedule: Schedule) -> Self {
        let scratch = execution.plan.input.clone();
        HeldPlan {
            graph,
            execution,
            scratch,
            rebinder: Rebinder::default(),
            executed: 0,
            replanned: 0,
            took_kept: 0,
            at_rest: 0,
            schedule,
        }
    }

    /// Brings the plan up to date with the resources' states (rebinding it, or re-planning),
    /// then records and submits it and commits the new states.
    ///
    /// Fails as [`crate::Planned::execute`] does; a failed execution leaves the plan held, to
    /// try again.
    pub fn execute(&mut self) -> Result<ExecutionFence> {
        self.execute_with(&AppSignals::default())
    }

    /// [`HeldPlan::execute`], also signalling the app's semaphores and fence, as
    /// [`crate::Planned::execute_signalling`] does.
    ///
    /// ```no_run
    /// # fn f(held: &mut vk_baton::HeldPlan<'_>, frame_done: vk_baton::ash::vk::Fence) -> vk_baton::Result<()> {
    /// // SAFETY: `frame_done` is unsignalled, of the graph's device, used by no other submit,
    /// // and alive until it signals.
    /// let _fence = unsafe { held.execute_signalling(&vk_baton::AppSignals::new().fence(frame_done))? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`crate::Planned::execute_signalling`].
    pub unsafe fn execute_signalling(&mut self, signals: &AppSignals) -> Result<ExecutionFence> {
        self.execute_with(signals)
    }

    fn execute_with(&mut self, signals: &AppSignals) -> Result<ExecutionFence> {
        // Refused signals leave the held plan as it was (checked again after a re-plan).
        self.execution.check_signals(signals)?;
        if !self.rebind() {
            self.replan()?;
        }
        verify_in_debug(&self.execution.plan, &self.execution.queues)?;
        self.executed += 1;
        self.execution.run_again(signals)
    }

    /// The plan as it was last executed (or made).
    pub fn plan(&self) -> &Plan {
        &self.execution.plan
    }

    /// The queues the plan's queue indices refer to, as [`Planned::queues`](crate::Planned::queues)
    /// gives them; a re-plan keeps them.
    pub fn queues(&self) -> &[crate::Queue] {
        &self.execution.queues
    }

    /// How many executions had to re-plan: a resource's state had changed in a way that
    /// matters (another graph wrote it, changed its layout or owner, the app declared a state).
    /// Some of them may have taken a kept plan instead of running the planner
    /// ([`HeldPlan::took_kept`]).
    pub fn replanned(&self) -> u64 {
        self.replanned
    }

    /// How many of the [re-planned](HeldPlan::replanned) executions took a plan the graph
    /// kept (from an earlier shape of this held plan, or a builder's frame) rather than
    /// running the planner.
    pub fn took_kept(&self) -> u64 {
        self.took_kept
    }

    /// How many executions found every resource still where the one before left it (nothing
    /// else touched them) and so rebound the plan by comparing versions, without reading any
    /// state: see [`Planned::at_rest`](crate::Planned::at_rest). A held plan that owns its
    /// resources does so from its third execution on (counted again after a re-plan).
    ///
    /// ```no_run
    /// # fn f(mut held: vk_baton::HeldPlan<'_>) -> vk_baton::Result<()> {
    /// for _ in 0..4 {
    ///     held.execute()?.wait()?;
    /// }
    /// assert!(held.at_rest() >= 2);
    /// # Ok(()) }
    /// ```
    pub fn at_rest(&self) -> u64 {
        self.at_rest
    }

    /// Rebinds the plan to the resources' states. Where every resource is still where the
    /// plan's last execution left it, and the plan's input was where the one before left
    /// them, only the last values change ([`Rebinder::rebind_at_rest`]): a version compare per
    /// resource. Otherwise it snapshots the states into the scratch input and matches them.
    /// `false`: the states differ in a way that needs a new plan.
    fn rebind(&mut self) -> bool {
        let Execution {
            queues,
            resources,
            versions,
            plan,
            barriers,
            ..
        } = &mut self.execution;
        let rest = &mut barriers.rest;
        let now = resources
            .iter()
            .map(|r| (r.id(), r.tracked().lock().version));
        if rest.input_is_rest && rest.holds(now, queues.iter().map(Queue::id)) {
            let values = (&rest.input_values[..], &rest.last[..]);
            if self.rebinder.rebind_at_rest(plan, values, None).is_ok() {
                for (r, v) in versions.iter_mut().enumerate() {
                    *v = rest.version(r);
                }
                rest.set_input_is_rest(true);
                self.at_rest += 1;
                #[cfg(debug_assertions)]
                super::lowering::debug_check_at_rest(plan, queues, resources, versions);
                return true;
            }
        }
        if !snapshot_states(&mut self.scratch, queues, resources, versions) {
            return false;
        }
        let input = std::mem::take(&mut self.scratch);
        match self.rebinder.rebind_states(plan, input, self.schedule) {
            Ok(old) => {
                self.scratch = old;
                let ids = resources.iter().map(Resource::id);
                let now = ids.zip(versions.iter().copied());
                rest.set_input_is_rest(rest.holds(now, queues.iter().map(Queue::id)));
                true
            }
            Err(input) => {
                self.scratch = input;
                false
            }
        }
    }

    /// Lowers the passes again (asking them for their declarations), takes the graph's kept
    /// plan for them or plans anew, and gives the plan it leaves to the graph's kept plans.
    fn replan(&mut self) -> Result<()> {
        self.replanned += 1;
        // On an error the held plan stays as it was, and so does the scratch it is matched with.
        let prepared =
            self.graph
                .prepare(&self.execution.passes, self.schedule, RecordedBy::Graph)?;
        self.took_kept += u64::from(prepared.reused);
        log::debug!(
            "held plan: re-planned ({} of {} executions, {} from kept plans)",
            self.replanned,
            self.executed + 1,
            self.took_kept
        );
        self.scratch.clone_from(&prepared.plan.input);
        let execution = &mut self.execution;
        let left = std::mem::replace(&mut execution.plan, prepared.plan);
        let left_barriers = std::mem::replace(&mut execution.barriers, prepared.barriers);
        execution.queues = prepared.queues;
        execution.resources = prepared.resources;
        execution.versions = prepared.versions;
        execution.layouts = prepared.layouts;
        self.graph.cache.lock().put_back(left, left_barriers);
        Ok(())
    }
}

impl fmt::Debug for HeldPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldPlan")
            .field("graph", self.graph)
            .field("queues", &self.execution.queues)
            .field("executed", &self.executed)
            .field("replanned", &self.replanned)
            .finish_non_exhaustive()
    }
}

/// Snapshots `resources`' states into `input`'s, in the plan's queue indices (`queues`), and
/// their versions into `versions`. `false` if a state names a queue the plan does not know.
fn snapshot_states(
    input: &mut PlanInput,
    queues: &[crate::queue::Queue],
    resources: &[crate::resource::Resource],
    versions: &mut [u64],
) -> bool {
    for (r, resource) in resources.iter().enumerate() {
        let t = resource.tracked().lock();
        versions[r] = t.version;
        let mut known = true;
        refill_segments(
            &mut input.resources[r].initial,
            &t.segments,
            |queue, value| {
                let index = queues.iter().position(|q| q == queue).unwrap_or_else(|| {
                    // A queue this plan does not know: it needs a release there.
                    known = false;
                    0
                });
                (index, value)
            },
        );
        if !known {
            return false;
        }
    }
    true
}
