//! The [`Swapchain`] itself: the `VkSwapchainKHR`, its images and semaphores; creation,
//! acquire, present and recreation.

use super::present_fences::PresentFences;
use super::*;

/// `want` within `[min, max]`. Not `u32::clamp`, which panics when `min > max`, as a
/// minimized surface may report (`maxImageExtent` zero); the result is then `max`, zero, and
/// no swapchain is created.
pub(super) fn fit(want: u32, min: u32, max: u32) -> u32 {
    want.max(min).min(max)
}

/// How to build a [`Swapchain`].
///
/// ```
/// let cfg = vk_baton_passes::SwapchainConfig { frames_in_flight: 3, ..Default::default() };
/// ```
#[derive(Clone, Debug)]
pub struct SwapchainConfig {
    /// Size when the surface leaves it to the swapchain (`currentExtent` = 0xFFFFFFFF).
    pub extent: vk::Extent2D,
    /// Frames in flight: the number of acquire semaphores.
    pub frames_in_flight: usize,
    /// Preferred present mode; FIFO (always supported) otherwise.
    pub present_mode: vk::PresentModeKHR,
    /// Preferred formats, in order; the surface's first format otherwise.
    pub formats: Vec<vk::SurfaceFormatKHR>,
    /// Image usage (COLOR_ATTACHMENT and TRANSFER_DST by default, for rendering and blits).
    pub usage: vk::ImageUsageFlags,
}

impl Default for SwapchainConfig {
    fn default() -> Self {
        let srgb = |format| vk::SurfaceFormatKHR {
            format,
            color_space: vk::ColorSpaceKHR::SRGB_NONLINEAR,
        };
        Self {
            extent: vk::Extent2D {
                width: 800,
                height: 600,
            },
            frames_in_flight: 2,
            present_mode: vk::PresentModeKHR::FIFO,
            formats: vec![
                srgb(vk::Format::B8G8R8A8_SRGB),
                srgb(vk::Format::B8G8R8A8_UNORM),
            ],
            usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST,
        }
    }
}

/// A swapchain on a surface, its images wrapped as [`StImage`]s (which the swapchain owns:
/// [`Destroy::AppKeeps`]), and its semaphores. The device needs `VK_KHR_swapchain` (with
/// `vk_baton_context::Context`, `ContextOptions { swapchain: true, .. }`).
///
/// ```no_run
/// # fn f(ctx: &vk_baton_context::Context, surface: ash::vk::SurfaceKHR) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::{Swapchain, SwapchainConfig};
/// let sc = Swapchain::new(ctx.entry(), ctx.instance(), ctx.device(), ctx.physical_device(), surface, SwapchainConfig::default())?;
/// println!("{} images of {:?}", sc.images().len(), sc.extent());
/// # Ok(()) }
/// ```
pub struct Swapchain {
    device: ash::Device,
    physical_device: vk::PhysicalDevice,
    surface: vk::SurfaceKHR,
    surface_fn: ash::khr::surface::Instance,
    swapchain_fn: ash::khr::swapchain::Device,
    config: SwapchainConfig,
    handle: vk::SwapchainKHR,
    format: vk::SurfaceFormatKHR,
    extent: vk::Extent2D,
    images: Vec<Arc<StImage>>,
    acquire_semaphores: Vec<vk::Semaphore>,
    present_semaphores: Vec<vk::Semaphore>,
    shared: Arc<Shared>,
    /// With [`Swapchain::use_present_fences`]: the current swapchain's present fences.
    present_fences: Mutex<Option<PresentFences>>,
    fences_on: bool,
}

impl std::fmt::Debug for Swapchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Swapchain({:?}, {} images, {:?}, {:?})",
            self.handle,
            self.images.len(),
            self.format.format,
            self.extent
        )
    }
}

