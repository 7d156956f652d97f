//! Scheduling and culling on fake queue setups: the order taken, the barrier commands that
//! result, and that every scheduled plan verifies. No GPU.

use crate::plan::regroup::join_barriers;
use crate::plan::*;
use crate::Access;
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

fn bytes(offset: u64, size: u64) -> SubRange {
    SubRange::Buffer(BufferRange { offset, size })
}

fn one_queue(resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> PlanInput {
    PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources,
        passes,
    }
}

/// Plans `input` in program order and with `schedule`; both must verify. Returns the
/// scheduled plan.
fn scheduled(input: &PlanInput, schedule: Schedule) -> Plan {
    let in_order = plan(input).unwrap();
    in_order
        .verify()
        .unwrap_or_else(|v| panic!("{v:?}\n{in_order}"));
    // The reordered plan itself, which the fallback to program order would hide.
    let p = plan_scheduled(input, schedule.without_fallback()).unwrap();
    p.verify().unwrap_or_else(|v| panic!("{v:?}\n{p}"));
    p
}

fn order(input: &PlanInput) -> Vec<usize> {
    scheduled(input, Schedule::REORDER).order
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
    }
}

const WRITTEN: (S, A) = (S::ALL_TRANSFER, A::TRANSFER_WRITE);
const COPY_READ: (S, A) = (S::COPY, A::TRANSFER_READ);

/// Two chains inserted one after the other: the writers go first, then one barrier command
/// serves both readers.
#[test]
fn two_chains_share_one_barrier_command() {
    let input = one_queue(
        buffers(&["a", "a'", "b", "b'"]),
        vec![
            pass("a0", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("a1", 0, &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)]),
            pass("b0", 0, &[(2, Access::TRANSFER_WRITE)]),
            pass("b1", 0, &[(2, Access::COPY_READ), (3, Access::COPY_WRITE)]),
        ],
    );
    assert_eq!(plan(&input).unwrap().barrier_commands(), 2);
    let p = scheduled(&input, Schedule::REORDER);
    assert_eq!(p.order, [0, 2, 1, 3]);
    assert_eq!(
        p.queues[0].batches,
        vec![Batch {
            waits: vec![],
            commands: vec![
                Command::Pass(0),
                Command::Pass(2),
                Command::Barrier(BarrierCmd {
                    images: vec![],
                    buffers: vec![
                        buffer_barrier(0, WRITTEN, COPY_READ),
                        buffer_barrier(2, WRITTEN, COPY_READ),
                    ],
                }),
                Command::Pass(1),
                Command::Pass(3),
            ],
            signal: Some(S::ALL_COMMANDS),
            binary_signals: vec![],
        }]
    );
    assert_eq!(p.moved_before(), [None, None, Some(1), None]);
    assert_eq!(
        p.to_string(),
        "queue `gfx` (family 0):
  batch 0:
    pass   `a0`
    pass   `b0` (moved before `a1`)
    barrier
      buffer `a` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
      buffer `b` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
    pass   `a1`
    pass   `b1`
    signal timeline at ALL_COMMANDS
"
    );
    // The same final states as program order.
    assert_eq!(p.final_states, plan(&input).unwrap().final_states);
}

/// Program order as a schedule is exactly `plan`.
#[test]
fn program_order_schedule_is_the_plain_plan() {
    let input = one_queue(
        buffers(&["a", "b"]),
        vec![
            pass("w", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("r", 0, &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)]),
            pass("w2", 0, &[(0, Access::TRANSFER_WRITE)]),
        ],
    );
    let a = plan(&input).unwrap();
    let b = plan_scheduled(&input, Schedule::PROGRAM_ORDER).unwrap();
    assert_eq!(a.queues, b.queues);
    assert_eq!(a.final_states, b.final_states);
    assert_eq!((a.order, b.order), (vec![0, 1, 2], vec![0, 1, 2]));
}

/// Writes and reads of overlapping bytes keep their order; disjoint bytes do not conflict.
#[test]
fn overlapping_ranges_keep_their_order_and_disjoint_ones_move() {
    let with_last = |range: SubRange| {
        one_queue(
            buffers(&["a"]),
            vec![
                PassDecl::new("write low", 0)
                    .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(bytes(0, 128))),
                PassDecl::new("read low", 0)
                    .with_use(UseDecl::new(0, Access::COPY_READ).range(bytes(0, 128))),
                PassDecl::new("write", 0)
                    .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(range)),
            ],
        )
    };
    assert_eq!(order(&with_last(bytes(128, 128))), [0, 2, 1]);
    // Overlapping the read (WAR) and the first write (WAW): last.
    assert_eq!(order(&with_last(bytes(64, 128))), [0, 1, 2]);
}

