//! A ray-tracing pipeline of three shaders (ray generation, miss, closest hit), its
//! descriptor set (the top-level structure and the hits buffer) and its shader binding table.

use vk_baton::ash::vk;
use vk_baton_context::Context;

/// The pipeline, its set, and the shader binding table's bytes with each region's offset.
pub struct RayPipeline {
    device: ash::Device,
    pub ext: ash::khr::ray_tracing_pipeline::Device,
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    /// The table: ray generation at 0, miss at `region`, hit group at `2 * region`.
    pub table: Vec<u8>,
    /// The distance between regions (`shaderGroupBaseAlignment`), and one record's stride.
    region: u64,
    stride: u64,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

fn module(device: &ash::Device, spirv: &[u8]) -> vk::ShaderModule {
    let code = vk_baton_shaders::words(spirv);
    // SAFETY: valid SPIR-V from the shaders crate; destroyed once the pipeline exists.
    unsafe { device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None) }
        .unwrap()
}

impl RayPipeline {
    /// The pipeline for `ctx`'s device, which has `rayTracingPipeline` enabled.
    pub fn new(ctx: &Context) -> RayPipeline {
        let device = ctx.device().clone();
        let ext = ash::khr::ray_tracing_pipeline::Device::new(ctx.instance(), &device);
        let mut props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        // SAFETY: a plain query on the context's physical device.
        unsafe {
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
            ctx.instance()
                .get_physical_device_properties2(ctx.physical_device(), &mut p2);
        }
        let raygen = vk::ShaderStageFlags::RAYGEN_KHR;
        let unused = vk::SHADER_UNUSED_KHR;
        let group = |ty, general, hit| {
            vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(ty)
                .general_shader(general)
                .closest_hit_shader(hit)
                .any_hit_shader(unused)
                .intersection_shader(unused)
        };
        let general = vk::RayTracingShaderGroupTypeKHR::GENERAL;
        let groups = [
            group(general, 0, unused),
            group(general, 1, unused),
            group(
                vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP,
                unused,
                2,
            ),
        ];
        let modules = [
            module(&device, vk_baton_shaders::RAY_TRACE_RGEN),
            module(&device, vk_baton_shaders::RAY_TRACE_RMISS),
            module(&device, vk_baton_shaders::RAY_TRACE_RCHIT),
        ];
        let stage_flags = [
            raygen,
            vk::ShaderStageFlags::MISS_KHR,
            vk::ShaderStageFlags::CLOSEST_HIT_KHR,
        ];
        let stages: Vec<_> = modules
            .iter()
            .zip(stage_flags)
            .map(|(&m, s)| {
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(s)
                    .module(m)
                    .name(c"main")
            })
            .collect();
        // SAFETY: plain object creation with valid create infos; everything is destroyed in
        // Drop, the modules as soon as the pipeline exists.
        unsafe {
            let (set_layout, pool, set) = structure_and_hits_set(&device, raygen);
            let set_layouts = [set_layout];
            let layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                    None,
                )
                .unwrap();
            let info = vk::RayTracingPipelineCreateInfoKHR::default()
                .stages(&stages)
                .groups(&groups)
                .max_pipeline_ray_recursion_depth(1)
                .layout(layout);
            let pipeline = ext
                .create_ray_tracing_pipelines(
                    vk::DeferredOperationKHR::null(),
                    vk::PipelineCache::null(),
                    &[info],
                    None,
                )
                .map_err(|(_, e)| e)
                .unwrap()[0];
            for m in modules {
                device.destroy_shader_module(m, None);
            }
            let size = props.shader_group_handle_size as usize;
            let handles = ext
                .get_ray_tracing_shader_group_handles(pipeline, 0, 3, 3 * size)
                .unwrap();
            let region = u64::from(props.shader_group_base_alignment);
            let stride = align_up(
                u64::from(props.shader_group_handle_size),
                u64::from(props.shader_group_handle_alignment),
            );
            let mut table = vec![0u8; 3 * region as usize];
            for (g, handle) in handles.chunks_exact(size).enumerate() {
                let at = g * region as usize;
                table[at..at + size].copy_from_slice(handle);
            }
            RayPipeline {
                device,
                ext,
                set_layout,
                layout,
                pipeline,
                pool,
                set,
                table,
                region,
                stride,
            }
        }
    }

    /// Points the set at the top-level structure `tlas` and the storage buffer `hits`.
    pub fn bind(&self, tlas: vk::AccelerationStructureKHR, hits: vk::Buffer) {
        bind_structure_and_hits(&self.device, self.set, tlas, hits);
    }

    /// Records an 8×8 trace with the table at device address `table`.
    pub fn trace(&self, cmd: vk::CommandBuffer, table: vk::DeviceAddress) {
        let region = |g: u64| vk::StridedDeviceAddressRegionKHR {
            device_address: table + g * self.region,
            stride: self.stride,
            size: self.stride,
        };
        let none = vk::StridedDeviceAddressRegionKHR::default();
        // SAFETY: the pipeline, set and table are alive; the graph put the resources in the
        // declared states.
        unsafe {
            let d = &self.device;
            let point = vk::PipelineBindPoint::RAY_TRACING_KHR;
            d.cmd_bind_pipeline(cmd, point, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, point, self.layout, 0, &[self.set], &[]);
            self.ext
                .cmd_trace_rays(cmd, &region(0), &region(1), &region(2), &none, 8, 8, 1);
        }
    }
}

impl Drop for RayPipeline {
    fn drop(&mut self) {
        // SAFETY: the test waits for its execution before dropping the pipeline.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Points `set` (binding 0 a top-level structure, binding 1 a storage buffer) at `tlas` and
/// `hits`: the set of both the ray-tracing pipeline and the ray-query pipeline.
pub fn bind_structure_and_hits(
    device: &ash::Device,
    set: vk::DescriptorSet,
    tlas: vk::AccelerationStructureKHR,
    hits: vk::Buffer,
) {
    let structures = [tlas];
    let mut structure_write = vk::WriteDescriptorSetAccelerationStructureKHR::default()
        .acceleration_structures(&structures);
    let hits_info = [vk::DescriptorBufferInfo {
        buffer: hits,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let writes = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
            .descriptor_count(1)
            .push_next(&mut structure_write),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&hits_info),
    ];
    // SAFETY: the set is not in use; the structure and the buffer are alive.
    unsafe { device.update_descriptor_sets(&writes, &[]) };
}

/// A set layout (binding 0 a top-level structure, binding 1 a storage buffer, both for
/// `stages`), a pool for one set, and that set: the set of both ray pipelines.
///
/// # Safety
///
/// `device` is live; the caller destroys the pool and the layout, after the set's last use.
pub unsafe fn structure_and_hits_set(
    device: &ash::Device,
    stages: vk::ShaderStageFlags,
) -> (
    vk::DescriptorSetLayout,
    vk::DescriptorPool,
    vk::DescriptorSet,
) {
    let kinds = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let bindings = kinds.map(|ty| {
        vk::DescriptorSetLayoutBinding::default()
            .descriptor_type(ty)
            .descriptor_count(1)
            .stage_flags(stages)
    });
    let bindings = [bindings[0].binding(0), bindings[1].binding(1)];
    let sizes = kinds.map(|ty| vk::DescriptorPoolSize {
        ty,
        descriptor_count: 1,
    });
    // SAFETY: plain object creation on a live device (the caller's promise).
    unsafe {
        let set_layout = device
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .unwrap();
        let pool = device
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
            .unwrap();
        let layouts = [set_layout];
        let set = device
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
            .unwrap()[0];
        (set_layout, pool, set)
    }
}
