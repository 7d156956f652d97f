//! The plans of the last few executions, kept so that a frame like one of them executes that
//! plan again instead of planning anew.
//!
//! `finish()` lowers the next frame into [`PlanCache::spare_input`]; if [`Rebinder`] finds that
//! the planner would answer it with a kept plan (values and semaphores mapped), that plan is
//! taken out and executed again. Otherwise the planner refills the vectors of the oldest kept
//! plan once the cache is full. The submit path puts the executed plan back in front, so no
//! plan is dropped and a frame like a kept one allocates nothing.
//!
//! More than one plan is kept because frame loops alternate: a pass every other frame, a
//! readback every few frames. With only the last plan kept, every frame of such a loop is
//! planned anew although nothing changed since the same frame a few executions ago.

use super::lowering::Lowered;
use crate::exec::PlanBarriers;
use crate::plan::{Plan, PlanInput, Rebinder, Schedule, SparePlan, KEPT_PLANS};
use crate::resource::Resource;

/// Kept plans and the scratch to match a frame against them.
#[derive(Default)]
pub(crate) struct PlanCache {
    /// Executed plans with the Vulkan barriers built for them, the most recent first.
    entries: Vec<(Plan, PlanBarriers)>,
    /// Declarations to refill: the input a reused plan was matched against, or an evicted
    /// plan's.
    pub(crate) spare_input: Option<PlanInput>,
    rebinder: Rebinder,
    /// Frames planned and frames reused, for the log.
    planned: u64,
    reused: u64,
    /// Off: every frame is planned anew ([`crate::Graph::set_plan_reuse`]).
    pub(crate) disabled: bool,
}

/// What [`PlanCache::take_matching`] found for a frame.
pub(crate) enum Match {
    /// A kept plan, rebound to the frame's values and semaphores, with its barriers.
    Reused(Plan, PlanBarriers),
    /// None: the frame's input back, with the vectors of a plan to refill and barriers that
    /// were forgotten, to build for the new plan.
    New {
        input: PlanInput,
        spare: SparePlan,
        barriers: PlanBarriers,
    },
}

impl PlanCache {
    /// Takes out the plan executed last if the frame is the same as its and every resource is
    /// still where that execution left it, rebound without reading the states
    /// ([`Rebinder::rebind_at_rest`]). `None` leaves `lowered` to be snapshot and matched.
    pub(crate) fn take_at_rest(
        &mut self,
        lowered: &mut Lowered,
        schedule: Schedule,
    ) -> Option<Match> {
        if self.disabled {
            return None;
        }
        let (plan, barriers) = self.entries.first_mut()?;
        let rest = &mut barriers.rest;
        let ids = lowered.resources.iter().map(Resource::id);
        if !rest.input_is_rest
            || !rest.holds_resources(ids.zip(lowered.versions.iter().copied()))
            || !lowered.adopt_queues(rest.queues())
        {
            return None;
        }
        let input = Some((std::mem::take(&mut lowered.input), schedule));
        let values = (&rest.input_values[..], &rest.last[..]);
        match self.rebinder.rebind_at_rest(plan, values, input) {
            Ok(old) => {
                rest.set_input_is_rest(true);
                self.spare_input = old;
                self.reused += 1;
                log::trace!(
                    "reused the last plan at rest ({} reused, {} planned)",
                    self.reused,
                    self.planned
                );
                let (plan, barriers) = self.entries.remove(0);
                Some(Match::Reused(plan, barriers))
            }
            Err(input) => {
                lowered.input = input.expect("the frame's input comes back");
                None
            }
        }
    }

