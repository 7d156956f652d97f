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

use crate::plan::BarrierCmd;
use crate::resource::Resource;
use ash::vk;

pub(crate) use crate::pools::BarrierScratch;

impl BarrierScratch {
    /// Replaces the arrays' contents with the Vulkan structs of `b`.
    pub(super) fn fill(&mut self, b: &BarrierCmd, resources: &[Resource]) {
        self.memory.clear();
        self.images.clear();
        self.buffers.clear();
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
                    .subresource_range(ib.range.to_vk(img.desc().aspect())),
            );
        }
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
                match self.memory.iter_mut().find(|m| same_stages(m, &memory)) {
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

fn same_stages(a: &vk::MemoryBarrier2<'_>, b: &vk::MemoryBarrier2<'_>) -> bool {
    a.src_stage_mask == b.src_stage_mask && a.dst_stage_mask == b.dst_stage_mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{BufferBarrier, Scopes};
    use crate::range::BufferRange;
    use crate::{BufferDesc, Context};

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
        let barrier = |resource, scopes| BufferBarrier {
            resource,
            range: BufferRange {
                offset: 0,
                size: 64,
            },
            scopes,
        };
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
}
