//! Acceleration structures built on async compute and traced on graphics, and a video decode
//! sampled by graphics: the whole plans, verified.

use super::*;
use vk::BufferUsageFlags as BU;
use vk::ImageUsageFlags as IU;

fn addressed(name: &str, usage: BU) -> ResourceDecl {
    ResourceDecl::buffer(
        name,
        4096,
        usage | BU::SHADER_DEVICE_ADDRESS | BU::TRANSFER_DST,
    )
}

/// The geometry is uploaded on the transfer queue; async compute builds the bottom-level
/// structure, then the top-level one over it, both with one scratch buffer; graphics traces
/// the top-level structure from ray-tracing shaders into a storage image.
///
/// ```text
/// transfer: [upload] --vertices, instances-->
/// compute:              [build blas] --blas, scratch--> [build tlas] --tlas-->
/// graphics:                                                           [trace] --> image
/// ```
///
/// - Each buffer moves family by release and acquire (EXCLUSIVE), ordered by the semaphores.
/// - The two builds share the scratch buffer: a write-after-write barrier between them at
///   the build stage, and the bottom-level structure written by the first build is made
///   visible to the second's `ACCELERATION_STRUCTURE_READ` in the same barrier command.
#[test]
fn blas_then_tlas_built_on_async_compute_then_traced_on_graphics() {
    let p = run(
        three_families(),
        vec![
            addressed(
                "vertices",
                BU::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            ),
            addressed(
                "instances",
                BU::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            ),
            addressed("scratch", BU::STORAGE_BUFFER),
            addressed("blas", BU::ACCELERATION_STRUCTURE_STORAGE_KHR),
            addressed("tlas", BU::ACCELERATION_STRUCTURE_STORAGE_KHR),
            ResourceDecl::image("image", 1, 1, IU::STORAGE),
        ],
        vec![
            pass(
                "upload",
                2,
                &[(0, Access::COPY_WRITE), (1, Access::COPY_WRITE)],
            ),
            pass(
                "build blas",
                1,
                &[
                    (0, Access::ACCELERATION_STRUCTURE_BUILD_INPUT_READ),
                    (2, Access::ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE),
                    (3, Access::ACCELERATION_STRUCTURE_BUILD_WRITE),
                ],
            ),
            pass(
                "build tlas",
                1,
                &[
                    (1, Access::ACCELERATION_STRUCTURE_BUILD_INPUT_READ),
                    (2, Access::ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE),
                    (3, Access::ACCELERATION_STRUCTURE_BUILD_READ),
                    (4, Access::ACCELERATION_STRUCTURE_BUILD_WRITE),
                ],
            ),
            pass(
                "trace",
                0,
                &[
                    (4, Access::RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ),
                    (5, Access::RAY_TRACING_SHADER_STORAGE_WRITE),
                ],
            ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `image` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> RAY_TRACING_SHADER_KHR/SHADER_STORAGE_WRITE
        why: for `trace`, with nothing before it
      buffer `tlas` bytes 0..4096: RAY_TRACING_SHADER_KHR/NONE -> RAY_TRACING_SHADER_KHR/ACCELERATION_STRUCTURE_READ_KHR, family 1 -> 0
        why: for `trace`, after `build tlas`
    pass   `trace`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `vertices` bytes 0..4096: ACCELERATION_STRUCTURE_BUILD_KHR/NONE -> ACCELERATION_STRUCTURE_BUILD_KHR/SHADER_READ, family 2 -> 1
        why: for `build blas`, after `upload`
    pass   `build blas`
    barrier
      buffer `instances` bytes 0..4096: ACCELERATION_STRUCTURE_BUILD_KHR/NONE -> ACCELERATION_STRUCTURE_BUILD_KHR/SHADER_READ, family 2 -> 1
        why: for `build tlas`, after `upload`
      buffer `scratch` bytes 0..4096: ACCELERATION_STRUCTURE_BUILD_KHR/ACCELERATION_STRUCTURE_WRITE_KHR -> ACCELERATION_STRUCTURE_BUILD_KHR/ACCELERATION_STRUCTURE_READ_KHR | ACCELERATION_STRUCTURE_WRITE_KHR
        why: for `build tlas`, after `build blas`
      buffer `blas` bytes 0..4096: ACCELERATION_STRUCTURE_BUILD_KHR/ACCELERATION_STRUCTURE_WRITE_KHR -> ACCELERATION_STRUCTURE_BUILD_KHR/ACCELERATION_STRUCTURE_READ_KHR
        why: for `build tlas`, after `build blas`
    pass   `build tlas`
    barrier
      buffer `tlas` bytes 0..4096: ACCELERATION_STRUCTURE_BUILD_KHR/ACCELERATION_STRUCTURE_WRITE_KHR -> ACCELERATION_STRUCTURE_BUILD_KHR/NONE, family 1 -> 0
        why: for `trace`, after `build tlas`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `upload`
    barrier
      buffer `vertices` bytes 0..4096: COPY/TRANSFER_WRITE -> COPY/NONE, family 2 -> 1
        why: for `build blas`, after `upload`
      buffer `instances` bytes 0..4096: COPY/TRANSFER_WRITE -> COPY/NONE, family 2 -> 1
        why: for `build tlas`, after `upload`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// The three families and a video decode family (3), as on GPUs with a decoder.
fn with_decode() -> Vec<QueueDecl> {
    let mut q = three_families();
    q.push(QueueDecl::new(
        "decode",
        3,
        vk::QueueFlags::VIDEO_DECODE_KHR,
    ));
    q
}

/// A decode writes its output picture on the decode queue; a fragment shader samples it on
/// graphics. The picture moves family with its layout: released from
/// `VIDEO_DECODE_DST_KHR`, acquired in `SHADER_READ_ONLY_OPTIMAL`.
///
/// ```text
/// decode:   [decode] --picture-->
/// graphics:                      [sample]
/// ```
#[test]
fn a_decoded_picture_is_sampled_on_graphics() {
    let p = run(
        with_decode(),
        vec![
            ResourceDecl::buffer("bitstream", 4096, BU::VIDEO_DECODE_SRC_KHR),
            ResourceDecl::image("picture", 1, 1, IU::VIDEO_DECODE_DST_KHR | IU::SAMPLED),
        ],
        vec![
            pass(
                "decode",
                3,
                &[
                    (0, Access::VIDEO_DECODE_BITSTREAM_READ),
                    (1, Access::VIDEO_DECODE_OUTPUT_WRITE),
                ],
            ),
            pass("sample", 0, &[(1, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `decode` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `picture` mips 0+1 layers 0+1: VIDEO_DECODE_DST_KHR -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ, family 3 -> 0
        why: for `sample`, after `decode`
    pass   `sample`
    signal timeline at ALL_COMMANDS
queue `decode` (family 3):
  batch 0:
    barrier
      image  `picture` mips 0+1 layers 0+1: UNDEFINED -> VIDEO_DECODE_DST_KHR, NONE/NONE -> VIDEO_DECODE_KHR/VIDEO_DECODE_WRITE_KHR
        why: for `decode`, with nothing before it
    pass   `decode`
    barrier
      image  `picture` mips 0+1 layers 0+1: VIDEO_DECODE_DST_KHR -> SHADER_READ_ONLY_OPTIMAL, VIDEO_DECODE_KHR/VIDEO_DECODE_WRITE_KHR -> VIDEO_DECODE_KHR/NONE, family 3 -> 0
        why: for `sample`, after `decode`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// A video access on a queue without video is refused, naming the capability it needs.
#[test]
fn a_video_access_on_a_family_without_video_is_refused() {
    let input = PlanInput {
        queues: with_decode(),
        resources: vec![ResourceDecl::image(
            "picture",
            1,
            1,
            IU::VIDEO_DECODE_DST_KHR,
        )],
        passes: vec![pass("decode", 0, &[(0, Access::VIDEO_DECODE_OUTPUT_WRITE)])],
    };
    match plan(&input) {
        Err(Error::QueueCapability { pass, needs, .. }) => {
            assert_eq!(
                (pass.as_str(), needs),
                ("decode", vk::QueueFlags::VIDEO_DECODE_KHR)
            );
        }
        other => panic!("{other:?}"),
    }
}
