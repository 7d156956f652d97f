//! The conflict relation: which pairs of passes must keep their program order.

use crate::plan::{PassDecl, PlanInput, ResourceKind, UseDecl};
use crate::range::SubRange;

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
    a.access.is_write()
        || b.access.is_write()
        || a.discard
        || b.discard
        || (image && a.access.layout != b.access.layout)
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

/// For each pass of `passes` (a program-ordered subset of a validated input's passes), the
/// earlier passes of `passes` it conflicts with, found through the resources they share
/// rather than by testing every pair: `f(j, i)` is called once for each conflicting `i`
/// before `j`, with `j` in order.
pub(super) fn for_each_conflict(
    input: &PlanInput,
    passes: &[usize],
    mut f: impl FnMut(usize, usize),
) {
    // Per resource, the earlier passes that use it; and the earlier pinned passes.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); input.resources.len()];
    let mut pinned_before: Vec<usize> = Vec::new();
    // `seen[i] == j + 1`: pass `i` was already checked against `j`.
    let mut seen: Vec<usize> = vec![0; input.passes.len()];
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
        } else {
            pinned_before.iter().for_each(|&i| check(i));
            for u in &pj.uses {
                users[u.resource].iter().for_each(|&i| check(i));
            }
        }
        if pinned(pj) {
            pinned_before.push(j);
        }
        for u in &pj.uses {
            let list = &mut users[u.resource];
            if list.last() != Some(&j) {
                list.push(j);
            }
        }
    }
}
