//! Scheduling and culling on fake queue setups: the order taken, the whole plan that results,
//! and that every scheduled plan verifies. (The join rules on hand-made commands and the
//! pinning of a present test private helpers: they stay in `src/schedule/tests.rs`.)

use super::*;

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

/// Two chains inserted one after the other: the writers go first, then one barrier command
/// serves both readers.
///
/// ```text
/// gfx:  [a0] --a--> [a1]      reordered:  [a0] [b0] --a, b--> [a1] [b1]
///       [b0] --b--> [b1]
/// ```
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
    assert_eq!(p.moved_before(), [None, None, Some(1), None]);
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `a0`
    pass   `b0` (moved before `a1`)
    barrier
      buffer `a` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `a1`, after `a0`
      buffer `b` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `b1`, after `b0`
    pass   `a1`
    pass   `b1`
    signal timeline at ALL_COMMANDS
"#
    );
    // The same final states as program order.
    assert_eq!(p.final_states, plan(&input).unwrap().final_states);
}

/// Program order as a schedule is exactly `plan`.
///
/// ```text
/// gfx:  [w] --a--> [r] --a (WAR)--> [w2]
/// ```
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
    assert_plan!(
        b,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `w`
    barrier
      buffer `a` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `r`, after `w`
    pass   `r`
    barrier
      buffer `a` bytes 0..256: COPY/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `w2`, after `r`
    pass   `w2`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(a.queues, b.queues);
    assert_eq!(a.final_states, b.final_states);
    assert_eq!((a.order, b.order), (vec![0, 1, 2], vec![0, 1, 2]));
}

