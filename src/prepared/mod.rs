//! [`PreparedFrame`]: the unit of reuse. One frame's plan with everything an execution of it
//! needs and everything that was built for it, kept together from one execution to the next.
//!
//! A graph keeps its last few prepared frames in its cache (`graph/cache.rs`); a held plan
//! keeps one pinned. A frame is made once, when its plan is new, and is then only rebound:
//!
//! - the **plan** (with the input it answers) and the objects its indices name: its
//!   **queues**, **resources** and each resource's **version** when planned;
//! - what recording builds from the plan once and keeps: the **baked barriers**
//!   ([`PlanBarriers`]) and the **labels** ([`labels::PlanLabels`]);
//! - where its last execution left the resources: the **at-rest record** ([`AtRest`]), which
//!   lets the next frame be rebound by comparing versions instead of states;
//! - the scratch its reuse needs: the [`Rebinder`] and the input the plan was last rebound
//!   from, refilled by the next re-check;
//! - whether its last execution committed ([`PreparedFrame::ran`]; what it committed stays
//!   in the scratch), which [`PreparedFrame::note_ran`] turns into the at-rest record.
//!
//! - the command buffers recorded for the plan, kept to be submitted again when replay is
//!   on ([`replays::Replays`]).
//!
//! An execution borrows a frame (`&mut`) and gives it back: its vectors never leave it, so a
//! reused frame allocates nothing. The tiers of reuse, in the order a lookup tries them, are methods here:
//! [`PreparedFrame::rebind_at_rest`], [`PreparedFrame::rebind_states`] and
//! [`PreparedFrame::rebind_declared`].

pub(crate) mod barriers;
pub(crate) mod labels;
pub(crate) mod replays;
mod rest;
pub(crate) mod scratch;

pub(crate) use barriers::PlanBarriers;
pub(crate) use rest::{AtRest, MERGED};

use crate::access::LayoutPolicy;
use crate::pass::FrameDecls;
use crate::plan::{refill_segments, Plan, PlanInput, Rebinder, Schedule};
use crate::queue::Queue;
use crate::resource::Resource;
use labels::PlanLabels;

/// One plan ready to execute again and again: see the module docs.
#[derive(Default)]
pub(crate) struct PreparedFrame {
    pub(crate) plan: Plan,
    /// The declarations the plan answers, flat, for the next frame to compare its own with.
    pub(crate) decls: FrameDecls,
    /// Planner queue index -> queue.
    pub(crate) queues: Vec<Queue>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
    /// Each resource's state version when the plan was made or last rebound.
    pub(crate) versions: Vec<u64>,
    /// The layouts the passes declared their image uses in, which they record with.
    pub(crate) layouts: LayoutPolicy,
    /// Whether passes are recorded inside debug labels (the graph's setting, given each
    /// time the frame is prepared or a held plan executes).
    pub(crate) record_labels: bool,
    /// The Vulkan structs of the plan's barriers, once recorded.
    pub(crate) barriers: PlanBarriers,
    /// The passes' and commands' debug labels, built with labels on from the plan's second
    /// recording (a plan recorded once, as a newly planned frame's is, builds each label as
    /// it goes, with nothing to keep); they name passes, not resources, so new handles leave
    /// them as they are.
    pub(crate) labels: PlanLabels,
    /// Whether the plan was recorded since it came.
    pub(crate) recorded: bool,
    /// Whether executions keep what they record, to submit it again (the graph's setting,
    /// [`crate::Graph::set_replay`], given as `record_labels` is).
    pub(crate) replay: bool,
    /// The command buffers recorded for the plan and kept.
    pub(crate) replays: replays::Replays,
    /// Where the plan's last execution left its resources.
    pub(crate) rest: AtRest,
    /// Whether the last execution was submitted and committed its states: then the scratch's
    /// `submit` holds what it committed, for [`PreparedFrame::note_ran`].
    pub(crate) ran: bool,
    /// The scratch its executions record and submit with.
    pub(crate) scratch: scratch::FrameScratch,
    rebinder: Rebinder,
    /// The input the plan was last rebound from, refilled by the next re-check; with
    /// `spare_is_copy`, its declarations are the plan's own (a held plan's states refill it).
    spare_input: PlanInput,
    spare_is_copy: bool,
}

/// The tier a frame was reused at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Every resource where the last execution left it: versions compared, values moved on.
    AtRest,
    /// The same declarations (a held plan's), its states snapshot and matched.
    States,
    /// A builder's declarations and states matched against the plan's input.
    Declarations,
}

impl PreparedFrame {
    /// A frame of `plan` on `queues`, with no resource: for the executor's unit tests.
    #[cfg(test)]
    pub(crate) fn of_plan(plan: Plan, queues: Vec<Queue>) -> Self {
        PreparedFrame {
            plan,
            queues,
            ..PreparedFrame::default()
        }
    }

