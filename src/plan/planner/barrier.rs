//! Barrier merging: a barrier joins an existing one of the same resource, range, layouts
//! and ownership transfer, so each command names each range once; the two planes of a
//! depth/stencil image in the same state become one barrier of both aspects, and one plane of
//! neighbouring layers one barrier over them. Also here: hoisting a pass's barrier command into
//! an earlier one, and each entry's cause.

use super::*;

/// Adds a barrier for `cells` of resource `r` to `cmd`, merging with an existing one of the
/// same resource, range, layouts and ownership transfer (which keeps its own cause). Returns
/// the entries it went into.
pub(super) fn push_barrier(
    cmd: &mut BarrierCmd,
    r: usize,
    kind: &ResourceKind,
    cells: std::ops::Range<u64>,
    s: Scopes,
    (old_layout, new_layout): (vk::ImageLayout, vk::ImageLayout),
    cause: Cause,
) -> SmallVec<[EntryRef; 1]> {
    let mut into = SmallVec::new();
    match *kind {
        ResourceKind::Image {
            layers,
            aspect: all,
            ..
        } => {
            for (range, aspect) in CellGrid::new(layers, all).ranges(cells) {
                let b = ImageBarrier {
                    resource: r,
                    range,
                    aspect,
                    scopes: s,
                    old_layout,
                    new_layout,
                    cause: Some(cause),
                };
                into.push(EntryRef::Image(push_image_barrier(&mut cmd.images, b, all)));
            }
        }
        ResourceKind::Buffer { .. } => {
            let range = BufferRange {
                offset: cells.start,
                size: cells.end - cells.start,
            };
            let b = BufferBarrier {
                resource: r,
                range,
                scopes: s,
                cause: Some(cause),
            };
            into.push(EntryRef::Buffer(push_buffer_barrier(&mut cmd.buffers, b)));
        }
    }
    into
}

/// Adds image barrier `new` (one plane, of an image whose format has the aspects `all`, or
/// all of them) to `images`, joining or extending one there where it can. Returns its index.
fn push_image_barrier(
    images: &mut Vec<ImageBarrier>,
    new: ImageBarrier,
    all: vk::ImageAspectFlags,
) -> usize {
    let s = &new.scopes;
    let same = |b: &ImageBarrier| {
        b.resource == new.resource
            && b.range == new.range
            && (b.old_layout, b.new_layout) == (new.old_layout, new.new_layout)
            && b.scopes.families == s.families
    };
    // The other plane of the same range, in the same layouts: one barrier of both aspects,
    // which needs no separate depth/stencil layouts. Never for an ownership transfer, whose
    // acquire must name exactly what one release names.
    let other_plane = |b: &ImageBarrier| {
        s.families.is_none() && new.aspect != all && b.aspect | new.aspect == all
    };
    let joined = images
        .iter()
        .position(|b| same(b) && (b.aspect == new.aspect || other_plane(b)));
    let extended = || images.iter().position(|b| next_layers(b, &new, all));
    match (joined, joined.is_none().then(extended).flatten()) {
        (Some(i), _) => {
            merge_scopes(&mut images[i].scopes, s);
            images[i].aspect |= new.aspect;
            i
        }
        (None, Some(i)) => {
            images[i].range.layer_count += new.range.layer_count;
            i
        }
        (None, None) => {
            images.push(new);
            images.len() - 1
        }
    }
}

/// Whether `new` is one plane of the layers of a mip just after those of `b`, with equal
/// scopes: then `b` extends over them (a plane's cells are apart, so each layer comes on its
/// own). Never for an ownership transfer.
fn next_layers(b: &ImageBarrier, new: &ImageBarrier, all: vk::ImageAspectFlags) -> bool {
    let range = &new.range;
    new.scopes.families.is_none()
        && new.aspect != all
        && b.resource == new.resource
        && b.aspect == new.aspect
        && (b.old_layout, b.new_layout) == (new.old_layout, new.new_layout)
        && b.scopes == new.scopes
        && (b.range.base_mip, b.range.mip_count) == (range.base_mip, 1)
        && range.mip_count == 1
        && b.range.base_layer + b.range.layer_count == range.base_layer
}

