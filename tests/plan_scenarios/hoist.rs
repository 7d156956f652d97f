//! A pass's barrier command joins an earlier one of its queue over passes that do not need it
//! (`planner/barrier.rs`): the streaming sample's copy-back of N uploaded images on another
//! family gets one command with N acquires before the N copies, as a hand-written one does;
//! and the cases where joining would be wrong or would make a pass wait for more keep their
//! commands. Each plan is checked whole, and verified. No GPU.

use super::*;
use vk::QueueFlags as Q;

fn buffers(names: &[&str]) -> Vec<ResourceDecl> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::STORAGE_BUFFER;
    names
        .iter()
        .map(|n| ResourceDecl::buffer(n, 64, usage))
        .collect()
}

/// Two images uploaded on a transfer-only family, copied back into two halves of a buffer on
/// a compute family, one pass per image, then read by a shader.
///
/// ```text
/// transfer (family 1):  [upload A, B] --release A, B 1->2--.
///                                                         | semaphore
/// compute  (family 2):   acquire A, B 1->2 (one command) <-'  [copy back A] [copy back B] --data--> [verify]
/// ```
#[test]
fn acquires_of_independent_copies_share_one_command() {
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let mut resources = vec![
        ResourceDecl::image("A", 2, 1, usage),
        ResourceDecl::image("B", 2, 1, usage),
    ];
    resources.extend(buffers(&["data"]));
    let half = |k: u64| {
        SubRange::Buffer(BufferRange {
            offset: 32 * k,
            size: 32,
        })
    };
    let input = PlanInput {
        queues: vec![
            QueueDecl::new("transfer", 1, Q::TRANSFER),
            QueueDecl::new("compute", 2, Q::COMPUTE | Q::TRANSFER),
        ],
        resources,
        passes: vec![
            PassDecl::new("upload", 0)
                .with_use(UseDecl::new(0, Access::COPY_WRITE).discard())
                .with_use(UseDecl::new(1, Access::COPY_WRITE).discard()),
            PassDecl::new("copy back A", 1)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(2, Access::COPY_WRITE).range(half(0)).discard()),
            PassDecl::new("copy back B", 1)
                .with_use(UseDecl::new(1, Access::COPY_READ))
                .with_use(UseDecl::new(2, Access::COPY_WRITE).range(half(1)).discard()),
            PassDecl::new("verify", 1).with_use(UseDecl::new(2, Access::COMPUTE_SHADER_READ)),
        ],
    };
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `transfer` (family 1):
  batch 0:
    barrier
      image  `A` mips 0+2 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> COPY/TRANSFER_WRITE
        why: for `upload`, with nothing before it
      image  `B` mips 0+2 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> COPY/TRANSFER_WRITE
        why: for `upload`, with nothing before it
    pass   `upload`
    barrier
      image  `A` mips 0+2 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COPY/TRANSFER_WRITE -> COPY/NONE, family 1 -> 2
        why: for `copy back A`, after `upload`
      image  `B` mips 0+2 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COPY/TRANSFER_WRITE -> COPY/NONE, family 1 -> 2
        why: for `copy back B`, after `upload`
    signal timeline at ALL_COMMANDS
queue `compute` (family 2):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `A` mips 0+2 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COPY/NONE -> COPY/TRANSFER_READ, family 1 -> 2
        why: for `copy back A`, after `upload`
      image  `B` mips 0+2 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COPY/NONE -> COPY/TRANSFER_READ, family 1 -> 2
        why: for `copy back B`, after `upload`
    pass   `copy back A`
    pass   `copy back B`
    barrier
      buffer `data` bytes 0..64: COPY/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `verify`, after `copy back A`
    pass   `verify`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Copies of `a` and of `b`, each read by a copy into a buffer of its own: the second reader's
