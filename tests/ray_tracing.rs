//! Acceleration structures on the GPU: geometry and a shader binding table uploaded on the
//! transfer queue, a bottom-level and a top-level structure built on async compute, traced on
//! graphics, checked ray by ray, with validation: once by a ray-tracing pipeline, once by ray
//! queries in a compute shader. On the H100 the three queues are three families, with
//! ownership transfers between them; on lavapipe (Mesa 25, in the CI's layer root) they are
//! one queue. Each test skips where the device, as it reports itself, lacks its features
//! (Debian 12's lavapipe has none; the H100's driver has no `VK_KHR_ray_query`).

mod common;
#[path = "ray_tracing/pipeline.rs"]
mod pipeline;
#[path = "ray_tracing/query.rs"]
mod query;

use common::*;
use pipeline::RayPipeline;
use query::RayQuery;
use std::sync::Arc;
use vk_baton::access::DeviceFeatures;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, StBuffer};
use vk_baton_context::{Context, ContextOptions};

/// The triangle's corners in the z = 0 plane: the grid's ray (x, y) hits it where
/// x + y <= 7 (its hypotenuse, x + y = 1.03, passes between the rays' centres).
const TRIANGLE: [[f32; 3]; 3] = [[0.05, 0.05, 0.0], [0.98, 0.05, 0.0], [0.05, 0.98, 0.0]];
/// The instance's custom index, which the shader writes on a hit.
const CUSTOM_INDEX: u32 = 7;
/// Where the shader binding table starts in the staging buffer (after the geometry and the
/// instance).
const TABLE_AT: u64 = 128;

/// A context with `features` enabled, or `None` (the skip reported) where the device, as it
/// reports itself, lacks them.
fn ray_tracing_ctx(features: DeviceFeatures) -> Option<Context> {
    if ctx().machine().skips(&[Need::DeviceFeatures(features)]) {
        return None;
    }
    let ctx = Context::with_options(ContextOptions {
        validation: true,
        app_name: "vk-baton ray tracing test".into(),
        device_features: features,
        ..Default::default()
    });
    Some(ctx.unwrap_or_else(|e| panic!("the device has the features {features:?}, yet: {e}")))
}

/// What traces the rays: a ray-tracing pipeline and its shader binding table, or a compute
/// shader's ray queries.
enum Tracer {
    Pipeline(RayPipeline),
    Query(RayQuery),
}

impl Tracer {
    /// The shader binding table's bytes (none for ray queries).
    fn table(&self) -> &[u8] {
        match self {
            Tracer::Pipeline(p) => &p.table,
            Tracer::Query(_) => &[],
        }
    }

    fn bind(&self, tlas: vk::AccelerationStructureKHR, hits: vk::Buffer) {
        match self {
            Tracer::Pipeline(p) => p.bind(tlas, hits),
            Tracer::Query(q) => q.bind(tlas, hits),
        }
    }

    /// Declares what the trace reads and writes: the rays read the top level and, through
    /// it, the bottom level.
    fn declare(
        &self,
        d: &mut vk_baton::Declare<'_>,
        structures: [&Arc<StBuffer>; 2],
        table: Option<&Arc<StBuffer>>,
        hits: &Arc<StBuffer>,
    ) {
        let (read, write) = match self {
            Tracer::Pipeline(_) => (
                Access::RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ,
                Access::RAY_TRACING_SHADER_STORAGE_WRITE,
            ),
            Tracer::Query(_) => (
                Access::COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ,
                Access::COMPUTE_SHADER_WRITE,
            ),
        };
        for s in structures {
            d.uses(s, read);
        }
        if let Some(t) = table {
            d.uses(t, Access::SHADER_BINDING_TABLE_READ);
        }
        d.uses(hits, write).discard();
    }

    fn trace(&self, cmd: vk::CommandBuffer, table: vk::DeviceAddress) {
        match self {
            Tracer::Pipeline(p) => p.trace(cmd, table),
            Tracer::Query(q) => q.trace(cmd),
        }
    }
}

