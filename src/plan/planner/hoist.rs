//! Hoisting a pass's barrier command into an earlier one of its queue (program order).
//!
//! Rule 3 of the contract gives each pass boundary at most one barrier command. A run of
//! independent passes on one queue, each with its own dependency on earlier work (an app
//! copying back N uploaded images, one pass per image: N acquires), then records N barrier
//! commands, and each one's execution dependency (every earlier command in its source stages)
//! also waits for the pass just before it, which does not need it: the passes run one after
//! the other. A hand-written renderer records the N barriers in one command before the N
//! passes.
//!
//! So, while the dependencies are built (before batching, and before redundant entries are
//! pruned, which then sees the joined command where it is), a pass's barrier command joins the
//! nearest earlier barrier command of its queue when:
//!
//! - no pass in between (nor the pass that command precedes) touches a range any of its
//!   entries names, so its entries still follow every access they order, and its layout
//!   transitions change nothing those passes use;
//! - nothing in between is a release (a barrier command of its own), waits on or signals a
//!   binary semaphore, or declares no use at all, and the pass itself waits on no binary
//!   semaphore (a transition after a binary wait chains from the wait);
//! - each semaphore wait it needs is dominated by one the earlier command's pass needs (the
//!   same queue, at the same value or higher, at the same stages or more, on a signal covering
//!   the same stages or more), so that wait orders it and no wait or signal changes: batches,
//!   waits and their pruning stay those of the plan without joining;
//! - joining makes no pass in between wait for more: its source stages are among the earlier
//!   command's, and the destination stages it adds to those passes' stages are among the
//!   earlier command's too.
//!
//! The joined command then orders exactly what both did (the moved entries' first scopes lose
//! only passes that touch none of their ranges) and the passes in between lose no overlap.
//! Reordering schedules ([`super::super::schedule`]) join barriers by their own rules, and a
//! plan with aliasing dependencies between transients keeps every barrier where the planner
//! put it (aliased memory is not a range of the same resource), so both skip this. Transients
//! are placed from the joined plan, which orders the passes as the plain one does.

use super::*;

fn stages_of(b: &BarrierCmd) -> (vk::PipelineStageFlags2, vk::PipelineStageFlags2) {
    let scopes = b
        .images
        .iter()
        .map(|e| e.scopes)
        .chain(b.buffers.iter().map(|e| e.scopes));
    scopes.fold(Default::default(), |(s, d), x| {
        (s | x.src_stages, d | x.dst_stages)
    })
}

/// Whether pass `i` uses a range that overlaps an entry of `b`.
fn touches(input: &PlanInput, i: usize, b: &BarrierCmd) -> bool {
    input.passes[i].uses.iter().any(|u| {
        let range = u.range.unwrap_or(input.resources[u.resource].kind.whole());
        match range {
            SubRange::Image(r) => b
                .images
                .iter()
                .any(|e| e.resource == u.resource && e.range.overlaps(&r)),
            SubRange::Buffer(r) => b
                .buffers
                .iter()
                .any(|e| e.resource == u.resource && e.range.overlaps(&r)),
        }
    })
}

impl Planner<'_> {
    /// Moves `node`'s barrier command (pass `k`'s, on queue `q`) into the nearest earlier
    /// barrier command of the queue, when the rules in the module docs allow it.
    pub(super) fn hoist_barrier(&mut self, k: usize, q: usize, node: &mut Node) {
        let input = self.input;
        let pass = &input.passes[k];
        if !self.hoist || node.barrier.is_empty() || !pass.waits.is_empty() {
            return;
        }
        let (src, dst) = stages_of(&node.barrier);
        let nodes = &self.nodes[q];
        // The passes it moves above, and at last the one whose command it joins.
        let mut reached = vk::PipelineStageFlags2::NONE;
        let mut target = None;
        for (ni, (_, n)) in nodes.iter().enumerate().rev() {
            let NodeKind::Pass(i) = n.kind else { return };
            let p = &input.passes[i];
            // A pass that declares nothing may do anything (the scheduler treats it alike).
            let opaque = p.uses.is_empty() || !p.waits.is_empty() || !p.signals.is_empty();
            if opaque || touches(input, i, &node.barrier) {
                return;
            }
            reached |= dst & self.pass_stages[i];
            if !n.barrier.is_empty() {
                target = Some(ni);
                break;
            }
        }
        let Some(t) = target else { return };
        // Every pass it moves above already waits, after the earlier command, for work in
        // these source stages at these stages of its own.
        let (target_src, target_dst) = stages_of(&nodes[t].1.barrier);
        if !target_src.contains(src) || !target_dst.contains(reached) {
            return;
        }
        let target_deps = &nodes[t].1.deps;
        // Dominated: the earlier pass waits on the same queue, as late or later, at these
        // stages, for a signal covering these stages. Its wait then orders the moved entries,
        // and no wait or signal changes.
        let covered = node.deps.iter().all(|d| {
            target_deps.iter().any(|e| {
                e.queue == d.queue
                    && e.at >= d.at
                    && e.wait_stages.contains(d.wait_stages)
                    && e.src_stages.contains(d.src_stages)
            })
        });
        // The reasons of the passes in between: none (they have no barrier), so the earlier
        // command's reasons end where this one's begin, and joining extends its range.
        if !covered || nodes[t].1.whys.end != node.whys.start {
            return;
        }
        let to = &mut self.nodes[q][t].1;
        // The moved entries' dependencies go with them: batching credits a dependency to the
        // latest wait on its queue so far, which at the pass may come after the earlier
        // command; at that command it is credited to the wait that orders the entries. The
        // pass keeps its own copy for its other uses.
        to.deps.extend_from_slice(&node.deps);
        let (images, buffers) = (to.barrier.images.len(), to.barrier.buffers.len());
        to.barrier.images.append(&mut node.barrier.images);
        to.barrier.buffers.append(&mut node.barrier.buffers);
        for why in &mut self.reasons[node.whys.clone()] {
            why.entry = match why.entry {
                EntryRef::Image(e) => EntryRef::Image(e + images),
                EntryRef::Buffer(e) => EntryRef::Buffer(e + buffers),
            };
        }
        to.whys.end = node.whys.end;
        node.whys.start = node.whys.end;
    }
}
