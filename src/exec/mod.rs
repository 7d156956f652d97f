//! Plan -> command buffers -> submits.
//!
//! An [`Execution`] is one planned graph with everything needed to run it: the pools to take
//! command buffers and fences from, the passes, and the queues and resources the plan's
//! indices refer to. Running it goes down through two steps, each a submodule:
//!
//! 1. [`record`]: one primary command buffer per batch (one per piece of a batch whose
//!    passes are spread over several threads: [`crate::Graph::set_recording_threads`]).
//!    [`crate::plan::Command::Barrier`]
//!    becomes exactly one `vkCmdPipelineBarrier2`; [`crate::plan::Command::Pass`] becomes a
//!    debug label around the pass's own recording. A pass's error or panic puts everything
//!    back before it goes on.
//! 2. [`submit`]: each queue gets one `vkQueueSubmit2` with one `VkSubmitInfo2` per batch (in
//!    the order [`crate::plan::submission_runs`] decides) and a `VkFence` for host waits.
//!    Resource states are committed while the queues and resources are locked, so two
//!    executions never interleave their bookkeeping.
//!
//! [`handoff`] runs an execution whose one pass the app submits itself: the library submits
//! the other queues' batches and commits the states, and the app's batch goes to the app.

mod barriers;
pub mod fence;
pub mod handoff;
mod handoff_submit;
mod labels;
mod pools;
mod record;
mod rest;
mod scratch;
mod shared;
mod signals;
mod submit;

use crate::pass::PassEntry;
pub(crate) use barriers::{dependency_info, raw, BarrierStructs, PlanBarriers};
pub(crate) use handoff_submit::Begun;
pub(crate) use pools::{PoolKey, Reusable};
pub(crate) use rest::{AtRest, MERGED};
pub(crate) use scratch::{give, take, words, FrameScratch, Spare, Spares, SubmitScratch};
pub(crate) use shared::GraphPools;
pub(crate) use shared::InFlight;
pub use signals::AppSignals;

use crate::access::LayoutPolicy;
use crate::completion::CompletionToken;
use crate::error::Result;
use crate::fence::ExecutionFence;
use crate::plan::Plan;
use crate::queue::Queue;
use crate::resource::Resource;
use std::sync::Arc;
use submit::SubmitFailure;

/// One planned execution of a graph, ready to record and submit.
pub(crate) struct Execution<'a> {
    /// Where command buffers and fences come from and go back to.
    pub(crate) pools: Arc<GraphPools>,
    /// The passes, in program order (the plan's pass indices).
    pub(crate) passes: Vec<PassEntry<'a>>,
    /// Planner queue index -> queue.
    pub(crate) queues: Vec<Queue>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
    /// Each resource's state version when planned.
    pub(crate) versions: Vec<u64>,
    pub(crate) plan: Plan,
    /// The Vulkan structs of `plan`'s barriers, once recorded; they go with the plan.
    pub(crate) barriers: PlanBarriers,
    /// The layouts the passes declared their image uses in, which they record with.
    pub(crate) layouts: LayoutPolicy,
}

/// What an execution hands back to its graph once submitted: the plan with its baked
/// barriers, for the plan cache, and the pass list, for the next builder.
pub(crate) struct Executed<'a> {
    pub(crate) plan: Plan,
    pub(crate) barriers: PlanBarriers,
    pub(crate) passes: Vec<PassEntry<'a>>,
}

impl<'a> Execution<'a> {
    /// Records and submits the plan, and commits the resources' new states; see
    /// [`crate::Planned::execute`]. The plan and the passes go back to the caller; the
    /// lists go back to the spares.
    pub(crate) fn run(mut self, signals: &AppSignals) -> (Result<ExecutionFence>, Executed<'a>) {
        let result = self.submit_once(None, signals);
        let Execution {
            pools,
            passes,
            queues,
            resources,
            versions,
            plan,
            barriers,
            layouts: _,
        } = self;
        let mut spares = pools.spares.lock();
        give(&mut spares.versions, versions);
        give(&mut spares.resources, resources);
        give(&mut spares.queues, queues);
        let executed = Executed {
            plan,
            barriers,
            passes,
        };
        (result, executed)
    }
}