fn features() -> DeviceFeatures {
    DeviceFeatures::ACCELERATION_STRUCTURE | DeviceFeatures::RAY_TRACING_PIPELINE
}

/// One `VkAccelerationStructureInstanceKHR`: the identity transform, `CUSTOM_INDEX`, mask
/// 0xFF, culling off, and the bottom-level structure at `blas`.
fn instance_bytes(blas: vk::DeviceAddress) -> Vec<u8> {
    let mut b = Vec::with_capacity(64);
    let transform: [f32; 12] = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0.];
    transform.iter().for_each(|v| b.extend(v.to_le_bytes()));
    b.extend((CUSTOM_INDEX | 0xFF << 24).to_le_bytes());
    let cull_off = vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE.as_raw();
    b.extend((cull_off << 24).to_le_bytes());
    b.extend(blas.to_le_bytes());
    b
}

/// A structure of `ty` in a buffer of its own, with the build sizes it was made for.
struct Structure {
    handle: vk::AccelerationStructureKHR,
    buffer: Arc<StBuffer>,
    address: vk::DeviceAddress,
}

fn structure(
    ctx: &Context,
    ext: &ash::khr::acceleration_structure::Device,
    ty: vk::AccelerationStructureTypeKHR,
    size: u64,
    name: &str,
) -> Structure {
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let buffer = ctx.buffer(BufferDesc::new(size, usage), name).unwrap();
    let info = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(buffer.handle())
        .size(size)
        .ty(ty);
    // SAFETY: the buffer is alive and has the storage usage; the structure is destroyed
    // before it at the end of the test.
    let handle = unsafe { ext.create_acceleration_structure(&info, None) }.unwrap();
    let address = unsafe {
        // SAFETY: the structure was just created.
        ext.get_acceleration_structure_device_address(
            &vk::AccelerationStructureDeviceAddressInfoKHR::default()
                .acceleration_structure(handle),
        )
    };
    Structure {
        handle,
        buffer,
        address,
    }
}

fn address(ctx: &Context, b: &StBuffer) -> vk::DeviceAddress {
    // SAFETY: the buffer is alive and was created with SHADER_DEVICE_ADDRESS.
    unsafe {
        ctx.device()
            .get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(b.handle()))
    }
}

#[test]
fn a_blas_and_tlas_built_on_async_compute_are_traced_on_graphics() {
    let Some(ctx) = ray_tracing_ctx(features()) else {
        return;
    };
    let tracer = Tracer::Pipeline(RayPipeline::new(&ctx));
    build_and_trace(&ctx, tracer);
}

#[test]
fn ray_queries_in_a_compute_shader_find_the_same_hits() {
    let Some(ctx) =
        ray_tracing_ctx(DeviceFeatures::ACCELERATION_STRUCTURE | DeviceFeatures::RAY_QUERY)
    else {
        return;
    };
    let tracer = Tracer::Query(RayQuery::new(&ctx));
    build_and_trace(&ctx, tracer);
}

