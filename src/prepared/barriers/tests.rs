//! The barrier builder on hand-made commands: no device, the handles are plain numbers.

use super::*;
use crate::plan::{Batch, BufferBarrier, ImageBarrier, QueuePlan, Scopes};
use crate::range::{BufferRange, ImageRange};

/// A barrier on all 64 bytes of buffer `resource`.
fn whole_buffer(resource: usize, scopes: Scopes) -> BufferBarrier {
    BufferBarrier {
        resource,
        range: BufferRange {
            offset: 0,
            size: 64,
        },
        scopes,
        cause: None,
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
/// barriers, one per pair of stage masks, with the union of their accesses; the transferring
/// buffer stays a buffer barrier naming its buffer.
#[test]
fn buffer_barriers_without_a_transfer_become_one_memory_barrier_per_pair_of_stage_masks() {
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
    let handles = [10, 11, 12, 13, 14];
    let mut structs = BarrierStructs::default();
    structs.push(&cmd, &handles);
    let masks: Vec<_> = (structs.memory.iter())
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
    assert_eq!(structs.buffers.len(), 1);
    let transfer = structs.buffers[0];
    assert_eq!(transfer.buffer, vk::Buffer::from_raw(13));
    assert_eq!(
        (
            transfer.src_queue_family_index,
            transfer.dst_queue_family_index
        ),
        (0, 1)
    );
    assert!(structs.images.is_empty());
}

/// (memory masks, buffer handles, image handles) of one `VkDependencyInfo`.
type Shape = (
    Vec<(vk::PipelineStageFlags2, vk::AccessFlags2, vk::AccessFlags2)>,
    Vec<vk::Buffer>,
    Vec<vk::Image>,
);

fn shape(d: vk::DependencyInfo<'_>) -> Shape {
    /// The array behind a (pointer, count) of `d`; null with count 0 is none.
    fn array<'a, T>(p: *const T, n: u32) -> &'a [T] {
        if n == 0 {
            return &[];
        }
        // SAFETY: a non-empty array of `d` points at `n` structs that outlive the test's use
        // of them (the structs they come from are alive while the shape is taken).
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
    let memory = array(d.p_memory_barriers, d.memory_barrier_count);
    let buffers = array(d.p_buffer_memory_barriers, d.buffer_memory_barrier_count);
    let memory = (memory.iter())
        .map(|m| (m.src_stage_mask, m.src_access_mask, m.dst_access_mask))
        .collect();
    let buffers = buffers.iter().map(|b| b.buffer).collect();
    let images = array(d.p_image_memory_barriers, d.image_memory_barrier_count);
    (memory, buffers, images.iter().map(|b| b.image).collect())
}

/// What a plan records: each barrier command's structs, exactly what `push` makes for it
/// alone (memory barriers never merge across commands), built once while the plan and the
/// handles stay, and again when either changes.
#[test]
fn a_plan_s_barriers_are_built_once_per_plan_and_handles() {
    let copy = vk::PipelineStageFlags2::COPY;
    let barrier = |resource, families| whole_buffer(resource, scopes(copy, families));
    // Same stage masks in both commands: one memory barrier each, not one for both.
    let commands = [
        BarrierCmd {
            images: vec![],
            buffers: vec![barrier(0, None), barrier(1, None)],
        },
        BarrierCmd {
            images: vec![ImageBarrier {
                resource: 0,
                range: ImageRange {
                    base_mip: 0,
                    mip_count: 1,
                    base_layer: 0,
                    layer_count: 1,
                },
                aspect: vk::ImageAspectFlags::COLOR,
                scopes: scopes(copy, None),
                old_layout: vk::ImageLayout::UNDEFINED,
                new_layout: vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                cause: None,
            }],
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
    let expected = |handles: &[u64]| -> Vec<Shape> {
        (commands.iter())
            .map(|c| {
                let mut one = BarrierStructs::default();
                one.push(c, handles);
                shape(dependency_info(&one.memory, &one.buffers, &one.images))
            })
            .collect()
    };
    let recorded = |barriers: &PlanBarriers| -> Vec<Shape> {
        (0..2)
            .map(|k| shape(*barriers.dependency(k).unwrap()))
            .collect()
    };

    let first = [1, 2, 3];
    let mut barriers = PlanBarriers::default();
    barriers.bake(&plan, first);
    assert_eq!(recorded(&barriers), expected(&first));
    assert_eq!(recorded(&barriers)[0].0.len(), 1);
    assert_eq!(recorded(&barriers)[1].0.len(), 1);
    assert_eq!(recorded(&barriers)[1].1, vec![vk::Buffer::from_raw(3)]);
    assert!(barriers.dependency(2).is_none(), "two barrier commands");
    assert!(barriers.is_built_for(first.iter().copied()));

    // The baked `VkDependencyInfo`s point into the arrays' heap buffers, which moving the
    // barriers (with their frame, into a held plan or the cache) leaves where they are.
    let moved = Box::new(barriers);
    assert_eq!(recorded(&moved), expected(&first));
    let mut barriers = *moved;

    // Forgotten (a new plan came): not built for anything until baked again.
    barriers.forget();
    assert!(!barriers.is_built_for(first.iter().copied()));
    barriers.bake(&plan, first);
    assert_eq!(recorded(&barriers), expected(&first));

    // Other resources of the same shape (a reused plan, a transient bound elsewhere): the
    // transferring buffer barrier names the new buffer.
    let second = [4, 5, 6];
    assert!(!barriers.is_built_for(second.iter().copied()));
    barriers.bake(&plan, second);
    assert_eq!(recorded(&barriers), expected(&second));
    assert_ne!(expected(&second), expected(&first));

    // Preparing for other handles rewrites them in place: the result is what a new build
    // gives, and the dependencies still point into the same arrays.
    let before = barriers.dependency(1).unwrap().p_buffer_memory_barriers as usize;
    for handles in [first, second, [7, 8, 9], [7, 5, 9]] {
        barriers.prepare_for(&plan, handles.iter().copied());
        assert!(barriers.is_built_for(handles.iter().copied()));
        assert_eq!(recorded(&barriers), expected(&handles), "{handles:?}");
    }
    assert_eq!(
        barriers.dependency(1).unwrap().p_buffer_memory_barriers as usize,
        before
    );
    // A new plan (forgotten) is built, not renamed.
    barriers.forget();
    barriers.prepare_for(&plan, first.iter().copied());
    assert_eq!(recorded(&barriers), expected(&first));
}

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

/// With `maintenance8` (the queue's `transfers_use_all_stages`), a barrier command that
/// transfers ownership carries `QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES`, which the
/// planner relied on; one that transfers nothing, or any command on a queue without it,
/// carries no flag.
#[test]
fn ownership_transfers_carry_the_all_stages_flag_where_the_queue_uses_it() {
    let copy = vk::PipelineStageFlags2::COPY;
    let plain = BarrierCmd {
        images: vec![],
        buffers: vec![whole_buffer(0, scopes(copy, None))],
    };
    let transfer = BarrierCmd {
        images: vec![],
        buffers: vec![whole_buffer(1, scopes(copy, Some((0, 1))))],
    };
    let flags_for = |all_stages: bool| -> Vec<vk::DependencyFlags> {
        let queue = crate::plan::QueueDecl::new("q", 0, vk::QueueFlags::TRANSFER);
        let queue = if all_stages {
            queue.with_transfers_using_all_stages()
        } else {
            queue
        };
        let plan = Plan {
            input: crate::plan::PlanInput {
                queues: vec![queue],
                ..Default::default()
            },
            queues: vec![QueuePlan {
                batches: vec![Batch {
                    commands: vec![
                        Command::Barrier(plain.clone()),
                        Command::Barrier(transfer.clone()),
                    ],
                    ..Batch::default()
                }],
            }],
            final_states: vec![],
            schedule: Default::default(),
            reordered: false,
            transients: Default::default(),
            order: vec![],
        };
        let mut barriers = PlanBarriers::default();
        barriers.bake(&plan, [1, 2]);
        (0..2)
            .map(|k| barriers.dependency(k).unwrap().dependency_flags)
            .collect()
    };
    let none = vk::DependencyFlags::empty();
    assert_eq!(flags_for(false), [none, none]);
    assert_eq!(flags_for(true), [none, vk::DependencyFlags::from_raw(0x20)]);
}
