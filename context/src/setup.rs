//! The steps of [`Context::with_options`](super::Context::with_options), in order: the instance with its debug
//! messenger, the physical device and the queue families, the device, its queues, and the
//! allocator. Each step returns an owner of what it made, so a later step's failure destroys
//! everything made before it, in the right order, by dropping.

use super::messages::{on_message, Messages};
use super::owner::{DeviceOwner, InstanceOwner, Messenger};
use super::requirements::LayerVersion;
use super::ContextOptions;
use ash::vk;
use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;
use vk_baton::gpu_allocator;
use vk_baton::{DebugUtils, Error, Queue, Result, SharedAllocator};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Loads Vulkan and creates the instance (with the validation layer and synchronization
/// validation if asked) and, where `VK_EXT_debug_utils` exists, a messenger that counts
/// warnings and errors into `messages`.
pub(super) fn create_instance(
    opts: &ContextOptions,
    messages: Arc<Messages>,
) -> Result<InstanceOwner> {
    // SAFETY: loading the system Vulkan loader; its initialization has no preconditions.
    let entry = unsafe { ash::Entry::load() }
        .map_err(|e| Error::Environment(format!("cannot load the Vulkan loader: {e}")))?;
    // SAFETY: plain queries.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }
        .map_err(|e| Error::vk("vkEnumerateInstanceLayerProperties", e))?;
    let layer = layers
        .iter()
        .find(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER));
    let has_layer = layer.is_some();
    if let Some(l) = layer {
        // What tests decide from (requirements, allowed messages): the version it reports.
        let _ = messages
            .layer
            .set(LayerVersion::from_spec_version(l.spec_version));
    }
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
    // VK_KHR_swapchain on the device requires VK_KHR_surface on the instance.
    let surface = ash::khr::surface::NAME;
    if opts.swapchain
        && !opts
            .instance_extensions
            .iter()
            .any(|e| e.as_c_str() == surface)
    {
        if !has_ext(surface) {
            return Err(Error::Environment(
                "a swapchain was requested but the instance has no VK_KHR_surface".into(),
            ));
        }
        ext_names.push(surface.as_ptr());
    }
    // Present fences (VK_EXT_swapchain_maintenance1) need these two on the instance.
    let surface_maintenance1 = opts.swapchain
        && has_ext(ash::ext::surface_maintenance1::NAME)
        && has_ext(ash::khr::get_surface_capabilities2::NAME);
    if surface_maintenance1 {
        for name in [
            ash::ext::surface_maintenance1::NAME,
            ash::khr::get_surface_capabilities2::NAME,
        ] {
            if !opts
                .instance_extensions
                .iter()
                .any(|e| e.as_c_str() == name)
            {
                ext_names.push(name.as_ptr());
            }
        }
    }
    let mut layer_names = Vec::new();
    let mut layer_settings = false;
    if opts.validation {
        layer_names.push(VALIDATION_LAYER.as_ptr());
        // SAFETY: plain query.
        let layer_exts =
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .unwrap_or_default();
        let layer_has = |name: &CStr| {
            layer_exts
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        if layer_has(ash::ext::validation_features::NAME) {
            ext_names.push(ash::ext::validation_features::NAME.as_ptr());
        }
        if layer_has(ash::ext::layer_settings::NAME) {
            ext_names.push(ash::ext::layer_settings::NAME.as_ptr());
            layer_settings = true;
        } else {
            log::warn!("the validation layer has no VK_EXT_layer_settings: synchronization validation will not check accesses through descriptors (syncval_shader_accesses_heuristic)");
        }
    }
    let app_name = CString::new(opts.app_name.replace('\0', "?")).unwrap_or_default();
    let app = vk::ApplicationInfo::default()
        .application_name(&app_name)
        .engine_name(c"vk-baton")
        .api_version(vk::API_VERSION_1_3);
    let enabled = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled);
    let on: vk::Bool32 = vk::TRUE;
    let settings = [shader_accesses_heuristic(&on)];
    let mut settings_info = vk::LayerSettingsCreateInfoEXT::default().settings(&settings);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layer_names)
        .enabled_extension_names(&ext_names);
    if opts.validation {
        info = info.push_next(&mut features);
    }
    if layer_settings {
        info = info.push_next(&mut settings_info);
    }
    // SAFETY: valid create info (VK_EXT_layer_settings is enabled where its struct is
    // chained); every pointed-to name and setting value outlives the call.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| Error::vk("vkCreateInstance", e))?;
    let messenger = if debug_utils {
        create_messenger(&entry, &instance, &messages)
    } else {
        None
    };
    Ok(InstanceOwner {
        entry,
        instance,
        messenger,
        debug_utils,
        messages,
        surface_maintenance1,
    })
}

