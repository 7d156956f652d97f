//! The app's renderer, adopting vk-baton: [`Gpu::new`] makes the app's Vulkan (`setup.rs`) and
//! then the library's objects on it; [`Gpu::render`] is one frame; [`Gpu::finish`] tears down
//! in order.

use crate::scene::{self, Scene};
use crate::setup;
use crate::{HEIGHT, WIDTH};
use std::sync::Arc;
use vk_baton::ash::{self, vk};
use vk_baton::{
    AppSignals, DebugUtils, Graph, ImageDesc, Queue, ResourceState, SharedAllocator, StImage,
};
use vk_baton_passes::{
    wrap_swapchain_images, Download, DownloadImage, FormatSupport, ImageBlit, SwapchainAcquire,
    SwapchainPresent,
};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::Window;

const FRAMES_IN_FLIGHT: usize = 2;

/// Everything Vulkan, the app's and the library's. Torn down by [`Gpu::finish`].
pub struct Gpu {
    // --- the library's objects, on the app's device ---
    graph: Option<Graph>,
    queue: Option<Queue>,
    /// Allocated by the library through the app's allocator.
    scene_image: Option<Arc<StImage>>,
    /// The app's render pass drawing `scene_image`.
    scene: Option<Scene>,
    /// `--direct`: the app's render pass draws into the swapchain image, one per image (made
    /// with the swapchain), and ends it in PRESENT_SRC_KHR; no scene image, no blit.
    direct: Option<Direct>,
    direct_scenes: Vec<Scene>,
    support: FormatSupport,
    /// The app's swapchain images, wrapped.
    swapchain_images: Vec<Arc<StImage>>,
    // --- the app's own synchronization ---
    /// One per swapchain image: signalled by the graph's present pass, waited on by the
    /// app's present (reused when that image is acquired again).
    present_semaphores: Vec<vk::Semaphore>,
    /// One per frame in flight, reused once that slot's fence has signalled.
    acquire_semaphores: Vec<vk::Semaphore>,
    /// The app's frame pacing: signalled by `execute_signalling`; `pending` until waited.
    fences: Vec<vk::Fence>,
    pending: Vec<bool>,
    // --- the app's own Vulkan ---
    swapchain: Option<setup::Swapchain>,
    swapchain_fn: ash::khr::swapchain::Device,
    allocator: Option<SharedAllocator>,
    dev: setup::Device,
    surface_fn: ash::khr::surface::Instance,
    surface: vk::SurfaceKHR,
    inst: setup::Instance,
    pub frame: u32,
    pub needs_recreate: bool,
    /// The image barriers of each rendered frame's plan.
    pub image_barriers: Vec<usize>,
    /// The screenshot's bytes are BGRA (a B8G8R8A8 swapchain image, `--direct`).
    pub shot_is_bgra: bool,
    torn_down: bool,
}

/// How the render pass draws into the swapchain image (`--direct`).
#[derive(Clone, Copy)]
pub struct Direct {
    /// With the outgoing external dependency too (`--no-outgoing-dependency` leaves it out).
    pub outgoing: bool,
}

fn err(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("{what}: {e}")
}

