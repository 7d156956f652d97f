//! One execution of a plan, as pure functions of the plan (so they are tested here without a
//! GPU): the order in which its batches are submitted ([`submission_runs`]), and the timeline
//! values they signal and wait for, with the state the next graph starts from
//! ([`TimelineValues`], [`Plan::assign_values`]).

use super::{Plan, SegmentState, WaitTarget};
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
/// semaphores would allow waiting before signalling, but an ownership acquire must come after
/// its release was submitted (`VUID-vkQueueSubmit2-commandBuffer-03879`), and validation
/// layers up to 1.4.309 check image layouts in submission order. Runs are as
/// long as the waits allow, so each queue gets one `vkQueueSubmit2` unless two queues wait
/// on each other within one execution; then a queue's batches are split at such a wait.
/// Each `vkQueueSubmit2` costs the host several microseconds on some drivers, so two greedy
/// orders are tried and the one with fewer runs is kept (the first on a tie): one where a
/// ready queue waits, when it can, for another ready queue whose run would make its own
/// longer, and one that takes the longest run at once.
///
/// `order` lists the queues to submit to (those with batches). Ties go to the lower queue
/// index; `order` only decides which queue goes first should no queue be ready, which the
/// planner's waits (always pointing back in program order) rule out.
pub(crate) fn submission_runs(plan: &Plan, order: &[usize]) -> Vec<SubmissionRun> {
    let mut runs = Vec::new();
    submission_runs_into(plan, order, &mut runs, &mut Vec::new());
    runs
}

/// [`submission_runs`] into `runs` (emptied first), with `next` as scratch space: no
/// allocation once both have grown.
pub(crate) fn submission_runs_into(
    plan: &Plan,
    order: &[usize],
    runs: &mut Vec<SubmissionRun>,
    next: &mut Vec<usize>,
) {
    runs.clear();
    let waiting = greedy_runs(plan, order, next, true, &mut |r| runs.push(r));
    if greedy_runs(plan, order, next, false, &mut |_| {}) < waiting {
        runs.clear();
        greedy_runs(plan, order, next, false, &mut |r| runs.push(r));
    }
}

/// Gives `emit` the runs of one greedy order (see [`submission_runs`]; `wait`: a queue whose
/// run would grow waits for the other) and returns how many there were.
fn greedy_runs(
    plan: &Plan,
    order: &[usize],
    next: &mut Vec<usize>,
    wait: bool,
    emit: &mut dyn FnMut(SubmissionRun),
) -> usize {
    next.clear();
    next.resize(plan.queues.len(), 0);
    let len = |q: usize| plan.queues[q].batches.len();
    let mut count = 0;
    while let Some(first_open) = order.iter().copied().find(|&q| next[q] < len(q)) {
        // The planner's waits always point back in program order, so some queue is ready;
        // if not, submit anyway rather than stall (timeline semaphores still order the GPU).
        let q = next_run(plan, order, next, wait).unwrap_or(first_open);
        let start = next[q];
        next[q] = reach(plan, q, next).max(start + 1);
        emit(SubmissionRun {
            queue: q,
            batches: start..next[q],
        });
        count += 1;
    }
    count
}

/// How [`next_run`] ranks a ready queue's run: whether waiting would not make it longer,
/// whether it finishes the queue, its length, and the lower queue index.
type Rank = (bool, bool, usize, std::cmp::Reverse<usize>);

/// The ready queue of `order` to submit next: (with `wait`) one whose run waiting would not
/// make longer, then one that finishes, then the longest run, so that splits happen only where
/// two queues wait on each other. `None` if no queue is ready.
fn next_run(plan: &Plan, order: &[usize], next: &mut [usize], wait: bool) -> Option<usize> {
    let mut best: Option<(usize, Rank)> = None;
    for &q in order {
        let len = plan.queues[q].batches.len();
        if next[q] == len || !ready(plan, q, next[q], next) {
            continue;
        }
        let end = reach(plan, q, next);
        let rank = (
            !(wait && grows_after_another(plan, q, end, order, next)),
            end == len,
            end - next[q],
            std::cmp::Reverse(q),
        );
        if best.as_ref().is_none_or(|(_, b)| rank > *b) {
            best = Some((q, rank));
        }
    }
    best.map(|(q, _)| q)
}

/// Whether batch `b` of queue `q` may be submitted when the other queues have submitted up to
/// `next` (and `q` up to `b`).
fn ready(plan: &Plan, q: usize, b: usize, next: &[usize]) -> bool {
    plan.queues[q].batches[b]
        .waits
        .iter()
        .all(|w| match w.target {
            WaitTarget::Batch { queue, batch } => batch < if queue == q { b } else { next[queue] },
            _ => true,
        })
}

/// How far queue `q` could go in one run.
fn reach(plan: &Plan, q: usize, next: &[usize]) -> usize {
    let mut b = next[q];
    while b < plan.queues[q].batches.len() && ready(plan, q, b, next) {
        b += 1;
    }
    b
}

/// Whether queue `q`'s run, which would end at `end` now, would reach further if another
/// ready queue of `order` submitted its run first. `next` is put back as it was.
fn grows_after_another(
    plan: &Plan,
    q: usize,
    end: usize,
    order: &[usize],
    next: &mut [usize],
) -> bool {
    if end == plan.queues[q].batches.len() {
        return false;
    }
    order.iter().any(|&p| {
        if p == q || next[p] == plan.queues[p].batches.len() || !ready(plan, p, next[p], next) {
            return false;
        }
        let was = next[p];
        next[p] = reach(plan, p, next);
        let grows = reach(plan, q, next) > end;
        next[p] = was;
        grows
    })
}

