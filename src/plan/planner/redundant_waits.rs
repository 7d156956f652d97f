//! Timeline waits a batched plan already has: a wait is dropped when every dependency it was
//! placed for is already ordered, with its writes made visible, by the other waits of its
//! queue up to its batch, through other queues' signals and waits (see
//! [`reach`] for the rules).
//!
//! The batches are decided in an order where each comes after every batch it waits on, so that
//! the reach of each signal is worked out from waits already decided. A wait of a batch is
//! dropped only if the waits left order its dependencies and those of the batch's waits dropped
//! before it. A dependency of a later batch of the same submission is checked against the waits
//! up to the wait's own batch only, which are all decided then.

use super::reach::Reaches;
use super::*;

/// A wait's index in its batch, and the dependencies it orders.
type WaitDeps = (usize, Vec<Dep>);

impl Planner<'_> {
    /// Drops the timeline waits the plan already has, and records them as gone in `reaches`.
    pub(super) fn drop_redundant_waits(&mut self, queues: &mut [QueuePlan], reaches: &mut Reaches) {
        let serves = std::mem::take(&mut self.wait_serves);
        if serves.is_empty() {
            return;
        }
        let Some(order) = reaches.topological() else {
            return;
        };
        // Per batch: its waits (by index) and their dependencies.
        let mut by_batch: HashMap<(usize, usize), Vec<WaitDeps>> = HashMap::new();
        for (q, b, w, deps) in serves {
            by_batch.entry((q, b)).or_default().push((w, deps));
        }
        let mut gone: Vec<(usize, usize, usize)> = Vec::new();
        for (q, b) in order {
            let Some(waits) = by_batch.get(&(q, b)) else {
                continue;
            };
            // The dependencies of the waits of this batch dropped so far: the waits left must
            // still order them.
            let mut dropped: Vec<&Dep> = Vec::new();
            for (w, deps) in waits {
                if !reaches.other_waits(q, b, *w) {
                    continue;
                }
                reaches.set_live(q, b, *w, false);
                let implied = deps.iter().chain(dropped.iter().copied()).all(|d| {
                    self.point_at(d.queue, d.at).is_some_and(|at| {
                        reaches.orders(q, b, d.queue, at, d.src_stages, d.wait_stages)
                    })
                });
                if implied {
                    gone.push((q, b, *w));
                    dropped.extend(deps);
                } else {
                    reaches.set_live(q, b, *w, true);
                }
            }
        }
        // Highest index first, so that removing one keeps the others' indices.
        gone.sort_unstable();
        for (q, b, w) in gone.into_iter().rev() {
            queues[q].batches[b].waits.remove(w);
        }
    }
}