impl Gpu {
    pub fn new(window: &Window, direct: Option<Direct>) -> Result<Gpu, String> {
        let display = window.display_handle().map_err(|e| e.to_string())?.as_raw();
        let raw_window = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let exts = ash_window::enumerate_required_extensions(display).map_err(err("surface"))?;
        let validation = std::env::var("VK_BATON_VALIDATION").is_ok_and(|v| v == "1");
        let inst = setup::instance(exts, validation)?;
        // SAFETY: the window outlives the surface (`main` drops the window last).
        let surface = unsafe {
            ash_window::create_surface(&inst.entry, &inst.instance, display, raw_window, None)
        }
        .map_err(err("vkCreate*SurfaceKHR"))?;
        let surface_fn = ash::khr::surface::Instance::new(&inst.entry, &inst.instance);
        let dev = setup::device(&inst, surface)?;
        // SAFETY: a plain query; the name is a NUL-terminated array.
        let props = unsafe {
            inst.instance
                .get_physical_device_properties(dev.physical_device)
        };
        let name = props.device_name_as_c_str().unwrap_or(c"?");
        println!("device: {}", name.to_string_lossy());
        let allocator = setup::allocator(&inst, &dev)?;
        let swapchain_fn = ash::khr::swapchain::Device::new(&inst.instance, &dev.device);

        // Step 1: a graph on the app's device. Labels and names when debug utils is on.
        let debug = inst
            .debug
            .is_some()
            .then(|| DebugUtils::new(&inst.instance, &dev.device));
        // SAFETY: `dev.device` was made from `dev.physical_device` of `inst.instance` with
        // synchronization2 and timelineSemaphore (setup.rs), and outlives the graph (`finish`).
        let graph = unsafe { Graph::new(&inst.instance, dev.physical_device, &dev.device, debug) }
            .map_err(|e| e.to_string())?;
        // Step 2: the app's one queue. From now on the app submits and presents to it only
        // under `queue.lock()`, which the library's submits take too.
        // SAFETY: the device was created with one queue of `dev.family`; the device outlives
        // the queue.
        let queue = unsafe {
            Queue::new(
                &inst.instance,
                dev.physical_device,
                &dev.device,
                dev.family,
                0,
                "graphics",
            )
        }
        .map_err(|e| e.to_string())?;
        // Step 3a: the app's allocator, shared with the library, which allocates the scene.
        // SAFETY: the allocator was made for this device (setup.rs).
        let allocator = unsafe { SharedAllocator::new(&dev.device, allocator) };
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        let desc = ImageDesc::new_2d(WIDTH, HEIGHT, vk::Format::R8G8B8A8_UNORM, usage);
        let scene_image =
            StImage::new(&dev.device, &allocator, desc, "scene").map_err(|e| e.to_string())?;
        let scene =
            Scene::new(&dev.device, &scene_image, scene::FINAL, true).map_err(err("scene"))?;
        let support = FormatSupport::new(&inst.instance, dev.physical_device);
        let semaphore = || {
            // SAFETY: a plain create info on a live device.
            unsafe {
                dev.device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            }
        };
        let acquire_semaphores = (0..FRAMES_IN_FLIGHT)
            .map(|_| semaphore())
            .collect::<Result<_, _>>()
            .map_err(err("vkCreateSemaphore"))?;
        // SAFETY: as above.
        let fences = (0..FRAMES_IN_FLIGHT)
            .map(|_| unsafe {
                dev.device
                    .create_fence(&vk::FenceCreateInfo::default(), None)
            })
            .collect::<Result<_, _>>()
            .map_err(err("vkCreateFence"))?;
        let mut gpu = Gpu {
            graph: Some(graph),
            queue: Some(queue),
            scene_image: Some(Arc::new(scene_image)),
            scene: Some(scene),
            direct,
            direct_scenes: Vec::new(),
            support,
            swapchain_images: Vec::new(),
            present_semaphores: Vec::new(),
            acquire_semaphores,
            fences,
            pending: vec![false; FRAMES_IN_FLIGHT],
            swapchain: None,
            swapchain_fn,
            allocator: Some(allocator),
            dev,
            surface_fn,
            surface,
            inst,
            frame: 0,
            needs_recreate: true,
            image_barriers: Vec::new(),
            shot_is_bgra: false,
            torn_down: false,
        };
        gpu.recreate(window)?;
        Ok(gpu)
    }

    /// Waits for the app's fences of every frame in flight.
    pub fn wait_frames(&mut self) -> Result<(), String> {
        for slot in 0..FRAMES_IN_FLIGHT {
            self.wait_slot(slot)?;
        }
        Ok(())
    }

    /// Frame pacing: waits for (and resets) the fence of the frame that last used `slot`.
    fn wait_slot(&mut self, slot: usize) -> Result<(), String> {
        if self.pending[slot] {
            let fence = [self.fences[slot]];
            // SAFETY: the fence is alive and its signal was submitted.
            unsafe {
                self.dev
                    .device
                    .wait_for_fences(&fence, true, u64::MAX)
                    .map_err(err("vkWaitForFences"))?;
                self.dev
                    .device
                    .reset_fences(&fence)
                    .map_err(err("vkResetFences"))?;
            }
            self.pending[slot] = false;
        }
        Ok(())
    }

