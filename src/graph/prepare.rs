//! Passes to a prepared frame: [`Graph::prepare`] lowers them with the resources' states,
//! looks the frame up in the cache (`cache.rs`) or plans anew, and verifies the plan in
//! debug builds. A builder's `finish()`, a held plan's re-plan and a handoff all come through
//! here, and all of them give their frames back to the cache, so a shape that comes back is
//! not planned again.

use super::cache::Found;
use super::lowering::{lower, Lowered, QueueExtensions};
use super::Graph;
use crate::access::DeviceFeatures;
use crate::error::{Error, Result};
use crate::pass::PassEntry;
use crate::plan::{self, Plan, PlanInput, Schedule};
use crate::prepared::{PreparedFrame, Tier};
use crate::queue::Queue;

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
    /// Lowers `passes` with the resources' current states and looks their frame up in the
    /// cache (the one lookup: [`super::cache::PlanCache::lookup`]), or plans them (verified
    /// in debug builds): the one way a graph turns passes into a frame. The tier is `None`
    /// for a new plan, which refills an evicted frame's vectors. The graph's lock is held
    /// once, for lowering and the lookup, and to put the last executed builder frame in the
    /// cache first: `last`, which a builder brings, or the one in the graph's slot;
    /// planning and verifying run without it.
    pub(crate) fn prepare(
        &self,
        passes: &[PassEntry<'_>],
        schedule: Schedule,
        recorded_by: RecordedBy,
        last: Option<Box<PreparedFrame>>,
    ) -> Result<(Box<PreparedFrame>, Option<Tier>)> {
        let device = self.device.handle();
        let features = self.device_features();
        let ext = QueueExtensions {
            all_stages: recorded_by == RecordedBy::Graph
                && features.contains(DeviceFeatures::MAINTENANCE8),
            maintenance9: features.contains(DeviceFeatures::MAINTENANCE9),
        };
        let layouts = self.layout_policy();
        let found = {
            let mut kept = self.kept.lock();
            let kept = &mut *kept;
            match last {
                Some(frame) => kept.cache.put_back(frame),
                None => self.take_returned_frame(&mut kept.cache),
            }
            let lists = kept.cache.lowering_lists();
            let scratch = &mut kept.lowering;
            let mut lowered = lower((device, ext, layouts), passes, scratch, lists)?;
            let build = |l: &mut Lowered, spare| {
                l.build_input(passes, spare, scratch);
                l.snapshot_states(device)
            };
            kept.cache.lookup((&mut lowered, passes), schedule, build)?
        };
        let (mut frame, tier) = match found {
            Found::Reused(frame, tier) => {
                #[cfg(debug_assertions)]
                if tier == Tier::AtRest {
                    let f = &frame;
                    super::lowering::debug_check_at_rest(
                        &f.plan,
                        &f.queues,
                        &f.resources,
                        &f.versions,
                    );
                }
                verify_in_debug(&frame.plan, &frame.queues)?;
                (frame, Some(tier))
            }
            Found::New {
                mut frame,
                input,
                spare,
            } => {
                // A kept plan was checked when it was planned, and features are never taken back.
                check_features(&input, features)?;
                frame.plan = plan_and_verify(input, spare, &frame.queues, schedule)?;
                (frame, None)
            }
        };
        frame.layouts = layouts;
        frame.record_labels = self.labels_on();
        frame.replay = self.replay_on();
        // The builder's passes: their keys are asked for at every execution.
        frame.replays.hold_keys(false);
        if let Some(transients) = self.pools.transients().get() {
            transients.check_budget(&frame.plan)?;
        }
        Ok((frame, tier))
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
    let place = crate::transient_placement();
    let plan = plan::plan_scheduled_reusing(input, spare, schedule, place)?;
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
/// The graph's one seam for the verifier.
pub(super) fn verify_in_debug(plan: &Plan, queues: &[Queue]) -> Result<()> {
    #[cfg(all(feature = "verify", debug_assertions))]
    if let Err(violations) = {
        let last: Vec<u64> = queues.iter().map(Queue::last_value).collect();
        plan.verify_from(&last)
    } {
        return Err(crate::error::Error::Verification(violations));
    }
    let _ = (plan, queues); // Read only by the verifier.
    Ok(())
}

impl Graph {
    /// Moves the frame the last builder execution left in the graph's slot into `cache`
    /// (a held plan's re-plan or a handoff may take it), leaving its lists for the next
    /// builder.
    fn take_returned_frame(&self, cache: &mut super::cache::PlanCache) {
        let Some(mut returned) = self.returned.take() else {
            return;
        };
        if let Some(frame) = returned.frame.take() {
            cache.put_back(frame);
        }
        if let Some(frame) = self.returned.put(returned).and_then(|r| r.frame) {
            cache.put_back(frame);
        }
    }
}
