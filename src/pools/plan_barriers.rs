//! [`PlanBarriers`]: the Vulkan structs of every barrier command of one plan, kept with the
//! plan so that a reused or held plan records its barriers without building them again.

use super::{BarrierScratch, PlanLabels};
use ash::vk;

/// Every barrier command of one plan as a ready `VkDependencyInfo`, in recording order.
///
/// The executor builds them with [`PlanBarriers::rebuild`] the second time it records a plan
/// (a plan recorded once, as every planned frame's is, gains nothing from them; and again
/// when the resources' handles change), then records command `k` with
/// [`PlanBarriers::dependency`]: one lookup instead of building the structs, frame after
/// frame. Whoever pairs them with a new plan calls [`PlanBarriers::forget`].
#[derive(Default)]
pub(crate) struct PlanBarriers {
    /// The raw handles of the plan's resources (by plan index) that the structs name; `None`
    /// until built for the plan they travel with.
    built_for: Option<Vec<u64>>,
    /// Whether the plan they travel with was recorded since it came.
    recorded: bool,
    /// Every command's structs, one after another.
    structs: BarrierScratch,
    /// Per barrier command: where its structs end in `memory`, `buffers` and `images`.
    ends: Vec<[usize; 3]>,
    /// Per barrier command, pointing into `structs`. Built last by `rebuild`, and cleared
    /// before `structs` can change, so every pointer is into the arrays as they are now.
    infos: Vec<vk::DependencyInfo<'static>>,
    /// The passes' and commands' debug labels, built (with labels on) at a recording that
    /// keeps the structs and finds them not built; they name passes, not resources, so new
    /// handles leave them as they are.
    pub(crate) labels: PlanLabels,
}

impl PlanBarriers {
    /// Whether the structs were built for the plan they travel with and for these handles (a
    /// transient's, or a reused plan's resources, may differ from one execution to the next).
    pub(crate) fn built_for(&self, handles: impl ExactSizeIterator<Item = u64>) -> bool {
        self.built_for
            .as_ref()
            .is_some_and(|b| b.len() == handles.len() && b.iter().copied().eq(handles))
    }

    /// Notes that the plan is being recorded; `true` the first time since it came (then the
    /// caller builds its barriers as it goes rather than keeping them).
    pub(crate) fn first_recording(&mut self) -> bool {
        !std::mem::replace(&mut self.recorded, true)
    }

    /// Rebuilds every command's structs: `push(structs, command)` appends the structs of one
    /// command (merging only with its own), for each of `commands` in recording order.
    pub(crate) fn rebuild<C>(
        &mut self,
        handles: impl Iterator<Item = u64>,
        commands: impl Iterator<Item = C>,
        mut push: impl FnMut(&mut BarrierScratch, C),
    ) {
        // No pointer may outlive the arrays' contents it points at.
        self.infos.clear();
        let mut built_for = self.built_for.take().unwrap_or_default();
        built_for.clear();
        built_for.extend(handles);
        let s = &mut self.structs;
        s.memory.clear();
        s.buffers.clear();
        s.images.clear();
        self.ends.clear();
        for c in commands {
            push(s, c);
            (self.ends).push([s.memory.len(), s.buffers.len(), s.images.len()]);
        }
        let mut start = [0; 3];
        for &end in &self.ends {
            let dep = dependency_info(
                &s.memory[start[0]..end[0]],
                &s.buffers[start[1]..end[1]],
                &s.images[start[2]..end[2]],
            );
            // SAFETY (of the lifetime erased here): the pointers are into `s`'s arrays, which
            // are not written again until the next `rebuild` clears `infos` first; `dependency`
            // hands them out borrowed from `self`.
            self.infos.push(unsafe {
                std::mem::transmute::<vk::DependencyInfo<'_>, vk::DependencyInfo<'static>>(dep)
            });
            start = end;
        }
        self.built_for = Some(built_for);
    }

    /// The `VkDependencyInfo` of barrier command `k` (in recording order), after a
    /// [`PlanBarriers::rebuild`] for this plan; `None` past the last one.
    pub(crate) fn dependency(&self, k: usize) -> Option<&vk::DependencyInfo<'_>> {
        self.infos.get(k)
    }

    /// Drops the claim that the structs belong to the plan they travel with (a new plan came),
    /// keeping the arrays' allocations.
    pub(crate) fn forget(&mut self) {
        self.built_for = None;
        self.recorded = false;
        self.labels.forget();
    }
}

/// A `VkDependencyInfo` that points only at the arrays that hold barriers.
///
/// Empty slices would still be passed as non-null pointers, and a driver that copies the
/// command (lavapipe, capture layers) then allocates and copies each one: on lavapipe that is
/// two more allocations per barrier command than a hand-written memory barrier costs.
pub(crate) fn dependency_info<'a>(
    memory: &'a [vk::MemoryBarrier2<'a>],
    buffers: &'a [vk::BufferMemoryBarrier2<'a>],
    images: &'a [vk::ImageMemoryBarrier2<'a>],
) -> vk::DependencyInfo<'a> {
    let mut dep = vk::DependencyInfo::default();
    if !memory.is_empty() {
        dep = dep.memory_barriers(memory);
    }
    if !buffers.is_empty() {
        dep = dep.buffer_memory_barriers(buffers);
    }
    if !images.is_empty() {
        dep = dep.image_memory_barriers(images);
    }
    dep
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrays without barriers are not passed at all (null pointer, count 0), so a driver that
    /// copies the command copies only what is there.
    #[test]
    fn dependency_info_points_only_at_arrays_that_hold_barriers() {
        let memory = [vk::MemoryBarrier2::default()];
        let buffers = [vk::BufferMemoryBarrier2::default(); 2];
        let images = [vk::ImageMemoryBarrier2::default(); 3];
        let shape = |d: vk::DependencyInfo<'_>| {
            (
                (d.memory_barrier_count, d.p_memory_barriers.is_null()),
                (
                    d.buffer_memory_barrier_count,
                    d.p_buffer_memory_barriers.is_null(),
                ),
                (
                    d.image_memory_barrier_count,
                    d.p_image_memory_barriers.is_null(),
                ),
            )
        };
        assert_eq!(
            shape(dependency_info(&memory, &[], &[])),
            ((1, false), (0, true), (0, true))
        );
        assert_eq!(
            shape(dependency_info(&[], &buffers, &images)),
            ((0, true), (2, false), (3, false))
        );
        assert_eq!(
            shape(dependency_info(&[], &[], &[])),
            ((0, true), (0, true), (0, true))
        );
    }
}