/// The timeline values one execution of a plan signals, per queue and batch.
///
/// See the [module example](crate::plan).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimelineValues {
    /// Per queue: the highest value its timeline had been given before this execution. A wait
    /// for a value at or below it is satisfied by work submitted before this execution (an
    /// earlier graph, or the app's own submit).
    pub start: Vec<u64>,
    /// `per_batch[q][b]`: the value batch `b` of queue `q` signals, if it signals.
    pub per_batch: Vec<Vec<Option<u64>>>,
    /// Per queue: the last value this execution signals there (`None`: no work there).
    pub last: Vec<Option<u64>>,
}

impl Plan {
    /// Gives every signalling batch the next value of its queue's timeline. `last_signalled[q]`
    /// is the highest value queue `q`'s timeline has been given so far; it is advanced.
    pub fn assign_values(&self, last_signalled: &mut [u64]) -> TimelineValues {
        let mut values = TimelineValues::default();
        self.assign_values_into(last_signalled, &mut values);
        values
    }

    /// [`Plan::assign_values`] into `values`, reusing its vectors.
    pub(crate) fn assign_values_into(
        &self,
        last_signalled: &mut [u64],
        values: &mut TimelineValues,
    ) {
        values.start.clear();
        values.start.extend_from_slice(last_signalled);
        values.per_batch.truncate(self.queues.len());
        values.per_batch.resize_with(self.queues.len(), Vec::new);
        values.last.clear();
        for (q, qp) in self.queues.iter().enumerate() {
            let vals = &mut values.per_batch[q];
            vals.clear();
            let mut l = None;
            for b in &qp.batches {
                if b.signal.is_some() {
                    last_signalled[q] += 1;
                    l = Some(last_signalled[q]);
                    vals.push(l);
                } else {
                    vals.push(None);
                }
            }
            values.last.push(l);
        }
    }

    /// The value a wait waits for, given this execution's values.
    pub fn wait_value(&self, target: WaitTarget, values: &TimelineValues) -> Option<u64> {
        match target {
            WaitTarget::Batch { queue, batch } => values.per_batch[queue][batch],
            WaitTarget::Value { value, .. } => Some(value),
            WaitTarget::Binary(_) => None,
        }
    }

    /// The final states with "this execution" filled in with each queue's last value: the
    /// state to plan the next graph from.
    pub fn resolved_final_states(
        &self,
        values: &TimelineValues,
    ) -> Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>> {
        self.final_states
            .iter()
            .map(|segs| {
                segs.iter()
                    .map(|(c, s)| {
                        let mut s = s.clone();
                        for r in s.write.iter_mut().chain(s.reads.iter_mut()) {
                            if r.value.is_none() {
                                r.value = Some(values.last[r.queue].unwrap_or(0));
                            }
                        }
                        (c.clone(), s)
                    })
                    .collect()
            })
            .collect()
    }
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
            transients: Default::default(),
            order: vec![],
            schedule: Default::default(),
            reordered: false,
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

    /// The deferred frame's shape while its first timestamp had a batch of its own (the
    /// planner now puts it in the waiting batch): graphics (0) starts with a batch that waits
    /// on nothing, then waits on compute's first batch; compute (1) waits on graphics twice.
    /// Graphics is ready first and has the lower index, but its run would grow if compute went
    /// first: compute goes first, and graphics' first three batches go in one submit (four
    /// submits, not five).
    ///
    /// ```text
    /// 0: g0, g1 waits c0, g2, g3 waits c2
    /// 1: c0, c1 waits g1, c2 waits g2
    /// ```
    #[test]
    fn a_queue_whose_run_would_grow_waits_for_the_other() {
        let p = plan_of(vec![
            vec![batch(&[]), batch(&[(1, 0)]), batch(&[]), batch(&[(1, 2)])],
            vec![batch(&[]), batch(&[(0, 1)]), batch(&[(0, 2)])],
        ]);
        assert_eq!(
            submission_runs(&p, &[0, 1]),
            vec![run(1, 0..1), run(0, 0..3), run(1, 1..3), run(0, 3..4)]
        );
    }

    /// Three queues where waiting is worse: queue 2 would not grow by waiting, so it goes
    /// first, but its second batch depends on queue 0 through queue 1 and is cut off. The
    /// order that takes the longest run at once needs four runs, not five, and is kept.
    ///
    /// ```text
    /// 0: a0, a1 waits 2.0, a2 waits 1.0
    /// 1: b0 waits 0.0
    /// 2: c0, c1 waits 1.0
    /// ```
    #[test]
    fn the_order_with_fewer_runs_is_kept() {
        let p = plan_of(vec![
            vec![batch(&[]), batch(&[(2, 0)]), batch(&[(1, 0)])],
            vec![batch(&[(0, 0)])],
            vec![batch(&[]), batch(&[(1, 0)])],
        ]);
        assert_eq!(
            submission_runs(&p, &[0, 1, 2]),
            vec![run(0, 0..1), run(1, 0..1), run(2, 0..2), run(0, 1..3)]
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
