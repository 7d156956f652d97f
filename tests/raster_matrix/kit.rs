//! The matrix's Vulkan objects: one pipeline per way of writing or reading, descriptor sets
//! and image views, all destroyed on drop (after the tests waited for their executions).

use super::cases::{COLOR, DEPTH, RESULT};
use super::gpu_stencil::StencilProgs;
use std::sync::Mutex;
use vk_baton::ash::{self, vk};
use vk_baton::StImage;
use vk_baton_context::Context;
use vk_baton_shaders::matrix as spv;

/// A pipeline with its layout; set 0 holds `bindings` in order.
#[derive(Clone, Copy)]
pub struct Prog {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    pub bind_point: vk::PipelineBindPoint,
}

/// What a pipeline does with the stencil of its depth/stencil format.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum StencilOp {
    /// No test (the rendering has a stencil attachment all the same).
    Keep,
    /// ALWAYS, REPLACE where the depth test passes, by the dynamic reference.
    Replace,
    /// EQUAL with the dynamic reference and compare mask; no writes.
    Equal,
}

/// How a graphics pipeline draws.
#[derive(Clone, Copy)]
pub(super) struct Gfx {
    pub vert: &'static [u8],
    pub frag: &'static [u8],
    pub color: Option<vk::Format>,
    pub depth: Option<vk::Format>,
    /// A stencil attachment of the depth format, and what the pipeline does with it.
    pub stencil: Option<StencilOp>,
    pub samples: vk::SampleCountFlags,
    /// A `uint` vertex attribute at location 0.
    pub vertex_input: bool,
    pub points: bool,
    pub blend: bool,
    /// Depth test ALWAYS with writes (`Some(true)`), LESS without (`Some(false)`), or none.
    pub depth_write: Option<bool>,
}

impl Gfx {
    /// Points from `vert` and `frag` into a single-sample `color` target, nothing else.
    pub fn new(vert: &'static [u8], frag: &'static [u8], color: Option<vk::Format>) -> Gfx {
        Gfx {
            vert,
            frag,
            color,
            depth: None,
            stencil: None,
            samples: vk::SampleCountFlags::TYPE_1,
            vertex_input: false,
            points: true,
            blend: false,
            depth_write: None,
        }
    }
}

pub(super) const SB: vk::DescriptorType = vk::DescriptorType::STORAGE_BUFFER;
const UB: vk::DescriptorType = vk::DescriptorType::UNIFORM_BUFFER;
pub(super) const SI: vk::DescriptorType = vk::DescriptorType::SAMPLED_IMAGE;
const ST: vk::DescriptorType = vk::DescriptorType::STORAGE_IMAGE;

/// Every pipeline of the matrix, by what it does.
pub struct Kit {
    device: ash::Device,
    pool: vk::DescriptorPool,
    progs: Vec<Prog>,
    views: Mutex<Vec<vk::ImageView>>,
    pub write_color: Prog,
    pub write_blend: Prog,
    pub write_msaa: Prog,
    pub write_depth: Prog,
    pub write_fs_storage: Prog,
    pub write_vs_storage: Prog,
    pub copy: Prog,
    pub write_image: Prog,
    pub fixed: Prog,
    pub vb: Prog,
    pub vs_ubo: Prog,
    pub vs_ssbo: Prog,
    pub vs_sampled: Prog,
    pub vs_storage: Prog,
    pub fs_ubo: Prog,
    pub fs_ssbo: Prog,
    pub fs_sampled: Prog,
    pub fs_storage: Prog,
    pub depth_count: Prog,
    pub cs_storage: Prog,
    pub cs_sampled: Prog,
    pub cs_dispatch: Prog,
    pub stencil: StencilProgs,
}

fn module(device: &ash::Device, spirv: &[u8]) -> vk::ShaderModule {
    let words = vk_baton_shaders::words(spirv);
    // SAFETY: valid SPIR-V from the shaders crate, on a live device.
    unsafe {
        device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
    }
    .expect("shader module")
}

