//! [`FrameDecls`]: one frame's declarations, flat, as its passes make them, with each
//! resource under its planner index ([`ResourceIndex`]).

use crate::access::Access;
use crate::fx::FxBuildHasher;
use crate::plan::{
    BinarySignalDecl, BinaryWaitDecl, PassDecl, RenderPassLayouts, Unordered, UseDecl,
};
use crate::range::SubRange;
use crate::resource::Resource;
use ash::vk;
use std::collections::HashMap;

/// What every pass of a frame declared, in a few flat lists: the uses of all passes in one
/// list, each pass a range of it, with resources and queues already under their planner
/// indices ([`ResourceIndex`]). A use is packed into plain words ([`PackedUse`]), so
/// that a frame's uses compare as one block of memory; the rarer parts of a use (a range, a
/// render pass's layouts, an unordered group) are listed apart, by use.
///
/// A kept frame keeps the declarations its plan answers. The next frame's `finish()` tells
/// whether it declares the same by comparing the lists ([`FrameDecls::same_as`]); the
/// planner's [`crate::plan::PlanInput`] is built from them ([`FrameDecls::pass`]) only when
/// the frame must be planned, or its states compared.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameDecls {
    /// Per pass, in program order: its queue and where its entries end in the lists below.
    pub(crate) passes: Vec<PassSpan>,
    pub(crate) uses: Vec<PackedUse>,
    /// The uses that have more than a resource, an access, an aspect and a discard: by use
    /// index, in order.
    pub(crate) extras: Vec<(u32, UseExtras)>,
    pub(crate) waits: Vec<WaitDecl>,
    /// The resources each wait guards, each wait a range.
    pub(crate) guards: Vec<usize>,
    pub(crate) signals: Vec<BinarySignalDecl>,
}

/// One pass in [`FrameDecls`]: its queue's planner index, and the ends of its ranges in the
/// lists (each starts where the previous pass's ends), by the indices below. Plain words, so
/// that a frame's passes compare as memory.
pub(crate) type PassSpan = [u32; 4];
const QUEUE: usize = 0;
const USES: usize = 1;
const WAITS: usize = 2;
const SIGNALS: usize = 3;

/// One binary wait in [`FrameDecls`]: its guards end at `guards` in the guard list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitDecl {
    pub(crate) semaphore: vk::Semaphore,
    pub(crate) stages: Option<vk::PipelineStageFlags2>,
    guards: u32,
}

impl WaitDecl {
    pub(crate) fn new(
        semaphore: vk::Semaphore,
        stages: Option<vk::PipelineStageFlags2>,
        guards_end: usize,
    ) -> Self {
        WaitDecl {
            semaphore,
            stages,
            guards: guards_end as u32,
        }
    }
}

impl FrameDecls {
    /// Empties the lists, keeping their capacity.
    pub(crate) fn clear(&mut self) {
        self.passes.clear();
        self.uses.clear();
        self.extras.clear();
        self.waits.clear();
        self.guards.clear();
        self.signals.clear();
    }

    /// Closes the pass whose entries were pushed since the last one closed: it runs on the
    /// queue of planner index `queue`.
    pub(crate) fn end_pass(&mut self, queue: usize) {
        let ends = [self.uses.len(), self.waits.len(), self.signals.len()];
        let [uses, waits, signals] = ends.map(|end| end as u32);
        self.passes.push([queue as u32, uses, waits, signals]);
    }

    /// Whether `new` declares what these do, binary semaphores aside (they are mapped one to
    /// one: [`FrameDecls::semaphore_pairs`]). Flat lists, compared in one go each.
    pub(crate) fn same_as(&self, new: &FrameDecls) -> bool {
        // Flattened, each list is one `memcmp`.
        self.passes.as_flattened() == new.passes.as_flattened()
            && self.uses.as_flattened() == new.uses.as_flattened()
            && self.extras == new.extras
            && self.guards == new.guards
            && self.waits.len() == new.waits.len()
            && (self.waits.iter().zip(&new.waits))
                .all(|(a, b)| a.stages == b.stages && a.guards == b.guards)
            && self.signals.len() == new.signals.len()
            && (self.signals.iter().zip(&new.signals)).all(|(a, b)| a.stages == b.stages)
    }

