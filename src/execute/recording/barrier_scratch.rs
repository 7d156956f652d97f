//! The Vulkan structs of one barrier command, built into buffers reused for every command of
//! an execution.
//!
//! # Buffer barriers become memory barriers
//!
//! A buffer barrier that transfers no ownership is recorded as a `VkMemoryBarrier2` with the
//! same four masks: one per distinct set of masks in the command, however many buffers share
//! it. This is what a hand-written renderer records, it is cheaper to build and to record, and
//! drivers treat buffer barriers as global ones anyway.
//!
//! Is it allowed? The contract (DESIGN.md, rule 3) asks that source scopes be exactly the
//! prior conflicting accesses' stages and writes, and never ALL_COMMANDS or MEMORY_WRITE where
//! something narrower is right. A memory barrier keeps every mask of the buffer barrier it
//! replaces: no stage or access flag is added, so every (source, destination) pair of stages
//! it orders is one that a conflict in this command needs. What it widens is only the memory
//! covered: other resources' accesses in exactly those stages are ordered too, and those are
//! ordered by the same command's execution dependency already.
//!
//! Merging buffer barriers with *different* masks into one memory barrier holding the union
//! is not done: the union would order pairs that no conflict asks for (the first buffer's
//! source stages before the second buffer's destination stages), which is the widening rule 3
//! forbids. So each distinct set of masks keeps its own memory barrier.
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
                if !self.memory.iter().any(|m| same_masks(m, &memory)) {
                    self.memory.push(memory);
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

fn same_masks(a: &vk::MemoryBarrier2<'_>, b: &vk::MemoryBarrier2<'_>) -> bool {
    a.src_stage_mask == b.src_stage_mask
        && a.src_access_mask == b.src_access_mask
        && a.dst_stage_mask == b.dst_stage_mask
        && a.dst_access_mask == b.dst_access_mask
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

    /// Three buffers without a transfer, two of them with the same masks, become two memory
    /// barriers with exactly those masks; the transferring one stays a buffer barrier.
    #[test]
    fn buffer_barriers_without_a_transfer_become_one_memory_barrier_per_set_of_masks() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = vk::BufferUsageFlags::TRANSFER_SRC;
        let resources: Vec<Resource> = (0..4)
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
        assert_eq!(masks, vec![(copy, w, copy, r), (clear, w, copy, r)]);
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
