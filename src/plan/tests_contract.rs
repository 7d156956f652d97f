//! Scenario tests of the synchronization contract's rules: the exact barriers and semaphores
//! of small plans on fake queue setups. No GPU. The helpers are those of `tests.rs`.

use super::*;

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