    /// Each binary semaphore here with the one `new` has in its place (`new` is
    /// [`FrameDecls::same_as`] these).
    pub(crate) fn semaphore_pairs<'s>(
        &'s self,
        new: &'s FrameDecls,
    ) -> impl Iterator<Item = (vk::Semaphore, vk::Semaphore)> + 's {
        let waits = (self.waits.iter().zip(&new.waits)).map(|(a, b)| (a.semaphore, b.semaphore));
        let signals =
            (self.signals.iter().zip(&new.signals)).map(|(a, b)| (a.semaphore, b.semaphore));
        waits.chain(signals)
    }

    /// Pass `p`'s declarations: its queue, uses, waits (with their guards) and signals.
    pub(crate) fn pass(&self, p: usize) -> PassView<'_> {
        let start = match p {
            0 => [0; 4],
            _ => self.passes[p - 1],
        };
        let end = self.passes[p];
        let range = |a: u32, b: u32| a as usize..b as usize;
        let waits = &self.waits[range(start[WAITS], end[WAITS])];
        let guards_start = match start[WAITS] {
            0 => 0,
            w => self.waits[w as usize - 1].guards,
        };
        let first_extra = self.extras.partition_point(|&(u, _)| u < start[USES]);
        PassView {
            queue: end[QUEUE] as usize,
            first_use: start[USES],
            uses: &self.uses[range(start[USES], end[USES])],
            extras: &self.extras[first_extra..],
            waits,
            guards: &self.guards[guards_start as usize..],
            guards_start: guards_start as usize,
            signals: &self.signals[range(start[SIGNALS], end[SIGNALS])],
        }
    }

    /// Writes each pass's binary semaphores into `passes` (the declarations of a plan these
    /// are [`FrameDecls::same_as`]), where they differ.
    pub(crate) fn write_semaphores(&self, passes: &mut [PassDecl]) {
        if self.waits.is_empty() && self.signals.is_empty() {
            return;
        }
        for (p, pd) in passes.iter_mut().enumerate() {
            let view = self.pass(p);
            for (w, mine) in pd.waits.iter_mut().zip(view.waits) {
                w.semaphore = mine.semaphore;
            }
            for (s, mine) in pd.signals.iter_mut().zip(view.signals) {
                s.semaphore = mine.semaphore;
            }
        }
    }
}

/// One pass's part of [`FrameDecls`].
pub(crate) struct PassView<'d> {
    pub(crate) queue: usize,
    /// The index of the pass's first use in the frame's list.
    first_use: u32,
    uses: &'d [PackedUse],
    /// The extras from the pass's first use on.
    extras: &'d [(u32, UseExtras)],
    waits: &'d [WaitDecl],
    /// The guard list from the pass's first wait's guards on.
    guards: &'d [usize],
    guards_start: usize,
    pub(crate) signals: &'d [BinarySignalDecl],
}

impl PassView<'_> {
    /// The pass's uses as the planner declares them.
    pub(crate) fn use_decls(&self) -> impl Iterator<Item = UseDecl> + '_ {
        let mut extras = self.extras.iter().peekable();
        (self.uses.iter().enumerate()).map(move |(i, packed)| {
            let at = self.first_use + i as u32;
            let extra = extras.next_if(|(u, _)| *u == at).map(|(_, e)| *e);
            packed.decl(extra.unwrap_or_default())
        })
    }

    /// The pass's waits as the planner's declarations.
    pub(crate) fn wait_decls(&self) -> impl Iterator<Item = BinaryWaitDecl> + '_ {
        let mut start = 0;
        self.waits.iter().map(move |w| {
            let end = w.guards as usize - self.guards_start;
            let guards = self.guards[start..end].to_vec();
            start = end;
            BinaryWaitDecl {
                semaphore: w.semaphore,
                guards,
                stages: w.stages,
            }
        })
    }
}