impl Kit {
    pub fn new(ctx: &Context) -> Kit {
        let device = ctx.device().clone();
        let sizes = [SB, UB, SI, ST].map(|ty| vk::DescriptorPoolSize {
            ty,
            descriptor_count: 2048,
        });
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(2048)
            .pool_sizes(&sizes);
        // SAFETY: a valid create info; destroyed in Drop.
        let pool = unsafe { device.create_descriptor_pool(&info, None) }.expect("pool");
        let mut k = KitBuilder {
            device: device.clone(),
            progs: Vec::new(),
        };
        let g = Gfx::new;
        let colour = g(spv::FIXED_PLACE_VERT, spv::WRITE_COLOR_FRAG, Some(COLOR));
        let result = |vert, frag| g(vert, frag, Some(RESULT));
        Kit {
            write_color: k.gfx(colour, &[SB]),
            write_blend: k.gfx(
                Gfx {
                    blend: true,
                    ..colour
                },
                &[SB],
            ),
            write_msaa: k.gfx(
                Gfx {
                    samples: vk::SampleCountFlags::TYPE_4,
                    ..colour
                },
                &[SB],
            ),
            write_depth: k.gfx(
                Gfx {
                    color: None,
                    depth: Some(DEPTH),
                    depth_write: Some(true),
                    ..g(spv::FIXED_PLACE_VERT, spv::WRITE_DEPTH_FRAG, None)
                },
                &[SB],
            ),
            write_fs_storage: k.gfx(
                result(spv::FIXED_PLACE_VERT, spv::WRITE_FS_STORAGE_FRAG),
                &[SB, SB],
            ),
            write_vs_storage: k.gfx(
                result(spv::WRITE_VS_STORAGE_VERT, spv::FLAT_FRAG),
                &[SB, SB],
            ),
            copy: k.compute(spv::COPY_COMP, &[SB, SB]),
            write_image: k.compute(spv::CS_WRITE_IMAGE_COMP, &[SB, ST]),
            fixed: k.gfx(result(spv::FIXED_VERT, spv::FLAT_FRAG), &[]),
            vb: k.gfx(
                Gfx {
                    vertex_input: true,
                    ..result(spv::VB_VERT, spv::FLAT_FRAG)
                },
                &[],
            ),
            vs_ubo: k.gfx(result(spv::VS_UBO_VERT, spv::FLAT_FRAG), &[UB]),
            vs_ssbo: k.gfx(result(spv::VS_SSBO_VERT, spv::FLAT_FRAG), &[SB]),
            vs_sampled: k.gfx(result(spv::VS_SAMPLED_VERT, spv::FLAT_FRAG), &[SI]),
            vs_storage: k.gfx(result(spv::VS_STORAGE_VERT, spv::FLAT_FRAG), &[ST]),
            fs_ubo: k.gfx(result(spv::FIXED_PLACE_VERT, spv::FS_UBO_FRAG), &[UB]),
            fs_ssbo: k.gfx(result(spv::FIXED_PLACE_VERT, spv::FS_SSBO_FRAG), &[SB]),
            fs_sampled: k.gfx(result(spv::FIXED_PLACE_VERT, spv::FS_SAMPLED_FRAG), &[SI]),
            fs_storage: k.gfx(result(spv::FIXED_PLACE_VERT, spv::FS_STORAGE_FRAG), &[ST]),
            depth_count: k.gfx(
                Gfx {
                    depth: Some(DEPTH),
                    points: false,
                    blend: true,
                    depth_write: Some(false),
                    ..g(spv::DEPTH_COUNT_VERT, spv::DEPTH_COUNT_FRAG, Some(COLOR))
                },
                &[],
            ),
            cs_storage: k.compute(spv::CS_STORAGE_READ_COMP, &[ST, SB]),
            cs_sampled: k.compute(spv::CS_SAMPLED_READ_COMP, &[SI, SB]),
            cs_dispatch: k.compute(spv::CS_DISPATCH_COMP, &[SB]),
            stencil: StencilProgs::new(&mut k),
            device,
            pool,
            progs: k.progs,
            views: Mutex::new(Vec::new()),
        }
    }

