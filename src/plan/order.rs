//! The order the planner takes the passes in: program order, or the orders of a [`Schedule`]
//! that reorders or culls, which the `schedule` feature's leaf (`src/schedule/`) gives through
//! [`Scheduler`]. The planner does not name that leaf, which uses the planner's types.

use super::{PlanInput, QueuePlan, Schedule};

/// What the planner takes from a schedule: the order in which to take the passes and, when
/// reordering, each pass's level, by which [`Scheduler::regroup`] regroups its batches.
pub(crate) struct Scheduled {
    pub(crate) order: Vec<usize>,
    pub(crate) level: Option<Vec<usize>>,
}

impl Scheduled {
    /// Whether the passes are taken by level (and regrouped) rather than in program order.
    pub(super) fn reorders(&self) -> bool {
        self.level.is_some()
    }
}

/// The orders to plan a validated `input` in under `schedule`, best first: the order
/// `schedule` takes and, when it reorders with [`Schedule::fallback`], program order of the
/// same passes, whose plan the planner keeps unless the reordered one is better. Program order
/// is the core's; reordering and culling are the [`Scheduler`]'s.
pub(super) fn orders(
    input: &PlanInput,
    schedule: Schedule,
) -> crate::Result<(Scheduled, Option<Scheduled>)> {
    if !schedule.reorder && !schedule.cull {
        let in_order = Scheduled {
            order: (0..input.passes.len()).collect(),
            level: None,
        };
        return Ok((in_order, None));
    }
    schedule.reordered_orders(input)
}

/// What the planner asks of a schedule that reorders or culls. The `schedule` feature's leaf
/// implements it; without the feature, the impl below refuses such schedules.
pub(crate) trait Scheduler {
    /// [`orders`] for a schedule that reorders or culls.
    fn reordered_orders(self, input: &PlanInput) -> crate::Result<(Scheduled, Option<Scheduled>)>;

    /// Regroups the batches the planner made in an order taken by `level`
    /// ([`Scheduled::level`]).
    fn regroup(input: &PlanInput, level: &[usize], queues: &mut [QueuePlan]);
}

/// Without the `schedule` feature, a schedule that reorders or culls is refused, so no order
/// has levels to regroup by.
#[cfg(not(feature = "schedule"))]
impl Scheduler for Schedule {
    fn reordered_orders(self, _: &PlanInput) -> crate::Result<(Scheduled, Option<Scheduled>)> {
        Err(crate::Error::InvalidInput(format!(
            "{self:?} reorders or culls passes, which needs vk-baton's `schedule` feature"
        )))
    }

    fn regroup(_: &PlanInput, _: &[usize], _: &mut [QueuePlan]) {}
}
