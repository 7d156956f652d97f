//! Kept plans against the planner: every kept plan that rebinds to a frame must be the
//! planner's own answer for it, in every schedule and across graphs.

use super::*;

/// Runs each graph of the case three times in a row, as frames, and the next graph after it,
/// in program order and reordered (with and without the fallback to program order); then
/// five times, alternating two schedules, so that the kept plans mix schedules. Wherever
/// `Rebinder` accepts a kept plan of the last frames for the next input (what `finish()` may
/// execute), that plan must be exactly the planner's answer for the input.
pub(super) fn check_rebinding(case: &Case, seen: &Seen) -> Result<(), String> {
    let mut reordered_rebound = false;
    let schedules = [
        Schedule::PROGRAM_ORDER,
        Schedule::REORDER,
        Schedule::REORDER.without_fallback(),
    ];
    for schedule in schedules {
        let (same, across) = check_rebinding_with(case, 3, |_, _| schedule)
            .map_err(|e| format!("{schedule:?}: {e}"))?;
        if schedule == Schedule::PROGRAM_ORDER {
            bump(&seen.rebound, same);
            bump(&seen.rebound_across_graphs, across);
        } else {
            reordered_rebound |= same;
        }
    }
    bump(&seen.rebound_scheduled, reordered_rebound);
    // One cache that holds plans of every schedule, as a graph whose frames change schedule:
    // each graph's frames alternate between two of them (which two moves on with the graph),
    // so a frame finds in front the plan of the other schedule, and behind it its own.
    let alternate = |g: usize, frame: usize| schedules[(g + frame % 2) % schedules.len()];
    let (same, across) =
        check_rebinding_with(case, 5, alternate).map_err(|e| format!("mixed schedules: {e}"))?;
    bump(&seen.rebound_mixed_schedules, same || across);
    Ok(())
}

/// (a plan rebound for the same graph, a plan rebound across graphs), running each graph
/// `frames` times, frame `f` of graph `g` with schedule `schedule_of(g, f)`. Every plan of the
/// last `KEPT_PLANS` frames that rebinds to a frame must equal the planner's answer with the
/// frame's schedule.
fn check_rebinding_with(
    case: &Case,
    frames: usize,
    schedule_of: impl Fn(usize, usize) -> Schedule,
) -> Result<(bool, bool), String> {
    let mut resources = case.resources.clone();
    let mut last = case.start.clone();
    let mut rebinder = Rebinder::default();
    // (graph, plan), the most recent first.
    let mut kept: std::collections::VecDeque<(usize, Plan)> = Default::default();
    let (mut same, mut across) = (false, false);
    for (g, passes) in case.graphs.iter().enumerate() {
        for frame in 0..frames {
            let schedule = schedule_of(g, frame);
            let input = PlanInput {
                queues: case.queues.clone(),
                resources: resources.clone(),
                passes: passes.clone(),
            };
            let planned = plan_scheduled(&input, schedule)
                .map_err(|e| format!("graph {g} frame {frame}: {e}"))?;
            // Like `finish()`, the plan it would take (the first that rebinds) goes back in
            // front as the new one; every one that rebinds is checked.
            let mut taken = None;
            for (i, (kept_g, kept_plan)) in kept.iter().enumerate() {
                let mut rebound = kept_plan.clone();
                if let Ok(old) = rebinder.rebind_scheduled(&mut rebound, input.clone(), schedule) {
                    if rebound.queues != planned.queues
                        || rebound.order != planned.order
                        || rebound.reordered != planned.reordered
                        || rebound.final_states != planned.final_states
                        || rebound.transients != planned.transients
                    {
                        return Err(format!(
                            "graph {g} frame {frame} ({schedule:?}): the plan of graph {kept_g}, rebound, differs from a new one\nrebound:\n{rebound}\nplanned:\n{planned}\nplanned from:\n{:#?}",
                            old
                        ));
                    }
                    if *kept_g == g {
                        same = true;
                    } else {
                        across = true;
                    }
                    taken.get_or_insert(i);
                }
            }
            let values = planned.assign_values(&mut last);
            for (r, st) in resources
                .iter_mut()
                .zip(planned.resolved_final_states(&values))
            {
                r.initial = st;
            }
            if let Some(i) = taken {
                kept.remove(i);
            }
            kept.push_front((g, planned));
            kept.truncate(vk_baton::plan::KEPT_PLANS);
        }
    }
    Ok((same, across))
}