    /// Takes out the most recent kept plan that the planner would answer `input` with, rebound
    /// to it; or gives `input` back with what the new plan can refill. `resources` (id and
    /// version, by plan index) and `queues` (identities) tell whether the frame's states are
    /// where the plan's last execution left them ([`crate::exec::AtRest`]).
    pub(crate) fn take_matching<I, J>(
        &mut self,
        mut input: PlanInput,
        schedule: Schedule,
        (resources, queues): (I, J),
    ) -> Match
    where
        I: ExactSizeIterator<Item = (u64, u64)>,
        J: ExactSizeIterator<Item = u64>,
    {
        if !self.disabled {
            for i in 0..self.entries.len() {
                match self
                    .rebinder
                    .rebind_scheduled(&mut self.entries[i].0, input, schedule)
                {
                    Ok(matched) => {
                        let (plan, mut barriers) = self.entries.remove(i);
                        let rest = &mut barriers.rest;
                        rest.set_input_is_rest(rest.holds(resources, queues));
                        self.spare_input = Some(matched);
                        self.reused += 1;
                        log::trace!(
                            "reused kept plan {} of {} ({} reused, {} planned)",
                            i + 1,
                            self.entries.len() + 1,
                            self.reused,
                            self.planned
                        );
                        return Match::Reused(plan, barriers);
                    }
                    // A failed match leaves the plan as it was.
                    Err(back) => input = back,
                }
            }
        }
        self.planned += 1;
        // The new plan takes the place of the oldest once the cache is full; with reuse off
        // the last plan is kept only for its vectors.
        let room = if self.disabled { 0 } else { KEPT_PLANS - 1 };
        let evicted = if self.entries.len() > room {
            self.entries.pop()
        } else {
            None
        };
        let (spare, mut barriers) = match evicted {
            Some((plan, barriers)) => {
                let (input, spare) = SparePlan::of(plan);
                self.spare_input.get_or_insert(input);
                (spare, barriers)
            }
            None => (SparePlan::default(), PlanBarriers::default()),
        };
        barriers.forget();
        Match::New {
            input,
            spare,
            barriers,
        }
    }

    /// Puts an executed plan back in front.
    pub(crate) fn put_back(&mut self, plan: Plan, barriers: PlanBarriers) {
        self.entries.insert(0, (plan, barriers));
        // With reuse switched off meanwhile, fewer are kept: the extra ones are dropped.
        self.entries
            .truncate(if self.disabled { 1 } else { KEPT_PLANS });
    }

    /// The plan executed last and where it left the resources, if `resources` (id and version,
    /// by plan index) are all still there and its input was such a state too: what
    /// [`PlanCache::take_at_rest`] would try.
    #[cfg(feature = "verify")]
    pub(crate) fn last_at_rest(
        &self,
        resources: impl ExactSizeIterator<Item = (u64, u64)>,
        queues: impl ExactSizeIterator<Item = u64>,
    ) -> Option<(&Plan, &crate::exec::AtRest)> {
        let (plan, barriers) = self.entries.first().filter(|_| !self.disabled)?;
        let rest = &barriers.rest;
        (rest.input_is_rest && rest.holds(resources, queues)).then_some((plan, rest))
    }

    /// How many plans are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The kept plans, the most recent first: what [`PlanCache::take_matching`] tries, in
    /// that order.
    #[cfg(feature = "verify")]
    pub(crate) fn plans(&self) -> impl Iterator<Item = &Plan> {
        self.entries.iter().map(|(plan, _)| plan)
    }
}

/// The plans and counts; the barriers are rebuilt for a plan at its next recording.
impl Clone for PlanCache {
    fn clone(&self) -> Self {
        PlanCache {
            entries: (self.entries.iter())
                .map(|(plan, _)| (plan.clone(), PlanBarriers::default()))
                .collect(),
            spare_input: None,
            rebinder: Rebinder::default(),
            planned: self.planned,
            reused: self.reused,
            disabled: self.disabled,
        }
    }
}