/// Adds buffer barrier `new` to `buffers`, extending or joining one there where it can.
/// Returns its index.
fn push_buffer_barrier(buffers: &mut Vec<BufferBarrier>, new: BufferBarrier) -> usize {
    let (r, range, s) = (new.resource, new.range, &new.scopes);
    // Extend a barrier with equal scopes that ends where this one starts. Never for an
    // ownership transfer: an acquire must name exactly the range of one release, and the
    // releases of neighbouring segments may sit in different places.
    let extended = buffers.iter().position(|b| {
        s.families.is_none()
            && b.resource == r
            && b.scopes == *s
            && b.range.offset + b.range.size == range.offset
    });
    if let Some(i) = extended {
        buffers[i].range.size += range.size;
        return i;
    }
    let joined = buffers
        .iter()
        .position(|b| b.resource == r && b.range == range && b.scopes.families == s.families);
    match joined {
        Some(i) => {
            merge_scopes(&mut buffers[i].scopes, s);
            i
        }
        None => {
            buffers.push(new);
            buffers.len() - 1
        }
    }
}

/// Widens scopes `a` by `s`: their stages and accesses (the transfer is the same).
fn merge_scopes(a: &mut Scopes, s: &Scopes) {
    a.src_stages |= s.src_stages;
    a.src_access |= s.src_access;
    a.dst_stages |= s.dst_stages;
    a.dst_access |= s.dst_access;
}

/// One entry of a [`BarrierCmd`]: an index into its images or its buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryRef {
    Image(usize),
    Buffer(usize),
}

// Hoisting a pass's barrier command into an earlier one of its queue (program order).
//
// Rule 3 of the contract gives each pass boundary at most one barrier command. A run of
// independent passes on one queue, each with its own dependency on earlier work (an app
// copying back N uploaded images, one pass per image: N acquires), then records N barrier
// commands, and each one's execution dependency (every earlier command in its source stages)
// also waits for the pass just before it, which does not need it: the passes run one after
// the other. A hand-written renderer records the N barriers in one command before the N
// passes.
//
// So, while the dependencies are built (before batching, and before redundant entries are
// pruned, which then sees the joined command where it is), a pass's barrier command joins the
// nearest earlier barrier command of its queue when:
//
// - no pass in between (nor the pass that command precedes) touches a range any of its
//   entries names, so its entries still follow every access they order, and its layout
//   transitions change nothing those passes use;
// - nothing in between is a release (a barrier command of its own), waits on or signals a
//   binary semaphore, or declares no use at all, and the pass itself waits on no binary
//   semaphore (a transition after a binary wait chains from the wait);
// - each semaphore wait it needs is dominated by one the earlier command's pass needs (the
//   same queue, at the same value or higher, at the same stages or more, on a signal covering
//   the same stages or more), so that wait orders it and no wait or signal changes: batches,
//   waits and their pruning stay those of the plan without joining;
// - joining makes no pass in between wait for more: its source stages are among the earlier
//   command's, and the destination stages it adds to those passes' stages are among the
//   earlier command's too.
//
// The joined command then orders exactly what both did (the moved entries' first scopes lose
// only passes that touch none of their ranges) and the passes in between lose no overlap.
// Reordering schedules ([`super::super::schedule`]) join barriers by their own rules, and a
// plan with aliasing dependencies between transients keeps every barrier where the planner
// put it (aliased memory is not a range of the same resource), so both skip this. Transients
// are placed from the joined plan, which orders the passes as the plain one does.

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
        let nodes = &self.nodes[q];
        // The passes it moves above, and at last the one whose command it joins: the stages
        // they ran in.
        let mut passed = vk::PipelineStageFlags2::NONE;
        let mut target = None;
        for (ni, (_, n)) in nodes.iter().enumerate().rev() {
            let NodeKind::Pass(i) = n.kind else { return };
            let p = &input.passes[i];
            // A pass that declares nothing may do anything (the scheduler treats it alike).
            let opaque = p.uses.is_empty() || !p.waits.is_empty() || !p.signals.is_empty();
            if opaque || touches(input, i, &node.barrier) {
                return;
            }
            passed |= self.pass_stages[i];
            if !n.barrier.is_empty() {
                target = Some(ni);
                break;
            }
        }
        let Some(t) = target else { return };
        // Found only now: most commands stop at the pass just before, which touches them.
        let (src, dst) = stages_of(&node.barrier);
        let reached = dst & passed;
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

