//! The state replay: each operation moves the state of a segment (image layout, whether the
//! contents are still meaningful, owning queue family, pending ownership transfer), and a
//! use the state does not allow is a violation.

use super::*;

impl Checker<'_> {
    /// Replays operation `o` on segment `g`: layouts, contents, ownership.
    pub(super) fn step(&mut self, o: usize, g: usize) {
        let m = self.m;
        let op = &m.ops[o];
        let exclusive = !m.concurrent[op.resource];
        let is_image = matches!(
            m.res_kinds[op.resource],
            crate::plan::ResourceKind::Image { .. }
        );
        // The host is no queue family: queue family ownership governs reads "performed by the
        // second queue family", so a host-only access (mapped memory) neither needs nor takes
        // ownership; its memory dependency is checked like any other.
        let host_only = op.stages == vk::PipelineStageFlags2::HOST.as_raw();
        let family = op.queue.filter(|_| !host_only).map(|q| m.families[q]);
        let mut c = self.cells[g].clone();
        if let Some(fresh) = self.fresh_for(o, &c) {
            c = fresh;
        }
        c.exec = Some(op.exec);
        let mut out: Vec<(Option<usize>, HazardKind, String)> = vec![];
        match &op.kind {
            OpKind::Initial { .. } => {}
            OpKind::Access {
                discard,
                present,
                leaves,
                ..
            } => {
                let needs = !(*discard && op.write);
                if is_image && op.layout != vk::ImageLayout::UNDEFINED && c.layout != op.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "expects layout {:?} but the image is in {:?}",
                            op.layout, c.layout
                        ),
                    ));
                }
                if let Some(r) = c.transit.take() {
                    if needs {
                        out.push((
                            Some(r),
                            HazardKind::Ownership,
                            "used between an ownership release and its acquire".into(),
                        ));
                    }
                }
                if needs {
                    if let Some((by, how)) = c.lost {
                        if c.defined {
                            out.push((
                                Some(by),
                                HazardKind::Layout,
                                format!("needs the old contents, but they were discarded by {how}"),
                            ));
                        }
                    }
                    if exclusive && c.defined && c.lost.is_none() {
                        if let (Some(own), Some(f)) = (c.owner, family) {
                            if own != f {
                                out.push((c.owner_by, HazardKind::Ownership, format!("queue family {f} uses the contents while family {own} owns them (no ownership transfer)")));
                            }
                        }
                    }
                }
                // Written memory is meaningful; a render pass's own layout transitions (a
                // write for ordering) keep whatever the contents were.
                if op.access & WRITES != 0 {
                    c.defined = true;
                    c.lost = None;
                }
                if let (Some(l), true) = (*leaves, is_image) {
                    c.layout = l;
                    c.layout_by = Some(o);
                }
                if !present && exclusive && family.is_some() {
                    c.owner = family;
                    c.owner_by = Some(o);
                }
            }
            OpKind::Transition { old, new } => {
                if *old != vk::ImageLayout::UNDEFINED && *old != c.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "the barrier's old layout {old:?} is not the current layout {:?}",
                            c.layout
                        ),
                    ));
                }
                if let Some(r) = c.transit.take() {
                    out.push((
                        Some(r),
                        HazardKind::Ownership,
                        "a layout transition between an ownership release and its acquire".into(),
                    ));
                }
                if *old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
                    c.lost = Some((o, "a layout transition from UNDEFINED"));
                } else if exclusive
                    && c.defined
                    && c.lost.is_none()
                    && c.owner.is_some()
                    && c.owner != family
                {
                    c.lost = Some((
                        o,
                        "a layout transition on a queue family that does not own the image",
                    ));
                }
                if *new == vk::ImageLayout::UNDEFINED || *new == vk::ImageLayout::PREINITIALIZED {
                    out.push((None, HazardKind::Layout, format!("transition to {new:?}")));
                }
                c.layout = *new;
                c.layout_by = Some(o);
                if exclusive {
                    c.owner = family;
                    c.owner_by = Some(o);
                }
            }
            OpKind::Release { src, old, .. } => {
                if let Some(r) = c.transit.take() {
                    out.push((
                        Some(r),
                        HazardKind::Ownership,
                        "released again before the earlier release was acquired".into(),
                    ));
                }
                if c.defined && c.lost.is_none() && c.owner.is_some_and(|own| own != *src) {
                    out.push((
                        c.owner_by,
                        HazardKind::Ownership,
                        format!(
                            "released by family {src}, which does not own it ({:?} does)",
                            c.owner
                        ),
                    ));
                }
                if is_image && *old != vk::ImageLayout::UNDEFINED && *old != c.layout {
                    out.push((
                        c.layout_by,
                        HazardKind::Layout,
                        format!(
                            "the release's old layout {old:?} is not the current layout {:?}",
                            c.layout
                        ),
                    ));
                }
                if is_image && *old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
                    c.lost = Some((o, "an ownership release from UNDEFINED"));
                }
                c.transit = Some(o);
            }
            OpKind::Acquire {
                src,
                dst,
                old,
                new,
                range,
                aspect,
            } => {
                // "The buffer range or image subresource range specified in an acquire
                // operation must match exactly that of a previous release operation", with the
                // same families and, for images, the same old and new layouts.
                match c.transit.take().map(|r| (r, &m.ops[r].kind)) {
                    Some((
                        r,
                        OpKind::Release {
                            src: s,
                            dst: d,
                            old: o2,
                            new: n2,
                            range: r2,
                            aspect: a2,
                        },
                    )) => {
                        if s != src || d != dst || o2 != old || n2 != new {
                            out.push((Some(r), HazardKind::Ownership, format!(
                                "a matching release: the acquire is {src} -> {dst}, {old:?} -> {new:?}, the release {s} -> {d}, {o2:?} -> {n2:?}"
                            )));
                        } else if r2 != range || a2 != aspect {
                            out.push((Some(r), HazardKind::Ownership, format!(
                                "a release of exactly the acquired range: the acquire covers {} {aspect:?}, the release {} {a2:?}",
                                range_desc(range),
                                range_desc(r2)
                            )));
                        }
                    }
                    _ => out.push((
                        None,
                        HazardKind::Ownership,
                        format!(
                            "a release before this acquire ({src} -> {dst}, {old:?} -> {new:?})"
                        ),
                    )),
                }
                if is_image {
                    c.layout = *new;
                    c.layout_by = Some(o);
                }
                c.owner = Some(*dst);
                c.owner_by = Some(o);
            }
            OpKind::External => {
                c.defined = false;
                c.lost = None;
                c.transit = None;
                c.owner = None;
                c.owner_by = None;
            }
        }
        self.cells[g] = c;
        if op.write && m.transient[op.resource] {
            self.clobber_aliases(o, g);
        }
        for (x, kind, msg) in out {
            self.report(x, o, g, kind, msg);
        }
    }
}
