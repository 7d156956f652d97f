//! The state replay: each operation moves the state of a segment (image layout, whether the
//! contents are still meaningful, owning queue family, pending ownership transfer), and a
//! use the state does not allow is a violation.

use super::*;

/// A use the state does not allow: the operation that put the segment in that state (if one
/// did), the hazard, and what is missing.
type Finding = (Option<usize>, HazardKind, String);

/// Operation `o` replayed on one segment: what the rules need to know of it, the segment's
/// state it moves, and what it finds.
struct Step<'m> {
    m: &'m Model,
    o: usize,
    op: &'m Op,
    /// The resource is `EXCLUSIVE`: queue family ownership applies.
    exclusive: bool,
    is_image: bool,
    /// The queue family that performs it (`None`: no verified queue, or the host alone).
    family: Option<u32>,
    cell: Cell,
    found: Vec<Finding>,
}

impl Checker<'_> {
    /// Replays operation `o` on segment `g`: layouts, contents, ownership.
    pub(super) fn step(&mut self, o: usize, g: usize) {
        let m = self.m;
        let op = &m.ops[o];
        let mut cell = self.cells[g].clone();
        if let Some(fresh) = self.fresh_for(o, &cell) {
            cell = fresh;
        }
        cell.exec = Some(op.exec);
        let mut step = Step::new(m, o, cell);
        match &op.kind {
            OpKind::Initial { .. } => {}
            OpKind::Access {
                discard,
                present,
                leaves,
                ..
            } => step.access(*discard, *present, *leaves),
            OpKind::Transition { old, new } => step.transition(*old, *new),
            OpKind::Release { src, old, .. } => step.release(*src, *old),
            OpKind::Acquire { dst, new, .. } => step.acquire(&m.ops, *dst, *new),
            OpKind::External => step.external(),
        }
        self.cells[g] = step.cell;
        if op.write && m.transient[op.resource] {
            self.clobber_aliases(o, g);
        }
        for (x, kind, msg) in step.found {
            self.report(x, o, g, kind, msg);
        }
    }
}

impl<'m> Step<'m> {
    fn new(m: &'m Model, o: usize, cell: Cell) -> Self {
        let op = &m.ops[o];
        // The host is no queue family: queue family ownership governs reads "performed by the
        // second queue family", so a host-only access (mapped memory) neither needs nor takes
        // ownership; its memory dependency is checked like any other.
        let host_only = op.stages == vk::PipelineStageFlags2::HOST.as_raw();
        Step {
            m,
            o,
            op,
            exclusive: !m.concurrent[op.resource],
            is_image: matches!(
                m.res_kinds[op.resource],
                crate::plan::ResourceKind::Image { .. }
            ),
            family: op.queue.filter(|_| !host_only).map(|q| m.families[q]),
            cell,
            found: vec![],
        }
    }

    /// A pass's use. It finds the image in the layout it expects and, unless it overwrites
    /// everything, contents it can use: no ownership transfer under way, not discarded, owned
    /// by its family. Then its writes define the contents, an attachment of a `VkRenderPass`
    /// is left in its `finalLayout`, and (but for the presentation engine) its family owns
    /// the segment.
    fn access(&mut self, discard: bool, present: bool, leaves: Option<vk::ImageLayout>) {
        let (o, op) = (self.o, self.op);
        let needs_contents = !(discard && op.write);
        let c = &mut self.cell;
        if self.is_image && op.layout != vk::ImageLayout::UNDEFINED && c.layout != op.layout {
            self.found.push((
                c.layout_by,
                HazardKind::Layout,
                format!(
                    "expects layout {:?} but the image is in {:?}",
                    op.layout, c.layout
                ),
            ));
        }
        if let Some(r) = c.transit.take() {
            if needs_contents {
                self.found.push((
                    Some(r),
                    HazardKind::Ownership,
                    "used between an ownership release and its acquire".into(),
                ));
            }
        }
        if needs_contents {
            self.check_contents();
        }
        let c = &mut self.cell;
        // Written memory is meaningful; a render pass's own layout transitions (a
        // write for ordering) keep whatever the contents were.
        if op.access & WRITES != 0 {
            c.defined = true;
            c.lost = None;
        }
        if let (Some(l), true) = (leaves, self.is_image) {
            c.layout = l;
            c.layout_by = Some(o);
        }
        if !present && self.exclusive && self.family.is_some() {
            c.owner = self.family;
            c.owner_by = Some(o);
        }
    }

