//! Rows for acceleration structures, ray tracing and ray queries, mesh and task shaders, and
//! video decode and encode.
//!
//! Rows whose stages need a device feature say which ([`Access::device_features`]): every
//! acceleration-structure, ray-tracing, ray-query, mesh and task row. A graph refuses them
//! until the app says the feature is enabled
//! ([`Graph::set_device_features`](crate::Graph::set_device_features)). Video rows need a
//! queue of a video family, which the stage rule already says.

use super::*;

/// The usage of a buffer that is read through its device address.
const ADDRESSED: BU = BU::SHADER_DEVICE_ADDRESS;
const STRUCTURE: BU = BU::ACCELERATION_STRUCTURE_STORAGE_KHR;

access_table! {
    enum Row;
    const ROWS;

    // --- Acceleration structures ------------------------------------------------------------
    /// The geometry a build reads: the vertex, index, transform, AABB and instance buffers of
    /// `vkCmdBuildAccelerationStructuresKHR`, read through their device addresses. Device
    /// feature `accelerationStructure`.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_BUILD_KHR`
    /// - access: `SHADER_READ`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_BUILD_INPUT_READ { stages: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        access: A::SHADER_READ, layout: L::UNDEFINED, queue: ANY_QUEUE, image_usage: NO_IMAGE,
        buffer_usage: bu(&[BU::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR, ADDRESSED]) }
    /// A build's scratch buffer (`scratchData`), which the build reads and writes. Two builds
    /// that share one scratch buffer are ordered by the barrier this access gets. Device
    /// feature `accelerationStructure`.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_BUILD_KHR`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR | ACCELERATION_STRUCTURE_WRITE_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE { stages: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        access: ac(&[A::ACCELERATION_STRUCTURE_READ_KHR, A::ACCELERATION_STRUCTURE_WRITE_KHR]),
        layout: L::UNDEFINED, queue: ANY_QUEUE, image_usage: NO_IMAGE,
        buffer_usage: bu(&[BU::STORAGE_BUFFER, ADDRESSED]) }
    /// The structure a build writes (`dstAccelerationStructure`; declare the buffer it lives
    /// in). Device feature `accelerationStructure`.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_BUILD_KHR`
    /// - access: `ACCELERATION_STRUCTURE_WRITE_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_BUILD_WRITE { stages: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        access: A::ACCELERATION_STRUCTURE_WRITE_KHR, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// A structure a build reads: the bottom-level structures that a top-level build's
    /// instances name, or the source of an update into another structure. Device feature
    /// `accelerationStructure`.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_BUILD_KHR`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_BUILD_READ { stages: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        access: A::ACCELERATION_STRUCTURE_READ_KHR, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// A structure updated in place (mode `UPDATE` with the source the destination): read and
    /// written by one build. Device feature `accelerationStructure`.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_BUILD_KHR`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR | ACCELERATION_STRUCTURE_WRITE_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_UPDATE_READ_WRITE { stages: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        access: ac(&[A::ACCELERATION_STRUCTURE_READ_KHR, A::ACCELERATION_STRUCTURE_WRITE_KHR]),
        layout: L::UNDEFINED, queue: ANY_QUEUE, image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// The source of `vkCmdCopyAccelerationStructureKHR` (a clone or a compaction). Its
    /// stage needs the device feature `rayTracingMaintenance1`; without it, declare the copy
    /// as [`Access::ACCELERATION_STRUCTURE_BUILD_READ`], whose stage the specification also
    /// allows for copies. Compute queues only.
    ///
    /// - stages: `ACCELERATION_STRUCTURE_COPY_KHR`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_COPY_READ { stages: S::ACCELERATION_STRUCTURE_COPY_KHR,
        access: A::ACCELERATION_STRUCTURE_READ_KHR, layout: L::UNDEFINED, queue: Q::COMPUTE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// The destination of `vkCmdCopyAccelerationStructureKHR`; see
    /// [`Access::ACCELERATION_STRUCTURE_COPY_READ`] (without `rayTracingMaintenance1`, use
    /// [`Access::ACCELERATION_STRUCTURE_BUILD_WRITE`]).
    ///
    /// - stages: `ACCELERATION_STRUCTURE_COPY_KHR`
    /// - access: `ACCELERATION_STRUCTURE_WRITE_KHR`
    /// - layout: none (buffers only)
    ACCELERATION_STRUCTURE_COPY_WRITE { stages: S::ACCELERATION_STRUCTURE_COPY_KHR,
        access: A::ACCELERATION_STRUCTURE_WRITE_KHR, layout: L::UNDEFINED, queue: Q::COMPUTE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }

    // --- Ray tracing pipelines and ray queries ----------------------------------------------
    /// A structure traced by ray-tracing shaders (`vkCmdTraceRaysKHR`). A trace reads the
    /// bottom-level structures that the top-level one names through it: declare each of them
    /// with this access too, so that their builds are ordered (and their ownership moved)
    /// before the trace. Device feature `rayTracingPipeline`.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR`
    /// - layout: none (buffers only)
    RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ { stages: S::RAY_TRACING_SHADER_KHR,
        access: A::ACCELERATION_STRUCTURE_READ_KHR, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// A structure traced by ray queries in a compute shader; declare the bottom-level
    /// structures the top-level one names with it too (see
    /// [`Access::RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ`]). Device feature `rayQuery`.
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR`
    /// - layout: none (buffers only)
    COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ { stages: S::COMPUTE_SHADER,
        access: A::ACCELERATION_STRUCTURE_READ_KHR, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// A structure traced by ray queries in a fragment shader (ray-traced shadows in a
    /// raster pass), and the bottom-level structures it names. Device feature `rayQuery`.
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `ACCELERATION_STRUCTURE_READ_KHR`
    /// - layout: none (buffers only)
    FRAGMENT_SHADER_ACCELERATION_STRUCTURE_READ { stages: S::FRAGMENT_SHADER,
        access: A::ACCELERATION_STRUCTURE_READ_KHR, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: STRUCTURE }
    /// The shader binding table that `vkCmdTraceRaysKHR` reads through its device address.
    /// `SHADER_READ` covers it without `rayTracingMaintenance1` (whose
    /// `SHADER_BINDING_TABLE_READ` is the narrower bit). Device feature `rayTracingPipeline`.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `SHADER_READ`
    /// - layout: none (buffers only)
    SHADER_BINDING_TABLE_READ { stages: S::RAY_TRACING_SHADER_KHR, access: A::SHADER_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE, image_usage: NO_IMAGE,
        buffer_usage: bu(&[BU::SHADER_BINDING_TABLE_KHR, ADDRESSED]) }
    /// Storage image or buffer read in ray-tracing shaders (`GENERAL`). Device feature
    /// `rayTracingPipeline`, as for every ray-tracing shader row.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    RAY_TRACING_SHADER_STORAGE_READ { stages: S::RAY_TRACING_SHADER_KHR,
        access: A::SHADER_STORAGE_READ, layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer written in ray-tracing shaders (`GENERAL`): the ray
    /// generation shader's output.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    RAY_TRACING_SHADER_STORAGE_WRITE { stages: S::RAY_TRACING_SHADER_KHR,
        access: A::SHADER_STORAGE_WRITE, layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer read and written in ray-tracing shaders (`GENERAL`): a path
    /// tracer's accumulation image.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `SHADER_STORAGE_READ | SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    RAY_TRACING_SHADER_STORAGE_READ_WRITE { stages: S::RAY_TRACING_SHADER_KHR,
        access: ac(&[A::SHADER_STORAGE_READ, A::SHADER_STORAGE_WRITE]), layout: L::GENERAL,
        queue: ANY_QUEUE, image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Sampled image or uniform texel buffer read in ray-tracing shaders (textures in hit
    /// shaders).
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    RAY_TRACING_SHADER_SAMPLED_READ { stages: S::RAY_TRACING_SHADER_KHR,
        access: A::SHADER_SAMPLED_READ, layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in ray-tracing shaders.
    ///
    /// - stages: `RAY_TRACING_SHADER_KHR`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    RAY_TRACING_SHADER_UNIFORM_READ { stages: S::RAY_TRACING_SHADER_KHR,
        access: A::UNIFORM_READ, layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }

    // --- Mesh and task shaders --------------------------------------------------------------
    /// Storage buffer (or image) read in a task shader: meshlet lists, culling input. Device
    /// feature `taskShader`.
    ///
    /// - stages: `TASK_SHADER_EXT`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    TASK_SHADER_STORAGE_READ { stages: S::TASK_SHADER_EXT, access: A::SHADER_STORAGE_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage buffer (or image) written in a task shader. Device feature `taskShader`.
    ///
    /// - stages: `TASK_SHADER_EXT`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    TASK_SHADER_STORAGE_WRITE { stages: S::TASK_SHADER_EXT, access: A::SHADER_STORAGE_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Sampled image or uniform texel buffer read in a task shader. Device feature
    /// `taskShader`.
    ///
    /// - stages: `TASK_SHADER_EXT`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    TASK_SHADER_SAMPLED_READ { stages: S::TASK_SHADER_EXT, access: A::SHADER_SAMPLED_READ,
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in a task shader. Device feature `taskShader`.
    ///
    /// - stages: `TASK_SHADER_EXT`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    TASK_SHADER_UNIFORM_READ { stages: S::TASK_SHADER_EXT, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }
    /// Storage buffer (or image) read in a mesh shader: vertices, meshlets. Device feature
    /// `meshShader`.
    ///
    /// - stages: `MESH_SHADER_EXT`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    MESH_SHADER_STORAGE_READ { stages: S::MESH_SHADER_EXT, access: A::SHADER_STORAGE_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage buffer (or image) written in a mesh shader. Device feature `meshShader`.
    ///
    /// - stages: `MESH_SHADER_EXT`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    MESH_SHADER_STORAGE_WRITE { stages: S::MESH_SHADER_EXT, access: A::SHADER_STORAGE_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Sampled image or uniform texel buffer read in a mesh shader. Device feature
    /// `meshShader`.
    ///
    /// - stages: `MESH_SHADER_EXT`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    MESH_SHADER_SAMPLED_READ { stages: S::MESH_SHADER_EXT, access: A::SHADER_SAMPLED_READ,
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in a mesh shader. Device feature `meshShader`.
    ///
    /// - stages: `MESH_SHADER_EXT`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    MESH_SHADER_UNIFORM_READ { stages: S::MESH_SHADER_EXT, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }

    // --- Video decode and encode ------------------------------------------------------------
    /// The bitstream buffer `vkCmdDecodeVideoKHR` reads. Queues of a video decode family.
    ///
    /// - stages: `VIDEO_DECODE_KHR`
    /// - access: `VIDEO_DECODE_READ_KHR`
    /// - layout: none (buffers only)
    VIDEO_DECODE_BITSTREAM_READ { stages: S::VIDEO_DECODE_KHR, access: A::VIDEO_DECODE_READ_KHR,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::VIDEO_DECODE_SRC_KHR }
    /// The decode output picture, where it is not in the DPB (`VIDEO_DECODE_DST_KHR`).
    /// Queues of a video decode family.
    ///
    /// - stages: `VIDEO_DECODE_KHR`
    /// - access: `VIDEO_DECODE_WRITE_KHR`
    /// - layout: `VIDEO_DECODE_DST_KHR`
    VIDEO_DECODE_OUTPUT_WRITE { stages: S::VIDEO_DECODE_KHR, access: A::VIDEO_DECODE_WRITE_KHR,
        layout: L::VIDEO_DECODE_DST_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_DECODE_DST_KHR, buffer_usage: NO_BUFFER }
    /// Reference pictures a decode reads from the DPB (`VIDEO_DECODE_DPB_KHR`); with a layered
    /// DPB, declare each reference slot's layers. Queues of a video decode family.
    ///
    /// - stages: `VIDEO_DECODE_KHR`
    /// - access: `VIDEO_DECODE_READ_KHR`
    /// - layout: `VIDEO_DECODE_DPB_KHR`
    VIDEO_DECODE_DPB_READ { stages: S::VIDEO_DECODE_KHR, access: A::VIDEO_DECODE_READ_KHR,
        layout: L::VIDEO_DECODE_DPB_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_DECODE_DPB_KHR, buffer_usage: NO_BUFFER }
    /// The DPB slot a decode reconstructs into, where the output is another picture. Queues
    /// of a video decode family.
    ///
    /// - stages: `VIDEO_DECODE_KHR`
    /// - access: `VIDEO_DECODE_WRITE_KHR`
    /// - layout: `VIDEO_DECODE_DPB_KHR`
    VIDEO_DECODE_DPB_WRITE { stages: S::VIDEO_DECODE_KHR, access: A::VIDEO_DECODE_WRITE_KHR,
        layout: L::VIDEO_DECODE_DPB_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_DECODE_DPB_KHR, buffer_usage: NO_BUFFER }
    /// The decode output where output and DPB coincide: the reconstructed picture, which
    /// must have both usages. Queues of a video decode family.
    ///
    /// - stages: `VIDEO_DECODE_KHR`
    /// - access: `VIDEO_DECODE_WRITE_KHR`
    /// - layout: `VIDEO_DECODE_DPB_KHR`
    VIDEO_DECODE_OUTPUT_DPB_WRITE { stages: S::VIDEO_DECODE_KHR,
        access: A::VIDEO_DECODE_WRITE_KHR, layout: L::VIDEO_DECODE_DPB_KHR, queue: ANY_QUEUE,
        image_usage: iu(&[IU::VIDEO_DECODE_DST_KHR, IU::VIDEO_DECODE_DPB_KHR]),
        buffer_usage: NO_BUFFER }
    /// The picture `vkCmdEncodeVideoKHR` encodes (`VIDEO_ENCODE_SRC_KHR`). Queues of a video
    /// encode family.
    ///
    /// - stages: `VIDEO_ENCODE_KHR`
    /// - access: `VIDEO_ENCODE_READ_KHR`
    /// - layout: `VIDEO_ENCODE_SRC_KHR`
    VIDEO_ENCODE_SOURCE_READ { stages: S::VIDEO_ENCODE_KHR, access: A::VIDEO_ENCODE_READ_KHR,
        layout: L::VIDEO_ENCODE_SRC_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_ENCODE_SRC_KHR, buffer_usage: NO_BUFFER }
    /// The bitstream buffer an encode writes. Queues of a video encode family.
    ///
    /// - stages: `VIDEO_ENCODE_KHR`
    /// - access: `VIDEO_ENCODE_WRITE_KHR`
    /// - layout: none (buffers only)
    VIDEO_ENCODE_BITSTREAM_WRITE { stages: S::VIDEO_ENCODE_KHR, access: A::VIDEO_ENCODE_WRITE_KHR,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::VIDEO_ENCODE_DST_KHR }
    /// Reference pictures an encode reads from the DPB (`VIDEO_ENCODE_DPB_KHR`). Queues of a
    /// video encode family.
    ///
    /// - stages: `VIDEO_ENCODE_KHR`
    /// - access: `VIDEO_ENCODE_READ_KHR`
    /// - layout: `VIDEO_ENCODE_DPB_KHR`
    VIDEO_ENCODE_DPB_READ { stages: S::VIDEO_ENCODE_KHR, access: A::VIDEO_ENCODE_READ_KHR,
        layout: L::VIDEO_ENCODE_DPB_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_ENCODE_DPB_KHR, buffer_usage: NO_BUFFER }
    /// The DPB slot an encode reconstructs into. Queues of a video encode family.
    ///
    /// - stages: `VIDEO_ENCODE_KHR`
    /// - access: `VIDEO_ENCODE_WRITE_KHR`
    /// - layout: `VIDEO_ENCODE_DPB_KHR`
    VIDEO_ENCODE_DPB_WRITE { stages: S::VIDEO_ENCODE_KHR, access: A::VIDEO_ENCODE_WRITE_KHR,
        layout: L::VIDEO_ENCODE_DPB_KHR, queue: ANY_QUEUE,
        image_usage: IU::VIDEO_ENCODE_DPB_KHR, buffer_usage: NO_BUFFER }
}
