//! A window: a compute pass animates an image, which is blitted to the swapchain image and
//! presented. winit 0.30 (`ApplicationHandler`) and an `ash-window` surface.
//!
//! The swapchain is the stock `vk_baton_passes::Swapchain`: one acquire semaphore per frame
//! in flight, one present semaphore per swapchain image (reused only once the engine hands
//! that image back), out-of-date and suboptimal as values. Each frame is one graph on the
//! graphics queue:
//!
//! 1. `animate`: `anim.comp` writes the whole image (so any frame can be recomputed exactly on
//!    the host: see `expected_pixel`). The frame number is in a buffer the host writes, one
//!    word per frame in flight, each read by an animate pass of its own: what the passes
//!    record never changes.
//! 2. `acquire`: the stock `SwapchainAcquire`, which waits on the frame slot's acquire
//!    semaphore before the swapchain image's first use; vk-baton transitions the image from
//!    UNDEFINED after the wait, chained from the wait's stage.
//! 3. `blit to swapchain`: the stock `ImageBlit`.
//! 4. `screenshot` (last frame, with `--screenshot`): the stock `DownloadImage` of the
//!    animated image.
//! 5. `present`: the stock `SwapchainPresent`, which declares `Access::PRESENT` (the graph
//!    moves the image to PRESENT_SRC_KHR) and signals the image's present semaphore, which
//!    `Swapchain::present` waits on.
//!
//! Frames in flight are bounded by the graphs' `ExecutionFence`s (two). Resizes and
//! out-of-date or suboptimal swapchains recreate the swapchain; a minimized window (zero
//! extent) renders nothing until it comes back.
//!
//! With `--replay` the graph replays (`Graph::set_replay`): every pass but the screenshot's
//! gives a replay key (the blits are made once per swapchain image), so a frame whose passes
//! and swapchain image came before submits the command buffers recorded then, and records
//! nothing. The sample prints how many frames replayed.
//!
//! ```text
//! cargo run --example window
//! cargo run --example window -- --frames 30 --screenshot /tmp/shot.png
//! cargo run --example window -- --frames 30 --resize-at 10   # resizes itself after 10 frames
//! cargo run --example window -- --frames 60 --replay          # records each frame once
//! xvfb-run -a -s "-screen 0 1024x768x24" cargo run --example window -- --frames 30 --screenshot /tmp/shot.png
//! ```
//!
//! Exits non-zero on any validation message (`VK_BATON_VALIDATION=1`) or error.

use std::collections::VecDeque;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::Instant;
use support::{report_validation, vkerr, ValueExt};
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, BufferRange, ExecutionFence, Graph, ImageDesc, StBuffer, StImage};
use vk_baton_context::{Context, ContextOptions};
use vk_baton_passes::{
    AcquireOutcome, ComputeDispatch, DownloadImage, FormatSupport, ImageBlit, PresentOutcome,
    ShaderAccess, Swapchain, SwapchainConfig,
};
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;
const FRAMES_IN_FLIGHT: usize = 2;
/// Where each frame in flight's frame number is in the buffer the host writes: a storage
/// buffer's offset is a multiple of `minStorageBufferOffsetAlignment`, at most 256.
const WORD_STRIDE: u64 = 256;

/// The host's copy of `anim.comp`: the RGBA8 pixel at (x, y) of frame `t` in a `w`×`h` image.
/// (The integration test has its own copy, to check screenshots.)
#[allow(dead_code)]
pub fn expected_pixel(x: u32, y: u32, w: u32, h: u32, t: u32) -> [u8; 4] {
    let dx = x as i32 - (w / 2) as i32;
    let dy = y as i32 - (h / 2) as i32;
    let d2 = (dx * dx + dy * dy) as u32;
    let r = ((d2 >> 5).wrapping_add(t.wrapping_mul(6))) & 255;
    let g = ((x ^ y).wrapping_add(t.wrapping_mul(3))) & 255;
    let b = (((x.wrapping_add(t.wrapping_mul(2))) >> 3) * 16 + (y >> 4) * 8) & 255;
    [r as u8, g as u8, b as u8, 255]
}