impl Swapchain {
    /// Creates a swapchain for `surface` (which the app keeps and destroys after the
    /// swapchain). If the surface's extent is zero (a minimized window), no swapchain is
    /// created yet: [`Swapchain::handle`] is null, [`Swapchain::acquire`] reports
    /// [`AcquireOutcome::OutOfDate`], and [`Swapchain::recreate`] creates it later.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, surface: ash::vk::SurfaceKHR) -> vk_baton_passes::Result<()> {
    /// let sc = vk_baton_passes::Swapchain::new(ctx.entry(), ctx.instance(), ctx.device(), ctx.physical_device(), surface, Default::default())?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        entry: &ash::Entry,
        instance: &ash::Instance,
        device: &ash::Device,
        physical_device: vk::PhysicalDevice,
        surface: vk::SurfaceKHR,
        config: SwapchainConfig,
    ) -> Result<Self> {
        let mut sc = Self {
            device: device.clone(),
            physical_device,
            surface,
            surface_fn: ash::khr::surface::Instance::new(entry, instance),
            swapchain_fn: ash::khr::swapchain::Device::new(instance, device),
            config,
            handle: vk::SwapchainKHR::null(),
            format: vk::SurfaceFormatKHR::default(),
            extent: vk::Extent2D::default(),
            images: Vec::new(),
            acquire_semaphores: Vec::new(),
            present_semaphores: Vec::new(),
            shared: Shared::new(1, 0),
            present_fences: Mutex::new(None),
            fences_on: false,
        };
        sc.build(vk::SwapchainKHR::null())?;
        Ok(sc)
    }

    /// Makes every present signal a fence (`VkSwapchainPresentFenceInfoEXT`), one per image:
    /// the swapchain then waits for them before it destroys its semaphores or a retired
    /// swapchain ([`Swapchain::recreate`], drop), and before it reuses an image's fence. Only
    /// these fences say when the presentation engine is done with a present's wait semaphore;
    /// `vkDeviceWaitIdle` does not cover it.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
    /// if ctx.present_fences() {
    ///     // SAFETY: the context enabled VK_EXT_swapchain_maintenance1 and its feature.
    ///     unsafe { sc.use_present_fences()? };
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// The device was created with `VK_EXT_swapchain_maintenance1` and its
    /// `swapchainMaintenance1` feature enabled, on an instance with
    /// `VK_EXT_surface_maintenance1` (`vk_baton_context::Context::present_fences` says so of
    /// a context's device).
    pub unsafe fn use_present_fences(&mut self) -> Result<()> {
        self.fences_on = true;
        if self.handle != vk::SwapchainKHR::null() {
            *self.present_fences.get_mut() =
                Some(PresentFences::new(&self.device, self.images.len())?);
        }
        Ok(())
    }

    /// Whether presents signal fences ([`Swapchain::use_present_fences`]).
    pub fn has_present_fences(&self) -> bool {
        self.fences_on
    }

    /// Waits for every present still pending on the current swapchain (with present fences),
    /// and destroys the fences. Returns how many presents were waited for.
    fn retire_present_fences(&mut self) -> Result<usize> {
        let Some(mut fences) = self.present_fences.get_mut().take() else {
            return Ok(0);
        };
        let waited = fences.wait_all()?;
        log::debug!("waited for {waited} present fence(s) before retiring the swapchain");
        Ok(waited)
    }

    /// Whether queue family `family` can present to the surface.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain, q: &vk_baton::Queue) -> vk_baton_passes::Result<()> {
    /// if !sc.supports_present(q.family())? { /* present from another queue */ }
    /// # Ok(()) }
    /// ```
    pub fn supports_present(&self, family: u32) -> Result<bool> {
        // SAFETY: a plain query on live handles.
        unsafe {
            self.surface_fn.get_physical_device_surface_support(
                self.physical_device,
                family,
                self.surface,
            )
        }
        .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceSupportKHR", e))
    }

    /// The images, by index.
    pub fn images(&self) -> &[Arc<StImage>] {
        &self.images
    }

    /// The image size.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The image format and color space.
    pub fn format(&self) -> vk::SurfaceFormatKHR {
        self.format
    }

    /// The `VkSwapchainKHR`.
    pub fn handle(&self) -> vk::SwapchainKHR {
        self.handle
    }

    /// Acquires the next image with the next frame slot's semaphore. Out-of-date is
    /// [`AcquireOutcome::OutOfDate`]; a slot whose previous frame is still executing gives
    /// [`Error::FrameInFlight`] (wait for that frame's fence first).
    ///
    /// ```no_run
    /// # fn f(sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
    /// if let vk_baton_passes::AcquireOutcome::Acquired(frame) = sc.acquire(u64::MAX)? { /* ... */ }
    /// # Ok(()) }
    /// ```
    pub fn acquire(&mut self, timeout_ns: u64) -> Result<AcquireOutcome> {
        if self.handle == vk::SwapchainKHR::null() {
            // The surface had a zero extent (minimized) at the last (re)creation.
            return Ok(AcquireOutcome::OutOfDate);
        }
        let slot = self.shared.sync.lock().begin_acquire()?;
        let sem = *self
            .acquire_semaphores
            .get(slot)
            .ok_or_else(|| Error::Swapchain(format!("no acquire semaphore for slot {slot}")))?;
        // SAFETY: live swapchain; the semaphore is unsignalled with no pending operation
        // (checked by the bookkeeping above).
        let r = unsafe {
            self.swapchain_fn
                .acquire_next_image(self.handle, timeout_ns, sem, vk::Fence::null())
        };
        let (index, suboptimal) = match r {
            Ok(v) => v,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                log::debug!("swapchain out of date at acquire");
                return Ok(AcquireOutcome::OutOfDate);
            }
            Err(e) => return Err(Error::vk("vkAcquireNextImageKHR", e)),
        };
        // Checks `index` against the images (which match the present semaphores): on failure
        // the slot stays blocked with its signalled semaphore until the next recreate.
        self.shared.sync.lock().acquired(slot, index as usize)?;
        let (Some(image), Some(&present_semaphore)) = (
            self.images.get(index as usize),
            self.present_semaphores.get(index as usize),
        ) else {
            return Err(Error::Swapchain(format!(
                "image {index} has no present semaphore; recreate the swapchain"
            )));
        };
        Ok(AcquireOutcome::Acquired(Frame {
            swapchain: self.handle,
            slot,
            index,
            image: image.clone(),
            acquire_semaphore: sem,
            present_semaphore,
            suboptimal,
            shared: self.shared.clone(),
        }))
    }

    /// Presents `frame`'s image on `queue` (the queue its [`SwapchainPresent`] was inserted
    /// on, after the graph executed), waiting on the image's present semaphore.
    ///
    /// ```no_run
    /// # fn f(sc: &vk_baton_passes::Swapchain, q: &vk_baton::Queue, frame: &vk_baton_passes::Frame) -> vk_baton_passes::Result<()> {
    /// let outcome = sc.present(q, frame)?;
    /// # Ok(()) }
    /// ```
    pub fn present(&self, queue: &Queue, frame: &Frame) -> Result<PresentOutcome> {
        frame.shared.check_live(frame)?;
        if frame.swapchain != self.handle || !Arc::ptr_eq(&frame.shared, &self.shared) {
            return Err(Error::Swapchain(format!(
                "{frame:?} was acquired from a swapchain since recreated; acquire again"
            )));
        }
        // The frame's present pass must have been executed, by an execution that did not
        // fail: otherwise the present would wait on a semaphore nothing signals.
        self.shared
            .sync
            .lock()
            .ready_to_present(frame.index as usize)?;
        let waits = [frame.present_semaphore];
        let swapchains = [self.handle];
        let indices = [frame.index];
        let mut fences = self.present_fences.lock();
        let fence = match fences.as_mut() {
            Some(f) => Some(f.for_present(frame.index as usize)?),
            None => None,
        };
        let fence_list = [fence.unwrap_or_default()];
        let mut fence_info = vk::SwapchainPresentFenceInfoEXT::default().fences(&fence_list);
        let mut info = vk::PresentInfoKHR::default()
            .wait_semaphores(&waits)
            .swapchains(&swapchains)
            .image_indices(&indices);
        if fence.is_some() {
            info = info.push_next(&mut fence_info);
        }
        let lock = queue.lock();
        // SAFETY: the queue is externally synchronized by its lock; the semaphore has a
        // pending signal from the graph's submit; the image is acquired; a present fence is
        // chained only once `use_present_fences` was promised the extension, and it is
        // unsignalled with no pending use (`for_present`).
        let r = unsafe { self.swapchain_fn.queue_present(lock.handle(), &info) };
        drop(lock);
        if let Some(f) = fences.as_mut() {
            f.presented(frame.index as usize, r);
        }
        drop(fences);
        self.shared.sync.lock().presented(frame.index as usize)?;
        match r {
            Ok(false) => Ok(PresentOutcome::Optimal),
            Ok(true) => Ok(PresentOutcome::Suboptimal),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(PresentOutcome::OutOfDate),
            Err(e) => Err(Error::vk("vkQueuePresentKHR", e)),
        }
    }

    /// Recreates the swapchain (after out-of-date, suboptimal or a resize), with `extent`
    /// when the surface leaves the size to the swapchain. Waits for the device to be idle
    /// first, so no semaphore or image is in use; the old [`StImage`]s and [`Frame`]s must
    /// no longer be used afterwards (presenting an old frame is refused).
    ///
    /// Returns `false` when the surface has a zero extent (a minimized window): no
    /// swapchain exists until a later `recreate` returns `true`, and [`Swapchain::acquire`]
    /// reports [`AcquireOutcome::OutOfDate`] meanwhile.
    ///
    /// ```no_run
    /// # fn f(sc: &mut vk_baton_passes::Swapchain) -> vk_baton_passes::Result<()> {
    /// if !sc.recreate(Some(ash::vk::Extent2D { width: 1024, height: 768 }))? {
    ///     // minimized: wait for the next resize
    /// }
    /// # Ok(()) }
    /// ```
    pub fn recreate(&mut self, extent: Option<vk::Extent2D>) -> Result<bool> {
        if let Some(e) = extent {
            self.config.extent = e;
        }
        // SAFETY: waiting for idle has no preconditions on a live device.
        unsafe { self.device.device_wait_idle() }.map_err(|e| Error::vk("vkDeviceWaitIdle", e))?;
        // The presentation engine may still hold the old semaphores and swapchain.
        self.retire_present_fences()?;
        // Frames and passes of the old swapchain hold handles about to be destroyed.
        self.shared.retire();
        let old = std::mem::take(&mut self.handle);
        self.destroy_semaphores();
        self.images.clear();
        let r = self.build(old);
        if old != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle; creating the new swapchain (successful or not)
            // retired the old one, whose handle is no longer stored anywhere.
            unsafe { self.swapchain_fn.destroy_swapchain(old, None) };
        }
        r
    }

    /// The extent a new swapchain would get: the surface's, or the configured one clamped
    /// to the surface's limits when the surface leaves it to the swapchain.
    fn target_extent(&self, caps: &vk::SurfaceCapabilitiesKHR) -> vk::Extent2D {
        if caps.current_extent.width != u32::MAX {
            return caps.current_extent;
        }
        vk::Extent2D {
            width: fit(
                self.config.extent.width,
                caps.min_image_extent.width,
                caps.max_image_extent.width,
            ),
            height: fit(
                self.config.extent.height,
                caps.min_image_extent.height,
                caps.max_image_extent.height,
            ),
        }
    }

    fn destroy_semaphores(&mut self) {
        for s in self
            .acquire_semaphores
            .drain(..)
            .chain(self.present_semaphores.drain(..))
        {
            // SAFETY: callers wait for the device to be idle first.
            unsafe { self.device.destroy_semaphore(s, None) };
        }
    }

    /// Creates the swapchain, its semaphores and fresh bookkeeping; `Ok(false)` (and no
    /// swapchain) when the surface's extent is zero.
    fn build(&mut self, old: vk::SwapchainKHR) -> Result<bool> {
        // Frames and passes of an earlier swapchain keep the old bookkeeping, so they can
        // neither corrupt nor pass for this one's.
        self.shared = Shared::new(self.config.frames_in_flight.max(1), 0);
        let (sf, pd, surface) = (&self.surface_fn, self.physical_device, self.surface);
        // SAFETY: plain queries on live handles.
        let caps = unsafe { sf.get_physical_device_surface_capabilities(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", e))?;
        let extent = self.target_extent(&caps);
        if extent.width == 0 || extent.height == 0 {
            log::debug!("surface extent {extent:?}: no swapchain until the next recreate");
            return Ok(false);
        }
        // SAFETY: as above.
        let formats = unsafe { sf.get_physical_device_surface_formats(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfaceFormatsKHR", e))?;
        // SAFETY: as above.
        let modes = unsafe { sf.get_physical_device_surface_present_modes(pd, surface) }
            .map_err(|e| Error::vk("vkGetPhysicalDeviceSurfacePresentModesKHR", e))?;
        let format = self
            .config
            .formats
            .iter()
            .find(|f| formats.contains(f))
            .copied()
            .or_else(|| formats.first().copied())
            .ok_or_else(|| Error::Swapchain("the surface reports no formats".into()))?;
        let mode = if modes.contains(&self.config.present_mode) {
            self.config.present_mode
        } else {
            vk::PresentModeKHR::FIFO
        };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let usage = self.config.usage & caps.supported_usage_flags;
        let alpha = [
            vk::CompositeAlphaFlagsKHR::OPAQUE,
            vk::CompositeAlphaFlagsKHR::INHERIT,
            vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
            vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
        ]
        .into_iter()
        .find(|a| caps.supported_composite_alpha.contains(*a))
        .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(alpha)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old);
        // SAFETY: a valid create info on a live device with VK_KHR_swapchain.
        let handle = unsafe { self.swapchain_fn.create_swapchain(&info, None) }
            .map_err(|e| Error::vk("vkCreateSwapchainKHR", e))?;
        // SAFETY: a live swapchain.
        let raw = match unsafe { self.swapchain_fn.get_swapchain_images(handle) } {
            Ok(r) => r,
            Err(e) => {
                // SAFETY: never used.
                unsafe { self.swapchain_fn.destroy_swapchain(handle, None) };
                return Err(Error::vk("vkGetSwapchainImagesKHR", e));
            }
        };
        // All semaphores or none: a partial set would leave slots without semaphores.
        let frames = self.config.frames_in_flight.max(1);
        let mut semaphores = Vec::with_capacity(frames + raw.len());
        for _ in 0..frames + raw.len() {
            // SAFETY: plain object creation on a live device.
            match unsafe {
                self.device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            } {
                Ok(s) => semaphores.push(s),
                Err(e) => {
                    for s in semaphores {
                        // SAFETY: created above and never used.
                        unsafe { self.device.destroy_semaphore(s, None) };
                    }
                    // SAFETY: never used (no image acquired); its handle is stored nowhere,
                    // so the swapchain stays absent (acquire reports out-of-date).
                    unsafe { self.swapchain_fn.destroy_swapchain(handle, None) };
                    return Err(Error::vk("vkCreateSemaphore", e));
                }
            }
        }
        self.present_semaphores = semaphores.split_off(frames);
        self.acquire_semaphores = semaphores;
        self.handle = handle;
        self.format = format;
        self.extent = extent;
        let desc = ImageDesc::new_2d(extent.width, extent.height, format.format, usage);
        self.images = raw
            .iter()
            .enumerate()
            .map(|(i, &img)| {
                // SAFETY: `img` is an image of the swapchain just created on this device with
                // `desc`'s format, extent and usage; the swapchain owns it (AppKeeps) and
                // outlives the wrappers (they are replaced before it is destroyed).
                Arc::new(unsafe {
                    StImage::from_raw(
                        &self.device,
                        img,
                        desc.clone(),
                        &format!("swapchain image {i}"),
                        ResourceState::undefined(),
                        Destroy::AppKeeps,
                    )
                })
            })
            .collect();
        *self.shared.sync.lock() = SwapchainSync::new(frames, raw.len());
        if self.fences_on {
            *self.present_fences.get_mut() = Some(PresentFences::new(&self.device, raw.len())?);
        }
        log::info!(
            "swapchain {handle:?}: {} images {:?} {:?}, {mode:?}, {frames} frames in flight",
            raw.len(),
            format.format,
            extent
        );
        Ok(true)
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: waiting for idle has no preconditions; afterwards no semaphore or image
        // of the swapchain is in use by the device.
        if let Err(e) = unsafe { self.device.device_wait_idle() } {
            log::error!("vkDeviceWaitIdle failed while dropping the swapchain: {e}");
        }
        self.shared.retire();
        if let Err(e) = self.retire_present_fences() {
            log::error!("waiting for the present fences while dropping the swapchain: {e}");
        }
        self.destroy_semaphores();
        self.images.clear();
        if self.handle != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle; the images are owned by the swapchain.
            unsafe { self.swapchain_fn.destroy_swapchain(self.handle, None) };
        }
    }
}
