//! Plan -> command buffers -> submits.
//!
//! [`run`] executes a [`PreparedFrame`] (`crate::prepared`): it borrows the frame for the
//! length of one execution as an `Execution`, with the pools to take command buffers and
//! fences from and the passes, and gives it back with what it committed in `frame.ran`.
//! Running goes down through two steps, each a submodule:
//!
//! 1. [`record`]: one primary command buffer per batch (one per piece of a batch whose
//!    passes are spread over several threads: [`crate::Graph::set_recording_threads`]).
//!    [`crate::plan::Command::Barrier`]
//!    becomes exactly one `vkCmdPipelineBarrier2` from the frame's baked barriers;
//!    [`crate::plan::Command::Pass`] becomes a debug label around the pass's own recording. A
//!    pass's error or panic puts everything back before it goes on.
//! 2. [`submit`]: each queue gets one `vkQueueSubmit2` with one `VkSubmitInfo2` per batch (in
//!    the order [`crate::plan::submission_runs`] decides) and a `VkFence` for host waits.
//!    Resource states are committed while the queues and resources are locked, so two
//!    executions never interleave their bookkeeping.
//!
//! [`handoff`] runs an execution whose one pass the app submits itself: the library submits
//! the other queues' batches and commits the states, and the app's batch goes to the app.

pub mod fence;
pub mod handoff;
mod handoff_submit;
mod pools;
mod record;
mod scratch;
mod shared;
mod signals;
mod submit;

use crate::pass::PassEntry;
pub(crate) use handoff_submit::Begun;
pub(crate) use pools::{PoolKey, Reusable};
pub(crate) use scratch::{give, take, words, FrameScratch, Spare, Spares, SubmitScratch};
pub(crate) use shared::GraphPools;
pub(crate) use shared::InFlight;
pub use signals::AppSignals;

use crate::access::LayoutPolicy;
use crate::error::Result;
use crate::fence::ExecutionFence;
use crate::plan::Plan;
use crate::prepared::labels::PlanLabels;
use crate::prepared::{AtRest, PlanBarriers, PreparedFrame, Ran};
use crate::queue::Queue;
use crate::resource::Resource;
use std::sync::Arc;
use submit::SubmitFailure;

/// One execution of a prepared frame: the frame's parts, borrowed for as long as it records
/// and submits, with the pools and the passes.
pub(crate) struct Execution<'e, 'a> {
    /// Where command buffers and fences come from and go back to.
    pools: &'e Arc<GraphPools>,
    /// The passes, in program order (the plan's pass indices).
    passes: &'e mut [PassEntry<'a>],
    /// Planner queue index -> queue.
    queues: &'e [Queue],
    /// Planner resource index -> resource.
    resources: &'e [Resource],
    /// Each resource's state version when planned.
    versions: &'e [u64],
    plan: &'e mut Plan,
    /// The Vulkan structs of `plan`'s barriers, once recorded, and its labels.
    barriers: &'e mut PlanBarriers,
    labels: &'e mut PlanLabels,
    /// Whether the plan was recorded since it came.
    recorded: &'e mut bool,
    /// Where the plan's last execution left the resources: a commit there only moves values.
    rest: &'e AtRest,
    /// What this execution committed.
    ran: &'e mut Ran,
    /// The layouts the passes declared their image uses in, which they record with.
    layouts: LayoutPolicy,
}

/// Records and submits `frame`'s plan with `passes` (those it was prepared from), and
/// commits the resources' new states; see [`crate::Planned::execute`]. What it committed is
/// in `frame.ran` afterwards, for the frame's owner to note
/// ([`PreparedFrame::note_ran`]). The fence holds clones of the frame's queues and resources.
pub(crate) fn run(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'_>],
    frame: &mut PreparedFrame,
    signals: &AppSignals,
) -> Result<ExecutionFence> {
    Execution::of(pools, passes, frame).submit_once(signals)
}

/// Refuses signals that `frame`'s plan cannot carry (see [`AppSignals`]), before anything
/// is recorded.
pub(crate) fn check_signals(frame: &PreparedFrame, signals: &AppSignals) -> Result<()> {
    signals::check(&frame.plan, &frame.queues, signals)
}

