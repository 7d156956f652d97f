//! [`Context`]: a bootstrap for examples, tests and newcomers. Nothing else in the crate needs
//! it: apps with their own instance, device, queues and allocator use [`crate::Queue::new`],
//! [`crate::StImage::new`] and [`crate::Graph::new`] directly.
//!
//! ```no_run
//! # fn main() -> vk_baton::Result<()> {
//! let ctx = vk_baton::Context::new()?; // validation when VK_BATON_VALIDATION=1
//! println!("graphics: {:?}, async compute: {:?}", ctx.graphics, ctx.async_compute);
//! assert_eq!(ctx.validation_messages(), 0);
//! # Ok(()) }
//! ```

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::messages::{on_message, Messages};
pub use crate::messages::{MessageLog, ValidationMessages};
use crate::queue::Queue;
use crate::resource::{BufferDesc, ImageDesc, SharedAllocator, StBuffer, StImage};
use ash::vk;
use parking_lot::Mutex;
use std::ffi::{c_void, CStr, CString};
use std::fmt;
use std::sync::{Arc, Weak};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to build a [`Context`].
///
/// ```
/// let opts = vk_baton::ContextOptions { validation: true, ..Default::default() };
/// ```
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// Enable `VK_LAYER_KHRONOS_validation` with synchronization validation (an error if the
    /// layer is missing). Default: `VK_BATON_VALIDATION=1` in the environment.
    pub validation: bool,
    /// The application name given to the driver.
    pub app_name: String,
    /// Enable `VK_KHR_swapchain` on the device.
    pub swapchain: bool,
    /// Extra instance extensions (e.g. surface extensions from `ash-window`).
    pub instance_extensions: Vec<CString>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            validation: std::env::var("VK_BATON_VALIDATION").is_ok_and(|v| v == "1"),
            app_name: "vk-baton".into(),
            swapchain: false,
            instance_extensions: Vec::new(),
        }
    }
}

