//! Mesh shading in a `Render` pass: rectangles uploaded on the transfer queue, a task shader
//! that reads how many there are, a mesh shader that reads them and writes a storage buffer,
//! all with validation, checked texel by texel and word by word. The graph orders the uploads
//! before the task and mesh stages, and the mesh shader's writes before the download.

use super::*;
use vk_baton::access::DeviceFeatures;
use vk_baton_context::ContextOptions;
use vk_baton_passes::DownloadBuffer;

/// The rectangles: corners in clip space, then an RGBA colour 8-bit UNORM holds exactly.
const RECTS: [([f32; 4], [f32; 4]); 3] = [
    ([-1.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0]),
    ([0.0, -1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]),
    ([-1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]),
];

/// A context with task and mesh shaders, or `None` (the skip reported) where the device, as
/// it reports itself, lacks them (Debian 12's lavapipe does).
fn mesh_ctx() -> Option<Context> {
    let features = DeviceFeatures::TASK_SHADER | DeviceFeatures::MESH_SHADER;
    if ctx().machine().skips(&[Need::DeviceFeatures(features)]) {
        return None;
    }
    let ctx = Context::with_options(ContextOptions {
        validation: true,
        app_name: "vk-baton mesh shading test".into(),
        device_features: features,
        ..Default::default()
    });
    Some(ctx.expect("the device has task and mesh shaders"))
}

/// A task + mesh + fragment pipeline for one RGBA8 target, its set layout (three storage
/// buffers) and a set over `buffers`.
struct MeshPipeline {
    device: ash::Device,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

fn shader(device: &ash::Device, spirv: &[u8]) -> vk::ShaderModule {
    let words = vk_baton_shaders::words(spirv);
    // SAFETY: valid SPIR-V from the shaders crate, on a live device.
    unsafe {
        device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
    }
    .expect("shader module")
}

impl MeshPipeline {
    fn new(device: &ash::Device, buffers: [&StBuffer; 3]) -> MeshPipeline {
        let stages = vk::ShaderStageFlags::TASK_EXT | vk::ShaderStageFlags::MESH_EXT;
        let bindings: Vec<_> = (0..3)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(stages)
            })
            .collect();
        // SAFETY: plain object creation on a live device; everything is destroyed on drop.
        unsafe {
            let set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .unwrap();
            let layouts = [set_layout];
            let layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                    None,
                )
                .unwrap();
            let modules = [
                shader(device, vk_baton_shaders::MESH_RECTS_TASK),
                shader(device, vk_baton_shaders::MESH_RECTS_MESH),
                shader(device, vk_baton_shaders::RASTER_FRAG),
            ];
            let kinds = [
                vk::ShaderStageFlags::TASK_EXT,
                vk::ShaderStageFlags::MESH_EXT,
                vk::ShaderStageFlags::FRAGMENT,
            ];
            let stage_infos: Vec<_> = modules
                .iter()
                .zip(kinds)
                .map(|(&m, k)| {
                    vk::PipelineShaderStageCreateInfo::default()
                        .stage(k)
                        .module(m)
                        .name(c"main")
                })
                .collect();
            let formats = [FORMAT];
            let mut rendering =
                vk::PipelineRenderingCreateInfo::default().color_attachment_formats(&formats);
            let viewport = vk::PipelineViewportStateCreateInfo::default()
                .viewport_count(1)
                .scissor_count(1);
            let raster = vk::PipelineRasterizationStateCreateInfo::default()
                .polygon_mode(vk::PolygonMode::FILL)
                .cull_mode(vk::CullModeFlags::NONE)
                .line_width(1.0);
            let multisample = vk::PipelineMultisampleStateCreateInfo::default()
                .rasterization_samples(vk::SampleCountFlags::TYPE_1);
            let blend = [vk::PipelineColorBlendAttachmentState::default()
                .color_write_mask(vk::ColorComponentFlags::RGBA)];
            let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend);
            let dynamic = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
            let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
            let info = vk::GraphicsPipelineCreateInfo::default()
                .stages(&stage_infos)
                .viewport_state(&viewport)
                .rasterization_state(&raster)
                .multisample_state(&multisample)
                .color_blend_state(&blend)
                .dynamic_state(&dynamic)
                .layout(layout)
                .push_next(&mut rendering);
            let pipeline = device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .unwrap()[0];
            for m in modules {
                device.destroy_shader_module(m, None);
            }
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 3,
            }];
            let pool = device
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .unwrap();
            let set = device
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
                .unwrap()[0];
            let infos: Vec<_> = buffers
                .iter()
                .map(|b| {
                    [vk::DescriptorBufferInfo {
                        buffer: b.handle(),
                        offset: 0,
                        range: vk::WHOLE_SIZE,
                    }]
                })
                .collect();
            let writes: Vec<_> = (0u32..)
                .zip(&infos)
                .map(|(b, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(b)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            device.update_descriptor_sets(&writes, &[]);
            MeshPipeline {
                device: device.clone(),
                pipeline,
                layout,
                set_layout,
                pool,
                set,
            }
        }
    }
}