/// Records `frame`'s plan into command buffers and throws them away, submitting nothing and
/// changing no state: what `benches/plan.rs` measures against hand-written recording.
pub(crate) fn record_only(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'_>],
    frame: &mut PreparedFrame,
) -> Result<()> {
    Execution::of(pools, passes, frame).record_only()
}

impl<'e, 'a> Execution<'e, 'a> {
    /// Borrows `frame` for one execution with `passes`.
    pub(crate) fn of(
        pools: &'e Arc<GraphPools>,
        passes: &'e mut [PassEntry<'a>],
        frame: &'e mut PreparedFrame,
    ) -> Self {
        let PreparedFrame {
            plan,
            queues,
            resources,
            versions,
            layouts,
            barriers,
            labels,
            recorded,
            rest,
            ran,
            ..
        } = frame;
        Execution {
            pools,
            passes,
            queues,
            resources,
            versions,
            plan,
            barriers,
            labels,
            recorded,
            rest,
            ran,
            layouts: *layouts,
        }
    }

    /// Forgets the baked barriers and labels: a part of the plan is recorded next (a
    /// handoff's), which they were not built for.
    pub(crate) fn forget_baked(&mut self) {
        self.barriers.forget();
        self.labels.forget();
        *self.recorded = false;
    }

    /// Records, submits and commits. The fence keeps clones of this execution's resources
    /// and queues alive until the GPU is done. The spares are locked twice: to take what the
    /// execution needs, and to give back its scratch and the recording's tables.
    fn submit_once(&mut self, signals: &AppSignals) -> Result<ExecutionFence> {
        signals::check(self.plan, self.queues, signals)?;
        self.ran.submitted = false;
        self.pools.collect();
        let pools = self.pools;
        let (token, mut frame, mut reached, (mut resources, mut queues), out) = {
            let mut spares = pools.spares.lock();
            let (token, frame, reached, lists) = spares.start_frame(&pools.device);
            (
                token,
                frame,
                reached,
                lists,
                record::Recording::new(&mut spares),
            )
        };
        let recording = match self.record(&token, &mut frame.recording, out) {
            Ok(recording) => recording,
            Err(e) => {
                pools.spares.lock().keep_frame(frame);
                return Err(e);
            }
        };
        let submitted =
            self.submit_and_commit(&recording, &mut frame.submit, signals, &mut reached);
        if let (Ok(()), Some(values)) = (&submitted, &frame.submit.values) {
            let ran = &mut *self.ran;
            ran.submitted = true;
            ran.committed.clone_from(&frame.submit.committed);
            ran.last.clone_from(&values.last);
        }
        resources.extend(self.resources.iter().cloned());
        queues.extend(self.queues.iter().cloned());
        let mut in_flight = {
            let mut spares = pools.spares.lock();
            spares.keep_frame(frame);
            recording.into_in_flight_keeping(&mut spares, token.clone(), (resources, queues))
        };
        match submitted {
            Ok(()) => {
                in_flight.reached = reached;
                token.set_submitted(&in_flight.fences);
                Ok(ExecutionFence::new(in_flight, pools.clone()))
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

    /// Records the plan into command buffers and throws them away.
    fn record_only(mut self) -> Result<()> {
        let (token, mut frame, reached, lists, out) = {
            let mut spares = self.pools.spares.lock();
            let (token, frame, reached, lists) = spares.start_frame(&self.pools.device);
            (
                token,
                frame,
                reached,
                lists,
                record::Recording::new(&mut spares),
            )
        };
        let recorded = self.record(&token, &mut frame.recording, out);
        {
            let mut spares = self.pools.spares.lock();
            spares.keep_frame(frame);
            give(&mut spares.reached, reached);
            give(&mut spares.resources, lists.0);
            give(&mut spares.queues, lists.1);
        }
        let recording = recorded?;
        token.set_submitted(&[]);
        token.set_failed();
        let pools = self.pools;
        pools.recycle(recording.into_in_flight(pools, token.clone(), Vec::new(), Vec::new()));
        Ok(())
    }
}