/// The validation layer's setting that makes synchronization validation check the accesses
/// shaders make through descriptors (storage and uniform buffers, storage images, sampled
/// images), which it skips by default: `syncval_shader_accesses_heuristic` (a boolean; the
/// layer's manifest, `VkLayer_khronos_validation.json`, lists it), set to `*on`. The layer
/// takes each shader's accesses from its SPIR-V, so a buffer or image a shader only reads is
/// declared `readonly` (or it counts as written too), and one it only writes `writeonly` (or it
/// counts as read too). The layer's environment variable
/// `VK_KHRONOS_VALIDATION_SYNCVAL_SHADER_ACCESSES_HEURISTIC`, where set, overrides this.
///
/// The value is one `VkBool32`: `value_count` counts values, not bytes, so the fields are set
/// here rather than through ash's byte-slice `values` (which would make it 4).
fn shader_accesses_heuristic(on: &vk::Bool32) -> vk::LayerSettingEXT<'_> {
    vk::LayerSettingEXT {
        p_layer_name: VALIDATION_LAYER.as_ptr(),
        p_setting_name: c"syncval_shader_accesses_heuristic".as_ptr(),
        ty: vk::LayerSettingTypeEXT::BOOL32,
        value_count: 1,
        p_values: (on as *const vk::Bool32).cast(),
        ..Default::default()
    }
}

/// A messenger that counts warnings and errors into `messages` and logs every message. A
/// failure only costs the counting: it is logged, not returned.
fn create_messenger(
    entry: &ash::Entry,
    instance: &ash::Instance,
    messages: &Arc<Messages>,
) -> Option<Messenger> {
    let loader = ash::ext::debug_utils::Instance::new(entry, instance);
    use vk::DebugUtilsMessageSeverityFlagsEXT as S;
    use vk::DebugUtilsMessageTypeFlagsEXT as T;
    let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(S::ERROR | S::WARNING | S::INFO)
        .message_type(T::GENERAL | T::VALIDATION | T::PERFORMANCE)
        .pfn_user_callback(Some(on_message))
        .user_data(Arc::as_ptr(messages) as *mut c_void);
    // SAFETY: valid create info; the user data outlives the messenger (`InstanceOwner` holds
    // both and destroys the messenger first).
    match unsafe { loader.create_debug_utils_messenger(&info, None) } {
        Ok(m) => Some((loader, m)),
        Err(e) => {
            log::warn!("vkCreateDebugUtilsMessengerEXT failed: {e}");
            None
        }
    }
}

/// Picks a Vulkan 1.3 device: discrete first, then integrated, then any.
pub(super) fn pick_physical_device(
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

/// Which family each named queue uses, and how many queues to create in each family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FamilyChoice {
    pub(super) graphics: usize,
    /// A compute family without graphics, if there is one.
    pub(super) async_compute: Option<usize>,
    /// A transfer family without graphics or compute, if there is one.
    pub(super) transfer: Option<usize>,
    /// Per family, the queues to create: 1, or `graphics_queues` for the graphics family.
    pub(super) counts: Vec<u32>,
}

impl FamilyChoice {
    /// Chooses the families; fails without a graphics family, or when it has fewer queues
    /// than `graphics_queues` asks for.
    pub(super) fn new(
        families: &[vk::QueueFamilyProperties],
        graphics_queues: u32,
    ) -> Result<FamilyChoice> {
        let has = |f: &vk::QueueFamilyProperties, yes: vk::QueueFlags, no: vk::QueueFlags| {
            f.queue_flags.contains(yes) && !f.queue_flags.intersects(no)
        };
        use vk::QueueFlags as Q;
        let graphics = families
            .iter()
            .position(|f| has(f, Q::GRAPHICS, Q::empty()))
            .ok_or_else(|| Error::Environment("the device has no graphics queue family".into()))?;
        let available = families[graphics].queue_count;
        if graphics_queues == 0 || graphics_queues > available {
            return Err(Error::Environment(format!(
                "ContextOptions::graphics_queues is {graphics_queues}, but the graphics family ({graphics}) has {available} queue(s): ask for 1 to {available}"
            )));
        }
        let mut counts = vec![1; families.len()];
        counts[graphics] = graphics_queues;
        Ok(FamilyChoice {
            graphics,
            async_compute: families
                .iter()
                .position(|f| has(f, Q::COMPUTE, Q::GRAPHICS)),
            transfer: families
                .iter()
                .position(|f| has(f, Q::TRANSFER, Q::GRAPHICS | Q::COMPUTE)),
            counts,
        })
    }

