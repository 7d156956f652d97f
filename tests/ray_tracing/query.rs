//! A compute pipeline that traces with ray queries (`ray_query.comp`), and its descriptor set
//! (the top-level structure and the hits buffer).

use vk_baton::ash::vk;
use vk_baton_context::Context;

/// The pipeline and its set.
pub struct RayQuery {
    device: ash::Device,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

impl RayQuery {
    /// The pipeline for `ctx`'s device, which has `rayQuery` enabled.
    pub fn new(ctx: &Context) -> RayQuery {
        let device = ctx.device().clone();
        let compute = vk::ShaderStageFlags::COMPUTE;
        let code = vk_baton_shaders::words(vk_baton_shaders::RAY_QUERY_COMP);
        // SAFETY: plain object creation on a live device with rayQuery enabled; everything is
        // destroyed on drop (the shader module once the pipeline exists).
        unsafe {
            let (set_layout, pool, set) = super::pipeline::structure_and_hits_set(&device, compute);
            let layouts = [set_layout];
            let layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                    None,
                )
                .unwrap();
            let module = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(compute)
                .module(module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout);
            let pipeline = device
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .unwrap()[0];
            device.destroy_shader_module(module, None);
            RayQuery {
                device,
                set_layout,
                layout,
                pipeline,
                pool,
                set,
            }
        }
    }

    /// Points the set at the top-level structure and the hits buffer.
    pub fn bind(&self, tlas: vk::AccelerationStructureKHR, hits: vk::Buffer) {
        super::pipeline::bind_structure_and_hits(&self.device, self.set, tlas, hits);
    }

    /// Records the one 8×8 workgroup.
    pub fn trace(&self, cmd: vk::CommandBuffer) {
        // SAFETY: the pipeline and set are alive; the graph put the resources in the
        // declared states.
        unsafe {
            let d = &self.device;
            let point = vk::PipelineBindPoint::COMPUTE;
            d.cmd_bind_pipeline(cmd, point, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, point, self.layout, 0, &[self.set], &[]);
            d.cmd_dispatch(cmd, 1, 1, 1);
        }
    }
}

impl Drop for RayQuery {
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
