//! Heap sets: the memory, images, buffers and views one execution's transients are bound to.
//!
//! [`HeapSets::bind`] lays the plan's placement out as heaps (the plan's own, or one per
//! transient without aliasing), picks a set no execution is using (the first whose heaps fit,
//! else one to refit, else a new one, else it waits for the one bound longest ago), allocates
//! the heaps that are missing or too small (and, under a budget the kept heaps would exceed,
//! those larger than needed, at their need), and binds each transient to the set's object of its
//! description at its heap and offset, creating that object only the first time.
//!
//! A set is marked with its execution's [`CompletionToken`] before the execution submits, so
//! the token may never complete: an execution that fails after part of it was submitted, and
//! whose queues could not be waited idle, fails its token without completing it. Its set is
//! then *lost* (the GPU may still use its memory): never bound again, not counted against
//! [`MAX_SETS`], leaked when the graph drops. So the wait for a busy set ends when the set is
//! done, when it is found lost (and a new set takes its place), or after
//! [`HeapSets::wait_limit`] with [`Error::TransientSetsBusy`]: never forever.

use super::layout::{check_budget, heap_needs, places, HeapNeed, Rules};
use super::TransientStats;
use super::{new_buffer, new_image, Place};
use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::resource::{BufferDesc, ImageDesc, Resource, SharedAllocator};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;
use std::time::Duration;
use usage::{Status, Use, WAIT_LIMIT};

mod usage;

/// More sets than executions a frame loop keeps in flight only hold memory: past this many,
/// binding waits for a set to be done rather than allocate another.
const MAX_SETS: usize = 4;

/// An object a set keeps for this many of its bindings without using it before destroying it
/// (so that frames alternating between two graphs keep both sets of objects).
const KEEP_UNUSED: u64 = 8;

/// An allocated heap.
struct Heap {
    allocation: Allocation,
    size: u64,
    /// The memory types it was allocated among (its own is one of them).
    memory_type_bits: u32,
}

impl Heap {
    /// Whether it can serve as `need`: big enough but not twice as big (memory wasted),
    /// aligned enough, of a type `need` accepts.
    fn fits(&self, need: &HeapNeed) -> bool {
        self.size >= need.size
            && self.size / 2 <= need.size
            && self.allocation.offset() % need.alignment == 0
            && self.memory_type_bits & !need.memory_type_bits == 0
    }
}

/// A Vulkan object of a set, bound at `offset` of heap `heap`.
struct Object {
    kind: Kind,
    /// Process-unique: what a transient bound to it is known by ([`next_serial`]).
    serial: u64,
    heap: usize,
    offset: u64,
    /// The set's binding count when it was last bound to a transient.
    last_bind: u64,
    /// The transient ([`Resource::id`]) it was last bound to: the same one at the same place
    /// needs no comparison of descriptions.
    last_resource: u64,
}

pub(super) enum Kind {
    Image {
        desc: ImageDesc,
        image: vk::Image,
        /// Null when the usage allows no view.
        view: vk::ImageView,
    },
    Buffer {
        desc: BufferDesc,
        buffer: vk::Buffer,
    },
}

/// Heaps and the objects bound into them, serving one execution at a time.
#[derive(Default)]
struct HeapSet {
    heaps: Vec<Heap>,
    objects: Vec<Object>,
    user: Use,
    /// How many executions were bound to it.
    binds: u64,
    /// The clock value of its last binding.
    last_bound: u64,
}

impl HeapSet {
    fn fits(&self, need: &[HeapNeed]) -> bool {
        self.heaps.len() >= need.len() && need.iter().zip(&self.heaps).all(|(n, h)| h.fits(n))
    }
}

/// A graph's heap sets, and how it lays transients out.
pub(crate) struct HeapSets {
    device: Arc<ash::Device>,
    allocator: Option<SharedAllocator>,
    granularity: u64,
    /// How long binding waits for a busy set ([`WAIT_LIMIT`]; shorter in tests).
    wait_limit: Duration,
    sets: Vec<HeapSet>,
    /// Scratch: the heaps this execution needs, and each placement's heap and offset.
    need: Vec<HeapNeed>,
    at: Vec<(usize, u64)>,
    /// Bindings so far, over every set.
    clock: u64,
    /// The set of the last binding.
    last_set: Option<usize>,
    heap_allocations: u64,
    objects_created: u64,
}