/// Everything Vulkan. Torn down by [`Gpu::finish`] (or `Drop`), before the window.
struct Gpu {
    surface_loader: ash::khr::surface::Instance,
    surface: vk::SurfaceKHR,
    /// The stock swapchain: its acquire semaphores (one per frame in flight), its present
    /// semaphores (one per image) and their reuse bookkeeping. Created on the first frame.
    swapchain: Option<Swapchain>,
    /// The surface formats to ask for, in order (UNORM, so the blit copies the animation's
    /// values unchanged).
    formats: Vec<vk::SurfaceFormatKHR>,
    in_flight: VecDeque<ExecutionFence>,
    graph: Option<Graph>,
    /// `anim.comp` over the whole of `anim`, which it overwrites (discarding the old
    /// contents), one per frame in flight: each reads its word of `frame_numbers`.
    animate: Vec<ComputeDispatch>,
    anim: Arc<StImage>,
    /// The frame number of each frame in flight, which the host writes.
    frame_numbers: Arc<StBuffer>,
    /// The blit of `anim` to each swapchain image, made when the swapchain is.
    blits: Vec<ImageBlit>,
    /// Frames that replayed their recording (`--replay`).
    replayed: u32,
    support: FormatSupport,
    /// Frames rendered so far (the animation's frame counter).
    frame: u32,
    needs_recreate: bool,
    torn_down: bool,
    ctx: Context,
}

