//! Scenario tests: the exact barriers and semaphores for the Khronos synchronization
//! examples, on fake queue setups. No GPU.
//!
//! The contract's rules are in `contract`, refused input and the verifier's regressions in
//! `errors`; both use the helpers here.

use super::*;
use crate::error::Error;
use ash::vk;
use ash::vk::Handle;
use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

#[path = "tests_contract.rs"]
mod contract;
#[path = "tests_errors.rs"]
mod errors;

const GFX: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);
const COMPUTE: vk::QueueFlags =
    vk::QueueFlags::from_raw(vk::QueueFlags::COMPUTE.as_raw() | vk::QueueFlags::TRANSFER.as_raw());
const TRANSFER: vk::QueueFlags = vk::QueueFlags::TRANSFER;

/// graphics (family 0), async compute (family 1), transfer (family 2).
fn three_families() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new("graphics", 0, GFX),
        QueueDecl::new("compute", 1, COMPUTE),
        QueueDecl::new("transfer", 2, TRANSFER),
    ]
}

fn all_image_usage() -> vk::ImageUsageFlags {
    vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST
        | vk::ImageUsageFlags::COLOR_ATTACHMENT
}

fn all_buffer_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::VERTEX_BUFFER
}

fn image(name: &str) -> ResourceDecl {
    ResourceDecl::image(name, 1, 1, all_image_usage())
}

fn buffer(name: &str) -> ResourceDecl {
    ResourceDecl::buffer(name, 256, all_buffer_usage())
}

fn pass(name: &str, queue: usize, uses: &[(usize, Access)]) -> PassDecl {
    uses.iter().fold(PassDecl::new(name, queue), |p, &(r, a)| {
        p.with_use(UseDecl::new(r, a))
    })
}

fn scopes(src: (S, A), dst: (S, A)) -> Scopes {
    Scopes {
        src_stages: src.0,
        src_access: src.1,
        dst_stages: dst.0,
        dst_access: dst.1,
        families: None,
    }
}

fn img_barrier(r: usize, old: L, new: L, s: Scopes) -> ImageBarrier {
    ImageBarrier {
        resource: r,
        range: ImageRange {
            base_mip: 0,
            mip_count: 1,
            base_layer: 0,
            layer_count: 1,
        },
        aspect: vk::ImageAspectFlags::COLOR,
        scopes: s,
        old_layout: old,
        new_layout: new,
    }
}

fn buf_barrier(r: usize, s: Scopes) -> BufferBarrier {
    BufferBarrier {
        resource: r,
        range: BufferRange {
            offset: 0,
            size: 256,
        },
        scopes: s,
    }
}

fn images(b: Vec<ImageBarrier>) -> Command {
    Command::Barrier(BarrierCmd {
        images: b,
        buffers: vec![],
    })
}

fn buffers(b: Vec<BufferBarrier>) -> Command {
    Command::Barrier(BarrierCmd {
        images: vec![],
        buffers: b,
    })
}

fn run(queues: Vec<QueueDecl>, resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> Plan {
    plan(&PlanInput {
        queues,
        resources,
        passes,
    })
    .expect("plan")
}

fn last_signal() -> Option<S> {
    Some(S::ALL_COMMANDS)
}

// ---------------------------------------------------------------------------------------------
// The Khronos synchronization examples
// ---------------------------------------------------------------------------------------------

#[test]
fn compute_write_then_compute_read() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf")],
        vec![
            pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)]),
        ],
    );
    let expect = Batch {
        waits: vec![],
        commands: vec![
            Command::Pass(0),
            buffers(vec![buf_barrier(
                0,
                scopes(
                    (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                    (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ),
                ),
            )]),
            Command::Pass(1),
        ],
        signal: last_signal(),
        binary_signals: vec![],
    };
    assert_eq!(p.queues[0].batches, vec![expect]);
}

