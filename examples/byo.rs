//! Bring your own Vulkan: an app that made everything itself with raw ash (instance with debug
//! utils, device, queue, gpu-allocator allocator, swapchain, its own `VkRenderPass`) adopts
//! vk-baton step by step, without `vk_baton_context::Context`:
//!
//! 1. `Graph::new` on the app's instance, physical device and device.
//! 2. `Queue::new` for the app's queue (the app submits and presents through its lock).
//! 3. Images: the scene image allocated by the library through the app's allocator
//!    (`SharedAllocator`), and the app's swapchain images wrapped with
//!    `wrap_swapchain_images`.
//! 4. A frame: the app's render pass clears the scene (its attachment declared with its
//!    `initialLayout` and `finalLayout`), the stock `ImageBlit` copies it to the acquired
//!    swapchain image between `SwapchainAcquire::from_raw` and `SwapchainPresent::from_raw` on
//!    the app's semaphores, and the app presents with `vkQueuePresentKHR` under the queue's
//!    lock.
//!    With `--direct`, the app's render pass draws straight into the acquired swapchain image
//!    instead (`initialLayout` UNDEFINED, `finalLayout` PRESENT_SRC_KHR, as many renderers
//!    have it): the graph moves the image nowhere (the render pass does), and signals the
//!    present at ALL_COMMANDS, which takes in the render pass's move to PRESENT_SRC_KHR. With
//!    `--no-outgoing-dependency` the render pass has only its incoming external dependency,
//!    as many swapchain render passes do: that signal is then all that orders the move before
//!    the present (no screenshot then: the download's barrier would not chain from the move).
//! 5. Frame pacing on the app's own fences, which `execute_signalling` signals.
//! 6. Teardown in a commented order (`Gpu::finish`).
//!
//! ```text
//! cargo run -p vk-baton-window-example --example byo -- --frames 30 --screenshot /tmp/byo.png
//! xvfb-run -a -s "-screen 0 1024x768x24" cargo run -p vk-baton-window-example --example byo -- --frames 10
//! xvfb-run -a -s "-screen 0 1024x768x24" cargo run -p vk-baton-window-example --example byo -- --frames 10 --direct
//! ```
//!
//! Exits non-zero on any validation message (`VK_BATON_VALIDATION=1`) or error.

#[path = "byo/frame.rs"]
mod frame;
#[path = "byo/scene.rs"]
mod scene;
#[path = "byo/setup.rs"]
mod setup;

use frame::Gpu;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 480;

struct App {
    frames: u32,
    direct: Option<frame::Direct>,
    screenshot: Option<String>,
    /// Declared before `window`: Vulkan goes first.
    gpu: Option<Gpu>,
    window: Option<Window>,
    started: Option<Instant>,
    status: i32,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: String) {
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
        let last = self.frames > 0 && gpu.frame + 1 >= self.frames;
        let t = gpu.frame;
        let shot = match gpu.render(window, last && self.screenshot.is_some()) {
            Ok(s) => s,
            Err(e) => return self.fail(event_loop, e),
        };
        if gpu.frame == t || !last {
            return; // not rendered (out of date: recreated), or more frames to go
        }
        let secs = self.started.map_or(0.0, |s| s.elapsed().as_secs_f64());
        println!("rendered {} frames in {secs:.2} s", gpu.frame);
        let barriers: Vec<String> = gpu.image_barriers.iter().map(usize::to_string).collect();
        println!("image barriers by frame: {}", barriers.join(", "));
        if let (Some(path), Some(handle)) = (self.screenshot.clone(), shot) {
            if let Err(e) = gpu.wait_frames() {
                return self.fail(event_loop, e);
            }
            let written = handle.read().map_err(|e| e.to_string()).and_then(|mut px| {
                if gpu.shot_is_bgra {
                    px.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
                }
                write_png(&path, &px)
            });
            match written {
                Ok(()) => println!("screenshot: {path} ({WIDTH}x{HEIGHT}, frame {t})"),
                Err(e) => return self.fail(event_loop, e),
            }
        }
        let mut gpu = self.gpu.take().expect("checked above");
        self.status = i32::from(gpu.finish() != 0);
        event_loop.exit();
    }
}

fn write_png(path: &str, rgba: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), WIDTH, HEIGHT);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut w| w.write_image_data(rgba))
        .map_err(|e| format!("{path}: {e}"))
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let attrs = Window::default_attributes()
            .with_title("vk-baton: bring your own Vulkan")
            .with_inner_size(winit::dpi::PhysicalSize::new(WIDTH, HEIGHT));
        let window = match event_loop.create_window(attrs) {
            Ok(w) => w,
            Err(e) => return self.fail(event_loop, format!("cannot create a window: {e}")),
        };
        match Gpu::new(&window, self.direct) {
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
            WindowEvent::Resized(_) => {
                if let Some(gpu) = self.gpu.as_mut() {
                    gpu.needs_recreate = true;
                }
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(w) = &self.window {
            event_loop.set_control_flow(ControlFlow::Poll);
            w.request_redraw();
        }
    }
}

fn main() {
    let (mut frames, mut screenshot) = (0u32, None);
    let (mut direct, mut outgoing) = (false, true);
    support::parse_args(
        "usage: byo [--frames N (0: until closed)] [--screenshot PATH.png] [--direct (the render pass draws into the swapchain image) [--no-outgoing-dependency]]",
        |name, p| {
            use support::ValueExt;
            match name {
                "frames" => frames = p.value()?.parse()?,
                "screenshot" => screenshot = Some(p.value()?.string()?),
                "direct" => direct = true,
                "no-outgoing-dependency" => outgoing = false,
                _ => return Ok(false),
            }
            Ok(true)
        },
    );
    support::init_logging();
    let mut app = App {
        frames,
        direct: direct.then_some(frame::Direct { outgoing }),
        screenshot,
        gpu: None,
        window: None,
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
    // The window goes last: the surface was made from it.
    drop(app.window.take());
    std::process::exit(app.status);
}
