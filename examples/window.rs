//! A window: a compute pass animates an image, which is blitted to the swapchain image and
//! presented. winit 0.30 (`ApplicationHandler`) and an `ash-window` surface.
//!
//! Each frame is one graph on the graphics queue:
//!
//! 1. `animate`: `anim.comp` writes the whole image (frame number in a push constant, so any
//!    frame can be recomputed exactly on the host: see `expected_pixel`).
//! 2. `blit to swapchain`: the stock `ImageBlit`, wrapped so that it also waits on the
//!    acquire semaphore; vk-baton transitions the swapchain image from UNDEFINED after the
//!    wait, chained from the wait's stage.
//! 3. `screenshot` (last frame, with `--screenshot`): the stock `DownloadImage` of the
//!    animated image.
//! 4. `present`: declares the PRESENT access and signals the semaphore `vkQueuePresentKHR`
//!    waits on.
//!
//! Frames in flight are bounded by the graphs' `ExecutionFence`s (two). Resizes and
//! out-of-date or suboptimal swapchains recreate the swapchain; a minimized window (zero
//! extent) renders nothing until it comes back.
//!
//! ```text
//! cargo run --example window
//! cargo run --example window -- --frames 30 --screenshot /tmp/shot.png
//! cargo run --example window -- --frames 30 --resize-at 10   # resizes itself after 10 frames
//! xvfb-run -a -s "-screen 0 1024x768x24" cargo run --example window -- --frames 30 --screenshot /tmp/shot.png
//! ```
//!
//! Exits non-zero on any validation message (`VK_BATON_VALIDATION=1`) or error.

mod support;

use std::collections::VecDeque;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::Instant;
use support::{arg, arg_str, push_u32s, report_validation, vkerr, Compute};
use vk_baton::ash::vk;
use vk_baton::{
    Access, Context, ContextOptions, Declare, Destroy, ExecutionFence, Graph, ImageDesc, Pass,
    Recorder, ResourceState, StImage,
};
use vk_baton_passes::{DownloadImage, FormatSupport, ImageBlit};
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;
const FRAMES_IN_FLIGHT: usize = 2;

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

/// `anim.comp` over the whole image.
struct Animate<'a> {
    pipe: &'a Compute,
    set: vk::DescriptorSet,
    image: Arc<StImage>,
    frame: u32,
}

impl Pass for Animate<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.image_discard(&self.image, Access::COMPUTE_SHADER_WRITE);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let e = self.image.desc().extent;
        // SAFETY: the image is in GENERAL as declared; the pipeline and set outlive the
        // execution (torn down only after every fence is waited for).
        unsafe {
            self.pipe.dispatch(
                r.device(),
                r.cmd(),
                self.set,
                &push_u32s(&[self.frame]),
                [e.width.div_ceil(8), e.height.div_ceil(8), 1],
            )
        };
        Ok(())
    }
}

/// The stock blit, plus the wait on the acquire semaphore that guards the swapchain image.
struct BlitAfterAcquire {
    blit: ImageBlit,
    acquired: vk::Semaphore,
    target: Arc<StImage>,
}

impl Pass for BlitAfterAcquire {
    fn declare(&self, d: &mut Declare<'_>) {
        d.wait_binary(self.acquired, Some(&self.target));
        self.blit.declare(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.blit.record(r)
    }
}

/// Hands the swapchain image to the presentation engine: PRESENT_SRC layout, then a signal.
struct Present {
    image: Arc<StImage>,
    done: vk::Semaphore,
}

impl Pass for Present {
    fn declare(&self, d: &mut Declare<'_>) {
        d.image(&self.image, Access::PRESENT);
        d.signal_binary(self.done);
    }

    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

struct Swapchain {
    handle: vk::SwapchainKHR,
    images: Vec<Arc<StImage>>,
    /// One "rendering done" semaphore per image, waited on by its present.
    presented: Vec<vk::Semaphore>,
}

/// Everything Vulkan. Torn down by [`Gpu::finish`] (or `Drop`), before the window.
struct Gpu {
    surface_loader: ash::khr::surface::Instance,
    swapchain_loader: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    swapchain: Option<Swapchain>,
    format: vk::SurfaceFormatKHR,
    acquired: Vec<vk::Semaphore>,
    in_flight: VecDeque<ExecutionFence>,
    graph: Option<Graph>,
    pipe: Option<Compute>,
    set: vk::DescriptorSet,
    anim: Arc<StImage>,
    support: FormatSupport,
    /// Frames rendered so far (the animation's frame counter).
    frame: u32,
    slot: usize,
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
            ash_window::create_surface(&ctx.entry, &ctx.instance, display, raw_window, None)
        }
        .map_err(vkerr("vkCreate*SurfaceKHR"))?;
        let surface_loader = ash::khr::surface::Instance::new(&ctx.entry, &ctx.instance);
        let swapchain_loader = ash::khr::swapchain::Device::new(&ctx.instance, &ctx.device);
        // SAFETY: plain queries on live objects.
        let (supported, formats) = unsafe {
            (
                surface_loader.get_physical_device_surface_support(
                    ctx.physical_device,
                    ctx.graphics.family(),
                    surface,
                ),
                surface_loader.get_physical_device_surface_formats(ctx.physical_device, surface),
            )
        };
        let formats = formats.map_err(vkerr("vkGetPhysicalDeviceSurfaceFormatsKHR"))?;
        if !supported.map_err(vkerr("vkGetPhysicalDeviceSurfaceSupportKHR"))? {
            // SAFETY: nothing uses the surface yet.
            unsafe { surface_loader.destroy_surface(surface, None) };
            return Err(vk_baton::Error::InvalidInput(
                "the graphics queue cannot present to this surface".into(),
            ));
        }
        // UNORM, so the blit copies the animation's values unchanged.
        let format = formats
            .iter()
            .copied()
            .find(|f| {
                matches!(
                    f.format,
                    vk::Format::B8G8R8A8_UNORM | vk::Format::R8G8B8A8_UNORM
                )
            })
            .unwrap_or(formats[0]);

