//! The app's own Vulkan, with raw ash and no vk-baton: instance (with debug utils and, under
//! `VK_BATON_VALIDATION=1`, the validation layer with synchronization validation, shader
//! accesses included), device, queue, allocator and swapchain. This is what an existing
//! renderer already has; `byo.rs` adopts vk-baton on top of it.

use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use vk_baton::ash::{self, vk};
use vk_baton::gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

/// Warnings and errors the validation layer reported.
pub static MESSAGES: AtomicUsize = AtomicUsize::new(0);

/// Counts warnings and errors, and prints them.
unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    use vk::DebugUtilsMessageSeverityFlagsEXT as S;
    if severity.intersects(S::ERROR | S::WARNING) {
        MESSAGES.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the layer passes valid callback data whose message is a NUL-terminated
        // string (or null), alive during the call.
        let data = unsafe { data.as_ref() };
        // SAFETY: as above, for the message and its ID's name.
        let text = |p: *const std::ffi::c_char| match p.is_null() {
            true => String::new(),
            false => unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned(),
        };
        let (id, message) = data.map_or_else(Default::default, |d| {
            (text(d.p_message_id_name), text(d.p_message))
        });
        println!("  - [{id}] {message}");
    }
    vk::FALSE
}

/// The instance and what hangs off it.
pub struct Instance {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    pub validation: bool,
}

/// A Vulkan 1.3 instance with the surface extensions `surface_exts`, debug utils where the
/// loader has it, and the validation layer (synchronization validation on) when `validation`.
pub fn instance(surface_exts: &[*const i8], validation: bool) -> Result<Instance, String> {
    // SAFETY: loads the system's Vulkan loader.
    let entry = unsafe { ash::Entry::load() }.map_err(|e| format!("no Vulkan loader: {e}"))?;
    // SAFETY: plain queries.
    let (exts, layers) = unsafe {
        (
            entry.enumerate_instance_extension_properties(None),
            entry.enumerate_instance_layer_properties(),
        )
    };
    let has_debug = exts
        .unwrap_or_default()
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));
    let layer = c"VK_LAYER_KHRONOS_validation";
    if validation
        && !layers
            .unwrap_or_default()
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(layer))
    {
        return Err("VK_BATON_VALIDATION=1 but the validation layer is missing".into());
    }
    let mut names: Vec<*const i8> = surface_exts.to_vec();
    if has_debug {
        names.push(ash::ext::debug_utils::NAME.as_ptr());
    }
    let layer_names: Vec<*const i8> = if validation {
        vec![layer.as_ptr()]
    } else {
        vec![]
    };
    // Synchronization validation checks the accesses shaders make through descriptors (a
    // storage buffer a compute shader reads, say) only with the layer's shader-access
    // heuristic on: set through VK_EXT_layer_settings, as vk-baton's own `Context` does, where
    // the layer has that extension. It reads each shader's accesses from its SPIR-V, so
    // buffers and images a shader only reads are declared `readonly` in it.
    let layer_settings = validation && {
        // SAFETY: plain query.
        unsafe { entry.enumerate_instance_extension_properties(Some(layer)) }
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::layer_settings::NAME))
    };
    if layer_settings {
        names.push(ash::ext::layer_settings::NAME.as_ptr());
    }
    let on: vk::Bool32 = vk::TRUE;
    // One VkBool32: `value_count` counts values, not bytes, hence the fields set by hand.
    let settings = [vk::LayerSettingEXT {
        p_layer_name: layer.as_ptr(),
        p_setting_name: c"syncval_shader_accesses_heuristic".as_ptr(),
        ty: vk::LayerSettingTypeEXT::BOOL32,
        value_count: 1,
        p_values: (&on as *const vk::Bool32).cast(),
        ..Default::default()
    }];
    let mut settings_info = vk::LayerSettingsCreateInfoEXT::default().settings(&settings);
    let app_name = CString::new("vk-baton byo").expect("no NUL");
    let app = vk::ApplicationInfo::default()
        .application_name(&app_name)
        .api_version(vk::API_VERSION_1_3);
    let sync = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&sync);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&names)
        .enabled_layer_names(&layer_names);
    if validation {
        info = info.push_next(&mut features);
    }
    if layer_settings {
        info = info.push_next(&mut settings_info);
    }
    // SAFETY: a valid create info whose names are all available.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
    let debug = has_debug.then(|| {
        let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
        use vk::DebugUtilsMessageSeverityFlagsEXT as S;
        use vk::DebugUtilsMessageTypeFlagsEXT as T;
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(S::ERROR | S::WARNING)
            .message_type(T::GENERAL | T::VALIDATION | T::PERFORMANCE)
            .pfn_user_callback(Some(on_message));
        // SAFETY: a valid create info; the callback needs no user data.
        let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
            .expect("vkCreateDebugUtilsMessengerEXT");
        (loader, messenger)
    });
    Ok(Instance {
        entry,
        instance,
        debug,
        validation,
    })
}

/// The app's device: one queue of a family that does graphics and presents to `surface`.
pub struct Device {
    pub physical_device: vk::PhysicalDevice,
    pub device: ash::Device,
    pub family: u32,
}