impl Gpu {
    fn new(window: &Window) -> vk_baton::Result<Gpu> {
        let display = window
            .display_handle()
            .map_err(|e| vk_baton::Error::InvalidInput(format!("display handle: {e}")))?
            .as_raw();
        let raw_window = window
            .window_handle()
            .map_err(|e| vk_baton::Error::InvalidInput(format!("window handle: {e}")))?
            .as_raw();
        let exts = ash_window::enumerate_required_extensions(display)
            .map_err(vkerr("enumerate_required_extensions"))?
            .iter()
            // SAFETY: ash-window returns pointers to static NUL-terminated extension names.
            .map(|&p| CString::from(unsafe { CStr::from_ptr(p) }))
            .collect();
        let ctx = Context::with_options(ContextOptions {
            swapchain: true,
            instance_extensions: exts,
            app_name: "vk-baton window".into(),
            ..Default::default()
        })?;
        // SAFETY: the handles come from a live window that outlives the surface (the app
        // drops `Gpu` before the window).
        let surface = unsafe {
            ash_window::create_surface(ctx.entry(), ctx.instance(), display, raw_window, None)
        }
        .map_err(vkerr("vkCreate*SurfaceKHR"))?;
        let surface_loader = ash::khr::surface::Instance::new(ctx.entry(), ctx.instance());
        // SAFETY: plain queries on live objects.
        let (supported, formats) = unsafe {
            (
                surface_loader.get_physical_device_surface_support(
                    ctx.physical_device(),
                    ctx.graphics().family(),
                    surface,
                ),
                surface_loader.get_physical_device_surface_formats(ctx.physical_device(), surface),
            )
        };
        let checked = supported
            .map_err(vkerr("vkGetPhysicalDeviceSurfaceSupportKHR"))
            .and_then(|s| {
                if s {
                    formats.map_err(vkerr("vkGetPhysicalDeviceSurfaceFormatsKHR"))
                } else {
                    Err(vk_baton::Error::InvalidInput(
                        "the graphics queue cannot present to this surface".into(),
                    ))
                }
            });
        let formats: Vec<_> = match checked {
            Ok(f) => f
                .into_iter()
                .filter(|f| {
                    matches!(
                        f.format,
                        vk::Format::B8G8R8A8_UNORM | vk::Format::R8G8B8A8_UNORM
                    )
                })
                .collect(),
            Err(e) => {
                // SAFETY: nothing uses the surface yet.
                unsafe { surface_loader.destroy_surface(surface, None) };
                return Err(e);
            }
        };

        let anim = ctx.image(
            ImageDesc::storage_2d(WIDTH, HEIGHT, vk::Format::R8G8B8A8_UNORM),
            "animation",
        )?;
        let size = WORD_STRIDE * FRAMES_IN_FLIGHT as u64;
        let frame_numbers = ctx.buffer(
            BufferDesc::upload(size, vk::BufferUsageFlags::STORAGE_BUFFER),
            "frame numbers",
        )?;
        let code = support::spirv(vk_baton_shaders::ANIM_COMP)?;
        let animate = (0..FRAMES_IN_FLIGHT as u32)
            .map(|slot| {
                let word = BufferRange {
                    offset: WORD_STRIDE * u64::from(slot),
                    size: 4,
                };
                // SAFETY: the sample's own shader (compiled from shaders/), with exactly the
                // bindings declared here; it reads the one word bound.
                unsafe { ComputeDispatch::builder(ctx.device(), &code) }
                    .name("anim")
                    .storage_image(0, anim.clone(), ShaderAccess::WriteDiscard)
                    .storage_buffer_range(1, frame_numbers.clone(), word, ShaderAccess::Read)
                    .groups(WIDTH.div_ceil(8), HEIGHT.div_ceil(8), 1)
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let graph = ctx.graph()?;
        let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
        println!("device: {}", ctx.device_name());
        Ok(Gpu {
            surface_loader,
            surface,
            swapchain: None,
            formats,
            in_flight: VecDeque::new(),
            graph: Some(graph),
            animate,
            anim,
            frame_numbers,
            blits: Vec::new(),
            replayed: 0,
            support,
            frame: 0,
            needs_recreate: true,
            torn_down: false,
            ctx,
        })
    }

    /// Waits for every frame in flight to finish.
    fn idle(&mut self) -> vk_baton::Result<()> {
        while let Some(f) = self.in_flight.pop_front() {
            f.wait()?;
        }
        Ok(())
    }

    /// (Re)creates the swapchain for the window's size; `false` if the extent is zero.
    fn recreate(&mut self, window: &Window) -> vk_baton::Result<bool> {
        let size = window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(false);
        }
        // The graphs' fences first, so every frame's completion is observed; the swapchain
        // then waits for the device, and for its present fences where the device has them
        // (only those say that the presentation engine let go of the semaphores).
        self.idle()?;
        let extent = vk::Extent2D {
            width: size.width,
            height: size.height,
        };
        let created = match self.swapchain.as_mut() {
            Some(sc) => sc.recreate(Some(extent))?,
            None => {
                let mut sc = Swapchain::new(
                    self.ctx.entry(),
                    self.ctx.instance(),
                    self.ctx.device(),
                    self.ctx.physical_device(),
                    self.surface,
                    SwapchainConfig {
                        extent,
                        frames_in_flight: FRAMES_IN_FLIGHT,
                        present_mode: vk::PresentModeKHR::FIFO,
                        formats: self.formats.clone(),
                        usage: vk::ImageUsageFlags::TRANSFER_DST
                            | vk::ImageUsageFlags::COLOR_ATTACHMENT,
                    },
                )?;
                if self.ctx.present_fences() {
                    // SAFETY: the context enabled VK_EXT_swapchain_maintenance1 and its
                    // feature (`Context::present_fences`).
                    unsafe { sc.use_present_fences()? };
                }
                println!("surface format: {:?}", sc.format().format);
                println!(
                    "present fences: {}",
                    if sc.has_present_fences() { "on" } else { "off" }
                );
                let created = sc.handle() != vk::SwapchainKHR::null();
                self.swapchain = Some(sc);
                created
            }
        };
        if !created {
            return Ok(false);
        }
        let sc = self.swapchain.as_ref().expect("created above");
        println!(
            "swapchain: {}x{}, {} images",
            sc.extent().width,
            sc.extent().height,
            sc.images().len()
        );
        // One blit per image, made once: the same pass each time its image comes back.
        let blit = |image: &Arc<StImage>| {
            let to = image.clone();
            ImageBlit::new(&self.support, self.anim.clone(), to, vk::Filter::NEAREST)
        };
        self.blits = sc.images().iter().map(blit).collect::<Result<_, _>>()?;
        self.needs_recreate = false;
        Ok(true)
    }

    /// Renders and presents one frame. Returns the screenshot's download handle when
    /// `screenshot` is set and the frame was rendered.
    fn render(
        &mut self,
        window: &Window,
        screenshot: bool,
    ) -> vk_baton::Result<Option<vk_baton_passes::Download>> {
        if (self.needs_recreate || self.swapchain.is_none()) && !self.recreate(window)? {
            return Ok(None); // minimized: nothing to render into
        }
        // Frames in flight are bounded by the graphs' fences: the oldest frame's fence
        // completes before its acquire semaphore (frame slot) is used again.
        if self.in_flight.len() >= FRAMES_IN_FLIGHT {
            if let Some(f) = self.in_flight.pop_front() {
                f.wait()?;
            }
        }
        let sc = self.swapchain.as_mut().expect("created above");
        let frame = match sc.acquire(u64::MAX)? {
            AcquireOutcome::Acquired(frame) => frame,
            AcquireOutcome::OutOfDate => {
                self.needs_recreate = true;
                return Ok(None);
            }
        };
        // Suboptimal: present this frame anyway (its acquire semaphore is signalled and
        // must be waited on), then recreate.
        self.needs_recreate |= frame.suboptimal();

        // The slot's word was last read by the frame two before, whose fence was waited for.
        let slot = self.frame as usize % FRAMES_IN_FLIGHT;
        let word = self.frame.to_le_bytes();
        self.frame_numbers.write(WORD_STRIDE * slot as u64, &word)?;
        let animate = &mut self.animate[slot];
        let mut acquire = frame.acquire_pass();
        let blit = &mut self.blits[frame.index() as usize];
        let mut present = frame.present_pass();
        let mut download = if screenshot {
            Some(DownloadImage::level(
                self.ctx.device(),
                self.ctx.allocator(),
                self.anim.clone(),
                0,
            )?)
        } else {
            None
        };
        let shot = download.as_ref().map(|d| d.handle());
        let graph = self.graph.as_ref().expect("alive until teardown");
        let mut b = graph
            .record()
            .insert_pass("animate", animate, self.ctx.graphics())
            .insert_pass("acquire", &mut acquire, self.ctx.graphics())
            .insert_pass("blit to swapchain", blit, self.ctx.graphics());
        if let Some(d) = download.as_mut() {
            b = b.insert_pass("screenshot", d, self.ctx.graphics());
        }
        let planned = b
            .insert_pass("present", &mut present, self.ctx.graphics())
            .finish()?;
        if self.frame == 0 {
            println!("plan of frame 0:");
            print!("{planned}");
        }
        let fence = planned.execute()?;
        self.replayed += u32::from(fence.replayed());
        self.in_flight.push_back(fence);

        match sc.present(self.ctx.graphics(), &frame)? {
            PresentOutcome::Optimal => {}
            PresentOutcome::Suboptimal | PresentOutcome::OutOfDate => self.needs_recreate = true,
        }
        self.frame += 1;
        Ok(shot)
    }

    /// Waits for the GPU, destroys everything, and returns the validation message count.
    fn finish(&mut self) -> usize {
        if self.torn_down {
            return 0;
        }
        self.torn_down = true;
        if let Err(e) = self.idle() {
            eprintln!("error while waiting for the GPU: {e}");
        }
        // Waits for the device to be idle, then destroys its semaphores and the swapchain.
        drop(self.swapchain.take());
        self.graph = None;
        self.blits.clear();
        self.animate.clear();
        // SAFETY: the device is idle (the swapchain's drop waited for it) and the swapchain
        // made from the surface is destroyed: nothing uses the surface any more.
        unsafe { self.surface_loader.destroy_surface(self.surface, None) };
        report_validation(&self.ctx)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        self.finish();
    }
}

struct App {
    /// `--replay`: the graph replays its frames' recordings (`Graph::set_replay`).
    replay: bool,
    frames: Option<u32>,
    screenshot: Option<String>,
    /// `--resize-at N`: ask for an 800x600 window after N frames.
    resize_at: Option<u32>,
    /// Declared before `window`: Vulkan goes first.
    gpu: Option<Gpu>,
    window: Option<Window>,
    minimized: bool,
    started: Option<Instant>,
    /// The process exit status once the loop ends.
    status: i32,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: vk_baton::Error) {
        eprintln!("error: {e}");
        self.status = 2;
        if let Some(mut gpu) = self.gpu.take() {
            gpu.finish();
        }
        event_loop.exit();
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let (Some(gpu), Some(window)) = (self.gpu.as_mut(), self.window.as_ref()) else {
            return;
        };
        if self.minimized {
            return;
        }
        let last = self.frames.is_some_and(|n| gpu.frame + 1 >= n);
        let frame = gpu.frame;
        let shot = match gpu.render(window, last && self.screenshot.is_some()) {
            Ok(s) => s,
            Err(e) => return self.fail(event_loop, e),
        };
        if gpu.frame == frame {
            return; // not rendered (minimized or out of date): try again
        }
        if self.resize_at == Some(gpu.frame) {
            // Exercises the resize path (the integration test uses it under Xvfb).
            let _ = window.request_inner_size(winit::dpi::PhysicalSize::new(800, 600));
            println!("requested a resize to 800x600 after frame {}", gpu.frame);
        }
        if !last {
            return;
        }
        let secs = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        println!(
            "rendered {} frames in {secs:.2} s ({:.1} frames/s)",
            gpu.frame,
            gpu.frame as f64 / secs.max(1e-9)
        );
        println!("replayed {} of {} frames", gpu.replayed, gpu.frame);
        if let (Some(path), Some(handle)) = (self.screenshot.clone(), shot) {
            if let Err(e) = gpu.idle() {
                return self.fail(event_loop, e);
            }
            match handle.read() {
                Ok(pixels) => match write_png(&path, &pixels) {
                    Ok(()) => {
                        println!("screenshot: {path} ({WIDTH}x{HEIGHT}, animation frame {frame})")
                    }
                    Err(e) => return self.fail(event_loop, e),
                },
                Err(e) => return self.fail(event_loop, e.into()),
            }
        }
        let mut gpu = self.gpu.take().expect("checked above");
        let messages = gpu.finish();
        drop(gpu);
        self.status = i32::from(messages != 0);
        event_loop.exit();
    }
}