impl Execution<'_> {
    /// Records, submits and commits the plan again, leaving the execution as it is (a
    /// [`crate::HeldPlan`]); the fence holds clones of its queues and resources.
    pub(crate) fn run_again(&mut self, signals: &AppSignals) -> Result<ExecutionFence> {
        let (mut resources, mut queues) = {
            let mut spares = self.pools.spares.lock();
            (take(&mut spares.resources), take(&mut spares.queues))
        };
        resources.extend(self.resources.iter().cloned());
        queues.extend(self.queues.iter().cloned());
        self.submit_once(Some((resources, queues)), signals)
    }

    /// Records, submits and commits. The fence keeps `to_fence` (clones of this execution's
    /// resources and queues) alive until the GPU is done; `None` hands it this execution's own.
    fn submit_once(
        &mut self,
        to_fence: Option<(Vec<Resource>, Vec<Queue>)>,
        signals: &AppSignals,
    ) -> Result<ExecutionFence> {
        let (token, recording, submitted, reached) = self.submit_with_lists(signals)?;
        let (resources, queues) = to_fence.unwrap_or_else(|| {
            (
                std::mem::take(&mut self.resources),
                std::mem::take(&mut self.queues),
            )
        });
        let pools = self.pools.clone();
        let mut in_flight = recording.into_in_flight(&pools, token.clone(), resources, queues);
        match submitted {
            Ok(()) => {
                in_flight.reached = reached;
                token.set_submitted(&in_flight.fences);
                Ok(ExecutionFence::new(in_flight, pools))
            }
            Err(SubmitFailure {
                error,
                settled: true,
            }) => {
                // Nothing reached the GPU, or what did has finished (the queues were waited idle).
                token.set_submitted(&[]);
                token.set_failed();
                pools.recycle(in_flight);
                Err(error)
            }
            Err(SubmitFailure {
                error,
                settled: false,
            }) => {
                // Some work may still run and its queues could not be waited for: keep everything
                // alive for good rather than free it under the GPU.
                log::error!("a submit failed ({error}) and the queues could not be waited for: leaking the execution's objects");
                token.set_failed();
                std::mem::forget(in_flight);
                Err(error)
            }
        }
    }

    /// Records, then submits and commits: the token, the recording and the submit's outcome.
    /// A recording error has already put everything back and failed the token.
    #[allow(clippy::type_complexity)]
    fn submit_with_lists(
        &mut self,
        signals: &AppSignals,
    ) -> Result<(
        CompletionToken,
        record::Recording,
        Result<(), SubmitFailure>,
        Vec<u64>,
    )> {
        self.check_signals(signals)?;
        self.pools.collect();
        let (token, mut frame, mut reached) = {
            let mut spares = self.pools.spares.lock();
            let (token, frame) = spares.start_frame(&self.pools.device);
            (token, frame, take(&mut spares.reached))
        };
        let recording = match self.record(&token, &mut frame.recording) {
            Ok(recording) => recording,
            Err(e) => {
                self.pools.spares.lock().keep_frame(frame);
                return Err(e);
            }
        };
        let submitted =
            self.submit_and_commit(&recording, &mut frame.submit, signals, &mut reached);
        if let (Ok(()), Some(values)) = (&submitted, &frame.submit.values) {
            let ids = self.resources.iter().map(Resource::id);
            let committed = ids.zip(frame.submit.committed.iter().copied());
            let rest = &mut self.barriers.rest;
            rest.record(committed, self.queues.iter().map(Queue::id), &values.last);
            rest.set_queues(&self.queues);
        }
        self.pools.spares.lock().keep_frame(frame);
        Ok((token, recording, submitted, reached))
    }

    /// Records the plan into command buffers and throws them away, submitting nothing and
    /// changing no state: what `benches/plan.rs` measures against hand-written recording.
    pub(crate) fn record_only(mut self) -> Result<()> {
        let (token, mut frame) = self.pools.spares.lock().start_frame(&self.pools.device);
        let recorded = self.record(&token, &mut frame.recording);
        self.pools.spares.lock().keep_frame(frame);
        let recording = recorded?;
        token.set_submitted(&[]);
        token.set_failed();
        let Execution {
            pools,
            queues,
            resources,
            ..
        } = self;
        pools.recycle(recording.into_in_flight(&pools, token.clone(), resources, queues));
        Ok(())
    }
}
