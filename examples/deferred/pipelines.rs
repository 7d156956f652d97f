//! The deferred sample's graphics pipelines, made for dynamic rendering from the formats of the
//! passes that draw with them (`RenderFormats::of(..).info()`, before the passes exist), and
//! the descriptor set that gives their vertex shader the instances; and [`Samplers`], the two
//! samplers the compute passes share.
//!
//! Every pipeline has the same layout: set 0 binding 0, the instances (a storage buffer the
//! vertex shader reads), and 16 bytes of push constants (`{ width, height, frame, view }`).
//! Viewport and scissor are dynamic (the `Render` pass sets them to its area). No face is
//! culled: the transparency shader drops the faces turned away itself.

use super::scene::{Scene, VERTEX_STRIDE};
use std::sync::Arc;
use support::vkerr;
use vk_baton::ash::{self, vk};
use vk_baton_passes::render::RenderFormats;
use vk_baton_shaders::deferred as spv;

/// The formats each pipeline draws into.
pub struct Formats {
    /// Albedo and normal, and depth.
    pub gbuffer: RenderFormats,
    /// Depth only.
    pub shadow: RenderFormats,
    /// The multisampled depth of the opaque scene, depth only.
    pub forward_depth: RenderFormats,
    /// The multisampled transparency layer over the multisampled depth (read-only).
    pub transparent: RenderFormats,
    /// The output image.
    pub ui: RenderFormats,
}

/// How a pipeline blends into its color targets.
#[derive(Clone, Copy, PartialEq)]
enum Blend {
    None,
    /// Premultiplied colour: ONE, ONE_MINUS_SRC_ALPHA.
    Premultiplied,
    /// Straight alpha over the target, whose alpha is kept: SRC_ALPHA, ONE_MINUS_SRC_ALPHA.
    Alpha,
}

/// How a pipeline tests and writes depth.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    None,
    /// Test LESS and write.
    Write,
    /// Test LESS_OR_EQUAL, never write (a read-only depth target).
    Test,
}

/// The pipelines, their layout and the instances' descriptor set; destroyed on drop, once no
/// execution uses them (each draw keeps this object alive until its execution completes).
pub struct Pipelines {
    device: ash::Device,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    pub layout: vk::PipelineLayout,
    /// Binding 0: the scene's instances.
    pub set: vk::DescriptorSet,
    pub shadow: vk::Pipeline,
    pub gbuffer: vk::Pipeline,
    pub forward_depth: vk::Pipeline,
    pub transparent: vk::Pipeline,
    pub ui: vk::Pipeline,
}