    /// The name of queue `index` of `family`: "graphics", "graphics 1", "async_compute",
    /// "transfer", or "family 3".
    pub(super) fn queue_name(&self, family: usize, index: u32) -> String {
        let base = if family == self.graphics {
            "graphics".to_owned()
        } else if Some(family) == self.async_compute {
            "async_compute".to_owned()
        } else if Some(family) == self.transfer {
            "transfer".to_owned()
        } else {
            format!("family {family}")
        };
        if index == 0 {
            base
        } else {
            format!("{base} {index}")
        }
    }
}

/// What the device's swapchain extensions are: none, `VK_KHR_swapchain`, or that with
/// `VK_EXT_swapchain_maintenance1` (present fences) where the instance and device have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SwapchainExtensions {
    None,
    Swapchain,
    WithPresentFences,
}

/// Whether `physical_device` has `VK_EXT_swapchain_maintenance1` and its feature.
///
/// # Safety
///
/// `physical_device` belongs to the live `instance`.
pub(super) unsafe fn has_swapchain_maintenance1(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
) -> bool {
    // SAFETY: plain queries on a physical device of the live instance (the caller's promise).
    let exts = unsafe { instance.enumerate_device_extension_properties(physical_device) };
    let listed = exts
        .unwrap_or_default()
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::swapchain_maintenance1::NAME));
    if !listed {
        return false;
    }
    let mut m1 = vk::PhysicalDeviceSwapchainMaintenance1FeaturesEXT::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut m1);
    // SAFETY: as above; the extension is listed, so its feature structure may be chained.
    unsafe { instance.get_physical_device_features2(physical_device, &mut f2) };
    m1.swapchain_maintenance1 == vk::TRUE
}

/// Creates the device with `choice.counts` queues of each family and the features and
/// extensions `chosen` names (see [`super::features`]), with the swapchain extensions asked.
pub(super) fn create_device(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    choice: &FamilyChoice,
    chosen: &super::features::Chosen,
    swapchain: SwapchainExtensions,
) -> Result<ash::Device> {
    let most = choice.counts.iter().copied().max().unwrap_or(1) as usize;
    let priorities = vec![1.0f32; most];
    let queue_infos: Vec<vk::DeviceQueueCreateInfo<'_>> = (0..choice.counts.len())
        .map(|f| {
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(f as u32)
                .queue_priorities(&priorities[..choice.counts[f] as usize])
        })
        .collect();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
        .timeline_semaphore(true)
        .host_query_reset(chosen.host_query_reset)
        .separate_depth_stencil_layouts(chosen.separate_depth_stencil_layouts)
        .buffer_device_address(chosen.buffer_device_address);
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
        .synchronization2(true)
        .dynamic_rendering(true);
    let mut dev_exts: Vec<*const std::ffi::c_char> =
        chosen.extensions.iter().map(|e| e.as_ptr()).collect();
    let mut wanted = Vec::new();
    if swapchain != SwapchainExtensions::None {
        wanted.push(ash::khr::swapchain::NAME);
    }
    if swapchain == SwapchainExtensions::WithPresentFences {
        wanted.push(ash::ext::swapchain_maintenance1::NAME);
    }
    for name in wanted {
        if !chosen.extensions.iter().any(|e| e.as_c_str() == name) {
            dev_exts.push(name.as_ptr());
        }
    }
    let mut m1 =
        vk::PhysicalDeviceSwapchainMaintenance1FeaturesEXT::default().swapchain_maintenance1(true);
    let mut features = vk::PhysicalDeviceFeatures2::default().features(chosen.core);
    let mut extension_features =
        super::extension_features::FeatureStructs::enabling(chosen.device_features);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_infos)
        .enabled_extension_names(&dev_exts)
        .push_next(&mut features)
        .push_next(&mut f12)
        .push_next(&mut f13);
    let info = if swapchain == SwapchainExtensions::WithPresentFences {
        info.push_next(&mut m1)
    } else {
        info
    };
    let info = extension_features.chain_create(chosen.device_features, info);
    // SAFETY: valid create info for a physical device of this instance; every feature and
    // extension was checked to be supported (`features::choose`).
    unsafe { instance.create_device(physical_device, &info, None) }
        .map_err(|e| Error::vk("vkCreateDevice", e))
}

/// The device's queues: queue 0 of every family, and every queue of the graphics family.
pub(super) struct Queues {
    /// Queue 0 of each family, by family index.
    pub(super) first_of_family: Vec<Queue>,
    /// Every queue of the graphics family, by queue index: `graphics` first.
    pub(super) graphics: Vec<Queue>,
}

