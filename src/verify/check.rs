//! The happens-before analysis and the per-cell state simulation.
//!
//! One walk over the linear order of [`Model::events`]. For every operation *unit* (an
//! operation on one segment in one of its atomic stages; transitions, ownership transfers and
//! presentation-engine steps are one unit per segment), the walk keeps, per queue and atomic
//! stage `t`:
//!
//! - `direct[q][t]`: units that ran on queue `q` in stage `t` so far. A later synchronization
//!   command on `q` whose first scope contains `t` has them in its first synchronization scope
//!   (submission order spans batches and executions).
//! - `before[q][t]`: units that happen-before every later operation of `q` in stage `t` (an
//!   execution dependency chain ends in a second scope containing `t`).
//! - `avail[q][t]`: units whose writes were made available by an availability operation that
//!   happens-before later work of `q` in stage `t`.
//! - `vis[q][t][a]`: units whose writes are visible to access type `a` in stage `t` on `q`.
//!
//! Rules, from the synchronization chapter:
//!
//! - A barrier entry's first scope is the units in `direct ∪ before` for its source stages; a
//!   chain continues when a later scope meets an earlier second scope (execution dependency
//!   chains). Each entry of one command is its own dependency; entries do not chain with each
//!   other.
//! - An entry makes available the writes of units *directly* in its first scope whose write
//!   access types are in its first access scope and whose segment it covers; the availability
//!   operation happens-before its second scope. Its visibility operation makes every write whose
//!   availability happens-before it (or that it made available) visible to its second access
//!   scope in its second scope, for its range.
//! - A semaphore signal's first scope is the work earlier in submission order in its stage
//!   mask, plus every earlier signal of that queue; its first access scope is all memory
//!   accesses. A render pass that ends by moving an attachment to its `finalLayout` does so
//!   in its dependency to `VK_SUBPASS_EXTERNAL`, before that dependency's second scope (later
//!   commands), which no signal is: the pass is in a signal's direct first scope only when the
//!   mask is all stages (`OWNERSHIP_STAGE` in it), and otherwise through a later barrier. A wait for timeline value `w` is satisfied by the first signal reaching `w`; its
//!   second scope is its batch and all later work of its queue in its stage mask, and its second
//!   access scope is all memory accesses.
//! - A layout transition happens after the first scope and the availability operation of its
//!   entry, before its visibility operation; available memory is visible to it and its writes
//!   are available. Layout transitions on one queue are ordered among themselves.
//! - Ownership transfers, without
//!   `VK_DEPENDENCY_QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES_BIT_KHR` (the executor sets
//!   it on the queues whose `QueueDecl::transfers_use_all_stages` says so, and only there;
//!   `Model::all_stages_transfers`): a release happens after its
//!   entry's first scope and availability operation, but is not in the entry's second scope; an
//!   acquire happens before its entry's second scope and visibility operation, but is not in
//!   the entry's first scope. Both run in `OWNERSHIP_STAGE` (`flags.rs`), which only an
//!   all-stages mask holds: a release is in the first scope of a later semaphore signal or
//!   barrier (submission order) only when that scope is `ALL_COMMANDS`; an acquire is in the
//!   second scope of an earlier wait or barrier only when that scope is `ALL_COMMANDS`; from
//!   there, chains continue as usual. Available memory is visible to both, and their writes are
//!   made available automatically (by any later dependency, whatever its range). The release
//!   ignores its destination access mask and the acquire its source access mask. (With the
//!   flag, on a queue that records it, both run in no stage and both stage masks apply.)
//! - Presentation: the presentation engine reads after the binary signal of the presenting
//!   pass (writes available before it are visible to it); a guarded binary wait in a later
//!   execution happens after that read.
//!
//! Every pair of conflicting operations on a segment (at least one writes) must be ordered in
//! the linear order's direction, with a memory dependency when the first writes. Pass accesses
//! must also keep program order. The state simulation then replays each segment in that order:
//! image layouts, whether the contents are still meaningful, the owning queue family, and
//! pending ownership transfers.
//!
//! This file holds the walk and its sets; `sync.rs` applies each event's synchronization rules,
//! `replay.rs` the state replay, and `report.rs` turns findings into violations.