#[test]
fn compute_write_then_fragment_sampled_read() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![
            pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("sample", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ],
    );
    let expect = Batch {
        waits: vec![],
        commands: vec![
            // A fresh image: transition from UNDEFINED, nothing to wait for.
            images(vec![img_barrier(
                0,
                L::UNDEFINED,
                L::GENERAL,
                scopes(
                    (S::NONE, A::NONE),
                    (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                ),
            )]),
            Command::Pass(0),
            images(vec![img_barrier(
                0,
                L::GENERAL,
                L::SHADER_READ_ONLY_OPTIMAL,
                scopes(
                    (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                    (S::FRAGMENT_SHADER, A::SHADER_SAMPLED_READ),
                ),
            )]),
            Command::Pass(1),
        ],
        signal: last_signal(),
        binary_signals: vec![],
    };
    assert_eq!(p.queues[0].batches, vec![expect]);
}

#[test]
fn upload_on_transfer_family_acquired_by_graphics() {
    let p = run(
        three_families(),
        vec![buffer("vertices")],
        vec![
            pass("upload", 2, &[(0, Access::TRANSFER_WRITE)]),
            pass("draw", 0, &[(0, Access::VERTEX_BUFFER)]),
        ],
    );
    let release = Scopes {
        families: Some((2, 0)),
        ..scopes(
            (S::ALL_TRANSFER, A::TRANSFER_WRITE),
            (S::ALL_TRANSFER, A::NONE),
        )
    };
    let acquire = Scopes {
        families: Some((2, 0)),
        ..scopes(
            (S::VERTEX_ATTRIBUTE_INPUT, A::NONE),
            (S::VERTEX_ATTRIBUTE_INPUT, A::VERTEX_ATTRIBUTE_READ),
        )
    };
    assert_eq!(
        p.queues[2].batches,
        vec![Batch {
            waits: vec![],
            commands: vec![Command::Pass(0), buffers(vec![buf_barrier(0, release)])],
            signal: last_signal(),
            binary_signals: vec![]
        }]
    );
    assert_eq!(
        p.queues[0].batches,
        vec![Batch {
            waits: vec![Wait {
                target: WaitTarget::Batch { queue: 2, batch: 0 },
                // An acquire is ordered after the wait only by an ALL_COMMANDS wait (no maintenance8).
                stages: S::ALL_COMMANDS
            }],
            commands: vec![buffers(vec![buf_barrier(0, acquire)]), Command::Pass(1)],
            signal: last_signal(),
            binary_signals: vec![],
        }]
    );
    assert!(p.queues[1].batches.is_empty());
}

#[test]
fn swapchain_acquire_render_present() {
    let acquired = vk::Semaphore::from_raw(11);
    let rendered = vk::Semaphore::from_raw(12);
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![ResourceDecl::image("swapchain", 1, 1, usage)],
        vec![
            PassDecl::new("acquire", 0).with_wait(BinaryWaitDecl {
                semaphore: acquired,
                guards: vec![0],
                stages: None,
            }),
            pass("render", 0, &[(0, Access::COLOR_ATTACHMENT_WRITE)]),
            pass("present", 0, &[(0, Access::PRESENT)]).with_signal(BinarySignalDecl {
                semaphore: rendered,
                stages: None,
            }),
        ],
    );
    let cao = S::COLOR_ATTACHMENT_OUTPUT;
    let expect = Batch {
        // The wait covers the first use of the image; the transition chains from it.
        waits: vec![Wait {
            target: WaitTarget::Binary(acquired),
            stages: cao,
        }],
        commands: vec![
            Command::Pass(0),
            images(vec![img_barrier(
                0,
                L::UNDEFINED,
                L::COLOR_ATTACHMENT_OPTIMAL,
                scopes((cao, A::NONE), (cao, A::COLOR_ATTACHMENT_WRITE)),
            )]),
            Command::Pass(1),
            images(vec![img_barrier(
                0,
                L::COLOR_ATTACHMENT_OPTIMAL,
                L::PRESENT_SRC_KHR,
                scopes((cao, A::COLOR_ATTACHMENT_WRITE), (cao, A::NONE)),
            )]),
            Command::Pass(2),
        ],
        signal: last_signal(),
        binary_signals: vec![(rendered, cao)],
    };
    assert_eq!(p.queues[0].batches, vec![expect]);
}

