//! Joining batches that phase 3 left split for nothing.
//!
//! Phase 2 ends a batch after each node another queue waits on (signal as early as possible)
//! and starts one at each node that needs a wait (wait as late as possible). Phase 3 then drops
//! the waits that other waits already imply through other queues. A queue whose passes each
//! fed a pass of another queue, where a chain through a third queue already orders them all,
//! keeps one batch per pass, each with a signal nobody waits on, and the other queue one batch
//! per pass with no wait at all: 30 submits instead of one in a frame of 100 passes on three
//! queues, which costs the driver far more than the barriers (on an H100, 3.3 to 6.3 times the
//! CPU time of the hand-written frame).
//!
//! So a batch joins the one before it on its queue when it waits on nothing, and the one before
//! is waited on by no other batch and signals no binary semaphore (a present must not wait for
//! later work). Timeline values only grow: a wait on a later batch of the queue orders the
//! earlier one too, so a signal that no batch waits on orders nothing. The joined batch signals
//! with both masks (`ALL_COMMANDS` alone when one of them is). The commands keep their order: a
//! release at the end of the earlier batch and the barrier before the later one's first pass
//! stay two commands, one after the other, as phase 2 records a release node and the next
//! pass's barrier within a batch.

use super::*;

/// Joins each batch of `queues` into the one before it where the module docs allow it, and
/// renumbers the waits on the batches that moved. Only for a pruned plan: phase 2 splits a
/// batch only where a wait or a signal needs it, so only dropped waits leave splits to join.
pub(super) fn coalesce_batches(queues: &mut [QueuePlan]) {
    for q in 0..queues.len() {
        if queues[q].batches.len() < 2 {
            continue;
        }
        let awaited = awaited_batches(queues, q);
        let joins = |(x, y): (&Batch, &Batch), x_awaited: bool| {
            !x_awaited && x.binary_signals.is_empty() && y.waits.is_empty()
        };
        let batches = &queues[q].batches;
        // Most plans have nothing to join: they allocate nothing more.
        if !batches
            .iter()
            .zip(&batches[1..])
            .zip(&awaited)
            .any(|(pair, &a)| joins(pair, a))
        {
            continue;
        }
        let batches = std::mem::take(&mut queues[q].batches);
        let count = batches.len();
        // Old batch index -> new one.
        let mut map: Vec<usize> = Vec::with_capacity(count);
        // The batches so far, each with whether another queue waits on it (on any part).
        let mut joined: Vec<(Batch, bool)> = Vec::with_capacity(count);
        for (batch, batch_awaited) in batches.into_iter().zip(awaited) {
            if let Some((x, x_awaited)) = joined.last_mut() {
                if joins((x, &batch), *x_awaited) {
                    let Batch {
                        waits: _,
                        commands,
                        signal,
                        binary_signals,
                    } = batch;
                    x.commands.extend(commands);
                    x.binary_signals = binary_signals;
                    x.signal = match (x.signal, signal) {
                        (Some(s), Some(t)) => Some(union_of_stages(s, t)),
                        (s, t) => s.or(t),
                    };
                    *x_awaited = batch_awaited;
                    map.push(joined.len() - 1);
                    continue;
                }
            }
            map.push(joined.len());
            joined.push((batch, batch_awaited));
        }
        log::trace!(
            "queue {q}: {count} batches joined into {} (their waits were implied)",
            joined.len()
        );
        queues[q].batches = joined.into_iter().map(|(b, _)| b).collect();
        for w in queues
            .iter_mut()
            .flat_map(|qp| qp.batches.iter_mut())
            .flat_map(|b| b.waits.iter_mut())
        {
            if let WaitTarget::Batch { queue, batch } = &mut w.target {
                if *queue == q {
                    // Phase 2 waits only on batches it made; `awaited_batches` skips others
                    // alike.
                    debug_assert!(*batch < map.len(), "a wait on batch {batch} of queue {q}");
                    if let Some(&to) = map.get(*batch) {
                        *batch = to;
                    }
                }
            }
        }
    }
}

/// Per batch of queue `q`: whether a batch of another queue waits on it.
fn awaited_batches(queues: &[QueuePlan], q: usize) -> SmallVec<[bool; 16]> {
    let mut awaited: SmallVec<[bool; 16]> = smallvec::smallvec![false; queues[q].batches.len()];
    for w in queues
        .iter()
        .flat_map(|qp| &qp.batches)
        .flat_map(|b| &b.waits)
    {
        if let WaitTarget::Batch { queue, batch } = w.target {
            if queue == q {
                if let Some(a) = awaited.get_mut(batch) {
                    *a = true;
                }
            }
        }
    }
    awaited
}

/// Both stage masks, as `ALL_COMMANDS` alone when one of them is: it holds every other stage.
fn union_of_stages(
    s: vk::PipelineStageFlags2,
    t: vk::PipelineStageFlags2,
) -> vk::PipelineStageFlags2 {
    let all = s | t;
    if all.contains(vk::PipelineStageFlags2::ALL_COMMANDS) {
        vk::PipelineStageFlags2::ALL_COMMANDS
    } else {
        all
    }
}
