//! Declared unordered writes ([`Unordered`]): the pairs that need no order.

use super::*;
use crate::plan::Unordered;

impl Checker<'_> {
    /// Whether ops `x` (earlier) and `y` are writes of one execution and one queue that
    /// declared they need no order between them: unordered writes of the same kind by
    /// different passes, whose regions do not overlap where they are
    /// [`Unordered::Disjoint`]. Disjoint writes whose regions overlap are checked as the
    /// ordinary writes they are; whether [`Unordered::Atomic`] writes are atomics cannot be
    /// seen in a plan.
    pub(super) fn declared_unordered(&self, x: usize, y: usize) -> bool {
        let (xo, yo) = (&self.m.ops[x], &self.m.ops[y]);
        match (unordered(&xo.kind), unordered(&yo.kind)) {
            (Some(a), Some(b)) => {
                xo.exec == yo.exec && xo.queue == yo.queue && a.same_kind(&b) && !a.overlaps(&b)
            }
            _ => false,
        }
    }
}

fn unordered(kind: &OpKind) -> Option<Unordered> {
    match kind {
        OpKind::Access { unordered, .. } => *unordered,
        _ => None,
    }
}