// Why a barrier entry is there ([`Cause`]): of the prior accesses the planner orders a use
// after, the one a person would name. That is the latest access in this plan, on the use's own
// queue where there is one (the barrier orders it; semaphores order the others); else an
// earlier execution's; else nothing (contents that start here).

impl Planner<'_> {
    /// The cause of an entry that orders pass `pass` (on `queue`) after `priors`, of which
    /// those in `alias` are another transient's accesses to the same memory. An acquire with
    /// no prior of its own (the release orders it) names the latest access by the releasing
    /// family `from`, in state `st`.
    pub(super) fn cause(
        &self,
        (pass, queue): (usize, usize),
        priors: &[Rec],
        alias: &[Rec],
        acquire: Option<(u32, &WState)>,
    ) -> Cause {
        let mut pick = self.latest(queue, priors.iter());
        if let (None, Some((from, st))) = (pick, acquire) {
            let by_from = (st.write.iter().chain(&st.reads))
                .filter(|x| self.input.queues[x.queue].family == from);
            pick = self.latest(queue, by_from);
        }
        let after = match pick {
            None => Prior::Nothing,
            Some(x) => match self.prior(&x) {
                Prior::Pass(p) if alias.contains(&x) => Prior::SharedMemory(p),
                prior => prior,
            },
        };
        Cause { pass, after }
    }

    /// The access of `priors` to name: in this plan before earlier executions, on `queue`
    /// before other queues, then the latest.
    fn latest<'r>(&self, queue: usize, priors: impl Iterator<Item = &'r Rec>) -> Option<Rec> {
        (priors.copied()).max_by_key(|x| match x.at {
            At::Node(p) => (true, x.queue == queue, p),
            At::Value(_) => (false, x.queue == queue, 0),
        })
    }

    /// What access `x` was, for a person.
    fn prior(&self, x: &Rec) -> Prior {
        if let Some((pass, _)) = x.binary_wait {
            return Prior::BinaryWait(pass);
        }
        match x.at {
            // A pass's node is at `2k + 2`; a release's (never an access) after it.
            At::Node(p) if p >= 2 => match self.order.get((p as usize - 2) / 2) {
                Some(&pass) => Prior::Pass(pass),
                None => Prior::Nothing,
            },
            At::Node(_) | At::Value(_) => Prior::EarlierExecution { queue: x.queue },
        }
    }
}

/// The barrier commands of `queues`' batches.
fn barrier_cmds(queues: &mut [QueuePlan]) -> impl Iterator<Item = &mut BarrierCmd> {
    (queues.iter_mut().flat_map(|q| &mut q.batches))
        .flat_map(|b| &mut b.commands)
        .filter_map(|c| match c {
            Command::Barrier(b) => Some(b),
            Command::Pass(_) => None,
        })
}

// Barrier vectors of an earlier plan, emptied for this one to fill: a frame planned like the
// last one allocates no barrier list again.

/// Emptied barrier lists, each keeping its capacity.
#[derive(Default)]
pub(super) struct SpareBarriers {
    images: Vec<Vec<ImageBarrier>>,
    buffers: Vec<Vec<BufferBarrier>>,
}