/// Destroys the device, messenger and instance after every other field of [`Context`] has
/// dropped (it is the last field).
struct Owner {
    entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    messenger: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    _messages: Arc<Messages>,
    allocator: Weak<Mutex<gpu_allocator::vulkan::Allocator>>,
    queues: Vec<crate::queue::WeakQueue>,
    /// Graphs made by [`Context::graph`]: their pools and fences belong to the device.
    graphs: Mutex<Vec<Weak<crate::graph::GraphShared>>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        let graph_alive = self.graphs.get_mut().iter().any(|g| g.strong_count() > 0);
        if self.allocator.strong_count() > 0
            || self.queues.iter().any(|q| q.is_alive())
            || graph_alive
        {
            log::error!("Context dropped while resources, queues or graphs made from it are still alive: leaking the device instead of destroying it under them");
            // What is left keeps calling into the loader, the layers and the driver, and the
            // messenger leaks with the device and may still report (when a graph destroys its
            // fences, say): keep the loader loaded and the messenger's user data valid for good.
            std::mem::forget(self.entry.clone());
            std::mem::forget(self._messages.clone());
            return;
        }
        // SAFETY: every object made from the device is gone (checked above for the
        // allocator's resources and the queues); the messenger's user data (`_messages`)
        // outlives the messenger, which is destroyed before the instance.
        unsafe {
            self.device.destroy_device(None);
            if let Some((loader, m)) = self.messenger.take() {
                loader.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// An instance, a device with every queue family, three named queues and an allocator.
///
/// `graphics`, `async_compute` and `transfer` each pick a dedicated family where one exists
/// (compute without graphics; transfer without graphics or compute) and otherwise are the
/// very same [`Queue`] clone as `graphics` (one `VkQueue`, one timeline).
///
/// Drop every resource, graph and fence made from a context before the context.
///
/// ```no_run
/// # fn main() -> vk_baton::Result<()> {
/// use vk_baton::{ash::vk, Context, ImageDesc};
/// let ctx = Context::new_for_tests()?; // validation + synchronization validation on
/// let img = ctx.image(ImageDesc::storage_2d(64, 64, vk::Format::R8G8B8A8_UNORM), "img")?;
/// let graph = ctx.graph()?;
/// # Ok(()) }
/// ```
pub struct Context {
    /// The graphics queue.
    pub graphics: Queue,
    /// A compute queue of a dedicated family, or `graphics`.
    pub async_compute: Queue,
    /// A transfer queue of a dedicated family, or `graphics`.
    pub transfer: Queue,
    /// One queue (index 0) of every family, by family index.
    pub queues: Vec<Queue>,
    /// The gpu-allocator allocator.
    pub allocator: SharedAllocator,
    /// `VK_EXT_debug_utils` device functions, when the instance has the extension.
    pub debug: Option<DebugUtils>,
    /// The device.
    pub device: ash::Device,
    /// The physical device.
    pub physical_device: vk::PhysicalDevice,
    /// The instance.
    pub instance: ash::Instance,
    /// The loader entry points.
    pub entry: ash::Entry,
    /// Whether validation is on.
    pub validation: bool,
    messages: Arc<Messages>,
    owner: Owner,
}

impl Context {
    /// A context with [`ContextOptions::default`]: validation when `VK_BATON_VALIDATION=1`.
    ///
    /// ```no_run
    /// let ctx = vk_baton::Context::new().expect("a Vulkan 1.3 device");
    /// ```
    pub fn new() -> Result<Context> {
        Self::with_options(ContextOptions::default())
    }

    /// A context with validation and synchronization validation always on.
    ///
    /// ```no_run
    /// let ctx = vk_baton::Context::new_for_tests().unwrap();
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
    /// let ctx = vk_baton::Context::with_options(vk_baton::ContextOptions { swapchain: true, ..Default::default() }).unwrap();
    /// ```
    pub fn with_options(opts: ContextOptions) -> Result<Context> {
        // SAFETY: loading the system Vulkan loader; its initialization has no preconditions.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| Error::Environment(format!("cannot load the Vulkan loader: {e}")))?;
        let messages = Arc::new(Messages::default());

        // SAFETY: plain queries.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(|e| Error::vk("vkEnumerateInstanceLayerProperties", e))?;
        let has_layer = layers
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER));
        if opts.validation && !has_layer {
            return Err(Error::Environment("validation was requested but VK_LAYER_KHRONOS_validation is not installed (Debian/Ubuntu: vulkan-validationlayers)".into()));
        }
        // SAFETY: plain query.
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(|e| Error::vk("vkEnumerateInstanceExtensionProperties", e))?;
        let has_ext = |name: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
        let debug_utils = has_ext(ash::ext::debug_utils::NAME);
        let mut ext_names: Vec<*const std::ffi::c_char> = opts
            .instance_extensions
            .iter()
            .map(|e| e.as_ptr())
            .collect();
        if debug_utils {
            ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let mut layer_names = Vec::new();
        if opts.validation {
            layer_names.push(VALIDATION_LAYER.as_ptr());
            // SAFETY: plain query.
            let layer_exts =
                unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                    .unwrap_or_default();
            if layer_exts
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::validation_features::NAME))
            {
                ext_names.push(ash::ext::validation_features::NAME.as_ptr());
            }
        }
        let app_name = CString::new(opts.app_name.replace('\0', "?")).unwrap_or_default();
        let app = vk::ApplicationInfo::default()
            .application_name(&app_name)
            .engine_name(c"vk-baton")
            .api_version(vk::API_VERSION_1_3);
        let enabled = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&ext_names);
        if opts.validation {
            info = info.push_next(&mut features);
        }
        // SAFETY: valid create info; every pointed-to name outlives the call.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|e| Error::vk("vkCreateInstance", e))?;

        // From here on, failures must destroy what was created.
        let messenger = if debug_utils {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            use vk::DebugUtilsMessageSeverityFlagsEXT as S;
            use vk::DebugUtilsMessageTypeFlagsEXT as T;
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(S::ERROR | S::WARNING | S::INFO)
                .message_type(T::GENERAL | T::VALIDATION | T::PERFORMANCE)
                .pfn_user_callback(Some(on_message))
                .user_data(Arc::as_ptr(&messages) as *mut c_void);
            // SAFETY: valid create info; the user data outlives the messenger (see `Owner`).
            match unsafe { loader.create_debug_utils_messenger(&info, None) } {
                Ok(m) => Some((loader, m)),
                Err(e) => {
                    log::warn!("vkCreateDebugUtilsMessengerEXT failed: {e}");
                    None
                }
            }
        } else {
            None
        };
        let destroy_instance =
            |messenger: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>| {
                // SAFETY: nothing else was created from the instance.
                unsafe {
                    if let Some((l, m)) = messenger {
                        l.destroy_debug_utils_messenger(m, None);
                    }
                    instance.destroy_instance(None);
                }
            };

