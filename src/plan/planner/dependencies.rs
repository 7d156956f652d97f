//! Phase 1, dependencies: each pass's uses, in program order, become barriers before the
//! pass, release nodes on other queues, and dependencies that phase 2 turns into semaphore
//! waits.

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

/// What one pass does to one segment, after folding all its uses of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SegUse {
    access: Access,
    discard: bool,
    /// The layout the image must be in before the pass, and the one it is in after: the
    /// access's, or a `VkRenderPass`'s `initialLayout` and `finalLayout`.
    before: vk::ImageLayout,
    after: vk::ImageLayout,
    /// The pass changes the layout itself (a render pass's own transitions): a write.
    transitions: bool,
}

impl SegUse {
    /// What `u` does to a resource of `kind`: a use narrowed to one plane of a depth/stencil
    /// image takes that aspect's layout ([`UseDecl::on_plane`]).
    fn of(u: &UseDecl, kind: &ResourceKind) -> Self {
        let u = u.on_plane(kind);
        SegUse {
            access: u.access,
            discard: u.discards(),
            before: u.layout_before(),
            after: u.layout_after(),
            transitions: u.render_pass_transitions(),
        }
    }
}

impl Planner<'_> {
    pub(super) fn add_pass(&mut self, i: usize) -> Result<()> {
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
                self.states[r].update(0..cells, |_| WState {
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
                for cells in use_cells(kind, u) {
                    self.access_cells(i, u.resource, cells, seg_use, &mut node)?;
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
                    if let Some(u) = *u {
                        self.access_cells(i, r, cells.clone(), u, &mut node)?;
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
    fn access_cells(
        &mut self,
        i: usize,
        r: usize,
        cells: std::ops::Range<u64>,
        u: SegUse,
        node: &mut Node,
    ) -> Result<()> {
        // Taken out so each segment can be changed in place while `self` plans.
        let mut map = std::mem::take(&mut self.states[r]);
        let res = map.try_update(cells, |c, st| self.access_segment(i, r, c, st, u, node));
        self.states[r] = map;
        res
    }

    /// Synchronizes one use of one segment with what came before, and moves the segment's
    /// state past it.
    fn access_segment(
        &mut self,
        pass: usize,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &mut WState,
        u: SegUse,
        node: &mut Node,
    ) -> Result<()> {
        let res = &self.input.resources[r];
        let q = self.input.passes[pass].queue;
        let family = self.input.queues[q].family;
        let p = self.pos[pass];
        let a = u.access;
        let is_image = matches!(res.kind, ResourceKind::Image { .. });

        let contents_needed = st.defined && !u.discard;
        let new_layout = if is_image {
            u.before
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let old_layout = if !is_image {
            vk::ImageLayout::UNDEFINED
        } else if contents_needed || st.layout == new_layout {
            st.layout
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let layout_change = is_image && old_layout != new_layout;
        // The host is no queue family: queue family ownership governs "read accesses performed
        // by the second queue family", and mapped memory is read and written by the host after
        // a memory dependency whose second scope is HOST. A host access therefore takes no
        // ownership, unless an image must first change layout on this queue.
        let host_only = is_host_only(&a);
        let transfer_from = match st.owner {
            Some(o)
                if !res.concurrent
                    && contents_needed
                    && o != family
                    && (!host_only || layout_change) =>
            {
                Some(o)
            }
            _ => None,
        };
        let write_like = a.is_write() || layout_change || transfer_from.is_some() || u.transitions;
        // Where the pass leaves an image: its render pass's `finalLayout`, or where it was.
        let after_layout = if is_image {
            u.after
        } else {
            vk::ImageLayout::UNDEFINED
        };

        // The prior accesses this one must be ordered after.
        let priors: SmallVec<[Rec; 2]> = if write_like {
            let mut priors = write_priors(st);
            self.alias_priors(r, pass, &mut priors);
            priors
        } else {
            match st.write {
                Some(w) if !covered(&st.visible, q, a.stages, a.access) => smallvec::smallvec![w],
                _ => SmallVec::new(),
            }
        };

        // Present has no stages of its own: chain from whatever came before on this queue.
        let same_queue_stages = priors
            .iter()
            .filter(|x| x.queue == q)
            .fold(vk::PipelineStageFlags2::NONE, |s, x| {
                s | self.rec_stages(x, a.stages)
            });
        let eff = if !a.stages.is_empty() {
            a.stages
        } else if !same_queue_stages.is_empty() {
            same_queue_stages
        } else {
            // Nothing on this queue to chain from (e.g. presenting straight after another
            // queue's work): the only work here is the barrier itself, so waiting for
            // everything costs nothing.
            vk::PipelineStageFlags2::ALL_COMMANDS
        };
        self.pass_stages[pass] |= eff;

        let mut scopes = Scopes {
            src_stages: vk::PipelineStageFlags2::NONE,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: eff,
            dst_access: a.access,
            families: None,
        };

        if let Some(from) = transfer_from {
            // Ownership transfer: release on the queue of the most recent access, acquire here.
            let (rq, rpos) = self.add_release(
                r,
                cells.clone(),
                st,
                from,
                family,
                old_layout,
                new_layout,
                pass,
            )?;
            // Without VK_KHR_maintenance8's USE_ALL_STAGES dependency flag (which the executor
            // does not rely on), a release's second scope and an acquire's first scope do not
            // apply: only an ALL_COMMANDS semaphore signal orders the release before the
            // signal, and only an ALL_COMMANDS wait orders the acquire after the wait. The
            // barriers' own stage masks still chain, for implementations that read them.
            node.deps.push(Dep {
                queue: rq,
                at: At::Node(rpos),
                wait_stages: vk::PipelineStageFlags2::ALL_COMMANDS,
                src_stages: vk::PipelineStageFlags2::ALL_COMMANDS,
            });
            scopes.src_stages = eff;
            scopes.families = Some((from, family));
        } else {
            let caps = self.input.queues[q].caps;
            // The stages of this queue that semaphore waits guard, and that a barrier after
            // them chains from.
            let mut chain = vk::PipelineStageFlags2::NONE;
            for x in &priors {
                let stages = self.rec_stages(x, eff);
                if x.queue == q {
                    scopes.src_stages |= stages;
                    scopes.src_access |= crate::access::write_bits_of(x.access);
                } else {
                    self.note_cross_queue_binary_wait(x);
                    // HOST is no stage a semaphore wait can guard: the host access comes after
                    // a barrier (HOST in its second scope) that chains from the wait, and the
                    // wait guards the awaited work's stages as far as this queue has them.
                    let device = eff & !vk::PipelineStageFlags2::HOST;
                    let wait_stages = if device.is_empty() {
                        on_queue(stages, caps)
                    } else {
                        device
                    };
                    if x.at != At::Value(0) {
                        node.deps.push(Dep {
                            queue: x.queue,
                            at: x.at,
                            wait_stages,
                            src_stages: stages,
                        });
                    }
                    chain |= wait_stages;
                }
            }
            let cross = !chain.is_empty();
            let same_queue = priors.iter().any(|x| x.queue == q);
            // A host access needs the barrier even after a semaphore: the semaphore makes
            // writes available in the device domain only; a HOST second scope and access make
            // them available to the host.
            let host_after_cross = cross && eff.contains(vk::PipelineStageFlags2::HOST);
            // A present that needs no transition (a render pass left the image in
            // PRESENT_SRC_KHR) is ordered by the pass's binary signal, whose stage mask is the
            // stages it chains from here (`pass_stages`): it needs no barrier either.
            let signalled_present = super::super::last_use::is_present(&a)
                && self.input.passes[pass]
                    .signals
                    .iter()
                    .any(|s| s.stages.is_none());
            if (!same_queue || signalled_present) && !layout_change && !host_after_cross {
                // Semaphores (or nothing at all) order it; no barrier.
                apply_access(
                    st,
                    q,
                    p,
                    a,
                    eff,
                    write_like,
                    u.discard,
                    res.concurrent,
                    family,
                    after_layout,
                );
                forget_reads_if(u.transitions, st);
                return Ok(());
            }
            if cross {
                // Chain the transition (or the host barrier) from the semaphore wait's stages.
                scopes.src_stages |= chain;
            }
        }
        self.spare.prepare(&mut node.barrier, &res.kind);
        let entries = push_barrier(
            &mut node.barrier,
            r,
            &res.kind,
            cells,
            scopes,
            old_layout,
            new_layout,
        );
        // What dropping the entry after batching must prove (see `redundant`).
        let mut own: SmallVec<[Rec; 2]> = SmallVec::new();
        for x in priors.iter().filter(|x| x.queue == q) {
            own.push(*x);
        }
        let keep = layout_change
            || transfer_from.is_some()
            || eff.intersects(vk::PipelineStageFlags2::HOST)
            || own.iter().any(|x| x.binary_wait.is_some());
        let unseen = st
            .write
            .filter(|_| !covered(&st.visible, q, a.stages, a.access));
        // Usually one entry, which takes `own` rather than a copy.
        let why = |entry, priors| Why {
            entry,
            priors,
            dst: eff,
            unseen,
            keep,
        };
        match entries.as_slice() {
            &[entry] => self.reasons.push(why(entry, own)),
            more => {
                for &entry in more {
                    self.reasons.push(why(entry, own.clone()));
                }
            }
        }
        apply_access(
            st,
            q,
            p,
            a,
            eff,
            write_like,
            u.discard,
            res.concurrent,
            family,
            after_layout,
        );
        forget_reads_if(u.transitions, st);
        Ok(())
    }

    /// A transient's first use also follows the last accesses of the transients whose memory
    /// it takes, as if they were earlier contents of the same resource (a write after reads or
    /// after a write): the reads since their last write, or that write.
    fn alias_priors(&self, r: usize, pass: usize, priors: &mut SmallVec<[Rec; 2]>) {
        for &a in self.aliasing.after_first_use(r, pass) {
            for (_, st) in self.states[a].iter() {
                for x in write_priors(st) {
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
        }
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
        // The wait is on the binary wait's queue, which may be another than the use's.
        let s = on_queue(use_stages, self.input.queues[queue].caps);
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

    /// Adds (or extends) the release node for an ownership transfer of `cells` of resource
    /// `r`, on the queue of its most recent access. Returns (queue, position).
    #[allow(clippy::too_many_arguments)]
    fn add_release(
        &mut self,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &WState,
        from: u32,
        to: u32,
        old_layout: vk::ImageLayout,
        new_layout: vk::ImageLayout,
        pass: usize,
    ) -> Result<(usize, Pos)> {
        let recs: Vec<Rec> = st.write.iter().chain(st.reads.iter()).copied().collect();
        // The latest access by the owning family (a host access keeps the owner, and may be
        // later, on another family's queue). Timeline values of different queues do not
        // compare: among earlier graphs' accesses the lowest queue index is taken, so the plan
        // depends only on each queue's own order of values (what `Rebinder` relies on).
        let latest = recs
            .iter()
            .filter(|x| self.input.queues[x.queue].family == from)
            .max_by_key(|x| match x.at {
                At::Node(p) => (true, Some(p), std::cmp::Reverse(0)),
                At::Value(_) => (false, None, std::cmp::Reverse(x.queue)),
            })
            .copied();
        let (rq, pos) = match latest {
            Some(Rec {
                queue,
                at: At::Node(p),
                ..
            }) => (queue, p + 1),
            Some(Rec {
                queue,
                at: At::Value(_),
                ..
            }) => (queue, PRE_GRAPH_RELEASE),
            _ => {
                // The app handed it over with an owner but no queue: release on any queue
                // of that family.
                let q = self
                    .input
                    .queues
                    .iter()
                    .position(|qd| qd.family == from)
                    .ok_or_else(|| Error::NoQueueForRelease {
                        resource: self.input.resources[r].name.clone(),
                        family: from,
                        pass: self.input.passes[pass].name.clone(),
                    })?;
                (q, PRE_GRAPH_RELEASE)
            }
        };
        // The release is a write on `rq`: ordered after the reads since the last write, or
        // after the write itself.
        let priors = write_priors(st);
        let mut src_stages = vk::PipelineStageFlags2::NONE;
        let mut src_access = vk::AccessFlags2::NONE;
        let mut deps = Vec::new();
        for x in &priors {
            if x.queue == rq {
                src_stages |= x.stages;
                src_access |= crate::access::write_bits_of(x.access);
            } else if x.at != At::Value(0) {
                deps.push(*x);
            }
        }
        if src_stages.is_empty() {
            // Only other queues (or the app) touched it: chain from the semaphore wait, at
            // the awaited stages that this queue also has (or all commands).
            let mut other = deps
                .iter()
                .fold(vk::PipelineStageFlags2::NONE, |s, x| s | x.stages);
            if other.is_empty() {
                other = recs
                    .iter()
                    .fold(vk::PipelineStageFlags2::NONE, |s, x| s | x.stages);
            }
            src_stages = on_queue(other, self.input.queues[rq].caps);
        }
        let scopes = Scopes {
            src_stages,
            src_access,
            dst_stages: src_stages,
            dst_access: vk::AccessFlags2::NONE,
            families: Some((from, to)),
        };
        let kind = self.input.resources[r].kind;
        let qn = &mut self.nodes[rq];
        let at = qn.partition_point(|(p, _)| *p < pos);
        if qn.get(at).is_none_or(|(p, _)| *p != pos) {
            qn.insert(
                at,
                (
                    pos,
                    Node {
                        kind: NodeKind::Release,
                        barrier: BarrierCmd::default(),
                        deps: Vec::new(),
                        whys: 0..0,
                    },
                ),
            );
        }
        let node = &mut qn[at].1;
        for x in deps {
            node.deps.push(Dep {
                queue: x.queue,
                at: x.at,
                wait_stages: src_stages,
                src_stages: x.stages,
            });
        }
        self.spare.prepare(&mut node.barrier, &kind);
        push_barrier(
            &mut node.barrier,
            r,
            &kind,
            cells,
            scopes,
            old_layout,
            new_layout,
        );
        Ok((rq, pos))
    }
}