impl std::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanCache")
            .field("kept", &self.entries.len())
            .field("planned", &self.planned)
            .field("reused", &self.reused)
            .field("disabled", &self.disabled)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan_owned, PassDecl, QueueDecl, ResourceDecl, UseDecl};
    use crate::Access;
    use ash::vk;

    /// Frame shape `fills`: that many fills of one buffer, then a copy out of it. The
    /// resources start fresh every frame, so a shape's input repeats exactly.
    fn frame(fills: usize) -> PlanInput {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let mut passes: Vec<PassDecl> = (0..fills)
            .map(|_| PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)))
            .collect();
        passes.push(
            PassDecl::new("copy", 0)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(1, Access::COPY_WRITE)),
        );
        PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
            resources: vec![
                ResourceDecl::buffer("a", 64, usage),
                ResourceDecl::buffer("b", 64, usage),
            ],
            passes,
        }
    }

    /// Runs `frames` frames cycling through `shapes` shapes the way `finish()` and the submit
    /// path do; returns which were reused. Each plan's barriers are marked as built for its
    /// shape (the number of fills as the one "handle"), so that a plan that came back with
    /// barriers of another plan, or a new plan with barriers not forgotten, is caught.
    fn cycle(kept: &mut PlanCache, shapes: usize, frames: usize) -> Vec<bool> {
        (0..frames)
            .map(|f| {
                let fills = f % shapes + 1;
                let tag = || [fills as u64, 0].into_iter();
                let (plan, mut barriers, reused) = match kept.take_matching(
                    frame(fills),
                    Schedule::PROGRAM_ORDER,
                    (std::iter::empty(), std::iter::empty()),
                ) {
                    Match::Reused(plan, barriers) => {
                        assert!(barriers.is_built_for(tag()), "frame {f}: its own barriers");
                        (plan, barriers, true)
                    }
                    Match::New {
                        input, barriers, ..
                    } => {
                        // Every shape's tag the tests use (at most KEPT_PLANS + 1 shapes).
                        let mut tags = (1..=KEPT_PLANS + 1).map(|t| t as u64);
                        assert!(
                            !tags.any(|t| barriers.is_built_for([t, 0].into_iter())),
                            "frame {f}: a new plan's barriers are forgotten"
                        );
                        assert!(!barriers.labels.built(), "frame {f}: and its labels");
                        (plan_owned(input).unwrap(), barriers, false)
                    }
                };
                // Whatever was taken out, the plan executed is the one for this shape.
                assert_eq!(plan.input.passes.len(), fills + 1, "frame {f}");
                barriers.bake(&plan, tag());
                barriers.labels.rebuild(|_| {});
                kept.put_back(plan, barriers);
                reused
            })
            .collect()
    }

    #[test]
    fn a_cycle_of_up_to_four_shapes_reuses_every_plan_from_its_second_round() {
        let mut kept = PlanCache::default();
        let got = cycle(&mut kept, KEPT_PLANS, 3 * KEPT_PLANS);
        let want: Vec<bool> = (0..3 * KEPT_PLANS).map(|f| f >= KEPT_PLANS).collect();
        assert_eq!(got, want);
        assert_eq!((kept.len(), kept.reused, kept.planned), (4, 8, 4));
        // One fill again, three executions after the last one: still kept.
        assert_eq!(cycle(&mut kept, 1, 1), [true]);
    }

    #[test]
    fn a_cycle_of_five_shapes_outgrows_the_kept_plans() {
        let mut kept = PlanCache::default();
        let got = cycle(&mut kept, KEPT_PLANS + 1, 3 * (KEPT_PLANS + 1));
        assert_eq!(got, vec![false; 3 * (KEPT_PLANS + 1)]);
        assert_eq!(kept.len(), KEPT_PLANS);
        // An evicted plan's declarations are refilled by the next lowering.
        assert!(kept.spare_input.is_some());
    }

    #[test]
    fn with_reuse_off_every_frame_is_planned_and_one_plan_kept_for_its_vectors() {
        let mut kept = PlanCache {
            disabled: true,
            ..PlanCache::default()
        };
        assert_eq!(cycle(&mut kept, 1, 3), [false, false, false]);
        assert_eq!(kept.len(), 1);
    }
}
