//! # vk-baton-context
//!
//! [`Context`]: a bootstrap for [vk-baton](vk_baton)'s samples, tests and newcomers. It makes
//! an instance (with the validation layer and synchronization validation when asked), a device
//! with every queue family, three named queues, an allocator, and graphs; and it counts the
//! validation layer's and the driver's messages ([`messages`]: [`ValidationMessages`],
//! [`MessageLog`]). vk-baton itself does not need it: apps with their own instance, device,
//! queues and allocator use [`vk_baton::Queue::new`], [`vk_baton::StImage::new`] and
//! [`vk_baton::Graph::new`] directly.
//!
//! The context uses vk-baton's public API only. Its device is destroyed when the context and
//! every queue, resource and graph it made have dropped, in any order: it gives them the owner
//! of its device ([`vk_baton::Queue::keep_alive_with`],
//! [`vk_baton::Graph::with_device_owner`], ...).
//!
//! ```no_run
//! # fn main() -> vk_baton::Result<()> {
//! let ctx = vk_baton_context::Context::new()?; // validation when VK_BATON_VALIDATION=1
//! println!("graphics: {:?}, async compute: {:?}", ctx.graphics(), ctx.async_compute());
//! assert_eq!(ctx.validation_messages(), 0);
//! # Ok(()) }
//! ```

// Every path to vk-baton is spelled `vk_baton::`, and to this crate's own items relatively
// (never `crate::`): vk-baton's unit tests compile these sources into themselves.
#![warn(missing_docs)]

mod extension_features;
mod features;
pub mod messages;
mod owner;
pub mod requirements;
mod setup;

pub use messages::{AllowedMessage, MessageLog, ValidationMessage, ValidationMessages};

use ash::vk;
use messages::Messages;
use owner::DeviceOwner;
use setup::FamilyChoice;
use std::ffi::CString;
use std::fmt;
use std::sync::Arc;
use vk_baton::timing::TimestampSupport;
use vk_baton::{
    BufferDesc, DebugUtils, Graph, ImageDesc, Queue, Result, SharedAllocator, StBuffer, StImage,
};

/// How to build a [`Context`].
///
/// ```
/// let opts = vk_baton_context::ContextOptions { validation: true, ..Default::default() };
/// ```
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// Enable `VK_LAYER_KHRONOS_validation` with synchronization validation (an error if the
    /// layer is missing). Default: `VK_BATON_VALIDATION=1` in the environment.
    pub validation: bool,
    /// The application name given to the driver.
    pub app_name: String,
    /// Enable `VK_KHR_swapchain` on the device, and the `VK_KHR_surface` it requires on the
    /// instance; and, where the instance and device have them, `VK_EXT_surface_maintenance1`
    /// (with `VK_KHR_get_surface_capabilities2`) and `VK_EXT_swapchain_maintenance1` with its
    /// feature, for present fences ([`Context::present_fences`]).
    pub swapchain: bool,
    /// Extra instance extensions (e.g. surface extensions from `ash-window`).
    pub instance_extensions: Vec<CString>,
    /// Core features the app needs beyond those the context enables anyway (see
    /// [`Context::features`]): [`Error::Environment`](vk_baton::Error::Environment) if the
    /// device lacks one.
    pub features: vk::PhysicalDeviceFeatures,
    /// Device extensions the app needs (say `VK_KHR_ray_query`):
    /// [`Error::Environment`](vk_baton::Error::Environment) if the device lacks one. Features of
    /// extensions that must be enabled through `pNext` are not covered: bring your own device
    /// for those ([`vk_baton::Graph::new`]).
    pub device_extensions: Vec<CString>,
    /// Device features that some named accesses need (mesh and task shaders, acceleration
    /// structures, ray tracing pipelines, ray queries): the context enables each with its
    /// extensions (and `bufferDeviceAddress` for acceleration structures), fails with
    /// [`Error::Environment`](vk_baton::Error::Environment) if the device lacks one, and
    /// tells every graph it makes ([`Graph::set_device_features`]).
    pub device_features: vk_baton::access::DeviceFeatures,
    /// How many queues to create in the graphics family (default 1): two or more let two
    /// graphs, or two passes of one graph, run side by side on one family. They are
    /// [`Context::graphics_queues`], named "graphics", "graphics 1", ... Asking for more than
    /// the family has (lavapipe's has one) is an error, not a silent fallback: a test that
    /// wants two queues should not pass by running on one.
    pub graphics_queues: u32,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            validation: std::env::var("VK_BATON_VALIDATION").is_ok_and(|v| v == "1"),
            app_name: "vk-baton".into(),
            swapchain: false,
            instance_extensions: Vec::new(),
            features: vk::PhysicalDeviceFeatures::default(),
            device_extensions: Vec::new(),
            device_features: Default::default(),
            graphics_queues: 1,
        }
    }
}