fn write_png(path: &str, rgba: &[u8]) -> vk_baton::Result<()> {
    let err = |e: &dyn std::fmt::Display| vk_baton::Error::InvalidInput(format!("{path}: {e}"));
    let file = std::fs::File::create(path).map_err(|e| err(&e))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), WIDTH, HEIGHT);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut w| w.write_image_data(rgba))
        .map_err(|e| err(&e))
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let attrs = Window::default_attributes()
            .with_title("vk-baton: window")
            .with_inner_size(winit::dpi::PhysicalSize::new(WIDTH, HEIGHT));
        let window = match event_loop.create_window(attrs) {
            Ok(w) => w,
            Err(e) => {
                return self.fail(
                    event_loop,
                    vk_baton::Error::InvalidInput(format!("cannot create a window: {e}")),
                )
            }
        };
        match Gpu::new(&window) {
            Ok(gpu) => {
                if let Some(graph) = &gpu.graph {
                    graph.set_replay(self.replay);
                }
                self.gpu = Some(gpu)
            }
            Err(e) => return self.fail(event_loop, e),
        }
        self.window = Some(window);
        self.started = Some(Instant::now());
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => {
                if let Some(mut gpu) = self.gpu.take() {
                    self.status = i32::from(gpu.finish() != 0);
                }
                event_loop.exit();
            }
            WindowEvent::Resized(size) => {
                self.minimized = size.width == 0 || size.height == 0;
                if let Some(gpu) = self.gpu.as_mut() {
                    gpu.needs_recreate = true;
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.minimized {
            // Nothing to draw: sleep until the window changes.
            event_loop.set_control_flow(ControlFlow::Wait);
        } else if let Some(w) = &self.window {
            event_loop.set_control_flow(ControlFlow::Poll);
            w.request_redraw();
        }
    }
}