        let anim = ctx.image(
            ImageDesc::storage_2d(WIDTH, HEIGHT, vk::Format::R8G8B8A8_UNORM),
            "animation",
        )?;
        let mut pipe = Compute::new(
            &ctx,
            vk_baton_shaders::ANIM_COMP,
            &[vk::DescriptorType::STORAGE_IMAGE],
            4,
            1,
        )?;
        let set = pipe.set(&[support::img(&anim)])?;
        let mut acquired = Vec::new();
        for _ in 0..FRAMES_IN_FLIGHT {
            // SAFETY: a valid create info; destroyed in teardown after the device is idle.
            acquired.push(
                unsafe {
                    ctx.device
                        .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                }
                .map_err(vkerr("vkCreateSemaphore"))?,
            );
        }
        let graph = ctx.graph()?;
        let support = FormatSupport::new(&ctx.instance, ctx.physical_device);
        println!("device: {}", ctx.device_name());
        println!("surface format: {:?}", format.format);
        Ok(Gpu {
            surface_loader,
            swapchain_loader,
            surface,
            swapchain: None,
            format,
            acquired,
            in_flight: VecDeque::new(),
            graph: Some(graph),
            pipe: Some(pipe),
            set,
            anim,
            support,
            frame: 0,
            slot: 0,
            needs_recreate: true,
            torn_down: false,
            ctx,
        })
    }

    /// Waits for every frame in flight (and the presentation engine) to finish.
    fn idle(&mut self) -> vk_baton::Result<()> {
        while let Some(f) = self.in_flight.pop_front() {
            f.wait()?;
        }
        // SAFETY: waiting for idle has no preconditions; it also covers present operations
        // still reading the old swapchain's semaphores.
        unsafe { self.ctx.device.device_wait_idle() }.map_err(vkerr("vkDeviceWaitIdle"))
    }

    fn destroy_swapchain(&mut self, sc: Swapchain) {
        // SAFETY: the caller made the device idle; the image wrappers never destroy the
        // swapchain's images (`Destroy::AppKeeps`), and are dropped here first.
        unsafe {
            drop(sc.images);
            for s in sc.presented {
                self.ctx.device.destroy_semaphore(s, None);
            }
            self.swapchain_loader.destroy_swapchain(sc.handle, None);
        }
    }

