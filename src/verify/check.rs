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
//!   accesses. A wait for timeline value `w` is satisfied by the first signal reaching `w`; its
//!   second scope is its batch and all later work of its queue in its stage mask, and its second
//!   access scope is all memory accesses.
//! - A layout transition happens after the first scope and the availability operation of its
//!   entry, before its visibility operation; available memory is visible to it and its writes
//!   are available. Layout transitions on one queue are ordered among themselves.
//! - Ownership transfers, without
//!   `VK_DEPENDENCY_QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES_BIT_KHR` (the executor does
//!   not set it; `OWNERSHIP_TRANSFER_USES_ALL_STAGES` in `mod.rs`): a release happens after its
//!   entry's first scope and availability operation, but is not in the entry's second scope; an
//!   acquire happens before its entry's second scope and visibility operation, but is not in
//!   the entry's first scope. Both run in `OWNERSHIP_STAGE` (`flags.rs`), which only an
//!   all-stages mask holds: a release is in the first scope of a later semaphore signal or
//!   barrier (submission order) only when that scope is `ALL_COMMANDS`; an acquire is in the
//!   second scope of an earlier wait or barrier only when that scope is `ALL_COMMANDS`; from
//!   there, chains continue as usual. Available memory is visible to both, and their writes are
//!   made available automatically (by any later dependency, whatever its range). The release
//!   ignores its destination access mask and the acquire its source access mask. (With the
//!   flag, both run in no stage and both stage masks apply.)
//! - Presentation: the presentation engine reads after the binary signal of the presenting
//!   pass (writes available before it are visible to it); a guarded binary wait in a later
//!   execution happens after that read.
//!
//! Every pair of conflicting operations on a segment (at least one writes) must be ordered in
//! the linear order's direction, with a memory dependency when the first writes. Pass accesses
//! must also keep program order. The state simulation then replays each segment in that order:
//! image layouts, whether the contents are still meaningful, the owning queue family, and
//! pending ownership transfers.