    /// A view of all of `image` (its aspect), destroyed with the kit.
    pub fn view(&self, image: &StImage) -> vk::ImageView {
        self.view_of(image, image.desc().aspect())
    }

    /// A view of `aspect` of `image`, destroyed with the kit.
    pub fn view_of(&self, image: &StImage, aspect: vk::ImageAspectFlags) -> vk::ImageView {
        let info = vk::ImageViewCreateInfo::default()
            .image(image.handle())
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(image.desc().format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: aspect,
                base_mip_level: 0,
                level_count: 1,
                base_array_layer: 0,
                layer_count: 1,
            });
        // SAFETY: a valid create info for a live image; destroyed in Drop, after the tests
        // waited for every execution.
        let view = unsafe { self.device.create_image_view(&info, None) }.expect("view");
        self.views.lock().unwrap().push(view);
        view
    }

    /// A set of `prog`'s layout holding `items` at bindings 0, 1, ...
    pub fn set(&self, prog: &Prog, items: &[Bind]) -> vk::DescriptorSet {
        let layouts = [prog.set_layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        // SAFETY: the pool is live and has room for the matrix's sets.
        let set = unsafe { self.device.allocate_descriptor_sets(&info) }.expect("set")[0];
        let buffers: Vec<[vk::DescriptorBufferInfo; 1]> = items
            .iter()
            .map(|b| {
                [vk::DescriptorBufferInfo {
                    buffer: b.buffer,
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }]
            })
            .collect();
        let images: Vec<[vk::DescriptorImageInfo; 1]> = items
            .iter()
            .map(|b| {
                [vk::DescriptorImageInfo {
                    sampler: vk::Sampler::null(),
                    image_view: b.view,
                    image_layout: b.layout,
                }]
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet<'_>> = items
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(b.ty);
                if b.ty == SB || b.ty == UB {
                    w.buffer_info(&buffers[i])
                } else {
                    w.image_info(&images[i])
                }
            })
            .collect();
        // SAFETY: the set is new and not in use; every handle is live.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
        set
    }
}

/// One descriptor of a set: a buffer, or an image view in `layout`.
pub struct Bind {
    ty: vk::DescriptorType,
    buffer: vk::Buffer,
    view: vk::ImageView,
    layout: vk::ImageLayout,
}

impl Bind {
    pub fn uniform(buffer: vk::Buffer) -> Bind {
        Bind {
            ty: UB,
            buffer,
            view: vk::ImageView::null(),
            layout: vk::ImageLayout::UNDEFINED,
        }
    }
    pub fn storage(buffer: vk::Buffer) -> Bind {
        Bind {
            ty: SB,
            ..Bind::uniform(buffer)
        }
    }
    /// A sampled image, in the layout the access that reads it names.
    pub fn sampled(view: vk::ImageView, layout: vk::ImageLayout) -> Bind {
        Bind {
            ty: SI,
            buffer: vk::Buffer::null(),
            view,
            layout,
        }
    }
    pub fn storage_image(view: vk::ImageView) -> Bind {
        Bind {
            ty: ST,
            layout: vk::ImageLayout::GENERAL,
            ..Bind::sampled(view, vk::ImageLayout::GENERAL)
        }
    }
}