/// An instance, a device with every queue family, three named queues and an allocator.
///
/// `graphics`, `async_compute` and `transfer` each pick a dedicated family where one exists
/// (compute without graphics; transfer without graphics or compute) and otherwise are the
/// very same [`Queue`] clone as `graphics` (one `VkQueue`, one timeline).
///
/// The context, and every queue, resource and graph it makes, keep the device alive: drop
/// them in any order, and the device is destroyed when the last one goes. Objects the app makes
/// itself with the context's device or allocator must be gone before that.
///
/// # Dropping blocks
///
/// Dropping the context waits for the device to go idle ([`Context::device_wait_idle`]),
/// holding every queue's submit lock: as long as the GPU work in flight takes. Drop it on a
/// thread that holds no [`QueueLock`](vk_baton::QueueLock) and that no pending work needs
/// (one that would later signal a timeline value, event or external semaphore it waits on):
/// otherwise the drop never returns.
///
/// ```no_run
/// # fn main() -> vk_baton::Result<()> {
/// use vk_baton::{ash::vk, ImageDesc};
/// use vk_baton_context::Context;
/// let ctx = Context::new_for_tests()?; // validation + synchronization validation on
/// let img = ctx.image(ImageDesc::storage_2d(64, 64, vk::Format::R8G8B8A8_UNORM), "img")?;
/// let graph = ctx.graph()?;
/// # Ok(()) }
/// ```
pub struct Context {
    graphics: Queue,
    async_compute: Queue,
    transfer: Queue,
    queues: Vec<Queue>,
    allocator: SharedAllocator,
    debug: Option<DebugUtils>,
    device: ash::Device,
    physical_device: vk::PhysicalDevice,
    instance: ash::Instance,
    entry: ash::Entry,
    validation: bool,
    graphics_queues: Vec<Queue>,
    messages: Arc<Messages>,
    timestamps: TimestampSupport,
    /// The core features enabled on the device.
    features: vk::PhysicalDeviceFeatures,
    /// The features some accesses need, enabled on the device.
    device_features: vk_baton::access::DeviceFeatures,
    /// `VK_EXT_swapchain_maintenance1` and its feature are enabled.
    present_fences: bool,
    /// The last field: the queues and the allocator above drop before the device can go.
    owner: Arc<DeviceOwner>,
}

impl Context {
    /// A context with [`ContextOptions::default`]: validation when `VK_BATON_VALIDATION=1`.
    ///
    /// ```no_run
    /// let ctx = vk_baton_context::Context::new().expect("a Vulkan 1.3 device");
    /// ```
    pub fn new() -> Result<Context> {
        Self::with_options(ContextOptions::default())
    }

    /// A context with validation and synchronization validation always on.
    ///
    /// ```no_run
    /// let ctx = vk_baton_context::Context::new_for_tests().unwrap();
    /// assert_eq!(ctx.validation_messages(), 0);
    /// ```
    pub fn new_for_tests() -> Result<Context> {
        Self::with_options(ContextOptions {
            validation: true,
            app_name: "vk-baton tests".into(),
            ..Default::default()
        })
    }

