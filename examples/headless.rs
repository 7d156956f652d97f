//! Headless: a compute shader draws a Mandelbrot set on the async compute queue, the image moves
//! to the graphics queue and is copied into a host-visible buffer, and the result is written to
//! `headless.png`. Prints the plan and the number of validation messages; exits non-zero if
//! there were any.
//!
//! ```text
//! cargo run --release --example headless
//! ```
//!
//! Validation (with synchronization validation) is on when the layer is installed; set
//! `VK_BATON_VALIDATION=0` to turn it off.

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{
    Access, BufferDesc, Context, ContextOptions, Declare, ImageDesc, Pass, Recorder, StBuffer,
    StImage,
};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;

/// The compute pipeline of `shaders/pattern.comp`, with one storage-image descriptor.
struct Pattern {
    device: vk_baton::ash::Device,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    view: vk::ImageView,
    set: vk::DescriptorSet,
    image: Arc<StImage>,
}

impl Pattern {
    fn new(ctx: &Context, image: Arc<StImage>) -> vk_baton::Result<Pattern> {
        let d = ctx.device();
        let vkerr = |call| move |e| vk_baton::Error::vk(call, e);
        let code = vk_baton_shaders::words(vk_baton_shaders::PATTERN_COMP);
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        // SAFETY: plain object creation with valid create infos; everything is destroyed in
        // `Drop`, after the execution that uses it has been waited for.
        unsafe {
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            let layouts = [set_layout];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts),
                    None,
                )
                .map_err(vkerr("vkCreatePipelineLayout"))?;
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .map_err(vkerr("vkCreateShaderModule"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout);
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| vk_baton::Error::vk("vkCreateComputePipelines", e))?[0];
            d.destroy_shader_module(module, None);
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_IMAGE,
                descriptor_count: 1,
            }];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
            let view_info = vk::ImageViewCreateInfo::default()
                .image(image.handle())
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(image.desc().format)
                .subresource_range(image.full_range());
            let view = d
                .create_image_view(&view_info, None)
                .map_err(vkerr("vkCreateImageView"))?;
            let image_info = [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: view,
                image_layout: vk::ImageLayout::GENERAL,
            }];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .image_info(&image_info);
            d.update_descriptor_sets(&[write], &[]);
            Ok(Pattern {
                device: d.clone(),
                set_layout,
                layout,
                pipeline,
                pool,
                view,
                set,
                image,
            })
        }
    }
}

impl Pass for Pattern {
    fn declare(&self, d: &mut Declare<'_>) {
        // Every pixel is written: old contents are not needed.
        d.uses(&self.image, Access::COMPUTE_SHADER_WRITE).discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let e = self.image.desc().extent;
        // SAFETY: the pipeline, layout and set are alive until after the execution completes
        // (the example waits before dropping them); the image is in GENERAL, as declared.
        unsafe {
            r.device()
                .cmd_bind_pipeline(r.cmd(), vk::PipelineBindPoint::COMPUTE, self.pipeline);
            r.device().cmd_bind_descriptor_sets(
                r.cmd(),
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[self.set],
                &[],
            );
            r.device()
                .cmd_dispatch(r.cmd(), e.width.div_ceil(8), e.height.div_ceil(8), 1);
        }
        Ok(())
    }
}

impl Drop for Pattern {
    fn drop(&mut self) {
        // SAFETY: the execution using these objects has been waited for.
        unsafe {
            self.device.destroy_image_view(self.view, None);
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Copies mip 0 of an image into a buffer, tightly packed.
struct Download {
    image: Arc<StImage>,
    buffer: Arc<StBuffer>,
}

impl Pass for Download {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.image, Access::TRANSFER_READ);
        d.uses(&self.buffer, Access::TRANSFER_WRITE).discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferImageCopy {
            buffer_offset: 0,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            },
            image_offset: vk::Offset3D::default(),
            image_extent: self.image.desc().extent,
        };
        // SAFETY: the image is in TRANSFER_SRC_OPTIMAL and the buffer is large enough.
        unsafe {
            r.device().cmd_copy_image_to_buffer(
                r.cmd(),
                self.image.handle(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                self.buffer.handle(),
                &[region],
            )
        };
        Ok(())
    }
}

/// Makes the buffer's transfer writes visible to the host once the fence signals.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }

    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

fn context() -> vk_baton::Result<Context> {
    let off = std::env::var("VK_BATON_VALIDATION").is_ok_and(|v| v == "0");
    match Context::with_options(ContextOptions {
        validation: !off,
        ..Default::default()
    }) {
        Ok(ctx) => Ok(ctx),
        Err(e) if !off => {
            eprintln!("validation unavailable ({e}); running without it");
            Context::with_options(ContextOptions {
                validation: false,
                ..Default::default()
            })
        }
        Err(e) => Err(e),
    }
}

fn run() -> vk_baton::Result<usize> {
    let ctx = context()?;
    println!("device: {}", ctx.device_name());
    println!(
        "queues: graphics = {:?}, async_compute = {:?}",
        ctx.graphics(),
        ctx.async_compute()
    );

    let image = ctx.image(
        ImageDesc::storage_2d(WIDTH, HEIGHT, vk::Format::R8G8B8A8_UNORM),
        "mandelbrot",
    )?;
    let bytes = (WIDTH * HEIGHT * 4) as u64;
    let readback = ctx.buffer(
        BufferDesc::readback(bytes, vk::BufferUsageFlags::TRANSFER_DST),
        "readback",
    )?;

    let graph = ctx.graph()?;
    let mut draw = Pattern::new(&ctx, image.clone())?;
    let mut download = Download {
        image: image.clone(),
        buffer: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("draw mandelbrot", &mut draw, ctx.async_compute())
        .insert_pass("download", &mut download, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()?;
    println!(
        "\nplan ({} batches, {} barrier commands, {} semaphore waits):",
        planned.plan().batch_count(),
        planned.plan().barrier_commands(),
        planned.plan().semaphore_waits()
    );
    print!("{planned}");
    planned.execute()?.wait()?;

    let mut pixels = vec![0u8; bytes as usize];
    readback.read(0, &mut pixels)?;
    let file = std::fs::File::create("headless.png")
        .map_err(|e| vk_baton::Error::InvalidInput(format!("headless.png: {e}")))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), WIDTH, HEIGHT);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut w| w.write_image_data(&pixels))
        .map_err(|e| vk_baton::Error::InvalidInput(format!("writing headless.png: {e}")))?;
    println!("\nwrote headless.png ({WIDTH}x{HEIGHT})");

    drop(draw);
    let messages = ctx.validation_messages();
    println!(
        "validation: {}",
        if ctx.validation() {
            "on (with synchronization validation)"
        } else {
            "off"
        }
    );
    print!("{messages}");
    Ok(messages.count)
}

fn main() {
    let _ = env_logger::builder()
        .filter_level(log::LevelFilter::Warn)
        .parse_default_env()
        .try_init();
    match run() {
        Ok(0) => {}
        Ok(_) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
