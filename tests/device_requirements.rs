//! `Graph::new` and `Queue::new` on app-made devices: one that cannot run what vk-baton
//! records (an instance created with `apiVersion` 1.0 hides the Vulkan 1.3 entry points)
//! gets a clear `Error::Environment`, where it used to abort the process at its first graph
//! ("Unable to load cmd_pipeline_barrier2" in a function that cannot unwind). A 1.3 device
//! with the features passes the check and runs a graph, and queue arguments the physical
//! device does not have are refused. Each device is made here with ash, with validation on;
//! any validation message fails the test.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use vk_baton::ash::{self, vk};
use vk_baton::{Error, Graph, Queue};

/// Warnings and errors the validation layer reported, over every test of this binary.
static MESSAGES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    use vk::DebugUtilsMessageSeverityFlagsEXT as S;
    if severity.intersects(S::WARNING | S::ERROR) {
        MESSAGES.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the layer passes a valid callback data struct for the call's duration.
        let text = unsafe { (*data).message_as_c_str() }.unwrap_or(c"?");
        eprintln!("validation: {}", text.to_string_lossy());
    }
    vk::FALSE
}

/// An instance of `api_version` with validation and a messenger, its first physical device,
/// and a device with one queue of family 0 (with synchronization2 and timelineSemaphore when
/// `features`). Dropping it destroys the device, the messenger and the instance.
struct AppDevice {
    _entry: ash::Entry,
    instance: ash::Instance,
    utils: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    physical_device: vk::PhysicalDevice,
    device: ash::Device,
    family_flags: vk::QueueFlags,
}

impl AppDevice {
    fn new(api_version: u32, features: bool) -> AppDevice {
        // SAFETY: loading the system Vulkan loader.
        let entry = unsafe { ash::Entry::load() }.expect("a Vulkan loader");
        let app = vk::ApplicationInfo::default().api_version(api_version);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let exts = [ash::ext::debug_utils::NAME.as_ptr()];
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&exts);
        // SAFETY: valid create info whose names outlive the call.
        let instance = unsafe { entry.create_instance(&info, None) }
            .expect("an instance with the validation layer (vulkan-validationlayers)");
        let utils = ash::ext::debug_utils::Instance::new(&entry, &instance);
        use vk::DebugUtilsMessageSeverityFlagsEXT as S;
        use vk::DebugUtilsMessageTypeFlagsEXT as T;
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(S::WARNING | S::ERROR)
            .message_type(T::GENERAL | T::VALIDATION | T::PERFORMANCE)
            .pfn_user_callback(Some(on_message));
        // SAFETY: valid create info; the callback needs no user data.
        let messenger = unsafe { utils.create_debug_utils_messenger(&info, None) }.unwrap();
        // SAFETY: plain queries on the live instance.
        let physical_device = unsafe { instance.enumerate_physical_devices() }.unwrap()[0];
        // SAFETY: as above.
        let families =
            unsafe { instance.get_physical_device_queue_family_properties(physical_device) };
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&priorities)];
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
        if features {
            info = info.push_next(&mut f12).push_next(&mut f13);
        }
        // SAFETY: valid create info for a physical device of the instance.
        let device = unsafe { instance.create_device(physical_device, &info, None) }.unwrap();
        AppDevice {
            _entry: entry,
            instance,
            utils,
            messenger,
            physical_device,
            device,
            family_flags: families[0].queue_flags,
        }
    }

    /// `Graph::new` on this device.
    fn graph(&self) -> vk_baton::Result<Graph> {
        // SAFETY: the device was created from the physical device of the live instance and
        // outlives the graph; with `features`, it has both features. Without them, the check
        // must refuse it before anything uses it.
        unsafe { Graph::new(&self.instance, self.physical_device, &self.device, None) }
    }

    /// `Queue::new` on this device.
    fn queue(&self, family: u32, index: u32) -> vk_baton::Result<Queue> {
        // SAFETY: as for `graph`; the device has one queue of family 0, and the library checks
        // any other family and index against the physical device before using them.
        unsafe {
            Queue::new(
                &self.instance,
                self.physical_device,
                &self.device,
                family,
                index,
                "q",
            )
        }
    }
}

impl Drop for AppDevice {
    fn drop(&mut self) {
        // SAFETY: every graph and queue made from the device was dropped by the test first;
        // the messenger goes before its instance.
        unsafe {
            self.device.destroy_device(None);
            self.utils
                .destroy_debug_utils_messenger(self.messenger, None);
            self.instance.destroy_instance(None);
        }
    }
}

fn environment_error(result: vk_baton::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::Environment(why)) => why,
        other => panic!("expected Error::Environment, got {other:?}"),
    }
}

#[test]
fn an_api_1_0_device_gets_a_clear_error_from_graph_and_queue() {
    let _ = env_logger::builder().is_test(true).try_init();
    let app = AppDevice::new(vk::API_VERSION_1_0, false);
    let why = environment_error(app.graph());
    assert!(why.starts_with("graph: the device `"), "{why}");
    assert!(why.contains("has no vkCmdPipelineBarrier2"), "{why}");
    assert!(why.contains("apiVersion 1.3"), "{why}");
    // And what comes next, which no query can check.
    assert!(why.contains("`synchronization2`"), "{why}");
    assert!(why.contains("`timelineSemaphore`"), "{why}");
    let why = environment_error(app.queue(0, 0));
    assert!(why.starts_with("queue `q`: the device `"), "{why}");
    assert!(why.contains("has no vkCmdPipelineBarrier2"), "{why}");
    drop(app);
    assert_eq!(MESSAGES.load(Ordering::Relaxed), 0);
}

#[test]
fn a_1_3_device_with_the_features_passes_and_runs_a_graph() {
    let _ = env_logger::builder().is_test(true).try_init();
    let app = AppDevice::new(vk::API_VERSION_1_3, true);
    let q = app.queue(0, 0).unwrap();
    let graph = app.graph().unwrap();
    graph
        .record()
        .insert_fn("nothing", &q, |_| {}, |_| Ok(()))
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    drop((graph, q));
    drop(app);
    assert_eq!(MESSAGES.load(Ordering::Relaxed), 0);
}

#[test]
fn queue_arguments_the_physical_device_lacks_are_refused() {
    let _ = env_logger::builder().is_test(true).try_init();
    let app = AppDevice::new(vk::API_VERSION_1_3, true);
    // SAFETY: a plain query on a physical device of the live instance.
    let families = unsafe {
        app.instance
            .get_physical_device_queue_family_properties(app.physical_device)
    };
    let invalid = |r: vk_baton::Result<Queue>| match r {
        Err(Error::InvalidArgument(why)) => why,
        other => panic!("expected Error::InvalidArgument, got {other:?}"),
    };
    let why = invalid(app.queue(families.len() as u32, 0));
    assert!(why.contains(&format!("family {}", families.len())), "{why}");
    let why = invalid(app.queue(0, families[0].queue_count));
    assert!(why.contains("but family 0 has"), "{why}");
    // The queue's capabilities are the family's, read from the physical device; a graphics
    // or compute family always supports transfers, reported or not.
    let mut expected = app.family_flags;
    if expected.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE) {
        expected |= vk::QueueFlags::TRANSFER;
    }
    assert_eq!(app.queue(0, 0).unwrap().caps(), expected);
    drop(app);
    assert_eq!(MESSAGES.load(Ordering::Relaxed), 0);
}
