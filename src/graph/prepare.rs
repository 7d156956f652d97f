//! Passes to a plan: [`Graph::prepare`] lowers them with the resources' states, takes a kept
//! plan from the cache or plans anew, and verifies the plan in debug builds. A builder's
//! `finish()`, a held plan's re-plan and a handoff all come through here, and all of them
//! give their plans back to the cache, so a shape that comes back is not planned again.

use super::cache::Match;
use super::lowering::{lower, Lists, Lowered, QueueExtensions};
use super::Graph;
use crate::access::{DeviceFeatures, LayoutPolicy};
use crate::error::{Error, Result};
use crate::exec::{Execution, GraphPools, PlanBarriers};
use crate::pass::PassEntry;
use crate::plan::{self, Plan, PlanInput, Schedule};
use crate::queue::Queue;
use crate::resource::Resource;
use std::sync::Arc;

/// Passes lowered and planned, with the objects the plan's indices refer to.
pub(crate) struct Prepared {
    pub(crate) queues: Vec<Queue>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) versions: Vec<u64>,
    pub(crate) plan: Plan,
    pub(crate) barriers: PlanBarriers,
    /// The layouts the passes' image uses were declared in, which they record with.
    pub(crate) layouts: LayoutPolicy,
    /// Whether the plan came from the cache.
    pub(crate) reused: bool,
    /// Whether it came without reading the states ([`PlanCache::take_at_rest`](super::cache::PlanCache::take_at_rest)).
    pub(crate) at_rest: bool,
}

impl Prepared {
    /// The execution of the plan with `passes` (those it was prepared from).
    pub(crate) fn into_execution<'a>(
        self,
        pools: &Arc<GraphPools>,
        passes: Vec<PassEntry<'a>>,
    ) -> Execution<'a> {
        Execution {
            pools: pools.clone(),
            passes,
            queues: self.queues,
            resources: self.resources,
            versions: self.versions,
            plan: self.plan,
            barriers: self.barriers,
            layouts: self.layouts,
        }
    }
}

/// Who records the plan's barrier commands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordedBy {
    /// The graph: it sets `maintenance8`'s USE_ALL_STAGES flag where the plan relies on it.
    Graph,
    /// The app, for a handoff: it may merge the barriers into its own without the flag, so
    /// the plan does not rely on it (its transfers wait at `ALL_COMMANDS`).
    App,
}