/// barrier joins the first one's. When `b` is written by a compute shader instead, joining
/// would make the first reader wait for the compute write: two commands. When the second
/// reader reads what the first wrote, its barrier must follow that pass: two commands.
///
/// ```text
/// q:  [write a] [write b] --a--> [read a] --b (or a')--> [read b]
/// ```
#[test]
fn a_barrier_joins_only_over_passes_that_neither_need_it_nor_would_wait_longer() {
    let input = |b_writer: Access, second_reads: usize| PlanInput {
        queues: vec![QueueDecl::new("q", 0, Q::COMPUTE | Q::TRANSFER)],
        resources: buffers(&["a", "b", "a'", "b'"]),
        passes: vec![
            PassDecl::new("write a", 0).with_use(UseDecl::new(0, Access::COPY_WRITE)),
            PassDecl::new("write b", 0).with_use(UseDecl::new(1, b_writer)),
            PassDecl::new("read a", 0)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(2, Access::COPY_WRITE)),
            PassDecl::new("read b", 0)
                .with_use(UseDecl::new(second_reads, Access::COPY_READ))
                .with_use(UseDecl::new(3, Access::COPY_WRITE)),
        ],
    };
    let joined = planned(&input(Access::COPY_WRITE, 1));
    assert_plan!(
        joined,
        r#"
queue `q` (family 0):
  batch 0:
    pass   `write a`
    pass   `write b`
    barrier
      buffer `a` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read a`, after `write a`
      buffer `b` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read b`, after `write b`
    pass   `read a`
    pass   `read b`
    signal timeline at ALL_COMMANDS
"#
    );
    let compute = planned(&input(Access::COMPUTE_SHADER_WRITE, 1));
    assert_plan!(
        compute,
        r#"
queue `q` (family 0):
  batch 0:
    pass   `write a`
    pass   `write b`
    barrier
      buffer `a` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read a`, after `write a`
    pass   `read a`
    barrier
      buffer `b` bytes 0..64: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COPY/TRANSFER_READ
        why: for `read b`, after `write b`
    pass   `read b`
    signal timeline at ALL_COMMANDS
"#
    );
    let chained = planned(&input(Access::COPY_WRITE, 2));
    assert_plan!(
        chained,
        r#"
queue `q` (family 0):
  batch 0:
    pass   `write a`
    pass   `write b`
    barrier
      buffer `a` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read a`, after `write a`
    pass   `read a`
    barrier
      buffer `a'` bytes 0..64: COPY/TRANSFER_WRITE -> COPY/TRANSFER_READ
        why: for `read b`, after `read a`
    pass   `read b`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Found by the long random run: `read X` needs a wait on `other`'s first batch (the compute
/// read of X, before its layout change), and `read D` waits on the same batch, but for the
/// fragment-shader read only (the signal covers FRAGMENT_SHADER). Joining `read X`'s barrier
/// into `read D`'s would need that wait and signal widened; batching credited the dependency
/// to the second batch's wait instead, after the joined transition. A barrier joins only where
/// the earlier pass's waits already dominate its own: here it stays in place.
///
/// ```text
/// other:  [compute X] [sample D] --semaphore--. [write buf] --semaphore--.
/// q:                         '--> [read D] <--'        '--> [read buf] [read X]
/// ```
#[test]
fn a_barrier_joins_only_where_the_waits_already_order_it() {
    let usage = vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::STORAGE;
    let mut resources = vec![
        ResourceDecl::image("X", 1, 1, usage),
        ResourceDecl::image("D", 1, 1, usage),
    ];
    resources.extend(buffers(&["buf"]));
    let gct = Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER;
    let input = PlanInput {
        queues: vec![QueueDecl::new("q", 0, gct), QueueDecl::new("other", 0, gct)],
        resources,
        passes: vec![
            PassDecl::new("compute X", 1).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)),
            PassDecl::new("sample D", 1)
                .with_use(UseDecl::new(1, Access::FRAGMENT_SHADER_SAMPLED_READ)),
            PassDecl::new("read D", 0).with_use(UseDecl::new(1, Access::TRANSFER_READ)),
            PassDecl::new("write buf", 1).with_use(UseDecl::new(2, Access::TRANSFER_WRITE)),
            PassDecl::new("read buf", 0).with_use(UseDecl::new(2, Access::TRANSFER_READ)),
            PassDecl::new("read X", 0).with_use(UseDecl::new(0, Access::TRANSFER_READ)),
        ],
    };
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `q` (family 0):
  batch 0:
    wait   `other` timeline after its batch 0 at ALL_TRANSFER
    barrier
      image  `D` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_SRC_OPTIMAL, ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_READ
        why: for `read D`, after `sample D`
    pass   `read D`
  batch 1:
    wait   `other` timeline after its batch 1 at ALL_TRANSFER
    pass   `read buf`
    barrier
      image  `X` mips 0+1 layers 0+1: UNDEFINED -> TRANSFER_SRC_OPTIMAL, ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_READ
        why: for `read X`, after `compute X`
    pass   `read X`
    signal timeline at ALL_COMMANDS
queue `other` (family 0):
  batch 0:
    barrier
      image  `X` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `compute X`, with nothing before it
      image  `D` mips 0+1 layers 0+1: UNDEFINED -> SHADER_READ_ONLY_OPTIMAL, NONE/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample D`, with nothing before it
    pass   `compute X`
    pass   `sample D`
    signal timeline at FRAGMENT_SHADER
  batch 1:
    pass   `write buf`
    signal timeline at ALL_COMMANDS
"#
    );
}