    /// With `maintenance9`, whether family `f` implicitly acquiring contents family `own`
    /// owns keeps them ([`Model::kept_without_transfer`]).
    fn kept(&self, own: u32, f: u32) -> bool {
        self.m
            .kept_without_transfer(self.op.exec, self.op.resource, own, f)
    }

    /// Contents a use needs: not discarded by a synchronization operation since they were
    /// written, and, for an `EXCLUSIVE` resource, owned by the use's queue family.
    fn check_contents(&mut self) {
        let c = &self.cell;
        if let Some((by, how)) = c.lost {
            if c.defined {
                self.found.push((
                    Some(by),
                    HazardKind::Layout,
                    format!("needs the old contents, but they were discarded by {how}"),
                ));
            }
        }
        if self.exclusive && c.defined && c.lost.is_none() {
            if let (Some(own), Some(f)) = (c.owner, self.family) {
                if own != f && !self.kept(own, f) {
                    self.found.push((c.owner_by, HazardKind::Ownership, format!("queue family {f} uses the contents while family {own} owns them (no ownership transfer)")));
                }
            }
        }
    }

    /// A layout transition. Its old layout is the current one or `UNDEFINED` (which discards
    /// the contents), and no ownership transfer is under way; on a family that does not own
    /// an `EXCLUSIVE` image it discards the contents too. The image is then in the new layout,
    /// owned by the transition's family.
    fn transition(&mut self, old: vk::ImageLayout, new: vk::ImageLayout) {
        let o = self.o;
        let kept =
            matches!((self.cell.owner, self.family), (Some(own), Some(f)) if self.kept(own, f));
        let c = &mut self.cell;
        if old != vk::ImageLayout::UNDEFINED && old != c.layout {
            self.found.push((
                c.layout_by,
                HazardKind::Layout,
                format!(
                    "the barrier's old layout {old:?} is not the current layout {:?}",
                    c.layout
                ),
            ));
        }
        if let Some(r) = c.transit.take() {
            self.found.push((
                Some(r),
                HazardKind::Ownership,
                "a layout transition between an ownership release and its acquire".into(),
            ));
        }
        if old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
            c.lost = Some((o, "a layout transition from UNDEFINED"));
        } else if self.exclusive
            && c.defined
            && c.lost.is_none()
            && c.owner.is_some()
            && c.owner != self.family
            && !kept
        {
            c.lost = Some((
                o,
                "a layout transition on a queue family that does not own the image",
            ));
        }
        if new == vk::ImageLayout::UNDEFINED || new == vk::ImageLayout::PREINITIALIZED {
            self.found
                .push((None, HazardKind::Layout, format!("transition to {new:?}")));
        }
        c.layout = new;
        c.layout_by = Some(o);
        if self.exclusive {
            c.owner = self.family;
            c.owner_by = Some(o);
        }
    }

    /// An ownership release by family `src`. No other transfer is under way, `src` owns the
    /// contents, and the old layout is the current one or `UNDEFINED` (which discards the
    /// contents). The segment is then in transit until its acquire.
    fn release(&mut self, src: u32, old: vk::ImageLayout) {
        let o = self.o;
        let c = &mut self.cell;
        if let Some(r) = c.transit.take() {
            self.found.push((
                Some(r),
                HazardKind::Ownership,
                "released again before the earlier release was acquired".into(),
            ));
        }
        if c.defined && c.lost.is_none() && c.owner.is_some_and(|own| own != src) {
            self.found.push((
                c.owner_by,
                HazardKind::Ownership,
                format!(
                    "released by family {src}, which does not own it ({:?} does)",
                    c.owner
                ),
            ));
        }
        if self.is_image && old != vk::ImageLayout::UNDEFINED && old != c.layout {
            self.found.push((
                c.layout_by,
                HazardKind::Layout,
                format!(
                    "the release's old layout {old:?} is not the current layout {:?}",
                    c.layout
                ),
            ));
        }
        if self.is_image && old == vk::ImageLayout::UNDEFINED && c.defined && c.lost.is_none() {
            c.lost = Some((o, "an ownership release from UNDEFINED"));
        }
        c.transit = Some(o);
    }

    /// An ownership acquire by family `dst`: it completes the release in transit, which must
    /// match it. The image is then in layout `new`, owned by `dst`.
    fn acquire(&mut self, ops: &[Op], dst: u32, new: vk::ImageLayout) {
        let pending = self.cell.transit.take().map(|r| (r, &ops[r].kind));
        if let Some(finding) = release_mismatch(&self.op.kind, pending) {
            self.found.push(finding);
        }
        let c = &mut self.cell;
        if self.is_image {
            c.layout = new;
            c.layout_by = Some(self.o);
        }
        c.owner = Some(dst);
        c.owner_by = Some(self.o);
    }

    /// The presentation engine hands a swapchain image back: its contents and ownership are
    /// gone.
    fn external(&mut self) {
        let c = &mut self.cell;
        c.defined = false;
        c.lost = None;
        c.transit = None;
        c.owner = None;
        c.owner_by = None;
    }
}