use super::flags::{bit_positions, WRITES};
use super::model::{Entry, Event, Model, Op, OpKind, Role, TimelineWait};
use super::{HazardKind, Violation, OWNERSHIP_TRANSFER_USES_ALL_STAGES};
use ash::vk;
use std::collections::BTreeMap;

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
        for (_, r) in &self.units[o] {
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

    fn start(&mut self, q: usize, exec: usize, waits: &[TimelineWait], externals: &[(usize, u64)]) {
        // Guarded binary waits: the presentation engine's accesses (and everything ordered
        // before its present) happen-before the wait.
        for &(o, stages) in externals {
            let mut pres_exec = Bits::new(self.words);
            let mut pres_av = Bits::new(self.words);
            let last = self.presented.len() - 1;
            for k in (0..exec).chain(std::iter::once(last)) {
                pres_exec.or(&self.presented[k].0);
                pres_av.or(&self.presented[k].1);
            }
            let op = self.m.ops[o].clone();
            for &g in &op.segs {
                for x in self.seen[g].clone() {
                    let r = self.unit_range(x, g);
                    let xo = &self.m.ops[x];
                    let exec_ok = pres_exec.has_range(r.clone());
                    let mem_ok = !xo.write || pres_av.has_range(r.clone());
                    if !exec_ok {
                        self.report(Some(x), o, g, HazardKind::Layout, "the swapchain image is acquired again without being presented after this access".into());
                    } else if !mem_ok {
                        self.report(
                            Some(x),
                            o,
                            g,
                            HazardKind::Layout,
                            "the write is not made available before the present".into(),
                        );
                    }
                }
                self.step(o, g);
            }
            let mut set = self.all_units(o);
            let mut seg_mask = Bits::new(self.words);
            for &g in &op.segs {
                seg_mask.or(&self.seg_units[g]);
            }
            let mut pe = pres_exec.clone();
            pe.and(&seg_mask);
            let mut pa = pres_av;
            pa.and(&seg_mask);
            pe.or(&set);
            pa.or(&set);
            let all = self.m.universe.access;
            self.grant(q, stages, &pe, Some(&pa), all, Some(&pa));
            set.or(&pe);
            for &g in &op.segs {
                self.seen[g].push(o);
            }
        }
        // Timeline waits.
        for &TimelineWait {
            queue: sq,
            value: w,
            reached_before,
            stages,
        } in waits
        {
            let mut ex = Bits::new(self.words);
            let mut av = Bits::new(self.words);
            let bound = reached_before.unwrap_or(u64::MAX);
            if let Some((_, e, a)) = self.sigs[sq].iter().find(|s| s.0 >= w && s.0 <= bound) {
                ex.or(e);
                av.or(a);
            }
            for (v, u) in &self.virt[sq] {
                if *v <= w {
                    ex.or(u);
                    av.or(u);
                }
            }
            let all = self.m.universe.access;
            self.grant(q, stages, &ex, Some(&av), all, Some(&av));
        }
    }

    fn barrier(&mut self, q: usize, entries: &[Entry]) {
        let m = self.m;
        // Scopes of every entry against the state before the command.
        let mut chained = vec![];
        let mut av_before = vec![];
        let mut created = vec![];
        for e in entries {
            let mut ch = self.union_over(&self.qs[q].before, e.src);
            ch.or(&self.union_over(&self.qs[q].direct, e.src));
            let av = self.union_over(&self.qs[q].avail, e.src);
            let mut cr = Bits::new(self.words);
            if e.role != Role::Acquire {
                let direct = self.union_over(&self.qs[q].direct_w, e.src);
                let mut covered = Bits::new(self.words);
                for (wb, set) in &self.write_classes {
                    if wb & !e.src_access == 0 {
                        covered.or(set);
                    }
                }
                let mut range = Bits::new(self.words);
                for &g in &e.segs {
                    range.or(&self.seg_units[g]);
                }
                // Writes of ownership transfers are made available automatically.
                covered.and(&range);
                covered.or(&self.auto_avail);
                cr = direct;
                cr.and(&covered);
            }
            chained.push(ch);
            av_before.push(av);
            created.push(cr);
        }
        // The transitions and ownership transfers of this command, as later operations. Each
        // happens after what is ordered before the stage it runs in (none but a release or
        // acquire in `OWNERSHIP_STAGE`) and, unless it is an acquire without USE_ALL_STAGES,
        // after its entry's first scope and availability operation.
        for (i, e) in entries.iter().enumerate() {
            let Some(t) = e.op else { continue };
            let mut after = self.union_over(&self.qs[q].before, m.ops[t].stages);
            let mut avail = self.union_over(&self.qs[q].avail, m.ops[t].stages);
            if e.role != Role::Acquire || OWNERSHIP_TRANSFER_USES_ALL_STAGES {
                after.or(&chained[i]);
                avail.or(&av_before[i]);
                avail.or(&created[i]);
            }
            for &g in &e.segs {
                for x in self.seen[g].clone() {
                    let xo = &m.ops[x];
                    let r = self.unit_range(x, g);
                    let both_transitions = matches!(xo.kind, OpKind::Transition { .. })
                        && matches!(m.ops[t].kind, OpKind::Transition { .. })
                        && xo.queue == Some(q);
                    let exec_ok = both_transitions || after.has_range(r.clone());
                    let mem_ok = both_transitions || !xo.write || avail.has_range(r.clone());
                    self.pair_result(x, t, g, exec_ok, mem_ok);
                }
                self.step(t, g);
            }
        }
        // Apply the dependencies.
        let na = self.idx.na;
        for (i, e) in entries.iter().enumerate() {
            let mut ex = chained[i].clone();
            let mut av = av_before[i].clone();
            av.or(&created[i]);
            let mut range = Bits::new(self.words);
            for &g in &e.segs {
                range.or(&self.seg_units[g]);
            }
            let mut vis = av.clone();
            vis.and(&range);
            // A release without USE_ALL_STAGES is not in its entry's second scope.
            let second_applies = e.role != Role::Release || OWNERSHIP_TRANSFER_USES_ALL_STAGES;
            if let Some(t) = e.op.filter(|_| second_applies) {
                let own = self.all_units(t);
                ex.or(&own);
                av.or(&own);
                vis.or(&own);
            }
            let ts: Vec<usize> = self.idx.ts(e.dst).collect();
            let as_: Vec<usize> = self.idx.as_(e.dst_access).collect();
            let qs = &mut self.qs[q];
            for &t in &ts {
                qs.before[t].or(&ex);
                qs.avail[t].or(&av);
                for &a in &as_ {
                    qs.vis[t * na + a].or(&vis);
                }
            }
        }
        for e in entries {
            if let Some(t) = e.op {
                for &g in &e.segs {
                    self.seen[g].push(t);
                }
                // A release or acquire in `OWNERSHIP_STAGE` is in the first scope of a later
                // all-stages synchronization command (a transition runs in no stage).
                self.add_direct(t, q);
            }
        }
    }

    fn op(&mut self, q: usize, y: usize) {
        let m = self.m;
        let yo = &m.ops[y];
        let na = self.idx.na;
        for &g in &yo.segs {
            for x in self.seen[g].clone() {
                let xo = &m.ops[x];
                if !(xo.write || yo.write)
                    || (xo.is_pass().is_some() && xo.is_pass() == yo.is_pass())
                {
                    continue;
                }
                let r = self.unit_range(x, g);
                let mut exec_ok = true;
                let mut mem_ok = true;
                for t in self.idx.ts(yo.stages) {
                    exec_ok &= self.qs[q].before[t].has_range(r.clone());
                    if xo.write {
                        for a in self.idx.as_(yo.access) {
                            mem_ok &= self.qs[q].vis[t * na + a].has_range(r.clone());
                        }
                    }
                }
                self.pair_result(x, y, g, exec_ok, mem_ok);
            }
            self.step(y, g);
            self.seen[g].push(y);
        }
        self.add_direct(y, q);
    }

    fn end(
        &mut self,
        q: usize,
        exec: usize,
        timeline: Option<(u64, u64)>,
        presents: &[(usize, u64)],
    ) {
        let prev = self.sigs[q].last().map(|s| (s.1.clone(), s.2.clone()));
        let scope = |this: &Self, mask: u64| {
            let mut ex = this.union_over(&this.qs[q].before, mask);
            ex.or(&this.union_over(&this.qs[q].direct, mask));
            // The first access scope is all memory accesses: writes directly in scope are made
            // available, as are those whose availability already happens-before the signal.
            let mut av = this.union_over(&this.qs[q].avail, mask);
            av.or(&this.union_over(&this.qs[q].direct_w, mask));
            if let Some((pe, pa)) = &prev {
                ex.or(pe);
                av.or(pa);
            }
            (ex, av)
        };
        for &(p, mask) in presents {
            let (ex, av) = scope(self, mask);
            let po = self.m.ops[p].clone();
            for &g in &po.segs {
                let mut pres_ex = Bits::new(self.words);
                let mut pres_av = Bits::new(self.words);
                for x in self.seen[g].clone() {
                    let r = self.unit_range(x, g);
                    let exec_ok = ex.has_range(r.clone());
                    let xw = self.m.ops[x].write;
                    let mem_ok = !xw || av.has_range(r.clone());
                    if exec_ok {
                        pres_ex.set_range(r.clone());
                        if mem_ok {
                            pres_av.set_range(r.clone());
                        }
                    }
                    if xw {
                        self.pair_result(x, p, g, exec_ok, mem_ok);
                    }
                }
                let own = self.unit_range(p, g);
                pres_ex.set_range(own.clone());
                pres_av.set_range(own);
                self.presented[exec].0.or(&pres_ex);
                self.presented[exec].1.or(&pres_av);
                self.step(p, g);
                self.seen[g].push(p);
            }
        }
        if let Some((v, mask)) = timeline {
            let (ex, av) = scope(self, mask);
            self.sigs[q].push((v, ex, av));
            self.sigs[q].sort_by_key(|s| s.0);
        }
    }

    /// Records the outcome of checking that `x` (earlier) is ordered before `y` on segment `g`.
    fn pair_result(&mut self, x: usize, y: usize, g: usize, exec_ok: bool, mem_ok: bool) {
        let m = self.m;
        let (xo, yo) = (&m.ops[x], &m.ops[y]);
        let kind = hazard(xo, yo);
        if !exec_ok {
            let same = xo.queue == yo.queue && xo.queue.is_some();
            let msg = if same {
                format!(
                    "execution dependency: no barrier on queue `{}` has {} in its first scope and {} in its second",
                    m.queue_names[yo.queue.unwrap()],
                    stage_desc(xo),
                    stage_desc(yo)
                )
            } else {
                format!(
                    "execution dependency: no semaphore signal/wait chain from {} on {} to {} on {}",
                    stage_desc(xo),
                    queue_desc(m, xo),
                    stage_desc(yo),
                    queue_desc(m, yo)
                )
            };
            self.report(Some(x), y, g, kind, msg);
        } else if !mem_ok {
            let msg = format!(
                "memory dependency: writes {:?} at {} are not made available and visible to {}",
                vk::AccessFlags2::from_raw(xo.access & WRITES),
                stage_desc(xo),
                access_desc(yo)
            );
            self.report(Some(x), y, g, kind, msg);
        }
        if let (Some(px), Some(py)) = (xo.is_pass(), yo.is_pass()) {
            if px > py {
                self.report(Some(x), y, g, HazardKind::Order, "runs after a pass inserted later that it conflicts with (program order reversed)".into());
            }
        }
    }

    fn report(&mut self, x: Option<usize>, y: usize, g: usize, kind: HazardKind, missing: String) {
        self.found
            .entry((x.unwrap_or(usize::MAX), y, kind, missing))
            .or_default()
            .push(g);
    }

    /// Replays operation `o` on segment `g`: layouts, contents, ownership.
    fn step(&mut self, o: usize, g: usize) {
        let m = self.m;
        let op = &m.ops[o];
        let exclusive = !m.concurrent[op.resource];
        let is_image = matches!(
            m.res_kinds[op.resource],
            crate::plan::ResourceKind::Image { .. }
        );
        // The host is no queue family: queue family ownership governs reads "performed by the
        // second queue family", so a host-only access (mapped memory) neither needs nor takes
        // ownership; its memory dependency is checked like any other.
        let host_only = op.stages == vk::PipelineStageFlags2::HOST.as_raw();
        let family = op.queue.filter(|_| !host_only).map(|q| m.families[q]);
        let mut c = self.cells[g].clone();
        let mut out: Vec<(Option<usize>, HazardKind, String)> = vec![];
        match &op.kind {
            OpKind::Initial { .. } => {}
            OpKind::Access {
                discard, present, ..
            } => {
                let needs = !(*discard && op.write);
                if is_image && op.layout != vk::ImageLayout::UNDEFINED && c.layout != op.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "expects layout {:?} but the image is in {:?}",
                            op.layout, c.layout
                        ),
                    ));
                }
                if let Some(r) = c.transit.take() {
                    if needs {
                        out.push((
                            Some(r),
                            HazardKind::Ownership,
                            "used between an ownership release and its acquire".into(),
                        ));
                    }
                }
                if needs {
                    if let Some((by, how)) = c.lost {
                        if c.defined {
                            out.push((
                                Some(by),
                                HazardKind::Layout,
                                format!("needs the old contents, but they were discarded by {how}"),
                            ));
                        }
                    }
                    if exclusive && c.defined && c.lost.is_none() {
                        if let (Some(own), Some(f)) = (c.owner, family) {
                            if own != f {
                                out.push((c.owner_by, HazardKind::Ownership, format!("queue family {f} uses the contents while family {own} owns them (no ownership transfer)")));
                            }
                        }
                    }
                }
                if op.write {
                    c.defined = true;
                    c.lost = None;
                }
                if !present && exclusive && family.is_some() {
                    c.owner = family;
                    c.owner_by = Some(o);
                }
            }
            OpKind::Transition { old, new } => {
                if *old != vk::ImageLayout::UNDEFINED && *old != c.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "the barrier's old layout {old:?} is not the current layout {:?}",
                            c.layout
                        ),
                    ));
                }
                if let Some(r) = c.transit.take() {
                    out.push((
                        Some(r),
                        HazardKind::Ownership,
                        "a layout transition between an ownership release and its acquire".into(),
                    ));
                }
                if *old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
                    c.lost = Some((o, "a layout transition from UNDEFINED"));
                } else if exclusive
                    && c.defined
                    && c.lost.is_none()
                    && c.owner.is_some()
                    && c.owner != family
                {
                    c.lost = Some((
                        o,
                        "a layout transition on a queue family that does not own the image",
                    ));
                }
                if *new == vk::ImageLayout::UNDEFINED || *new == vk::ImageLayout::PREINITIALIZED {
                    out.push((None, HazardKind::Layout, format!("transition to {new:?}")));
                }
                c.layout = *new;
                c.layout_by = Some(o);
                if exclusive {
                    c.owner = family;
                    c.owner_by = Some(o);
                }
            }
            OpKind::Release { src, old, .. } => {
                if let Some(r) = c.transit.take() {
                    out.push((
                        Some(r),
                        HazardKind::Ownership,
                        "released again before the earlier release was acquired".into(),
                    ));
                }
                if c.defined && c.lost.is_none() && c.owner.is_some_and(|own| own != *src) {
                    out.push((
                        c.owner_by,
                        HazardKind::Ownership,
                        format!(
                            "released by family {src}, which does not own it ({:?} does)",
                            c.owner
                        ),
                    ));
                }
                if is_image && *old != vk::ImageLayout::UNDEFINED && *old != c.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "the release's old layout {old:?} is not the current layout {:?}",
                            c.layout
                        ),
                    ));
                }
                if is_image && *old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
                    c.lost = Some((o, "an ownership release from UNDEFINED"));
                }
                c.transit = Some(o);
            }
            OpKind::Acquire {
                src,
                dst,
                old,
                new,
                range,
            } => {
                // "The buffer range or image subresource range specified in an acquire
                // operation must match exactly that of a previous release operation", with the
                // same families and, for images, the same old and new layouts.
                match c.transit.take().map(|r| (r, &m.ops[r].kind)) {
                    Some((
                        r,
                        OpKind::Release {
                            src: s,
                            dst: d,
                            old: o2,
                            new: n2,
                            range: r2,
                        },
                    )) => {
                        if s != src || d != dst || o2 != old || n2 != new {
                            out.push((Some(r), HazardKind::Ownership, format!(
                                "a matching release: the acquire is {src} -> {dst}, {old:?} -> {new:?}, the release {s} -> {d}, {o2:?} -> {n2:?}"
                            )));
                        } else if r2 != range {
                            out.push((Some(r), HazardKind::Ownership, format!(
                                "a release of exactly the acquired range: the acquire covers {}, the release {}",
                                range_desc(range),
                                range_desc(r2)
                            )));
                        }
                    }
                    _ => out.push((
                        None,
                        HazardKind::Ownership,
                        format!(
                            "a release before this acquire ({src} -> {dst}, {old:?} -> {new:?})"
                        ),
                    )),
                }
                if is_image {
                    c.layout = *new;
                    c.layout_by = Some(o);
                }
                c.owner = Some(*dst);
                c.owner_by = Some(o);
            }
            OpKind::External => {
                c.defined = false;
                c.lost = None;
                c.transit = None;
                c.owner = None;
                c.owner_by = None;
            }
        }
        self.cells[g] = c;
        for (x, kind, msg) in out {
            self.report(x, o, g, kind, msg);
        }
    }

    fn finish(self) -> Vec<Violation> {
        let m = self.m;
        let mut v = self.singles;
        for ((x, y, kind, missing), segs) in self.found {
            let yo = &m.ops[y];
            v.push(Violation {
                kind,
                first: (x != usize::MAX).then(|| m.ops[x].actor.clone()),
                second: Some(yo.actor.clone()),
                resource: Some(m.res_names[yo.resource].clone()),
                range: Some(m.describe_range(yo.resource, &segs)),
                missing,
            });
        }
        v
    }
}