/// Binds `prog`, its set (if any) and the push constants `{ mode, depth, 0, 0 }`.
pub fn bind(
    r: &vk_baton::Recorder<'_>,
    prog: &Prog,
    set: Option<vk::DescriptorSet>,
    mode: u32,
    depth: u32,
) {
    let (d, c) = (r.device(), r.cmd());
    let push: Vec<u8> = [mode, depth, 0, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    // SAFETY: recording; the pipeline, layout and set are live (the kit outlives the
    // executions), and the set's resources are declared by the pass.
    unsafe {
        d.cmd_bind_pipeline(c, prog.bind_point, prog.pipeline);
        if let Some(set) = set {
            d.cmd_bind_descriptor_sets(c, prog.bind_point, prog.layout, 0, &[set], &[]);
        }
        d.cmd_push_constants(c, prog.layout, vk::ShaderStageFlags::ALL, 0, &push);
    }
}

pub(super) struct KitBuilder {
    device: ash::Device,
    progs: Vec<Prog>,
}

impl KitBuilder {
    fn layouts(
        &self,
        bindings: &[vk::DescriptorType],
    ) -> (vk::DescriptorSetLayout, vk::PipelineLayout) {
        let b: Vec<vk::DescriptorSetLayoutBinding<'_>> = bindings
            .iter()
            .enumerate()
            .map(|(i, &ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::ALL)
            })
            .collect();
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::ALL,
            offset: 0,
            size: 16,
        }];
        // SAFETY: valid create infos on a live device; destroyed in Kit's Drop.
        unsafe {
            let set_layout = self
                .device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&b),
                    None,
                )
                .expect("set layout");
            let sets = [set_layout];
            let info = vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&sets)
                .push_constant_ranges(&push);
            let layout = self
                .device
                .create_pipeline_layout(&info, None)
                .expect("layout");
            (set_layout, layout)
        }
    }

    pub(super) fn compute(&mut self, spirv: &[u8], bindings: &[vk::DescriptorType]) -> Prog {
        let (set_layout, layout) = self.layouts(bindings);
        let m = module(&self.device, spirv);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(m)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout);
        // SAFETY: a complete create info; the module is only needed while the pipeline is made.
        let pipeline = unsafe {
            let p = self
                .device
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .expect("compute pipeline")[0];
            self.device.destroy_shader_module(m, None);
            p
        };
        self.push(Prog {
            pipeline,
            layout,
            set_layout,
            bind_point: vk::PipelineBindPoint::COMPUTE,
        })
    }

    fn push(&mut self, p: Prog) -> Prog {
        self.progs.push(p);
        p
    }

    pub(super) fn gfx(&mut self, g: Gfx, bindings: &[vk::DescriptorType]) -> Prog {
        let (set_layout, layout) = self.layouts(bindings);
        let (vert, frag) = (module(&self.device, g.vert), module(&self.device, g.frag));
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
        let vb = [vk::VertexInputBindingDescription {
            binding: 0,
            stride: 4,
            input_rate: vk::VertexInputRate::VERTEX,
        }];
        let va = [vk::VertexInputAttributeDescription {
            location: 0,
            binding: 0,
            format: vk::Format::R32_UINT,
            offset: 0,
        }];
        let mut vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        if g.vertex_input {
            vertex_input = vertex_input
                .vertex_binding_descriptions(&vb)
                .vertex_attribute_descriptions(&va);
        }
        let topology = if g.points {
            vk::PrimitiveTopology::POINT_LIST
        } else {
            vk::PrimitiveTopology::TRIANGLE_LIST
        };
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(topology);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .line_width(1.0);
        let multisample =
            vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(g.samples);
        let depth = depth_state(&g);
        let attachment = blend_attachment(&g);
        let attachments: Vec<_> = g.color.iter().map(|_| attachment).collect();
        let blending = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
        let mut dynamic = vec![vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        dynamic.extend(stencil_dynamic(&g));
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
        let colors: Vec<vk::Format> = g.color.into_iter().collect();
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(&colors)
            .depth_attachment_format(g.depth.unwrap_or(vk::Format::UNDEFINED))
            .stencil_attachment_format(match g.stencil {
                Some(_) => g.depth.expect("a depth/stencil format"),
                None => vk::Format::UNDEFINED,
            });
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
        // SAFETY: a complete create info for dynamic rendering (enabled by the context); the
        // modules are only needed while the pipeline is made.
        let pipeline = unsafe {
            let p = self
                .device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .expect("graphics pipeline")[0];
            self.device.destroy_shader_module(vert, None);
            self.device.destroy_shader_module(frag, None);
            p
        };
        self.push(Prog {
            pipeline,
            layout,
            set_layout,
            bind_point: vk::PipelineBindPoint::GRAPHICS,
        })
    }
}

