//! Batches that phase 3 left split for nothing are joined (`planner/batches.rs`): whole plans,
//! stated as text, and verified. No GPU.

use super::*;

/// Concurrent buffers, so that no ownership transfer adds batches of its own.
fn buffers(n: usize) -> Vec<ResourceDecl> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    (0..n)
        .map(|i| ResourceDecl::buffer(&format!("b{i}"), 64, usage).concurrent())
        .collect()
}

fn copy(name: &str, queue: usize, src: usize, dst: usize) -> PassDecl {
    PassDecl::new(name, queue)
        .with_use(UseDecl::new(src, Access::COPY_READ))
        .with_use(UseDecl::new(dst, Access::COPY_WRITE))
}

/// Transfer fills and copies a chain, compute copies its end on, and graphics copies the
/// compute result back over the first buffer and then overwrites the second. Each graphics
/// pass overwrites what a transfer pass read, so phase 2 gives transfer a signal after `t1`
/// (for `g4`) and after `t2` (for compute and `g5`), and graphics a wait before each of its
/// passes. Compute waited for `t2`, and graphics waits for compute: both of graphics' waits on
/// transfer are implied, and phase 3 drops them. Without the waits nothing keeps the batches
/// apart: one batch per queue, one signal each, as written by hand.
///
/// ```text
/// transfer:  [fill] --> [t1] --> [t2] --semaphore--.
/// compute:                                         '--> [c3] --semaphore--.
/// graphics:                                                              '--> [g4] [g5]
/// ```
#[test]
fn batches_split_for_waits_that_other_queues_imply_are_joined() {
    let input = PlanInput {
        queues: three_families(),
        resources: buffers(4),
        passes: vec![
            PassDecl::new("fill", 2).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            copy("t1", 2, 0, 1),
            copy("t2", 2, 1, 2),
            copy("c3", 1, 2, 3),
            copy("g4", 0, 3, 0),
            PassDecl::new("g5", 0).with_use(UseDecl::new(1, Access::COPY_WRITE)),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at COPY
    pass   `g4`
    pass   `g5`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at COPY
    pass   `c3`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `fill`
    barrier
      buffer `b0` bytes 0..64: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `t1`, after `fill`
    pass   `t1`
    barrier
      buffer `b1` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `t2`, after `t1`
    pass   `t2`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A batch another queue waits on keeps its end (the wait is on its signal), and so does one
/// that signals a binary semaphore (a present must not wait for later work).
///
/// ```text
/// transfer:  [t0] --semaphore--. [t2] --semaphore--.
/// compute:                     '--> [c1]            |
/// graphics:                            [g3] <-------' --> binary 7 | [g4]
/// ```
#[test]
fn an_awaited_batch_and_a_binary_signal_keep_their_batch_ends() {
    let input = PlanInput {
        queues: three_families(),
        resources: buffers(3),
        passes: vec![
            PassDecl::new("t0", 2).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            PassDecl::new("c1", 1).with_use(UseDecl::new(0, Access::COPY_READ)),
            PassDecl::new("t2", 2).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
            PassDecl::new("g3", 0)
                .with_use(UseDecl::new(1, Access::COPY_READ))
                .with_signal(BinarySignalDecl {
                    semaphore: vk::Semaphore::from_raw(7),
                    stages: None,
                }),
            PassDecl::new("g4", 0).with_use(UseDecl::new(2, Access::TRANSFER_WRITE)),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `transfer` timeline after its batch 1 at COPY
    pass   `g3`
    signal binary 0x7 at COPY
  batch 1:
    pass   `g4`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at COPY
    pass   `c1`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `t0`
    signal timeline at ALL_TRANSFER
  batch 1:
    pass   `t2`
    signal timeline at ALL_COMMANDS
"#
    );
}