/// One use packed into plain words, which compare as memory: the resource's planner index
/// (low half) with the aspect and the discard (high half); the access's stages; its accesses;
/// its layout and queue capabilities; its image and buffer usages. Read and written through
/// [`UseWords`].
pub(crate) type PackedUse = [u64; 5];

/// [`PackedUse`] from a resource's planner index and an access.
#[inline]
pub(crate) fn pack_use(resource: usize, a: Access) -> PackedUse {
    debug_assert!(resource <= u32::MAX as usize);
    let low_high = |low: u32, high: u32| u64::from(low) | u64::from(high) << 32;
    [
        resource as u64,
        a.stages.as_raw(),
        a.access.as_raw(),
        low_high(a.layout.as_raw() as u32, a.queue.as_raw()),
        low_high(a.image_usage.as_raw(), a.buffer_usage.as_raw()),
    ]
}

/// The fields of a [`PackedUse`].
pub(crate) trait UseWords {
    fn resource(&self) -> usize;
    fn access(&self) -> Access;
    fn layout(&self) -> vk::ImageLayout;
    fn set_layout(&mut self, layout: vk::ImageLayout);
    fn aspect(&self) -> vk::ImageAspectFlags;
    fn set_aspect(&mut self, aspect: vk::ImageAspectFlags);
    fn discard(&self) -> bool;
    fn set_discard(&mut self);
    /// The use as the planner declares it, with `extras`.
    fn decl(&self, extras: UseExtras) -> UseDecl;
}

/// The discard bit of a [`PackedUse`]'s first word (aspect flags stay far below it).
const DISCARD: u64 = 1 << 63;
const ASPECT_SHIFT: u32 = 32;

impl UseWords for PackedUse {
    fn resource(&self) -> usize {
        self[0] as u32 as usize
    }

    fn access(&self) -> Access {
        let [_, stages, access, layout_queue, usages] = *self;
        Access {
            stages: vk::PipelineStageFlags2::from_raw(stages),
            access: vk::AccessFlags2::from_raw(access),
            layout: vk::ImageLayout::from_raw(layout_queue as u32 as i32),
            queue: vk::QueueFlags::from_raw((layout_queue >> 32) as u32),
            image_usage: vk::ImageUsageFlags::from_raw(usages as u32),
            buffer_usage: vk::BufferUsageFlags::from_raw((usages >> 32) as u32),
        }
    }

    fn layout(&self) -> vk::ImageLayout {
        vk::ImageLayout::from_raw(self[3] as u32 as i32)
    }

    fn set_layout(&mut self, layout: vk::ImageLayout) {
        self[3] = (self[3] & !u64::from(u32::MAX)) | u64::from(layout.as_raw() as u32);
    }

    fn aspect(&self) -> vk::ImageAspectFlags {
        vk::ImageAspectFlags::from_raw(((self[0] & !DISCARD) >> ASPECT_SHIFT) as u32)
    }

    fn set_aspect(&mut self, aspect: vk::ImageAspectFlags) {
        let bits = u64::from(aspect.as_raw()) << ASPECT_SHIFT;
        debug_assert!(
            bits & DISCARD == 0,
            "aspect flags stay below the discard bit"
        );
        self[0] = (self[0] & (DISCARD | u64::from(u32::MAX))) | (bits & !DISCARD);
    }

    fn discard(&self) -> bool {
        self[0] & DISCARD != 0
    }

    fn set_discard(&mut self) {
        self[0] |= DISCARD;
    }

    fn decl(&self, extras: UseExtras) -> UseDecl {
        UseDecl {
            resource: self.resource(),
            access: self.access(),
            range: extras.range,
            aspect: self.aspect(),
            discard: self.discard(),
            render_pass: extras.render_pass,
            unordered: extras.unordered,
        }
    }
}

/// The rarer parts of a use ([`UseDecl`]'s fields of the same names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UseExtras {
    pub(crate) range: Option<SubRange>,
    pub(crate) render_pass: Option<RenderPassLayouts>,
    pub(crate) unordered: Option<Unordered>,
}

