//! Submitting a recorded execution and committing the resources' new states.
//!
//! The queues (by handle) and then the resources (by id) are locked in a fixed order, so two
//! executions on other threads never deadlock; the plan is checked for staleness under those
//! locks, submitted in the order [`submission_runs`](crate::plan::submission_runs) decides, and the final states are
//! committed before any lock is released.

use super::record::Recording;
use super::Execution;
use crate::error::Error;
use crate::plan::{
    submission_runs_into, Batch, Command, SegmentState, SubmissionRun, TimelineValues, WaitTarget,
};
use crate::prepared::scratch::SubmitScratch;
use crate::prepared::MERGED;
use crate::queue::{Queue, QueueLock};
use crate::resource::TrackedGuard;
use crate::signals::AppSignals;
use crate::spare::Spare;
use ash::vk;

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
    pub(super) resources: Vec<Option<TrackedGuard<'e>>>,
}

impl Execution<'_, '_> {
    /// Locks the queues and resources, checks that no state changed since planning, submits
    /// one `vkQueueSubmit2` per run and commits the final states. `scratch` holds every
    /// temporary list, so a frame like the last one allocates nothing here. Once submitted,
    /// `reached` holds what the execution's fences will show reached, per queue.
    pub(super) fn submit_and_commit(
        &self,
        recording: &Recording,
        scratch: &mut SubmitScratch,
        signals: &AppSignals,
        reached: &mut Vec<u64>,
    ) -> Result<(), SubmitFailure> {
        let mut order = std::mem::take(&mut scratch.order);
        // The runs depend only on the plan's batches and this order: computed once per plan
        // (`PreparedFrame::forget` drops them), again if the frame's queues changed.
        let (has_batches, handle) = (|q| self.has_batches(q), |q| self.queue_handle(q));
        if !(scratch.runs_known && is_queue_order(&order, self.queues.len(), has_batches, handle)) {
            order.clear();
            order.extend((0..self.queues.len()).filter(|&q| self.has_batches(q)));
            order.sort_unstable_by_key(|&q| self.queue_handle(q));
            scratch.runs_known = false;
        }
        let mut locked = Locked {
            queues: scratch.queue_locks.take(),
            resources: scratch.state_locks.take(),
        };
        let result = self.submit_locked(recording, scratch, &order, &mut locked, signals);
        if let (Ok(()), Some(values)) = (&result, &scratch.values) {
            self.reached_into(values, reached);
        }
        // Unlocks in the same order as before (states, then queues), and keeps the lists.
        scratch.state_locks = Spare::keep(std::mem::take(&mut locked.resources));
        scratch.queue_locks = Spare::keep(std::mem::take(&mut locked.queues));
        scratch.order = order;
        result
    }

