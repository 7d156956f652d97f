//! Scenario tests: the exact barriers and semaphores for the Khronos synchronization
//! examples, on fake queue setups. No GPU.

use super::*;
use crate::error::Error;
use ash::vk;
use ash::vk::Handle;
use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

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

// ---------------------------------------------------------------------------------------------
// Contract rules
// ---------------------------------------------------------------------------------------------

#[test]
fn reads_in_the_same_layout_get_no_barrier() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("a", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
            pass("b", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ],
    );
    let cmds = &p.queues[0].batches[0].commands;
    assert_eq!(cmds.len(), 5, "{p}");
    assert_eq!(cmds[4], Command::Pass(2));
    assert_eq!(cmds[3], Command::Pass(1));
}

#[test]
fn a_read_at_a_new_stage_still_gets_visibility() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("frag", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
            pass("comp", 0, &[(0, Access::COMPUTE_SHADER_SAMPLED_READ)]),
        ],
    );
    let cmds = &p.queues[0].batches[0].commands;
    // Chained from the transition before `frag`, which already made the write available.
    let expect = img_barrier(
        0,
        L::SHADER_READ_ONLY_OPTIMAL,
        L::SHADER_READ_ONLY_OPTIMAL,
        scopes(
            (S::FRAGMENT_SHADER, A::NONE),
            (S::COMPUTE_SHADER, A::SHADER_SAMPLED_READ),
        ),
    );
    assert_eq!(cmds[4], images(vec![expect]));
}

#[test]
fn one_barrier_command_per_pass_boundary() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("a"), buffer("b")],
        vec![
            pass(
                "write",
                0,
                &[
                    (0, Access::COMPUTE_SHADER_WRITE),
                    (1, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "read",
                0,
                &[(0, Access::COMPUTE_SHADER_READ), (1, Access::TRANSFER_READ)],
            ),
        ],
    );
    let cmds = &p.queues[0].batches[0].commands;
    assert_eq!(cmds.len(), 4);
    let Command::Barrier(b) = &cmds[2] else {
        panic!("{p}")
    };
    assert_eq!((b.images.len(), b.buffers.len()), (1, 1));
}

#[test]
fn same_family_queues_use_a_semaphore_and_no_transfer() {
    let queues = vec![
        QueueDecl::new("gfx0", 0, GFX),
        QueueDecl::new("gfx1", 0, GFX),
    ];
    let p = run(
        queues,
        vec![buffer("buf")],
        vec![
            pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("read", 1, &[(0, Access::COMPUTE_SHADER_READ)]),
        ],
    );
    assert_eq!(
        p.queues[0].batches,
        vec![Batch {
            waits: vec![],
            commands: vec![Command::Pass(0)],
            signal: last_signal(),
            binary_signals: vec![]
        }]
    );
    assert_eq!(
        p.queues[1].batches,
        vec![Batch {
            waits: vec![Wait {
                target: WaitTarget::Batch { queue: 0, batch: 0 },
                stages: S::COMPUTE_SHADER
            }],
            commands: vec![Command::Pass(1)],
            signal: last_signal(),
            binary_signals: vec![]
        }]
    );
}

