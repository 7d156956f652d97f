//! One segment of tracked state: reading it from the declarations, what an access must be
//! ordered after, and moving it past an access.

use super::*;

impl WState {
    pub(super) fn from_recorded(s: &SegmentState<usize>) -> Self {
        let rec = |r: &Recorded<usize>| Rec {
            queue: r.queue,
            // `None` cannot come from an executed graph; treat it as already complete.
            at: At::Value(r.value.unwrap_or(0)),
            stages: r.stages,
            access: r.access,
            binary_wait: None,
        };
        Self {
            layout: s.layout,
            defined: s.defined,
            owner: s.owner,
            write: s.write.as_ref().map(rec),
            reads: s.reads.iter().map(rec).collect(),
            visible: SmallVec::from_slice(&s.visible),
            group: None,
        }
    }
}

/// What a write (or a transition, or a release) must be ordered after: the reads since the
/// last write, which this graph already ordered after that write, or the write itself. A write
/// left by an earlier graph is named as well, so that each plan is correct on its own terms,
/// without relying on the barriers of a plan it cannot see.
pub(super) fn write_priors(st: &WState) -> SmallVec<[Rec; 2]> {
    let mut priors = SmallVec::new();
    write_priors_into(st, &mut priors);
    priors
}

/// [`write_priors`], appended to `priors` (empty), which the caller keeps in place.
#[inline]
pub(super) fn write_priors_into(st: &WState, priors: &mut impl Extend<Rec>) {
    priors.extend(st.reads.iter().copied());
    match st.write {
        Some(w) if st.reads.is_empty() || matches!(w.at, At::Value(_)) => priors.extend([w]),
        _ => {}
    }
}

/// Moves a segment's state past one access.
/// Inlined into its caller: ten arguments cost more to pass than the body to copy.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn apply_access(
    st: &mut WState,
    q: usize,
    p: Pos,
    a: Access,
    eff: vk::PipelineStageFlags2,
    write_like: bool,
    discard: bool,
    concurrent: bool,
    family: u32,
    layout: vk::ImageLayout,
) {
    let me = Rec {
        queue: q,
        at: At::Node(p),
        stages: eff,
        access: a.access,
        binary_wait: None,
    };
    let was_defined = st.defined;
    if write_like {
        st.write = Some(Rec {
            access: a.write_bits(),
            ..me
        });
        st.reads.clear();
        st.visible.clear();
        if !a.is_write() {
            // A transition or transfer: a write that this read already sees.
            st.reads.push(me);
            st.visible.push(seen_by(q, eff, a.access));
        }
    } else {
        match st.reads.iter_mut().find(|x| x.queue == q) {
            Some(x) => {
                x.at = x.at.max(me.at);
                x.stages |= eff;
                x.access |= a.access;
            }
            None => st.reads.push(me),
        }
        // Visibility holds per (stage, access) pair: merging two entries into the union of
        // their stages and of their accesses would claim pairs no barrier made visible. Merge
        // only entries that share their stages or their accesses.
        match st
            .visible
            .iter_mut()
            .find(|v| v.queue == q && (v.stages == eff || v.access == a.access))
        {
            Some(v) => {
                v.stages |= eff;
                v.access |= a.access;
            }
            None => st.visible.push(seen_by(q, eff, a.access)),
        }
    }
    st.layout = layout;
    st.defined = a.is_write() || (was_defined && !discard);
    st.owner = if concurrent {
        None
    } else if is_host_only(&a) {
        st.owner
    } else {
        Some(family)
    };
}

/// Whether only the host performs the access (mapped memory read or written by the app).
pub(super) fn is_host_only(a: &Access) -> bool {
    a.stages == vk::PipelineStageFlags2::HOST
}

pub(super) fn covered(
    visible: &[Visible<usize>],
    q: usize,
    stages: vk::PipelineStageFlags2,
    access: vk::AccessFlags2,
) -> bool {
    visible
        .iter()
        .any(|v| v.queue == q && v.stages.contains(stages) && v.access.contains(access))
}

/// The write seen on `queue` by `access` in `stages`.
fn seen_by(
    queue: usize,
    stages: vk::PipelineStageFlags2,
    access: vk::AccessFlags2,
) -> Visible<usize> {
    Visible {
        queue,
        stages,
        access,
    }
}