    fn submit_locked<'e>(
        &'e self,
        recording: &Recording,
        scratch: &mut SubmitScratch,
        order: &[usize],
        locked: &mut Locked<'e>,
        signals: &AppSignals,
    ) -> Result<(), SubmitFailure> {
        locked.queues.extend((0..self.queues.len()).map(|_| None));
        for &q in order {
            locked.queues[q] = Some(self.queues[q].lock());
        }
        self.lock_resources(locked, &mut scratch.res_order)?;

        let mut last = std::mem::take(&mut scratch.last);
        last.clear();
        last.extend(
            locked
                .queues
                .iter()
                .map(|l| l.as_ref().map_or(0, |l| l.last_value())),
        );
        let mut values = scratch.values.take().unwrap_or_default();
        self.plan.assign_values_into(&mut last, &mut values);
        // Values are handed out even if a submit fails below: a value is never reused.
        for &q in order {
            if let Some(l) = locked.queues[q].as_mut() {
                l.set_last_value(last[q]);
            }
        }
        scratch.last = last;

        let mut runs = std::mem::take(&mut scratch.runs);
        if !scratch.runs_known {
            submission_runs_into(self.plan, order, &mut runs, &mut scratch.runs_next);
            scratch.runs_known = true;
        }
        let mut outcome = self.submit_runs(locked, &runs, &values, recording, scratch, signals);
        if let (Ok(()), Some(last)) = (&outcome, runs.last()) {
            if signals.fence != vk::Fence::null() {
                let started = std::mem::take(&mut scratch.started);
                let fenced = self.signal_app_fence(locked, last.queue, &values, signals.fence);
                if let Err(e) = fenced {
                    outcome = Err(self.fail_after_partial_submit(locked, &runs, &started, e));
                }
                scratch.started = started;
            }
        }
        if outcome.is_ok() {
            self.commit(locked, &values, &mut scratch.committed);
        }
        scratch.runs = runs;
        scratch.values = Some(values);
        outcome
    }

    /// Submits `runs` in order, one `vkQueueSubmit2` each on its queue (locked in `locked`).
    /// Each queue's fence, and the app's semaphores on that queue, go with its last run. The
    /// one submit loop of graphs and handoffs; a failure waits as
    /// [`Self::fail_after_partial_submit`] does.
    pub(super) fn submit_runs(
        &self,
        locked: &mut Locked<'_>,
        runs: &[SubmissionRun],
        values: &TimelineValues,
        recording: &Recording,
        scratch: &mut SubmitScratch,
        signals: &AppSignals,
    ) -> Result<(), SubmitFailure> {
        scratch.last_run.clear();
        scratch
            .last_run
            .extend((0..self.queues.len()).map(|q| runs.iter().rposition(|r| r.queue == q)));
        scratch.started.clear();
        scratch.started.resize(self.queues.len(), false);
        for (ri, run) in runs.iter().enumerate() {
            let q = run.queue;
            let is_last = scratch.last_run[q] == Some(ri);
            // The queue's fence goes with its last submit: it signals after all earlier ones.
            let fence = if is_last {
                recording.queue_fence(q).unwrap_or_default()
            } else {
                vk::Fence::null()
            };
            let Some(lock) = locked.queues[q].as_ref() else {
                continue;
            };
            // The app's semaphores on this queue join its last batch's signals (a binary
            // semaphore's value is ignored).
            let app: smallvec::SmallVec<[(vk::Semaphore, u64); 2]> = if is_last {
                (signals.semaphores.iter())
                    .filter(|(queue, ..)| *queue == self.queues[q])
                    .map(|&(_, s, v)| (s, v.unwrap_or(0)))
                    .collect()
            } else {
                smallvec::SmallVec::new()
            };
            let submitted = self.submit_run(lock, run, values, recording, fence, scratch, &app);
            if let Err(e) = submitted {
                let started = std::mem::take(&mut scratch.started);
                let failure = self.fail_after_partial_submit(locked, &runs[..ri], &started, e);
                scratch.started = started;
                return Err(failure);
            }
            scratch.started[q] = true;
            log::trace!(
                "submitted {} batches to `{}`",
                run.batches.len(),
                self.queues[q].name()
            );
        }
        Ok(())
    }

    fn has_batches(&self, q: usize) -> bool {
        !self.plan.queues[q].batches.is_empty()
    }

    fn queue_handle(&self, q: usize) -> u64 {
        vk::Handle::as_raw(self.queues[q].handle())
    }

    /// Locks every resource (by id; the caller holds its queues' locks already) and checks
    /// that none changed since `finish()` in a way that makes the plan stale. `res_order` is
    /// the order the last execution locked in: frame after frame the resources are the same,
    /// so it is checked rather than sorted again.
    pub(super) fn lock_resources<'e>(
        &'e self,
        locked: &mut Locked<'e>,
        res_order: &mut Vec<usize>,
    ) -> Result<(), SubmitFailure> {
        locked.resources.clear();
        locked
            .resources
            .extend((0..self.resources.len()).map(|_| None));
        if !is_lock_order(res_order, self.resources.len(), |r| self.resources[r].id()) {
            res_order.clear();
            res_order.extend(0..self.resources.len());
            res_order.sort_unstable_by_key(|&r| self.resources[r].id());
        }
        for &r in res_order.iter() {
            let g = self.resources[r].tracked().lock();
            // Another execution may have committed since `finish()`. Reads it added leave this
            // plan correct where the plan only reads; anything else makes it stale
            // (`resource/state.rs`, "Staleness", says why).
            if g.is_stale_for(
                self.versions[r],
                &self.plan.input.resources[r].initial,
                &self.plan.final_states[r],
                self.queues,
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

    /// One `vkQueueSubmit2` of the run's batches, with their semaphore waits and signals,
    /// built in `scratch`'s arrays; its last batch also signals the app's semaphores `app`
    /// (semaphore, value: 0 for a binary one) at `ALL_COMMANDS`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_run(
        &self,
        lock: &QueueLock<'_>,
        run: &SubmissionRun,
        values: &TimelineValues,
        recording: &Recording,
        fence: vk::Fence,
        scratch: &mut SubmitScratch,
        app: &[(vk::Semaphore, u64)],
    ) -> ash::prelude::VkResult<()> {
        let q = run.queue;
        let qp = &self.plan.queues[q];
        let (waits, signals, cbs) = (&mut scratch.waits, &mut scratch.signals, &mut scratch.cbs);
        waits.clear();
        signals.clear();
        cbs.clear();
        // Per batch: where its waits, command buffers and signals end in the arrays.
        let mut ends: smallvec::SmallVec<[(usize, usize, usize); 8]> = smallvec::SmallVec::new();
        for bi in run.batches.clone() {
            let b = &qp.batches[bi];
            self.push_waits(b, values, waits);
            self.push_signals(q, b, values.per_batch[q][bi], signals);
            for &c in recording.batch_cmds(q, bi) {
                cbs.push(vk::CommandBufferSubmitInfo::default().command_buffer(c));
            }
            ends.push((waits.len(), cbs.len(), signals.len()));
        }
        if let Some(last) = ends.last_mut().filter(|_| !app.is_empty()) {
            for &(s, value) in app {
                signals.push(
                    vk::SemaphoreSubmitInfo::default()
                        .semaphore(s)
                        .value(value)
                        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS),
                );
            }
            last.2 = signals.len();
        }
        let mut infos: Vec<vk::SubmitInfo2<'_>> = scratch.submits.take();
        let mut from = (0, 0, 0);
        for &(w, c, s) in &ends {
            infos.push(
                vk::SubmitInfo2::default()
                    .wait_semaphore_infos(&waits[from.0..w])
                    .command_buffer_infos(&cbs[from.1..c])
                    .signal_semaphore_infos(&signals[from.2..s]),
            );
            from = (w, c, s);
        }
        // SAFETY: the queue's submit lock is held; every command buffer is executable and
        // every semaphore and resource is alive until the fence signals (the execution fence
        // holds them); timeline values only grow under the lock.
        let result = unsafe {
            self.pools
                .device
                .queue_submit2(lock.handle(), &infos, fence)
        };
        scratch.submits = Spare::keep(infos);
        result
    }

    /// Appends batch `b`'s semaphore waits, each of them. A wait for an earlier graph's work
    /// that the host saw complete through another queue's fence is not left out: the fence
    /// orders that work before this submit, but only a semaphore wait (or a barrier) of this
    /// queue makes its writes visible here, as the validation layer checks. Where an earlier
    /// wait of this queue already did, the plan has no wait (`SegmentState::visible`).
    fn push_waits(
        &self,
        b: &Batch,
        values: &TimelineValues,
        waits: &mut Vec<vk::SemaphoreSubmitInfo<'static>>,
    ) {
        for w in &b.waits {
            let (sem, value) = match w.target {
                WaitTarget::Value { queue, .. } | WaitTarget::Batch { queue, .. } => (
                    self.queues[queue].timeline(),
                    self.plan.wait_value(w.target, values).unwrap_or(0),
                ),
                WaitTarget::Binary(s) => (s, 0),
            };
            waits.push(
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(sem)
                    .value(value)
                    .stage_mask(w.stages),
            );
        }
    }

    /// Appends batch `b`'s signals: queue `q`'s timeline at `value` (when the batch signals)
    /// and its binary semaphores.
    fn push_signals(
        &self,
        q: usize,
        b: &Batch,
        value: Option<u64>,
        signals: &mut Vec<vk::SemaphoreSubmitInfo<'static>>,
    ) {
        if let (Some(stages), Some(value)) = (b.signal, value) {
            signals.push(
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.queues[q].timeline())
                    .value(value)
                    .stage_mask(stages),
            );
        }
        for &(s, stages) in &b.binary_signals {
            signals.push(
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .stage_mask(stages),
            );
        }
    }

    /// Signals the app's `fence` once all of the execution is done: an empty `vkQueueSubmit2`
    /// on `queue` (submitted to last, so the fence covers its submits), waiting at
    /// `ALL_COMMANDS` for every other queue's last timeline value of this execution.
    fn signal_app_fence(
        &self,
        locked: &Locked<'_>,
        queue: usize,
        values: &TimelineValues,
        fence: vk::Fence,
    ) -> ash::prelude::VkResult<()> {
        let waits: smallvec::SmallVec<[vk::SemaphoreSubmitInfo<'_>; 4]> = values
            .last
            .iter()
            .enumerate()
            .filter(|&(q, _)| q != queue)
            .filter_map(|(q, v)| v.map(|v| (q, v)))
            .map(|(q, v)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.queues[q].timeline())
                    .value(v)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            })
            .collect();
        let lock = locked.queues[queue]
            .as_ref()
            .expect("the queue submitted to last is locked");
        let info = vk::SubmitInfo2::default().wait_semaphore_infos(&waits);
        // SAFETY: the queue's submit lock is held; the waits are on timeline values this
        // execution's submits signal; the caller of `execute_signalling` vouched for `fence`.
        unsafe {
            self.pools
                .device
                .queue_submit2(lock.handle(), &[info], fence)
        }
    }

    /// Per queue, the highest timeline value that is reached once every batch of this execution
    /// completed: its own last value there, or the highest value one of its batches waited for
    /// (a timeline reaches a value only after all earlier work on its queue).
    fn reached_into(&self, values: &TimelineValues, reached: &mut Vec<u64>) {
        reached.clear();
        reached.extend(values.last.iter().map(|v| v.unwrap_or(0)));
        reached.resize(self.queues.len(), 0);
        for qp in &self.plan.queues {
            for w in qp.batches.iter().flat_map(|b| &b.waits) {
                if let WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } = w.target
                {
                    let v = self.plan.wait_value(w.target, values).unwrap_or(0);
                    reached[queue] = reached[queue].max(v);
                }
            }
        }
    }

    /// Commits the new states, mapping planner queue indices back to queues. `committed[r]`
    /// becomes the version resource `r` got if its state is now the plan's final state alone,
    /// [`MERGED`] otherwise ([`crate::prepared::AtRest`]).
    pub(super) fn commit(
        &self,
        locked: &mut Locked<'_>,
        values: &TimelineValues,
        committed: &mut Vec<u64>,
    ) {
        // "This execution" (no value yet) becomes the queue's last value of this execution,
        // as `Plan::resolved_final_states` does.
        let to_queues = |&q: &usize, value: Option<u64>| {
            let value = value.unwrap_or_else(|| values.last[q].unwrap_or(0));
            (&self.queues[q], Some(value))
        };
        let last = |q: usize| values.last[q].unwrap_or(0);
        let rest = self.rest;
        let same_queues = rest.same_queues(self.queues.iter().map(Queue::id));
        committed.clear();
        // Indexed alike: the plan's final states, the resources, their versions, their locks.
        let each = (self.plan.final_states.iter().zip(self.resources))
            .zip(self.versions)
            .zip(locked.resources.iter_mut());
        for (r, (((finals, resource), &planned), lock)) in each.enumerate() {
            committed.push(match lock.as_mut() {
                // Still where this plan's last execution left it: only the values move on.
                Some(g)
                    if same_queues
                        && g.version == planned
                        && rest.left(r, resource.id(), planned) =>
                {
                    let version = g.commit_at_rest(finals, last, to_queues);
                    // Debug builds check the shortcut against the full commit.
                    #[cfg(debug_assertions)]
                    {
                        let mut full = Vec::new();
                        crate::plan::refill_segments(&mut full, finals, to_queues);
                        assert_eq!(
                            g.segments, full,
                            "a commit at rest writes the full commit's state"
                        );
                    }
                    version
                }
                // Keeps the reads committed since planning, so later writers wait for them too.
                Some(g) => g.commit_planned(planned, finals, to_queues),
                None => MERGED,
            });
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

/// Whether `order` names each of `len` resources once, in increasing `id` order (the order
/// every execution takes its locks in, so that no two wait on each other). Strictly increasing
/// ids of in-range indices, `len` of them, are each index once.
fn is_lock_order(order: &[usize], len: usize, id: impl Fn(usize) -> u64) -> bool {
    // Each id read once.
    let mut before = None;
    order.len() == len
        && order.iter().all(|&r| {
            let now = (r < len).then(|| id(r));
            let increasing = now > before;
            before = now;
            increasing
        })
}

/// Whether `order` is the order an execution locks and submits the plan's `len` queues in:
/// each queue that `has_batches` once, by increasing `VkQueue` `handle`.
fn is_queue_order(
    order: &[usize],
    len: usize,
    has_batches: impl Fn(usize) -> bool,
    handle: impl Fn(usize) -> u64,
) -> bool {
    order.iter().all(|&q| q < len && has_batches(q))
        && order.len() == (0..len).filter(|&q| has_batches(q)).count()
        && (order.windows(2)).all(|w| handle(w[0]) < handle(w[1]))
}

#[cfg(test)]
mod tests {
    use super::{is_lock_order, is_queue_order};

    #[test]
    fn kept_submission_runs_are_taken_only_for_the_queues_they_were_made_for() {
        // Queues 0 and 2 have batches; 2's handle is the lower.
        let (busy, handles) = ([true, false, true], [20, 5, 10]);
        let order = |o: &[usize]| is_queue_order(o, 3, |q| busy[q], |q| handles[q]);
        assert!(order(&[2, 0]));
        // By index rather than handle, a queue without batches, one left out, out of range.
        assert!(!order(&[0, 2]));
        assert!(!order(&[1, 2, 0]));
        assert!(!order(&[2]));
        assert!(!order(&[2, 0, 3]));
        // The frame's queues swapped for others whose handles sort the other way.
        let other = [10, 5, 20];
        assert!(!is_queue_order(&[2, 0], 3, |q| busy[q], |q| other[q]));
    }

    #[test]
    fn a_kept_lock_order_is_taken_only_if_it_locks_each_resource_once_by_id() {
        let ids = [30, 10, 20];
        let id = |r: usize| ids[r];
        assert!(is_lock_order(&[1, 2, 0], 3, id));
        assert!(is_lock_order(&[], 0, id));
        // Not by id, an index twice (equal ids), one missing, one out of range.
        assert!(!is_lock_order(&[0, 1, 2], 3, id));
        assert!(!is_lock_order(&[1, 1, 2], 3, id));
        assert!(!is_lock_order(&[1, 2], 3, id));
        assert!(!is_lock_order(&[1, 2, 3], 3, |r| r as u64));
        // Another frame's resources: the same indices, other ids.
        let other = [5, 50, 7];
        assert!(!is_lock_order(&[1, 2, 0], 3, |r| other[r]));
    }
}
