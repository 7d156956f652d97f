//! The `schedule` feature: passes planned out of insertion order, and passes whose results
//! nobody uses dropped. The [`Schedule`] type and program order are the core's
//! (`plan::schedule`, whose docs say what each option does); this leaf gives the planner the
//! orders of a schedule that reorders or culls, and regroups the batches planned in them,
//! through the core's [`Scheduler`].
//!
//! [`conflict`] says which passes must keep their order, [`cull`] which passes are dropped,
//! [`reorder`] the order taken level by level, and [`regroup`] the batches and barrier
//! commands joined by level afterwards.

mod conflict;
mod cull;
mod regroup;
mod reorder;
#[cfg(test)]
mod tests;

use crate::plan::order::{Scheduled, Scheduler};
use crate::plan::{PlanInput, QueuePlan, Schedule};

impl Scheduler for Schedule {
    fn reordered_orders(self, input: &PlanInput) -> crate::Result<(Scheduled, Option<Scheduled>)> {
        let kept: Vec<usize> = if self.cull {
            cull::kept(input)
        } else {
            (0..input.passes.len()).collect()
        };
        if !self.reorder {
            let in_order = Scheduled {
                order: kept,
                level: None,
            };
            return Ok((in_order, None));
        }
        let (order, level) = reorder::order(input, &kept);
        let reordered = Scheduled {
            order,
            level: Some(level),
        };
        let fallback = self.fallback.then_some(Scheduled {
            order: kept,
            level: None,
        });
        Ok((reordered, fallback))
    }

    fn regroup(input: &PlanInput, level: &[usize], queues: &mut [QueuePlan]) {
        regroup::regroup(input, level, queues);
    }
}