    /// A context with explicit options. Fails when no Vulkan 1.3 device is present.
    ///
    /// ```no_run
    /// let ctx = vk_baton_context::Context::with_options(vk_baton_context::ContextOptions { swapchain: true, ..Default::default() }).unwrap();
    /// ```
    pub fn with_options(opts: ContextOptions) -> Result<Context> {
        let messages = Arc::new(Messages::default());
        let instance = setup::create_instance(&opts, messages.clone())?;
        // From here on, a failure drops the owners made so far, which destroy what they own.
        let (physical_device, families) = setup::pick_physical_device(&instance.instance)?;
        let choice = FamilyChoice::new(&families, opts.graphics_queues)?;
        // SAFETY: the physical device belongs to the instance, which is alive.
        let chosen = unsafe {
            features::choose(
                &instance.instance,
                physical_device,
                &opts.features,
                &opts.device_extensions,
                opts.device_features,
            )
        }?;
        // SAFETY: the physical device belongs to the instance, which is alive.
        let swapchain = match opts.swapchain {
            false => setup::SwapchainExtensions::None,
            true if instance.surface_maintenance1
                && unsafe {
                    setup::has_swapchain_maintenance1(&instance.instance, physical_device)
                } =>
            {
                setup::SwapchainExtensions::WithPresentFences
            }
            true => setup::SwapchainExtensions::Swapchain,
        };
        let device = setup::create_device(
            &instance.instance,
            physical_device,
            &choice,
            &chosen,
            swapchain,
        )?;
        let host_query_reset = chosen.host_query_reset;
        // SAFETY: the physical device belongs to the instance, which is alive.
        let mut timestamps =
            unsafe { TimestampSupport::query(&instance.instance, physical_device) };
        if host_query_reset {
            // SAFETY: the device was just created with hostQueryReset.
            timestamps = unsafe { timestamps.with_host_query_reset() };
        }
        let debug = instance
            .debug_utils
            .then(|| DebugUtils::new(&instance.instance, &device));
        let (entry, vk_instance) = (instance.entry.clone(), instance.instance.clone());
        let owner = Arc::new(DeviceOwner::new(device.clone(), instance));
        let queues = setup::create_queues(
            &vk_instance,
            physical_device,
            &owner,
            &families,
            &choice,
            debug.as_ref(),
        )?;
        let allocator = setup::create_allocator(
            &vk_instance,
            &device,
            physical_device,
            chosen.buffer_device_address,
        )?;
        owner.watch_allocator(&allocator);

        let graphics = queues.graphics[0].clone();
        let first = |f: Option<usize>| f.map(|f| queues.first_of_family[f].clone());
        let async_compute = first(choice.async_compute).unwrap_or_else(|| graphics.clone());
        let transfer = first(choice.transfer).unwrap_or_else(|| graphics.clone());
        log::info!(
            "vk-baton context: {} families; graphics = family {} ({} queue(s)), async_compute = family {}, transfer = family {}; validation {}",
            families.len(),
            graphics.family(),
            queues.graphics.len(),
            async_compute.family(),
            transfer.family(),
            if opts.validation { "on (with synchronization validation)" } else { "off" }
        );
        Ok(Context {
            graphics,
            async_compute,
            transfer,
            queues: queues.first_of_family,
            allocator,
            debug,
            device,
            physical_device,
            instance: vk_instance,
            entry,
            validation: opts.validation,
            graphics_queues: queues.graphics,
            messages,
            timestamps,
            features: chosen.core,
            device_features: chosen.device_features,
            present_fences: swapchain == setup::SwapchainExtensions::WithPresentFences,
            owner,
        })
    }

    /// The core (Vulkan 1.0) features enabled on the device: those of
    /// [`ContextOptions::features`], and where the device has them, the ones raster frames
    /// commonly use: `independentBlend`, `multiDrawIndirect`, `drawIndirectFirstInstance`,
    /// `vertexPipelineStoresAndAtomics`, `fragmentStoresAndAtomics`, `samplerAnisotropy`,
    /// `sampleRateShading`, `depthClamp` and `fillModeNonSolid`.
    ///
    /// Beyond them the device always has `synchronization2` and `dynamicRendering` (Vulkan
    /// 1.3) and `timelineSemaphore` (1.2), and `hostQueryReset` (1.2) where the device has it:
    /// a graphics pipeline with dynamic rendering needs nothing else.
    ///
    /// ```no_run
    /// let ctx = vk_baton_context::Context::new()?;
    /// if ctx.features().fragment_stores_and_atomics == vk_baton::ash::vk::TRUE {
    ///     // fragment shaders may write storage buffers and images
    /// }
    /// # Ok::<(), vk_baton::Error>(())
    /// ```
    pub fn features(&self) -> vk::PhysicalDeviceFeatures {
        self.features
    }