#[test]
fn concurrent_resources_never_transfer_ownership() {
    let p = run(
        three_families(),
        vec![buffer("buf").concurrent()],
        vec![
            pass("write", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("read", 0, &[(0, Access::VERTEX_BUFFER)]),
        ],
    );
    assert_eq!(p.queues[1].batches[0].commands, vec![Command::Pass(0)]);
    assert_eq!(p.queues[0].batches[0].commands, vec![Command::Pass(1)]);
    assert_eq!(
        p.queues[0].batches[0].waits,
        vec![Wait {
            target: WaitTarget::Batch { queue: 1, batch: 0 },
            stages: S::VERTEX_ATTRIBUTE_INPUT
        }]
    );
}

#[test]
fn discard_skips_the_transfer_but_still_waits_for_readers() {
    let p = run(
        three_families(),
        vec![image("img")],
        vec![
            pass("write", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("read", 1, &[(0, Access::COMPUTE_SHADER_READ)]),
            PassDecl::new("overwrite", 0)
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard()),
        ],
    );
    // Compute keeps the image: its one barrier orders the read after the write, and no
    // release follows the read.
    assert_eq!(
        p.queues[1].batches,
        vec![Batch {
            waits: vec![],
            commands: vec![
                images(vec![img_barrier(
                    0,
                    L::UNDEFINED,
                    L::GENERAL,
                    scopes(
                        (S::NONE, A::NONE),
                        (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE)
                    )
                )]),
                Command::Pass(0),
                images(vec![img_barrier(
                    0,
                    L::GENERAL,
                    L::GENERAL,
                    scopes(
                        (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE),
                        (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ)
                    )
                )]),
                Command::Pass(1),
            ],
            signal: Some(S::ALL_COMMANDS),
            binary_signals: vec![],
        }]
    );
    let gfx = &p.queues[0].batches[0];
    assert_eq!(
        gfx.waits,
        vec![Wait {
            target: WaitTarget::Batch { queue: 1, batch: 0 },
            stages: S::ALL_TRANSFER
        }]
    );
    // From UNDEFINED, chained from the wait.
    assert_eq!(
        gfx.commands[0],
        images(vec![img_barrier(
            0,
            L::UNDEFINED,
            L::TRANSFER_DST_OPTIMAL,
            scopes(
                (S::ALL_TRANSFER, A::NONE),
                (S::ALL_TRANSFER, A::TRANSFER_WRITE)
            )
        )])
    );
}

#[test]
fn a_partial_write_without_discard_keeps_the_old_contents() {
    let p = run(
        three_families(),
        vec![buffer("buf")],
        vec![
            pass("write", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            PassDecl::new("patch", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 0,
                    size: 16,
                }),
            )),
        ],
    );
    // Only the patched bytes move to family 0, with a proper release and acquire.
    let Command::Barrier(rel) = &p.queues[1].batches[0].commands[1] else {
        panic!("{p}")
    };
    assert_eq!(
        rel.buffers[0].range,
        BufferRange {
            offset: 0,
            size: 16
        }
    );
    assert_eq!(rel.buffers[0].scopes.families, Some((1, 0)));
    let Command::Barrier(acq) = &p.queues[0].batches[0].commands[0] else {
        panic!("{p}")
    };
    assert_eq!(acq.buffers[0].scopes.families, Some((1, 0)));
    // The rest of the buffer still belongs to family 1.
    let fin = &p.final_states[0];
    assert_eq!(
        fin.iter()
            .map(|(c, s)| (c.clone(), s.owner))
            .collect::<Vec<_>>(),
        vec![(0..16, Some(0)), (16..256, Some(1))]
    );
}

#[test]
fn signal_as_early_and_wait_as_late_as_possible() {
    let queues = vec![
        QueueDecl::new("gfx", 0, GFX),
        QueueDecl::new("compute", 1, COMPUTE),
    ];
    let p = run(
        queues,
        vec![buffer("a").concurrent(), buffer("b"), buffer("c")],
        vec![
            pass("produce", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("more-compute", 1, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass("unrelated", 0, &[(2, Access::TRANSFER_WRITE)]),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    // Compute signals right after `produce`, not after `more-compute`.
    let c = &p.queues[1].batches;
    assert_eq!(c.len(), 2, "{p}");
    assert_eq!(c[0].commands, vec![Command::Pass(0)]);
    assert_eq!(c[0].signal, Some(S::COMPUTE_SHADER));
    // Graphics runs `unrelated` before waiting.
    let g = &p.queues[0].batches;
    assert_eq!(g.len(), 2, "{p}");
    assert!(g[0].waits.is_empty());
    assert_eq!(g[0].commands, vec![Command::Pass(2)]);
    assert_eq!(
        g[1].waits,
        vec![Wait {
            target: WaitTarget::Batch { queue: 1, batch: 0 },
            stages: S::ALL_TRANSFER
        }]
    );
}

#[test]
fn a_batch_waits_once_per_queue_on_the_highest_value() {
    let queues = vec![
        QueueDecl::new("gfx", 0, GFX),
        QueueDecl::new("gfx2", 0, GFX),
    ];
    let p = run(
        queues,
        vec![buffer("a"), buffer("b")],
        vec![
            pass("wa", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("wb", 1, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "read-both",
                0,
                &[(0, Access::COMPUTE_SHADER_READ), (1, Access::TRANSFER_READ)],
            ),
        ],
    );
    let g = &p.queues[0].batches;
    assert_eq!(g.len(), 1);
    assert_eq!(
        g[0].waits,
        vec![Wait {
            target: WaitTarget::Batch { queue: 1, batch: 0 },
            stages: S::COMPUTE_SHADER | S::ALL_TRANSFER
        }]
    );
    assert_eq!(p.queues[1].batches.len(), 1, "{p}");
}

#[test]
fn same_queue_across_graphs_needs_only_a_barrier() {
    let earlier = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 0,
            value: Some(3),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![],
    };
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf").with_state(earlier)],
        vec![pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)])],
    );
    let b = &p.queues[0].batches[0];
    assert!(b.waits.is_empty());
    assert_eq!(
        b.commands[0],
        buffers(vec![buf_barrier(
            0,
            scopes(
                (S::ALL_TRANSFER, A::TRANSFER_WRITE),
                (S::COMPUTE_SHADER, A::SHADER_STORAGE_READ)
            )
        )])
    );
}

