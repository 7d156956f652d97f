//! The operations and the submission stream of one or more executions, built from the plans.
//!
//! This is a 1:1 reading of what the executor submits: per queue, batches in submission order
//! (one `VkSubmitInfo2` each), each with its semaphore waits, then its commands
//! (`vkCmdPipelineBarrier2` or a pass), then its semaphore signals. The streams of all queues
//! are put in one linear order that respects submission order and every semaphore wait; the
//! happens-before analysis (`check.rs`) walks that order once.

use super::flags::{Scope, Universe, OWNERSHIP_STAGE, WRITES};
use super::{Actor, HazardKind, Violation, OWNERSHIP_TRANSFER_USES_ALL_STAGES};
use crate::plan::{Command, Plan, ResourceKind, TimelineValues, WaitTarget};
use crate::range::{ImageRange, SubRange};
use ash::vk;
use std::collections::BTreeSet;
use std::ops::Range;

/// What an operation is.
#[derive(Clone, Debug)]
pub(super) enum OpKind {
    /// Work recorded before the first verified execution (its initial state).
    Initial {
        /// `Some(0)` (or an unknown queue): the app's own, already synchronized work.
        app: bool,
        /// The timeline value that covers it (`0`: none).
        value: u64,
    },
    /// Pass `pass` performing one declared use.
    Access {
        /// Index into the execution's passes.
        pass: usize,
        /// The use promises to overwrite the whole range.
        discard: bool,
        /// No pipeline stage: the presentation engine reads it after the pass's binary signal.
        present: bool,
    },
    /// An image layout transition of an image memory barrier.
    Transition {
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    },
    /// A queue family ownership release (source family side).
    Release {
        src: u32,
        dst: u32,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        range: SubRange,
    },
    /// A queue family ownership acquire (destination family side).
    Acquire {
        src: u32,
        dst: u32,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        range: SubRange,
    },
    /// The presentation engine handing a swapchain image back (a binary wait with guards).
    External,
}

/// One operation on one resource.
#[derive(Clone, Debug)]
pub(super) struct Op {
    pub kind: OpKind,
    pub exec: usize,
    /// The queue it runs on (`None`: outside any verified queue).
    pub queue: Option<usize>,
    pub resource: usize,
    /// Global segment ids it touches.
    pub segs: Vec<usize>,
    /// Atomic stages it runs in (0: no stage, e.g. transitions and, with
    /// `USE_ALL_STAGES`, ownership transfers: those run within their barrier's scopes;
    /// [`OWNERSHIP_STAGE`]: a release or acquire without it).
    pub stages: u64,
    /// Atomic access types it performs.
    pub access: u64,
    /// Whether it writes (layout transitions and ownership transfers count as writes).
    pub write: bool,
    /// The layout an image access expects.
    pub layout: vk::ImageLayout,
    pub actor: Actor,
}

impl Op {
    pub fn is_pass(&self) -> Option<(usize, usize)> {
        match self.kind {
            OpKind::Access { pass, .. } => Some((self.exec, pass)),
            _ => None,
        }
    }
}

/// Whether a barrier entry is an ownership release or acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Plain,
    Release,
    Acquire,
}

/// One image or buffer memory barrier of a `vkCmdPipelineBarrier2`.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub segs: Vec<usize>,
    /// First synchronization scope (atomic stages).
    pub src: u64,
    /// Second synchronization scope (atomic stages).
    pub dst: u64,
    /// First access scope (ignored for an acquire).
    pub src_access: u64,
    /// Second access scope (ignored for a release).
    pub dst_access: u64,
    pub role: Role,
    /// The transition / release / acquire it performs, if any.
    pub op: Option<usize>,
}

/// One timeline semaphore wait of a batch.
#[derive(Clone, Copy, Debug)]
pub(super) struct TimelineWait {
    pub queue: usize,
    pub value: u64,
    /// `Some(start)`: the waiting execution began with the queue's timeline given values up
    /// to `start >= value`, so only signals at or below `start` (earlier executions, or work
    /// outside the verified sequence) can satisfy the wait.
    pub reached_before: Option<u64>,
    /// The wait's second synchronization scope (atomic stages).
    pub stages: u64,
}

