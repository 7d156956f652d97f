//! The one place that builds Vulkan barrier structs: [`PlanBarriers`], the baked form of a
//! plan's barrier commands, built once per plan (and again when the resources' handles
//! change) and kept in its [`PreparedFrame`](super::PreparedFrame), then recorded command by
//! command with [`PlanBarriers::dependency`]. The handoff builds its app batch's barriers with
//! the same [`BarrierStructs::push`].
//!
//! # Buffer barriers become memory barriers
//!
//! A buffer barrier that transfers no ownership is recorded as a `VkMemoryBarrier2` with the
//! same stage masks: one per distinct pair of stage masks in the command, however many
//! buffers share it, holding the union of their access masks. This is what a hand-written
//! renderer records (a copy chain: one `COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ |
//! TRANSFER_WRITE` per boundary, where the planner has one entry for the buffer read and one
//! for the buffer overwritten), it is cheaper to build and to record, and drivers treat buffer
//! barriers as global ones anyway.
//!
//! Is it allowed? Rule 3 of the contract (`ARCHITECTURE.md`) asks that source scopes be
//! exactly the prior conflicting accesses' stages and writes, and never ALL_COMMANDS or
//! MEMORY_WRITE where something narrower is right. A memory barrier keeps every mask of the
//! buffer barrier it replaces: no stage or access flag is added, so every (source,
//! destination) pair of stages it orders is one that a conflict in this command needs. What
//! it widens is only the memory covered: other resources' accesses in exactly those stages
//! are ordered too, and those are ordered by the same command's execution dependency already.
//!
//! Entries with the same stage masks but other access masks share one memory barrier: the
//! execution dependency is the same pair of stage masks, and a memory barrier's source access
//! already applies to all memory, so the union's source scope is exactly the entries' prior
//! writes (rule 3). What grows is only visibility: the writes made available become visible to
//! the union of the destination accesses, in the destination stages that wait anyway.
//!
//! Merging entries with *different stage masks* into one memory barrier is not done: the union
//! would order stage pairs that no conflict asks for, which is the widening rule 3 forbids.
//!
//! Barriers that transfer ownership stay buffer barriers: a queue family ownership transfer
//! exists only on a buffer or image barrier. Image barriers stay as they are (layouts).

use crate::plan::{BarrierCmd, Command, Plan};
use crate::resource::Resource;
use ash::vk;
use ash::vk::Handle;

/// The Vulkan structs of one or more barrier commands, one array per kind.
#[derive(Default)]
pub(crate) struct BarrierStructs {
    pub(crate) memory: Vec<vk::MemoryBarrier2<'static>>,
    pub(crate) images: Vec<vk::ImageMemoryBarrier2<'static>>,
    pub(crate) buffers: Vec<vk::BufferMemoryBarrier2<'static>>,
    /// The plan resource each of `images` names: what [`PlanBarriers::prepare`] rewrites
    /// when only the handles changed.
    image_resources: Vec<usize>,
    /// The same for `buffers`.
    buffer_resources: Vec<usize>,
}

impl BarrierStructs {
    /// Appends the Vulkan structs of `b`; `handles[r]` is plan resource `r`'s raw handle.
    /// Memory barriers merge only with those of `b`.
    pub(crate) fn push(&mut self, b: &BarrierCmd, handles: &[u64]) {
        let families = |f: Option<(u32, u32)>| {
            f.unwrap_or((vk::QUEUE_FAMILY_IGNORED, vk::QUEUE_FAMILY_IGNORED))
        };
        for ib in &b.images {
            let (src_family, dst_family) = families(ib.scopes.families);
            self.images.push(
                vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(ib.scopes.src_stages)
                    .src_access_mask(ib.scopes.src_access)
                    .dst_stage_mask(ib.scopes.dst_stages)
                    .dst_access_mask(ib.scopes.dst_access)
                    .old_layout(ib.old_layout)
                    .new_layout(ib.new_layout)
                    .src_queue_family_index(src_family)
                    .dst_queue_family_index(dst_family)
                    .image(vk::Image::from_raw(handles[ib.resource]))
                    .subresource_range(ib.range.to_vk(ib.aspect)),
            );
            self.image_resources.push(ib.resource);
        }
        let first_memory = self.memory.len();
        for bb in &b.buffers {
            let s = &bb.scopes;
            if s.families.is_none() {
                let memory = vk::MemoryBarrier2::default()
                    .src_stage_mask(s.src_stages)
                    .src_access_mask(s.src_access)
                    .dst_stage_mask(s.dst_stages)
                    .dst_access_mask(s.dst_access);
                let mine = &mut self.memory[first_memory..];
                match mine.iter_mut().find(|m| same_stages(m, &memory)) {
                    Some(m) => {
                        m.src_access_mask |= memory.src_access_mask;
                        m.dst_access_mask |= memory.dst_access_mask;
                    }
                    None => self.memory.push(memory),
                }
                continue;
            }
            let (src_family, dst_family) = families(s.families);
            self.buffers.push(
                vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(s.src_stages)
                    .src_access_mask(s.src_access)
                    .dst_stage_mask(s.dst_stages)
                    .dst_access_mask(s.dst_access)
                    .src_queue_family_index(src_family)
                    .dst_queue_family_index(dst_family)
                    .buffer(vk::Buffer::from_raw(handles[bb.resource]))
                    .offset(bb.range.offset)
                    .size(bb.range.size),
            );
            self.buffer_resources.push(bb.resource);
        }
    }

