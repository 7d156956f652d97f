//! [`HeldPlan`]: a plan the app keeps and executes frame after frame, re-checked against the
//! resources' states each time and re-planned only when they changed in a way that matters.

use super::cache::recheck_held;
use super::{verify_in_debug, Graph, RecordedBy};
use crate::error::Result;
use crate::exec;
use crate::fence::ExecutionFence;
use crate::pass::PassEntry;
use crate::plan::{Plan, Schedule};
use crate::prepared::{PreparedFrame, Tier};
use crate::signals::AppSignals;
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
/// `finish()` would make ([`crate::plan::Rebinder`] says why), and debug builds verify it
/// every time.
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
    /// The frame, pinned: taken out of the graph's cache, re-checked by the cache's tiers.
    frame: Box<PreparedFrame>,
    /// The passes, in program order (the plan's pass indices).
    passes: Vec<PassEntry<'a>>,
    /// Frames executed, how many of them were re-planned, how many of those took a plan the
    /// graph kept, and how many found every resource where the last execution left it.
    executed: u64,
    replanned: u64,
    took_kept: u64,
    at_rest: u64,
    /// How many executions submitted a kept recording again.
    replayed: u64,
    /// The builder's schedule, which a re-plan follows too.
    schedule: Schedule,
}

impl<'a> HeldPlan<'a> {
    pub(super) fn new(
        graph: &'a Graph,
        (frame, passes): (Box<PreparedFrame>, Vec<PassEntry<'a>>),
        schedule: Schedule,
    ) -> Self {
        HeldPlan {
            graph,
            frame,
            passes,
            executed: 0,
            replanned: 0,
            took_kept: 0,
            at_rest: 0,
            replayed: 0,
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
        crate::signals::check(&self.frame.plan, &self.frame.queues, signals)?;
        match recheck_held(&mut self.frame, self.schedule) {
            Some(Tier::AtRest) => self.at_rest += 1,
            Some(_) => {}
            None => self.replan()?,
        }
        verify_in_debug(&self.frame.plan, &self.frame.queues)?;
        // The frame stays out of the graph's plan cache, which gives back the recordings of
        // dropped resources of the frames it keeps: this one looks for itself.
        (self.frame.replays).forget_dropped(crate::resource::dropped_so_far());
        self.executed += 1;
        self.frame.record_labels = self.graph.labels_on();
        self.frame.replay = self.graph.replay_on();
        // The held plan borrows its passes exclusively: their keys change only through it.
        self.frame.replays.hold_keys(true);
        let fence = exec::run(
            &self.graph.pools,
            &mut self.passes,
            &mut self.frame,
            signals,
        );
        self.frame.note_ran();
        let replayed = fence.as_ref().is_ok_and(ExecutionFence::replayed);
        self.replayed += u64::from(replayed);
        fence
    }

    /// The plan as it was last executed (or made).
    pub fn plan(&self) -> &Plan {
        &self.frame.plan
    }

    /// The queues the plan's queue indices refer to, as [`Planned::queues`](crate::Planned::queues)
    /// gives them; a re-plan keeps them.
    pub fn queues(&self) -> &[crate::Queue] {
        &self.frame.queues
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

    /// How many executions submitted the command buffers an earlier one recorded again,
    /// recording nothing ([`Graph::set_replay`](crate::Graph::set_replay)): those at rest
    /// whose passes' [replay keys](crate::Pass::replay_key) had not changed, from the
    /// second execution of a plan on.
    ///
    /// ```no_run
    /// # fn f(mut held: vk_baton::HeldPlan<'_>) -> vk_baton::Result<()> {
    /// for _ in 0..4 {
    ///     held.execute()?.wait()?;
    /// }
    /// println!("{} of 4 executions replayed", held.replayed());
    /// # Ok(()) }
    /// ```
    pub fn replayed(&self) -> u64 {
        self.replayed
    }

    /// Has the next execution ask every pass for its replay key again, for a pass whose key
    /// follows state it shares with the frame loop: the slot of the frame in flight in a
    /// `Cell`, which picks the descriptor set or the queries it records with. Call it after
    /// the loop changed that state, before [`HeldPlan::execute`]. Otherwise a held plan asks
    /// for its passes' keys only after it recorded them, and for the keys of the passes whose
    /// [`Pass::replayed`](crate::Pass::replayed) ran after a replay: it borrows them
    /// exclusively, and a key changes only through `&mut self`
    /// ([`ReplayKey::new`](crate::pass::ReplayKey::new)).
    ///
    /// ```no_run
    /// # fn f(mut held: vk_baton::HeldPlan<'_>, slot: &std::cell::Cell<usize>) -> vk_baton::Result<()> {
    /// let mut in_flight = std::collections::VecDeque::new();
    /// for n in 0..100 {
    ///     if in_flight.len() == 2 {
    ///         let done: vk_baton::ExecutionFence = in_flight.pop_front().unwrap();
    ///         done.wait()?;
    ///     }
    ///     // The passes record with the slot's descriptor sets, and their keys name it.
    ///     slot.set(n % 2);
    ///     held.refresh_replay_keys();
    ///     in_flight.push_back(held.execute()?);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn refresh_replay_keys(&mut self) {
        self.frame.replays.keys_lent();
    }

    /// Lowers the passes again (asking them for their declarations), takes the graph's kept
    /// plan for them or plans anew, and gives the plan it leaves to the graph's kept plans.
    fn replan(&mut self) -> Result<()> {
        self.replanned += 1;
        // On an error the held plan stays as it was.
        let (frame, tier) =
            (self.graph).prepare(&self.passes, self.schedule, RecordedBy::Graph, None)?;
        self.took_kept += u64::from(tier.is_some());
        log::debug!(
            "held plan: re-planned ({} of {} executions, {} from kept plans)",
            self.replanned,
            self.executed + 1,
            self.took_kept
        );
        let left = std::mem::replace(&mut self.frame, frame);
        self.graph.keep_frame(left);
        Ok(())
    }
}

impl fmt::Debug for HeldPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HeldPlan")
            .field("graph", self.graph)
            .field("queues", &self.frame.queues)
            .field("executed", &self.executed)
            .field("replanned", &self.replanned)
            .finish_non_exhaustive()
    }
}