/// One step of the linear order.
#[derive(Clone, Debug)]
pub(super) enum Event {
    /// A batch begins: its semaphore waits.
    Start {
        q: usize,
        exec: usize,
        /// Timeline waits.
        waits: Vec<TimelineWait>,
        /// Guarded binary waits: the external op and the wait's second scope.
        externals: Vec<(usize, u64)>,
    },
    /// One `vkCmdPipelineBarrier2`.
    Barrier { q: usize, entries: Vec<Entry> },
    /// A pass performs one of its uses.
    Op { q: usize, op: usize },
    /// A batch ends: its signals.
    End {
        q: usize,
        exec: usize,
        /// Timeline signal: (value, first scope).
        timeline: Option<(u64, u64)>,
        /// Present ops, each with the first scope of its binary signal.
        presents: Vec<(usize, u64)>,
    },
}

/// A state-tracking segment: a run of cells of one resource that every op and barrier covers
/// whole or not at all.
#[derive(Clone, Debug)]
pub(super) struct Seg {
    pub cells: Range<u64>,
}

/// Initial per-segment state of the first execution.
#[derive(Clone, Debug)]
pub(super) struct InitialCell {
    pub layout: vk::ImageLayout,
    pub defined: bool,
    pub owner: Option<u32>,
}

/// Everything the analysis needs.
pub(super) struct Model {
    pub ops: Vec<Op>,
    pub events: Vec<Event>,
    pub segs: Vec<Seg>,
    pub initial: Vec<InitialCell>,
    pub universe: Universe,
    pub families: Vec<u32>,
    pub queue_names: Vec<String>,
    pub res_names: Vec<String>,
    pub res_kinds: Vec<ResourceKind>,
    pub concurrent: Vec<bool>,
    /// Structural problems found while reading the plans.
    pub violations: Vec<Violation>,
}

fn use_cells(kind: &ResourceKind, range: Option<SubRange>) -> Option<Vec<Range<u64>>> {
    match (kind, range) {
        (_, None) => Some(std::iter::once(0..kind.cells()).collect()),
        (ResourceKind::Image { mips, layers, .. }, Some(SubRange::Image(r))) => {
            r.fits(*mips, *layers).then(|| r.cells(*layers))
        }
        (ResourceKind::Buffer { size, .. }, Some(SubRange::Buffer(b))) => (b.size > 0
            && b.offset.checked_add(b.size).is_some_and(|e| e <= *size))
        .then(|| vec![b.bytes()]),
        _ => None,
    }
}

fn structure(msg: String) -> Violation {
    Violation {
        kind: HazardKind::Structure,
        first: None,
        second: None,
        resource: None,
        range: None,
        missing: msg,
    }
}

