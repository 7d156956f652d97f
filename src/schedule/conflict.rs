//! The conflict relation: which pairs of passes must keep their program order.

use crate::plan::{PassDecl, PlanInput, ResourceKind, UseDecl};
use crate::range::SubRange;

impl SubRange {
    /// Whether this range of a resource holds all of `inner`.
    pub(super) fn contains(&self, inner: &SubRange) -> bool {
        match (self, inner) {
            (SubRange::Image(o), SubRange::Image(i)) => {
                o.base_mip <= i.base_mip
                    && i.base_mip + i.mip_count <= o.base_mip + o.mip_count
                    && o.base_layer <= i.base_layer
                    && i.base_layer + i.layer_count <= o.base_layer + o.layer_count
            }
            (SubRange::Buffer(o), SubRange::Buffer(i)) => {
                o.offset <= i.offset && i.offset + i.size <= o.offset + o.size
            }
            _ => false,
        }
    }
}

/// Whether the ranges of two uses of one resource overlap.
pub(super) fn overlap(input: &PlanInput, a: &UseDecl, b: &UseDecl) -> bool {
    let whole = input.resources[a.resource].kind.whole();
    match (a.range.unwrap_or(whole), b.range.unwrap_or(whole)) {
        (SubRange::Image(x), SubRange::Image(y)) => x.overlaps(&y),
        (SubRange::Buffer(x), SubRange::Buffer(y)) => x.overlaps(&y),
        // `validate` refuses mismatched kinds; were one to get here, keep the order.
        _ => true,
    }
}

/// Whether a pass stays in place relative to every other pass: it waits on or signals a
/// binary semaphore (which orders work the planner does not see), presents (no stage of its
/// own: the present chains from what came before it on its queue), or declares nothing (what
/// it does is unknown).
pub(super) fn pinned(pass: &PassDecl) -> bool {
    !pass.waits.is_empty()
        || !pass.signals.is_empty()
        || pass.uses.is_empty()
        || pass.uses.iter().any(|u| u.access.stages.is_empty())
}

/// Whether use `a` of pass `pa` and use `b` of pass `pb` must keep their order: they overlap
/// on one resource and one writes (discards included), or they read an image in two layouts,
/// or they run on two queue families while the resource is `EXCLUSIVE`.
fn uses_conflict(
    input: &PlanInput,
    pa: &PassDecl,
    a: &UseDecl,
    pb: &PassDecl,
    b: &UseDecl,
) -> bool {
    if a.resource != b.resource || !overlap(input, a, b) {
        return false;
    }
    let res = &input.resources[a.resource];
    let image = matches!(res.kind, ResourceKind::Image { .. });
    let family = |p: &PassDecl| input.queues[p.queue].family;
    // The layouts on each use's plane (a use of one aspect of a depth/stencil image takes
    // that aspect's own).
    let (a, b) = (a.on_plane(&res.kind), b.on_plane(&res.kind));
    a.writes()
        || b.writes()
        || a.discards()
        || b.discards()
        || (image
            && (a.layout_before() != b.layout_before() || a.layout_after() != b.layout_after()))
        || (!res.concurrent && family(pa) != family(pb))
}

/// Whether passes `a` and `b` of a validated input must keep their program order.
pub(super) fn conflict(input: &PlanInput, a: usize, b: usize) -> bool {
    let (pa, pb) = (&input.passes[a], &input.passes[b]);
    pinned(pa)
        || pinned(pb)
        || pa
            .uses
            .iter()
            .any(|u| pb.uses.iter().any(|v| uses_conflict(input, pa, u, pb, v)))
}

/// Calls `f(j, i)` for conflicting passes `i` before `j` of `passes` (a program-ordered
/// subset of a validated input's passes), with `j` in order: enough of the conflicting pairs
/// that every conflicting pair is joined by a chain of reported ones, each forward in program
/// order. So levels computed from the reported pairs order every conflicting pair.
///
/// Candidates come through the resources the passes share, not by testing every pair, and a
/// pass drops out of a resource's candidates once a later pass writes all it used of it: a
/// later pass that conflicts with it there overlaps that write, so it conflicts with the
/// writer, which conflicts with the pass. Likewise only the last pinned pass is a candidate
/// for the passes after it.
pub(super) fn for_each_conflict(
    input: &PlanInput,
    passes: &[usize],
    mut f: impl FnMut(usize, usize),
) {
    // Per resource, the earlier passes that may conflict through it; the last pinned pass.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); input.resources.len()];
    let mut last_pinned: Option<usize> = None;
    // `seen[i] == j + 1`: pass `i` was already checked against `j`.
    let mut seen: Vec<usize> = vec![0; input.passes.len()];
    let range_of = |u: &UseDecl| u.range.unwrap_or(input.resources[u.resource].kind.whole());
    for (jj, &j) in passes.iter().enumerate() {
        let pj = &input.passes[j];
        let mut check = |i: usize| {
            if seen[i] != j + 1 {
                seen[i] = j + 1;
                if conflict(input, i, j) {
                    f(j, i);
                }
            }
        };
        if pinned(pj) {
            passes[..jj].iter().for_each(|&i| check(i));
            last_pinned = Some(j);
        } else {
            last_pinned.iter().for_each(|&i| check(i));
            for u in &pj.uses {
                users[u.resource].iter().for_each(|&i| check(i));
            }
        }
        for w in pj.uses.iter().filter(|u| u.writes() || u.discards()) {
            let written = range_of(w);
            users[w.resource].retain(|&i| {
                !input.passes[i]
                    .uses
                    .iter()
                    .filter(|u| u.resource == w.resource)
                    .all(|u| written.contains(&range_of(u)))
            });
        }
        for u in &pj.uses {
            let list = &mut users[u.resource];
            if list.last() != Some(&j) {
                list.push(j);
            }
        }
    }
}