impl FrameDecls {
    /// The extras of the last use, added if it has none yet.
    pub(crate) fn last_extras(&mut self) -> &mut UseExtras {
        let last = self.uses.len() as u32 - 1;
        if self.extras.last().is_none_or(|&(u, _)| u != last) {
            self.extras.push((last, UseExtras::default()));
        }
        &mut self.extras.last_mut().expect("pushed above if missing").1
    }

    /// The extras of the last use, if it has any.
    pub(crate) fn last_extras_if_any(&mut self) -> Option<&mut UseExtras> {
        let last = self.uses.len() as u32 - 1;
        (self.extras.last_mut()).and_then(|(u, e)| (*u == last).then_some(e))
    }
}

/// The resources a graph's passes declared so far, each under its planner index (the order
/// of first use). A use is declared with that index: a resource already seen costs a compare,
/// not a clone of its `Arc` per use.
///
/// Three steps find a resource's index, the first that knows it answering:
/// - a direct-mapped cache, slot `id % RECENT`. Resource ids are handed out in sequence, so a
///   frame's resources rarely share a slot;
/// - the last frame's order: a frame like the last meets its resources in the same order, so
///   a resource not seen yet this frame is the next one the last frame met, and takes the next
///   index without a hash lookup;
/// - a hash map, filled with the frame's resources so far once the order differs.
pub(crate) struct ResourceIndex {
    /// (id + 1, index), 0 for empty; only the slots of the frame's resources are filled.
    recent: [(u64, usize); RECENT],
    /// The ids of the last frame's resources, by index.
    last_order: Vec<u64>,
    /// Whether every resource so far came in the last frame's order (`by_id` is empty then).
    in_order: bool,
    by_id: HashMap<u64, usize, FxBuildHasher>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
}

const RECENT: usize = 64;

impl Default for ResourceIndex {
    fn default() -> Self {
        ResourceIndex {
            recent: [(0, 0); RECENT],
            last_order: Vec::new(),
            in_order: true,
            by_id: HashMap::default(),
            resources: Vec::new(),
        }
    }
}

impl ResourceIndex {
    /// Starts a frame, taking `resources` (emptied) as its list.
    pub(crate) fn start(&mut self, mut resources: Vec<Resource>) {
        resources.clear();
        self.resources = resources;
        self.in_order = true;
    }

    /// The index of the resource with this id, adding it (cloned by `resource`) if new.
    #[inline]
    pub(crate) fn index_of(&mut self, id: u64, resource: impl FnOnce() -> Resource) -> usize {
        // Ids count up from 1 (`resource::memory`): `id + 1` never wraps to an empty slot's 0.
        debug_assert!(id != u64::MAX);
        let slot = &self.recent[id as usize % RECENT];
        if slot.0 == id.wrapping_add(1) {
            return slot.1;
        }
        self.index_of_missed(id, resource)
    }

    /// [`ResourceIndex::index_of`] past the cache: apart, so that what is inlined stays small.
    #[inline(never)]
    fn index_of_missed(&mut self, id: u64, resource: impl FnOnce() -> Resource) -> usize {
        let next = self.resources.len();
        let index = if self.in_order && self.last_order.get(next) == Some(&id) {
            // Not seen yet this frame: the ids of the frame's resources so far are the last
            // frame's first ones, and ids are distinct.
            self.resources.push(resource());
            next
        } else {
            if self.in_order {
                // From here on, the map knows every resource of the frame.
                self.in_order = false;
                let ids = self.resources.iter().map(Resource::id);
                self.by_id.extend(ids.zip(0..));
            }
            let resources = &mut self.resources;
            *self.by_id.entry(id).or_insert_with(|| {
                resources.push(resource());
                resources.len() - 1
            })
        };
        self.recent[id as usize % RECENT] = (id.wrapping_add(1), index);
        index
    }

