//! The synchronization contract's rules: the exact barriers and semaphores of small plans on
//! fake queue setups, as whole plans.

use super::*;
use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

/// Two samplings after a fill: the first transitions, the second is in the same layout at
/// the same stage and gets no barrier.
///
/// ```text
/// gfx:  [fill] --img--> [a] --img--> [b]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `fill`, with nothing before it
    pass   `fill`
    barrier
      image  `img` mips 0+1 layers 0+1: TRANSFER_DST_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, ALL_TRANSFER/TRANSFER_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `a`, after `fill`
    pass   `a`
    pass   `b`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A compute sampling after a fragment sampling, in the same layout: a barrier chained from
/// the transition before `frag` (which already made the write available), to make it
/// visible to the compute shader.
///
/// ```text
/// gfx:  [fill] --img--> [frag] --img--> [comp]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `fill`, with nothing before it
    pass   `fill`
    barrier
      image  `img` mips 0+1 layers 0+1: TRANSFER_DST_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, ALL_TRANSFER/TRANSFER_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `frag`, after `fill`
    pass   `frag`
    barrier
      image  `img` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `comp`, after `frag`
    pass   `comp`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An image and a buffer both change use between two passes: one barrier command, with one
/// image and one buffer barrier.
///
/// ```text
/// gfx:  [write] --a, b--> [read]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `a` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `write`, with nothing before it
    pass   `write`
    barrier
      image  `a` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `read`, after `write`
      buffer `b` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `read`, after `write`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Two queues of one family: a semaphore wait at the reader's stage, no ownership transfer.
///
/// ```text
/// gfx0 (family 0):  [write] --semaphore--.
/// gfx1 (family 0):                        '--> [read]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx0` (family 0):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
queue `gfx1` (family 0):
  batch 0:
    wait   `gfx0` timeline after its batch 0 at COMPUTE_SHADER
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A CONCURRENT buffer crosses families with a semaphore only, waited at the vertex input.
///
/// ```text
/// compute  (family 1):  [write] --semaphore--.
/// graphics (family 0):                        '--> [read]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at VERTEX_ATTRIBUTE_INPUT
    pass   `read`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Graphics overwrites (discards) what compute wrote and read: no release or acquire, but
/// graphics still waits for compute's read, and transitions from `UNDEFINED` chained from
/// the wait. Compute keeps the image: its one barrier orders the read after the write, and no
/// release follows the read.
///
/// ```text
/// compute  (family 1):  [write] --img--> [read] --semaphore--.
/// graphics (family 0):                                        '--> [overwrite: discard]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `overwrite`, after `read`
    pass   `overwrite`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `write`, with nothing before it
    pass   `write`
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `read`, after `write`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Graphics patches 16 bytes of what compute wrote, without discarding: only the patched
/// bytes move to family 0, with a proper release and acquire; the rest stays on family 1.
///
/// ```text
/// compute  (family 1):  [write] --release bytes 0..16, 1->0--.
///                                                            | semaphore
/// graphics (family 0):         acquire bytes 0..16, 1->0 <---'  [patch]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..16: ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_WRITE, family 1 -> 0
        why: for `patch`, after `write`
    pass   `patch`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `write`
    barrier
      buffer `buf` bytes 0..16: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `patch`, after `write`
    signal timeline at ALL_COMMANDS
"#
    );
    // The rest of the buffer still belongs to family 1.
    let fin = &p.final_states[0];
    assert_eq!(
        fin.iter()
            .map(|(c, s)| (c.clone(), s.owner))
            .collect::<Vec<_>>(),
        vec![(0..16, Some(0)), (16..256, Some(1))]
    );
}

/// Compute signals right after `produce`, not after `more-compute`; graphics runs
/// `unrelated` before waiting, in a batch of its own.
///
/// ```text
/// compute:  [produce] --a--. [more-compute]
///                          | semaphore
/// gfx:      [unrelated]    '--> [consume]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `unrelated`
  batch 1:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `consume`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `produce`
    signal timeline at COMPUTE_SHADER
  batch 1:
    pass   `more-compute`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Two writes on `gfx2`, both read by one pass on `gfx`: one wait on `gfx2`'s batch, at the
/// union of the stages.
///
/// ```text
/// gfx2:  [wa] [wb] --a, b--.
/// gfx:                     '--> [read-both]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `gfx2` timeline after its batch 0 at COMPUTE_SHADER | ALL_TRANSFER
    pass   `read-both`
    signal timeline at ALL_COMMANDS
queue `gfx2` (family 0):
  batch 0:
    pass   `wa`
    pass   `wb`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An earlier graph wrote the buffer on the same queue: a barrier, no wait.
///
/// ```text
/// gfx:  (earlier graph: transfer write, value 3) --buf--> [read]
/// ```
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
        visible: vec![],
    };
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf").with_state(earlier)],
        vec![pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)])],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      buffer `buf` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `read`, after an earlier graph's work on `gfx`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An earlier graph wrote the buffer on another queue of the family: a wait on the recorded
/// timeline value, no barrier.
///
/// ```text
/// gfx2:  (earlier graph: transfer write, value 7) --semaphore--.
/// gfx:                                                         '--> [read]
/// ```
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
        visible: vec![],
    };
    let p = run(
        queues,
        vec![buffer("buf").with_state(earlier)],
        vec![pass("read", 0, &[(0, Access::COMPUTE_SHADER_READ)])],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `gfx2` timeline value 7 (earlier graph) at COMPUTE_SHADER
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
    assert!(p.queues[1].batches.is_empty());
}

/// On lavapipe, graphics and async compute are one VkQueue: the builder passes one queue, and
/// the plan is barriers only.
///
/// ```text
/// gfx+compute:  [sim] --img--> [copy]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx+compute` (family 0):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `sim`, with nothing before it
    pass   `sim`
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> TRANSFER_SRC_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `copy`, after `sim`
    pass   `copy`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(p.batch_count(), 1);
    assert_eq!(p.semaphore_waits(), 0);
    assert_eq!(p.barrier_commands(), 2);
}

/// Written on graphics, read on two graphics-family queues, then wanted by compute: the
/// release is on gfx1 (the latest access), after waiting for gfx0's read; compute waits on
/// gfx1 only.
///
/// ```text
/// gfx0    (family 0):  [write] --> [read0] --semaphore--.
/// gfx1    (family 0):          '--> [read1] <------------' release 0->1 --.
/// compute (family 1):                                      acquire 0->1 <-'  [modify]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx0` (family 0):
  batch 0:
    pass   `write`
    signal timeline at ALL_TRANSFER
  batch 1:
    barrier
      buffer `buf` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `read0`, after `write`
    pass   `read0`
    signal timeline at ALL_COMMANDS
queue `gfx1` (family 0):
  batch 0:
    wait   `gfx0` timeline after its batch 0 at COMPUTE_SHADER
    pass   `read1`
  batch 1:
    wait   `gfx0` timeline after its batch 1 at COMPUTE_SHADER
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/NONE, family 0 -> 1
        why: for `modify`, after `read1`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `gfx1` timeline after its batch 1 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_READ | SHADER_STORAGE_WRITE, family 0 -> 1
        why: for `modify`, after `read1`
    pass   `modify`
    signal timeline at ALL_COMMANDS
"#
    );
}
