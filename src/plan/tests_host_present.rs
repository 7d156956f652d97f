//! Regression tests for two shapes the verifier rejected (issue 8, item 5), and for stages
//! recorded in initial states that do not fit the queue a barrier lands on. No GPU.
//!
//! - A host access declared by a pass on one queue, after another queue wrote the buffer.
//!   The host is no queue family, so no ownership transfer: a semaphore wait on the pass's
//!   queue (at a stage that queue has, never HOST), then a barrier from that stage to
//!   HOST/HOST_* that makes the writes available to the host. The host waits on the fence.
//!   The planner used to acquire the buffer for the pass's family with HOST stages only.
//! - A use after PRESENT in the same graph: the image belongs to the presentation engine
//!   until it is acquired again, which no barrier can express. An input error; so is a use
//!   after a host access (the host acts after the fence), and a present of a buffer.

use super::*;
use crate::error::Error;
use ash::vk;
use ash::vk::Handle;
use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;

const GCT: Q = Q::from_raw(Q::GRAPHICS.as_raw() | Q::COMPUTE.as_raw() | Q::TRANSFER.as_raw());
const CT: Q = Q::from_raw(Q::COMPUTE.as_raw() | Q::TRANSFER.as_raw());

pub(crate) fn queues() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new("graphics", 0, GCT),
        QueueDecl::new("compute", 1, CT),
        QueueDecl::new("transfer", 2, Q::TRANSFER),
    ]
}

fn buffer() -> ResourceDecl {
    ResourceDecl::buffer(
        "buf",
        256,
        vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST,
    )
}

pub(crate) fn on(name: &str, queue: usize, access: Access) -> PassDecl {
    PassDecl::new(name, queue).with_use(UseDecl::new(0, access))
}

fn whole_buffer(scopes: Scopes) -> Command {
    Command::Barrier(BarrierCmd {
        images: vec![],
        buffers: vec![BufferBarrier {
            resource: 0,
            range: BufferRange {
                offset: 0,
                size: 256,
            },
            scopes,
        }],
    })
}

fn scopes(src: (S, A), dst: (S, A), families: Option<(u32, u32)>) -> Scopes {
    Scopes {
        src_stages: src.0,
        src_access: src.1,
        dst_stages: dst.0,
        dst_access: dst.1,
        families,
    }
}

fn only(commands: Vec<Command>) -> Batch {
    Batch {
        waits: vec![],
        commands,
        signal: Some(S::ALL_COMMANDS),
        binary_signals: vec![],
    }
}

fn after(queue: usize, stages: S, commands: Vec<Command>) -> Batch {
    Batch {
        waits: vec![Wait {
            target: WaitTarget::Batch { queue, batch: 0 },
            stages,
        }],
        ..only(commands)
    }
}

#[test]
fn host_access_after_another_familys_write_needs_no_ownership_transfer() {
    // (host queue, the wait's stage there): graphics has COMPUTE_SHADER to chain from; a
    // transfer-only queue does not, so it waits for all commands.
    for (hq, wait_at) in [(0, S::COMPUTE_SHADER), (2, S::ALL_COMMANDS)] {
        for host in [Access::HOST_READ, Access::HOST_WRITE] {
            let p = plan(&PlanInput {
                queues: queues(),
                resources: vec![buffer()],
                passes: vec![
                    on("write", 1, Access::COMPUTE_SHADER_WRITE),
                    on("host", hq, host),
                ],
            })
            .unwrap();
            let mut expect = vec![QueuePlan::default(); 3];
            expect[1].batches = vec![only(vec![Command::Pass(0)])];
            expect[hq].batches = vec![after(
                1,
                wait_at,
                vec![
                    whole_buffer(scopes((wait_at, A::NONE), (S::HOST, host.access), None)),
                    Command::Pass(1),
                ],
            )];
            assert_eq!(p.queues, expect, "{p}");
            p.verify().unwrap();
            // The compute family still owns the buffer: the host took nothing.
            let mut last = vec![0; 3];
            let values = p.assign_values(&mut last);
            let fin = p.resolved_final_states(&values);
            assert_eq!(fin[0].len(), 1);
            assert_eq!(fin[0][0].1.owner, Some(1));
        }
    }
}

#[test]
fn host_access_on_the_writing_queue_is_one_barrier() {
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer()],
        passes: vec![
            on("write", 1, Access::COMPUTE_SHADER_WRITE),
            on("host", 1, Access::HOST_READ),
        ],
    })
    .unwrap();
    let mut expect = vec![QueuePlan::default(); 3];
    expect[1].batches = vec![only(vec![
        Command::Pass(0),
        whole_buffer(scopes(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (S::HOST, A::HOST_READ),
            None,
        )),
        Command::Pass(1),
    ])];
    assert_eq!(p.queues, expect, "{p}");
    p.verify().unwrap();
}

pub(crate) fn swapchain() -> ResourceDecl {
    ResourceDecl::image(
        "swap",
        1,
        1,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
    )
}

pub(crate) fn acquire(name: &str, semaphore: u64, access: Access) -> PassDecl {
    on(name, 0, access).with_wait(BinaryWaitDecl {
        semaphore: vk::Semaphore::from_raw(semaphore),
        guards: vec![0],
        stages: None,
    })
}

pub(crate) fn present(semaphore: u64) -> PassDecl {
    on("present", 0, Access::PRESENT).with_signal(BinarySignalDecl {
        semaphore: vk::Semaphore::from_raw(semaphore),
        stages: None,
    })
}

