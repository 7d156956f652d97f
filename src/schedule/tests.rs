//! The scheduler's private helpers: which passes are pinned, and the join rules of barrier
//! commands on hand-made commands. The scheduling scenarios (orders taken, whole plans) are in
//! `tests/plan_scenarios/schedule.rs`.

use super::regroup::join_barriers;
use crate::plan::*;
use crate::range::{BufferRange, ImageRange};
use crate::Access;
use ash::vk;
use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

const GFX: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);

fn usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
}

fn buffers(names: &[&str]) -> Vec<ResourceDecl> {
    names
        .iter()
        .map(|n| ResourceDecl::buffer(n, 256, usage()))
        .collect()
}

fn image(name: &str) -> ResourceDecl {
    let u = vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST;
    ResourceDecl::image(name, 1, 1, u)
}

fn pass(name: &str, queue: usize, uses: &[(usize, Access)]) -> PassDecl {
    uses.iter().fold(PassDecl::new(name, queue), |p, &(r, a)| {
        p.with_use(UseDecl::new(r, a))
    })
}

fn one_queue(resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> PlanInput {
    PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources,
        passes,
    }
}

fn buffer_barrier(resource: usize, src: (S, A), dst: (S, A)) -> BufferBarrier {
    BufferBarrier {
        resource,
        range: BufferRange {
            offset: 0,
            size: 256,
        },
        scopes: Scopes {
            src_stages: src.0,
            src_access: src.1,
            dst_stages: dst.0,
            dst_access: dst.1,
            families: None,
        },
        cause: None,
    }
}

const WRITTEN: (S, A) = (S::ALL_TRANSFER, A::TRANSFER_WRITE);
const COPY_READ: (S, A) = (S::COPY, A::TRANSFER_READ);

/// A present pins its pass even without a binary signal (which the planner would refuse).
#[test]
fn a_present_is_pinned() {
    let present = pass("present", 0, &[(0, Access::PRESENT)]);
    assert!(super::conflict::pinned(&present));
    assert!(!super::conflict::pinned(&pass(
        "read",
        0,
        &[(0, Access::COPY_READ)]
    )));
}

/// The join rules on hand-made commands: what may move over which pass, up and down.
#[test]
fn barrier_commands_join_only_over_passes_that_do_not_need_them() {
    let mut resources = buffers(&["a", "b"]);
    resources.push(image("img"));
    let input = one_queue(
        resources,
        vec![
            pass("reads a", 0, &[(0, Access::COPY_READ)]),
            pass("writes a", 0, &[(0, Access::COPY_WRITE)]),
            pass("reads img", 0, &[(2, Access::COPY_READ)]),
            pass("writes b", 0, &[(1, Access::COPY_WRITE)]),
        ],
    );
    let read_a = buffer_barrier(0, WRITTEN, COPY_READ);
    let write_b = buffer_barrier(1, COPY_READ, (S::COPY, A::TRANSFER_WRITE));
    let img = |old: L, new: L| ImageBarrier {
        resource: 2,
        range: ImageRange::mip(0, 1),
        aspect: vk::ImageAspectFlags::COLOR,
        scopes: Scopes {
            src_stages: S::COPY,
            src_access: A::NONE,
            dst_stages: S::COPY,
            dst_access: A::TRANSFER_READ,
            families: None,
        },
        old_layout: old,
        new_layout: new,
        cause: None,
    };
    let cmd = |images: Vec<ImageBarrier>, buffers: Vec<BufferBarrier>| {
        Command::Barrier(BarrierCmd { images, buffers })
    };
    let joined = |commands: Vec<Command>| {
        let mut queues = vec![QueuePlan {
            batches: vec![Batch {
                commands,
                ..Batch::default()
            }],
        }];
        join_barriers(&input, &mut queues);
        queues.remove(0).batches.remove(0).commands
    };
    let p = Command::Pass;
    let a = || cmd(vec![], vec![read_a]);
    let b = || cmd(vec![], vec![write_b]);
    // A read barrier of `a` moves up over a pass that reads `a` (the two become one entry)...
    assert_eq!(joined(vec![a(), p(0), a(), p(0)]), [a(), p(0), p(0)]);
    // ... not over one that writes it, nor down over either.
    assert_eq!(joined(vec![a(), p(1), a(), p(0)]), [a(), p(1), a(), p(0)]);
    // A barrier for `b` moves up over passes that do not touch `b`; `a`'s stays before the
    // pass that needs it.
    let ab = || cmd(vec![], vec![read_a, write_b]);
    assert_eq!(
        joined(vec![a(), p(0), p(1), b(), p(3)]),
        [ab(), p(0), p(1), p(3)]
    );
    // Down: a barrier before passes that do not need it joins the next one.
    assert_eq!(
        joined(vec![b(), p(1), a(), p(0), p(3)]),
        [p(1), cmd(vec![], vec![write_b, read_a]), p(0), p(3)]
    );
    // A layout transition of the image moves over no pass that touches the image, even one
    // that reads it in the layout it had (here `a`'s barrier moves down to it instead); a
    // barrier with no transition moves up over it.
    let transition = img(L::TRANSFER_SRC_OPTIMAL, L::GENERAL);
    let same = img(L::TRANSFER_SRC_OPTIMAL, L::TRANSFER_SRC_OPTIMAL);
    assert_eq!(
        joined(vec![a(), p(2), cmd(vec![transition], vec![]), p(0), p(2)]),
        [p(2), cmd(vec![transition], vec![read_a]), p(0), p(2)]
    );
    assert_eq!(
        joined(vec![a(), p(2), cmd(vec![same], vec![]), p(2), p(0)]),
        [cmd(vec![same], vec![read_a]), p(2), p(2), p(0)]
    );
    // Never into another batch.
    let mut queues = vec![QueuePlan {
        batches: vec![
            Batch {
                commands: vec![a(), p(0)],
                ..Batch::default()
            },
            Batch {
                commands: vec![b(), p(3)],
                ..Batch::default()
            },
        ],
    }];
    join_barriers(&input, &mut queues);
    assert_eq!(queues[0].batches[1].commands, [b(), p(3)]);
}