use super::flags::{bit_positions, OWNERSHIP_STAGE, WRITES};
use super::model::{Entry, Event, Model, Op, OpKind, Role, TimelineWait};
use super::{HazardKind, Violation};
use ash::vk;
use std::collections::BTreeMap;

mod aliasing;
mod replay;
mod report;
mod sync;
mod unordered;

use report::range_desc;

#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(words: usize) -> Self {
        Bits(vec![0; words])
    }
    fn set_range(&mut self, r: std::ops::Range<usize>) {
        for i in r {
            self.0[i / 64] |= 1 << (i % 64);
        }
    }
    fn has_range(&self, r: std::ops::Range<usize>) -> bool {
        r.into_iter().all(|i| self.0[i / 64] & (1 << (i % 64)) != 0)
    }
    fn or(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= *b;
        }
    }
    fn and(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= *b;
        }
    }
    fn and_not(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= !*b;
        }
    }
    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// Compact indices for the atomic stage and access bits of the universe.
struct Index {
    stage: [usize; 64],
    access: [usize; 64],
    nt: usize,
    na: usize,
}

impl Index {
    fn new(stages: u64, access: u64) -> Self {
        let mut s = [usize::MAX; 64];
        let mut a = [usize::MAX; 64];
        let mut nt = 0;
        for b in bit_positions(stages) {
            s[b as usize] = nt;
            nt += 1;
        }
        let mut na = 0;
        for b in bit_positions(access) {
            a[b as usize] = na;
            na += 1;
        }
        Index {
            stage: s,
            access: a,
            nt,
            na,
        }
    }
    fn ts(&self, mask: u64) -> impl Iterator<Item = usize> + '_ {
        bit_positions(mask)
            .map(|b| self.stage[b as usize])
            .filter(|&i| i != usize::MAX)
    }
    fn as_(&self, mask: u64) -> impl Iterator<Item = usize> + '_ {
        bit_positions(mask)
            .map(|b| self.access[b as usize])
            .filter(|&i| i != usize::MAX)
    }
}

/// The tracked sets of one queue.
struct QueueSets {
    direct: Vec<Bits>,
    /// Only the units that write, for availability.
    direct_w: Vec<Bits>,
    /// The units of `direct` whose render pass ends by moving the image to its `finalLayout`:
    /// outside a semaphore signal's direct first scope unless it is all stages.
    ends_in_transition: Bits,
    before: Vec<Bits>,
    avail: Vec<Bits>,
    vis: Vec<Bits>,
}

/// The state of one segment in the replay.
#[derive(Clone, Debug)]
struct Cell {
    layout: vk::ImageLayout,
    layout_by: Option<usize>,
    defined: bool,
    /// Meaningful contents destroyed by a synchronization operation: which, and how.
    lost: Option<(usize, &'static str)>,
    owner: Option<u32>,
    owner_by: Option<usize>,
    /// A release waiting for its acquire.
    transit: Option<usize>,
    /// The execution that last touched it (a transient starts each execution fresh).
    exec: Option<usize>,
}

struct Checker<'m> {
    m: &'m Model,
    idx: Index,
    words: usize,
    /// `units[op]`: per segment of the op (same order as `op.segs`), its unit range, and the
    /// stage of each unit (0 when it has none).
    units: Vec<Vec<(usize, std::ops::Range<usize>)>>,
    unit_stage: Vec<u64>,
    seg_units: Vec<Bits>,
    /// Units of write ops grouped by their write access bits.
    write_classes: Vec<(u64, Bits)>,
    /// Units of ownership releases and acquires, whose writes are made available
    /// automatically.
    auto_avail: Bits,
    qs: Vec<QueueSets>,
    /// Per queue: cumulative sets of its timeline signals, ascending by value.
    sigs: Vec<Vec<(u64, Bits, Bits)>>,
    /// Per queue: earlier-graph ops covered by a timeline value.
    virt: Vec<Vec<(u64, Bits)>>,
    /// Per execution: units ordered (and available) before a present of that execution.
    presented: Vec<(Bits, Bits)>,
    seen: Vec<Vec<usize>>,
    cells: Vec<Cell>,
    found: BTreeMap<(usize, usize, HazardKind, String), Vec<usize>>,
    singles: Vec<Violation>,
}

