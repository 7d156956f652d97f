//! Reading one execution: where its passes are recorded, its batch graph (timeline waits)
//! and the submission order that graph allows, and the batches that carry its guarded binary
//! waits and its presents. The events themselves are emitted by `events.rs`.

use super::*;

/// One execution being read: its index in the verified sequence, its plan and timeline
/// values, and the map from a resource's cells to segments.
#[derive(Clone, Copy)]
pub(super) struct Exec<'a> {
    pub(super) k: usize,
    pub(super) p: &'a Plan,
    pub(super) values: &'a TimelineValues,
    pub(super) segs_of: &'a SegsOf,
}

impl Exec<'_> {
    /// The batch graph's node of batch `b` of queue `q`: batches are numbered queue after
    /// queue.
    pub(super) fn node(&self, q: usize, b: usize) -> usize {
        self.p.queues[..q]
            .iter()
            .map(|x| x.batches.len())
            .sum::<usize>()
            + b
    }

    /// The number of batch nodes.
    fn nodes(&self) -> usize {
        self.p.queues.iter().map(|x| x.batches.len()).sum()
    }

    pub(super) fn qname(&self, q: usize) -> String {
        self.p.input.queues[q].name.clone()
    }
}

/// What the events of each batch carry, resolved before any event is emitted.
pub(super) struct Links {
    /// Per batch node: its timeline waits.
    pub(super) waits: Vec<Vec<TimelineWait>>,
    /// Per batch node: its guarded binary waits (the external op and the wait's second scope).
    pub(super) externals: Vec<Vec<(usize, u64)>>,
    /// Per batch node: the present ops its binary signal hands over, each with the signal's
    /// first scope.
    pub(super) presents: Vec<Vec<(usize, u64)>>,
    /// Per pass: the batch node whose binary signal hands its presents over, and the signal's
    /// first scope.
    pub(super) present_of_pass: Vec<Option<(usize, u64)>>,
}

impl Model {
    /// Reads execution `k`: its ops, and its events in a linear order that respects every
    /// dependency.
    pub(super) fn build_execution(
        &mut self,
        k: usize,
        p: &Plan,
        values: &TimelineValues,
        signals: &[Vec<(u64, usize, usize)>],
        segs_of: &SegsOf,
    ) {
        let ex = Exec {
            k,
            p,
            values,
            segs_of,
        };
        let pass_at = self.pass_locations(&ex);
        let (preds, waits) = self.batch_graph(&ex, signals);
        let order = self.submission_order(&ex, &preds);
        let externals = self.guarded_binary_waits(&ex, &pass_at);
        let present_of_pass = self.present_signals(&ex, &pass_at);
        let presents = vec![vec![]; ex.nodes()];
        let mut links = Links {
            waits,
            externals,
            presents,
            present_of_pass,
        };
        for (q, b) in order {
            self.emit_batch(&ex, &mut links, q, b);
        }
    }

    /// Where each pass is recorded: (queue, batch). A pass recorded twice, on another queue
    /// than its own, or never (unless the plan culled it: it is not in [`Plan::order`]), is a
    /// structural violation; so is a culled pass that is recorded.
    fn pass_locations(&mut self, ex: &Exec) -> Vec<Option<(usize, usize)>> {
        let Exec { k, p, .. } = *ex;
        let input = &p.input;
        let qname = |q: usize| ex.qname(q);
        let mut pass_at: Vec<Option<(usize, usize)>> = vec![None; input.passes.len()];
        let mut planned = vec![false; input.passes.len()];
        for &i in &p.order {
            match planned.get_mut(i) {
                Some(t) if !*t => *t = true,
                _ => self.violations.push(structure(format!(
                    "execution {k}: the plan's order names pass {i} twice or out of range"
                ))),
            }
        }
        for (q, qp) in p.queues.iter().enumerate() {
            for (b, batch) in qp.batches.iter().enumerate() {
                for c in &batch.commands {
                    if let Command::Pass(i) = c {
                        let name = input.passes.get(*i).map_or("?".into(), |p| p.name.clone());
                        if *i >= input.passes.len() {
                            self.violations.push(structure(format!(
                                "execution {k}: queue `{}` records pass {i}, which does not exist",
                                qname(q)
                            )));
                        } else if pass_at[*i].is_some() {
                            self.violations.push(structure(format!(
                                "execution {k}: pass `{name}` is recorded twice"
                            )));
                        } else {
                            if !planned[*i] {
                                self.violations.push(structure(format!(
                                    "execution {k}: pass `{name}` is recorded but not in the plan's order"
                                )));
                            }
                            if input.passes[*i].queue != q {
                                self.violations.push(structure(format!("execution {k}: pass `{name}` is recorded on queue `{}`, not on its own queue", qname(q))));
                            }
                            pass_at[*i] = Some((q, b));
                        }
                    }
                }
            }
        }
        for (i, at) in pass_at.iter().enumerate() {
            if at.is_none() && planned[i] {
                self.violations.push(structure(format!(
                    "execution {k}: pass `{}` is never recorded",
                    input.passes[i].name
                )));
            }
        }
        pass_at
    }