    /// Drops what was built for the plan and what its executions left (a new plan comes),
    /// keeping the vectors.
    pub(crate) fn forget(&mut self) {
        self.barriers.forget();
        self.labels.forget();
        self.recorded = false;
        self.replays.forget();
        self.rest.forget();
        self.scratch.submit.runs_known = false;
        self.spare_is_copy = false;
    }

    /// Whether every resource (`now`: id and current version, by plan index) is where the
    /// plan's last execution left it, and the plan's input was such a state too: the
    /// condition of tier 1 ([`PreparedFrame::rebind_at_rest`]). The caller checks the queues.
    pub(crate) fn at_rest(&self, now: impl ExactSizeIterator<Item = (u64, u64)>) -> bool {
        self.rest.input_is_rest && self.rest.holds_resources(now)
    }

    /// Tier 1, once [`PreparedFrame::at_rest`] holds: moves the plan's values on
    /// ([`Rebinder::rebind_at_rest`]) without reading a state. `new`: a builder's
    /// declarations, which the caller found [`FrameDecls::same_as`] the frame's (their binary
    /// semaphores take the place of the frame's), and its schedule; `None` for the plan's own
    /// (a held plan). `false` leaves the plan unchanged.
    pub(crate) fn rebind_at_rest(&mut self, new: Option<(&FrameDecls, Schedule)>) -> bool {
        let rest = &mut self.rest;
        let values = (&rest.input_values[..], &rest.last[..]);
        let declared = new.map(|(decls, schedule)| (schedule, self.decls.semaphore_pairs(decls)));
        if !(self.rebinder).rebind_at_rest(&mut self.plan, values, declared) {
            return false;
        }
        if new.is_none() {
            // The plan's own resources: their versions are the ones just compared.
            self.versions.clear();
            self.versions.extend_from_slice(rest.versions());
        } else {
            self.spare_is_copy = false;
        }
        rest.set_input_is_rest(true);
        true
    }

    /// Tier 2, for the plan's own declarations (a held plan): snapshots its resources' states
    /// and versions, and rebinds the plan if only values changed. `false` leaves the plan
    /// as it was: a state changed in a way that needs a new plan.
    pub(crate) fn rebind_states(&mut self, schedule: Schedule) -> bool {
        if !self.spare_is_copy {
            self.spare_input.clone_from(&self.plan.input);
            self.spare_is_copy = true;
        }
        if !snapshot_states(
            &mut self.spare_input,
            &self.queues,
            &self.resources,
            &mut self.versions,
        ) {
            return false;
        }
        let input = std::mem::take(&mut self.spare_input);
        match self.rebinder.rebind_states(&mut self.plan, input, schedule) {
            Ok(old) => {
                self.spare_input = old;
                let now = self.resources.iter().map(Resource::id);
                let now = now.zip(self.versions.iter().copied());
                let queues = self.queues.iter().map(Queue::id);
                let is_rest = self.rest.holds(now, queues);
                self.rest.set_input_is_rest(is_rest);
                true
            }
            Err(input) => {
                self.spare_input = input;
                false
            }
        }
    }

    /// Tier 3, for a builder's frame: if the planner would answer `input` (declarations and
    /// states) with this plan, values and semaphores mapped, rebinds the plan to it and gives
    /// back the input it was made from; otherwise gives `input` back. `now` and `queues`
    /// (the frame's resources' ids and versions, its queues' identities) tell whether the new
    /// input is where the last execution left the resources.
    pub(crate) fn rebind_declared(
        &mut self,
        input: PlanInput,
        schedule: Schedule,
        (now, queues): (
            impl ExactSizeIterator<Item = (u64, u64)>,
            impl ExactSizeIterator<Item = u64>,
        ),
    ) -> Result<PlanInput, PlanInput> {
        let old = self
            .rebinder
            .rebind_scheduled(&mut self.plan, input, schedule)?;
        let is_rest = self.rest.holds(now, queues);
        self.rest.set_input_is_rest(is_rest);
        self.spare_is_copy = false;
        Ok(old)
    }

    /// Turns what the last execution committed ([`PreparedFrame::ran`]) into the at-rest
    /// record: called by whoever lent the frame, once the execution is done with it.
    pub(crate) fn note_ran(&mut self) {
        let submit = &mut self.scratch.submit;
        let (true, Some(values)) = (std::mem::take(&mut self.ran), &submit.values) else {
            return;
        };
        let ids = self.resources.iter().map(Resource::id);
        let queues = self.queues.iter().map(Queue::id);
        (self.rest).record(ids, &mut submit.committed, queues, &values.last);
    }
}

/// Snapshots `resources`' states into `input`'s, in the plan's queue indices (`queues`), and
/// their versions into `versions`. `false` if a state names a queue the plan does not know.
fn snapshot_states(
    input: &mut PlanInput,
    queues: &[Queue],
    resources: &[Resource],
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