    /// (Re)creates the swapchain for the window's size, and wraps its images (step 3b).
    fn recreate(&mut self, window: &Window) -> Result<(), String> {
        self.wait_frames()?;
        // SAFETY: waiting for idle (the presentation engine's waits) has no preconditions.
        unsafe { self.dev.device.device_wait_idle() }.map_err(err("vkDeviceWaitIdle"))?;
        let size = window.inner_size();
        let want = vk::Extent2D {
            width: size.width,
            height: size.height,
        };
        let old = self.swapchain.take();
        let old_handle = old.as_ref().map_or(vk::SwapchainKHR::null(), |s| s.handle);
        let new = setup::swapchain(
            &self.inst,
            &self.dev,
            &self.swapchain_fn,
            self.surface,
            want,
            old_handle,
        );
        // The old images' render passes, wrappers and present semaphores go before the old
        // swapchain.
        self.direct_scenes.clear();
        self.swapchain_images.clear();
        for s in self.present_semaphores.drain(..) {
            // SAFETY: the device is idle: no present waits on it any more.
            unsafe { self.dev.device.destroy_semaphore(s, None) };
        }
        if let Some(old) = old {
            // SAFETY: idle, retired by the new swapchain's creation, wrappers gone.
            unsafe { self.swapchain_fn.destroy_swapchain(old.handle, None) };
        }
        let Some(sc) = new? else {
            return Ok(()); // minimized: recreate on the next frame
        };
        // SAFETY: the swapchain's images, made with this format, extent and usage and not used
        // yet; the swapchain is destroyed only after the wrappers are gone (above, `finish`).
        self.swapchain_images = unsafe {
            wrap_swapchain_images(
                &self.dev.device,
                &sc.images,
                sc.format,
                sc.extent,
                sc.usage,
                ResourceState::undefined(),
            )
        };
        if let Some(direct) = self.direct {
            let outgoing = direct.outgoing;
            self.direct_scenes = (self.swapchain_images.iter())
                .map(|image| Scene::new(&self.dev.device, image, scene::PRESENT, outgoing))
                .collect::<Result<_, _>>()
                .map_err(err("scene"))?;
        }
        for _ in &sc.images {
            // SAFETY: a plain create info on a live device.
            let s = unsafe {
                self.dev
                    .device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            };
            self.present_semaphores
                .push(s.map_err(err("vkCreateSemaphore"))?);
        }
        println!(
            "swapchain: {}x{}, {} images",
            sc.extent.width,
            sc.extent.height,
            sc.images.len()
        );
        self.swapchain = Some(sc);
        self.needs_recreate = false;
        Ok(())
    }

    /// Renders and presents one frame (step 4), paced by the app's fence of its slot (step 5).
    /// Returns the screenshot's download handle when `screenshot` is set.
    pub fn render(
        &mut self,
        window: &Window,
        screenshot: bool,
    ) -> Result<Option<Download>, String> {
        if self.needs_recreate || self.swapchain.is_none() {
            self.recreate(window)?;
            if self.swapchain.is_none() {
                return Ok(None);
            }
        }
        let slot = self.frame as usize % FRAMES_IN_FLIGHT;
        self.wait_slot(slot)?;
        let sc = self.swapchain.as_ref().expect("created above");
        let acquired = self.acquire_semaphores[slot];
        // SAFETY: the slot's semaphore is unsignalled: the frame that waited on it is done.
        let r = unsafe {
            self.swapchain_fn
                .acquire_next_image(sc.handle, u64::MAX, acquired, vk::Fence::null())
        };
        let index = match r {
            Ok((index, suboptimal)) => {
                self.needs_recreate |= suboptimal;
                index as usize
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.needs_recreate = true;
                return Ok(None);
            }
            Err(e) => return Err(format!("vkAcquireNextImageKHR: {e}")),
        };
        let target = self.swapchain_images[index].clone();
        let rendered = self.present_semaphores[index];
        // SAFETY: `acquired` was given to the acquire that returned `target`; `rendered` is
        // unsignalled (its last present's wait is done: the engine gave `target` back) and the
        // present below waits on it. Both live until `finish`, after the GPU is idle.
        let (mut acquire, mut present) = unsafe {
            (
                SwapchainAcquire::from_raw(acquired, target.clone()),
                SwapchainPresent::from_raw(rendered, target.clone()),
            )
        };
        let (Some(graph), Some(queue)) = (&self.graph, &self.queue) else {
            return Err("rendering after teardown".into());
        };
        // The screenshot: the scene image, or with `--direct` the swapchain image itself.
        let shot_of = match self.direct {
            Some(direct) => {
                // A barrier after the render pass chains only from its outgoing dependency.
                if screenshot && !direct.outgoing {
                    return Err(
                        "no screenshot of a render pass without its outgoing dependency".into(),
                    );
                }
                target.clone()
            }
            None => self.scene_image.clone().ok_or("rendering after teardown")?,
        };
        let allocator = self.allocator.as_ref().expect("alive until teardown");
        let mut download = match screenshot {
            true => Some(
                DownloadImage::level(&self.dev.device, allocator, shot_of.clone(), 0)
                    .map_err(|e| e.to_string())?,
            ),
            false => None,
        };
        self.shot_is_bgra = shot_of.desc().format == vk::Format::B8G8R8A8_UNORM;
        let shot = download.as_ref().map(|d| d.handle());
        let t = self.frame;
        let (scene, drawn) = match self.direct {
            Some(_) => (&self.direct_scenes[index], target.clone()),
            None => (
                self.scene.as_ref().ok_or("rendering after teardown")?,
                shot_of.clone(),
            ),
        };
        let final_layout = match self.direct {
            Some(_) => scene::PRESENT,
            None => scene::FINAL,
        };
        let mut blit = match self.direct {
            Some(_) => None,
            None => Some(
                ImageBlit::new(&self.support, shot_of, target, vk::Filter::NEAREST)
                    .map_err(|e| e.to_string())?,
            ),
        };
        let mut b = graph.record().insert_pass("acquire", &mut acquire, queue);
        b = b.insert_fn(
            "scene (app render pass)",
            queue,
            |d| {
                // The render pass's attachment, with its initialLayout and finalLayout.
                d.uses(&drawn, scene::ACCESS)
                    .initial_layout(scene::INITIAL)
                    .final_layout(final_layout);
            },
            |r| {
                // SAFETY: the render pass takes its image in any layout (UNDEFINED).
                unsafe { scene.record(r.cmd(), t) };
                Ok(())
            },
        );
        if let Some(blit) = blit.as_mut() {
            b = b.insert_pass("blit to swapchain", blit, queue);
        }
        if let Some(d) = download.as_mut() {
            b = b.insert_pass("screenshot", d, queue);
        }
        let planned = b
            .insert_pass("present", &mut present, queue)
            .finish()
            .map_err(|e| e.to_string())?;
        if t == 0 {
            print!("plan of frame 0:\n{planned}");
        }
        self.image_barriers
            .push(planned.plan().image_barriers().count());
        let signals = AppSignals::new().fence(self.fences[slot]);
        // SAFETY: the slot's fence is unsignalled (waited and reset above) and used by no
        // other submit; it lives until `finish`, which waits on it.
        let execution =
            unsafe { planned.execute_signalling(&signals) }.map_err(|e| e.to_string())?;
        // The app paces on its own fence: the execution's objects go back to the graph.
        drop(execution);
        self.pending[slot] = true;

        let (waits, swapchains, indices) = ([rendered], [sc.handle], [index as u32]);
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        // The library submits to this queue too: present under its lock.
        let lock = queue.lock();
        // SAFETY: the lock is held; the graph's submit signals `rendered`; `index` is acquired.
        let r = unsafe { self.swapchain_fn.queue_present(lock.handle(), &info) };
        drop(lock);
        match r {
            Ok(false) => {}
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.needs_recreate = true,
            Err(e) => return Err(format!("vkQueuePresentKHR: {e}")),
        }
        self.frame += 1;
        Ok(shot)
    }