/// Writes and reads of overlapping bytes keep their order; disjoint bytes do not conflict.
///
/// ```text
/// gfx:  [write low: 0..128] --> [read low: 0..128]   [write: 128..256 moves up, or 64..192 stays last]
/// ```
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
    let disjoint = scheduled(&with_last(bytes(128, 128)), Schedule::REORDER);
    assert_eq!(disjoint.order, [0, 2, 1]);
    assert_plan!(
        disjoint,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write low`
    pass   `write` (moved before `read low`)
    barrier
      buffer `a` bytes 0..128: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read low`, after `write low`
    pass   `read low`
    signal timeline at ALL_COMMANDS
"#
    );
    // Overlapping the read (WAR) and the first write (WAW): last.
    let overlapping = scheduled(&with_last(bytes(64, 128)), Schedule::REORDER);
    assert_eq!(overlapping.order, [0, 1, 2]);
    assert_plan!(
        overlapping,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write low`
    barrier
      buffer `a` bytes 0..128: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read low`, after `write low`
    pass   `read low`
    barrier
      buffer `a` bytes 64..128: COPY/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `write`, after `read low`
    pass   `write`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An image read in another layout than an earlier read stays after it; in the same layout
/// it may move.
///
/// ```text
/// gfx:  [write x] --x--> [read both: x, img sampled] --img--> [read img: copy (stays) or sampled (moves up)]
/// ```
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
    let other_layout = scheduled(&with_last(Access::COPY_READ), Schedule::REORDER);
    assert_eq!(other_layout.order, [0, 1, 2]);
    assert_plan!(
        other_layout,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> SHADER_READ_ONLY_OPTIMAL, NONE/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `read both`, with nothing before it
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read both`, after `write x`
    pass   `read both`
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_SRC_OPTIMAL, FRAGMENT_SHADER/NONE -> COPY/TRANSFER_READ
        why: for `read img`, after `read both`
    pass   `read img`
    signal timeline at ALL_COMMANDS
"#
    );
    let same_layout = scheduled(
        &with_last(Access::COMPUTE_SHADER_SAMPLED_READ),
        Schedule::REORDER,
    );
    assert_eq!(same_layout.order, [0, 2, 1]);
    assert_plan!(
        same_layout,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> SHADER_READ_ONLY_OPTIMAL, NONE/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `read img`, with nothing before it
    pass   `read img` (moved before `read both`)
    barrier
      image  `img` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `read both`, after `read img`
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read both`, after `write x`
    pass   `read both`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Reads of an EXCLUSIVE resource on two families keep their order (an ownership transfer);
/// of a CONCURRENT one they may move. Two queues of one family never transfer.
///
/// ```text
/// gfx:    [write x] --x--> [read x, y]
/// other:                   [read y]      (stays after `read x, y` only for EXCLUSIVE y on another family)
/// ```
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
    let exclusive = scheduled(&input(false, 1), Schedule::REORDER);
    assert_eq!(exclusive.order, [0, 1, 2]);
    assert_plan!(
        exclusive,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x, y`, after `write x`
    pass   `read x, y`
    signal timeline at ALL_COMMANDS
queue `other` (family 1):
  batch 0:
    pass   `read y`
    signal timeline at ALL_COMMANDS
"#
    );
    let concurrent = scheduled(&input(true, 1), Schedule::REORDER);
    assert_eq!(concurrent.order, [0, 2, 1]);
    assert_plan!(
        concurrent,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x, y`, after `write x`
    pass   `read x, y`
    signal timeline at ALL_COMMANDS
queue `other` (family 1):
  batch 0:
    pass   `read y` (moved before `read x, y`)
    signal timeline at ALL_COMMANDS
"#
    );
    let one_family = scheduled(&input(false, 0), Schedule::REORDER);
    assert_eq!(one_family.order, [0, 2, 1]);
    assert_plan!(
        one_family,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x, y`, after `write x`
    pass   `read x, y`
    signal timeline at ALL_COMMANDS
queue `other` (family 0):
  batch 0:
    pass   `read y` (moved before `read x, y`)
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Binary semaphores, presents and passes that declare nothing stay where they were inserted
/// relative to every other pass.
///
/// ```text
/// gfx:  [write x] --x--> [read x] [pinned] [write y]
///       [draw] [write x] --swap--> [present] [write y]
/// ```
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
    let [nothing, signals, acquire] = pinned_ones.map(|pinned| {
        let input = one_queue(
            resources.clone(),
            vec![
                pass("write x", 0, &[(0, Access::TRANSFER_WRITE)]),
                pass("read x", 0, &[(0, Access::COPY_READ)]),
                pinned.clone(),
                pass("write y", 0, &[(1, Access::COPY_WRITE)]),
            ],
        );
        let p = scheduled(&input, Schedule::REORDER);
        assert_eq!(p.order, [0, 1, 2, 3], "{}", pinned.name);
        p
    });
    assert_plan!(
        nothing,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x`, after `write x`
    pass   `read x`
    pass   `declares nothing`
    pass   `write y`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        signals,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x`, after `write x`
    pass   `read x`
    pass   `signals`
    signal binary 0x2 at ALL_TRANSFER
  batch 1:
    barrier
      buffer `y` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_WRITE
        why: for `write y`, after `signals`
    pass   `write y`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        acquire,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write x`
    barrier
      buffer `x` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read x`, after `write x`
    pass   `read x`
  batch 1:
    wait   binary 0x1 at ALL_TRANSFER
    barrier
      image  `swap` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `acquire`, after the binary semaphore `acquire` waits on
    pass   `acquire`
    pass   `write y`
    signal timeline at ALL_COMMANDS
"#
    );
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
    let p = scheduled(&input, Schedule::REORDER);
    assert_eq!(p.order, [0, 1, 2, 3]);
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `swap` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `draw`, with nothing before it
    pass   `draw`
    pass   `write x`
    barrier
      image  `swap` mips 0+1 layers 0+1: TRANSFER_DST_OPTIMAL -> PRESENT_SRC_KHR, ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE
        why: for `present`, after `draw`
    pass   `present`
    signal binary 0x2 at ALL_TRANSFER
  batch 1:
    pass   `write y`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Within a level, work another queue waits on comes first and work that waits on another
/// queue last.
///
/// ```text
/// gfx:      [local] [awaited] --a--.
/// compute:  [write c] --c--> [reads c]  '--> [waits]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `awaited` (moved before `local`)
    signal timeline at ALL_TRANSFER
  batch 1:
    pass   `local`
    signal timeline at ALL_COMMANDS
queue `compute` (family 0):
  batch 0:
    pass   `write c`
    barrier
      buffer `c` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `reads c`, after `write c`
    pass   `reads c` (moved before `waits`)
  batch 1:
    wait   `gfx` timeline after its batch 0 at COPY
    pass   `waits`
    signal timeline at ALL_COMMANDS
"#
    );
}

fn transient_buffers(names: &[&str]) -> Vec<ResourceDecl> {
    buffers(names)
        .into_iter()
        .map(|r| r.transient(TransientMemory::buffer(64, 4, 1)))
        .collect()
}

/// Culling walks back: a pass whose transient output nobody reads goes, and then so does
/// the pass whose output only it read.
///
/// ```text
/// gfx:  [make t1] --t1--> [t1 to t2] --t2--> (nobody: both culled)   [write user]
///                                    --t2--> [t2 to user] (second plan: all kept)
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write user`
    signal timeline at ALL_COMMANDS
culled `make t1`
culled `t1 to t2`
"#
    );
    assert_eq!(p.barrier_commands(), 0);
    // A later pass that reads t2 into a user resource keeps the whole chain.
    let mut used = base;
    used.push(pass(
        "t2 to user",
        0,
        &[(1, Access::COPY_READ), (2, Access::COPY_WRITE)],
    ));
    let p = scheduled(&one_queue(resources.clone(), used), cull);
    assert_eq!(p.order, [0, 1, 2, 3]);
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `make t1`
    barrier
      buffer `t1` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `t1 to t2`, after `make t1`
    pass   `t1 to t2`
    pass   `write user`
    barrier
      buffer `t2` bytes 0..256: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `t2 to user`, after `t1 to t2`
      buffer `user` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_WRITE
        why: for `t2 to user`, after `write user`
    pass   `t2 to user`
    signal timeline at ALL_COMMANDS
transient memory: 128 bytes in 1 heap(s); without aliasing 128, live-set lower bound 128
  heap 0: 128 bytes, alignment 4, memory types 0b1
    `t1` bytes 0..64: first `make t1` (`gfx` batch 0 command 0), last `t1 to t2` (`gfx` batch 0 command 2)
    `t2` bytes 64..128: first `t1 to t2` (`gfx` batch 0 command 2), last `t2 to user` (`gfx` batch 0 command 5)
"#
    );
    // (A transient's first use writes all of it, so a chain can never hang on bytes of a
    // transient nobody wrote: the planner refuses such an input.)
}

/// What culling never drops: passes on user-owned resources, passes that signal or declare
/// nothing; and with culling and reordering together, the kept passes are reordered.
///
/// ```text
/// gfx:  [write t] --t--> [t signals] --> binary 9   [declares nothing]
///       [write user] --user--> [read user]   [write other]   [write t again: culled]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write t`
    barrier
      buffer `t` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `t signals`, after `write t`
    pass   `t signals`
    signal binary 0x9 at ALL_TRANSFER
  batch 1:
    pass   `declares nothing`
    pass   `write user`
    barrier
      buffer `user` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read user`, after `write user`
    pass   `read user`
    pass   `write other`
    signal timeline at ALL_COMMANDS
culled `write t again`
transient memory: 64 bytes in 1 heap(s); without aliasing 64, live-set lower bound 64
  heap 0: 64 bytes, alignment 4, memory types 0b1
    `t` bytes 0..64: first `write t` (`gfx` batch 0 command 0), last `t signals` (`gfx` batch 0 command 2)
"#
    );
    let p = scheduled(&input, Schedule::REORDER.with_culling());
    assert_eq!(p.order, [0, 1, 2, 3, 5, 4]);
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write t`
    barrier
      buffer `t` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `t signals`, after `write t`
    pass   `t signals`
    signal binary 0x9 at ALL_TRANSFER
  batch 1:
    pass   `declares nothing`
    pass   `write user`
    pass   `write other` (moved before `read user`)
    barrier
      buffer `user` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read user`, after `write user`
    pass   `read user`
    signal timeline at ALL_COMMANDS
culled `write t again`
transient memory: 64 bytes in 1 heap(s); without aliasing 64, live-set lower bound 64
  heap 0: 64 bytes, alignment 4, memory types 0b1
    `t` bytes 0..64: first `write t` (`gfx` batch 0 command 0), last `t signals` (`gfx` batch 0 command 2)
"#
    );
}

/// The barriers of readers of one write at different stages become one entry with both
/// stages, in one command.
///
/// ```text
/// gfx:  [write] --a--> [vertex]
///               '--a--> [compute]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write`
    barrier
      buffer `a` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> VERTEX_SHADER | COMPUTE_SHADER/SHADER_SAMPLED_READ | SHADER_STORAGE_READ
        why: for `vertex`, after `write`
    pass   `vertex`
    pass   `compute`
    signal timeline at ALL_COMMANDS
"#
    );
}