/// Uploads the geometry (and the table), builds both structures on async compute with one
/// scratch buffer, traces with `tracer` on graphics, and checks every ray.
fn build_and_trace(ctx: &Context, tracer: Tracer) {
    let ext = ash::khr::acceleration_structure::Device::new(ctx.instance(), ctx.device());
    let build_input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
        | vk::BufferUsageFlags::TRANSFER_DST;
    let vertices = ctx
        .buffer(BufferDesc::new(36, build_input), "vertices")
        .unwrap();
    let instances = ctx
        .buffer(BufferDesc::new(64, build_input), "instances")
        .unwrap();

    // Sizes: the bottom level over one triangle, the top level over one instance.
    let triangles = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR {
            device_address: address(ctx, &vertices),
        })
        .vertex_stride(12)
        .max_vertex(2)
        .index_type(vk::IndexType::NONE_KHR);
    let blas_geometry = [vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles })
        .flags(vk::GeometryFlagsKHR::OPAQUE)];
    let tlas_geometry = [vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR {
            instances: vk::AccelerationStructureGeometryInstancesDataKHR::default().data(
                vk::DeviceOrHostAddressConstKHR {
                    device_address: address(ctx, &instances),
                },
            ),
        })];
    let build = |ty, geometry| {
        vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(ty)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .flags(vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE)
            .geometries(geometry)
    };
    let sizes = |info: &vk::AccelerationStructureBuildGeometryInfoKHR<'_>| {
        let mut s = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: a query with a valid build description.
        unsafe {
            ext.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                info,
                &[1],
                &mut s,
            )
        };
        s
    };
    let bl = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let tl = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
    let (blas_sizes, tlas_sizes) = (
        sizes(&build(bl, &blas_geometry)),
        sizes(&build(tl, &tlas_geometry)),
    );
    let blas = structure(
        ctx,
        &ext,
        bl,
        blas_sizes.acceleration_structure_size,
        "blas",
    );
    let tlas = structure(
        ctx,
        &ext,
        tl,
        tlas_sizes.acceleration_structure_size,
        "tlas",
    );
    // One scratch buffer for both builds: the graph orders the second after the first.
    let scratch_size = blas_sizes
        .build_scratch_size
        .max(tlas_sizes.build_scratch_size);
    let scratch = ctx
        .buffer(
            BufferDesc::new(
                scratch_size,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
            ),
            "scratch",
        )
        .unwrap();

    // The host writes the geometry, the instance and the shader binding table into a staging
    // buffer before the graph.
    let table_len = tracer.table().len() as u64;
    let staging = ctx
        .buffer(
            BufferDesc::upload(TABLE_AT + table_len, vk::BufferUsageFlags::TRANSFER_SRC),
            "staging",
        )
        .unwrap();
    let corners: Vec<u8> = TRIANGLE
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    staging.write(0, &corners).unwrap();
    staging.write(36, &instance_bytes(blas.address)).unwrap();
    let table = (table_len > 0).then(|| {
        staging.write(TABLE_AT, tracer.table()).unwrap();
        ctx.buffer(
            BufferDesc::new(
                table_len,
                vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::TRANSFER_DST,
            ),
            "shader binding table",
        )
        .unwrap()
    });
    let hits = ctx
        .buffer(
            BufferDesc::new(
                256,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "hits",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(256, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();

    tracer.bind(tlas.handle, hits.handle());
    let table_address = table.as_ref().map_or(0, |t| address(ctx, t));

    let graph = ctx.graph().unwrap();
    let scratch_address = address(ctx, &scratch);
    let build_into = |ty, geometry, dst: vk::AccelerationStructureKHR| {
        build(ty, geometry)
            .dst_acceleration_structure(dst)
            .scratch_data(vk::DeviceOrHostAddressKHR {
                device_address: scratch_address,
            })
    };
    let one = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(1)];
    graph
        .record()
        .insert_fn(
            "upload geometry and table",
            ctx.transfer(),
            |d| {
                d.uses(&staging, Access::COPY_READ);
                d.uses(&vertices, Access::COPY_WRITE).discard();
                d.uses(&instances, Access::COPY_WRITE).discard();
                if let Some(t) = &table {
                    d.uses(t, Access::COPY_WRITE).discard();
                }
            },
            |r| {
                let copy =
                    |from: u64, size: u64| [vk::BufferCopy::default().src_offset(from).size(size)];
                // SAFETY: the buffers are alive and large enough, in the declared states.
                unsafe {
                    let (d, cmd, src) = (r.device(), r.cmd(), staging.handle());
                    d.cmd_copy_buffer(cmd, src, vertices.handle(), &copy(0, 36));
                    d.cmd_copy_buffer(cmd, src, instances.handle(), &copy(36, 64));
                    if let Some(t) = &table {
                        d.cmd_copy_buffer(cmd, src, t.handle(), &copy(TABLE_AT, table_len));
                    }
                }
                Ok(())
            },
        )
        .insert_fn(
            "build blas",
            ctx.async_compute(),
            |d| {
                d.uses(&vertices, Access::ACCELERATION_STRUCTURE_BUILD_INPUT_READ);
                d.uses(
                    &scratch,
                    Access::ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE,
                )
                .discard();
                d.uses(&blas.buffer, Access::ACCELERATION_STRUCTURE_BUILD_WRITE)
                    .discard();
            },
            |r| {
                let info = build_into(bl, &blas_geometry, blas.handle);
                // SAFETY: the geometry, scratch and destination are alive and in the
                // declared states; the sizes were queried for this build.
                unsafe { ext.cmd_build_acceleration_structures(r.cmd(), &[info], &[&one]) };
                Ok(())
            },
        )
        .insert_fn(
            "build tlas",
            ctx.async_compute(),
            |d| {
                d.uses(&instances, Access::ACCELERATION_STRUCTURE_BUILD_INPUT_READ);
                d.uses(
                    &scratch,
                    Access::ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE,
                )
                .discard();
                d.uses(&blas.buffer, Access::ACCELERATION_STRUCTURE_BUILD_READ);
                d.uses(&tlas.buffer, Access::ACCELERATION_STRUCTURE_BUILD_WRITE)
                    .discard();
            },
            |r| {
                let info = build_into(tl, &tlas_geometry, tlas.handle);
                // SAFETY: as for the bottom level; the instance names the built structure.
                unsafe { ext.cmd_build_acceleration_structures(r.cmd(), &[info], &[&one]) };
                Ok(())
            },
        )
        .insert_fn(
            "trace",
            ctx.graphics(),
            |d| tracer.declare(d, [&tlas.buffer, &blas.buffer], table.as_ref(), &hits),
            |r| {
                tracer.trace(r.cmd(), table_address);
                Ok(())
            },
        )
        .insert_fn(
            "read back",
            ctx.graphics(),
            |d| {
                d.uses(&hits, Access::COPY_READ);
                d.uses(&readback, Access::COPY_WRITE).discard();
            },
            |r| {
                let all = vk::BufferCopy::default().size(256);
                // SAFETY: both buffers are alive and 256 bytes long.
                unsafe {
                    r.device()
                        .cmd_copy_buffer(r.cmd(), hits.handle(), readback.handle(), &[all])
                };
                Ok(())
            },
        )
        .insert_fn(
            "host",
            ctx.graphics(),
            |d| {
                d.uses(&readback, Access::HOST_READ);
            },
            |_r| Ok(()),
        )
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();

    let mut out = [0u8; 256];
    readback.read(0, &mut out).unwrap();
    let got: Vec<u32> = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let expected: Vec<u32> = (0..64)
        .map(|i| {
            let (x, y) = (i % 8, i / 8);
            if x + y <= 7 {
                0x100 | CUSTOM_INDEX
            } else {
                0
            }
        })
        .collect();
    assert_eq!(got, expected);
    // SAFETY: the execution is complete; nothing uses the structures any more.
    unsafe {
        ext.destroy_acceleration_structure(tlas.handle, None);
        ext.destroy_acceleration_structure(blas.handle, None);
    }
    drop(tracer);
    assert_clean(ctx);
}

/// The context refuses features the device lacks with a clear error, and a context without
/// them tells its graphs none.
#[test]
fn a_context_tells_its_graphs_the_features_it_enabled() {
    let ctx = ctx();
    assert_eq!(ctx.device_features(), DeviceFeatures::NONE);
    assert_eq!(ctx.graph().unwrap().device_features(), DeviceFeatures::NONE);
    drop(ctx);
    // Whether the device has them decides; each outcome is checked for what it promises.
    match Context::with_options(ContextOptions {
        validation: true,
        device_features: features(),
        ..Default::default()
    }) {
        Ok(ctx) => {
            assert_eq!(ctx.device_features(), features());
            assert_eq!(ctx.graph().unwrap().device_features(), features());
            assert_clean(&ctx);
        }
        Err(e) => {
            // Refused for one of the extensions or features these need.
            let text = e.to_string();
            let needed = [
                "VK_KHR_acceleration_structure",
                "VK_KHR_deferred_host_operations",
                "VK_KHR_ray_tracing_pipeline",
                "accelerationStructure",
                "rayTracingPipeline",
                "bufferDeviceAddress",
            ];
            assert!(needed.iter().any(|n| text.contains(n)), "{text}");
        }
    }
}