impl Model {
    pub fn build(execs: &[(&Plan, &TimelineValues)]) -> Model {
        let first = &execs[0].0.input;
        let nq = first.queues.len();
        let nr = first.resources.len();
        let mut m = Model {
            ops: vec![],
            events: vec![],
            segs: vec![],
            initial: vec![],
            universe: Universe::new(),
            families: first.queues.iter().map(|q| q.family).collect(),
            queue_names: first.queues.iter().map(|q| q.name.clone()).collect(),
            res_names: first.resources.iter().map(|r| r.name.clone()).collect(),
            res_kinds: first.resources.iter().map(|r| r.kind).collect(),
            concurrent: first.resources.iter().map(|r| r.concurrent).collect(),
            violations: vec![],
        };
        for (k, (p, v)) in execs.iter().enumerate() {
            if p.input.queues.len() != nq
                || p.input.resources.len() != nr
                || p.queues.len() != nq
                || v.per_batch.len() != nq
                || v.start.len() != nq
            {
                m.violations.push(structure(format!(
                    "execution {k} does not have the same queues and resources as execution 0"
                )));
                return m;
            }
            for (q, qp) in p.queues.iter().enumerate() {
                if v.per_batch[q].len() != qp.batches.len() {
                    m.violations.push(structure(format!(
                        "execution {k}: timeline values do not match the batches of queue {q}"
                    )));
                    return m;
                }
            }
        }

        // 1. Universe of named bits, and segment boundaries per resource.
        let mut bounds: Vec<BTreeSet<u64>> = m
            .res_kinds
            .iter()
            .map(|k| [0, k.cells()].into_iter().collect())
            .collect();
        let add = |bounds: &mut Vec<BTreeSet<u64>>, r: usize, cells: &[Range<u64>]| {
            for c in cells {
                bounds[r].insert(c.start);
                bounds[r].insert(c.end);
            }
        };
        let u = &mut m.universe;
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                add(&mut bounds, r, std::slice::from_ref(c));
                for rec in s.write.iter().chain(&s.reads) {
                    u.note_stages(rec.stages);
                    u.note_access(rec.access);
                }
            }
        }
        for (p, _) in execs {
            for pass in &p.input.passes {
                for us in &pass.uses {
                    u.note_stages(us.access.stages);
                    u.note_access(us.access.access);
                    if let Some(c) = m
                        .res_kinds
                        .get(us.resource)
                        .and_then(|k| use_cells(k, us.range))
                    {
                        add(&mut bounds, us.resource, &c);
                    }
                }
            }
            for b in p.queues.iter().flat_map(|q| &q.batches) {
                for w in &b.waits {
                    u.note_stages(w.stages);
                }
                if let Some(s) = b.signal {
                    u.note_stages(s);
                }
                for (_, s) in &b.binary_signals {
                    u.note_stages(*s);
                }
                for c in &b.commands {
                    if let Command::Barrier(bc) = c {
                        let scopes = bc
                            .images
                            .iter()
                            .map(|i| (i.resource, &i.scopes))
                            .chain(bc.buffers.iter().map(|b| (b.resource, &b.scopes)));
                        for (_, s) in scopes {
                            u.note_stages(s.src_stages | s.dst_stages);
                            u.note_access(s.src_access | s.dst_access);
                        }
                        for i in &bc.images {
                            if let Some(ResourceKind::Image { layers, .. }) =
                                m.res_kinds.get(i.resource)
                            {
                                add(&mut bounds, i.resource, &i.range.cells(*layers));
                            }
                        }
                        for b in &bc.buffers {
                            if b.resource < nr {
                                add(&mut bounds, b.resource, &[b.range.bytes()]);
                            }
                        }
                    }
                }
            }
        }
        let mut res_segs: Vec<Vec<usize>> = vec![];
        for (r, b) in bounds.iter().enumerate() {
            let pts: Vec<u64> = b
                .iter()
                .copied()
                .filter(|&x| x <= m.res_kinds[r].cells())
                .collect();
            let mut ids = vec![];
            for w in pts.windows(2) {
                ids.push(m.segs.len());
                m.segs.push(Seg { cells: w[0]..w[1] });
            }
            res_segs.push(ids);
        }
        let segs_of = |r: usize, cells: &[Range<u64>], segs: &[Seg]| -> Vec<usize> {
            res_segs[r]
                .iter()
                .copied()
                .filter(|&g| {
                    cells
                        .iter()
                        .any(|c| c.start <= segs[g].cells.start && segs[g].cells.end <= c.end)
                })
                .collect()
        };

        // 2. The initial state of the first execution: per-segment layout/contents/owner, and
        //    the earlier accesses as operations.
        m.initial = m
            .segs
            .iter()
            .map(|_| InitialCell {
                layout: vk::ImageLayout::UNDEFINED,
                defined: false,
                owner: None,
            })
            .collect();
        let uni = m.universe;
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                let segs = segs_of(r, std::slice::from_ref(c), &m.segs);
                for &g in &segs {
                    m.initial[g] = InitialCell {
                        layout: s.layout,
                        defined: s.defined,
                        owner: s.owner,
                    };
                }
                let recs = s
                    .write
                    .iter()
                    .map(|w| (w, true))
                    .chain(s.reads.iter().map(|w| (w, false)));
                for (rec, write) in recs {
                    let value = rec.value.unwrap_or(0);
                    let queue = (rec.queue < nq).then_some(rec.queue);
                    let app = value == 0 || queue.is_none();
                    m.ops.push(Op {
                        kind: OpKind::Initial { app, value },
                        exec: 0,
                        queue,
                        resource: r,
                        segs: segs.clone(),
                        stages: uni.stages(rec.stages, Scope::Op),
                        access: uni.access(rec.access),
                        write,
                        layout: vk::ImageLayout::UNDEFINED,
                        actor: if app { Actor::App } else { Actor::EarlierGraph },
                    });
                }
            }
        }

        // 3. Signals of every execution, to resolve timeline waits.
        // signals[q] = (value, exec, batch), ascending.
        let mut signals: Vec<Vec<(u64, usize, usize)>> = vec![vec![]; nq];
        for (k, (_, v)) in execs.iter().enumerate() {
            for (q, sig) in signals.iter_mut().enumerate() {
                for (b, val) in v.per_batch[q].iter().enumerate() {
                    if let Some(val) = val {
                        sig.push((*val, k, b));
                    }
                }
            }
        }
        for s in &mut signals {
            s.sort();
        }

        // 4. Per execution: ops, events, in a linear order that respects every dependency.
        for (k, (p, values)) in execs.iter().enumerate() {
            m.build_execution(k, p, values, &signals, &segs_of_owned(&res_segs, &m.segs));
        }
        m
    }

    #[allow(clippy::too_many_lines)]
    fn build_execution(
        &mut self,
        k: usize,
        p: &Plan,
        values: &TimelineValues,
        signals: &[Vec<(u64, usize, usize)>],
        segs_of: &SegsOf,
    ) {
        let input = &p.input;
        let nq = input.queues.len();
        let uni = self.universe;
        let qname = |q: usize| input.queues[q].name.clone();
        // Where each pass is recorded.
        let mut pass_at: Vec<Option<(usize, usize)>> = vec![None; input.passes.len()];
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
            if at.is_none() {
                self.violations.push(structure(format!(
                    "execution {k}: pass `{}` is never recorded",
                    input.passes[i].name
                )));
            }
        }

        // Resolve timeline waits and the batch graph of this execution.
        let node = |q: usize, b: usize| -> usize {
            p.queues[..q].iter().map(|x| x.batches.len()).sum::<usize>() + b
        };
        let nn: usize = p.queues.iter().map(|x| x.batches.len()).sum();
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
        // Kahn's algorithm, taking queues round-robin.
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

        // Guarded binary waits: the batch that waits, per pass declaration.
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

        // Present ops wait for the pass's binary signal: find the batch that signals it.
        let mut presents: Vec<Vec<(usize, u64)>> = vec![vec![]; nn];
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

        // Emit the events.
        for (q, b) in order {
            let n = node(q, b);
            let batch = &p.queues[q].batches[b];
            self.events.push(Event::Start {
                q,
                exec: k,
                waits: std::mem::take(&mut waits[n]),
                externals: std::mem::take(&mut externals[n]),
            });
            for c in &batch.commands {
                match c {
                    Command::Pass(i) => {
                        let Some(pass) = input.passes.get(*i) else {
                            continue;
                        };
                        for us in &pass.uses {
                            let Some(kind) = self.res_kinds.get(us.resource).copied() else {
                                self.violations.push(structure(format!("execution {k}: pass `{}` uses resource {}, which does not exist", pass.name, us.resource)));
                                continue;
                            };
                            let Some(cells) = use_cells(&kind, us.range) else {
                                self.violations.push(structure(format!(
                                    "execution {k}: pass `{}` declares a range outside `{}`",
                                    pass.name, self.res_names[us.resource]
                                )));
                                continue;
                            };
                            let stages = uni.stages(us.access.stages, Scope::Op);
                            let access = uni.access(us.access.access);
                            // No pipeline stage at all (Access::PRESENT): the presentation engine's read.
                            let present = us.access.stages.is_empty();
                            let id = self.ops.len();
                            self.ops.push(Op {
                                kind: OpKind::Access {
                                    pass: *i,
                                    discard: us.discard,
                                    present,
                                },
                                exec: k,
                                queue: Some(q),
                                resource: us.resource,
                                segs: segs_of(us.resource, &cells, &self.segs),
                                stages,
                                access,
                                write: access & WRITES != 0,
                                layout: us.access.layout,
                                actor: Actor::Pass {
                                    execution: k,
                                    pass: *i,
                                    name: pass.name.clone(),
                                },
                            });
                            if present {
                                // Performed by the presentation engine after the binary signal.
                                match present_of_pass[*i] {
                                    Some((pn, st)) => presents[pn].push((id, st)),
                                    None => {
                                        self.violations.push(structure(format!(
                                            "execution {k}: pass `{}` hands `{}` to the presentation engine without signalling a binary semaphore",
                                            pass.name, self.res_names[us.resource]
                                        )));
                                        presents[n].push((id, 0));
                                    }
                                }
                            } else {
                                self.events.push(Event::Op { q, op: id });
                            }
                        }
                    }
                    Command::Barrier(bc) => {
                        let next_pass =
                            batch
                                .commands
                                .iter()
                                .skip_while(|x| *x != c)
                                .find_map(|x| match x {
                                    Command::Pass(i) => {
                                        input.passes.get(*i).map(|p| p.name.clone())
                                    }
                                    _ => None,
                                });
                        let what = |s: &str| match &next_pass {
                            Some(n) => format!("{s} before pass `{n}`"),
                            None => format!("{s} at the end of batch {b}"),
                        };
                        let mut entries = vec![];
                        let imgs = bc.images.iter().map(|i| {
                            (
                                i.resource,
                                Some(SubRange::Image(i.range)),
                                i.scopes,
                                i.old_layout,
                                i.new_layout,
                            )
                        });
                        let bufs = bc.buffers.iter().map(|b| {
                            (
                                b.resource,
                                Some(SubRange::Buffer(b.range)),
                                b.scopes,
                                vk::ImageLayout::UNDEFINED,
                                vk::ImageLayout::UNDEFINED,
                            )
                        });
                        for (r, range, sc, old, new) in imgs.chain(bufs) {
                            let Some(kind) = self.res_kinds.get(r).copied() else {
                                self.violations.push(structure(format!("execution {k}: a barrier names resource {r}, which does not exist")));
                                continue;
                            };
                            let Some(cells) = use_cells(&kind, range) else {
                                self.violations.push(structure(format!("execution {k}: a barrier on queue `{}` has a range outside `{}` or of the wrong kind", qname(q), self.res_names[r])));
                                continue;
                            };
                            let segs = segs_of(r, &cells, &self.segs);
                            let fam = input.queues[q].family;
                            let mut role = Role::Plain;
                            if let Some((s, d)) = sc.families {
                                if s != d {
                                    if self.concurrent[r] {
                                        self.violations.push(Violation {
                                            kind: HazardKind::Ownership,
                                            first: None,
                                            second: Some(Actor::Sync { execution: k, queue: qname(q), what: what("barrier") }),
                                            resource: Some(self.res_names[r].clone()),
                                            range: None,
                                            missing: format!("ownership transfer {s} -> {d} on a CONCURRENT resource"),
                                        });
                                    } else if fam == s {
                                        role = Role::Release;
                                    } else if fam == d {
                                        role = Role::Acquire;
                                    } else {
                                        self.violations.push(structure(format!(
                                            "execution {k}: an ownership transfer {s} -> {d} of `{}` runs on queue `{}` of family {fam}",
                                            self.res_names[r],
                                            qname(q)
                                        )));
                                    }
                                }
                            }
                            let is_image = matches!(kind, ResourceKind::Image { .. });
                            let (op_kind, name) = match role {
                                Role::Release => {
                                    let (s, d) = sc.families.unwrap();
                                    (
                                        Some(OpKind::Release {
                                            src: s,
                                            dst: d,
                                            old,
                                            new,
                                            range: range.unwrap(),
                                        }),
                                        "ownership release",
                                    )
                                }
                                Role::Acquire => {
                                    let (s, d) = sc.families.unwrap();
                                    (
                                        Some(OpKind::Acquire {
                                            src: s,
                                            dst: d,
                                            old,
                                            new,
                                            range: range.unwrap(),
                                        }),
                                        "ownership acquire",
                                    )
                                }
                                Role::Plain if is_image && old != new => {
                                    (Some(OpKind::Transition { old, new }), "layout transition")
                                }
                                Role::Plain => (None, ""),
                            };
                            // Without USE_ALL_STAGES a release or acquire is outside its
                            // barrier's stage masks: it runs in the stage only an all-stages
                            // scope holds.
                            let qfot = role != Role::Plain && !OWNERSHIP_TRANSFER_USES_ALL_STAGES;
                            let op = op_kind.map(|kind| {
                                self.ops.push(Op {
                                    kind,
                                    exec: k,
                                    queue: Some(q),
                                    resource: r,
                                    segs: segs.clone(),
                                    stages: if qfot { OWNERSHIP_STAGE } else { 0 },
                                    access: 0,
                                    write: true,
                                    layout: vk::ImageLayout::UNDEFINED,
                                    actor: Actor::Sync {
                                        execution: k,
                                        queue: qname(q),
                                        what: what(name),
                                    },
                                });
                                self.ops.len() - 1
                            });
                            // A release ignores the second access scope; an acquire the first.
                            entries.push(Entry {
                                segs,
                                src: uni.stages(sc.src_stages, Scope::First),
                                dst: uni.stages(sc.dst_stages, Scope::Second),
                                src_access: if role == Role::Acquire {
                                    0
                                } else {
                                    uni.access(sc.src_access)
                                },
                                dst_access: if role == Role::Release {
                                    0
                                } else {
                                    uni.access(sc.dst_access)
                                },
                                role,
                                op,
                            });
                        }
                        self.events.push(Event::Barrier { q, entries });
                    }
                }
            }
            let timeline = batch.signal.map(|s| {
                (
                    values.per_batch[q][b].unwrap_or(0),
                    uni.stages(s, Scope::First),
                )
            });
            if batch.signal.is_some() && values.per_batch[q][b].is_none() {
                self.violations.push(structure(format!(
                    "execution {k}: batch {b} of queue `{}` signals but has no timeline value",
                    qname(q)
                )));
            }
            self.events.push(Event::End {
                q,
                exec: k,
                timeline,
                presents: std::mem::take(&mut presents[n]),
            });
        }
    }

    /// Cell intervals of a segment set, merged, for reports.
    pub fn describe_range(&self, r: usize, segs: &[usize]) -> String {
        let mut cells: Vec<Range<u64>> = segs.iter().map(|&g| self.segs[g].cells.clone()).collect();
        cells.sort_by_key(|c| c.start);
        let mut merged: Vec<Range<u64>> = vec![];
        for c in cells {
            match merged.last_mut() {
                Some(l) if l.end == c.start => l.end = c.end,
                _ => merged.push(c),
            }
        }
        let parts: Vec<String> = match self.res_kinds[r] {
            ResourceKind::Image { layers, .. } => merged
                .iter()
                .flat_map(|c| ImageRange::from_cells(c.clone(), layers))
                .map(|i| {
                    format!(
                        "mips {}..{} layers {}..{}",
                        i.base_mip,
                        i.base_mip + i.mip_count,
                        i.base_layer,
                        i.base_layer + i.layer_count
                    )
                })
                .collect(),
            ResourceKind::Buffer { .. } => merged
                .iter()
                .map(|c| format!("bytes {}..{}", c.start, c.end))
                .collect(),
        };
        parts.join(", ")
    }
}

/// Maps a resource and cell intervals to the segments they cover.
type SegsOf = dyn Fn(usize, &[Range<u64>], &[Seg]) -> Vec<usize>;

fn segs_of_owned(res_segs: &[Vec<usize>], _segs: &[Seg]) -> Box<SegsOf> {
    let res_segs = res_segs.to_vec();
    Box::new(move |r: usize, cells: &[Range<u64>], segs: &[Seg]| {
        res_segs[r]
            .iter()
            .copied()
            .filter(|&g| {
                cells
                    .iter()
                    .any(|c| c.start <= segs[g].cells.start && segs[g].cells.end <= c.end)
            })
            .collect()
    })
}