impl HeapSets {
    pub(super) fn new(device: Arc<ash::Device>) -> Self {
        HeapSets {
            device,
            allocator: None,
            granularity: 1,
            wait_limit: WAIT_LIMIT,
            sets: Vec::new(),
            need: Vec::new(),
            at: Vec::new(),
            clock: 0,
            last_set: None,
            heap_allocations: 0,
            objects_created: 0,
        }
    }

    pub(super) fn set_allocator(&mut self, allocator: &SharedAllocator, g: u64) -> Result<()> {
        if self.sets.iter().any(|s| !s.heaps.is_empty()) {
            return Err(Error::InvalidArgument(
                "the graph's transients already hold memory from another allocator".into(),
            ));
        }
        self.allocator = Some(allocator.clone());
        self.granularity = g;
        Ok(())
    }

    pub(super) fn stats(&self) -> TransientStats {
        let heaps = self.sets.iter().flat_map(|s| &s.heaps);
        TransientStats {
            sets: self.sets.len(),
            heaps: heaps.clone().count(),
            heap_bytes: heaps.map(|h| h.size).sum(),
            execution_heap_bytes: self
                .last_set
                .map_or(0, |s| self.sets[s].heaps.iter().map(|h| h.size).sum()),
            heap_allocations: self.heap_allocations,
            objects_created: self.objects_created,
            executions: self.clock,
        }
    }

    /// Binds every transient `plan` places to objects of a free set, laid out by `rules`,
    /// which `token`'s execution then holds until it completes. `graph`: the id the
    /// transients must carry. The caller checked that the placements are the transients the
    /// plan uses ([`TransientHooks::bind`](crate::extensions::TransientHooks::bind)).
    pub(super) fn bind(
        &mut self,
        (plan, rules): (&Plan, Rules),
        resources: &[Resource],
        token: &CompletionToken,
        graph: u64,
        debug: Option<&DebugUtils>,
    ) -> Result<()> {
        self.layout(plan, rules)?;
        let s = self.choose_set()?;
        self.fit_heaps(s, plan, rules.budget)?;
        self.clock += 1;
        self.sets[s].binds += 1;
        let placements = &plan.transients.placements;
        for (i, p) in placements.iter().enumerate() {
            let r = resources.get(p.resource).ok_or_else(|| {
                Error::InvalidInput(format!("placement of resource {} out of range", p.resource))
            })?;
            match r.transient() {
                Some((_, g)) if g == graph => {}
                Some(_) => {
                    return Err(Error::InvalidInput(format!(
                        "transient `{}` belongs to another graph: a transient is bound by the \
                         graph that made it",
                        r.name()
                    )))
                }
                None => {
                    return Err(Error::InvalidInput(format!(
                        "`{}` is placed as a transient but is not one",
                        r.name()
                    )))
                }
            }
            let (heap, offset) = self.at[i];
            self.bind_one(s, r, (heap, offset, i), p.size, debug)?;
        }
        let set = &mut self.sets[s];
        set.user = Use::Busy(token.clone());
        set.last_bound = self.clock;
        self.last_set = Some(s);
        self.trim(s);
        Ok(())
    }

    /// The heaps the plan needs and where each placement goes, into `need` and `at`; fails
    /// when the heaps would take more than `rules`' budget.
    fn layout(&mut self, plan: &Plan, rules: Rules) -> Result<()> {
        self.need.clear();
        self.at.clear();
        for n in heap_needs(plan, rules.aliasing, self.granularity) {
            self.need.push(n?);
        }
        self.at.extend(places(plan, rules.aliasing));
        check_budget(self.need.iter().map(|n| n.size).sum(), rules, plan)
    }

    /// Gives set `s` the heaps of `need` (laid out from `plan`): each heap that is missing or
    /// does not fit is allocated anew (its objects destroyed), and heaps beyond `need` are
    /// freed. Under `budget`, a set whose kept heaps would take more than the budget has its
    /// larger-than-needed heaps allocated anew at their need, so that it holds at most the
    /// budget for this execution (which `layout` checked the need against).
    fn fit_heaps(&mut self, s: usize, plan: &Plan, budget: Option<u64>) -> Result<()> {
        let set = &mut self.sets[s];
        let exact = budget.is_some_and(|b| kept_bytes(&set.heaps, &self.need) > b);
        for (h, need) in self.need.iter().enumerate() {
            let keep = |x: &Heap| x.fits(need) && !(exact && x.size > need.size);
            if set.heaps.get(h).is_some_and(keep) {
                continue;
            }
            let heap = allocate_heap(self.allocator.as_ref(), *need)
                .map_err(|e| name_heap(e, h, plan, &self.at))?;
            self.heap_allocations += 1;
            if h < set.heaps.len() {
                destroy_objects_in(&self.device, &mut set.objects, h);
                free_heap(
                    self.allocator.as_ref(),
                    std::mem::replace(&mut set.heaps[h], heap),
                );
            } else {
                set.heaps.push(heap);
            }
        }
        while set.heaps.len() > self.need.len() {
            let last = set.heaps.len() - 1;
            destroy_objects_in(&self.device, &mut set.objects, last);
            free_heap(self.allocator.as_ref(), set.heaps.pop().expect("non-empty"));
        }
        Ok(())
    }

