//! Passes that declare no use (a timestamp at a queue's start, an external semaphore's wait):
//! a semaphore wait that the next pass needs goes before them, in one batch with that pass,
//! as a hand-written frame submits it, unless another queue or a binary semaphore's waiter
//! waits on one of them (a wait before what it waits for would close a cycle). No GPU.

use super::*;
use vk::PipelineStageFlags2 as S;

/// The two queues most scenarios here use: graphics and async compute, two families.
fn gfx_and_compute() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new("gfx", 0, GFX),
        QueueDecl::new("compute", 1, COMPUTE),
    ]
}

/// [`run`], with the plan checked by the verifier: a wait placed before a pass that something
/// waits on shows as a cycle there.
fn verified(queues: Vec<QueueDecl>, resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> Plan {
    planned(&PlanInput {
        queues,
        resources,
        passes,
    })
}

/// A pass that declares no use (a timestamp at the queue's start, say) holds back no stage a
/// wait names: the wait goes before it, in one batch with the pass that needs it, as a
/// hand-written frame submits it.
///
/// ```text
/// compute:  [produce] --a--.
///                          | semaphore
/// gfx:      [stamp]        '--> [consume]
/// ```
#[test]
fn a_pass_with_no_uses_shares_the_waiting_batch() {
    let p = verified(
        gfx_and_compute(),
        vec![buffer("a").concurrent()],
        vec![
            pass("produce", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("stamp", 0, &[]),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `stamp`
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `produce`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A pass with no uses that signals a binary semaphore keeps a batch of its own before the
/// wait: what waits for its signal may be what the wait waits for (a cycle).
///
/// ```text
/// compute:  [produce] --a--.
///                          | semaphore
/// gfx:      [mark] (S)     '--> [consume]
/// ```
#[test]
fn a_pass_with_no_uses_that_signals_keeps_its_batch() {
    let p = verified(
        gfx_and_compute(),
        vec![buffer("a").concurrent()],
        vec![
            pass("produce", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("mark", 0, &[]).with_signal(BinarySignalDecl {
                semaphore: vk::Semaphore::from_raw(0x5),
                stages: Some(S::ALL_COMMANDS),
            }),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `mark`
    signal binary 0x5 at ALL_COMMANDS
  batch 1:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `produce`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A pass with no uses whose binary wait guards an image that another queue uses first is
/// waited on by that queue: a wait that `consume` needs must not go before it. Here `post`
/// (compute) waits for `acquire`'s batch, and `consume` (gfx) waits for `post`'s: were the
/// wait for `post` to join `acquire`'s batch, the two batches would wait on each other.
///
/// ```text
/// acquired (binary) --> gfx:  [acquire]              .--> [consume]
///                                  | swap (guarded)    | a
///                       compute:   '--> [post] --------'
/// ```
#[test]
fn a_pass_with_no_uses_that_another_queue_waits_on_keeps_its_batch() {
    let input = PlanInput {
        queues: gfx_and_compute(),
        resources: vec![
            ResourceDecl::image("swap", 1, 1, vk::ImageUsageFlags::STORAGE),
            buffer("a").concurrent(),
        ],
        passes: vec![
            PassDecl::new("acquire", 0).with_wait(BinaryWaitDecl {
                semaphore: vk::Semaphore::from_raw(0x7),
                guards: vec![0],
                stages: None,
            }),
            pass(
                "post",
                1,
                &[
                    (0, Access::COMPUTE_SHADER_WRITE),
                    (1, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass("consume", 0, &[(1, Access::TRANSFER_READ)]),
        ],
    };
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   binary 0x7 at COMPUTE_SHADER | ALL_COMMANDS
    pass   `acquire`
    signal timeline at COMPUTE_SHADER
  batch 1:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `gfx` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      image  `swap` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `post`, after the binary semaphore `acquire` waits on
    pass   `post`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Two passes with no uses at the queue's start both go after the wait, in its batch.
///
/// ```text
/// compute:            [produce] --a--.
///                                    | semaphore
/// gfx:      [stamp 1]   [stamp 2]    '--> [consume]
/// ```
#[test]
fn two_passes_with_no_uses_share_the_waiting_batch() {
    let p = verified(
        gfx_and_compute(),
        vec![buffer("a").concurrent()],
        vec![
            PassDecl::new("stamp 1", 0),
            pass("produce", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            PassDecl::new("stamp 2", 0),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `stamp 1`
    pass   `stamp 2`
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `produce`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// In the middle of a queue, a pass with no uses after a pass another queue waits on keeps a
/// batch of its own: the wait cannot go before `write b` (compute waits on it), and the
/// phase joins only whole protos.
///
/// ```text
/// gfx:      [write b] --b--.        [stamp]   .--> [consume]
///                          |                  | a
/// compute:                 '--> [produce] ----'
/// ```
#[test]
fn a_pass_with_no_uses_after_an_awaited_batch_keeps_its_batch() {
    let p = verified(
        gfx_and_compute(),
        vec![buffer("a").concurrent(), buffer("b").concurrent()],
        vec![
            pass("write b", 0, &[(1, Access::TRANSFER_WRITE)]),
            pass(
                "produce",
                1,
                &[
                    (1, Access::COMPUTE_SHADER_READ),
                    (0, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            PassDecl::new("stamp", 0),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write b`
    signal timeline at ALL_TRANSFER
  batch 1:
    pass   `stamp`
  batch 2:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `gfx` timeline after its batch 0 at COMPUTE_SHADER
    pass   `produce`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// On a transfer queue alike: the stamp goes after the wait on `gfx`.
#[test]
fn a_pass_with_no_uses_shares_the_waiting_batch_on_a_transfer_queue() {
    let p = verified(
        vec![
            QueueDecl::new("gfx", 0, GFX),
            QueueDecl::new("transfer", 2, TRANSFER),
        ],
        vec![buffer("a").concurrent()],
        vec![
            PassDecl::new("stamp", 1),
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("copy out", 1, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `fill`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    wait   `gfx` timeline after its batch 0 at ALL_TRANSFER
    pass   `stamp`
    pass   `copy out`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A binary wait (the acquire) joins a batch that holds only a pass with no uses too: on one
/// queue, the frame's timestamp now comes after the acquire.
#[test]
fn a_binary_wait_joins_a_batch_of_passes_with_no_uses() {
    let p = verified(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![swapchain()],
        vec![
            PassDecl::new("stamp", 0),
            acquire("render", 0x7, Access::COLOR_ATTACHMENT_WRITE),
            present(0x8),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   binary 0x7 at COLOR_ATTACHMENT_OUTPUT
    pass   `stamp`
    barrier
      image  `swap` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render`, after the binary semaphore `render` waits on
    pass   `render`
    barrier
      image  `swap` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> PRESENT_SRC_KHR, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/NONE
        why: for `present`, after `render`
    pass   `present`
    signal binary 0x8 at COLOR_ATTACHMENT_OUTPUT
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A pass with no uses that waits on a binary semaphore guarding nothing is waited on by no
/// one: the timeline wait joins its batch.
#[test]
fn a_pass_with_no_uses_and_an_unguarded_binary_wait_shares_the_waiting_batch() {
    let p = verified(
        gfx_and_compute(),
        vec![buffer("a").concurrent()],
        vec![
            PassDecl::new("external", 0).with_wait(BinaryWaitDecl {
                semaphore: vk::Semaphore::from_raw(0x9),
                guards: vec![],
                stages: Some(S::ALL_COMMANDS),
            }),
            pass("produce", 1, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("consume", 0, &[(0, Access::TRANSFER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   binary 0x9 at ALL_COMMANDS
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `external`
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `produce`
    signal timeline at ALL_COMMANDS
"#
    );
}