/// An image read in another layout than an earlier read stays after it; in the same layout
/// it may move.
#[test]
fn image_reads_in_two_layouts_keep_their_order() {
    let with_last = |a: Access| {
        let mut resources = buffers(&["x"]);
        resources.push(image("img"));
        one_queue(
            resources,
            vec![
                pass("write x", 0, &[(0, Access::TRANSFER_WRITE)]),
                pass(
                    "read both",
                    0,
                    &[
                        (0, Access::COPY_READ),
                        (1, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    ],
                ),
                pass("read img", 0, &[(1, a)]),
            ],
        )
    };
    assert_eq!(order(&with_last(Access::COPY_READ)), [0, 1, 2]);
    assert_eq!(
        order(&with_last(Access::COMPUTE_SHADER_SAMPLED_READ)),
        [0, 2, 1]
    );
}

/// Reads of an EXCLUSIVE resource on two families keep their order (an ownership transfer);
/// of a CONCURRENT one they may move. Two queues of one family never transfer.
#[test]
fn exclusive_reads_on_two_families_keep_their_order() {
    let input = |concurrent: bool, second_family: u32| {
        let mut resources = buffers(&["x", "y"]);
        if concurrent {
            resources[1] = resources[1].clone().concurrent();
        }
        PlanInput {
            queues: vec![
                QueueDecl::new("gfx", 0, GFX),
                QueueDecl::new("other", second_family, GFX),
            ],
            resources,
            passes: vec![
                pass("write x", 0, &[(0, Access::TRANSFER_WRITE)]),
                pass(
                    "read x, y",
                    0,
                    &[(0, Access::COPY_READ), (1, Access::COPY_READ)],
                ),
                pass("read y", 1, &[(1, Access::COPY_READ)]),
            ],
        }
    };
    assert_eq!(order(&input(false, 1)), [0, 1, 2]);
    assert_eq!(order(&input(true, 1)), [0, 2, 1]);
    assert_eq!(order(&input(false, 0)), [0, 2, 1]);
}

/// Binary semaphores, presents and passes that declare nothing stay where they were inserted
/// relative to every other pass.
#[test]
fn pinned_passes_stay_in_place() {
    let (acquired, rendered) = (vk::Semaphore::from_raw(1), vk::Semaphore::from_raw(2));
    let swap = ResourceDecl::image("swap", 1, 1, vk::ImageUsageFlags::TRANSFER_DST);
    let mut resources = buffers(&["x", "y"]);
    resources.push(swap);
    let pinned_ones = [
        PassDecl::new("declares nothing", 0),
        pass("signals", 0, &[(1, Access::TRANSFER_WRITE)]).with_signal(BinarySignalDecl {
            semaphore: rendered,
            stages: None,
        }),
        PassDecl::new("acquire", 0)
            .with_use(UseDecl::new(2, Access::TRANSFER_WRITE).discard())
            .with_wait(BinaryWaitDecl {
                semaphore: acquired,
                guards: vec![2],
                stages: None,
            }),
    ];
    for pinned in pinned_ones {
        let input = one_queue(
            resources.clone(),
            vec![
                pass("write x", 0, &[(0, Access::TRANSFER_WRITE)]),
                pass("read x", 0, &[(0, Access::COPY_READ)]),
                pinned.clone(),
                pass("write y", 0, &[(1, Access::COPY_WRITE)]),
            ],
        );
        assert_eq!(order(&input), [0, 1, 2, 3], "{}", pinned.name);
    }
    // A present: the image is written, then presented; the last pass stays after it.
    let input = one_queue(
        resources,
        vec![
            pass("draw", 0, &[(2, Access::TRANSFER_WRITE)]),
            pass("write x", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("present", 0, &[(2, Access::PRESENT)]).with_signal(BinarySignalDecl {
                semaphore: rendered,
                stages: None,
            }),
            pass("write y", 0, &[(1, Access::TRANSFER_WRITE)]),
        ],
    );
    assert_eq!(order(&input), [0, 1, 2, 3]);
}

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

/// Within a level, work another queue waits on comes first and work that waits on another
/// queue last.
#[test]
fn awaited_work_first_waiting_work_last() {
    let input = PlanInput {
        queues: vec![
            QueueDecl::new("gfx", 0, GFX),
            QueueDecl::new("compute", 0, GFX),
        ],
        resources: buffers(&["a", "b", "c"]),
        passes: vec![
            pass("local", 0, &[(1, Access::TRANSFER_WRITE)]),
            pass("awaited", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("write c", 1, &[(2, Access::TRANSFER_WRITE)]),
            pass("waits", 1, &[(0, Access::COPY_READ)]),
            pass("reads c", 1, &[(2, Access::COPY_READ)]),
        ],
    };
    let p = scheduled(&input, Schedule::REORDER);
    assert_eq!(p.order, [1, 0, 2, 4, 3]);
    // `awaited` ends its own batch, so compute's wait is on it alone; compute waits last.
    let gfx: Vec<Vec<Command>> = p.queues[0]
        .batches
        .iter()
        .map(|b| b.commands.clone())
        .collect();
    assert_eq!(gfx, [vec![Command::Pass(1)], vec![Command::Pass(0)]], "{p}");
    let compute = &p.queues[1].batches;
    assert_eq!(compute.len(), 2, "{p}");
    assert_eq!(
        compute[1].waits,
        vec![Wait {
            target: WaitTarget::Batch { queue: 0, batch: 0 },
            stages: S::COPY,
        }]
    );
    assert_eq!(compute[1].commands, vec![Command::Pass(3)]);
}

fn transient_buffers(names: &[&str]) -> Vec<ResourceDecl> {
    buffers(names)
        .into_iter()
        .map(|r| r.transient(TransientMemory::buffer(64, 4, 1)))
        .collect()
}

/// Culling walks back: a pass whose transient output nobody reads goes, and then so does
/// the pass whose output only it read.
#[test]
fn culling_drops_chains_nobody_reads() {
    let mut resources = transient_buffers(&["t1", "t2"]);
    resources.extend(buffers(&["user"]));
    let base = vec![
        pass("make t1", 0, &[(0, Access::TRANSFER_WRITE)]),
        pass(
            "t1 to t2",
            0,
            &[(0, Access::COPY_READ), (1, Access::COPY_WRITE)],
        ),
        pass("write user", 0, &[(2, Access::TRANSFER_WRITE)]),
    ];
    let cull = Schedule::PROGRAM_ORDER.with_culling();
    let input = one_queue(resources.clone(), base.clone());
    let p = scheduled(&input, cull);
    assert_eq!((p.order.clone(), p.culled()), (vec![2], vec![0, 1]));
    assert!(
        p.to_string()
            .ends_with("culled `make t1`\nculled `t1 to t2`\n"),
        "{p}"
    );
    assert_eq!(p.barrier_commands(), 0);
    // A later pass that reads t2 into a user resource keeps the whole chain.
    let mut used = base;
    used.push(pass(
        "t2 to user",
        0,
        &[(1, Access::COPY_READ), (2, Access::COPY_WRITE)],
    ));
    assert_eq!(
        scheduled(&one_queue(resources.clone(), used), cull).order,
        [0, 1, 2, 3]
    );
    // (A transient's first use writes all of it, so a chain can never hang on bytes of a
    // transient nobody wrote: the planner refuses such an input.)
}

/// What culling never drops: passes on user-owned resources, passes that signal or declare
/// nothing; and with culling and reordering together, the kept passes are reordered.
#[test]
fn culling_keeps_what_someone_may_see() {
    let mut resources = transient_buffers(&["t"]);
    resources.extend(buffers(&["user", "other"]));
    let input = one_queue(
        resources,
        vec![
            pass("write t", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("t signals", 0, &[(0, Access::TRANSFER_WRITE)]).with_signal(BinarySignalDecl {
                semaphore: vk::Semaphore::from_raw(9),
                stages: None,
            }),
            PassDecl::new("declares nothing", 0),
            pass("write user", 0, &[(1, Access::TRANSFER_WRITE)]),
            pass("read user", 0, &[(1, Access::COPY_READ)]),
            pass("write other", 0, &[(2, Access::TRANSFER_WRITE)]),
            pass("write t again", 0, &[(0, Access::TRANSFER_WRITE)]),
        ],
    );
    // `write t` is kept: `t signals` is kept and writes the same bytes (a partial write
    // would keep some of them).
    let p = scheduled(&input, Schedule::PROGRAM_ORDER.with_culling());
    assert_eq!(p.culled(), [6]);
    let p = scheduled(&input, Schedule::REORDER.with_culling());
    assert_eq!(p.order, [0, 1, 2, 3, 5, 4]);
}

/// The barriers of readers of one write at different stages become one entry with both
/// stages, in one command.
#[test]
fn reads_at_two_stages_share_one_entry() {
    let input = one_queue(
        buffers(&["a"]),
        vec![
            pass("write", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("vertex", 0, &[(0, Access::VERTEX_SHADER_SAMPLED_READ)]),
            pass("compute", 0, &[(0, Access::COMPUTE_SHADER_READ)]),
        ],
    );
    let mut input = input;
    input.resources[0] = ResourceDecl::buffer(
        "a",
        256,
        usage() | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
    );
    assert_eq!(plan(&input).unwrap().barrier_commands(), 2);
    let p = scheduled(&input, Schedule::REORDER);
    assert_eq!(
        p.queues[0].batches[0].commands,
        vec![
            Command::Pass(0),
            Command::Barrier(BarrierCmd {
                images: vec![],
                buffers: vec![buffer_barrier(
                    0,
                    WRITTEN,
                    (
                        S::VERTEX_SHADER | S::COMPUTE_SHADER,
                        A::SHADER_SAMPLED_READ | A::SHADER_STORAGE_READ
                    )
                )],
            }),
            Command::Pass(1),
            Command::Pass(2),
        ]
    );
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
