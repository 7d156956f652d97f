//! The order in which an execution's batches are submitted: a pure function of the plan, so
//! it is tested here without a GPU.

use super::{Plan, WaitTarget};
use std::ops::Range;

/// Consecutive batches of one queue that go to the GPU in one `vkQueueSubmit2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SubmissionRun {
    /// The planner's queue index.
    pub(crate) queue: usize,
    /// The batches, by index in the queue's plan.
    pub(crate) batches: Range<usize>,
}

/// The submits, as runs of consecutive batches of one queue, in an order where every batch
/// that waits on another queue's batch of this execution is submitted after it. Timeline
/// semaphores would allow waiting before signalling, but validation layer 1.3.239 matches
/// ownership acquires with releases (and checks layouts) in submission order. Runs are as
/// long as the waits allow, so each queue gets one `vkQueueSubmit2` unless two queues wait
/// on each other within one execution; then a queue's batches are split at such a wait.
///
/// `order` lists the queues to submit to (those with batches). Ties go to the lower queue
/// index; `order` only decides which queue goes first should no queue be ready, which the
/// planner's waits (always pointing back in program order) rule out.
pub(crate) fn submission_runs(plan: &Plan, order: &[usize]) -> Vec<SubmissionRun> {
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
        runs.push(SubmissionRun {
            queue: q,
            batches: start..next[q],
        });
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Batch, QueuePlan, Wait};
    use ash::vk;

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

    fn run(queue: usize, batches: Range<usize>) -> SubmissionRun {
        SubmissionRun { queue, batches }
    }

    fn plan_of(queues: Vec<Vec<Batch>>) -> Plan {
        Plan {
            input: Default::default(),
            queues: queues
                .into_iter()
                .map(|batches| QueuePlan { batches })
                .collect(),
            final_states: vec![],
            order: vec![],
        }
    }

    #[test]
    fn one_submit_per_queue_when_waits_allow() {
        // Queue 0 waits on queue 1's first batch: queue 1 goes first, whole.
        let p = plan_of(vec![
            vec![batch(&[]), batch(&[(1, 0)])],
            vec![batch(&[]), batch(&[])],
        ]);
        assert_eq!(
            submission_runs(&p, &[0, 1]),
            vec![run(1, 0..2), run(0, 0..2)]
        );
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
            vec![run(0, 0..1), run(1, 0..2), run(0, 1..2)]
        );
    }
}