impl SpareBarriers {
    /// Empties every barrier command of `queues`' batches and keeps their lists.
    pub(super) fn from_queues(mut queues: Vec<QueuePlan>) -> Self {
        // Walked in place and counted first: moving each command out through the iterators,
        // and growing the spare lists by doubling, cost more than the lists save.
        let n = barrier_cmds(&mut queues).count();
        let (images, buffers) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut spare = SpareBarriers { images, buffers };
        for b in barrier_cmds(&mut queues) {
            if b.images.capacity() > 0 {
                b.images.clear();
                spare.images.push(std::mem::take(&mut b.images));
            }
            if b.buffers.capacity() > 0 {
                b.buffers.clear();
                spare.buffers.push(std::mem::take(&mut b.buffers));
            }
        }
        spare
    }

    /// Gives `cmd` a spare list where it has none yet, before a barrier is pushed.
    pub(super) fn prepare(&mut self, cmd: &mut BarrierCmd, kind: &ResourceKind) {
        if matches!(kind, ResourceKind::Image { .. }) {
            if cmd.images.capacity() == 0 {
                cmd.images = self.images.pop().unwrap_or_default();
            }
        } else if cmd.buffers.capacity() == 0 {
            cmd.buffers = self.buffers.pop().unwrap_or_default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Access;

    /// Pass `i` of `n` over `buffers` buffers copies one into the next; every third pass writes
    /// only the first half, so the final states have one or two segments per buffer.
    fn input(n: usize, buffers: usize) -> PlanInput {
        let half = SubRange::Buffer(BufferRange {
            offset: 0,
            size: 32,
        });
        PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
            resources: (0..buffers)
                .map(|i| {
                    ResourceDecl::buffer(
                        &format!("b{i}"),
                        64,
                        vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                    )
                })
                .collect(),
            passes: (0..n)
                .map(|i| {
                    let mut write = UseDecl::new((i + 1) % buffers, Access::COPY_WRITE);
                    write.range = (i % 3 == 2).then_some(half);
                    PassDecl::new("copy", 0)
                        .with_use(UseDecl::new(i % buffers, Access::COPY_READ))
                        .with_use(write)
                })
                .collect(),
        }
    }

    /// Reusing an earlier plan's vectors, of another shape, gives exactly the plan made
    /// without them, and fills those vectors rather than new ones.
    #[test]
    fn a_plan_made_from_a_spare_plan_equals_one_made_without() {
        let earlier = plan_owned(input(7, 4)).unwrap();
        let spare = SpareBarriers::from_queues(earlier.queues.clone());
        assert_eq!(spare.buffers.len(), earlier.barrier_commands());
        let finals = earlier.final_states.as_ptr();
        let reads = &earlier.final_states[1][0].1.reads;
        assert!(!reads.is_empty(), "a read of the last write, to keep");
        let reads = reads.as_ptr();
        // Fewer resources and passes, then more of both.
        let (_, spare) = SparePlan::of(earlier);
        let fewer = plan_reusing(input(5, 3), spare).unwrap();
        let fresh = plan_owned(input(5, 3)).unwrap();
        assert_eq!(fewer.queues, fresh.queues);
        assert_eq!(fewer.final_states, fresh.final_states);
        assert_eq!(fresh.barrier_commands(), 4);
        assert_eq!(fewer.final_states.as_ptr(), finals);
        assert_eq!(fewer.final_states[1][0].1.reads.as_ptr(), reads);
        let (_, spare) = SparePlan::of(fewer);
        let more = plan_reusing(input(9, 5), spare).unwrap();
        let fresh = plan_owned(input(9, 5)).unwrap();
        assert_eq!(more.queues, fresh.queues);
        assert_eq!(more.final_states, fresh.final_states);
        // Buffers of one segment and of two.
        let counts: Vec<usize> = fresh.final_states.iter().map(Vec::len).collect();
        assert!(counts.contains(&1) && counts.contains(&2), "{counts:?}");
    }
}
