//! Regrouping a reordered plan: its batches grouped by level ([`regroup`]), then barrier
//! commands joined within each batch ([`merge`]). The planner runs this on the batches it made
//! in a [`Schedule`](crate::plan::Schedule)'s order, with the levels the schedule gave.
//!
//! Grouping batches by level. The planner ends a batch after each pass another queue waits on
//! (signal as early as possible). With passes taken level by level, a queue often runs
//! several such passes of one level in a row, each in a batch of its own, and the waiting
//! queue waits on each in turn. Those batches become one, which signals once the level's
//! awaited work is done; waits that an earlier wait of the same batch or queue now covers go,
//! which lets the waiting queue's batches group the same way.

mod merge;

use crate::plan::{Command, PlanInput, QueuePlan, WaitTarget};

/// The barrier joins on their own, for the schedule's tests.
#[cfg(test)]
pub(super) use merge::join_barriers;

/// Per queue and batch: whether a batch of another queue waits on it.
fn awaited(queues: &[QueuePlan]) -> Vec<Vec<bool>> {
    let mut out: Vec<Vec<bool>> = queues
        .iter()
        .map(|q| vec![false; q.batches.len()])
        .collect();
    for w in queues
        .iter()
        .flat_map(|q| &q.batches)
        .flat_map(|b| &b.waits)
    {
        if let WaitTarget::Batch { queue, batch } = w.target {
            if let Some(a) = out.get_mut(queue).and_then(|q| q.get_mut(batch)) {
                *a = true;
            }
        }
    }
    out
}

/// Drops each timeline wait that an earlier wait of the same queue (in this batch or an
/// earlier one) on the same or a later batch covers; the earlier wait takes its stages, as a
/// wait's second scope is all later work of its queue in its stages.
fn drop_covered_waits(queues: &mut [QueuePlan]) -> bool {
    let n = queues.len();
    let mut changed = false;
    for qp in queues.iter_mut() {
        // Per other queue: the highest batch waited on so far, and where (batch, wait).
        let mut waited: Vec<Option<(usize, usize, usize)>> = vec![None; n];
        for b in 0..qp.batches.len() {
            let mut w = 0;
            while w < qp.batches[b].waits.len() {
                let wait = qp.batches[b].waits[w];
                let WaitTarget::Batch { queue, batch } = wait.target else {
                    w += 1;
                    continue;
                };
                match waited.get(queue).copied().flatten() {
                    Some((highest, wb, ww)) if highest >= batch => {
                        qp.batches[wb].waits[ww].stages |= wait.stages;
                        qp.batches[b].waits.remove(w);
                        changed = true;
                    }
                    _ => {
                        if let Some(slot) = waited.get_mut(queue) {
                            *slot = Some((batch, b, w));
                        }
                        w += 1;
                    }
                }
            }
        }
    }
    changed
}

/// The highest level of the passes of a batch; `None` without a pass.
fn level_of(commands: &[Command], level: &[usize]) -> Option<usize> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Pass(i) => Some(level[*i]),
            Command::Barrier(_) => None,
        })
        .max()
}

/// Whether every pass of `commands` is at `l`.
fn all_at(commands: &[Command], level: &[usize], l: usize) -> bool {
    commands.iter().all(|c| match c {
        Command::Pass(i) => level[*i] == l,
        Command::Barrier(_) => true,
    })
}

/// Merges each batch of a queue into the one before it when it waits on nothing, the one
/// before signals no binary semaphore, and either no other queue waits on the one before (the
/// batches were split for waits that are gone) or both are waited on and the later one's
/// passes are all at the level of the earlier one's last pass. Waits on the queue's batches
/// are renumbered.
fn merge_batches(level: &[usize], queues: &mut [QueuePlan]) -> bool {
    let mut changed = false;
    for q in 0..queues.len() {
        let awaited_q = awaited(queues).swap_remove(q);
        let old = std::mem::take(&mut queues[q].batches);
        // Old batch index -> new one.
        let mut map: Vec<usize> = Vec::with_capacity(old.len());
        // The batches so far, each with whether it is awaited and its passes' highest level.
        let mut merged: Vec<(crate::plan::Batch, bool, Option<usize>)> =
            Vec::with_capacity(old.len());
        for (y, y_awaited) in old.into_iter().zip(awaited_q) {
            let y_level = level_of(&y.commands, level);
            if let Some((x, x_awaited, x_level)) = merged.last_mut() {
                let same_level = x_level.is_some_and(|l| all_at(&y.commands, level, l));
                let grouped = !*x_awaited || (y_awaited && same_level);
                if grouped && y.waits.is_empty() && x.binary_signals.is_empty() {
                    x.commands.extend(y.commands);
                    x.binary_signals.extend(y.binary_signals);
                    x.signal = match (x.signal, y.signal) {
                        (Some(s), Some(t)) => Some(s | t),
                        (s, t) => s.or(t),
                    };
                    *x_awaited |= y_awaited;
                    *x_level = (*x_level).max(y_level);
                    map.push(merged.len() - 1);
                    changed = true;
                    continue;
                }
            }
            map.push(merged.len());
            merged.push((y, y_awaited, y_level));
        }
        queues[q].batches = merged.into_iter().map(|(b, ..)| b).collect();
        for w in queues
            .iter_mut()
            .flat_map(|qp| qp.batches.iter_mut())
            .flat_map(|bt| bt.waits.iter_mut())
        {
            if let WaitTarget::Batch { queue, batch } = &mut w.target {
                if *queue == q {
                    *batch = map[*batch];
                }
            }
        }
    }
    changed
}

/// Groups the batches of `queues` (a plan of `input` whose passes have levels `level`) by
/// level, until nothing changes, then joins barrier commands within each batch.
pub(super) fn regroup(input: &PlanInput, level: &[usize], queues: &mut [QueuePlan]) {
    while drop_covered_waits(queues) | merge_batches(level, queues) {}
    merge::join_barriers(input, queues);
}