/// What an acquire finds wrong with the release it completes (`pending`: that release's op
/// and kind), if anything. "The buffer range or image subresource range specified in an
/// acquire operation must match exactly that of a previous release operation", with the same
/// families and, for images, the same old and new layouts.
fn release_mismatch(acquire: &OpKind, pending: Option<(usize, &OpKind)>) -> Option<Finding> {
    let OpKind::Acquire {
        src,
        dst,
        old,
        new,
        range,
        aspect,
    } = acquire
    else {
        return None;
    };
    let Some((
        r,
        OpKind::Release {
            src: s,
            dst: d,
            old: o2,
            new: n2,
            range: r2,
            aspect: a2,
        },
    )) = pending
    else {
        return Some((
            None,
            HazardKind::Ownership,
            format!("a release before this acquire ({src} -> {dst}, {old:?} -> {new:?})"),
        ));
    };
    if s != src || d != dst || o2 != old || n2 != new {
        Some((Some(r), HazardKind::Ownership, format!(
            "a matching release: the acquire is {src} -> {dst}, {old:?} -> {new:?}, the release {s} -> {d}, {o2:?} -> {n2:?}"
        )))
    } else if r2 != range || a2 != aspect {
        Some((Some(r), HazardKind::Ownership, format!(
            "a release of exactly the acquired range: the acquire covers {} {aspect:?}, the release {} {a2:?}",
            range_desc(range),
            range_desc(r2)
        )))
    } else {
        None
    }
}

impl Checker<'_> {
    /// Whether pass access `y` on segment `g` is a queue family taking the contents of an
    /// `EXCLUSIVE` resource over from another family without an ownership transfer, which
    /// `maintenance9` allows where it keeps them ([`Model::kept_without_transfer`]).
    pub(super) fn takes_over(&self, y: usize, g: usize) -> bool {
        let (m, op) = (self.m, &self.m.ops[y]);
        let host_only = op.stages == vk::PipelineStageFlags2::HOST.as_raw();
        let (OpKind::Access { .. }, Some(q)) = (&op.kind, op.queue) else {
            return false;
        };
        let c = &self.cells[g];
        let family = m.families[q];
        !m.concurrent[op.resource]
            && !host_only
            && c.defined
            && c.lost.is_none()
            && c.owner.is_some_and(|own| {
                own != family && m.kept_without_transfer(op.exec, op.resource, own, family)
            })
    }
}