/// Depth test ALWAYS with writes, LESS without, or none (`Gfx::depth_write`).
fn depth_state(g: &Gfx) -> vk::PipelineDepthStencilStateCreateInfo<'static> {
    let op = if g.depth_write == Some(true) {
        vk::CompareOp::ALWAYS
    } else {
        vk::CompareOp::LESS
    };
    let stencil = stencil_state(g.stencil);
    vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(g.depth_write.is_some())
        .depth_write_enable(g.depth_write == Some(true))
        .depth_compare_op(op)
        .stencil_test_enable(matches!(
            g.stencil,
            Some(StencilOp::Replace | StencilOp::Equal)
        ))
        .front(stencil)
        .back(stencil)
}

/// The stencil test and ops of `StencilOp` (masks and references dynamic where it tests).
fn stencil_state(op: Option<StencilOp>) -> vk::StencilOpState {
    let replace = op == Some(StencilOp::Replace);
    vk::StencilOpState {
        fail_op: vk::StencilOp::KEEP,
        pass_op: if replace {
            vk::StencilOp::REPLACE
        } else {
            vk::StencilOp::KEEP
        },
        depth_fail_op: vk::StencilOp::KEEP,
        compare_op: if op == Some(StencilOp::Equal) {
            vk::CompareOp::EQUAL
        } else {
            vk::CompareOp::ALWAYS
        },
        compare_mask: 0xff,
        write_mask: if replace { 0xff } else { 0 },
        reference: 0,
    }
}

/// The dynamic stencil state of `g`: the reference where it tests, the compare mask too for
/// EQUAL.
fn stencil_dynamic(g: &Gfx) -> Vec<vk::DynamicState> {
    match g.stencil {
        Some(StencilOp::Replace) => vec![vk::DynamicState::STENCIL_REFERENCE],
        Some(StencilOp::Equal) => vec![
            vk::DynamicState::STENCIL_REFERENCE,
            vk::DynamicState::STENCIL_COMPARE_MASK,
        ],
        _ => vec![],
    }
}

/// Additive blending (ONE, ONE) where `Gfx::blend`, else none.
fn blend_attachment(g: &Gfx) -> vk::PipelineColorBlendAttachmentState {
    vk::PipelineColorBlendAttachmentState::default()
        .blend_enable(g.blend)
        .src_color_blend_factor(vk::BlendFactor::ONE)
        .dst_color_blend_factor(vk::BlendFactor::ONE)
        .color_blend_op(vk::BlendOp::ADD)
        .src_alpha_blend_factor(vk::BlendFactor::ONE)
        .dst_alpha_blend_factor(vk::BlendFactor::ONE)
        .alpha_blend_op(vk::BlendOp::ADD)
        .color_write_mask(vk::ColorComponentFlags::RGBA)
}

impl Drop for Kit {
    fn drop(&mut self) {
        // SAFETY: the tests wait for every execution before the kit drops; nothing else uses
        // these objects.
        unsafe {
            for v in self.views.lock().unwrap().drain(..) {
                self.device.destroy_image_view(v, None);
            }
            self.device.destroy_descriptor_pool(self.pool, None);
            for p in &self.progs {
                self.device.destroy_pipeline(p.pipeline, None);
                self.device.destroy_pipeline_layout(p.layout, None);
                self.device
                    .destroy_descriptor_set_layout(p.set_layout, None);
            }
        }
    }
}