pub(super) fn run(m: &Model) -> Vec<Violation> {
    let mut c = Checker::new(m);
    c.walk();
    c.finish()
}

impl<'m> Checker<'m> {
    fn new(m: &'m Model) -> Self {
        let idx = Index::new(m.universe.stages, m.universe.access);
        let mut units = vec![];
        let mut unit_stage = vec![];
        for op in &m.ops {
            let mut per = vec![];
            for &g in &op.segs {
                let start = unit_stage.len();
                if op.stages == 0 {
                    unit_stage.push(0);
                } else {
                    for b in bit_positions(op.stages) {
                        unit_stage.push(1u64 << b);
                    }
                }
                per.push((g, start..unit_stage.len()));
            }
            units.push(per);
        }
        let n = unit_stage.len().max(1);
        let words = n.div_ceil(64);
        let mut seg_units = vec![Bits::new(words); m.segs.len()];
        let mut write_classes: Vec<(u64, Bits)> = vec![];
        let mut auto_avail = Bits::new(words);
        for (o, op) in m.ops.iter().enumerate() {
            let qfot = matches!(op.kind, OpKind::Release { .. } | OpKind::Acquire { .. });
            for (g, r) in &units[o] {
                seg_units[*g].set_range(r.clone());
                if qfot {
                    auto_avail.set_range(r.clone());
                }
                if op.write {
                    let wb = op.access & WRITES;
                    let pos = match write_classes.iter().position(|(b, _)| *b == wb) {
                        Some(p) => p,
                        None => {
                            write_classes.push((wb, Bits::new(words)));
                            write_classes.len() - 1
                        }
                    };
                    write_classes[pos].1.set_range(r.clone());
                }
            }
        }
        let nq = m.families.len();
        let qs = (0..nq)
            .map(|_| QueueSets {
                direct: vec![Bits::new(words); idx.nt],
                direct_w: vec![Bits::new(words); idx.nt],
                ends_in_transition: Bits::new(words),
                before: vec![Bits::new(words); idx.nt],
                avail: vec![Bits::new(words); idx.nt],
                vis: vec![Bits::new(words); idx.nt * idx.na],
            })
            .collect();
        let nexec = m.ops.iter().map(|o| o.exec + 1).max().unwrap_or(1);
        let cells = m
            .initial
            .iter()
            .map(|i| Cell {
                layout: i.layout,
                layout_by: None,
                defined: i.defined,
                lost: None,
                owner: i.owner,
                owner_by: None,
                transit: None,
                exec: None,
            })
            .collect();
        Checker {
            m,
            idx,
            words,
            units,
            unit_stage,
            seg_units,
            write_classes,
            auto_avail,
            qs,
            sigs: vec![vec![]; nq],
            virt: vec![vec![]; nq],
            presented: vec![(Bits::new(words), Bits::new(words)); nexec + 1],
            seen: vec![vec![]; m.segs.len()],
            cells,
            found: BTreeMap::new(),
            singles: vec![],
        }
    }

    fn all_units(&self, o: usize) -> Bits {
        let mut b = Bits::new(self.words);
        for (_, r) in &self.units[o] {
            b.set_range(r.clone());
        }
        b
    }

    fn unit_range(&self, o: usize, g: usize) -> std::ops::Range<usize> {
        self.units[o]
            .iter()
            .find(|(s, _)| *s == g)
            .map(|(_, r)| r.clone())
            .unwrap_or(0..0)
    }

