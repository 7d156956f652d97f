//! The Khronos synchronization examples, on fake queue setups: the exact barriers and
//! semaphores, as whole plans.

use super::*;

/// A compute shader writes a storage buffer, the next dispatch reads it: one buffer barrier,
/// `COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ`.
///
/// ```text
/// gfx:  [write] --buf--> [read]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write`
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `read`, after `write`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A compute shader writes a storage image, a fragment shader samples it. A fresh image:
/// transition from `UNDEFINED`, nothing to wait for; then `GENERAL ->
/// SHADER_READ_ONLY_OPTIMAL` from the storage write to the sampled read.
///
/// ```text
/// gfx:  [write] --img--> [sample]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `write`, with nothing before it
    pass   `write`
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `write`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Upload on the transfer family, drawn on graphics: transfer releases the buffer (its write
/// made available), graphics waits at `ALL_COMMANDS` (an acquire is ordered after the wait
/// only by an `ALL_COMMANDS` wait, without maintenance8) and acquires it for vertex input.
/// Compute has nothing to do.
///
/// ```text
/// transfer (family 2):  [upload] --release 2->0--.
///                                                | semaphore
/// graphics (family 0):           acquire 2->0 <--'  [draw]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `vertices` bytes 0..256: VERTEX_ATTRIBUTE_INPUT/NONE -> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ, family 2 -> 0
        why: for `draw`, after `upload`
    pass   `draw`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `upload`
    barrier
      buffer `vertices` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 2 -> 0
        why: for `draw`, after `upload`
    signal timeline at ALL_COMMANDS
"#
    );
    assert!(p.queues[1].batches.is_empty());
}

/// Swapchain acquire, render, present: the acquire semaphore's wait covers the first use of
/// the image at `COLOR_ATTACHMENT_OUTPUT`, and the transition from `UNDEFINED` chains from
/// it; after rendering, the transition to `PRESENT_SRC_KHR`, which the present semaphore's
/// signal at `COLOR_ATTACHMENT_OUTPUT` chains from.
///
/// ```text
/// acquired (binary) --> gfx:  [acquire] [render] --swapchain--> [present] --> rendered (binary)
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   binary 0xb at COLOR_ATTACHMENT_OUTPUT
    pass   `acquire`
    barrier
      image  `swapchain` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render`, after the binary semaphore `acquire` waits on
    pass   `render`
    barrier
      image  `swapchain` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> PRESENT_SRC_KHR, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/NONE
        why: for `present`, after `render`
    pass   `present`
    signal binary 0xc at COLOR_ATTACHMENT_OUTPUT
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Write, read, overwrite: the overwrite is a write after read, an execution dependency from
/// the read's stage with no access to make available (the first barrier already did).
///
/// ```text
/// gfx:  [write] --buf--> [read] --buf--> [overwrite]
/// ```
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
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `write`
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `read`, after `write`
    pass   `read`
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `overwrite`, after `read`
    pass   `overwrite`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Simple Vulkan Synchronization issue 19: a transition after reads is a write, so the
/// destination access must be set (`SHADER_READ_ONLY_OPTIMAL -> TRANSFER_SRC_OPTIMAL`,
/// `FRAGMENT_SHADER/NONE -> ALL_TRANSFER/TRANSFER_READ`).
///
/// ```text
/// gfx:  [fill] --img--> [sample] --img--> [copy-out]
/// ```
#[test]
fn layout_transition_after_reads_keeps_destination_access() {
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            pass("sample", 0, &[(0, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
            pass("copy-out", 0, &[(0, Access::TRANSFER_READ)]),
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
        why: for `sample`, after `fill`
    pass   `sample`
    barrier
      image  `img` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> TRANSFER_SRC_OPTIMAL, FRAGMENT_SHADER/NONE -> ALL_TRANSFER/TRANSFER_READ
        why: for `copy-out`, after `sample`
    pass   `copy-out`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An earlier graph left the image on compute (family 1), written there at value 5. A
/// release-only batch on compute (submission order covers the earlier write there), then
/// graphics waits for it and acquires. The final state remembers this execution's graphics
/// timeline value.
///
/// ```text
/// compute  (family 1):  (earlier graph's write) release 1->0 --.
///                                                              | semaphore
/// graphics (family 0):                     acquire 1->0 <------'  [sample]
/// ```
#[test]
fn resource_left_on_another_family_by_an_earlier_graph_is_released_there_first() {
    let earlier = SegmentState {
        layout: vk::ImageLayout::GENERAL,
        defined: true,
        owner: Some(1),
        write: Some(Recorded {
            queue: 1,
            value: Some(5),
            stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
            access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
        }),
        reads: vec![],
        visible: vec![],
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
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ, family 1 -> 0
        why: for `sample`, after an earlier graph's work on `compute`
    pass   `sample`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `sample`, after an earlier graph's work on `compute`
    signal timeline at ALL_COMMANDS
"#
    );
    let fin = &p.final_states[0][0].1;
    assert_eq!(fin.owner, Some(0));
    assert_eq!(fin.reads[0].queue, 0);
    assert_eq!(fin.reads[0].value, None);
}
