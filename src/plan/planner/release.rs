//! Ownership transfers: the acquire before the use that needs the contents, and the release
//! node on the queue of the most recent access by the owning family, which the acquiring pass
//! waits for.

use super::seg_use::SegAccess;
use super::*;

impl Planner<'_> {
    /// An ownership transfer of `cells` from family `from` to the use's: a release on the
    /// queue of the most recent access, which the use's node waits for. Returns the scopes of
    /// the acquire barrier.
    pub(super) fn acquire(
        &mut self,
        s: &SegAccess,
        from: u32,
        cells: std::ops::Range<u64>,
        st: &WState,
        node: &mut Node,
    ) -> Result<Scopes> {
        let layouts = (s.needs.old_layout, s.needs.new_layout);
        let (rq, rpos, released_at) =
            self.add_release(s.r, cells, st, (from, s.family), layouts, s.pass)?;
        // Without VK_KHR_maintenance8's USE_ALL_STAGES dependency flag, a release's second
        // scope and an acquire's first scope do not apply: only an ALL_COMMANDS semaphore
        // signal orders the release before the signal, and only an ALL_COMMANDS wait orders
        // the acquire after the wait. The barriers' own stage masks still chain, for
        // implementations that read them. With the flag (both queues record it), they apply:
        // the signal covers the release's stages, and the wait is at the use's.
        // A host-only use (its image changes layout on this queue) has no stage a wait
        // can guard that its acquire's first scope holds: it keeps the all-commands wait.
        let all_stages = self.input.queues[rq].transfers_use_all_stages
            && self.input.queues[s.queue].transfers_use_all_stages;
        let caps = self.input.queues[s.queue].caps;
        let (wait_stages, src_stages) = match semaphore_wait_stages(s.eff, caps) {
            Some(wait) if all_stages => (wait, released_at),
            _ => {
                let all = vk::PipelineStageFlags2::ALL_COMMANDS;
                (all, all)
            }
        };
        node.deps
            .push(Dep::new(rq, At::Node(rpos), wait_stages, src_stages));
        Ok(Scopes {
            src_stages: s.eff,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: s.eff,
            dst_access: s.u.access.access,
            families: Some((from, s.family)),
        })
    }

    /// Adds (or extends) the release node for an ownership transfer of `cells` of resource
    /// `r` between `families` (from, to), changing `layouts` (old, new), on the queue of its
    /// most recent access. Returns (queue, position, the release barrier's stages).
    pub(super) fn add_release(
        &mut self,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &WState,
        families: (u32, u32),
        (old_layout, new_layout): (vk::ImageLayout, vk::ImageLayout),
        pass: usize,
    ) -> Result<(usize, Pos, vk::PipelineStageFlags2)> {
        let (rq, pos) = self.release_site(r, st, families.0, pass)?;
        let (src_stages, src_access, deps) = self.release_first_scope(rq, st);
        let scopes = Scopes {
            src_stages,
            src_access,
            dst_stages: src_stages,
            dst_access: vk::AccessFlags2::NONE,
            families: Some(families),
        };
        let kind = self.input.resources[r].kind;
        let deps: SmallVec<[Dep; 2]> = (deps.iter())
            .map(|x| Dep::new(x.queue, x.at, src_stages, self.signal_stages(x, x.stages)))
            .collect();
        // The release names the acquiring pass and the releasing queue's latest access.
        let cause = self.cause((pass, rq), &[], &[], Some((families.0, st)));
        let node = release_node(&mut self.nodes[rq], pos);
        node.deps.extend(deps);
        self.spare.prepare(&mut node.barrier, &kind);
        push_barrier(
            &mut node.barrier,
            r,
            &kind,
            cells,
            scopes,
            (old_layout, new_layout),
            cause,
        );
        Ok((rq, pos, src_stages))
    }

    /// Where the release of resource `r` (in state `st`) by family `from` goes: (queue,
    /// position), right after the latest access by that family.
    fn release_site(&self, r: usize, st: &WState, from: u32, pass: usize) -> Result<(usize, Pos)> {
        // The latest access by the owning family (a host access keeps the owner, and may be
        // later, on another family's queue). Timeline values of different queues do not
        // compare: among earlier graphs' accesses the lowest queue index is taken, so the plan
        // depends only on each queue's own order of values (what `Rebinder` relies on).
        let latest = st
            .write
            .iter()
            .chain(&st.reads)
            .filter(|x| self.input.queues[x.queue].family == from)
            .max_by_key(|x| match x.at {
                At::Node(p) => (true, Some(p), std::cmp::Reverse(0)),
                At::Value(_) => (false, None, std::cmp::Reverse(x.queue)),
            });
        match latest {
            Some(&Rec {
                queue,
                at: At::Node(p),
                ..
            }) => Ok((queue, p + 1)),
            Some(&Rec {
                queue,
                at: At::Value(_),
                ..
            }) => Ok((queue, PRE_GRAPH_RELEASE)),
            None => {
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
                Ok((q, PRE_GRAPH_RELEASE))
            }
        }
    }

    /// The first scope (stages, accesses) of a release on queue `rq` of a segment in state
    /// `st`, and the accesses on other queues it must wait for.
    fn release_first_scope(
        &self,
        rq: usize,
        st: &WState,
    ) -> (vk::PipelineStageFlags2, vk::AccessFlags2, Vec<Rec>) {
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
                other = (st.write.iter().chain(&st.reads))
                    .fold(vk::PipelineStageFlags2::NONE, |s, x| s | x.stages);
            }
            src_stages = on_queue(other, self.input.queues[rq].caps);
        }
        (src_stages, src_access, deps)
    }
}

/// The release node at `pos` among a queue's `nodes` (sorted by position), added if there is
/// none yet.
fn release_node(nodes: &mut Vec<(Pos, Node)>, pos: Pos) -> &mut Node {
    let at = nodes.partition_point(|(p, _)| *p < pos);
    if nodes.get(at).is_none_or(|(p, _)| *p != pos) {
        let node = Node {
            kind: NodeKind::Release,
            barrier: BarrierCmd::default(),
            deps: Vec::new(),
            whys: 0..0,
        };
        nodes.insert(at, (pos, node));
    }
    &mut nodes[at].1
}

/// The stages a semaphore wait before a use at `stages` waits at on a queue with `caps`: the
/// use's device stages (HOST is no stage a wait can guard); `None` where none is left.
fn semaphore_wait_stages(
    stages: vk::PipelineStageFlags2,
    caps: vk::QueueFlags,
) -> Option<vk::PipelineStageFlags2> {
    let device = stages & !vk::PipelineStageFlags2::HOST;
    (!device.is_empty()).then(|| on_queue(device, caps))
}