/// The first Vulkan 1.3 device with a graphics family that can present to `surface`, created
/// with what vk-baton needs (`synchronization2`, `timelineSemaphore`) and `VK_KHR_swapchain`.
pub fn device(inst: &Instance, surface: vk::SurfaceKHR) -> Result<Device, String> {
    let surface_fn = ash::khr::surface::Instance::new(&inst.entry, &inst.instance);
    // SAFETY: plain queries on a live instance.
    let pds = unsafe { inst.instance.enumerate_physical_devices() }.map_err(|e| e.to_string())?;
    for pd in pds {
        // SAFETY: as above.
        let props = unsafe { inst.instance.get_physical_device_properties(pd) };
        if props.api_version < vk::API_VERSION_1_3 {
            continue;
        }
        // SAFETY: as above.
        let families = unsafe {
            inst.instance
                .get_physical_device_queue_family_properties(pd)
        };
        let found = families.iter().enumerate().find(|&(i, f)| {
            // SAFETY: as above.
            let present =
                unsafe { surface_fn.get_physical_device_surface_support(pd, i as u32, surface) };
            f.queue_flags.contains(vk::QueueFlags::GRAPHICS) && present == Ok(true)
        });
        let Some((family, _)) = found else {
            continue;
        };
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family as u32)
            .queue_priorities(&priorities)];
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
        let exts = [ash::khr::swapchain::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&exts)
            .push_next(&mut v12)
            .push_next(&mut v13);
        // SAFETY: a valid create info for this physical device.
        let device = unsafe { inst.instance.create_device(pd, &info, None) }
            .map_err(|e| format!("vkCreateDevice: {e}"))?;
        return Ok(Device {
            physical_device: pd,
            device,
            family: family as u32,
        });
    }
    Err("no Vulkan 1.3 device with a graphics queue that presents to the window".into())
}

/// The app's gpu-allocator allocator.
pub fn allocator(inst: &Instance, dev: &Device) -> Result<Allocator, String> {
    Allocator::new(&AllocatorCreateDesc {
        instance: inst.instance.clone(),
        device: dev.device.clone(),
        physical_device: dev.physical_device,
        debug_settings: Default::default(),
        buffer_device_address: false,
        allocation_sizes: Default::default(),
    })
    .map_err(|e| format!("gpu-allocator: {e}"))
}

/// The app's swapchain: FIFO, a UNORM format, usable as a blit destination and a colour
/// attachment, and as a copy source where the surface allows it (the `--direct` screenshot).
pub struct Swapchain {
    pub handle: vk::SwapchainKHR,
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub images: Vec<vk::Image>,
    pub usage: vk::ImageUsageFlags,
}

/// Creates a swapchain of `surface` (replacing `old`, which the caller then destroys), or
/// `None` for a zero extent (a minimized window).
pub fn swapchain(
    inst: &Instance,
    dev: &Device,
    swapchain_fn: &ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    want: vk::Extent2D,
    old: vk::SwapchainKHR,
) -> Result<Option<Swapchain>, String> {
    let surface_fn = ash::khr::surface::Instance::new(&inst.entry, &inst.instance);
    let pd = dev.physical_device;
    // SAFETY: plain queries on live objects.
    let (caps, formats) = unsafe {
        (
            surface_fn.get_physical_device_surface_capabilities(pd, surface),
            surface_fn.get_physical_device_surface_formats(pd, surface),
        )
    };
    let caps = caps.map_err(|e| e.to_string())?;
    let format = formats
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|f| {
            matches!(
                f.format,
                vk::Format::B8G8R8A8_UNORM | vk::Format::R8G8B8A8_UNORM
            )
        })
        .ok_or("the surface has no 8-bit UNORM format")?;
    let extent = if caps.current_extent.width != u32::MAX {
        caps.current_extent
    } else {
        vk::Extent2D {
            width: want
                .width
                .clamp(caps.min_image_extent.width, caps.max_image_extent.width),
            height: want
                .height
                .clamp(caps.min_image_extent.height, caps.max_image_extent.height),
        }
    };
    if extent.width == 0 || extent.height == 0 {
        return Ok(None);
    }
    let mut count = caps.min_image_count + 1;
    if caps.max_image_count != 0 {
        count = count.min(caps.max_image_count);
    }
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT
        | vk::ImageUsageFlags::TRANSFER_DST
        | (caps.supported_usage_flags & vk::ImageUsageFlags::TRANSFER_SRC);
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
        .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
        .present_mode(vk::PresentModeKHR::FIFO)
        .clipped(true)
        .old_swapchain(old);
    // SAFETY: a valid create info for a surface this device presents to.
    let handle = unsafe { swapchain_fn.create_swapchain(&info, None) }
        .map_err(|e| format!("vkCreateSwapchainKHR: {e}"))?;
    // SAFETY: the swapchain just created.
    let images = unsafe { swapchain_fn.get_swapchain_images(handle) }.map_err(|e| e.to_string())?;
    Ok(Some(Swapchain {
        handle,
        format: format.format,
        extent,
        images,
        usage,
    }))
}