    /// A new [`Graph`] on this device, with debug labels when available.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton::Result<()> {
    /// let graph = ctx.graph()?;
    /// # Ok(()) }
    /// ```
    pub fn graph(&self) -> Result<Graph> {
        // SAFETY: the device was created from the physical device of the live instance, with
        // synchronization2 and timelineSemaphore; `owner` destroys it only once dropped, and
        // the debug functions were loaded for it.
        let graph = unsafe {
            Graph::with_device_owner(
                &self.instance,
                self.physical_device,
                &self.device,
                self.debug.clone(),
                self.owner.clone(),
            )
        }?;
        // SAFETY: a plain query on a live physical device, the one the device was made from,
        // whose granularity it is.
        unsafe {
            let limits = self
                .instance
                .get_physical_device_properties(self.physical_device)
                .limits;
            graph.set_transient_allocator(&self.allocator, limits.buffer_image_granularity)?;
        }
        // SAFETY: the device was created with these features enabled (`with_options`).
        unsafe { graph.set_device_features(self.device_features) };
        Ok(graph)
    }

    /// The features of [`ContextOptions::device_features`], enabled on the device and told to
    /// every graph the context makes.
    ///
    /// ```no_run
    /// use vk_baton::access::DeviceFeatures as F;
    /// use vk_baton_context::{Context, ContextOptions};
    /// let opts = ContextOptions { device_features: F::ACCELERATION_STRUCTURE | F::RAY_QUERY, ..Default::default() };
    /// let ctx = Context::with_options(opts)?;
    /// assert!(ctx.graph()?.device_features().contains(F::RAY_QUERY));
    /// # Ok::<(), vk_baton::Error>(())
    /// ```
    pub fn device_features(&self) -> vk_baton::access::DeviceFeatures {
        self.device_features
    }

    /// Whether the device has `VK_EXT_swapchain_maintenance1` enabled with its
    /// `swapchainMaintenance1` feature (the context enables it with
    /// [`ContextOptions::swapchain`] where the instance and device have it). A swapchain can
    /// then signal a fence per present (`vk_baton_passes::Swapchain::use_present_fences`),
    /// which says when the present's semaphore and the swapchain may be destroyed.
    ///
    /// ```no_run
    /// use vk_baton_context::{Context, ContextOptions};
    /// let ctx = Context::with_options(ContextOptions { swapchain: true, ..Default::default() })?;
    /// println!("present fences: {}", if ctx.present_fences() { "on" } else { "off" });
    /// # Ok::<(), vk_baton::Error>(())
    /// ```
    pub fn present_fences(&self) -> bool {
        self.present_fences
    }