#[test]
fn another_queue_across_graphs_waits_on_the_recorded_value() {
    let queues = vec![
        QueueDecl::new("gfx", 0, GFX),
        QueueDecl::new("gfx2", 0, GFX),
    ];
    let earlier = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 1,
            value: Some(7),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![],
    };
    let p = run(
        queues,
        vec![buffer("buf").with_state(earlier)],
        vec![pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)])],
    );
    let b = &p.queues[0].batches[0];
    assert_eq!(
        b.waits,
        vec![Wait {
            target: WaitTarget::Value { queue: 1, value: 7 },
            stages: S::COMPUTE_SHADER
        }]
    );
    assert_eq!(b.commands, vec![Command::Pass(0)]);
    assert!(p.queues[1].batches.is_empty());
}

#[test]
fn one_vkqueue_for_two_logical_queues_means_barriers_only() {
    // On lavapipe, graphics and async compute are one VkQueue: the builder passes one queue.
    let p = run(
        vec![QueueDecl::new("gfx+compute", 0, GFX)],
        vec![image("img")],
        vec![
            pass("sim", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("copy", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_eq!(p.batch_count(), 1);
    assert_eq!(p.semaphore_waits(), 0);
    assert_eq!(p.barrier_commands(), 2);
}

#[test]
fn reads_on_two_queues_then_a_transfer_releases_after_the_latest() {
    // Written on graphics, read on two graphics-family queues, then wanted by compute.
    let queues = vec![
        QueueDecl::new("gfx0", 0, GFX),
        QueueDecl::new("gfx1", 0, GFX),
        QueueDecl::new("compute", 1, COMPUTE),
    ];
    let p = run(
        queues,
        vec![buffer("buf")],
        vec![
            pass("write", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("read0", 0, &[(0, Access::TRANSFER_READ)]),
            pass("read1", 1, &[(0, Access::COMPUTE_SHADER_READ)]),
            pass("modify", 2, &[(0, Access::COMPUTE_SHADER_READ_WRITE)]),
        ],
    );
    // The release is on gfx1 (latest access), after waiting for gfx0's read.
    let rel_batch = p.queues[1].batches.last().unwrap();
    let Some(Command::Barrier(rel)) = rel_batch.commands.last() else {
        panic!("{p}")
    };
    assert_eq!(rel.buffers[0].scopes.families, Some((0, 1)));
    let waits_on_gfx0 = p.queues[1]
        .batches
        .iter()
        .flat_map(|b| &b.waits)
        .any(|w| matches!(w.target, WaitTarget::Batch { queue: 0, .. }));
    assert!(waits_on_gfx0, "{p}");
    let c = &p.queues[2].batches[0];
    assert_eq!(c.waits.len(), 1);
    assert!(matches!(
        c.waits[0].target,
        WaitTarget::Batch { queue: 1, .. }
    ));
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

fn plan_err(queues: Vec<QueueDecl>, resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> Error {
    plan(&PlanInput {
        queues,
        resources,
        passes,
    })
    .expect_err("should fail")
}

#[test]
fn conflicting_uses_in_one_pass_are_rejected() {
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![pass(
            "bad",
            0,
            &[
                (0, Access::TRANSFER_READ),
                (0, Access::FRAGMENT_SHADER_SAMPLED_READ),
            ],
        )],
    );
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("b")],
        vec![pass(
            "bad",
            0,
            &[
                (0, Access::TRANSFER_WRITE),
                (0, Access::COMPUTE_SHADER_READ),
            ],
        )],
    );
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");
    // Disjoint ranges are fine.
    let half = |o| {
        SubRange::Buffer(BufferRange {
            offset: o,
            size: 128,
        })
    };
    let ok = plan(&PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources: vec![buffer("b")],
        passes: vec![PassDecl::new("ok", 0)
            .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(half(0)))
            .with_use(UseDecl::new(0, Access::TRANSFER_READ).range(half(128)))],
    });
    assert!(ok.is_ok());
}

#[test]
fn a_queue_without_the_capability_is_rejected() {
    let e = plan_err(
        three_families(),
        vec![image("img")],
        vec![pass("draw", 2, &[(0, Access::COLOR_ATTACHMENT_WRITE)])],
    );
    assert!(matches!(e, Error::QueueCapability { .. }), "{e}");
    assert!(e.to_string().contains("transfer"));
}

#[test]
fn usage_flags_are_checked() {
    let no_storage = ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::SAMPLED);
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![no_storage],
        vec![pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)])],
    );
    assert!(matches!(e, Error::UsageNotAllowed { .. }), "{e}");
}

