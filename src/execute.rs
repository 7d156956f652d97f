//! Plan -> command buffers -> submits.
//!
//! One primary command buffer per batch. [`Command::Barrier`] becomes exactly one
//! `vkCmdPipelineBarrier2`; [`Command::Pass`] becomes a debug label around the pass's own
//! recording. Each queue then gets one `vkQueueSubmit2` with one `VkSubmitInfo2` per batch and
//! a `VkFence` for host waits. Resource states are committed while the queues and resources
//! are locked, so two executions never interleave their bookkeeping.

use crate::error::{Error, Result};
use crate::fence::{CompletionToken, ExecutionFence};
use crate::graph::{GraphShared, Planned};
use crate::plan::{Command, Plan, WaitTarget};
use crate::queue::Queue;
use crate::recording::record_execution;
use crate::resource::Resource;
use ash::vk;

/// Executes a planned graph; see [`Planned::execute`].
pub(crate) fn execute(planned: Planned<'_>) -> Result<ExecutionFence> {
    let shared = planned.shared().clone();
    let Planned {
        mut passes,
        queues,
        resources,
        versions,
        plan,
        ..
    } = planned;
    shared.collect();
    let token = CompletionToken::new(shared.device.clone());
    // On a pass's error or panic this has already put everything back and failed the token.
    let recording = record_execution(&shared, &plan, &queues, &resources, &mut passes, &token)?;
    let all_fences = recording.all_fences();
    let submitted = submit_and_commit(
        &shared,
        &plan,
        &queues,
        &resources,
        &versions,
        &recording.fences,
        &recording.batch_cmds,
    );
    let contents = recording.into_contents(token.clone(), resources, queues);
    match submitted {
        Ok(()) => {
            token.set_submitted(all_fences);
            Ok(ExecutionFence::new(contents, shared))
        }
        Err(SubmitFailure {
            error,
            settled: true,
        }) => {
            // Nothing reached the GPU, or what did has finished (the queues were waited idle).
            token.set_submitted(Vec::new());
            token.set_failed();
            shared.recycle(contents);
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
            std::mem::forget(contents);
            Err(error)
        }
    }
}

/// Records a planned graph into command buffers and throws them away, submitting nothing
/// and changing no state: what `benches/plan.rs` measures against hand-written recording.
pub(crate) fn record_only(planned: Planned<'_>) -> Result<()> {
    let shared = planned.shared().clone();
    let Planned {
        mut passes,
        queues,
        resources,
        plan,
        ..
    } = planned;
    let token = CompletionToken::new(shared.device.clone());
    let recording = record_execution(&shared, &plan, &queues, &resources, &mut passes, &token)?;
    token.set_submitted(Vec::new());
    token.set_failed();
    shared.recycle(recording.into_contents(token.clone(), resources, queues));
    Ok(())
}

/// A failed submission. `settled`: no part of it can still be running (nothing was submitted,
/// or the queues that took part were waited idle), so its objects may be released.
struct SubmitFailure {
    error: Error,
    settled: bool,
}

