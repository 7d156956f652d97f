//! The release half of an ownership transfer: a release node on the queue of the most recent
//! access by the owning family, which the acquiring pass waits for.

use super::*;

impl Planner<'_> {
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
        let node = release_node(&mut self.nodes[rq], pos);
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
