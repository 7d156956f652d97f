//! The synchronization rules of the walk: what a batch start (semaphore waits), a barrier
//! command, an operation and a batch end (semaphore signals) add to the per-queue sets, and
//! the ordering checks between each operation and the earlier ones on its segments.

use super::*;

/// One entry of a barrier command, read against the state before the command.
struct EntryScope {
    /// Units in its first synchronization scope, with the chains that end in it.
    chained: Bits,
    /// Units whose writes' availability already happens-before its first scope.
    available: Bits,
    /// Units whose writes its own availability operation makes available.
    made_available: Bits,
}

impl Checker<'_> {
    pub(super) fn start(
        &mut self,
        q: usize,
        exec: usize,
        waits: &[TimelineWait],
        externals: &[(usize, u64)],
    ) {
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

    /// One `vkCmdPipelineBarrier2` on queue `q`. Each entry is its own dependency: first every
    /// entry's scopes are read against the state before the command (entries do not chain
    /// with each other), then the transitions and ownership transfers they perform are checked
    /// and replayed, and last every entry's dependency applies to later work of `q`.
    pub(super) fn barrier(&mut self, q: usize, entries: &[Entry]) {
        let scopes: Vec<EntryScope> = entries.iter().map(|e| self.entry_scope(q, e)).collect();
        for (e, scope) in entries.iter().zip(&scopes) {
            if let Some(t) = e.op {
                self.barrier_op(q, e, t, scope);
            }
        }
        for (e, scope) in entries.iter().zip(scopes) {
            self.apply_entry(q, e, scope);
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

    /// Entry `e` of a barrier command on queue `q`, against the state before the command.
    fn entry_scope(&self, q: usize, e: &Entry) -> EntryScope {
        let sets = &self.qs[q];
        let mut chained = self.union_over(&sets.before, e.src);
        chained.or(&self.union_over(&sets.direct, e.src));
        let available = self.union_over(&sets.avail, e.src);
        // An acquire's first access scope is ignored: it makes nothing available.
        let made_available = if e.role == Role::Acquire {
            Bits::new(self.words)
        } else {
            self.made_available(q, e)
        };
        EntryScope {
            chained,
            available,
            made_available,
        }
    }

    /// The writes entry `e`'s availability operation makes available: those of units directly
    /// in its first scope on queue `q` whose write access types its first access scope holds
    /// and whose segment it covers, and those of ownership transfers.
    fn made_available(&self, q: usize, e: &Entry) -> Bits {
        let direct = self.union_over(&self.qs[q].direct_w, e.src);
        let mut covered = Bits::new(self.words);
        for (wb, set) in &self.write_classes {
            if wb & !e.src_access == 0 {
                covered.or(set);
            }
        }
        // A barrier over all of a transient also holds the memory other transients
        // share with it.
        let mut range = Bits::new(self.words);
        for &g in e.segs.iter().chain(&e.alias_segs) {
            range.or(&self.seg_units[g]);
        }
        covered.and(&range);
        // Writes of ownership transfers are made available automatically.
        covered.or(&self.auto_avail);
        let mut made = direct;
        made.and(&covered);
        made
    }

    /// The transition, release or acquire `t` that entry `e` (on queue `q`) performs, as a
    /// later operation: checked against the earlier operations on its segments, then
    /// replayed. It happens after what is ordered before the stage it runs in (none but a
    /// release or acquire in `OWNERSHIP_STAGE`) and, unless it is an acquire without
    /// USE_ALL_STAGES, after its entry's first scope and availability operation.
    fn barrier_op(&mut self, q: usize, e: &Entry, t: usize, scope: &EntryScope) {
        let m = self.m;
        let mut after = self.union_over(&self.qs[q].before, m.ops[t].stages);
        let mut avail = self.union_over(&self.qs[q].avail, m.ops[t].stages);
        if e.role != Role::Acquire || m.all_stages_transfers[m.ops[t].exec][q] {
            after.or(&scope.chained);
            avail.or(&scope.available);
            avail.or(&scope.made_available);
        }
        for &g in &e.segs {
            for (x, gx) in self.earlier(t, g) {
                let xo = &m.ops[x];
                let r = self.unit_range(x, gx);
                // Layout transitions on one queue are ordered among themselves.
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

    /// Applies entry `e`'s dependency to the later work of queue `q` in its second scope: its
    /// first scope happens-before it, what it made available (or found available) is
    /// available and, on its segments, visible to its second access scope; so is its own
    /// transition or acquire.
    fn apply_entry(&mut self, q: usize, e: &Entry, scope: EntryScope) {
        let EntryScope {
            chained: mut ex,
            available: mut av,
            made_available,
        } = scope;
        av.or(&made_available);
        let mut range = Bits::new(self.words);
        for &g in &e.segs {
            range.or(&self.seg_units[g]);
        }
        let mut vis = av.clone();
        vis.and(&range);
        // A release without USE_ALL_STAGES is not in its entry's second scope.
        let all_stages = |t: usize| self.m.all_stages_transfers[self.m.ops[t].exec][q];
        let second_applies = e.role != Role::Release || e.op.is_some_and(all_stages);
        if let Some(t) = e.op.filter(|_| second_applies) {
            let own = self.all_units(t);
            ex.or(&own);
            av.or(&own);
            vis.or(&own);
        }
        let na = self.idx.na;
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

    pub(super) fn op(&mut self, q: usize, y: usize) {
        let m = self.m;
        let yo = &m.ops[y];
        let na = self.idx.na;
        for &g in &yo.segs {
            // With maintenance9, a family taking kept contents over without a transfer takes
            // ownership, which is exclusive: it must come after every earlier use, as a write.
            let takes_over = self.takes_over(y, g);
            for (x, gx) in self.earlier(y, g) {
                let xo = &m.ops[x];
                // Another transient on shared memory: in the same pass too, it conflicts.
                let alias = gx != g;
                if !(xo.write || yo.write || takes_over)
                    || (!alias && xo.is_pass().is_some() && xo.is_pass() == yo.is_pass())
                    || (!alias && self.declared_unordered(x, y))
                {
                    continue;
                }
                let r = self.unit_range(x, gx);
                let mut exec_ok = true;
                let mut mem_ok = true;
                for t in self.idx.ts(yo.stages) {
                    exec_ok &= self.qs[q].before[t].has_range(r.clone());
                    if alias {
                        // Only a later write needs the alias's writes (available) first.
                        if xo.write && yo.write {
                            mem_ok &= self.qs[q].avail[t].has_range(r.clone());
                        }
                    } else if xo.write {
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

    pub(super) fn end(
        &mut self,
        q: usize,
        exec: usize,
        timeline: Option<(u64, u64)>,
        presents: &[(usize, u64)],
    ) {
        let prev = self.sigs[q].last().map(|s| (s.1.clone(), s.2.clone()));
        let scope = |this: &Self, mask: u64| {
            let sets = &this.qs[q];
            // A render pass's move to its finalLayout is in no stage a signal names but all.
            let (mut direct, mut direct_w) = (
                this.union_over(&sets.direct, mask),
                this.union_over(&sets.direct_w, mask),
            );
            if mask & OWNERSHIP_STAGE == 0 {
                direct.and_not(&sets.ends_in_transition);
                direct_w.and_not(&sets.ends_in_transition);
            }
            let mut ex = this.union_over(&sets.before, mask);
            ex.or(&direct);
            // The first access scope is all memory accesses: writes directly in scope are made
            // available, as are those whose availability already happens-before the signal.
            let mut av = this.union_over(&sets.avail, mask);
            av.or(&direct_w);
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
}