#[test]
fn write_after_read_is_an_execution_dependency() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf")],
        vec![
            pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)]),
            pass("overwrite", 0, &[(0, Access::TRANSFER_WRITE)]),
        ],
    );
    let cmds = &p.queues[0].batches[0].commands;
    // Source scope: the read's stage, no access to make available (the write already was).
    assert_eq!(
        cmds[3],
        buffers(vec![buf_barrier(
            0,
            scopes(
                (S::COMPUTE_SHADER, A::NONE),
                (S::ALL_TRANSFER, A::TRANSFER_WRITE)
            )
        )])
    );
    assert_eq!(cmds.len(), 5);
}

#[test]
fn layout_transition_after_reads_keeps_destination_access() {
    // Simple Vulkan Synchronization issue 19: a transition after reads is a write, so the
    // destination access must be set.
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("sample", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
            pass("copy-out", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    let cmds = &p.queues[0].batches[0].commands;
    let expect = img_barrier(
        0,
        L::SHADER_READ_ONLY_OPTIMAL,
        L::TRANSFER_SRC_OPTIMAL,
        scopes(
            (S::FRAGMENT_SHADER, A::NONE),
            (S::ALL_TRANSFER, A::TRANSFER_READ),
        ),
    );
    assert_eq!(cmds[4], images(vec![expect]));
    assert!(!expect.scopes.dst_access.is_empty());
}

#[test]
fn resource_left_on_another_family_by_an_earlier_graph_is_released_there_first() {
    let earlier = SegmentState {
        layout: L::GENERAL,
        defined: true,
        owner: Some(1),
        write: Some(Recorded {
            queue: 1,
            value: Some(5),
            stages: S::COMPUTE_SHADER,
            access: A::SHADER_STORAGE_WRITE,
        }),
        reads: vec![],
    };
    let p = run(
        three_families(),
        vec![image("img").with_state(earlier)],
        vec![pass(
            "sample",
            0,
            &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)],
        )],
    );
    let release = Scopes {
        families: Some((1, 0)),
        ..scopes(
            (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
            (S::COMPUTE_SHADER, A::NONE),
        )
    };
    let acquire = Scopes {
        families: Some((1, 0)),
        ..scopes(
            (S::FRAGMENT_SHADER, A::NONE),
            (S::FRAGMENT_SHADER, A::SHADER_SAMPLED_READ),
        )
    };
    // A release-only batch on the old queue: submission order covers the earlier write there.
    assert_eq!(
        p.queues[1].batches,
        vec![Batch {
            waits: vec![],
            commands: vec![images(vec![img_barrier(
                0,
                L::GENERAL,
                L::SHADER_READ_ONLY_OPTIMAL,
                release
            )])],
            signal: last_signal(),
            binary_signals: vec![]
        }]
    );
    assert_eq!(
        p.queues[0].batches,
        vec![Batch {
            waits: vec![Wait {
                target: WaitTarget::Batch { queue: 1, batch: 0 },
                stages: S::ALL_COMMANDS
            }],
            commands: vec![
                images(vec![img_barrier(
                    0,
                    L::GENERAL,
                    L::SHADER_READ_ONLY_OPTIMAL,
                    acquire
                )]),
                Command::Pass(0)
            ],
            signal: last_signal(),
            binary_signals: vec![],
        }]
    );
    // The final state remembers this execution's graphics timeline value.
    let fin = &p.final_states[0][0].1;
    assert_eq!(fin.owner, Some(0));
    assert_eq!(fin.reads[0].queue, 0);
    assert_eq!(fin.reads[0].value, None);
}