impl Pipelines {
    pub fn new(device: &ash::Device, f: &Formats, scene: &Scene) -> vk_baton::Result<Arc<Self>> {
        let mut p = Pipelines {
            device: device.clone(),
            set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            layout: vk::PipelineLayout::null(),
            set: vk::DescriptorSet::null(),
            shadow: vk::Pipeline::null(),
            gbuffer: vk::Pipeline::null(),
            forward_depth: vk::Pipeline::null(),
            transparent: vk::Pipeline::null(),
            ui: vk::Pipeline::null(),
        };
        // SAFETY (every call below): valid create infos on a live device; each handle goes
        // into `p` at once, whose Drop destroys it if a later step fails.
        unsafe {
            let bindings = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX)];
            p.set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            let ranges = [vk::PushConstantRange {
                stage_flags: vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
                offset: 0,
                size: 16,
            }];
            let set_layouts = [p.set_layout];
            p.layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .map_err(vkerr("vkCreatePipelineLayout"))?;
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 1,
            }];
            p.pool = device
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            p.set = device
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(p.pool)
                        .set_layouts(&set_layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
            // The instances buffer is the app's: its handle never changes, so the set is
            // written once.
            let info = [vk::DescriptorBufferInfo::default()
                .buffer(scene.instances.handle())
                .range(vk::WHOLE_SIZE)];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(p.set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&info);
            device.update_descriptor_sets(&[write], &[]);
        }
        let mesh = spv::MESH_VERT;
        p.shadow = p.make(mesh, None, &f.shadow, Blend::None, Depth::Write)?;
        let gbuffer = Some(spv::GBUFFER_FRAG);
        p.gbuffer = p.make(mesh, gbuffer, &f.gbuffer, Blend::None, Depth::Write)?;
        p.forward_depth = p.make(mesh, None, &f.forward_depth, Blend::None, Depth::Write)?;
        let glass = Some(spv::TRANSPARENT_FRAG);
        p.transparent = p.make(
            mesh,
            glass,
            &f.transparent,
            Blend::Premultiplied,
            Depth::Test,
        )?;
        let ui = Some(spv::UI_FRAG);
        p.ui = p.make(spv::UI_VERT, ui, &f.ui, Blend::Alpha, Depth::None)?;
        Ok(Arc::new(p))
    }

    /// One pipeline: `vert` with the mesh vertex layout (`MESH_VERT`) or none (`UI_VERT`),
    /// `frag` if any (none: depth only), for `formats`.
    fn make(
        &self,
        vert: &[u8],
        frag: Option<&[u8]>,
        formats: &RenderFormats,
        blend: Blend,
        depth: Depth,
    ) -> vk_baton::Result<vk::Pipeline> {
        let mesh = vert == spv::MESH_VERT;
        let mut modules = Vec::with_capacity(2);
        for code in [Some(vert), frag].into_iter().flatten() {
            let words = support::spirv(code)?;
            let info = vk::ShaderModuleCreateInfo::default().code(&words);
            // SAFETY: valid SPIR-V from the shaders crate, on a live device.
            match unsafe { self.device.create_shader_module(&info, None) } {
                Ok(m) => modules.push(m),
                Err(e) => {
                    // SAFETY: made above, used by nothing yet.
                    unsafe {
                        modules
                            .iter()
                            .for_each(|&m| self.device.destroy_shader_module(m, None))
                    };
                    return Err(vk_baton::Error::vk("vkCreateShaderModule", e));
                }
            }
        }
        let stage_flags = [vk::ShaderStageFlags::VERTEX, vk::ShaderStageFlags::FRAGMENT];
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
        let bindings = [vk::VertexInputBindingDescription {
            binding: 0,
            stride: VERTEX_STRIDE,
            input_rate: vk::VertexInputRate::VERTEX,
        }];
        let attributes = [0, 1].map(|location| vk::VertexInputAttributeDescription {
            location,
            binding: 0,
            format: vk::Format::R32G32B32_SFLOAT,
            offset: 12 * location,
        });
        let mut vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        if mesh {
            vertex_input = vertex_input
                .vertex_binding_descriptions(&bindings)
                .vertex_attribute_descriptions(&attributes);
        }
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
        let depth_state = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(depth != Depth::None)
            .depth_write_enable(depth == Depth::Write)
            .depth_compare_op(if depth == Depth::Test {
                vk::CompareOp::LESS_OR_EQUAL
            } else {
                vk::CompareOp::LESS
            });
        let (src, src_alpha, dst_alpha) = match blend {
            Blend::Alpha => (
                vk::BlendFactor::SRC_ALPHA,
                vk::BlendFactor::ZERO,
                vk::BlendFactor::ONE,
            ),
            _ => (
                vk::BlendFactor::ONE,
                vk::BlendFactor::ONE,
                vk::BlendFactor::ONE_MINUS_SRC_ALPHA,
            ),
        };
        let attachments: Vec<_> = formats
            .colors
            .iter()
            .map(|_| {
                vk::PipelineColorBlendAttachmentState::default()
                    .blend_enable(blend != Blend::None)
                    .src_color_blend_factor(src)
                    .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
                    .color_blend_op(vk::BlendOp::ADD)
                    .src_alpha_blend_factor(src_alpha)
                    .dst_alpha_blend_factor(dst_alpha)
                    .alpha_blend_op(vk::BlendOp::ADD)
                    .color_write_mask(vk::ColorComponentFlags::RGBA)
            })
            .collect();
        let blending = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
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
            .depth_stencil_state(&depth_state)
            .color_blend_state(&blending)
            .dynamic_state(&dynamic)
            .layout(self.layout)
            .push_next(&mut rendering);
        // SAFETY: a complete create info for dynamic rendering (which the Context enables),
        // with this object's layout; the modules are needed only while it is created.
        let made = unsafe {
            let made =
                self.device
                    .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None);
            for m in modules {
                self.device.destroy_shader_module(m, None);
            }
            made
        };
        made.map(|p| p[0])
            .map_err(|(_, e)| vk_baton::Error::vk("vkCreateGraphicsPipelines", e))
    }
}

impl Drop for Pipelines {
    fn drop(&mut self) {
        // SAFETY: no execution that used them is running (each holds this object until it
        // completes); null handles are ignored.
        unsafe {
            for p in [
                self.shadow,
                self.gbuffer,
                self.forward_depth,
                self.transparent,
                self.ui,
            ] {
                self.device.destroy_pipeline(p, None);
            }
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// The two samplers every pass shares; destroyed when the last pass and execution let go.
pub struct Samplers {
    device: ash::Device,
    pub linear: vk::Sampler,
    pub nearest: vk::Sampler,
}

impl Samplers {
    pub fn new(device: &ash::Device) -> vk_baton::Result<Arc<Self>> {
        let make = |filter| {
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(filter)
                .min_filter(filter)
                .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
            // SAFETY: a valid create info on a live device.
            unsafe { device.create_sampler(&info, None) }.map_err(vkerr("vkCreateSampler"))
        };
        let linear = make(vk::Filter::LINEAR)?;
        let nearest = make(vk::Filter::NEAREST).inspect_err(|_| {
            // SAFETY: just created, never used.
            unsafe { device.destroy_sampler(linear, None) }
        })?;
        Ok(Arc::new(Samplers {
            device: device.clone(),
            linear,
            nearest,
        }))
    }
}

impl Drop for Samplers {
    fn drop(&mut self) {
        // SAFETY: every execution that used them holds this object until it completes.
        unsafe {
            self.device.destroy_sampler(self.linear, None);
            self.device.destroy_sampler(self.nearest, None);
        }
    }
}