impl Graph {
    /// Lowers `passes` with the resources' current states and takes a kept plan that the
    /// planner would answer with, or plans them (verified in debug builds): the one way a
    /// graph turns passes into a plan. A new plan refills an evicted one's vectors.
    pub(crate) fn prepare(
        &self,
        passes: &[PassEntry<'_>],
        schedule: Schedule,
        recorded_by: RecordedBy,
    ) -> Result<Prepared> {
        // Lowered into spare declarations (the input a reused plan was matched against, or an
        // evicted plan's), refilled in place.
        let spare_input = self.cache.lock().spare_input.take();
        let lists = Lists::from_spares(&mut self.pools.spares.lock());
        let device = self.pools.device.handle();
        let features = self.device_features();
        let ext = QueueExtensions {
            all_stages: recorded_by == RecordedBy::Graph
                && features.contains(DeviceFeatures::MAINTENANCE8),
            maintenance9: features.contains(DeviceFeatures::MAINTENANCE9),
        };
        let layouts = self.layout_policy();
        let mut lowered = lower(
            (device, ext, layouts),
            passes,
            spare_input,
            &mut self.lowering.lock(),
            lists,
        )?;
        // The cache is locked only to take a plan out: planning a new one, and verifying in
        // debug builds, runs without the lock an execution needs to put its plan back. A frame
        // its last plan left at rest takes that plan without reading the states.
        let found_at_rest = self.cache.lock().take_at_rest(&mut lowered, schedule);
        let at_rest = found_at_rest.is_some();
        let found = match found_at_rest {
            Some(found) => {
                #[cfg(debug_assertions)]
                if let Match::Reused(plan, _) = &found {
                    let l = &lowered;
                    super::lowering::debug_check_at_rest(
                        plan,
                        &l.queues,
                        &l.resources,
                        &l.versions,
                    );
                }
                found
            }
            None => {
                lowered.snapshot_states(device, passes)?;
                let input = std::mem::take(&mut lowered.input);
                let ids = lowered.resources.iter().map(Resource::id);
                let resources = ids.zip(lowered.versions.iter().copied());
                let queues = lowered.queues.iter().map(Queue::id);
                self.cache
                    .lock()
                    .take_matching(input, schedule, (resources, queues))
            }
        };
        let Lowered {
            queues,
            resources,
            versions,
            ..
        } = lowered;
        let (plan, barriers, reused) =
            reuse_or_plan(found, &queues, schedule, self.device_features())?;
        self.pools.transients.check_budget(&plan)?;
        Ok(Prepared {
            queues,
            resources,
            versions,
            plan,
            barriers,
            layouts,
            reused,
            at_rest,
        })
    }
}

/// The kept plan that [`crate::graph::cache::PlanCache::take_matching`] found (the planner's answer,
/// values and semaphores mapped: [`crate::plan::Rebinder`]), with the barriers built for it;
/// otherwise a new plan, refilling the vectors it was given. `true` with a reused plan.
fn reuse_or_plan(
    found: Match,
    queues: &[Queue],
    schedule: Schedule,
    features: DeviceFeatures,
) -> Result<(Plan, PlanBarriers, bool)> {
    match found {
        Match::Reused(plan, barriers) => {
            verify_in_debug(&plan, queues)?;
            Ok((plan, barriers, true))
        }
        Match::New {
            input,
            spare,
            barriers,
        } => {
            // A kept plan was checked when it was planned, and features are never taken back.
            check_features(&input, features)?;
            let plan = plan_and_verify(input, spare, queues, schedule)?;
            Ok((plan, barriers, false))
        }
    }
}

/// Refuses a use whose access needs a device feature that is not in `enabled`.
fn check_features(input: &PlanInput, enabled: DeviceFeatures) -> Result<()> {
    for pass in &input.passes {
        for u in &pass.uses {
            let missing = u.access.device_features().without(enabled);
            if let Some(feature) = missing.names().next() {
                let access = u.access.name().map_or_else(
                    || format!("{:?} / {:?}", u.access.stages, u.access.access),
                    str::to_owned,
                );
                return Err(Error::FeatureNotEnabled {
                    pass: pass.name.clone(),
                    resource: input.resources[u.resource].name.clone(),
                    access,
                    feature,
                });
            }
        }
    }
    Ok(())
}

/// Plans `input`; debug builds with the feature "verify" also check the plan with the
/// independent verifier, from the values `queues`' timelines have been given so far (the
/// earlier graphs' work this plan waits on is at or below them).
pub(crate) fn plan_and_verify(
    input: PlanInput,
    spare: plan::SparePlan,
    queues: &[Queue],
    schedule: Schedule,
) -> Result<Plan> {
    let passes = input.passes.len();
    let place = crate::transients::placement();
    let plan = plan::plan_scheduled_reusing(input, spare, schedule, place)?;
    // Once per plan, not per execution: a kept or held plan keeps its placements.
    plan.check_placements()?;
    verify_in_debug(&plan, queues)?;
    log::debug!(
        "planned {passes} passes on {} queues: {} batches, {} barrier commands, {} waits",
        queues.len(),
        plan.batch_count(),
        plan.barrier_commands(),
        plan.semaphore_waits()
    );
    Ok(plan)
}

/// Debug builds with the feature "verify" check `plan` with the independent verifier, from
/// the values `queues`' timelines have been given so far (the earlier graphs' work this plan
/// waits on is at or below them). Reused plans are checked too: each frame on its own terms.
#[cfg_attr(
    not(all(feature = "verify", debug_assertions)),
    allow(unused_variables)
)]
pub(super) fn verify_in_debug(plan: &Plan, queues: &[Queue]) -> Result<()> {
    #[cfg(all(feature = "verify", debug_assertions))]
    if let Err(violations) = {
        let last: Vec<u64> = queues.iter().map(Queue::last_value).collect();
        plan.verify_from(&last)
    } {
        return Err(crate::error::Error::Verification(violations));
    }
    Ok(())
}
