//! Headless: a compute shader draws a Mandelbrot set on the async compute queue, the image moves
//! to the graphics queue and is copied into a host-visible buffer, and the result is written to
//! `headless.png`. Prints the plan, draws it in `plan.svg`, prints each pass's GPU time (from
//! the graph's timestamp queries: `Graph::set_gpu_timings`) and the number of validation
//! messages; exits non-zero if there were any.
//!
//! ```text
//! cargo run --release --example headless
//! ```
//!
//! Validation (with synchronization validation) is on when the layer is installed; set
//! `VK_BATON_VALIDATION=0` to turn it off.

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, ImageDesc, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::{Context, ContextOptions};
use vk_baton_passes::{ComputeDispatch, ShaderAccess};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;

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
    // Timestamps around every pass, on the queues that have them.
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    // `pattern.comp` writes every pixel: the image's old contents are discarded.
    let code = support::spirv(vk_baton_shaders::PATTERN_COMP)?;
    // SAFETY: the sample's own shader (compiled from shaders/), with exactly the bindings
    // and push constants declared below.
    let mut draw = unsafe { ComputeDispatch::builder(ctx.device(), &code) }
        .name("mandelbrot")
        .storage_image(0, image.clone(), ShaderAccess::WriteDiscard)
        .groups(WIDTH.div_ceil(8), HEIGHT.div_ceil(8), 1)
        .build()?;
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
    support::write_plan_svg("plan.svg".as_ref(), planned.plan())?;
    let fence = planned.execute()?;
    fence.wait()?;
    match fence.take_gpu_timings() {
        Some(times) => {
            println!("\ngpu times:");
            for t in &times {
                println!(
                    "  {:<16} {:>9.3} ms  on {}",
                    t.pass(),
                    t.duration_ms(),
                    t.queue().name()
                );
            }
        }
        None => println!("\ngpu times: n/a (no queue of this device has timestamps)"),
    }

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
    support::parse_args(
        "usage: headless (no options; VK_BATON_VALIDATION=0 turns validation off)",
        |_, _| Ok(false),
    );
    support::init_logging();
    match run() {
        Ok(0) => {}
        Ok(_) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
