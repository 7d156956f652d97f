//! A graphics pipeline for dynamic rendering, as the raster tests need it: `raster.vert` and
//! `raster.frag`, vertices of a position (`vec3`) and a colour (`vec4`), triangle lists, no
//! culling, dynamic viewport and scissor.

use vk_baton::ash::{self, vk};
use vk_baton_passes::render::RenderFormats;

/// How the pipeline tests depth and blends.
#[derive(Clone, Copy)]
pub struct Options {
    /// Depth test LESS, with depth writes when `true`; no depth test when `None`.
    pub depth_write: Option<bool>,
    /// Additive blending (ONE, ONE) instead of none.
    pub additive: bool,
    /// Stencil test ALWAYS, writing the reference 1 where the depth test passes; no stencil
    /// test when `false`.
    pub stencil_replace: bool,
}

/// A pipeline and what it owns; destroyed on drop (after the queue is idle: the tests wait).
pub struct Pipeline {
    device: ash::Device,
    layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
}

/// Bytes per vertex: three floats of position, four of colour.
pub const STRIDE: u32 = 28;

fn module(device: &ash::Device, spirv: &[u8]) -> vk::ShaderModule {
    let words = vk_baton_shaders::words(spirv);
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: valid SPIR-V from the shaders crate, on a live device.
    unsafe { device.create_shader_module(&info, None) }.expect("shader module")
}

impl Pipeline {
    pub fn new(device: &ash::Device, formats: &RenderFormats, o: Options) -> Pipeline {
        let (vert, frag) = (
            module(device, vk_baton_shaders::RASTER_VERT),
            module(device, vk_baton_shaders::RASTER_FRAG),
        );
        // SAFETY: an empty layout on a live device.
        let layout = unsafe {
            device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default(), None)
        }
        .expect("layout");
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vert)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(frag)
                .name(c"main"),
        ];
        let bindings = [vk::VertexInputBindingDescription {
            binding: 0,
            stride: STRIDE,
            input_rate: vk::VertexInputRate::VERTEX,
        }];
        let attributes = [
            vk::VertexInputAttributeDescription {
                location: 0,
                binding: 0,
                format: vk::Format::R32G32B32_SFLOAT,
                offset: 0,
            },
            vk::VertexInputAttributeDescription {
                location: 1,
                binding: 0,
                format: vk::Format::R32G32B32A32_SFLOAT,
                offset: 12,
            },
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&bindings)
            .vertex_attribute_descriptions(&attributes);
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(formats.samples);
        let depth = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(o.depth_write.is_some())
            .depth_write_enable(o.depth_write == Some(true))
            .depth_compare_op(vk::CompareOp::LESS)
            .stencil_test_enable(o.stencil_replace)
            .front(stencil_replace())
            .back(stencil_replace());
        let blend: Vec<vk::PipelineColorBlendAttachmentState> = formats
            .colors
            .iter()
            .map(|_| {
                vk::PipelineColorBlendAttachmentState::default()
                    .blend_enable(o.additive)
                    .src_color_blend_factor(vk::BlendFactor::ONE)
                    .dst_color_blend_factor(vk::BlendFactor::ONE)
                    .color_blend_op(vk::BlendOp::ADD)
                    .src_alpha_blend_factor(vk::BlendFactor::ONE)
                    .dst_alpha_blend_factor(vk::BlendFactor::ONE)
                    .alpha_blend_op(vk::BlendOp::ADD)
                    .color_write_mask(vk::ColorComponentFlags::RGBA)
            })
            .collect();
        let blending = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
        let dynamic = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
        let mut rendering = formats.info();
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blending)
            .dynamic_state(&dynamic)
            .layout(layout)
            .push_next(&mut rendering);
        // SAFETY: a complete create info for dynamic rendering on a device with it enabled.
        let pipeline =
            unsafe { device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) }
                .map_err(|(_, e)| e)
                .expect("pipeline")[0];
        // SAFETY: the modules are only needed while the pipeline is created.
        unsafe {
            device.destroy_shader_module(vert, None);
            device.destroy_shader_module(frag, None);
        }
        Pipeline {
            device: device.clone(),
            layout,
            pipeline,
        }
    }
}

/// Always passes; where the depth test passes too, writes the reference 1.
fn stencil_replace() -> vk::StencilOpState {
    vk::StencilOpState {
        fail_op: vk::StencilOp::KEEP,
        pass_op: vk::StencilOp::REPLACE,
        depth_fail_op: vk::StencilOp::KEEP,
        compare_op: vk::CompareOp::ALWAYS,
        compare_mask: 0xff,
        write_mask: 0xff,
        reference: 1,
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // SAFETY: the tests wait for their executions before dropping the pipeline.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
        }
    }
}

/// The vertices of an axis-aligned rectangle from `(x0, y0)` to `(x1, y1)` in clip space at
/// depth `z`, all of colour `rgba`: four vertices, as bytes.
pub fn rect(x0: f32, y0: f32, x1: f32, y1: f32, z: f32, rgba: [f32; 4]) -> Vec<u8> {
    [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        .iter()
        .flat_map(|&(x, y)| [x, y, z].into_iter().chain(rgba))
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// The six indices of two triangles over the rectangle whose first vertex is `first`.
pub fn rect_indices(first: u32) -> [u32; 6] {
    [0, 1, 2, 0, 2, 3].map(|i| first + i)
}