/// Makes a [`Queue`] (with its timeline semaphore) for every queue `choice` created, each
/// debug-named and keeping `owner` alive. `physical_device` is the one of `instance` that
/// `owner`'s device was created from.
pub(super) fn create_queues(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    owner: &Arc<DeviceOwner>,
    families: &[vk::QueueFamilyProperties],
    choice: &FamilyChoice,
    debug: Option<&DebugUtils>,
) -> Result<Queues> {
    let mut out = Queues {
        first_of_family: Vec::with_capacity(families.len()),
        graphics: Vec::new(),
    };
    for f in 0..families.len() {
        for index in 0..choice.counts[f] {
            let name = choice.queue_name(f, index);
            // SAFETY: the device was created from `physical_device` of the live `instance`
            // with `counts[f]` queues of family `f` and both features enabled; the context's
            // own submissions all go through the queue's lock.
            let q = unsafe {
                Queue::new(
                    instance,
                    physical_device,
                    &owner.device,
                    f as u32,
                    index,
                    &name,
                )
            }?
            .keep_alive_with(owner.clone());
            if let Some(d) = debug {
                // SAFETY: the queue and its semaphore are live objects of the device, which
                // `d` was loaded for.
                unsafe {
                    d.set_name(q.handle(), &name);
                    d.set_name(q.timeline(), &format!("{name} timeline"));
                }
            }
            if index == 0 {
                out.first_of_family.push(q.clone());
            }
            if f == choice.graphics {
                out.graphics.push(q);
            }
        }
    }
    Ok(out)
}

/// The gpu-allocator allocator of the device.
pub(super) fn create_allocator(
    instance: &ash::Instance,
    device: &ash::Device,
    physical_device: vk::PhysicalDevice,
    buffer_device_address: bool,
) -> Result<SharedAllocator> {
    let desc = gpu_allocator::vulkan::AllocatorCreateDesc {
        instance: instance.clone(),
        device: device.clone(),
        physical_device,
        debug_settings: Default::default(),
        // With the feature on, memory may back buffers read through device addresses.
        buffer_device_address,
        allocation_sizes: Default::default(),
    };
    let allocator = gpu_allocator::vulkan::Allocator::new(&desc)?;
    // SAFETY: the allocator was just created for `device`.
    Ok(unsafe { SharedAllocator::new(device, allocator) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(flags: vk::QueueFlags, queue_count: u32) -> vk::QueueFamilyProperties {
        vk::QueueFamilyProperties {
            queue_flags: flags,
            queue_count,
            ..Default::default()
        }
    }

    #[test]
    fn the_shader_access_setting_is_one_bool32_for_the_khronos_layer() {
        let on: vk::Bool32 = vk::TRUE;
        let s = shader_accesses_heuristic(&on);
        // SAFETY: the names point at static NUL-terminated strings, and the value at `on`,
        // alive here.
        unsafe {
            assert_eq!(s.layer_name_as_c_str(), Some(VALIDATION_LAYER));
            assert_eq!(
                s.setting_name_as_c_str(),
                Some(c"syncval_shader_accesses_heuristic")
            );
            assert_eq!(*s.p_values.cast::<vk::Bool32>(), vk::TRUE);
        }
        assert_eq!(s.ty, vk::LayerSettingTypeEXT::BOOL32);
        assert_eq!(s.value_count, 1);
    }

    #[test]
    fn dedicated_families_are_chosen_and_extra_graphics_queues_counted() {
        use vk::QueueFlags as Q;
        let families = [
            family(Q::TRANSFER, 2),
            family(Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER, 16),
            family(Q::COMPUTE | Q::TRANSFER, 8),
            family(Q::VIDEO_DECODE_KHR, 1),
        ];
        let choice = FamilyChoice::new(&families, 2).unwrap();
        assert_eq!(
            choice,
            FamilyChoice {
                graphics: 1,
                async_compute: Some(2),
                transfer: Some(0),
                counts: vec![1, 2, 1, 1],
            }
        );
        let names: Vec<String> = [(1, 0), (1, 1), (2, 0), (0, 0), (3, 0)]
            .iter()
            .map(|&(f, i)| choice.queue_name(f, i))
            .collect();
        assert_eq!(
            names,
            [
                "graphics",
                "graphics 1",
                "async_compute",
                "transfer",
                "family 3"
            ]
        );
    }

    #[test]
    fn asking_for_more_graphics_queues_than_the_family_has_is_a_clear_error() {
        use vk::QueueFlags as Q;
        let one = [family(Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER, 1)];
        let e = FamilyChoice::new(&one, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the Vulkan environment is not usable: ContextOptions::graphics_queues is 2, but the graphics family (0) has 1 queue(s): ask for 1 to 1"
        );
        assert!(FamilyChoice::new(&one, 0).is_err());
        assert_eq!(FamilyChoice::new(&one, 1).unwrap().counts, vec![1]);
        let none = [family(Q::COMPUTE, 4)];
        assert_eq!(
            FamilyChoice::new(&none, 1).unwrap_err().to_string(),
            "the Vulkan environment is not usable: the device has no graphics queue family"
        );
    }
}
