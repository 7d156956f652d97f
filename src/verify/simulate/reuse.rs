//! The simulation's model of the plan cache: what `finish()` would reuse, checked against
//! what the planner answers.

use super::{queue_ids, Frame, SimError, Simulation};
use crate::plan::{Plan, PlanInput};

impl Simulation {
    /// The planner's answer for `input`, by the entry point `finish()` and `hand_off` plan
    /// with. Every kept plan that rebinds to `input` must be that answer exactly, not only the
    /// one the cache would take; so must the last plan rebound at rest, where `finish()` would
    /// take it (`true` then), and its input must be the states. `now`: each resource's id and
    /// version; `qmap`: each plan queue's topology queue.
    pub(super) fn plan(
        &mut self,
        input: &PlanInput,
        how: Frame<'_>,
        (now, qmap): (&[(u64, u64)], &[usize]),
    ) -> Result<(Plan, bool), SimError> {
        let frame = self.frames;
        let schedule = how.schedule();
        let place = crate::transient_placement();
        let plan =
            crate::plan::plan_scheduled_reusing(input.clone(), Default::default(), schedule, place)
                .map_err(|error| SimError::Plan { frame, error })?;
        // `finish()` and `hand_off` both look for it (`Graph::prepare`).
        let last = self.cache.frames().first().filter(|kept| {
            let rest = &kept.rest;
            rest.input_is_rest && rest.holds(now.iter().copied(), queue_ids(qmap))
        });
        let at_rest = match last {
            Some(kept) => {
                let rest = &kept.rest;
                let mut candidate = kept.plan.clone();
                let values = (&rest.input_values[..], &rest.last[..]);
                // `finish()` compares the declarations first (flat), then rebinds.
                let declared = (self.rebinder).same_declarations(&kept.plan.input, input);
                let pairs = semaphore_pairs(&kept.plan.input, input);
                let rebound = declared
                    && (self.rebinder).rebind_at_rest(
                        &mut candidate,
                        values,
                        Some((schedule, pairs.into_iter())),
                    );
                let states_differ = (candidate.input.resources.iter().zip(&input.resources))
                    .any(|(a, b)| a.initial != b.initial);
                if rebound && (!same_answer(&candidate, &plan) || states_differ) {
                    return Err(SimError::Reuse {
                        frame,
                        reused: Box::new(candidate),
                        planned: Box::new(plan),
                    });
                }
                rebound
            }
            None => false,
        };
        for kept in self.cache.frames().iter().map(|frame| &frame.plan) {
            if !self.rebinder.answers_input(kept, input, schedule, true) {
                continue;
            }
            let mut candidate = kept.clone();
            let rebound = self
                .rebinder
                .rebind_scheduled(&mut candidate, input.clone(), schedule);
            if rebound.is_ok() && !same_answer(&candidate, &plan) {
                return Err(SimError::Reuse {
                    frame,
                    reused: Box::new(candidate),
                    planned: Box::new(plan),
                });
            }
        }
        Ok((plan, at_rest))
    }
}

/// Whether a rebound plan is the planner's own answer: the same batches, order, final states
/// and transient placements.
fn same_answer(rebound: &Plan, planned: &Plan) -> bool {
    rebound.queues == planned.queues
        && rebound.order == planned.order
        && rebound.reordered == planned.reordered
        && rebound.final_states == planned.final_states
        && rebound.transients == planned.transients
}

/// Each binary semaphore of `old`'s passes with the one `new` has in its place.
fn semaphore_pairs(
    old: &PlanInput,
    new: &PlanInput,
) -> Vec<(ash::vk::Semaphore, ash::vk::Semaphore)> {
    let mut pairs = Vec::new();
    for (a, b) in old.passes.iter().zip(&new.passes) {
        pairs.extend((a.waits.iter().zip(&b.waits)).map(|(x, y)| (x.semaphore, y.semaphore)));
        pairs.extend((a.signals.iter().zip(&b.signals)).map(|(x, y)| (x.semaphore, y.semaphore)));
    }
    pairs
}
