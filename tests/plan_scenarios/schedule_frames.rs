//! The frames of `benches/schedule.rs`, planned for three queue families (graphics, async
//! compute, transfer) that lavapipe does not have: barrier commands and batches in program
//! order and reordered.

use super::*;

fn buffers(n: usize) -> Vec<ResourceDecl> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    (0..n)
        .map(|i| ResourceDecl::buffer(&format!("buf{i}"), 4096, usage))
        .collect()
}

fn fill(name: String, queue: usize, dst: usize) -> PassDecl {
    PassDecl::new(&name, queue).with_use(UseDecl::new(dst, Access::TRANSFER_WRITE).discard())
}

fn copy(name: String, queue: usize, src: usize, dst: usize) -> PassDecl {
    PassDecl::new(&name, queue)
        .with_use(UseDecl::new(src, Access::COPY_READ))
        .with_use(UseDecl::new(dst, Access::COPY_WRITE).discard())
}

/// `chains` independent chains of `steps` passes on one queue, inserted chain after chain
/// (`interleaved == false`) or step after step. Chain `k` ping-pongs between buffers `2k` and
/// `2k + 1`: a fill, then copies.
fn chains(chains: usize, steps: usize, interleaved: bool) -> PlanInput {
    let pass = |k: usize, s: usize| {
        let (a, b) = (2 * k + s % 2, 2 * k + (s + 1) % 2);
        if s == 0 {
            fill(format!("c{k}s{s}"), 0, a)
        } else {
            copy(format!("c{k}s{s}"), 0, b, a)
        }
    };
    let passes = if interleaved {
        (0..steps)
            .flat_map(|s| (0..chains).map(move |k| (k, s)))
            .map(|(k, s)| pass(k, s))
            .collect()
    } else {
        (0..chains)
            .flat_map(|k| (0..steps).map(move |s| (k, s)))
            .map(|(k, s)| pass(k, s))
            .collect()
    };
    PlanInput {
        queues: vec![QueueDecl::new("graphics", 0, GFX)],
        resources: buffers(2 * chains),
        passes,
    }
}

/// `items` independent items, each an upload on the transfer queue, a copy on async compute
/// and a copy on graphics, inserted item after item. Buffers are EXCLUSIVE: each hop is an
/// ownership transfer.
fn three_queues(items: usize) -> PlanInput {
    let passes = (0..items)
        .flat_map(|k| {
            [
                fill(format!("upload{k}"), 2, 3 * k),
                copy(format!("simulate{k}"), 1, 3 * k, 3 * k + 1),
                copy(format!("draw{k}"), 0, 3 * k + 1, 3 * k + 2),
            ]
        })
        .collect();
    PlanInput {
        queues: vec![
            QueueDecl::new("graphics", 0, GFX),
            QueueDecl::new("compute", 1, COMPUTE),
            QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER),
        ],
        resources: buffers(3 * items),
        passes,
    }
}

/// (barrier commands, batches) in program order and reordered; both plans verify.
fn figures(input: &PlanInput) -> [(usize, usize); 2] {
    [Schedule::PROGRAM_ORDER, Schedule::REORDER].map(|s| {
        let p = plan_scheduled(input, s).unwrap();
        p.verify().unwrap_or_else(|v| panic!("{v:?}\n{p}"));
        (p.barrier_commands(), p.batch_count())
    })
}

#[test]
fn chains_inserted_one_after_another() {
    // 8 chains of 4: a barrier before each of the 3 later steps of each chain, against one
    // barrier command per step.
    assert_eq!(figures(&chains(8, 4, false)), [(24, 1), (3, 1)]);
    assert_eq!(figures(&chains(8, 128, false)), [(8 * 127, 1), (127, 1)]);
}

#[test]
fn chains_inserted_step_after_step() {
    // Program order is already level order: each step's barrier commands join into the
    // first one of the step in program order too (the planner hoists a barrier command over
    // passes that do not need it), so reordering has nothing left to gain.
    assert_eq!(figures(&chains(8, 4, true)), [(3, 1), (3, 1)]);
    let p = plan_scheduled(&chains(8, 4, true), Schedule::REORDER).unwrap();
    assert_eq!(p.order, (0..32).collect::<Vec<_>>());
}