    /// Points every image and buffer struct at `handles` (by plan index), the structs
    /// otherwise as built.
    fn rename(&mut self, handles: &[u64]) {
        for (b, &r) in self.images.iter_mut().zip(&self.image_resources) {
            b.image = vk::Image::from_raw(handles[r]);
        }
        for (b, &r) in self.buffers.iter_mut().zip(&self.buffer_resources) {
            b.buffer = vk::Buffer::from_raw(handles[r]);
        }
    }

    fn clear(&mut self) {
        self.memory.clear();
        self.images.clear();
        self.buffers.clear();
        self.image_resources.clear();
        self.buffer_resources.clear();
    }

    fn lens(&self) -> [usize; 3] {
        [self.memory.len(), self.buffers.len(), self.images.len()]
    }
}

/// Every barrier command of one plan as Vulkan structs, in recording order, kept with the plan
/// so that a reused or held plan records its barriers without building them again.
///
/// The recording calls [`PlanBarriers::prepare`] before each recording; it builds the structs
/// when the plan is new to them, and only rewrites their handles when the resources' handles
/// changed (a transient bound elsewhere, as frames in flight alternate heap sets; a reused
/// plan's other resources). Whoever pairs them with a new plan calls
/// [`PlanBarriers::forget`].
#[derive(Default)]
pub(crate) struct PlanBarriers {
    /// The raw handles of the plan's resources (by plan index) that the structs name; `None`
    /// until built for the plan they travel with.
    built_for: Option<Vec<u64>>,
    /// Every command's structs, one after another.
    structs: BarrierStructs,
    /// Per barrier command: where its structs end in `memory`, `buffers` and `images`.
    ends: Vec<[usize; 3]>,
    /// Per barrier command: its `VkDependencyInfo`, pointing into `structs` (pointed again
    /// after every write of the structs: a build, or new handles), so that recording a
    /// barrier command is one call with what is here.
    deps: Vec<vk::DependencyInfo<'static>>,
}

impl PlanBarriers {
    /// Makes the structs of `plan`'s barrier commands name `resources` (by plan index): built
    /// when they were not built for this plan, their handles rewritten when only those
    /// changed, untouched when they are built for these handles already.
    pub(crate) fn prepare(&mut self, plan: &Plan, resources: &[Resource]) {
        self.prepare_for(plan, resources.iter().map(raw));
    }

    /// [`PlanBarriers::prepare`] with each plan resource's raw handle, by plan index.
    fn prepare_for(&mut self, plan: &Plan, handles: impl ExactSizeIterator<Item = u64> + Clone) {
        match &mut self.built_for {
            Some(built) if built.len() == handles.len() => {
                if !built.iter().copied().eq(handles.clone()) {
                    built.clear();
                    built.extend(handles);
                    self.structs.rename(built);
                    self.point_deps();
                }
            }
            _ => self.bake(plan, handles),
        }
    }

    /// Builds the structs of `plan`'s barrier commands; `handles` gives each plan resource's
    /// raw handle, by plan index.
    pub(crate) fn bake(&mut self, plan: &Plan, handles: impl IntoIterator<Item = u64>) {
        let mut built_for = self.built_for.take().unwrap_or_default();
        built_for.clear();
        built_for.extend(handles);
        self.structs.clear();
        self.ends.clear();
        self.deps.clear();
        for (q, qp) in plan.queues.iter().enumerate() {
            let all_stages = plan
                .input
                .queues
                .get(q)
                .is_some_and(|qd| qd.transfers_use_all_stages);
            for c in qp.batches.iter().flat_map(|b| &b.commands) {
                if let Command::Barrier(b) = c {
                    self.structs.push(b, &built_for);
                    self.ends.push(self.structs.lens());
                    let flags = dependency_flags(b, all_stages);
                    self.deps
                        .push(vk::DependencyInfo::default().dependency_flags(flags));
                }
            }
        }
        self.point_deps();
        self.built_for = Some(built_for);
    }