    /// What the device can time, for [`Graph::set_gpu_timings`]: with host query reset where
    /// the device has it (the context enables it).
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton::Result<()> {
    /// let graph = ctx.graph()?;
    /// graph.set_gpu_timings(Some(ctx.timestamp_support()));
    /// # Ok(()) }
    /// ```
    pub fn timestamp_support(&self) -> TimestampSupport {
        self.timestamps.clone()
    }

    /// Every queue of the graphics family, by queue index: [`Context::graphics`] first, then
    /// the extra ones [`ContextOptions::graphics_queues`] asked for.
    ///
    /// ```no_run
    /// # fn main() -> vk_baton::Result<()> {
    /// use vk_baton_context::{Context, ContextOptions};
    /// let ctx = Context::with_options(ContextOptions { graphics_queues: 2, ..Default::default() })?;
    /// let [main, side] = ctx.graphics_queues() else { unreachable!() };
    /// assert_eq!(side.name(), "graphics 1");
    /// # Ok(()) }
    /// ```
    pub fn graphics_queues(&self) -> &[Queue] {
        &self.graphics_queues
    }

    /// Creates a device-local image, debug-named.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, ImageDesc};
    /// let img = ctx.image(ImageDesc::storage_2d(16, 16, vk::Format::R8G8B8A8_UNORM), "img")?;
    /// # Ok(()) }
    /// ```
    pub fn image(&self, desc: ImageDesc, name: &str) -> Result<Arc<StImage>> {
        Ok(Arc::new(
            StImage::new(&self.device, &self.allocator, desc, name)?
                .named(self.debug.as_ref())
                .keep_alive_with(self.owner.clone()),
        ))
    }

    /// Creates a buffer (device-local or mapped, per `desc.location`), debug-named.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc};
    /// let buf = ctx.buffer(BufferDesc::upload(64, vk::BufferUsageFlags::TRANSFER_SRC), "staging")?;
    /// # Ok(()) }
    /// ```
    pub fn buffer(&self, desc: BufferDesc, name: &str) -> Result<Arc<StBuffer>> {
        Ok(Arc::new(
            StBuffer::new(&self.device, &self.allocator, desc, name)?
                .named(self.debug.as_ref())
                .keep_alive_with(self.owner.clone()),
        ))
    }

    /// The device's name, as the driver reports it.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// println!("running on {}", ctx.device_name());
    /// # }
    /// ```
    pub fn device_name(&self) -> String {
        // SAFETY: plain query on a live physical device.
        let props = unsafe {
            self.instance
                .get_physical_device_properties(self.physical_device)
        };
        props
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The graphics queue (queue 0 of the graphics family).
    pub fn graphics(&self) -> &Queue {
        &self.graphics
    }

    /// A compute queue of a family without graphics, or else the very [`Context::graphics`].
    pub fn async_compute(&self) -> &Queue {
        &self.async_compute
    }

    /// A transfer queue of a family without graphics or compute, or else the very
    /// [`Context::graphics`].
    pub fn transfer(&self) -> &Queue {
        &self.transfer
    }

    /// Queue 0 of every family, by family index.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// The gpu-allocator allocator that [`Context::image`] and [`Context::buffer`] use.
    /// Resources made with it directly (or a clone of it) must drop before the device goes.
    pub fn allocator(&self) -> &SharedAllocator {
        &self.allocator
    }

    /// The `VK_EXT_debug_utils` device functions, when the instance has the extension.
    pub fn debug(&self) -> Option<&DebugUtils> {
        self.debug.as_ref()
    }

    /// The device.
    pub fn device(&self) -> &ash::Device {
        &self.device
    }

    /// The physical device.
    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.physical_device
    }

    /// The instance.
    pub fn instance(&self) -> &ash::Instance {
        &self.instance
    }

    /// The loader's entry points.
    pub fn entry(&self) -> &ash::Entry {
        &self.entry
    }

    /// Whether the validation layer (with synchronization validation) is on.
    pub fn validation(&self) -> bool {
        self.validation
    }

    /// Whether the device has more than one queue family that the three named queues use.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// if !ctx.has_several_families() { println!("single queue"); }
    /// # }
    /// ```
    pub fn has_several_families(&self) -> bool {
        self.graphics != self.async_compute || self.graphics != self.transfer
    }

    /// Waits until the device is idle (`vkDeviceWaitIdle`): all work submitted to any of its
    /// queues has finished. It holds every queue's submit lock ([`Queue::lock`]) meanwhile,
    /// because `vkDeviceWaitIdle` needs every queue of the device externally synchronized: a
    /// graph submitting on another thread waits until it returns.
    ///
    /// An app that calls `vkDeviceWaitIdle` itself must likewise hold the lock of every queue
    /// of the device (each [`Context::queues`] and [`Context::graphics_queues`] entry) around
    /// the call; this method does exactly that.
    ///
    /// It blocks for as long as the GPU work takes, and never returns if that work waits for
    /// something only the calling thread would do: a timeline value or event the app signals
    /// later, or a queue lock the thread already holds ([`QueueLock`](vk_baton::QueueLock) is
    /// not reentrant). Dropping the context calls it.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton::Result<()> {
    /// ctx.device_wait_idle()?; // e.g. before recreating a swapchain
    /// # Ok(()) }
    /// ```
    pub fn device_wait_idle(&self) -> Result<()> {
        let mut distinct: Vec<&Queue> = self.queues.iter().chain(&self.graphics_queues).collect();
        distinct.sort_by_key(|q| vk::Handle::as_raw(q.handle()));
        // Queues compare by `VkQueue`, and the context made one `Queue` (and clones) for each:
        // each submit lock is then taken once, in one order on every thread.
        distinct.dedup();
        let locks: Vec<_> = distinct.iter().map(|q| q.lock()).collect();
        // SAFETY: every queue of the device is externally synchronized: the context made all
        // of them, and their submit locks are held.
        let idle = unsafe { self.device.device_wait_idle() };
        drop(locks);
        idle.map_err(|e| vk_baton::Error::vk("vkDeviceWaitIdle", e))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // The fields (queues, allocator) then drop, and `owner` destroys the device once
        // nothing made through the context holds it.
        if let Err(e) = self.device_wait_idle() {
            log::error!("{e} while dropping the context");
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("graphics", &self.graphics)
            .field("async_compute", &self.async_compute)
            .field("transfer", &self.transfer)
            .finish_non_exhaustive()
    }
}