    /// Resolves the timeline waits of this execution into the batch graph: per node, the
    /// nodes it must follow (its queue's previous batch, and the batch of this execution whose
    /// signal satisfies each wait), and its waits as the analysis reads them.
    fn batch_graph(
        &mut self,
        ex: &Exec,
        signals: &[Vec<(u64, usize, usize)>],
    ) -> (Vec<Vec<usize>>, Vec<Vec<TimelineWait>>) {
        let Exec { k, p, values, .. } = *ex;
        let nq = p.input.queues.len();
        let uni = self.universe;
        let qname = |q: usize| ex.qname(q);
        let node = |q: usize, b: usize| ex.node(q, b);
        let nn = ex.nodes();
        let mut preds: Vec<Vec<usize>> = vec![vec![]; nn];
        let mut waits: Vec<Vec<TimelineWait>> = vec![vec![]; nn];
        for (q, qp) in p.queues.iter().enumerate() {
            for (b, batch) in qp.batches.iter().enumerate() {
                if b > 0 {
                    preds[node(q, b)].push(node(q, b - 1));
                }
                for w in &batch.waits {
                    let (sq, val) = match w.target {
                        WaitTarget::Binary(_) => continue,
                        WaitTarget::Batch { queue, batch: sb } => {
                            match values
                                .per_batch
                                .get(queue)
                                .and_then(|v| v.get(sb))
                                .copied()
                                .flatten()
                            {
                                Some(v) => (queue, v),
                                None => {
                                    self.violations.push(structure(format!("execution {k}: batch {b} of queue `{}` waits on batch {sb} of queue {queue}, which signals nothing", qname(q))));
                                    continue;
                                }
                            }
                        }
                        WaitTarget::Value { queue, value } => (queue, value),
                    };
                    if sq >= nq {
                        self.violations.push(structure(format!(
                            "execution {k}: a wait names queue {sq}, which does not exist"
                        )));
                        continue;
                    }
                    // A value the queue had been given before this execution was signalled
                    // by earlier work (a verified execution or work outside the sequence):
                    // this execution's own signals cannot satisfy it. Otherwise the signal
                    // that satisfies the wait is the first one of this execution reaching it.
                    let before = values.start[sq];
                    match signals[sq].iter().find(|s| s.0 >= val) {
                        _ if val <= before => {}
                        Some(&(_, sk, sb)) if sk == k => preds[node(q, b)].push(node(sq, sb)),
                        _ => {
                            self.violations.push(structure(format!(
                                "execution {k}: batch {b} of queue `{}` waits for value {val} of queue `{}`, which is not signalled by then",
                                qname(q),
                                qname(sq)
                            )));
                            continue;
                        }
                    }
                    waits[node(q, b)].push(TimelineWait {
                        queue: sq,
                        value: val,
                        reached_before: (val <= before).then_some(before),
                        stages: uni.stages(w.stages, Scope::Second),
                    });
                }
            }
        }
        (preds, waits)
    }

