//! Phase 2, batches: per queue, where batches start (waits as late as possible) and end
//! (signals as early as possible), then waits resolved to the batches that signal them.

use super::*;

/// A batch before signals split it: its waits and its nodes.
#[derive(Debug, Default)]
struct Proto {
    waits: Vec<ProtoWait>,
    /// Indices into the queue's node list: consecutive, as nodes join the last batch.
    nodes: std::ops::Range<usize>,
}

#[derive(Debug)]
pub(super) struct ProtoWait {
    target: ProtoTarget,
    stages: DeviceStages,
    /// What the awaited node's signal must cover.
    src_stages: DeviceStages,
    /// The dependencies it orders.
    serves: Serves,
}

#[derive(Clone, Copy, Debug)]
enum ProtoTarget {
    Node(usize, Pos),
    Value(usize, u64),
    Binary(vk::Semaphore),
}

impl ProtoTarget {
    fn queue(&self) -> Option<usize> {
        match *self {
            Self::Node(q, _) | Self::Value(q, _) => Some(q),
            Self::Binary(_) => None,
        }
    }
}

impl Planner<'_> {
    pub(super) fn batch_all(&mut self) -> Vec<QueuePlan> {
        let nodes = std::mem::take(&mut self.nodes);
        // One entry per node with reasons for its barrier: reserved, not grown.
        self.whys.reserve(
            nodes
                .iter()
                .flatten()
                .filter(|(_, n)| !n.whys.is_empty())
                .count(),
        );
        // A: where each queue's batches must start, and their waits. A node whose dependency
        // is not covered by an earlier wait starts a batch (wait as late as possible).
        let protos: Vec<Vec<Proto>> = nodes.iter().map(|q| self.place_waits(q)).collect();
        // B: the nodes other queues actually wait on (after merging to the highest value).
        let signal_src = signal_sources(&nodes, &protos);
        let positions: Vec<Vec<Pos>> = nodes
            .iter()
            .map(|q| q.iter().map(|(p, _)| *p).collect())
            .collect();
        // C: end a batch after each awaited node and each binary signal (signal as early as
        // possible), then resolve waits to batch indices.
        let mut plans: Vec<QueuePlan> = Vec::with_capacity(nodes.len());
        let queues = nodes.into_iter().zip(protos).zip(positions).enumerate();
        for (q, ((qnodes, qprotos), positions)) in queues {
            let (batches, node_batch) = self.batch_queue(q, qnodes, qprotos, &signal_src[q]);
            plans.push(QueuePlan { batches });
            self.batched.push((positions, node_batch));
        }
        self.resolve_waits(&mut plans);
        plans
    }

    /// Step C of batching for queue `q`: its nodes into batches, one after another, ending a
    /// batch after each node that `signal_src` (per node) says is awaited, and after each
    /// binary signal. Returns the batches and each node's batch.
    fn batch_queue(
        &mut self,
        q: usize,
        nodes: Vec<(Pos, Node)>,
        protos: Vec<Proto>,
        signal_src: &[Option<DeviceStages>],
    ) -> (Vec<Batch>, Vec<usize>) {
        let mut batches: Vec<Batch> = Vec::new();
        let mut node_batch = vec![0; nodes.len()];
        // Protos take the queue's nodes in order, as consecutive ranges.
        let mut in_order = nodes.into_iter().map(|(_, n)| n).enumerate();
        for proto in protos {
            let mut cur = Batch {
                waits: proto
                    .waits
                    .iter()
                    .map(|w| Wait {
                        target: WaitTarget::Binary(vk::Semaphore::null()),
                        stages: w.stages.get(),
                    })
                    .collect(),
                // At most a barrier and a pass per node: reserved, not grown.
                commands: Vec::with_capacity(2 * proto.nodes.len()),
                ..Batch::default()
            };
            // Placeholders: targets are resolved once every queue is batched.
            let first = batches.len();
            let end = proto.nodes.end;
            for ni in proto.nodes {
                let (taken, node) = in_order.next().expect("a node per index");
                debug_assert_eq!(taken, ni, "protos take nodes in order");
                node_batch[ni] = batches.len();
                let mut ends = self.push_node(q, batches.len(), &mut cur, node);
                if let Some(stages) = signal_src[ni] {
                    cur.signal = Some(cur.signal.unwrap_or_default() | stages.get());
                    ends = true;
                }
                if ends {
                    batches.push(std::mem::take(&mut cur));
                    // The proto's other nodes go into the next batches: reserved, not grown.
                    cur.commands.reserve(2 * (end - ni - 1));
                }
            }
            if !cur.commands.is_empty() || !cur.waits.is_empty() {
                batches.push(cur);
            }
            // Keep the proto's waits beside its first batch for resolution.
            if first < batches.len() {
                self.proto_waits.push((q, first, proto.waits));
            }
        }
        // The last batch signals for the host, later graphs and resource lifetimes.
        if let Some(last) = batches.last_mut() {
            last.signal = Some(vk::PipelineStageFlags2::ALL_COMMANDS);
        }
        (batches, node_batch)
    }

    /// Puts `node`'s commands into `cur`, batch `batch` of queue `q`, and notes the reasons of
    /// its barrier. Returns whether the batch ends after it (its pass signals a binary
    /// semaphore).
    fn push_node(&mut self, q: usize, batch: usize, cur: &mut Batch, node: Node) -> bool {
        if !node.whys.is_empty() {
            self.whys.push(CommandWhy {
                queue: q,
                batch,
                command: cur.commands.len(),
                whys: node.whys,
            });
        }
        let mut ends = false;
        match node.kind {
            NodeKind::Pass(i) => {
                if !node.barrier.is_empty() {
                    cur.commands.push(Command::Barrier(node.barrier));
                }
                cur.commands.push(Command::Pass(i));
                for sig in &self.input.passes[i].signals {
                    // A host pass's own stage is no stage to signal at: all commands. (An
                    // explicit mask holds no `HOST`: `validate` refuses that.)
                    let stages = sig.stages.unwrap_or(self.pass_stages[i]);
                    let stages = DeviceStages::or_all(stages).get();
                    cur.binary_signals.push((sig.semaphore, stages));
                    ends = true;
                }
            }
            NodeKind::Release => cur.commands.push(Command::Barrier(node.barrier)),
        }
        ends
    }

    /// Resolves the waits kept beside each proto's first batch to what they wait for: the
    /// batch of an awaited node (found by its position in `batched`), a value or a binary
    /// semaphore.
    fn resolve_waits(&mut self, plans: &mut [QueuePlan]) {
        for (q, b, waits) in std::mem::take(&mut self.proto_waits) {
            for (wi, w) in waits.into_iter().enumerate() {
                if !w.serves.is_empty() {
                    self.wait_serves.push((q, b, wi, w.serves));
                }
                plans[q].batches[b].waits[wi].target = match w.target {
                    ProtoTarget::Node(queue, pos) => {
                        let (positions, node_batch) = &self.batched[queue];
                        let ni = positions.partition_point(|p| *p < pos);
                        debug_assert_eq!(positions.get(ni), Some(&pos), "a wait on a node");
                        WaitTarget::Batch {
                            queue,
                            batch: node_batch[ni],
                        }
                    }
                    ProtoTarget::Value(queue, value) => WaitTarget::Value { queue, value },
                    ProtoTarget::Binary(s) => WaitTarget::Binary(s),
                };
            }
        }
    }

    /// Step A of batching for one queue: batch starts and their waits.
    fn place_waits(&self, nodes: &[(Pos, Node)]) -> Vec<Proto> {
        let mut protos: Vec<Proto> = Vec::new();
        // Per other queue: the highest point waited on so far, and where (proto, wait).
        let mut waited: Vec<Option<(At, usize, usize)>> = vec![None; self.input.queues.len()];
        for (ni, (_, node)) in nodes.iter().enumerate() {
            // Most passes wait on no binary semaphore: no list to build or append.
            let binary: Vec<ProtoWait> = match node.kind {
                NodeKind::Pass(i) if !self.input.passes[i].waits.is_empty() => self.input.passes[i]
                    .waits
                    .iter()
                    .enumerate()
                    .map(|(wi, w)| ProtoWait {
                        target: ProtoTarget::Binary(w.semaphore),
                        stages: DeviceStages::or_all(
                            w.stages
                                .or_else(|| self.binary_wait_stages.get(&(i, wi)).copied())
                                .unwrap_or(vk::PipelineStageFlags2::ALL_COMMANDS),
                        ),
                        src_stages: DeviceStages::default(),
                        serves: Serves::new(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let uncovered = |d: &Dep| waited[d.queue].is_none_or(|(at, _, _)| at < d.at);
            let needs_batch =
                protos.is_empty() || !binary.is_empty() || node.deps.iter().any(uncovered);
            let joins =
                |p: &Proto| p.nodes.is_empty() || self.holds_nothing_back(&nodes[p.nodes.clone()]);
            if needs_batch && !protos.last().is_some_and(joins) {
                protos.push(Proto::default());
            }
            let pi = protos.len() - 1;
            if !binary.is_empty() {
                protos[pi].waits.extend(binary);
            }
            for d in &node.deps {
                match waited[d.queue] {
                    Some((at, wp, wi)) if at >= d.at => {
                        // Already waited (in this batch or an earlier one): widen it.
                        let w = &mut protos[wp].waits[wi];
                        w.stages |= d.wait_stages;
                        w.src_stages |= d.src_stages;
                        w.serves.push(*d);
                    }
                    _ => {
                        let target = match d.at {
                            At::Value(v) => ProtoTarget::Value(d.queue, v),
                            At::Node(p) => ProtoTarget::Node(d.queue, p),
                        };
                        // One wait per other queue per batch, on the highest value.
                        let proto = &mut protos[pi];
                        let wi = match proto
                            .waits
                            .iter()
                            .position(|w| w.target.queue() == Some(d.queue))
                        {
                            Some(wi) => {
                                let w = &mut proto.waits[wi];
                                w.target = target;
                                w.stages |= d.wait_stages;
                                w.src_stages |= d.src_stages;
                                w.serves.push(*d);
                                wi
                            }
                            None => {
                                proto.waits.push(ProtoWait {
                                    target,
                                    stages: d.wait_stages,
                                    src_stages: d.src_stages,
                                    serves: smallvec::smallvec![*d],
                                });
                                proto.waits.len() - 1
                            }
                        };
                        waited[d.queue] = Some((d.at, pi, wi));
                    }
                }
            }
            let batch_nodes = &mut protos[pi].nodes;
            if batch_nodes.start == batch_nodes.end {
                *batch_nodes = ni..ni;
            }
            batch_nodes.end = ni + 1;
        }
        protos
    }

    /// Whether a wait may go before `nodes` (the start of a batch so far) rather than after
    /// them: each is a pass that declares no use, so the wait holds back no stage it
    /// declared, and nothing waits on it: it signals no binary semaphore, and its binary
    /// waits guard no resource (another queue's first use of a guarded resource waits on the
    /// pass). A wait before what waits on it could close a cycle. Such passes (a timestamp
    /// at a queue's start, say) then share the waiting batch instead of making a batch of
    /// their own.
    fn holds_nothing_back(&self, nodes: &[(Pos, Node)]) -> bool {
        nodes.iter().all(|(_, n)| match n.kind {
            NodeKind::Pass(i) => {
                let pass = &self.input.passes[i];
                pass.uses.is_empty()
                    && pass.signals.is_empty()
                    && pass.waits.iter().all(|w| w.guards.is_empty())
            }
            NodeKind::Release => false,
        })
    }
}

/// Step B of batching: per queue, per node, the stages its signal must cover when another
/// queue waits on it (`None`: none does).
fn signal_sources(
    nodes: &[Vec<(Pos, Node)>],
    protos: &[Vec<Proto>],
) -> Vec<Vec<Option<DeviceStages>>> {
    let index_of = |queue: usize, pos: Pos| nodes[queue].partition_point(|(p, _)| *p < pos);
    let mut signal_src: Vec<Vec<Option<DeviceStages>>> =
        nodes.iter().map(|q| vec![None; q.len()]).collect();
    for w in protos.iter().flatten().flat_map(|p| &p.waits) {
        if let ProtoTarget::Node(queue, pos) = w.target {
            let s = &mut signal_src[queue][index_of(queue, pos)];
            *s = Some(s.unwrap_or_default() | w.src_stages);
        }
    }
    signal_src
}

// Joining batches that phase 3 left split for nothing.
//
// Phase 2 ends a batch after each node another queue waits on (signal as early as possible)
// and starts one at each node that needs a wait (wait as late as possible). Phase 3 then drops
// the waits that other waits already imply through other queues. A queue whose passes each
// fed a pass of another queue, where a chain through a third queue already orders them all,
// keeps one batch per pass, each with a signal nobody waits on, and the other queue one batch
// per pass with no wait at all: 30 submits instead of one in a frame of 100 passes on three
// queues, which costs the driver far more than the barriers (on an H100, 3.3 to 6.3 times the
// CPU time of the hand-written frame).
//
// So a batch joins the one before it on its queue when it waits on nothing, and the one before
// is waited on by no other batch and signals no binary semaphore (a present must not wait for
// later work). Timeline values only grow: a wait on a later batch of the queue orders the
// earlier one too, so a signal that no batch waits on orders nothing. The joined batch signals
// with both masks (`ALL_COMMANDS` alone when one of them is). The commands keep their order: a
// release at the end of the earlier batch and the barrier before the later one's first pass
// stay two commands, one after the other, as phase 2 records a release node and the next
// pass's barrier within a batch.

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