        let picked = match pick_physical_device(&instance) {
            Ok(p) => p,
            Err(e) => {
                destroy_instance(messenger);
                return Err(e);
            }
        };
        let (physical_device, families) = picked;
        let priorities = [1.0f32];
        let queue_infos: Vec<vk::DeviceQueueCreateInfo<'_>> = (0..families.len() as u32)
            .map(|f| {
                vk::DeviceQueueCreateInfo::default()
                    .queue_family_index(f)
                    .queue_priorities(&priorities)
            })
            .collect();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
        let mut dev_exts: Vec<*const std::ffi::c_char> = Vec::new();
        if opts.swapchain {
            dev_exts.push(ash::khr::swapchain::NAME.as_ptr());
        }
        let dinfo = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queue_infos)
            .enabled_extension_names(&dev_exts)
            .push_next(&mut f12)
            .push_next(&mut f13);
        // SAFETY: valid create info for a physical device of this instance.
        let device = match unsafe { instance.create_device(physical_device, &dinfo, None) } {
            Ok(d) => d,
            Err(e) => {
                destroy_instance(messenger);
                return Err(Error::vk("vkCreateDevice", e));
            }
        };
        let debug = debug_utils.then(|| DebugUtils::new(&instance, &device));

        let caps = |f: usize| {
            let mut c = families[f].queue_flags;
            if c.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE) {
                // Graphics and compute families always support transfers.
                c |= vk::QueueFlags::TRANSFER;
            }
            c
        };
        let gfx = (0..families.len())
            .find(|&f| families[f].queue_flags.contains(vk::QueueFlags::GRAPHICS));
        let compute = (0..families.len()).find(|&f| {
            let q = families[f].queue_flags;
            q.contains(vk::QueueFlags::COMPUTE) && !q.contains(vk::QueueFlags::GRAPHICS)
        });
        let transfer = (0..families.len()).find(|&f| {
            let q = families[f].queue_flags;
            q.contains(vk::QueueFlags::TRANSFER)
                && !q.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
        });
        let mut queues = Vec::with_capacity(families.len());
        let mut fail = None;
        for f in 0..families.len() {
            let name = if Some(f) == gfx {
                "graphics".to_owned()
            } else if Some(f) == compute {
                "async_compute".to_owned()
            } else if Some(f) == transfer {
                "transfer".to_owned()
            } else {
                format!("family {f}")
            };
            // SAFETY: the device was created just above with one queue of every family,
            // `caps(f)` is the family's own, and both features are enabled; the context's
            // own submissions all go through the queue's lock.
            match unsafe { Queue::new(&device, f as u32, 0, caps(f), &name) } {
                Ok(q) => {
                    if let Some(d) = &debug {
                        // SAFETY: the queue and its semaphore are live objects of `device`,
                        // which `d` was loaded for.
                        unsafe {
                            d.set_name(q.handle(), &name);
                            d.set_name(q.timeline(), &format!("{name} timeline"));
                        }
                    }
                    queues.push(q);
                }
                Err(e) => {
                    fail = Some(e);
                    break;
                }
            }
        }
        let allocator = if fail.is_none() {
            let desc = gpu_allocator::vulkan::AllocatorCreateDesc {
                instance: instance.clone(),
                device: device.clone(),
                physical_device,
                debug_settings: Default::default(),
                buffer_device_address: false,
                allocation_sizes: Default::default(),
            };
            match gpu_allocator::vulkan::Allocator::new(&desc) {
                // SAFETY: the allocator was just created for `device`.
                Ok(a) => Some(unsafe { SharedAllocator::new(&device, a) }),
                Err(e) => {
                    fail = Some(e.into());
                    None
                }
            }
        } else {
            None
        };
        let (Some(allocator), None, Some(g)) = (allocator, &fail, gfx) else {
            drop(queues);
            // SAFETY: the queues (and their semaphores) are gone; nothing else was created.
            unsafe { device.destroy_device(None) };
            destroy_instance(messenger);
            return Err(fail.unwrap_or_else(|| {
                Error::Environment("the device has no graphics queue family".into())
            }));
        };
        let graphics = queues[g].clone();
        let async_compute = compute.map_or_else(|| graphics.clone(), |f| queues[f].clone());
        let transfer = transfer.map_or_else(|| graphics.clone(), |f| queues[f].clone());
        log::info!(
            "vk-baton context: {} families; graphics = family {}, async_compute = family {}, transfer = family {}; validation {}",
            families.len(),
            graphics.family(),
            async_compute.family(),
            transfer.family(),
            if opts.validation { "on (with synchronization validation)" } else { "off" }
        );
        let owner = Owner {
            entry: entry.clone(),
            instance: instance.clone(),
            device: device.clone(),
            messenger,
            _messages: messages.clone(),
            allocator: allocator.downgrade(),
            queues: queues.iter().map(|q| q.downgrade()).collect(),
            graphs: Mutex::new(Vec::new()),
        };
        Ok(Context {
            graphics,
            async_compute,
            transfer,
            queues,
            allocator,
            debug,
            device,
            physical_device,
            instance,
            entry,
            validation: opts.validation,
            messages,
            owner,
        })
    }

    /// The validation layer's warnings and errors seen so far. The driver's own messages (an
    /// out-of-memory report, say) are not counted here: see [`Context::driver_messages`].
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) {
    /// let m = ctx.validation_messages();
    /// assert!(m == 0, "{m}");
    /// # }
    /// ```
    pub fn validation_messages(&self) -> ValidationMessages {
        self.messages.validation.snapshot()
    }

    /// The driver's and the loader's warnings and errors seen so far: messages that do not
    /// come from the validation layer.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) {
    /// println!("{}", ctx.driver_messages());
    /// # }
    /// ```
    pub fn driver_messages(&self) -> ValidationMessages {
        self.messages.driver.snapshot()
    }

    /// A handle on this context's messages that outlives it: what destroying the device
    /// reports arrives after the context is gone.
    ///
    /// ```no_run
    /// # fn f(ctx: vk_baton::Context) {
    /// let log = ctx.message_log();
    /// drop(ctx);
    /// assert!(log.validation() == 0);
    /// # }
    /// ```
    pub fn message_log(&self) -> MessageLog {
        MessageLog(self.messages.clone())
    }

    /// A new [`Graph`] on this device, with debug labels when available.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) -> vk_baton::Result<()> {
    /// let graph = ctx.graph()?;
    /// # Ok(()) }
    /// ```
    pub fn graph(&self) -> Result<Graph> {
        // SAFETY: the context made the device with both features and the debug functions
        // for it, and outlives the graph (its `Owner` checks on drop).
        let graph = unsafe { Graph::new(&self.device, self.debug.clone())? };
        let mut graphs = self.owner.graphs.lock();
        graphs.retain(|g| g.strong_count() > 0);
        graphs.push(graph.downgrade());
        Ok(graph)
    }

    /// Creates a device-local image, debug-named.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, ImageDesc};
    /// let img = ctx.image(ImageDesc::storage_2d(16, 16, vk::Format::R8G8B8A8_UNORM), "img")?;
    /// # Ok(()) }
    /// ```
    pub fn image(&self, desc: ImageDesc, name: &str) -> Result<Arc<StImage>> {
        Ok(Arc::new(
            StImage::new(&self.device, &self.allocator, desc, name)?.named(self.debug.as_ref()),
        ))
    }

    /// Creates a buffer (device-local or mapped, per `desc.location`), debug-named.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc};
    /// let buf = ctx.buffer(BufferDesc::upload(64, vk::BufferUsageFlags::TRANSFER_SRC), "staging")?;
    /// # Ok(()) }
    /// ```
    pub fn buffer(&self, desc: BufferDesc, name: &str) -> Result<Arc<StBuffer>> {
        Ok(Arc::new(
            StBuffer::new(&self.device, &self.allocator, desc, name)?.named(self.debug.as_ref()),
        ))
    }

    /// The device's name, as the driver reports it.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) {
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

    /// Whether the device has more than one queue family that the three named queues use.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) {
    /// if !ctx.has_several_families() { println!("single queue"); }
    /// # }
    /// ```
    pub fn has_several_families(&self) -> bool {
        self.graphics != self.async_compute || self.graphics != self.transfer
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // vkDeviceWaitIdle needs every queue externally synchronized: hold all submit locks.
        let mut distinct: Vec<&Queue> = Vec::new();
        for q in &self.queues {
            if !distinct.iter().any(|d| d.same_object(q)) {
                distinct.push(q);
            }
        }
        distinct.sort_by_key(|q| vk::Handle::as_raw(q.handle()));
        let locks: Vec<_> = distinct.iter().map(|q| q.lock()).collect();
        // SAFETY: every queue's submit lock is held; the fields (queues, allocator) then
        // drop, and `owner` destroys the device last.
        if let Err(e) = unsafe { self.device.device_wait_idle() } {
            log::error!("vkDeviceWaitIdle failed while dropping the context: {e}");
        }
        drop(locks);
        let _ = &self.owner;
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

/// Picks a Vulkan 1.3 device: discrete first, then integrated, then any.
fn pick_physical_device(
    instance: &ash::Instance,
) -> Result<(vk::PhysicalDevice, Vec<vk::QueueFamilyProperties>)> {
    // SAFETY: plain query on a live instance.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| Error::vk("vkEnumeratePhysicalDevices", e))?;
    let rank = |t: vk::PhysicalDeviceType| match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    };
    let mut best: Option<(u32, vk::PhysicalDevice)> = None;
    for pd in devices {
        // SAFETY: plain query.
        let props = unsafe { instance.get_physical_device_properties(pd) };
        if vk::api_version_major(props.api_version) < 1
            || (vk::api_version_major(props.api_version) == 1
                && vk::api_version_minor(props.api_version) < 3)
        {
            continue;
        }
        let r = rank(props.device_type);
        if best.is_none_or(|(b, _)| r < b) {
            best = Some((r, pd));
        }
    }
    let (_, pd) = best.ok_or_else(|| Error::Environment("no Vulkan 1.3 device found (without a GPU, install Mesa's lavapipe: mesa-vulkan-drivers)".into()))?;
    // SAFETY: plain query.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    Ok((pd, families))
}