    /// Binds transient `r` (the plan's `placement`) to set `s`'s object of its description
    /// at (`heap`, `offset`), creating it if need be. `size`: the bytes the plan gave it.
    fn bind_one(
        &mut self,
        s: usize,
        r: &Resource,
        (heap, offset, placement): (usize, u64, usize),
        size: u64,
        debug: Option<&DebugUtils>,
    ) -> Result<()> {
        let set = &mut self.sets[s];
        let binds = set.binds;
        if rebind_existing(&mut set.objects, r, (heap, offset), placement, binds) {
            return Ok(());
        }
        let h = set.heaps.get(heap).ok_or_else(|| {
            Error::InvalidInput(format!("`{}` is placed in a missing heap", r.name()))
        })?;
        let place = Place {
            // SAFETY: the allocation is alive while the set holds it; its memory is bound to
            // objects only through this set, which destroys them before freeing it.
            memory: unsafe { h.allocation.memory() },
            at: h.allocation.offset() + offset,
            offset,
            size,
            heap_size: h.size,
            memory_type_bits: h.memory_type_bits,
        };
        let device = &*self.device;
        let serial = next_serial();
        let (kind, created) = match r {
            Resource::Image(img) => new_image(device, (img, serial), &place, debug, s)?,
            Resource::Buffer(buf) => new_buffer(device, (buf, serial), &place, debug, s)?,
        };
        self.objects_created += created;
        log::debug!(
            "transient `{}`: new object in heap set {s}, heap {heap}, offset {offset}",
            r.name()
        );
        set.objects.push(Object {
            kind,
            serial,
            heap,
            offset,
            last_bind: binds,
            last_resource: r.id(),
        });
        Ok(())
    }

    /// Destroys set `s`'s objects that none of its last [`KEEP_UNUSED`] bindings used. Only
    /// called while no execution but the one just bound uses the set, and that one uses none
    /// of them.
    fn trim(&mut self, s: usize) {
        let set = &mut self.sets[s];
        let binds = set.binds;
        let device = &self.device;
        set.objects.retain(|o| {
            let keep = binds - o.last_bind < KEEP_UNUSED;
            if !keep {
                destroy(device, &o.kind);
            }
            keep
        });
    }
}

/// Every object's serial is new: a kept recording that named a destroyed object never
/// matches the object made in its place, whatever its handle value.
fn next_serial() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn destroy(device: &ash::Device, kind: &Kind) {
    // SAFETY (both arms): no execution that used the object is still running (its set is
    // free, or the graph is being dropped after every execution completed).
    match *kind {
        Kind::Image { image, view, .. } => unsafe {
            if view != vk::ImageView::null() {
                device.destroy_image_view(view, None);
            }
            device.destroy_image(image, None);
        },
        Kind::Buffer { buffer, .. } => unsafe { device.destroy_buffer(buffer, None) },
    }
}

/// The bytes a set of `heaps` holds once fitted to `need` keeping every heap that fits:
/// each kept heap's size, and each other needed heap at its need. Allocates nothing.
fn kept_bytes(heaps: &[Heap], need: &[HeapNeed]) -> u64 {
    let each = need.iter().enumerate().map(|(h, n)| {
        heaps
            .get(h)
            .filter(|x| x.fits(n))
            .map_or(n.size, |x| x.size)
    });
    each.fold(0, u64::saturating_add)
}

/// Destroys the objects bound into heap `h`.
fn destroy_objects_in(device: &ash::Device, objects: &mut Vec<Object>, h: usize) {
    objects.retain(|o| {
        if o.heap == h {
            destroy(device, &o.kind);
        }
        o.heap != h
    });
}