/// Presenting then using the image again in one graph is refused, even after a binary wait
/// that guards it: the app acquires before it submits the graph, while it still holds the
/// image, so that acquire cannot return the image this graph presents.
#[test]
fn a_use_after_present_in_the_same_graph_is_refused() {
    for later in [
        on("draw-again", 0, Access::COLOR_ATTACHMENT_WRITE),
        on("draw-again", 0, Access::TRANSFER_READ),
        acquire("draw-again", 3, Access::COLOR_ATTACHMENT_WRITE),
        present(3),
    ] {
        let name = later.name.clone();
        let e = plan(&PlanInput {
            queues: queues(),
            resources: vec![swapchain()],
            passes: vec![
                acquire("draw", 1, Access::COLOR_ATTACHMENT_WRITE),
                present(2),
                later,
            ],
        })
        .unwrap_err();
        let Error::InvalidInput(msg) = &e else {
            panic!("{e}")
        };
        assert_eq!(
            *msg,
            format!(
                "pass `{name}` uses `swap` after pass `present` presented it: a presented image \
                 belongs to the presentation engine until an acquire returns it, in a later graph"
            )
        );
    }
}

/// A use after a host access in the same graph is refused, on the host access's queue as on
/// another, for a read as for a write: the host acts only once the fence signals, so no
/// barrier or semaphore can order a later use after it. A use of another resource is not.
#[test]
fn a_use_after_a_host_access_in_the_same_graph_is_refused() {
    for host in [Access::HOST_READ, Access::HOST_WRITE] {
        for later in [
            on("again", 1, Access::COMPUTE_SHADER_WRITE),
            on("again", 0, Access::TRANSFER_READ),
            on("again", 2, Access::TRANSFER_WRITE),
        ] {
            let e = plan(&PlanInput {
                queues: queues(),
                resources: vec![buffer()],
                passes: vec![
                    on("write", 1, Access::COMPUTE_SHADER_WRITE),
                    on("host", 1, host),
                    later,
                ],
            })
            .unwrap_err();
            let Error::InvalidInput(msg) = &e else {
                panic!("{e}")
            };
            assert_eq!(
                *msg,
                "pass `again` uses `buf` after pass `host` declared a host access to it: the \
                 host acts only once the execution's fence signals, after every pass of the \
                 graph; use it again in a later graph"
            );
        }
    }
    // Another resource after the host access plans as usual.
    let other = PassDecl::new("other", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE));
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer(), buffer()],
        passes: vec![on("host", 1, Access::HOST_READ), other],
    })
    .unwrap();
    p.verify().unwrap();
}

/// Only images are presented: a present of a buffer is refused.
#[test]
fn presenting_a_buffer_is_refused() {
    let e = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer()],
        passes: vec![on("present", 0, Access::PRESENT)],
    })
    .unwrap_err();
    let Error::InvalidInput(msg) = &e else {
        panic!("{e}")
    };
    assert_eq!(
        *msg,
        "pass `present` presents `buf`, a buffer: only swapchain images are presented"
    );
}

/// An app declared state whose stages the queue a barrier lands on lacks: the compute family
/// owns the buffer, but the recorded write ran on graphics, in the fragment shader. The
/// release runs on a compute queue after a wait, and chains from all commands there (the
/// fragment stage is no stage of a compute queue).
#[test]
fn a_release_after_another_familys_recorded_work_uses_stages_of_its_own_queue() {
    let state = SegmentState {
        layout: vk::ImageLayout::UNDEFINED,
        defined: true,
        owner: Some(1),
        write: Some(Recorded {
            queue: 0,
            value: Some(5),
            stages: S::FRAGMENT_SHADER,
            access: A::SHADER_STORAGE_WRITE,
        }),
        reads: vec![],
    };
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer().with_state(state)],
        passes: vec![on("read", 2, Access::TRANSFER_READ)],
    })
    .unwrap();
    let all = S::ALL_COMMANDS;
    let mut expect = vec![QueuePlan::default(); 3];
    expect[1].batches = vec![Batch {
        waits: vec![Wait {
            target: WaitTarget::Value { queue: 0, value: 5 },
            stages: all,
        }],
        ..only(vec![whole_buffer(scopes(
            (all, A::NONE),
            (all, A::NONE),
            Some((1, 2)),
        ))])
    }];
    expect[2].batches = vec![after(
        1,
        all,
        vec![
            whole_buffer(scopes(
                (S::ALL_TRANSFER, A::NONE),
                (S::ALL_TRANSFER, A::TRANSFER_READ),
                Some((1, 2)),
            )),
            Command::Pass(0),
        ],
    )];
    assert_eq!(p.queues, expect, "{p}");
}

/// State recorded on a queue with stages that queue cannot run (an app's mistake, or a
/// declaration made for another queue) is read as all commands there.
#[test]
fn recorded_stages_a_queue_lacks_become_all_commands() {
    let state = SegmentState::handed_over(
        vk::ImageLayout::UNDEFINED,
        Some(2),
        Some((2usize, S::FRAGMENT_SHADER, A::SHADER_STORAGE_WRITE)),
    );
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer().with_state(state)],
        passes: vec![on("read", 2, Access::TRANSFER_READ)],
    })
    .unwrap();
    let mut expect = vec![QueuePlan::default(); 3];
    expect[2].batches = vec![only(vec![
        whole_buffer(scopes(
            (S::ALL_COMMANDS, A::SHADER_STORAGE_WRITE),
            (S::ALL_TRANSFER, A::TRANSFER_READ),
            None,
        )),
        Command::Pass(0),
    ])];
    assert_eq!(p.queues, expect, "{p}");
    assert_eq!(
        p.input.resources[0].initial[0].1.write.unwrap().stages,
        S::ALL_COMMANDS
    );
}