    /// Gives the list back, emptying the index so that it keeps no resource alive; the ids'
    /// order is kept for the next frame. Again, it gives an empty list and keeps the order.
    pub(crate) fn finish(&mut self) -> Vec<Resource> {
        if self.resources.is_empty() {
            // Finished already (or a frame of no resource): the order stays for the next.
            return Vec::new();
        }
        self.last_order.clear();
        for r in &self.resources {
            self.recent[r.id() as usize % RECENT] = (0, 0);
            self.last_order.push(r.id());
        }
        self.by_id.clear();
        std::mem::take(&mut self.resources)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Access, BufferDesc, Context};
    use ash::vk::Handle;

    /// Two passes: a fill of resource 0, then a copy from 0 to 1 that waits on `wait` (guarding
    /// resource 1) and signals `signal`.
    fn frame(wait: u64, signal: u64) -> FrameDecls {
        let mut d = FrameDecls::default();
        d.uses.push(pack_use(0, Access::TRANSFER_WRITE));
        d.end_pass(0);
        d.uses.push(pack_use(0, Access::COPY_READ));
        d.uses.push(pack_use(1, Access::COPY_WRITE));
        d.guards.push(1);
        let wait = vk::Semaphore::from_raw(wait);
        d.waits.push(WaitDecl::new(wait, None, d.guards.len()));
        let semaphore = vk::Semaphore::from_raw(signal);
        d.signals.push(BinarySignalDecl {
            semaphore,
            stages: None,
        });
        d.end_pass(1);
        d
    }

    #[test]
    fn each_pass_sees_its_own_part_of_the_flat_lists() {
        let d = frame(7, 8);
        let fill = d.pass(0);
        assert_eq!((fill.queue, fill.signals.len()), (0, 0));
        let uses: Vec<_> = fill.use_decls().collect();
        assert_eq!(uses, [UseDecl::new(0, Access::TRANSFER_WRITE)]);
        assert_eq!(fill.wait_decls().count(), 0);
        let copy = d.pass(1);
        assert_eq!((copy.queue, copy.signals.len()), (1, 1));
        let uses: Vec<_> = copy.use_decls().collect();
        let want = [
            UseDecl::new(0, Access::COPY_READ),
            UseDecl::new(1, Access::COPY_WRITE),
        ];
        assert_eq!(uses, want);
        let waits: Vec<_> = copy.wait_decls().collect();
        assert_eq!(waits.len(), 1);
        assert_eq!(
            (waits[0].semaphore.as_raw(), &waits[0].guards[..]),
            (7, &[1][..])
        );
    }

    #[test]
    fn declarations_match_up_to_their_semaphores_which_pair_up() {
        let (old, new) = (frame(7, 8), frame(9, 10));
        assert!(old.same_as(&new));
        let pairs: Vec<_> = (old.semaphore_pairs(&new))
            .map(|(a, b)| (a.as_raw(), b.as_raw()))
            .collect();
        assert_eq!(pairs, [(7, 9), (8, 10)]);
        let mut other = frame(7, 8);
        other.uses[1] = pack_use(1, Access::COPY_READ);
        assert!(!old.same_as(&other));
        let mut other = frame(7, 8);
        other.guards[0] = 0;
        assert!(!old.same_as(&other));
        let mut other = frame(7, 8);
        other.last_extras().range =
            Some(SubRange::Buffer(crate::BufferRange { offset: 0, size: 4 }));
        assert!(!old.same_as(&other));
    }

    /// Every field of a use comes back from its packed form: the access's, the aspect and
    /// the discard, with the extras listed apart.
    #[test]
    fn a_packed_use_unpacks_to_the_same_use() {
        use vk::ImageAspectFlags as A;
        let mut access = Access::DEPTH_ATTACHMENT_WRITE;
        access.buffer_usage = vk::BufferUsageFlags::from_raw(u32::MAX);
        access.queue = vk::QueueFlags::from_raw(u32::MAX);
        access.stages = vk::PipelineStageFlags2::from_raw(u64::MAX);
        let mut packed = pack_use(u32::MAX as usize, access);
        packed.set_aspect(A::STENCIL | A::MEMORY_PLANE_3_EXT);
        packed.set_discard();
        packed.set_layout(vk::ImageLayout::PRESENT_SRC_KHR);
        let extras = UseExtras {
            unordered: Some(Unordered::Atomic),
            ..UseExtras::default()
        };
        let mut want = UseDecl::new(u32::MAX as usize, access).unordered(Unordered::Atomic);
        want.aspect = A::STENCIL | A::MEMORY_PLANE_3_EXT;
        want.discard = true;
        want.access.layout = vk::ImageLayout::PRESENT_SRC_KHR;
        assert_eq!(packed.decl(extras), want);
        assert_eq!(packed.aspect(), want.aspect);
        packed.set_aspect(A::DEPTH);
        assert!(packed.discard() && packed.aspect() == A::DEPTH);
    }

