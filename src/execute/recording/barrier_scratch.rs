//! The Vulkan structs of one barrier command, built into buffers reused for every command of
//! an execution.
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
//! Is it allowed? The contract (DESIGN.md, rule 3) asks that source scopes be exactly the
//! prior conflicting accesses' stages and writes, and never ALL_COMMANDS or MEMORY_WRITE where
//! something narrower is right. A memory barrier keeps every mask of the buffer barrier it
//! replaces: no stage or access flag is added, so every (source, destination) pair of stages
//! it orders is one that a conflict in this command needs. What it widens is only the memory
//! covered: other resources' accesses in exactly those stages are ordered too, and those are
//! ordered by the same command's execution dependency already.
//!
//! Entries with the same stage masks but other access masks share one memory barrier: the
//! execution dependency is the same pair of stage masks, and a memory barrier's source access
//! already applies to all memory, so the union's source scope is exactly the entries' prior
//! writes (rule 3). What grows is only visibility: the writes made available become visible to
//! the union of the destination accesses, in the destination stages that wait anyway.
//!
//! Merging entries with *different stage masks* into one memory barrier is not done: the union
//! would order stage pairs that no conflict asks for (the first buffer's source stages before
//! the second buffer's destination stages), which is the widening rule 3 forbids. So each
//! distinct pair of stage masks keeps its own memory barrier.
//!
//! Barriers that transfer ownership stay buffer barriers: a queue family ownership transfer
//! exists only on a buffer or image barrier. Image barriers stay as they are (layouts).

use crate::plan::{BarrierCmd, Command, Plan};
use crate::resource::Resource;
use ash::vk;
use ash::vk::Handle;

pub(crate) use crate::pools::{BarrierScratch, PlanBarriers};

impl BarrierScratch {
    /// Replaces the arrays' contents with the Vulkan structs of `b`.
    pub(super) fn fill(&mut self, b: &BarrierCmd, resources: &[Resource]) {
        self.memory.clear();
        self.images.clear();
        self.buffers.clear();
        self.push(b, resources);
    }

    /// Appends the Vulkan structs of `b`; memory barriers merge only with those of `b`.
    pub(crate) fn push(&mut self, b: &BarrierCmd, resources: &[Resource]) {
        let families = |f: Option<(u32, u32)>| {
            f.unwrap_or((vk::QUEUE_FAMILY_IGNORED, vk::QUEUE_FAMILY_IGNORED))
        };
        for ib in &b.images {
            let Resource::Image(img) = &resources[ib.resource] else {
                continue;
            };
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
                    .image(img.handle())
                    .subresource_range(ib.range.to_vk(ib.aspect)),
            );
        }
        let first_memory = self.memory.len();
        for bb in &b.buffers {
            let Resource::Buffer(buf) = &resources[bb.resource] else {
                continue;
            };
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
                    .buffer(buf.handle())
                    .offset(bb.range.offset)
                    .size(bb.range.size),
            );
        }
    }
}

/// Makes `barriers` those of `plan`'s barrier commands for `resources`, building them unless
/// they already are (built for this plan, and for the same handles) or this is the plan's
/// first recording. `false`: not built, the recording builds each command as it goes.
pub(super) fn prepare(barriers: &mut PlanBarriers, plan: &Plan, resources: &[Resource]) -> bool {
    if barriers.first_recording() {
        return false;
    }
    if barriers.built_for(resources.iter().map(raw)) {
        return true;
    }
    let commands = (plan.queues.iter().flat_map(|q| &q.batches)).flat_map(|b| &b.commands);
    let barrier_cmds = commands.filter_map(|c| match c {
        Command::Barrier(b) => Some(b),
        Command::Pass(_) => None,
    });
    barriers.rebuild(resources.iter().map(raw), barrier_cmds, |s, b| {
        s.push(b, resources)
    });
    true
}

/// A resource's Vulkan handle as a number.
fn raw(r: &Resource) -> u64 {
    match r {
        Resource::Image(i) => i.handle().as_raw(),
        Resource::Buffer(b) => b.handle().as_raw(),
    }
}