    /// Adds `set` to `before`, `avail` (if `av`) and `vis` for every stage in `stages` of `q`.
    fn grant(
        &mut self,
        q: usize,
        stages: u64,
        exec: &Bits,
        av: Option<&Bits>,
        vis_access: u64,
        vis_mask: Option<&Bits>,
    ) {
        let ts: Vec<usize> = self.idx.ts(stages).collect();
        let as_: Vec<usize> = self.idx.as_(vis_access).collect();
        let na = self.idx.na;
        let qs = &mut self.qs[q];
        for &t in &ts {
            qs.before[t].or(exec);
            if let Some(av) = av {
                qs.avail[t].or(av);
            }
        }
        if let Some(v) = vis_mask {
            if !v.is_empty() {
                for &t in &ts {
                    for &a in &as_ {
                        qs.vis[t * na + a].or(v);
                    }
                }
            }
        }
    }

    fn walk(&mut self) {
        let m = self.m;
        // The initial (earlier) operations come first.
        for (o, op) in m.ops.iter().enumerate() {
            let OpKind::Initial { app, value } = op.kind else {
                continue;
            };
            let u = self.all_units(o);
            if let Some(q) = op.queue {
                self.add_direct(o, q);
                if !app {
                    self.virt[q].push((value, u.clone()));
                }
            }
            if app {
                // The app synchronized its own work with everything but its own queue, where
                // only submission order holds.
                let all_access = m.universe.access;
                for q in 0..self.qs.len() {
                    if Some(q) != op.queue {
                        self.grant(q, m.universe.stages, &u, Some(&u), all_access, Some(&u));
                    }
                }
            }
            // Earlier history counts as presented for a guarded wait.
            let last = self.presented.len() - 1;
            self.presented[last].0.or(&u);
            self.presented[last].1.or(&u);
            for &g in &op.segs {
                self.seen[g].push(o);
            }
        }
        // An earlier graph's barrier made an initial write visible to later work of its queue.
        for &(o, q, stages, access) in &m.initial_visible {
            let u = self.all_units(o);
            self.grant(q, stages, &u, Some(&u), access, Some(&u));
        }
        for e in &m.events {
            match e {
                Event::Start {
                    q,
                    exec,
                    waits,
                    externals,
                } => self.start(*q, *exec, waits, externals),
                Event::Barrier { q, entries } => self.barrier(*q, entries),
                Event::Op { q, op } => self.op(*q, *op),
                Event::End {
                    q,
                    exec,
                    timeline,
                    presents,
                } => self.end(*q, *exec, *timeline, presents),
            }
        }
        // Every release needs its acquire.
        for g in 0..self.cells.len() {
            if let Some(r) = self.cells[g].transit {
                self.report(
                    None,
                    r,
                    g,
                    HazardKind::Ownership,
                    "an ownership release that is never acquired".into(),
                );
            }
        }
    }

    fn add_direct(&mut self, o: usize, q: usize) {
        let op = &self.m.ops[o];
        let ends_in_transition = matches!(
            op.kind,
            OpKind::Access {
                ends_in_transition: true,
                ..
            }
        );
        for (_, r) in &self.units[o] {
            if ends_in_transition {
                self.qs[q].ends_in_transition.set_range(r.clone());
            }
            for u in r.clone() {
                if let Some(t) = self.idx.ts(self.unit_stage[u]).next() {
                    let mut one = Bits::new(self.words);
                    one.set_range(u..u + 1);
                    self.qs[q].direct[t].or(&one);
                    if op.write {
                        self.qs[q].direct_w[t].or(&one);
                    }
                }
            }
        }
    }

    fn union_over(&self, sets: &[Bits], stages: u64) -> Bits {
        let mut b = Bits::new(self.words);
        for t in self.idx.ts(stages) {
            b.or(&sets[t]);
        }
        b
    }
}