/// ```text
/// transfer (family 2):  [upload0] [upload1] --release 2->1--.
/// compute  (family 1):       acquire 2->1 <-----------------' [simulate0] [simulate1] --release 1->0--.
/// graphics (family 0):                                             acquire 1->0 <-----------------' [draw0] [draw1]
/// ```
#[test]
fn three_queue_frame() {
    // Per item in program order: a release and an acquire per hop, each pass in a batch of
    // its own. Reordered: uploads, then simulations, then draws, each queue's hops in one
    // release command and one acquire command, one batch per queue.
    assert_eq!(figures(&three_queues(4)), [(16, 12), (4, 3)]);
    assert_eq!(figures(&three_queues(64)), [(256, 192), (4, 3)]);
    let p = plan_scheduled(&three_queues(2), Schedule::REORDER).unwrap();
    assert_eq!(p.semaphore_waits(), 2);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf1` bytes 0..4096: COPY/NONE -> COPY/TRANSFER_READ, family 1 -> 0
        why: for `draw0`, after `simulate0`
      buffer `buf4` bytes 0..4096: COPY/NONE -> COPY/TRANSFER_READ, family 1 -> 0
        why: for `draw1`, after `simulate1`
    pass   `draw0`
    pass   `draw1`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf0` bytes 0..4096: COPY/NONE -> COPY/TRANSFER_READ, family 2 -> 1
        why: for `simulate0`, after `upload0`
      buffer `buf3` bytes 0..4096: COPY/NONE -> COPY/TRANSFER_READ, family 2 -> 1
        why: for `simulate1`, after `upload1`
    pass   `simulate0`
    pass   `simulate1` (moved before `draw0`)
    barrier
      buffer `buf1` bytes 0..4096: COPY/TRANSFER_WRITE -> COPY/NONE, family 1 -> 0
        why: for `draw0`, after `simulate0`
      buffer `buf4` bytes 0..4096: COPY/TRANSFER_WRITE -> COPY/NONE, family 1 -> 0
        why: for `draw1`, after `simulate1`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `upload0`
    pass   `upload1` (moved before `simulate0`)
    barrier
      buffer `buf0` bytes 0..4096: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 2 -> 1
        why: for `simulate0`, after `upload0`
      buffer `buf3` bytes 0..4096: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 2 -> 1
        why: for `simulate1`, after `upload1`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// ```text
/// graphics:  [a] --buf0 (WAW)--> [a again]   [b]
/// ```
#[test]
fn reordering_falls_back_to_program_order_where_it_saves_nothing() {
    // `b` is independent of the two writes of `a`: reordering moves it up, but the one
    // barrier (between the writes of `a`) stays, so program order is kept.
    let input = PlanInput {
        queues: vec![QueueDecl::new("graphics", 0, GFX)],
        resources: buffers(2),
        passes: vec![
            fill("a".into(), 0, 0),
            fill("a again".into(), 0, 0),
            fill("b".into(), 0, 1),
        ],
    };
    let in_order = plan(&input).unwrap();
    let always = plan_scheduled(&input, Schedule::REORDER.without_fallback()).unwrap();
    assert_eq!(
        (&in_order.order[..], &always.order[..]),
        (&[0, 1, 2][..], &[0, 2, 1][..])
    );
    assert_eq!(
        (in_order.barrier_commands(), always.barrier_commands()),
        (1, 1)
    );
    assert_plan!(
        in_order,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `a`
    barrier
      buffer `buf0` bytes 0..4096: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `a again`, after `a`
    pass   `a again`
    pass   `b`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        always,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `a`
    pass   `b` (moved before `a again`)
    barrier
      buffer `buf0` bytes 0..4096: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `a again`, after `a`
    pass   `a again`
    signal timeline at ALL_COMMANDS
"#
    );
    let chosen = plan_scheduled(&input, Schedule::REORDER).unwrap();
    assert_eq!(chosen.queues, in_order.queues);
    assert_eq!(chosen.order, [0, 1, 2]);
    // Chains inserted one after another: reordering saves barrier commands and is kept.
    let chained = chains(8, 4, false);
    let chosen = plan_scheduled(&chained, Schedule::REORDER).unwrap();
    let always = plan_scheduled(&chained, Schedule::REORDER.without_fallback()).unwrap();
    assert_eq!(chosen.queues, always.queues);
    assert_eq!(chosen.order, always.order);
    assert_eq!(chosen.barrier_commands(), 3);
}