fn same_stages(a: &vk::MemoryBarrier2<'_>, b: &vk::MemoryBarrier2<'_>) -> bool {
    a.src_stage_mask == b.src_stage_mask && a.dst_stage_mask == b.dst_stage_mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{BufferBarrier, Scopes};
    use crate::range::BufferRange;
    use crate::{BufferDesc, Context};

    /// A barrier on all 64 bytes of buffer `resource`.
    fn whole_buffer(resource: usize, scopes: Scopes) -> BufferBarrier {
        BufferBarrier {
            resource,
            range: BufferRange {
                offset: 0,
                size: 64,
            },
            scopes,
        }
    }

    fn scopes(src: vk::PipelineStageFlags2, families: Option<(u32, u32)>) -> Scopes {
        Scopes {
            src_stages: src,
            src_access: vk::AccessFlags2::TRANSFER_WRITE,
            dst_stages: vk::PipelineStageFlags2::COPY,
            dst_access: vk::AccessFlags2::TRANSFER_READ,
            families,
        }
    }

    /// Four buffers without a transfer: two with the same masks, one with the same stages but
    /// other accesses (a write after a read), one with other stages. They become two memory
    /// barriers, one per pair of stage masks, with the union of their accesses; the
    /// transferring buffer stays a buffer barrier.
    #[test]
    fn buffer_barriers_without_a_transfer_become_one_memory_barrier_per_pair_of_stage_masks() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = vk::BufferUsageFlags::TRANSFER_SRC;
        let resources: Vec<Resource> = (0..5)
            .map(|i| {
                Resource::Buffer(
                    ctx.buffer(BufferDesc::new(64, usage), &format!("b{i}"))
                        .unwrap(),
                )
            })
            .collect();
        let copy = vk::PipelineStageFlags2::COPY;
        let clear = vk::PipelineStageFlags2::CLEAR;
        let barrier = whole_buffer;
        let cmd = BarrierCmd {
            images: vec![],
            buffers: vec![
                barrier(0, scopes(copy, None)),
                barrier(1, scopes(clear, None)),
                barrier(2, scopes(copy, None)),
                barrier(3, scopes(copy, Some((0, 1)))),
                barrier(
                    4,
                    Scopes {
                        src_access: vk::AccessFlags2::NONE,
                        dst_access: vk::AccessFlags2::TRANSFER_WRITE,
                        ..scopes(copy, None)
                    },
                ),
            ],
        };
        let mut scratch = BarrierScratch::default();
        scratch.fill(&cmd, &resources);
        let masks: Vec<_> = scratch
            .memory
            .iter()
            .map(|m| {
                (
                    m.src_stage_mask,
                    m.src_access_mask,
                    m.dst_stage_mask,
                    m.dst_access_mask,
                )
            })
            .collect();
        let w = vk::AccessFlags2::TRANSFER_WRITE;
        let r = vk::AccessFlags2::TRANSFER_READ;
        assert_eq!(masks, vec![(copy, w, copy, r | w), (clear, w, copy, r)]);
        assert_eq!(scratch.buffers.len(), 1);
        let transfer = scratch.buffers[0];
        let Resource::Buffer(b3) = &resources[3] else {
            unreachable!()
        };
        assert_eq!(transfer.buffer, b3.handle());
        assert_eq!(
            (
                transfer.src_queue_family_index,
                transfer.dst_queue_family_index
            ),
            (0, 1)
        );
        assert!(scratch.images.is_empty());

        // Reused: the next command replaces everything.
        scratch.fill(&BarrierCmd::default(), &resources);
        assert!(scratch.memory.is_empty() && scratch.buffers.is_empty());
        drop(resources);
        let m = ctx.validation_messages();
        assert!(m == 0, "{m}");
    }

    /// What a reused plan records: each barrier command's structs, exactly what `fill` makes
    /// for it alone (memory barriers never merge across commands), built once while the plan
    /// and the handles stay, and again when either changes.
    #[test]
    fn a_plan_s_barriers_are_built_once_per_plan_and_handles() {
        use crate::plan::{Batch, QueuePlan};
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = vk::BufferUsageFlags::TRANSFER_SRC;
        let buffers = |tag: &str| -> Vec<Resource> {
            (0..3)
                .map(|i| {
                    let name = format!("{tag}{i}");
                    Resource::Buffer(ctx.buffer(BufferDesc::new(64, usage), &name).unwrap())
                })
                .collect()
        };
        let copy = vk::PipelineStageFlags2::COPY;
        let barrier = |resource, families| whole_buffer(resource, scopes(copy, families));
        // Same stage masks in both commands: one memory barrier each, not one for both.
        let commands = [
            BarrierCmd {
                images: vec![],
                buffers: vec![barrier(0, None), barrier(1, None)],
            },
            BarrierCmd {
                images: vec![],
                buffers: vec![barrier(1, None), barrier(2, Some((0, 1)))],
            },
        ];
        let batch = |cmds: &[BarrierCmd], pass| Batch {
            commands: (cmds.iter().cloned().map(Command::Barrier))
                .chain([Command::Pass(pass)])
                .collect(),
            ..Batch::default()
        };
        let plan = Plan {
            input: Default::default(),
            queues: vec![
                QueuePlan {
                    batches: vec![batch(&commands[..1], 0)],
                },
                QueuePlan {
                    batches: vec![batch(&commands[1..], 1)],
                },
            ],
            final_states: vec![],
            schedule: Default::default(),
            reordered: false,
            transients: Default::default(),
            order: vec![0, 1],
        };
        // (memory masks, buffer handles) of one `VkDependencyInfo`.
        let shape = |d: vk::DependencyInfo<'_>| {
            /// The array behind a (pointer, count) of `d`; null with count 0 is none.
            fn array<'a, T>(p: *const T, n: u32) -> &'a [T] {
                if n == 0 {
                    return &[];
                }
                // SAFETY: a non-empty array of `d` points at `n` structs that outlive the test's
                // use of them (the scratch or plan barriers they come from).
                unsafe { std::slice::from_raw_parts(p, n as usize) }
            }
            let memory = array(d.p_memory_barriers, d.memory_barrier_count);
            let buffers = array(d.p_buffer_memory_barriers, d.buffer_memory_barrier_count);
            let memory: Vec<_> = memory
                .iter()
                .map(|m| (m.src_stage_mask, m.src_access_mask, m.dst_access_mask))
                .collect();
            let buffers: Vec<_> = buffers.iter().map(|b| b.buffer).collect();
            (memory, buffers, d.image_memory_barrier_count)
        };
        let expected = |resources: &[Resource]| -> Vec<_> {
            let mut scratch = BarrierScratch::default();
            (commands.iter())
                .map(|c| {
                    scratch.fill(c, resources);
                    let d = crate::pools::dependency_info(
                        &scratch.memory,
                        &scratch.buffers,
                        &scratch.images,
                    );
                    shape(d)
                })
                .collect()
        };
        let recorded = |barriers: &PlanBarriers| -> Vec<_> {
            (0..2)
                .map(|k| shape(*barriers.dependency(k).unwrap()))
                .collect()
        };

        let first = buffers("a");
        let mut barriers = PlanBarriers::default();
        // The plan's first recording builds its barriers as it goes; the second keeps them.
        assert!(!prepare(&mut barriers, &plan, &first));
        assert!(barriers.dependency(0).is_none());
        assert!(prepare(&mut barriers, &plan, &first));
        assert_eq!(recorded(&barriers), expected(&first));
        assert_eq!(recorded(&barriers)[0].0.len(), 1);
        assert_eq!(recorded(&barriers)[1].0.len(), 1);
        assert_eq!(recorded(&barriers)[1].1.len(), 1);

        assert!(barriers.dependency(2).is_none(), "two barrier commands");
        let handles = |r: &[Resource]| r.iter().map(raw).collect::<Vec<_>>();
        // Same plan, same handles: `prepare` builds nothing.
        assert!(barriers.built_for(handles(&first).into_iter()));
        // Forgotten (the plan changed): built again.
        barriers.forget();
        assert!(!barriers.built_for(handles(&first).into_iter()));
        assert!(
            !prepare(&mut barriers, &plan, &first),
            "a new plan's first recording"
        );
        assert!(prepare(&mut barriers, &plan, &first));
        assert_eq!(recorded(&barriers), expected(&first));

        // Other resources of the same shape (a reused plan, a transient bound elsewhere): the
        // transferring buffer barrier names the new buffer.
        let second = buffers("b");
        assert!(!barriers.built_for(handles(&second).into_iter()));
        assert!(prepare(&mut barriers, &plan, &second));
        assert_eq!(recorded(&barriers), expected(&second));
        assert_ne!(expected(&second), expected(&first));
        drop((first, second));
        let m = ctx.validation_messages();
        assert!(m == 0, "{m}");
    }
}