    /// (Re)creates the swapchain for the window's size; `false` if the extent is zero.
    fn recreate(&mut self, window: &Window) -> vk_baton::Result<bool> {
        let size = window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(false);
        }
        self.idle()?;
        // SAFETY: plain query on live objects.
        let caps = unsafe {
            self.surface_loader
                .get_physical_device_surface_capabilities(self.ctx.physical_device, self.surface)
        }
        .map_err(vkerr("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?;
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: size
                    .width
                    .clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: size
                    .height
                    .clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        if extent.width == 0 || extent.height == 0 {
            return Ok(false);
        }
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let usage = vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::COLOR_ATTACHMENT;
        let old = self.swapchain.take();
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(count)
            .image_format(self.format.format)
            .image_color_space(self.format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true)
            .old_swapchain(old.as_ref().map_or(vk::SwapchainKHR::null(), |s| s.handle));
        // SAFETY: a valid create info for a live surface; the old swapchain (retired by this
        // call) is destroyed right after, with the device idle.
        let created = unsafe { self.swapchain_loader.create_swapchain(&info, None) };
        if let Some(old) = old {
            self.destroy_swapchain(old);
        }
        let handle = created.map_err(vkerr("vkCreateSwapchainKHR"))?;
        // SAFETY: plain query on the new swapchain.
        let raw_images = unsafe { self.swapchain_loader.get_swapchain_images(handle) }
            .map_err(vkerr("vkGetSwapchainImagesKHR"))?;
        let desc = ImageDesc::new_2d(extent.width, extent.height, self.format.format, usage);
        let images = raw_images
            .iter()
            .enumerate()
            .map(|(i, &raw)| {
                // The swapchain owns its images: wrap them, never destroy them.
                Arc::new(
                    StImage::from_raw(
                        &self.ctx.device,
                        raw,
                        desc.clone(),
                        &format!("swapchain {i}"),
                        ResourceState::undefined(),
                        Destroy::AppKeeps,
                    )
                    .named(self.ctx.debug.as_ref()),
                )
            })
            .collect();
        let mut presented = Vec::new();
        for _ in &raw_images {
            // SAFETY: a valid create info; destroyed with the swapchain.
            presented.push(
                unsafe {
                    self.ctx
                        .device
                        .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                }
                .map_err(vkerr("vkCreateSemaphore"))?,
            );
        }
        println!(
            "swapchain: {}x{}, {} images",
            extent.width,
            extent.height,
            raw_images.len()
        );
        self.swapchain = Some(Swapchain {
            handle,
            images,
            presented,
        });
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
        if self.in_flight.len() >= FRAMES_IN_FLIGHT {
            if let Some(f) = self.in_flight.pop_front() {
                f.wait()?;
            }
        }
        let sc = self.swapchain.as_ref().expect("created above");
        let acquired = self.acquired[self.slot];
        // SAFETY: the semaphore is unsignalled: the frame that last used this slot waited on
        // it, and its fence has completed (bounded frames in flight).
        let index = match unsafe {
            self.swapchain_loader.acquire_next_image(
                sc.handle,
                u64::MAX,
                acquired,
                vk::Fence::null(),
            )
        } {
            Ok((index, suboptimal)) => {
                self.needs_recreate |= suboptimal;
                index as usize
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.needs_recreate = true;
                return Ok(None);
            }
            Err(e) => return Err(vk_baton::Error::vk("vkAcquireNextImageKHR", e)),
        };
        let target = sc.images[index].clone();
        let done = sc.presented[index];
        let handle = sc.handle;

        let pipe = self.pipe.as_ref().expect("alive until teardown");
        let mut animate = Animate {
            pipe,
            set: self.set,
            image: self.anim.clone(),
            frame: self.frame,
        };
        let mut blit = BlitAfterAcquire {
            blit: ImageBlit::new(
                &self.support,
                self.anim.clone(),
                target.clone(),
                vk::Filter::NEAREST,
            )?,
            acquired,
            target: target.clone(),
        };
        let mut present = Present {
            image: target,
            done,
        };
        let mut download = if screenshot {
            Some(DownloadImage::level(
                &self.ctx.device,
                &self.ctx.allocator,
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
            .insert_pass("animate", &mut animate, &self.ctx.graphics)
            .insert_pass("blit to swapchain", &mut blit, &self.ctx.graphics);
        if let Some(d) = download.as_mut() {
            b = b.insert_pass("screenshot", d, &self.ctx.graphics);
        }
        let planned = b
            .insert_pass("present", &mut present, &self.ctx.graphics)
            .finish()?;
        if self.frame == 0 {
            println!("plan of frame 0:");
            print!("{planned}");
        }
        self.in_flight.push_back(planned.execute()?);

        let waits = [done];
        let swapchains = [handle];
        let indices = [index as u32];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let result = {
            // Presenting is a queue operation too: under the same lock as the submits.
            let lock = self.ctx.graphics.lock();
            // SAFETY: the semaphore is signalled by the graph just submitted; the queue is
            // externally synchronized by the lock.
            unsafe { self.swapchain_loader.queue_present(lock.handle(), &info) }
        };
        match result {
            Ok(suboptimal) => self.needs_recreate |= suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.needs_recreate = true,
            Err(e) => return Err(vk_baton::Error::vk("vkQueuePresentKHR", e)),
        }
        self.frame += 1;
        self.slot = (self.slot + 1) % FRAMES_IN_FLIGHT;
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
        if let Some(sc) = self.swapchain.take() {
            self.destroy_swapchain(sc);
        }
        self.graph = None;
        self.pipe = None;
        // SAFETY: the device is idle; nothing uses the semaphores or the surface any more
        // (the swapchain made from it is destroyed).
        unsafe {
            for &s in &self.acquired {
                self.ctx.device.destroy_semaphore(s, None);
            }
            self.surface_loader.destroy_surface(self.surface, None);
        }
        report_validation(&self.ctx)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        self.finish();
    }
}

struct App {
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
            Ok(gpu) => self.gpu = Some(gpu),
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
    support::init_logging();
    let frames: u32 = arg("--frames", 0);
    let mut app = App {
        frames: (frames > 0).then_some(frames),
        screenshot: arg_str("--screenshot"),
        resize_at: arg_str("--resize-at").and_then(|v| v.parse().ok()),
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
