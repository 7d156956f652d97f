//! The rows for acceleration structures, ray tracing, mesh shaders and video: the features
//! and queues they need, and which flags write.

use super::*;
use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;
use DeviceFeatures as F;

/// Every access bit whose specification name says it writes is a write to the planner, and
/// no other bit is: a write the planner took for a read would get no barrier before the next
/// read.
#[test]
fn every_access_bit_named_write_is_a_write() {
    for bit in 0..64 {
        let flag = A::from_raw(1 << bit);
        let name = format!("{flag:?}");
        if name.starts_with("0x") || name.is_empty() {
            continue; // no name: a bit no extension defines
        }
        assert_eq!(is_write_flags(flag), name.contains("WRITE"), "{name}");
    }
}

/// The feature each new row needs, written out from the specification's valid usage of
/// `VkMemoryBarrier2` (stage masks and acceleration-structure reads).
#[test]
fn rows_need_the_features_of_their_stages() {
    let cases = [
        (
            "ACCELERATION_STRUCTURE_BUILD_INPUT_READ",
            F::ACCELERATION_STRUCTURE,
        ),
        (
            "ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE",
            F::ACCELERATION_STRUCTURE,
        ),
        (
            "ACCELERATION_STRUCTURE_BUILD_WRITE",
            F::ACCELERATION_STRUCTURE,
        ),
        (
            "ACCELERATION_STRUCTURE_BUILD_READ",
            F::ACCELERATION_STRUCTURE,
        ),
        (
            "ACCELERATION_STRUCTURE_UPDATE_READ_WRITE",
            F::ACCELERATION_STRUCTURE,
        ),
        (
            "ACCELERATION_STRUCTURE_COPY_READ",
            F::ACCELERATION_STRUCTURE | F::RAY_TRACING_MAINTENANCE1,
        ),
        (
            "ACCELERATION_STRUCTURE_COPY_WRITE",
            F::ACCELERATION_STRUCTURE | F::RAY_TRACING_MAINTENANCE1,
        ),
        (
            "RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ",
            F::RAY_TRACING_PIPELINE,
        ),
        ("COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ", F::RAY_QUERY),
        ("FRAGMENT_SHADER_ACCELERATION_STRUCTURE_READ", F::RAY_QUERY),
        ("SHADER_BINDING_TABLE_READ", F::RAY_TRACING_PIPELINE),
        ("RAY_TRACING_SHADER_STORAGE_WRITE", F::RAY_TRACING_PIPELINE),
        ("TASK_SHADER_STORAGE_READ", F::TASK_SHADER),
        ("TASK_SHADER_UNIFORM_READ", F::TASK_SHADER),
        ("MESH_SHADER_STORAGE_WRITE", F::MESH_SHADER),
        ("MESH_SHADER_SAMPLED_READ", F::MESH_SHADER),
        ("VIDEO_DECODE_DPB_READ", F::NONE),
        ("VIDEO_ENCODE_BITSTREAM_WRITE", F::NONE),
        ("COMPUTE_SHADER_READ", F::NONE),
        ("GENERAL", F::NONE),
    ];
    for (name, features) in cases {
        let row = AccessRow::find(name).unwrap_or_else(|| panic!("no row {name}"));
        assert_eq!(row.access().device_features(), features, "{name}");
    }
    // Raw accesses are judged by the same flags.
    let raw = Access::raw(
        S::MESH_SHADER_EXT,
        A::SHADER_STORAGE_READ,
        vk::ImageLayout::UNDEFINED,
    );
    assert_eq!(raw.device_features(), F::MESH_SHADER);
    // Every row of ray_mesh_video.rs but video needs a feature; video rows need none.
    for row in &ACCESS_TABLE[ACCESS_TABLE
        .iter()
        .position(|r| r.name == "ACCELERATION_STRUCTURE_BUILD_INPUT_READ")
        .unwrap()..]
    {
        let f = row.access().device_features();
        assert_eq!(f.is_empty(), row.name.starts_with("VIDEO_"), "{}", row.name);
    }
    // The rows of the older table need none.
    let first_new = ACCESS_TABLE
        .iter()
        .position(|r| r.name == "ACCELERATION_STRUCTURE_BUILD_INPUT_READ")
        .expect("the first row of ray_mesh_video.rs");
    for row in &ACCESS_TABLE[..first_new] {
        assert_eq!(row.access().device_features(), F::NONE, "{}", row.name);
    }
}

/// Builds, copies and traces need a compute queue (the commands' valid usage); mesh shaders a
/// graphics queue; video a queue of its own video family, and nothing else runs there.
#[test]
fn acceleration_structures_run_on_compute_queues_and_video_on_video_queues() {
    let gct = Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER;
    let ct = Q::COMPUTE | Q::TRANSFER;
    let (decode, encode) = (Q::VIDEO_DECODE_KHR, Q::VIDEO_ENCODE_KHR | Q::TRANSFER);
    let cases = [
        (
            Access::ACCELERATION_STRUCTURE_BUILD_WRITE,
            [true, true, false, false, false],
        ),
        (
            Access::ACCELERATION_STRUCTURE_COPY_READ,
            [true, true, false, false, false],
        ),
        (
            Access::SHADER_BINDING_TABLE_READ,
            [true, true, false, false, false],
        ),
        (
            Access::COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ,
            [true, true, false, false, false],
        ),
        (
            Access::FRAGMENT_SHADER_ACCELERATION_STRUCTURE_READ,
            [true, false, false, false, false],
        ),
        (
            Access::MESH_SHADER_STORAGE_READ,
            [true, false, false, false, false],
        ),
        (
            Access::TASK_SHADER_UNIFORM_READ,
            [true, false, false, false, false],
        ),
        (
            Access::VIDEO_DECODE_OUTPUT_WRITE,
            [false, false, false, true, false],
        ),
        (
            Access::VIDEO_DECODE_BITSTREAM_READ,
            [false, false, false, true, false],
        ),
        (
            Access::VIDEO_ENCODE_SOURCE_READ,
            [false, false, false, false, true],
        ),
        (Access::COPY_WRITE, [true, true, true, false, true]),
    ];
    for (a, expect) in cases {
        let got = [gct, ct, Q::TRANSFER, decode, encode].map(|caps| a.runs_on(caps));
        assert_eq!(got, expect, "{:?}", a.name());
    }
    assert_eq!(
        Access::ACCELERATION_STRUCTURE_COPY_WRITE.queue_capabilities(),
        Q::COMPUTE
    );
    assert_eq!(
        Access::VIDEO_DECODE_DPB_WRITE.queue_capabilities(),
        Q::VIDEO_DECODE_KHR
    );
}

/// What a video decode and an acceleration-structure build write is a write: the planner
/// orders the next reader after it.
#[test]
fn video_and_acceleration_structure_writes_are_writes() {
    for a in [
        Access::VIDEO_DECODE_OUTPUT_WRITE,
        Access::VIDEO_DECODE_DPB_WRITE,
        Access::VIDEO_ENCODE_BITSTREAM_WRITE,
        Access::ACCELERATION_STRUCTURE_BUILD_WRITE,
        Access::ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE,
    ] {
        assert!(a.is_write(), "{:?}", a.name());
    }
    assert!(!Access::VIDEO_DECODE_DPB_READ.is_write());
    assert!(!Access::SHADER_BINDING_TABLE_READ.is_write());
}
