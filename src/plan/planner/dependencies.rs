//! Phase 1, dependencies: each pass's uses, in program order, become barriers before the
//! pass, release nodes on other queues, and dependencies that phase 2 turns into semaphore
//! waits.

use super::seg_use::{SegAccess, SegNeeds, SegUse};
use super::*;
use std::collections::BTreeMap;

/// The cells a use covers: a use narrowed to one plane of a depth/stencil image covers that
/// plane's cells only.
fn use_cells(kind: &ResourceKind, u: &UseDecl) -> SmallVec<[std::ops::Range<u64>; 1]> {
    let Some(grid) = kind.grid() else {
        return match u.range {
            Some(SubRange::Buffer(b)) => smallvec::smallvec![b.bytes()],
            None => smallvec::smallvec![0..kind.cells()],
            // Mismatched kinds are rejected by `validate`.
            Some(SubRange::Image(_)) => SmallVec::new(),
        };
    };
    match (u.range, grid.narrowed(u.aspect)) {
        // Every plane of the whole image is one run of cells.
        (None, None) => smallvec::smallvec![0..kind.cells()],
        (None, Some(_)) => match kind.whole() {
            SubRange::Image(r) => grid.cells(&r, u.aspect),
            SubRange::Buffer(_) => SmallVec::new(),
        },
        (Some(SubRange::Image(r)), _) => grid.cells(&r, u.aspect),
        // Mismatched kinds are rejected by `validate`.
        (Some(SubRange::Buffer(_)), _) => SmallVec::new(),
    }
}

/// After a pass whose render pass changed the image's layout itself: its transitions (the
/// last one at the end of the render pass) are a write that no later access sees yet, even
/// one at the same stages, so the pass's own access is not one that later reads can stand
/// behind (as the access after a barrier's transition is).
fn forget_reads_if(transitions: bool, st: &mut WState) {
    if transitions {
        st.reads.clear();
        st.visible.clear();
    }
}

/// Per pass, whether its render pass ends by moving an attachment to its `finalLayout`
/// ([`Planner::ends_render_pass`]); empty where no pass does, as in most graphs.
pub(super) fn render_pass_ends(input: &PlanInput) -> Vec<bool> {
    let ends = |p: &PassDecl| {
        p.uses.iter().any(|u| {
            let kind = &input.resources[u.resource].kind;
            u.render_pass
                .is_some_and(|rp| rp.final_layout != u.on_plane(kind).access.layout)
        })
    };
    if !input.passes.iter().any(ends) {
        return Vec::new();
    }
    input.passes.iter().map(ends).collect()
}