fn hazard(x: &Op, y: &Op) -> HazardKind {
    let qfo = |o: &Op| matches!(o.kind, OpKind::Release { .. } | OpKind::Acquire { .. });
    let layout = |o: &Op| matches!(o.kind, OpKind::Transition { .. } | OpKind::External);
    if qfo(x) || qfo(y) {
        HazardKind::Ownership
    } else if layout(x) || layout(y) {
        HazardKind::Layout
    } else if x.write && y.write {
        HazardKind::Waw
    } else if x.write {
        HazardKind::Raw
    } else {
        HazardKind::War
    }
}

fn stage_desc(o: &Op) -> String {
    match o.kind {
        OpKind::Transition { .. } => "the layout transition".into(),
        OpKind::Release { .. } => "the ownership release".into(),
        OpKind::Acquire { .. } => "the ownership acquire".into(),
        OpKind::External => "the presentation engine's release".into(),
        OpKind::Access { present: true, .. } => "the present".into(),
        _ => format!("{:?}", vk::PipelineStageFlags2::from_raw(o.stages)),
    }
}

fn access_desc(o: &Op) -> String {
    match o.kind {
        OpKind::Access { present: false, .. } | OpKind::Initial { .. } => {
            format!(
                "{:?} at {:?}",
                vk::AccessFlags2::from_raw(o.access),
                vk::PipelineStageFlags2::from_raw(o.stages)
            )
        }
        _ => stage_desc(o),
    }
}

fn queue_desc(m: &Model, o: &Op) -> String {
    match o.queue {
        Some(q) => format!("queue `{}`", m.queue_names[q]),
        None => "outside the graph".into(),
    }
}

fn range_desc(r: &crate::range::SubRange) -> String {
    match r {
        crate::range::SubRange::Image(i) => format!(
            "mips {}..{} layers {}..{}",
            i.base_mip,
            i.base_mip + i.mip_count,
            i.base_layer,
            i.base_layer + i.layer_count
        ),
        crate::range::SubRange::Buffer(b) => format!("bytes {}..{}", b.offset, b.offset + b.size),
    }
}