fn main() {
    let (mut frames, mut screenshot, mut resize_at) = (0u32, None, None);
    let mut replay = false;
    support::parse_args(
        "usage: window [--frames N (0: until closed)] [--screenshot PATH.png] [--resize-at FRAME] [--replay]",
        |name, p| {
            match name {
                "frames" => frames = p.value()?.parse()?,
                "replay" => replay = true,
                "screenshot" => screenshot = Some(p.value()?.string()?),
                "resize-at" => resize_at = Some(p.value()?.parse()?),
                _ => return Ok(false),
            }
            Ok(true)
        },
    );
    support::init_logging();
    let mut app = App {
        replay,
        frames: (frames > 0).then_some(frames),
        screenshot,
        resize_at,
        gpu: None,
        window: None,
        minimized: false,
        started: None,
        status: 0,
    };
    let event_loop = match EventLoop::new() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: no window system ({e}); under CI run it with xvfb-run");
            std::process::exit(2);
        }
    };
    if let Err(e) = event_loop.run_app(&mut app) {
        eprintln!("error: event loop: {e}");
        std::process::exit(2);
    }
    if let Some(mut gpu) = app.gpu.take() {
        app.status = app.status.max(i32::from(gpu.finish() != 0));
    }
    drop(app.window.take());
    std::process::exit(app.status);
}