impl Planner<'_> {
    /// Plans pass `i`, moving `states` (the planner's, lent for the first phase) past it.
    pub(super) fn add_pass(&mut self, i: usize, states: &mut [RangeMap<WState>]) -> Result<()> {
        let pass = &self.input.passes[i];
        let q = pass.queue;
        let p = self.pos[i];
        // A binary wait makes the guarded resources "undefined, ready once the wait is done".
        for (wi, w) in pass.waits.iter().enumerate() {
            for &r in &w.guards {
                let cells = self.input.resources[r].kind.cells();
                let rec = Rec {
                    queue: q,
                    at: At::Node(p),
                    stages: vk::PipelineStageFlags2::NONE,
                    access: vk::AccessFlags2::NONE,
                    binary_wait: Some((i, wi)),
                };
                states[r].update(0..cells, |_| WState {
                    write: Some(rec),
                    ..WState::default()
                });
            }
        }
        let mut node = Node {
            kind: NodeKind::Pass(i),
            barrier: BarrierCmd::default(),
            deps: Vec::new(),
            whys: self.reasons.len()..self.reasons.len(),
        };
        // Fold the pass's uses per resource, so overlapping reads are handled once. Most
        // passes name each resource once and skip the fold: their uses go straight in.
        let uses = &pass.uses;
        let repeated = uses
            .iter()
            .enumerate()
            .any(|(k, u)| uses[..k].iter().any(|v| v.resource == u.resource));
        if !repeated {
            for u in uses {
                let kind = &self.input.resources[u.resource].kind;
                let seg_use = SegUse::of(u, kind);
                // Walked as a slice: a small vector's by-value iterator costs more.
                for cells in use_cells(kind, u).iter() {
                    let r = u.resource;
                    self.access_cells(i, r, cells.clone(), &seg_use, &mut node, states)?;
                }
            }
        } else {
            let mut by_resource: BTreeMap<usize, RangeMap<Option<SegUse>>> = BTreeMap::new();
            for u in uses {
                let kind = &self.input.resources[u.resource].kind;
                let m = by_resource
                    .entry(u.resource)
                    .or_insert_with(|| RangeMap::new(kind.cells(), None));
                let seg_use = SegUse::of(u, kind);
                for cells in use_cells(kind, u) {
                    m.update(cells, |old| {
                        // Overlapping uses of one pass are reads in one layout (`validate`
                        // refuses the rest, render passes that transition included).
                        Some(match old {
                            None => seg_use,
                            Some(o) => SegUse {
                                access: Access {
                                    stages: o.access.stages | seg_use.access.stages,
                                    access: o.access.access | seg_use.access.access,
                                    ..o.access
                                },
                                discard: o.discard && u.discards(),
                                ..*o
                            },
                        })
                    });
                }
            }
            for (r, m) in by_resource {
                for (cells, u) in m.iter() {
                    if let Some(u) = u {
                        self.access_cells(i, r, cells.clone(), u, &mut node, states)?;
                    }
                }
            }
        }
        node.whys.end = self.reasons.len();
        self.hoist_barrier(i, q, &mut node);
        // Passes arrive in the order taken, and positions follow it: they always go last.
        self.nodes[q].push((p, node));
        Ok(())
    }

    /// Synchronizes one folded use of `cells` of resource `r`, segment by segment.
    /// Always inlined into its two callers: its seven arguments cost more to pass than its
    /// body to copy.
    #[inline(always)]
    fn access_cells(
        &mut self,
        i: usize,
        r: usize,
        cells: std::ops::Range<u64>,
        u: &SegUse,
        node: &mut Node,
        states: &mut [RangeMap<WState>],
    ) -> Result<()> {
        // Most uses follow no other transient's accesses: nothing to find, nothing allocated.
        let after = self.aliasing.after_first_use(r, i);
        let alias = match after {
            [] => Vec::new(),
            _ => alias_priors(r, after, states),
        };
        let res = states[r].try_update(cells, |c, st| {
            self.access_segment(i, r, c, st, (u, &alias), node)
        });
        // Matched rather than returned as is: the common `Ok` then copies no error's room.
        match res {
            Ok(()) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Synchronizes one use of one segment with what came before, and moves the segment's
    /// state past it.
    fn access_segment(
        &mut self,
        pass: usize,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &mut WState,
        (u, alias): (&SegUse, &[Rec]),
        node: &mut Node,
    ) -> Result<()> {
        // Built here and filled in place: the facts are too large to move per use.
        let mut s = self.seg_access(pass, r, st, u, alias);
        // An error ends the plan: the lent list need not go back then.
        self.find_priors(st, &mut s)?;
        // The barrier's scopes; none where semaphores (or nothing at all) order the use.
        let scopes = match s.needs.transfer_from {
            Some(from) => Some(self.acquire(&s, from, cells.clone(), st, node)?),
            None => self.order_on_queue(&s, node),
        };
        if let Some(scopes) = scopes {
            let acquire = s.needs.transfer_from.map(|from| (from, &*st));
            let cause = self.cause((pass, s.queue), &s.priors, s.alias, acquire);
            self.push_use_barrier(&s, cells, scopes, cause, node);
        }
        let before = st.write;
        apply_access(
            st,
            s.queue,
            s.pos,
            s.u.access,
            s.eff,
            s.needs.write_like,
            s.u.discard,
            s.concurrent,
            s.family,
            s.needs.after_layout,
        );
        forget_reads_if(s.u.transitions, st);
        self.follow_group(st, &s, before);
        // The list goes back, to be lent to the next use.
        self.use_priors = std::mem::take(&mut s.priors);
        Ok(())
    }

    /// The facts of one use of one segment that [`Self::access_segment`]'s steps share, read
    /// from the segment's state before the use; [`Self::find_priors`] fills in its priors.
    #[inline]
    fn seg_access<'u>(
        &mut self,
        pass: usize,
        r: usize,
        st: &WState,
        u: &'u SegUse,
        alias: &'u [Rec],
    ) -> SegAccess<'u> {
        let res = &self.input.resources[r];
        let queue = self.input.passes[pass].queue;
        let family = self.input.queues[queue].family;
        SegAccess {
            pass,
            r,
            queue,
            family,
            pos: self.pos[pass],
            concurrent: res.concurrent,
            u,
            alias,
            needs: SegNeeds::of(res, family, st, u, &self.input.queues),
            eff: vk::PipelineStageFlags2::empty(),
            priors: {
                let mut priors = std::mem::take(&mut self.use_priors);
                priors.clear();
                priors
            },
            joins: false,
            unseen: st
                .write
                .filter(|_| !covered(&st.visible, queue, u.access.stages, u.access.access)),
        }
    }

    /// Fills in the prior accesses use `s` must be ordered after and the stages it is
    /// synchronized at, which join its pass's.
    fn find_priors(&mut self, st: &WState, s: &mut SegAccess) -> Result<()> {
        let (pass, r, queue, a) = (s.pass, s.r, s.queue, s.u.access);
        if let (Some(owner), true) = (s.needs.transfer_from, is_host_only(&a)) {
            // An ownership transfer cannot name the host's stage
            // (VUID-VkImageMemoryBarrier2-srcStageMask-03854).
            return Err(Error::InvalidInput(format!(
                "pass `{}` accesses `{}` on the host, which first needs a layout change on \
                 queue family {}, but family {owner} owns it: insert the pass on a queue \
                 of family {owner}, or declare the layout change in a pass of its own first",
                self.input.passes[pass].name, self.input.resources[r].name, s.family
            )));
        }
        if s.needs.write_like {
            s.joins = self.join_group(st, s)?;
            if !s.joins {
                write_priors_into(st, &mut s.priors);
                merge_alias_priors(s.alias, &mut s.priors);
            }
        } else if let Some(w) = s.unseen {
            s.priors.push(w);
        }
        s.eff = self.effective_stages(queue, a.stages, &s.priors);
        self.pass_stages[pass] |= s.eff;
        Ok(())
    }

    /// The stages a use on `queue` is synchronized at: its own `stages`, or, for a present
    /// (which has none), those of the `priors` on its queue.
    fn effective_stages(
        &mut self,
        queue: usize,
        stages: vk::PipelineStageFlags2,
        priors: &[Rec],
    ) -> vk::PipelineStageFlags2 {
        if !stages.is_empty() {
            // Resolving a binary wait's stages grows its stage mask.
            for x in priors {
                if x.queue == queue && x.binary_wait.is_some() {
                    self.rec_stages(x, stages);
                }
            }
            return stages;
        }
        // Present has no stages of its own: chain from whatever came before on this queue.
        let same_queue_stages = priors
            .iter()
            .filter(|x| x.queue == queue)
            .fold(vk::PipelineStageFlags2::NONE, |s, x| {
                s | self.rec_stages(x, stages)
            });
        if priors
            .iter()
            .any(|x| x.queue == queue && self.ends_render_pass(x))
        {
            // The present's binary signal must take in the render pass's move to
            // PRESENT_SRC_KHR, which no stage but all of them holds.
            vk::PipelineStageFlags2::ALL_COMMANDS
        } else if !same_queue_stages.is_empty() {
            same_queue_stages
        } else {
            // Nothing on this queue to chain from (e.g. presenting straight after another
            // queue's work): the only work here is the barrier itself, so waiting for
            // everything costs nothing.
            vk::PipelineStageFlags2::ALL_COMMANDS
        }
    }

    /// Orders a use that takes no ownership after its priors: those of its queue through a
    /// barrier, the others through semaphore waits (dependencies of `node`). Returns the
    /// barrier's scopes, or `None` where semaphores (or nothing at all) order it.
    fn order_on_queue(&mut self, s: &SegAccess, node: &mut Node) -> Option<Scopes> {
        let mut scopes = Scopes {
            src_stages: vk::PipelineStageFlags2::NONE,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: s.eff,
            dst_access: s.u.access.access,
            families: None,
        };
        let (chain, plain_own) = self.scope_and_waits(s, &mut scopes, node);
        let cross = !chain.is_empty();
        // A host access needs the barrier even after a semaphore: the semaphore makes
        // writes available in the device domain only; a HOST second scope and access make
        // them available to the host.
        let host_after_cross = cross && s.eff.contains(vk::PipelineStageFlags2::HOST);
        // Without a prior of its queue other than binary waits, semaphores (or nothing at
        // all) order the use: a binary wait orders the first use it guards at that use's
        // stages, memory included (`binary_wait_use_stages`).
        if (!plain_own || self.signalled_present(s)) && !s.needs.layout_change && !host_after_cross
        {
            // No barrier.
            return None;
        }
        if cross {
            // Chain the transition (or the host barrier) from the semaphore wait's stages.
            scopes.src_stages |= chain;
        }
        Some(scopes)
    }

    /// Whether use `s` is a present that needs no transition (a render pass left the image in
    /// PRESENT_SRC_KHR): the pass's binary signal orders it, whose stage mask is the stages it
    /// chains from here (`pass_stages`), so it needs no barrier either.
    fn signalled_present(&self, s: &SegAccess) -> bool {
        super::validate::is_present(&s.u.access)
            && self.input.passes[s.pass]
                .signals
                .iter()
                .any(|sig| sig.stages.is_none())
    }

    /// Puts each prior of the use's queue into the first scope of `scopes`, and makes each
    /// prior of another queue a dependency of `node`. Returns the stages of this queue that
    /// those semaphore waits guard, and that a barrier after them chains from; and whether a
    /// prior of the use's queue is no binary wait.
    fn scope_and_waits(
        &mut self,
        s: &SegAccess,
        scopes: &mut Scopes,
        node: &mut Node,
    ) -> (vk::PipelineStageFlags2, bool) {
        let caps = self.input.queues[s.queue].caps;
        let mut chain = vk::PipelineStageFlags2::NONE;
        let mut plain_own = false;
        for x in &s.priors {
            let stages = self.rec_stages(x, s.eff);
            if x.queue == s.queue {
                plain_own |= x.binary_wait.is_none();
                scopes.src_stages |= stages;
                scopes.src_access |= crate::access::write_bits_of(x.access);
                continue;
            }
            self.note_cross_queue_binary_wait(x);
            let stages = self.signal_stages(x, stages);
            // HOST is no stage a semaphore wait can guard: the host access comes after a
            // barrier (HOST in its second scope) that chains from the wait, and the wait
            // guards the awaited work's device stages as far as this queue has them.
            let device = s.eff & !vk::PipelineStageFlags2::HOST;
            let wait_stages = if device.is_empty() {
                on_queue(stages & !vk::PipelineStageFlags2::HOST, caps)
            } else {
                device
            };
            let dep = Dep::new(x.queue, x.at, wait_stages, stages);
            if x.at != At::Value(0) {
                node.deps.push(dep);
            }
            chain |= dep.wait_stages.get();
        }
        (chain, plain_own)
    }

    /// Adds the use's barrier over `cells` to its node's command, and why each of its entries
    /// is there.
    fn push_use_barrier(
        &mut self,
        s: &SegAccess,
        cells: std::ops::Range<u64>,
        scopes: Scopes,
        cause: Cause,
        node: &mut Node,
    ) {
        let kind = &self.input.resources[s.r].kind;
        self.spare.prepare(&mut node.barrier, kind);
        let entries = push_barrier(
            &mut node.barrier,
            s.r,
            kind,
            cells,
            scopes,
            (s.needs.old_layout, s.needs.new_layout),
            cause,
        );
        // What dropping the entry after batching must prove (see `redundant`).
        let start = self.reason_priors.len();
        (self.reason_priors).extend(s.priors.iter().filter(|x| x.queue == s.queue));
        let own = &self.reason_priors[start..];
        // After a render pass that ends in a transition, a semaphore chain orders the pass
        // only from an `ALL_COMMANDS` signal, which pruning does not model: the barrier stays.
        let keep = s.needs.layout_change
            || s.needs.transfer_from.is_some()
            || s.eff.intersects(vk::PipelineStageFlags2::HOST)
            || own
                .iter()
                .any(|x| x.binary_wait.is_some() || self.ends_render_pass(x));
        let unseen = s.unseen;
        let priors = start..self.reason_priors.len();
        for &entry in entries.iter() {
            self.reasons.push(Why {
                entry,
                priors: priors.clone(),
                dst: s.eff,
                unseen,
                keep,
            });
        }
    }

    /// The stages a semaphore signal after prior `x` must name to take it in: `stages` (its
    /// own), or `ALL_COMMANDS` after a render pass that ends by moving an attachment to its
    /// `finalLayout` ([`Self::ends_render_pass`]).
    pub(super) fn signal_stages(
        &self,
        x: &Rec,
        stages: vk::PipelineStageFlags2,
    ) -> vk::PipelineStageFlags2 {
        if self.ends_render_pass(x) {
            vk::PipelineStageFlags2::ALL_COMMANDS
        } else {
            stages
        }
    }

    /// Whether prior `x` is a pass of this graph whose render pass ends by moving an
    /// attachment to its `finalLayout`. That move happens-before the second scope of the
    /// render pass's dependency to `VK_SUBPASS_EXTERNAL`: later commands at the use's stages
    /// ([`crate::render_pass::outgoing`]), so a later barrier chains from those stages. A
    /// semaphore signal is no command: only an `ALL_COMMANDS` signal takes the move in. Any
    /// attachment of the pass counts, not only the prior's resource: a transient that takes
    /// the attachment's memory follows the pass as well.
    fn ends_render_pass(&self, x: &Rec) -> bool {
        // Empty where no pass's render pass does: most graphs.
        if self.render_pass_ends.is_empty() {
            return false;
        }
        let At::Node(p) = x.at else {
            return false;
        };
        // Passes are at even positions from 2 (`pass_pos`), releases at odd ones.
        if x.binary_wait.is_some() || p < 2 || p % 2 != 0 {
            return false;
        }
        let Some(&i) = self.order.get(((p - 2) / 2) as usize) else {
            return false;
        };
        self.render_pass_ends.get(i).copied().unwrap_or(false)
    }

    /// The stages to chain from for a prior access. A binary wait's stages are those of its
    /// first use, so they are resolved (and grown) here.
    /// Inlined: most records are no binary wait and just give their stages.
    #[inline]
    fn rec_stages(
        &mut self,
        x: &Rec,
        use_stages: vk::PipelineStageFlags2,
    ) -> vk::PipelineStageFlags2 {
        match x.binary_wait {
            Some(key) if !use_stages.is_empty() => {
                self.binary_wait_use_stages(x.queue, key, use_stages)
            }
            _ => x.stages,
        }
    }

    /// [`Self::rec_stages`] of a binary wait (`key`) on `queue`: the use's stages, which the
    /// wait's stage mask grows by.
    fn binary_wait_use_stages(
        &mut self,
        queue: usize,
        key: (usize, usize),
        use_stages: vk::PipelineStageFlags2,
    ) -> vk::PipelineStageFlags2 {
        // The wait is on the binary wait's queue, which may be another than the use's. A
        // host use has no stage the wait can guard: it waits for all commands (and the
        // barrier to the host chains from them).
        let device = use_stages & !vk::PipelineStageFlags2::HOST;
        let s = on_queue(device, self.input.queues[queue].caps);
        *self.binary_wait_stages.entry(key).or_default() |= s;
        s
    }

    /// A binary wait whose guarded resource is first used on another queue: the timeline
    /// signal after it must chain from it, so it stalls everything after it.
    fn note_cross_queue_binary_wait(&mut self, x: &Rec) {
        if let Some(key) = x.binary_wait {
            *self.binary_wait_stages.entry(key).or_default() |=
                vk::PipelineStageFlags2::ALL_COMMANDS;
        }
    }
}

/// A transient's first use also follows the last accesses of the transients whose memory it
/// takes (`after`, from [`Aliasing::after_first_use`]), as if they were earlier contents of the
/// same resource `r` (a write after reads or after a write): the reads since their last write,
/// or that write. In order, for [`merge_alias_priors`].
fn alias_priors(r: usize, after: &[usize], states: &[RangeMap<WState>]) -> Vec<Rec> {
    let mut priors = Vec::new();
    for &a in after {
        debug_assert_ne!(a, r, "a transient takes another's memory");
        for (_, st) in states[a].iter() {
            priors.extend(write_priors(st));
        }
    }
    priors
}

/// Adds `alias`, the priors of a transient's first use from the transients whose memory it
/// takes ([`alias_priors`]), to its `priors`, one per access.
fn merge_alias_priors(alias: &[Rec], priors: &mut Vec<Rec>) {
    for &x in alias {
        match priors
            .iter_mut()
            .find(|p| p.queue == x.queue && p.at == x.at)
        {
            Some(p) => {
                p.stages |= x.stages;
                p.access |= x.access;
            }
            None => priors.push(x),
        }
    }
}