impl Drop for MeshPipeline {
    fn drop(&mut self) {
        // SAFETY: the test waits for its executions before dropping the pipeline.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// What each texel must be: rectangle 0 (red) over the top-left quarter, 1 (green) over the
/// top-right, 2 (blue) over the bottom half (clip-space y points down the image).
fn mesh_expected() -> Vec<u8> {
    let mut out = Vec::new();
    for y in 0..SIDE {
        for x in 0..SIDE {
            let rgba = match (x < SIDE / 2, y < SIDE / 2) {
                (true, true) => [255, 0, 0, 255],
                (false, true) => [0, 255, 0, 255],
                _ => [0, 0, 255, 255],
            };
            out.extend_from_slice(&rgba);
        }
    }
    out
}

#[test]
fn task_and_mesh_shaders_read_uploads_and_write_storage_in_a_render_pass() {
    let Some(ctx) = mesh_ctx() else {
        return;
    };
    let graph = ctx.graph().unwrap();
    use vk::BufferUsageFlags as B;
    let storage = |size: u64, extra: B, name: &str| {
        ctx.buffer(BufferDesc::new(size, B::STORAGE_BUFFER | extra), name)
            .unwrap()
    };
    let count = storage(4, B::TRANSFER_DST, "rect count");
    let rects = storage(32 * RECTS.len() as u64, B::TRANSFER_DST, "rects");
    let drawn = storage(4 * RECTS.len() as u64, B::TRANSFER_SRC, "drawn");
    let color = ctx
        .image(
            ImageDesc::new_2d(
                SIDE,
                SIDE,
                FORMAT,
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            ),
            "mesh target",
        )
        .unwrap();
    let rect_bytes: Vec<u8> = RECTS
        .iter()
        .flat_map(|(c, rgba)| c.iter().chain(rgba))
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let count_bytes = (RECTS.len() as u32).to_le_bytes();
    let up = |b: &Arc<StBuffer>, bytes: &[u8]| {
        UploadBuffer::new(ctx.device(), ctx.allocator(), b.clone(), 0, bytes).unwrap()
    };
    let (mut up_count, mut up_rects) = (up(&count, &count_bytes), up(&rects, &rect_bytes));
    let kit = MeshPipeline::new(ctx.device(), [&count, &rects, &drawn]);
    let (pipeline, layout, set) = (kit.pipeline, kit.layout, kit.set);
    let mesh_fn = ash::ext::mesh_shader::Device::new(ctx.instance(), ctx.device());
    let mut draw = Render::new(
        ctx.device(),
        area(),
        vec![ColorTarget::clear(color.clone(), [0.0, 0.0, 0.0, 1.0])],
        None,
        move |r| {
            // SAFETY: a pipeline made for this target; its set names the three declared
            // buffers; the task shader launches as many mesh workgroups as there are rects.
            unsafe {
                let (d, c) = (r.device(), r.cmd());
                d.cmd_bind_pipeline(c, vk::PipelineBindPoint::GRAPHICS, pipeline);
                d.cmd_bind_descriptor_sets(
                    c,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    0,
                    &[set],
                    &[],
                );
                mesh_fn.cmd_draw_mesh_tasks(c, 1, 1, 1);
            }
            Ok(())
        },
    )
    .unwrap()
    .reads(&count, Access::TASK_SHADER_STORAGE_READ)
    .reads(&rects, Access::MESH_SHADER_STORAGE_READ)
    .reads(&drawn, Access::MESH_SHADER_STORAGE_WRITE);
    for frame in 0..2 {
        let mut pixels =
            DownloadImage::all_levels(ctx.device(), ctx.allocator(), color.clone()).unwrap();
        let mut words =
            DownloadBuffer::whole(ctx.device(), ctx.allocator(), drawn.clone()).unwrap();
        let (image, written) = (pixels.handle(), words.handle());
        let mut b = graph.record();
        if frame == 0 {
            b = b
                .insert_pass("upload count", &mut up_count, ctx.transfer())
                .insert_pass("upload rects", &mut up_rects, ctx.transfer());
        }
        let planned = b
            .insert_pass("mesh draw", &mut draw, ctx.graphics())
            .insert_pass("download image", &mut pixels, ctx.graphics())
            .insert_pass("download drawn", &mut words, ctx.graphics())
            .finish()
            .unwrap();
        if frame == 0 {
            // The uploads are waited for at the task and mesh stages that read them.
            let text = planned.to_string();
            assert!(text.contains("TASK_SHADER_EXT"), "{text}");
            assert!(text.contains("MESH_SHADER_EXT"), "{text}");
        }
        planned.execute().unwrap().wait().unwrap();
        assert!(
            image.read().unwrap() == mesh_expected(),
            "frame {frame}: the rectangles are not where they should be"
        );
        let want: Vec<u8> = (0..RECTS.len() as u32)
            .flat_map(|i| (100 + i).to_le_bytes())
            .collect();
        assert_eq!(written.read().unwrap(), want, "frame {frame}");
    }
    drop(graph);
    drop(kit);
    assert_clean(&ctx);
}
