//! Submitting a recorded execution and committing the resources' new states.
//!
//! The queues (by handle) and then the resources (by id) are locked in a fixed order, so two
//! executions on other threads never deadlock; the plan is checked for staleness under those
//! locks, submitted in the order [`submission_runs`] decides, and the final states are
//! committed before any lock is released.

use super::recording::Recording;
use super::Execution;
use crate::error::Error;
use crate::plan::{
    submission_runs, Command, SegmentState, SubmissionRun, TimelineValues, WaitTarget,
};
use crate::queue::QueueLock;
use crate::resource::Tracked;
use ash::vk;
use parking_lot::MutexGuard;

/// A failed submission. `settled`: no part of it can still be running (nothing was submitted,
/// or the queues that took part were waited idle), so its objects may be released.
pub(crate) struct SubmitFailure {
    pub(crate) error: Error,
    pub(crate) settled: bool,
}

/// The submit locks of the queues with work and the state locks of every resource, held from
/// the staleness check until the new states are committed. Indexed like the plan's queues and
/// resources.
pub(super) struct Locked<'e> {
    pub(super) queues: Vec<Option<QueueLock<'e>>>,
    pub(super) resources: Vec<Option<MutexGuard<'e, Tracked>>>,
}

impl Execution<'_> {
    /// Locks the queues and resources, checks that no state changed since planning, submits
    /// one `vkQueueSubmit2` per run and commits the final states.
    pub(super) fn submit_and_commit(&self, recording: &Recording) -> Result<(), SubmitFailure> {
        let mut order: Vec<usize> = (0..self.queues.len())
            .filter(|&q| !self.plan.queues[q].batches.is_empty())
            .collect();
        order.sort_by_key(|&q| vk::Handle::as_raw(self.queues[q].handle()));
        let mut locked = self.lock(&order)?;

        let mut last: Vec<u64> = locked
            .queues
            .iter()
            .map(|l| l.as_ref().map_or(0, |l| l.last_value()))
            .collect();
        let values = self.plan.assign_values(&mut last);
        // Values are handed out even if a submit fails below: a value is never reused.
        for &q in &order {
            if let Some(l) = locked.queues[q].as_mut() {
                l.set_last_value(last[q]);
            }
        }

        let runs = submission_runs(&self.plan, &order);
        let last_run: Vec<Option<usize>> = (0..self.queues.len())
            .map(|q| runs.iter().rposition(|r| r.queue == q))
            .collect();
        let mut started = vec![false; self.queues.len()];
        for (ri, run) in runs.iter().enumerate() {
            let q = run.queue;
            // The queue's fence goes with its last submit: it signals after all earlier ones.
            let fence = if last_run[q] == Some(ri) {
                recording.fences[q].unwrap_or_default()
            } else {
                vk::Fence::null()
            };
            let Some(lock) = locked.queues[q].as_ref() else {
                continue;
            };
            if let Err(e) = self.submit_run(lock, run, &values, recording, fence) {
                return Err(self.fail_after_partial_submit(&mut locked, &runs[..ri], &started, e));
            }
            started[q] = true;
            log::trace!(
                "submitted {} batches to `{}`",
                run.batches.len(),
                self.queues[q].name()
            );
        }
        self.commit(&mut locked, &values);
        Ok(())
    }

    /// Locks the queues of `order` (sorted by handle) and every resource (by id), and checks
    /// that no resource's state changed since `finish()` in a way that makes the plan stale.
    fn lock(&self, order: &[usize]) -> Result<Locked<'_>, SubmitFailure> {
        let mut locked = Locked {
            queues: (0..self.queues.len()).map(|_| None).collect(),
            resources: (0..self.resources.len()).map(|_| None).collect(),
        };
        for &q in order {
            locked.queues[q] = Some(self.queues[q].lock());
        }
        self.lock_resources(&mut locked)?;
        Ok(locked)
    }

    /// Locks every resource (by id; the caller holds its queues' locks already) and checks
    /// that none changed since `finish()` in a way that makes the plan stale.
    pub(super) fn lock_resources<'e>(
        &'e self,
        locked: &mut Locked<'e>,
    ) -> Result<(), SubmitFailure> {
        let mut res_order: Vec<usize> = (0..self.resources.len()).collect();
        res_order.sort_by_key(|&r| self.resources[r].id());
        for &r in &res_order {
            let g = self.resources[r].tracked().lock();
            // Another execution may have committed since `finish()`. Reads it added leave this
            // plan correct where the plan only reads; anything else makes it stale
            // (resource/staleness.rs says why).
            if g.is_stale_for(
                self.versions[r],
                &self.plan.input.resources[r].initial,
                &self.plan.final_states[r],
                &self.queues,
            ) {
                return Err(SubmitFailure {
                    error: Error::StalePlan {
                        resource: self.resources[r].name().to_owned(),
                    },
                    settled: true,
                });
            }
            locked.resources[r] = Some(g);
        }
        Ok(())
    }

    /// One `vkQueueSubmit2` of the run's batches, with their semaphore waits and signals.
    pub(super) fn submit_run(
        &self,
        lock: &QueueLock<'_>,
        run: &SubmissionRun,
        values: &TimelineValues,
        recording: &Recording,
        fence: vk::Fence,
    ) -> ash::prelude::VkResult<()> {
        let q = run.queue;
        let qp = &self.plan.queues[q];
        let n = run.batches.len();
        let mut waits: Vec<Vec<vk::SemaphoreSubmitInfo<'_>>> = Vec::with_capacity(n);
        let mut signals: Vec<Vec<vk::SemaphoreSubmitInfo<'_>>> = Vec::with_capacity(n);
        let mut cbs: Vec<Vec<vk::CommandBufferSubmitInfo<'_>>> = Vec::with_capacity(n);
        for bi in run.batches.clone() {
            let b = &qp.batches[bi];
            waits.push(
                b.waits
                    .iter()
                    .map(|w| {
                        let (sem, value) = match w.target {
                            WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } => (
                                self.queues[queue].timeline(),
                                self.plan.wait_value(w.target, values).unwrap_or(0),
                            ),
                            WaitTarget::Binary(s) => (s, 0),
                        };
                        vk::SemaphoreSubmitInfo::default()
                            .semaphore(sem)
                            .value(value)
                            .stage_mask(w.stages)
                    })
                    .collect(),
            );
            let mut sig: Vec<vk::SemaphoreSubmitInfo<'_>> = Vec::new();
            if let (Some(stages), Some(value)) = (b.signal, values.per_batch[q][bi]) {
                sig.push(
                    vk::SemaphoreSubmitInfo::default()
                        .semaphore(self.queues[q].timeline())
                        .value(value)
                        .stage_mask(stages),
                );
            }
            for &(s, stages) in &b.binary_signals {
                sig.push(
                    vk::SemaphoreSubmitInfo::default()
                        .semaphore(s)
                        .stage_mask(stages),
                );
            }
            signals.push(sig);
            cbs.push(
                recording.batch_cmds[q][bi]
                    .iter()
                    .map(|&c| vk::CommandBufferSubmitInfo::default().command_buffer(c))
                    .collect(),
            );
        }
        let submits: Vec<vk::SubmitInfo2<'_>> = (0..n)
            .map(|k| {
                vk::SubmitInfo2::default()
                    .wait_semaphore_infos(&waits[k])
                    .command_buffer_infos(&cbs[k])
                    .signal_semaphore_infos(&signals[k])
            })
            .collect();
        // SAFETY: the queue's submit lock is held; every command buffer is executable and
        // every semaphore and resource is alive until the fence signals (the execution fence
        // holds them); timeline values only grow under the lock.
        unsafe {
            self.pools
                .device
                .queue_submit2(lock.handle(), &submits, fence)
        }
    }

    /// Commits the new states, mapping planner queue indices back to queues.
    pub(super) fn commit(&self, locked: &mut Locked<'_>, values: &TimelineValues) {
        let finals = self.plan.resolved_final_states(values);
        for (r, segs) in finals.into_iter().enumerate() {
            let mapped = segs
                .into_iter()
                .map(|(cells, s)| (cells, s.map_queue(|qi| self.queues[qi].clone())))
                .collect();
            if let Some(g) = locked.resources[r].as_mut() {
                // Keeps the reads committed since planning, so later writers wait for them too.
                g.commit_execution(self.versions[r], mapped);
            }
        }
    }

    /// A submit failed after the `submitted` runs went through. Waits for the queues that
    /// took part (their locks are held), so nothing they use is freed early, and marks every
    /// resource those runs touched as undefined, bumping its version: its real state is
    /// unknown, and a plan made before must not run. Untouched resources keep their state.
    pub(super) fn fail_after_partial_submit(
        &self,
        locked: &mut Locked<'_>,
        submitted: &[SubmissionRun],
        started: &[bool],
        e: vk::Result,
    ) -> SubmitFailure {
        let error = Error::vk("vkQueueSubmit2", e);
        if submitted.is_empty() {
            return SubmitFailure {
                error,
                settled: true,
            };
        }
        let mut settled = true;
        for (q, l) in locked.queues.iter().enumerate() {
            let (true, Some(l)) = (started[q], l) else {
                continue;
            };
            // SAFETY: the queue's submit lock is held, as vkQueueWaitIdle requires.
            if let Err(w) = unsafe { self.pools.device.queue_wait_idle(l.handle()) } {
                log::error!(
                    "vkQueueWaitIdle on `{}` failed after a failed submit: {w}",
                    self.queues[q].name()
                );
                settled = false;
            }
        }
        let mut touched = vec![false; self.resources.len()];
        for run in submitted {
            for b in &self.plan.queues[run.queue].batches[run.batches.clone()] {
                for c in &b.commands {
                    match c {
                        Command::Pass(i) => self.plan.input.passes[*i]
                            .uses
                            .iter()
                            .for_each(|u| touched[u.resource] = true),
                        Command::Barrier(bar) => {
                            bar.images.iter().for_each(|x| touched[x.resource] = true);
                            bar.buffers.iter().for_each(|x| touched[x.resource] = true);
                        }
                    }
                }
            }
        }
        for (r, g) in locked.resources.iter_mut().enumerate() {
            if let (true, Some(g)) = (touched[r], g.as_mut()) {
                log::warn!("`{}` was used by work that ran before a failed submit: its contents are now undefined", self.resources[r].name());
                g.commit(vec![(
                    0..self.resources[r].cells(),
                    SegmentState::default(),
                )]);
            }
        }
        SubmitFailure { error, settled }
    }
}