#[test]
fn ranges_outside_the_resource_are_rejected() {
    let q = || vec![QueueDecl::new("gfx", 0, GFX)];
    let e = plan_err(
        q(),
        vec![buffer("b")],
        vec![
            PassDecl::new("p", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 200,
                    size: 100,
                }),
            )),
        ],
    );
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");
    let e = plan_err(
        q(),
        vec![image("i")],
        vec![PassDecl::new("p", 0).with_use(
            UseDecl::new(0, Access::TRANSFER_WRITE).range(SubRange::Image(ImageRange::mip(1, 1))),
        )],
    );
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");
}

#[test]
fn bad_indices_are_rejected() {
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![],
        vec![pass("p", 0, &[(3, Access::TRANSFER_WRITE)])],
    );
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let e = plan_err(vec![], vec![], vec![pass("p", 1, &[])]);
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn initial_states_naming_unknown_queues_are_rejected() {
    let bad = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 5,
            value: Some(1),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![],
    };
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("b").with_state(bad)],
        vec![pass("p", 0, &[(0, Access::TRANSFER_READ)])],
    );
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn mip_levels_are_tracked_separately() {
    let r = ResourceDecl::image("mips", 3, 1, all_image_usage());
    let mip = |m| SubRange::Image(ImageRange::mip(m, 1));
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![r],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            PassDecl::new("blit1", 0)
                .with_use(UseDecl::new(0, Access::TRANSFER_READ).range(mip(0)))
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(mip(1))),
        ],
    );
    let Command::Barrier(b) = &p.queues[0].batches[0].commands[2] else {
        panic!("{p}")
    };
    // Mip 0 becomes a transfer source; mip 1 stays a destination (WAW, same layout).
    assert_eq!(b.images.len(), 2, "{p}");
    assert_eq!(b.images[0].range, ImageRange::mip(0, 1));
    assert_eq!(b.images[0].new_layout, L::TRANSFER_SRC_OPTIMAL);
    assert_eq!(b.images[1].range, ImageRange::mip(1, 1));
    assert_eq!(
        (b.images[1].old_layout, b.images[1].new_layout),
        (L::TRANSFER_DST_OPTIMAL, L::TRANSFER_DST_OPTIMAL)
    );
}

// ---------------------------------------------------------------------------------------------
// Regressions found by the verifier (shrunk random cases)
// ---------------------------------------------------------------------------------------------

/// Each acquire names exactly the range of one release: neighbouring segments released at
/// different points are not merged into one acquire.
#[test]
fn acquires_match_releases_range_for_range() {
    let p = run(
        vec![
            QueueDecl::new("gfx", 0, GFX),
            QueueDecl::new("compute", 1, COMPUTE),
        ],
        vec![ResourceDecl::buffer(
            "buf",
            128,
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
        )],
        vec![
            PassDecl::new("a", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 0,
                    size: 32,
                }),
            )),
            PassDecl::new("b", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 32,
                    size: 96,
                }),
            )),
            pass("c", 1, &[(0, Access::COMPUTE_SHADER_READ)]),
        ],
    );
    let transfers = |q: usize| -> Vec<BufferRange> {
        let mut v: Vec<BufferRange> = p.queues[q]
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .filter_map(|c| match c {
                Command::Barrier(b) => Some(
                    b.buffers
                        .iter()
                        .filter(|x| x.scopes.families.is_some())
                        .map(|x| x.range)
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .flatten()
            .collect();
        v.sort_by_key(|r| r.offset);
        v
    };
    let expect = vec![
        BufferRange {
            offset: 0,
            size: 32,
        },
        BufferRange {
            offset: 32,
            size: 96,
        },
    ];
    assert_eq!(transfers(0), expect, "releases\n{p}");
    assert_eq!(transfers(1), expect, "acquires\n{p}");
}

/// A write after an earlier graph's write and read on the same queue names both in its
/// source scope: the earlier graph's chain is not part of this plan.
#[test]
fn a_write_after_an_earlier_graphs_write_and_read_orders_both() {
    let earlier = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 0,
            value: Some(3),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![Recorded {
            queue: 0,
            value: Some(3),
            stages: S::COPY,
            access: A::TRANSFER_READ,
        }],
    };
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf").with_state(earlier)],
        vec![PassDecl::new("fill2", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard())],
    );
    let b = &p.queues[0].batches[0];
    assert_eq!(
        b.commands[0],
        buffers(vec![buf_barrier(
            0,
            scopes(
                (S::COPY | S::ALL_TRANSFER, A::TRANSFER_WRITE),
                (S::ALL_TRANSFER, A::TRANSFER_WRITE)
            )
        )])
    );
    assert!(p.verify().is_ok(), "{p}");
}
