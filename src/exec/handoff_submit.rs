//! The executor's side of a handoff (`Graph::hand_off`): an execution whose one pass the
//! app records and submits itself.
//!
//! [`Execution::begin_handoff`] does what [`super::run`] does for every queue but the
//! app's: it records and submits the release-only batches, assigns the timeline values (the
//! app's batch gets the next value of its queue), and commits the resources' final states,
//! all under the same locks in the same order. It keeps the app queue's submit lock, so that
//! nothing else signals that queue's timeline before the app's submit.
//!
//! Committing at once, rather than once the app says it submitted, is what keeps other threads
//! right in between: a graph planned meanwhile sees the handoff's states and waits for the
//! app's timeline value, which the app's submit signals. If the app never submits, the handoff
//! either puts the old states back ([`Execution::restore_if_unobserved`]: nothing was
//! submitted and nobody committed since) or submits the app's batch itself with nothing in the
//! pass ([`Execution::submit_app_batch`]), so that every state it committed is true.

use super::record::Recording;
use super::submit::{Locked, SubmitFailure};
use super::Execution;
use crate::error::{Error, Result};
use crate::fence::ExecutionFence;
use crate::plan::{submission_runs, SegmentState, SubmissionRun, TimelineValues};
use crate::prepared::scratch::FrameScratch;
use crate::queue::{Queue, QueueLock};
use crate::signals::AppSignals;
use std::ops::Range;

/// A resource's segments, as its tracked state holds them.
pub(crate) type Segments = Vec<(Range<u64>, SegmentState<Queue>)>;

/// What a begun handoff keeps until the app has submitted (or given up): dropping it
/// releases the app queue's submit lock.
pub(crate) struct Begun<'q> {
    /// The app queue's submit lock, with the app batch's value already handed out.
    pub(super) lock: QueueLock<'q>,
    /// The values of this execution: the release batches' and the app batch's.
    pub(super) values: TimelineValues,
    /// Per resource (the plan's indices): its segments before the handoff, and its state's
    /// version right after the handoff committed.
    pub(super) before: Vec<(Segments, u64)>,
    /// The release-only batches the library submitted, kept alive until they complete.
    pub(super) release: Option<ExecutionFence>,
}

impl<'q> Begun<'q> {
    /// The app queue's submit lock, which the app's submit is made under.
    pub(crate) fn lock(&self) -> &QueueLock<'q> {
        &self.lock
    }

    /// The timeline values of the handoff's batches, the app's included.
    pub(crate) fn values(&self) -> &TimelineValues {
        &self.values
    }

    /// Whether the library submitted a release on another queue first.
    pub(crate) fn released(&self) -> bool {
        self.release.is_some()
    }
}