/// `e`, an allocation failure of heap `h`, naming what the heap holds: each transient `at`
/// places in it, with its bytes, and the heap's bytes in all (alignment and granularity
/// included), so that an app sees which of its transients asked for the memory.
fn name_heap(e: Error, h: usize, plan: &Plan, at: &[(usize, u64)]) -> Error {
    let Error::Allocation { size, source, .. } = e else {
        return e;
    };
    let placed = plan.transients.placements.iter().zip(at);
    let held: Vec<String> = placed
        .filter(|(_, (heap, _))| *heap == h)
        .map(|(p, _)| {
            let name = plan
                .input
                .resources
                .get(p.resource)
                .map_or("?", |r| &r.name);
            format!("{name}: {} bytes", p.size)
        })
        .collect();
    Error::Allocation {
        resource: format!(
            "transient heap {h} ({}; {size} bytes in all)",
            held.join(", ")
        ),
        size,
        source,
    }
}

fn allocate_heap(allocator: Option<&SharedAllocator>, need: HeapNeed) -> Result<Heap> {
    let allocator = allocator.ok_or_else(|| {
        Error::InvalidArgument(
            "the graph has no allocator for transients (Graph::set_transient_allocator)".into(),
        )
    })?;
    let desc = AllocationCreateDesc {
        name: "vk-baton transient heap",
        requirements: vk::MemoryRequirements {
            size: need.size,
            alignment: need.alignment,
            memory_type_bits: need.memory_type_bits,
        },
        location: MemoryLocation::GpuOnly,
        // Sized and aligned to whole granularity pages, so its neighbours' tiling is moot.
        linear: false,
        allocation_scheme: AllocationScheme::GpuAllocatorManaged,
    };
    let allocation = allocator
        .lock()
        .allocate(&desc)
        .map_err(|e| Error::allocation("transient heap", need.size, e.into()))?;
    log::debug!(
        "transient heap: {} bytes (types {:#b})",
        need.size,
        need.memory_type_bits
    );
    Ok(Heap {
        allocation,
        size: need.size,
        memory_type_bits: need.memory_type_bits,
    })
}

fn free_heap(allocator: Option<&SharedAllocator>, heap: Heap) {
    let Some(allocator) = allocator else {
        log::error!("transient heap without an allocator: leaking it");
        return;
    };
    if let Err(e) = allocator.lock().free(heap.allocation) {
        log::error!("freeing a transient heap failed: {e}");
    }
}

impl Drop for HeapSets {
    fn drop(&mut self) {
        for set in std::mem::take(&mut self.sets) {
            let mut set = set;
            if !matches!(set.poll(), Ok(Status::Free)) {
                // Its execution never completed (a submit failed and the queues could not be
                // waited for): leak rather than free memory the GPU may use.
                log::error!("a transient heap set is still in use: leaking its memory");
                std::mem::forget(set);
                continue;
            }
            for o in &set.objects {
                destroy(&self.device, &o.kind);
            }
            for heap in set.heaps {
                free_heap(self.allocator.as_ref(), heap);
            }
        }
    }
}

/// Binds `r` to the object the set made for it at `heap` and `offset` in an earlier
/// execution, if there is one of the same description; `false` if not. `hint` is where to
/// look first: the placement's index, which is the object's when the set was made for the
/// same plan (objects are made in placement order, and trimming keeps their order).
fn rebind_existing(
    objects: &mut [Object],
    r: &Resource,
    (heap, offset): (usize, u64),
    hint: usize,
    binds: u64,
) -> bool {
    let id = r.id();
    let made_for_r = |o: &Object| {
        o.heap == heap
            && o.offset == offset
            && (o.last_resource == id
                || match (&o.kind, r) {
                    (Kind::Image { desc, .. }, Resource::Image(i)) => desc == i.desc(),
                    (Kind::Buffer { desc, .. }, Resource::Buffer(b)) => desc == b.desc(),
                    _ => false,
                })
    };
    let found = if objects.get(hint).is_some_and(made_for_r) {
        Some(hint)
    } else {
        objects.iter().position(made_for_r)
    };
    let Some(o) = found.map(|k| &mut objects[k]) else {
        return false;
    };
    o.last_bind = binds;
    o.last_resource = id;
    match (&o.kind, r) {
        (Kind::Image { image, view, .. }, Resource::Image(i)) => {
            i.bind_transient(*image, *view, o.serial)
        }
        (Kind::Buffer { buffer, .. }, Resource::Buffer(b)) => b.bind_transient(*buffer, o.serial),
        // Ids never repeat and a handle's description never changes: an id match is a kind match.
        _ => unreachable!("an object found for a transient is of its kind"),
    }
    true
}

#[cfg(test)]
mod tests;