    /// Orders the batches by Kahn's algorithm, taking queues round-robin. A cycle (a deadlock)
    /// is a violation; its batches follow in queue order so that they are still checked.
    fn submission_order(&mut self, ex: &Exec, preds: &[Vec<usize>]) -> Vec<(usize, usize)> {
        let Exec { k, p, .. } = *ex;
        let nq = p.input.queues.len();
        let node = |q: usize, b: usize| ex.node(q, b);
        let nn = ex.nodes();
        let mut order = vec![];
        let mut done = vec![false; nn];
        let mut next = vec![0usize; nq];
        loop {
            let mut progressed = false;
            for (q, nx) in next.iter_mut().enumerate() {
                while *nx < p.queues[q].batches.len() {
                    let n = node(q, *nx);
                    if preds[n].iter().all(|&x| done[x]) {
                        done[n] = true;
                        order.push((q, *nx));
                        *nx += 1;
                        progressed = true;
                    } else {
                        break;
                    }
                }
            }
            if !progressed {
                break;
            }
        }
        if order.len() < nn {
            self.violations.push(structure(format!(
                "execution {k}: the semaphore waits form a cycle (deadlock)"
            )));
            for (q, n) in next.iter().enumerate() {
                for b in *n..p.queues[q].batches.len() {
                    order.push((q, b));
                }
            }
        }
        order
    }

    /// Guarded binary waits: per pass declaration, the batch that waits, and an external op
    /// (the presentation engine handing the image back) on each guarded resource.
    fn guarded_binary_waits(
        &mut self,
        ex: &Exec,
        pass_at: &[Option<(usize, usize)>],
    ) -> Vec<Vec<(usize, u64)>> {
        let Exec { k, p, segs_of, .. } = *ex;
        let input = &p.input;
        let uni = self.universe;
        let qname = |q: usize| ex.qname(q);
        let node = |q: usize, b: usize| ex.node(q, b);
        let nn = ex.nodes();
        let mut externals: Vec<Vec<(usize, u64)>> = vec![vec![]; nn];
        let mut seen_ext: BTreeSet<(usize, usize, usize)> = BTreeSet::new();
        for (i, pass) in input.passes.iter().enumerate() {
            let Some((q, pb)) = pass_at[i] else { continue };
            for d in &pass.waits {
                let found = (0..=pb).rev().find_map(|b| {
                    p.queues[q].batches[b]
                        .waits
                        .iter()
                        .find(|w| w.target == WaitTarget::Binary(d.semaphore))
                        .map(|w| (b, w.stages))
                });
                let Some((b, stages)) = found else {
                    self.violations.push(structure(format!(
                        "execution {k}: pass `{}` waits on binary semaphore {:?}, but no batch of queue `{}` up to its own waits on it",
                        pass.name,
                        d.semaphore,
                        qname(q)
                    )));
                    continue;
                };
                for &r in &d.guards {
                    if r >= self.res_kinds.len() || !seen_ext.insert((q, b, r)) {
                        continue;
                    }
                    let id = self.ops.len();
                    self.ops.push(Op {
                        kind: OpKind::External,
                        exec: k,
                        queue: Some(q),
                        resource: r,
                        segs: segs_of(
                            r,
                            std::slice::from_ref(&(0..self.res_kinds[r].cells())),
                            &self.segs,
                        ),
                        stages: 0,
                        access: 0,
                        write: true,
                        layout: vk::ImageLayout::UNDEFINED,
                        actor: Actor::PresentationEngine { execution: k },
                    });
                    externals[node(q, b)].push((id, uni.stages(stages, Scope::Second)));
                }
            }
        }
        externals
    }

    /// Present ops wait for their pass's binary signal: per pass, the batch that signals it.
    /// Returns the signalling node and the signal's first scope.
    fn present_signals(
        &mut self,
        ex: &Exec,
        pass_at: &[Option<(usize, usize)>],
    ) -> Vec<Option<(usize, u64)>> {
        let Exec { k, p, .. } = *ex;
        let input = &p.input;
        let uni = self.universe;
        let node = |q: usize, b: usize| ex.node(q, b);
        let mut present_of_pass: Vec<Option<(usize, u64)>> = vec![None; input.passes.len()];
        for (i, pass) in input.passes.iter().enumerate() {
            let Some((q, pb)) = pass_at[i] else { continue };
            let found = pass.signals.iter().find_map(|s| {
                (pb..p.queues[q].batches.len()).find_map(|b| {
                    p.queues[q].batches[b]
                        .binary_signals
                        .iter()
                        .find(|(sem, _)| *sem == s.semaphore)
                        .map(|(_, st)| (b, *st))
                })
            });
            if let Some((b, st)) = found {
                present_of_pass[i] = Some((node(q, b), uni.stages(st, Scope::First)));
            } else if !pass.signals.is_empty() {
                self.violations.push(structure(format!("execution {k}: pass `{}` signals a binary semaphore that no batch of its queue signals", pass.name)));
            }
        }
        present_of_pass
    }
}
