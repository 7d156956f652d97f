//! Reordering: passes level by level, so that each queue needs one barrier command per level
//! (and batch) rather than one per dependent pass.

use super::conflict::for_each_conflict;
use crate::plan::PlanInput;

/// Where a pass goes within its level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    /// Another queue waits on it: first, so its batch can signal early.
    Awaited,
    /// Neither waits on nor is waited on by another queue.
    Local,
    /// It waits on another queue: last, so the wait comes as late as it can.
    Waiting,
}

/// The passes `kept` (a program-ordered subset of a validated input's passes) in scheduled
/// order: by level, where a pass's level is one more than the highest level of the earlier
/// passes it conflicts with; within a level by [`Place`], then by program order. A pass's
/// conflicting predecessors all have lower levels, so every conflicting pair keeps its order.
/// Also returns each pass's level (by pass index; 0 for passes not kept).
pub(super) fn order(input: &PlanInput, kept: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let n = input.passes.len();
    let mut level = vec![0usize; n];
    let mut awaited = vec![false; n];
    let mut waiting = vec![false; n];
    for_each_conflict(input, kept, |j, i| {
        level[j] = level[j].max(level[i] + 1);
        if input.passes[i].queue != input.passes[j].queue {
            awaited[i] = true;
            waiting[j] = true;
        }
    });
    let place = |i: usize| {
        if awaited[i] {
            Place::Awaited
        } else if waiting[i] {
            Place::Waiting
        } else {
            Place::Local
        }
    };
    let mut order = kept.to_vec();
    // Stable: program order breaks ties.
    order.sort_by_key(|&i| (level[i], place(i)));
    (order, level)
}
