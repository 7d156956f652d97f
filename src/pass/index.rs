//! [`ResourceIndex`]: each resource a frame's passes declare, under its planner index.

use crate::fx::FxBuildHasher;
use crate::resource::Resource;
use std::collections::HashMap;

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
    use crate::{BufferDesc, Context};

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
