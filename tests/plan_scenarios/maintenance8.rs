//! Ownership transfers with `VK_KHR_maintenance8` (`QueueDecl::transfers_use_all_stages`):
//! the release's second scope and the acquire's first scope apply, so the semaphore wait is
//! at the stages that use the resource. Whole plans, verified.

use super::*;

/// The three families with maintenance8 enabled.
fn families_with_maintenance8() -> Vec<QueueDecl> {
    three_families()
        .into_iter()
        .map(QueueDecl::with_transfers_using_all_stages)
        .collect()
}

/// The transfer queue uploads vertices that graphics draws from; async compute writes a
/// storage image that graphics samples in the fragment shader.
///
/// ```text
/// transfer: [upload] --vertices--.
/// compute:  [light]  --lit-------+--> graphics: [draw]
/// ```
///
/// Graphics waits for the transfer queue at `VERTEX_ATTRIBUTE_INPUT` and for async compute at
/// `FRAGMENT_SHADER`, where the acquires' first scopes are, instead of at `ALL_COMMANDS`
/// (`khronos.rs` has the same frames without the extension). The releases are in the signals'
/// first scopes, which are `ALL_COMMANDS` at the end of each queue.
#[test]
fn waits_before_acquires_are_at_the_stages_that_use_the_resource() {
    let p = run(
        families_with_maintenance8(),
        vec![buffer("vertices"), image("lit")],
        vec![
            pass("upload", 2, &[(0, Access::COPY_WRITE)]),
            pass("light", 1, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "draw",
                0,
                &[
                    (0, Access::VERTEX_BUFFER),
                    (1, Access::FRAGMENT_SHADER_SAMPLED_READ),
                ],
            ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0, transfers use all stages):
  batch 0:
    wait   `transfer` timeline after its batch 0 at VERTEX_ATTRIBUTE_INPUT
    wait   `compute` timeline after its batch 0 at FRAGMENT_SHADER
    barrier
      image  `lit` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ, family 1 -> 0
        why: for `draw`, after `light`
      buffer `vertices` bytes 0..256: VERTEX_ATTRIBUTE_INPUT/NONE -> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ, family 2 -> 0
        why: for `draw`, after `upload`
    pass   `draw`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1, transfers use all stages):
  batch 0:
    barrier
      image  `lit` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `light`, with nothing before it
    pass   `light`
    barrier
      image  `lit` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `draw`, after `light`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2, transfers use all stages):
  batch 0:
    pass   `upload`
    barrier
      buffer `vertices` bytes 0..256: COPY/TRANSFER_WRITE -> COPY/NONE, family 2 -> 0
        why: for `draw`, after `upload`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}
