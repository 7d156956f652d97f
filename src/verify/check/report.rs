//! Violations: the outcome of each ordering check, grouped per pair of operations and kind,
//! and the words that describe stages, accesses, queues and ranges in them.

use super::*;

impl Checker<'_> {
    /// Records the outcome of checking that `x` (earlier) is ordered before `y` on segment `g`.
    pub(super) fn pair_result(
        &mut self,
        x: usize,
        y: usize,
        g: usize,
        exec_ok: bool,
        mem_ok: bool,
    ) {
        let m = self.m;
        let (xo, yo) = (&m.ops[x], &m.ops[y]);
        let kind = hazard(xo, yo);
        // Two transients placed on shared memory.
        let alias = if xo.resource != yo.resource {
            format!(
                " (transients `{}` and `{}` share memory)",
                m.res_names[xo.resource], m.res_names[yo.resource]
            )
        } else {
            String::new()
        };
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
            self.report(Some(x), y, g, kind, msg + &alias);
        } else if !mem_ok {
            let msg = format!(
                "memory dependency: writes {:?} at {} are not made available and visible to {}",
                vk::AccessFlags2::from_raw(xo.access & WRITES),
                stage_desc(xo),
                access_desc(yo)
            );
            self.report(Some(x), y, g, kind, msg + &alias);
        }
        if let (Some(px), Some(py)) = (xo.is_pass(), yo.is_pass()) {
            if px > py && alias.is_empty() {
                self.report(Some(x), y, g, HazardKind::Order, "runs after a pass inserted later that it conflicts with (program order reversed)".into());
            }
        }
    }

    pub(super) fn report(
        &mut self,
        x: Option<usize>,
        y: usize,
        g: usize,
        kind: HazardKind,
        missing: String,
    ) {
        self.found
            .entry((x.unwrap_or(usize::MAX), y, kind, missing))
            .or_default()
            .push(g);
    }

    pub(super) fn finish(self) -> Vec<Violation> {
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

pub(super) fn range_desc(r: &crate::range::SubRange) -> String {
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