    /// Step 6: waits for the GPU and destroys everything, in order; returns the validation
    /// message count.
    pub fn finish(&mut self) -> usize {
        if self.torn_down {
            return 0;
        }
        self.torn_down = true;
        // 1. The GPU first: the app's fences, then idle (the presentation engine's waits).
        if let Err(e) = self.wait_frames() {
            eprintln!("error while waiting for the frames: {e}");
        }
        // SAFETY: no preconditions.
        if let Err(e) = unsafe { self.dev.device.device_wait_idle() } {
            eprintln!("vkDeviceWaitIdle: {e}");
        }
        // 2. The graph: it releases what its finished executions kept (passes' objects,
        //    command buffers), and needs the device.
        self.graph = None;
        // 3. The app's render pass, framebuffer and view of the scene, before the scene.
        self.scene = None;
        self.direct_scenes.clear();
        // 4. The images: the scene frees its memory through the shared allocator; the
        //    swapchain wrappers free nothing (the swapchain owns its images).
        self.scene_image = None;
        self.swapchain_images.clear();
        // 5. The app's semaphores and fences: no submit or present uses them any more.
        // SAFETY: the device is idle.
        unsafe {
            let d = &self.dev.device;
            self.present_semaphores
                .drain(..)
                .for_each(|s| d.destroy_semaphore(s, None));
            self.acquire_semaphores
                .drain(..)
                .for_each(|s| d.destroy_semaphore(s, None));
            self.fences.drain(..).for_each(|f| d.destroy_fence(f, None));
        }
        // 6. The swapchain, now that no wrapper of its images is left.
        if let Some(sc) = self.swapchain.take() {
            // SAFETY: idle, and nothing refers to it.
            unsafe { self.swapchain_fn.destroy_swapchain(sc.handle, None) };
        }
        // 7. The queue (its timeline semaphore) and 8. the allocator (its memory blocks):
        //    both need the device.
        self.queue = None;
        self.allocator = None;
        // 9. The device, then 10. the surface, the messenger and the instance.
        // SAFETY: every object of the device is destroyed above; the surface's swapchain is
        // gone; the messenger goes before its instance.
        unsafe {
            self.dev.device.destroy_device(None);
            self.surface_fn.destroy_surface(self.surface, None);
            if let Some((loader, m)) = self.inst.debug.take() {
                loader.destroy_debug_utils_messenger(m, None);
            }
            self.inst.instance.destroy_instance(None);
        }
        let n = setup::MESSAGES.load(std::sync::atomic::Ordering::Relaxed);
        let layer = if self.inst.validation {
            "layer on, with synchronization validation"
        } else {
            "layer off: set VK_BATON_VALIDATION=1 to turn it on"
        };
        println!("validation: {n} message(s) ({layer})");
        n
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        self.finish();
    }
}