    /// Points each command's `VkDependencyInfo` at its structs. Called after the structs were
    /// last written, so that the pointers come from the arrays as they are now (the arrays
    /// are complete: no push moves them any more).
    fn point_deps(&mut self) {
        let s = &self.structs;
        let mut start = [0; 3];
        for (dep, &[m, b, i]) in self.deps.iter_mut().zip(&self.ends) {
            let [m0, b0, i0] = std::mem::replace(&mut start, [m, b, i]);
            (dep.memory_barrier_count, dep.p_memory_barriers) = array(&s.memory[m0..m]);
            (
                dep.buffer_memory_barrier_count,
                dep.p_buffer_memory_barriers,
            ) = array(&s.buffers[b0..b]);
            (dep.image_memory_barrier_count, dep.p_image_memory_barriers) = array(&s.images[i0..i]);
        }
    }

    /// Whether the structs were built for the plan they travel with and for these handles.
    #[cfg(test)]
    pub(crate) fn is_built_for(&self, handles: impl ExactSizeIterator<Item = u64>) -> bool {
        self.built_for
            .as_ref()
            .is_some_and(|b| b.len() == handles.len() && b.iter().copied().eq(handles))
    }

    /// The `VkDependencyInfo` of barrier command `k` (in recording order), after
    /// [`PlanBarriers::prepare`]; `None` past the last one.
    #[inline(always)]
    pub(crate) fn dependency(&self, k: usize) -> Option<&vk::DependencyInfo<'_>> {
        self.deps.get(k)
    }

    /// Drops the claim that the structs belong to the plan they travel with (a new plan
    /// came), keeping the arrays' allocations.
    pub(crate) fn forget(&mut self) {
        self.built_for = None;
    }
}

/// `VK_DEPENDENCY_QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES_BIT_KHR`
/// (`VK_KHR_maintenance8`), which ash 0.38 lacks.
const OWNERSHIP_TRANSFER_USE_ALL_STAGES: vk::DependencyFlags = vk::DependencyFlags::from_raw(0x20);

/// The dependency flags of barrier command `b` on a queue whose transfers use all stages or
/// not (`QueueDecl::transfers_use_all_stages`): the maintenance8 flag where the command
/// transfers ownership there, for the planner relied on it.
pub(crate) fn dependency_flags(b: &BarrierCmd, all_stages: bool) -> vk::DependencyFlags {
    let transfers = (b.images.iter().map(|e| e.scopes))
        .chain(b.buffers.iter().map(|e| e.scopes))
        .any(|s| s.families.is_some());
    if all_stages && transfers {
        OWNERSHIP_TRANSFER_USE_ALL_STAGES
    } else {
        vk::DependencyFlags::empty()
    }
}

/// A `VkDependencyInfo` that points only at the arrays that hold barriers.
///
/// Empty slices would still be passed as non-null pointers, and a driver that copies the
/// command (lavapipe, capture layers) then allocates and copies each one: on lavapipe that is
/// two more allocations per barrier command than a hand-written memory barrier costs.
#[inline(always)]
pub(crate) fn dependency_info<'a>(
    memory: &'a [vk::MemoryBarrier2<'a>],
    buffers: &'a [vk::BufferMemoryBarrier2<'a>],
    images: &'a [vk::ImageMemoryBarrier2<'a>],
) -> vk::DependencyInfo<'a> {
    let mut dep = vk::DependencyInfo::default();
    (dep.memory_barrier_count, dep.p_memory_barriers) = array(memory);
    (
        dep.buffer_memory_barrier_count,
        dep.p_buffer_memory_barriers,
    ) = array(buffers);
    (dep.image_memory_barrier_count, dep.p_image_memory_barriers) = array(images);
    dep
}

/// `a`'s length and address, or none when it is empty (see [`dependency_info`]).
fn array<T>(a: &[T]) -> (u32, *const T) {
    match a.len() {
        0 => (0, std::ptr::null()),
        n => (n as u32, a.as_ptr()),
    }
}

/// A resource's Vulkan handle as a number.
pub(crate) fn raw(r: &Resource) -> u64 {
    match r {
        Resource::Image(i) => i.handle().as_raw(),
        Resource::Buffer(b) => b.handle().as_raw(),
    }
}

fn same_stages(a: &vk::MemoryBarrier2<'_>, b: &vk::MemoryBarrier2<'_>) -> bool {
    a.src_stage_mask == b.src_stage_mask && a.dst_stage_mask == b.dst_stage_mask
}

#[cfg(test)]
mod tests;