    /// Every resource gets one index, in order of first use, whether its id is in the cache,
    /// shares a cache slot with another (ids `RECENT` apart) or is only in the map.
    #[test]
    fn one_index_per_resource_in_order_of_first_use() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = ash::vk::BufferUsageFlags::TRANSFER_SRC;
        let buffer = |i: usize| {
            Resource::Buffer(
                ctx.buffer(BufferDesc::new(64, usage), &format!("b{i}"))
                    .unwrap(),
            )
        };
        let buffers: Vec<Resource> = (0..2).map(buffer).collect();
        let a = &buffers[0];
        // Ids come from one counter that other tests share: a buffer made after `a` lands in
        // its slot within a few rounds.
        let b = (2..20 * RECENT)
            .map(buffer)
            .find(|b| b.id() as usize % RECENT == a.id() as usize % RECENT)
            .expect("a buffer whose id shares the cache slot of `a`");
        let b = &b;
        let mut index = ResourceIndex::default();
        index.start(Vec::new());
        let mut of = |r: &Resource| index.index_of(r.id(), || r.clone());
        let seen: Vec<usize> = [a, b, a, b, &buffers[1], a, &buffers[1], b]
            .into_iter()
            .map(&mut of)
            .collect();
        assert_eq!(seen, [0, 1, 0, 1, 2, 0, 2, 1]);
        let listed: Vec<u64> = index.finish().iter().map(Resource::id).collect();
        assert_eq!(listed, [a.id(), b.id(), buffers[1].id()]);
        // Started again: nothing is remembered.
        index.start(Vec::new());
        assert_eq!(index.index_of(b.id(), || b.clone()), 0);
        assert_eq!(index.finish().len(), 1);
    }

    /// A frame that meets the last frame's resources in another order, or new ones, or one
    /// again after the order broke, gets the same indices as a first frame would.
    #[test]
    fn the_last_frames_order_gives_the_same_indices_as_the_map() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = ash::vk::BufferUsageFlags::TRANSFER_SRC;
        let buffers: Vec<Resource> = (0..4)
            .map(|i| {
                Resource::Buffer(
                    ctx.buffer(BufferDesc::new(64, usage), &format!("o{i}"))
                        .unwrap(),
                )
            })
            .collect();
        let mut index = ResourceIndex::default();
        let mut frame = |order: &[usize]| -> (Vec<usize>, Vec<u64>) {
            index.start(Vec::new());
            let seen = (order.iter())
                .map(|&k| index.index_of(buffers[k].id(), || buffers[k].clone()))
                .collect();
            let listed = index.finish().iter().map(Resource::id).collect();
            (seen, listed)
        };
        let id = |k: usize| buffers[k].id();
        assert_eq!(
            frame(&[0, 1, 0, 2]),
            (vec![0, 1, 0, 2], vec![id(0), id(1), id(2)])
        );
        // The same order again, then one that breaks off after the first resource.
        assert_eq!(
            frame(&[0, 1, 0, 2]),
            (vec![0, 1, 0, 2], vec![id(0), id(1), id(2)])
        );
        assert_eq!(
            frame(&[0, 2, 1, 0, 3, 2]),
            (vec![0, 1, 2, 0, 3, 1], vec![id(0), id(2), id(1), id(3)])
        );
        // Fewer resources than the last frame, in its order.
        assert_eq!(frame(&[0, 2, 0]), (vec![0, 1, 0], vec![id(0), id(2)]));
    }
}