/// Locks the queues (by handle) and the resources (by id), checks that no state changed since
/// planning, submits one `vkQueueSubmit2` per queue and commits the final states. On error,
/// returns the fences of the submits that did go through.
fn submit_and_commit(
    shared: &GraphShared,
    plan: &Plan,
    queues: &[Queue],
    resources: &[Resource],
    versions: &[u64],
    fences: &[Option<vk::Fence>],
    batch_cmds: &[Vec<Option<vk::CommandBuffer>>],
) -> Result<(), SubmitFailure> {
    let mut order: Vec<usize> = (0..queues.len())
        .filter(|&q| !plan.queues[q].batches.is_empty())
        .collect();
    order.sort_by_key(|&q| vk::Handle::as_raw(queues[q].handle()));
    let mut locks: Vec<Option<crate::queue::QueueLock<'_>>> =
        (0..queues.len()).map(|_| None).collect();
    for &q in &order {
        locks[q] = Some(queues[q].lock());
    }
    let mut res_order: Vec<usize> = (0..resources.len()).collect();
    res_order.sort_by_key(|&r| resources[r].id());
    let mut guards: Vec<Option<parking_lot::MutexGuard<'_, crate::resource::Tracked>>> =
        (0..resources.len()).map(|_| None).collect();
    for &r in &res_order {
        let g = resources[r].tracked().lock();
        // Another execution may have committed since `finish()`. Reads it added leave this
        // plan correct where the plan only reads; anything else makes it stale
        // (resource/staleness.rs says why).
        if g.is_stale_for(
            versions[r],
            &plan.input.resources[r].initial,
            &plan.final_states[r],
            queues,
        ) {
            return Err(SubmitFailure {
                error: Error::StalePlan {
                    resource: resources[r].name().to_owned(),
                },
                settled: true,
            });
        }
        guards[r] = Some(g);
    }

    let mut last: Vec<u64> = locks
        .iter()
        .map(|l| l.as_ref().map_or(0, |l| l.last_value()))
        .collect();
    let values = plan.assign_values(&mut last);
    // Values are handed out even if a submit fails below: a value is never reused.
    for &q in &order {
        if let Some(l) = locks[q].as_mut() {
            l.set_last_value(last[q]);
        }
    }

    let runs = submission_runs(plan, &order);
    let last_run: Vec<Option<usize>> = (0..queues.len())
        .map(|q| runs.iter().rposition(|r| r.0 == q))
        .collect();
    let mut started = vec![false; queues.len()];
    for (ri, (q, batches)) in runs.iter().cloned().enumerate() {
        let qp = &plan.queues[q];
        let n = batches.len();
        let mut waits: Vec<Vec<vk::SemaphoreSubmitInfo<'_>>> = Vec::with_capacity(n);
        let mut signals: Vec<Vec<vk::SemaphoreSubmitInfo<'_>>> = Vec::with_capacity(n);
        let mut cbs: Vec<Vec<vk::CommandBufferSubmitInfo<'_>>> = Vec::with_capacity(n);
        for bi in batches.clone() {
            let b = &qp.batches[bi];
            waits.push(
                b.waits
                    .iter()
                    .map(|w| {
                        let (sem, value) = match w.target {
                            WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } => (
                                queues[queue].timeline(),
                                plan.wait_value(w.target, &values).unwrap_or(0),
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
                        .semaphore(queues[q].timeline())
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
                batch_cmds[q][bi]
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
        // The queue's fence goes with its last submit: it signals after all earlier ones.
        let fence = if last_run[q] == Some(ri) {
            fences[q].unwrap_or_default()
        } else {
            vk::Fence::null()
        };
        let Some(lock) = locks[q].as_ref() else {
            continue;
        };
        // SAFETY: the queue's submit lock is held; every command buffer is executable and
        // every semaphore and resource is alive until the fence signals (the execution fence
        // holds them); timeline values only grow under the lock.
        if let Err(e) = unsafe { shared.device.queue_submit2(lock.handle(), &submits, fence) } {
            return Err(fail_after_partial_submit(
                shared,
                plan,
                queues,
                resources,
                &runs[..ri],
                &started,
                &locks,
                &mut guards,
                e,
            ));
        }
        started[q] = true;
        log::trace!("submitted {n} batches to `{}`", queues[q].name());
    }

    // Commit the new states, mapping planner queue indices back to queues.
    let finals = plan.resolved_final_states(&values);
    for (r, segs) in finals.into_iter().enumerate() {
        let mapped = segs
            .into_iter()
            .map(|(cells, s)| (cells, s.map_queue(|qi| queues[qi].clone())))
            .collect();
        if let Some(g) = guards[r].as_mut() {
            // Keeps the reads committed since planning, so later writers wait for them too.
            g.commit_execution(versions[r], mapped);
        }
    }
    Ok(())
}

/// A submit failed after `submitted` runs went through. Waits for the queues that took part
/// (their locks are held), so nothing they use is freed early, and marks every resource those
/// runs touched as undefined, bumping its version: its real state is unknown, and a plan made
/// before must not run. Untouched resources keep their state.
#[allow(clippy::too_many_arguments)]
fn fail_after_partial_submit(
    shared: &GraphShared,
    plan: &Plan,
    queues: &[Queue],
    resources: &[Resource],
    submitted: &[(usize, std::ops::Range<usize>)],
    started: &[bool],
    locks: &[Option<crate::queue::QueueLock<'_>>],
    guards: &mut [Option<parking_lot::MutexGuard<'_, crate::resource::Tracked>>],
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
    for (q, l) in locks.iter().enumerate() {
        let (true, Some(l)) = (started[q], l) else {
            continue;
        };
        // SAFETY: the queue's submit lock is held, as vkQueueWaitIdle requires.
        if let Err(w) = unsafe { shared.device.queue_wait_idle(l.handle()) } {
            log::error!(
                "vkQueueWaitIdle on `{}` failed after a failed submit: {w}",
                queues[q].name()
            );
            settled = false;
        }
    }
    let mut touched = vec![false; resources.len()];
    for (q, batches) in submitted {
        for b in &plan.queues[*q].batches[batches.clone()] {
            for c in &b.commands {
                match c {
                    Command::Pass(i) => plan.input.passes[*i]
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
    for (r, g) in guards.iter_mut().enumerate() {
        if let (true, Some(g)) = (touched[r], g.as_mut()) {
            log::warn!("`{}` was used by work that ran before a failed submit: its contents are now undefined", resources[r].name());
            g.commit(vec![(
                0..resources[r].cells(),
                crate::plan::SegmentState::default(),
            )]);
        }
    }
    SubmitFailure { error, settled }
}

/// The submits, as runs of consecutive batches of one queue, in an order where every batch
/// that waits on another queue's batch of this execution is submitted after it. Timeline
/// semaphores would allow waiting before signalling, but validation layer 1.3.239 matches
/// ownership acquires with releases (and checks layouts) in submission order. Runs are as
/// long as the waits allow, so each queue gets one `vkQueueSubmit2` unless two queues wait
/// on each other within one execution; then a queue's batches are split at such a wait.
fn submission_runs(plan: &Plan, order: &[usize]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut next: Vec<usize> = vec![0; plan.queues.len()];
    let ready = |q: usize, next: &[usize]| {
        plan.queues[q].batches[next[q]]
            .waits
            .iter()
            .all(|w| match w.target {
                WaitTarget::Batch { queue, batch } => batch < next[queue],
                _ => true,
            })
    };
    let mut runs = Vec::new();
    loop {
        let open: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&q| next[q] < plan.queues[q].batches.len())
            .collect();
        if open.is_empty() {
            break;
        }
        // How far each ready queue could go in one run. Prefer one that finishes its queue,
        // then the longest run, so splits happen only where two queues wait on each other.
        let reach = |q: usize| {
            let mut n = next.clone();
            while n[q] < plan.queues[q].batches.len() && ready(q, &n) {
                n[q] += 1;
            }
            n[q]
        };
        let best = open
            .iter()
            .copied()
            .filter(|&q| ready(q, &next))
            .max_by_key(|&q| {
                let end = reach(q);
                (
                    end == plan.queues[q].batches.len(),
                    end - next[q],
                    std::cmp::Reverse(q),
                )
            });
        // The planner's waits always point back in program order, so some queue is ready;
        // if not, submit anyway rather than stall (timeline semaphores still order the GPU).
        let q = best.unwrap_or(open[0]);
        let start = next[q];
        next[q] = reach(q).max(start + 1);
        runs.push((q, start..next[q]));
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Batch, QueuePlan, Wait};

    fn batch(waits: &[(usize, usize)]) -> Batch {
        let waits = waits
            .iter()
            .map(|&(queue, batch)| Wait {
                target: WaitTarget::Batch { queue, batch },
                stages: vk::PipelineStageFlags2::ALL_COMMANDS,
            })
            .collect();
        Batch {
            waits,
            ..Batch::default()
        }
    }

    fn plan_of(queues: Vec<Vec<Batch>>) -> Plan {
        Plan {
            input: Default::default(),
            queues: queues
                .into_iter()
                .map(|batches| QueuePlan { batches })
                .collect(),
            final_states: vec![],
        }
    }

    #[test]
    fn one_submit_per_queue_when_waits_allow() {
        // Queue 0 waits on queue 1's first batch: queue 1 goes first, whole.
        let p = plan_of(vec![
            vec![batch(&[]), batch(&[(1, 0)])],
            vec![batch(&[]), batch(&[])],
        ]);
        assert_eq!(submission_runs(&p, &[0, 1]), vec![(1, 0..2), (0, 0..2)]);
    }

    #[test]
    fn queues_that_wait_on_each_other_are_split_at_the_wait() {
        // 0: [b0, b1 waits 1.0]; 1: [b0 waits 0.0, b1]
        let p = plan_of(vec![
            vec![batch(&[]), batch(&[(1, 0)])],
            vec![batch(&[(0, 0)]), batch(&[])],
        ]);
        assert_eq!(
            submission_runs(&p, &[0, 1]),
            vec![(0, 0..1), (1, 0..2), (0, 1..2)]
        );
    }
}
