//! Plan -> command buffers -> submits.
//!
//! [`run`] executes a [`PreparedFrame`] (`crate::prepared`): it borrows the frame for the
//! length of one execution as an `Execution`, with the pools to take command buffers and
//! fences from and the passes, and gives it back with what it committed in its scratch.
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
//! [`handoff_submit`] runs an execution whose one pass the app submits itself: the library
//! submits the other queues' batches and commits the states, and the app's batch goes to the
//! app (whose side, above this module, is the crate's `Handoff`).

mod handoff_submit;
mod pools;
mod record;
mod shared;
mod submit;

pub(crate) use handoff_submit::Begun;
pub(crate) use shared::GraphPools;

use crate::access::LayoutPolicy;
use crate::error::Result;
use crate::fence::ExecutionFence;
use crate::pass::PassEntry;
use crate::plan::Plan;
use crate::prepared::labels::PlanLabels;
use crate::prepared::replays::Replays;
use crate::prepared::scratch::FrameScratch;
use crate::prepared::{AtRest, PlanBarriers, PreparedFrame};
use crate::queue::Queue;
use crate::resource::Resource;
use crate::signals::{self, AppSignals};
use std::sync::Arc;
use submit::SubmitFailure;

/// One execution of a prepared frame: the frame's parts, borrowed for as long as it records
/// and submits, with the pools and the passes.
struct Execution<'e, 'a> {
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
    /// Whether this execution may keep what it records, or submit a kept recording again.
    replay: bool,
    /// The frame's kept recordings.
    replays: &'e mut Replays,
    /// Where the plan's last execution left the resources: a commit there only moves values.
    rest: &'e AtRest,
    /// Whether this execution was submitted and committed (what it committed stays in the
    /// frame's scratch).
    ran: &'e mut bool,
    /// The layouts the passes declared their image uses in, which they record with.
    layouts: LayoutPolicy,
    /// Whether passes are recorded inside debug labels (with the graph's debug utils).
    record_labels: bool,
}

/// Records and submits `frame`'s plan with `passes` (those it was prepared from), and
/// commits the resources' new states; see [`crate::Planned::execute`]. What it committed is
/// in the frame afterwards, for its owner to note ([`PreparedFrame::note_ran`]). The fence
/// holds clones of the frame's queues and resources.
pub(crate) fn run(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'_>],
    frame: &mut PreparedFrame,
    signals: &AppSignals,
) -> Result<ExecutionFence> {
    let (mut execution, scratch) = Execution::of(pools, passes, frame);
    execution.submit_with(scratch, signals)
}

/// Begins a handoff of `frame`: records and submits the release-only
/// batches on the other queues, commits the states, and returns the app queue's submit lock
/// with the values the app's submit signals. `app` is the plan's index of `queue`.
pub(crate) fn begin_handoff<'q>(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'q>],
    frame: &mut PreparedFrame,
    app: usize,
    queue: &'q Queue,
) -> Result<Begun<'q>> {
    Execution::of(pools, passes, frame)
        .0
        .begin_handoff(app, queue)
}

/// Ends a handoff dropped before the app submitted: puts the old states back if nothing was
/// submitted and nobody committed since (`Ok(true)`), or else submits the app's batch with
/// nothing in the pass, so that the states it committed hold (`Ok(false)`).
pub(crate) fn settle_handoff(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'_>],
    frame: &mut PreparedFrame,
    app: usize,
    begun: Begun<'_>,
) -> Result<bool> {
    let (mut execution, _) = Execution::of(pools, passes, frame);
    if begun.release.is_none() && execution.restore_if_unobserved(&begun.before) {
        return Ok(true);
    }
    (execution.submit_app_batch(app, &begun.lock, &begun.values)).map(|()| false)
}

/// Records `frame`'s plan into command buffers and throws them away, submitting nothing and
/// changing no state: what `benches/plan.rs` measures against hand-written recording.
pub(crate) fn record_only(
    pools: &Arc<GraphPools>,
    passes: &mut [PassEntry<'_>],
    frame: &mut PreparedFrame,
) -> Result<()> {
    let (mut execution, scratch) = Execution::of(pools, passes, frame);
    execution.record_only(scratch)
}

impl<'e, 'a> Execution<'e, 'a> {
    /// Borrows `frame` for one execution with `passes`, and lends its scratch beside it.
    fn of(
        pools: &'e Arc<GraphPools>,
        passes: &'e mut [PassEntry<'a>],
        frame: &'e mut PreparedFrame,
    ) -> (Self, &'e mut FrameScratch) {
        let PreparedFrame {
            plan,
            queues,
            resources,
            versions,
            layouts,
            record_labels,
            barriers,
            labels,
            recorded,
            replay,
            replays,
            rest,
            ran,
            scratch,
            ..
        } = frame;
        let execution = Execution {
            pools,
            passes,
            queues,
            resources,
            versions,
            plan,
            barriers,
            labels,
            recorded,
            replay: *replay,
            replays,
            rest,
            ran,
            layouts: *layouts,
            record_labels: *record_labels,
        };
        (execution, scratch)
    }

    /// Forgets the baked barriers, labels and kept recordings: a part of the plan is recorded
    /// next (a handoff's), which they were not made for, and not kept.
    fn forget_baked(&mut self) {
        self.barriers.forget();
        self.labels.forget();
        self.replays.forget();
        self.replay = false;
        *self.recorded = false;
    }

    /// Records, submits and commits. The fence keeps clones of this execution's resources
    /// and queues alive until the GPU is done. The graph's pools are locked once, to record
    /// (`record`); what the execution took goes back with its fence.
    fn submit_with(
        &mut self,
        frame: &mut FrameScratch,
        signals: &AppSignals,
    ) -> Result<ExecutionFence> {
        signals::check(self.plan, self.queues, signals)?;
        *self.ran = false;
        self.pools.collect();
        let pools = self.pools;
        let mut recording = self.record(frame)?;
        let mut reached = std::mem::take(&mut recording.lists.reached);
        let submitted =
            self.submit_and_commit(&recording, &mut frame.submit, signals, &mut reached);
        *self.ran = submitted.is_ok() && frame.submit.values.is_some();
        recording.lists.reached = reached;
        let token = recording.token.clone();
        let replayed = recording.replayed;
        let in_flight = recording.into_in_flight(frame, self.resources, self.queues);
        match submitted {
            Ok(()) => {
                token.set_submitted(&in_flight.lists.fences);
                Ok(ExecutionFence::new(in_flight, pools.clone(), replayed))
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
    fn record_only(&mut self, frame: &mut FrameScratch) -> Result<()> {
        let recording = self.record(frame)?;
        let token = recording.token.clone();
        token.set_submitted(&[]);
        token.set_failed();
        self.pools
            .recycle(recording.into_in_flight(frame, &[], &[]));
        Ok(())
    }
}