impl Execution<'_, '_> {
    /// Submits the other queues' batches and commits the final states; returns the app
    /// queue's lock with everything the app's submit needs. `app` is the planner's index of
    /// `app_queue`, whose batch the caller checked with [`crate::plan::Plan::app_batch`].
    pub(crate) fn begin_handoff<'q>(
        &mut self,
        app: usize,
        app_queue: &'q Queue,
    ) -> Result<Begun<'q>> {
        self.pools.collect();
        // Record the release-only batches before taking any lock, as `run` records first.
        let app_batches = std::mem::take(&mut self.plan.queues[app].batches);
        // A part of the plan is recorded: barriers kept for another part must not be used.
        self.forget_baked();
        let mut frame = FrameScratch::default();
        let recorded = self.record(&mut frame);
        self.plan.queues[app].batches = app_batches;
        let recording = recorded?;
        let token = recording.token.clone();

        let this = &*self;
        let order = this.queues_by_handle();
        // The same order as every execution: queues by handle, then resources by id.
        let (mut locked, mut app_lock) = match this.lock_for_handoff(&order, app, app_queue) {
            Ok(locks) => locks,
            Err(e) => {
                this.give_back(recording, &mut frame);
                return Err(e);
            }
        };
        let values = this.hand_out_values(&mut locked, &mut app_lock, app);
        let others: Vec<usize> = order.iter().copied().filter(|&q| q != app).collect();
        let runs = submission_runs(this.plan, &others);
        let submitted = this.submit_releases(&mut locked, &runs, &values, &recording, &mut frame);
        if let Err(failure) = submitted {
            drop(locked);
            return Err(this.after_failed_release(failure, recording, &mut frame));
        }
        let before = this.commit_keeping_before(&mut locked, &values);
        drop(locked);
        let release = if runs.is_empty() {
            this.give_back(recording, &mut frame);
            None
        } else {
            token.set_submitted(&recording.lists.fences);
            let in_flight = recording.into_in_flight(&mut frame, this.resources, this.queues);
            Some(ExecutionFence::new(in_flight, this.pools.clone(), false))
        };
        Ok(Begun {
            lock: app_lock,
            values,
            before,
            release,
        })
    }

    /// The plan's queues with batches, by `VkQueue` handle: the order every execution locks
    /// them in.
    fn queues_by_handle(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.queues.len())
            .filter(|&q| !self.plan.queues[q].batches.is_empty())
            .collect();
        order.sort_by_key(|&q| ash::vk::Handle::as_raw(self.queues[q].handle()));
        order
    }

    /// Locks the queues in `order` (the app's queue through `app_queue`, whose lock the app's
    /// submit keeps), then the resources.
    fn lock_for_handoff<'q, 's>(
        &'s self,
        order: &[usize],
        app: usize,
        app_queue: &'q Queue,
    ) -> Result<(Locked<'s>, QueueLock<'q>)> {
        let mut locked = Locked {
            queues: (0..self.queues.len()).map(|_| None).collect(),
            resources: (0..self.resources.len()).map(|_| None).collect(),
        };
        let mut app_lock = None;
        for &q in order {
            if q == app {
                app_lock = Some(app_queue.lock());
            } else {
                locked.queues[q] = Some(self.queues[q].lock());
            }
        }
        let Some(app_lock) = app_lock else {
            return Err(Error::InvalidInput(
                "a handoff plan has a batch on the app's queue".into(),
            ));
        };
        if let Err(f) = self.lock_resources(&mut locked, &mut Vec::new()) {
            return Err(f.error);
        }
        Ok((locked, app_lock))
    }

    /// Assigns the plan's timeline values and hands them out on the locked queues now, even
    /// if the app never submits: a value is never reused.
    fn hand_out_values(
        &self,
        locked: &mut Locked<'_>,
        app_lock: &mut QueueLock<'_>,
        app: usize,
    ) -> TimelineValues {
        let mut last: Vec<u64> = (0..self.queues.len())
            .map(|q| match (q == app, &locked.queues[q]) {
                (true, _) => app_lock.last_value(),
                (false, Some(l)) => l.last_value(),
                (false, None) => 0,
            })
            .collect();
        let values = self.plan.assign_values(&mut last);
        app_lock.set_last_value(last[app]);
        for (q, l) in locked.queues.iter_mut().enumerate() {
            if let Some(l) = l {
                l.set_last_value(last[q]);
            }
        }
        values
    }

    /// Submits the release-only batches on the other queues through the same submit loop as
    /// every execution, without app signals.
    fn submit_releases(
        &self,
        locked: &mut Locked<'_>,
        runs: &[SubmissionRun],
        values: &TimelineValues,
        recording: &Recording,
        frame: &mut FrameScratch,
    ) -> std::result::Result<(), SubmitFailure> {
        let none = AppSignals::default();
        self.submit_runs(locked, runs, values, recording, &mut frame.submit, &none)?;
        log::debug!("handoff: submitted {} release-only run(s)", runs.len());
        Ok(())
    }

    /// Commits the final states, and returns each resource's segments from before with the
    /// version the commit gave it (what [`Execution::restore_if_unobserved`] restores).
    fn commit_keeping_before(
        &self,
        locked: &mut Locked<'_>,
        values: &TimelineValues,
    ) -> Vec<(Segments, u64)> {
        let mut before: Vec<(Segments, u64)> = (locked.resources.iter())
            .map(|g| (g.as_ref().map_or_else(Vec::new, |g| g.segments.clone()), 0))
            .collect();
        // A handoff's plan goes back to the cache without an execution's rest to compare with.
        self.commit(locked, values, &mut Vec::new());
        for (b, g) in before.iter_mut().zip(&locked.resources) {
            b.1 = g.as_ref().map_or(0, |g| g.version);
        }
        before
    }

    /// Puts the states from before the handoff back, if nobody committed to any of its
    /// resources since (so nobody can have planned work after the app's); returns whether it
    /// did. Plans made meanwhile from the handoff's states then fail as stale.
    pub(crate) fn restore_if_unobserved(&self, before: &[(Segments, u64)]) -> bool {
        let mut order: Vec<usize> = (0..self.resources.len()).collect();
        order.sort_by_key(|&r| self.resources[r].id());
        let mut guards: Vec<_> = order
            .iter()
            .map(|&r| (r, self.resources[r].tracked().lock()))
            .collect();
        if guards.iter().any(|(r, g)| g.version != before[*r].1) {
            return false;
        }
        for (r, g) in &mut guards {
            g.commit(before[*r].0.clone());
        }
        true
    }

    /// Submits the app's batch on the app's queue (under `lock`) with the pass recording
    /// nothing: its waits, barriers and timeline signal, so that the states the handoff
    /// committed hold although the app never submitted.
    pub(crate) fn submit_app_batch(
        &mut self,
        app: usize,
        lock: &QueueLock<'_>,
        values: &TimelineValues,
    ) -> Result<()> {
        let mut others: Vec<_> = self
            .plan
            .queues
            .iter_mut()
            .map(|q| std::mem::take(&mut q.batches))
            .collect();
        self.plan.queues[app].batches = std::mem::take(&mut others[app]);
        // As in `begin_handoff`: another part of the plan than the last recording's.
        self.forget_baked();
        let mut frame = FrameScratch::default();
        let recorded = self.record(&mut frame);
        for (q, batches) in others.into_iter().enumerate() {
            if q != app {
                self.plan.queues[q].batches = batches;
            }
        }
        let recording = recorded?;
        let run = SubmissionRun {
            queue: app,
            batches: 0..self.plan.queues[app].batches.len(),
        };
        let fence = recording.queue_fence(app).unwrap_or_default();
        if let Err(e) = self.submit_run(
            lock,
            &run,
            values,
            &recording,
            fence,
            &mut frame.submit,
            &[],
        ) {
            self.give_back(recording, &mut frame);
            return Err(Error::vk("vkQueueSubmit2", e));
        }
        recording.token.set_submitted(&recording.lists.fences);
        let in_flight = recording.into_in_flight(&mut frame, self.resources, self.queues);
        // Dropped at once: the graph's pools release it once its fence signals.
        drop(ExecutionFence::new(in_flight, self.pools.clone(), false));
        Ok(())
    }

    /// Hands an unsubmitted recording back to the pools.
    fn give_back(&self, recording: Recording, frame: &mut FrameScratch) {
        recording.token.set_submitted(&[]);
        recording.token.set_failed();
        self.pools
            .recycle(recording.into_in_flight(frame, &[], &[]));
    }

    /// After a failed release submit: frees or leaks the recording as `run` does.
    fn after_failed_release(
        &self,
        failure: SubmitFailure,
        recording: Recording,
        frame: &mut FrameScratch,
    ) -> Error {
        if failure.settled {
            self.give_back(recording, frame);
        } else {
            log::error!("a handoff's release submit failed ({}) and the queues could not be waited for: leaking its objects", failure.error);
            recording.token.set_failed();
            std::mem::forget(recording);
        }
        failure.error
    }
}
