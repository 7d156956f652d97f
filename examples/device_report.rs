//! Device report: the queue families, and which of the extensions that vk-baton's vocabulary
//! and its newer synchronization paths can use the device exposes (ray tracing, mesh shaders,
//! video, maintenance8 and 9, unified image layouts, swapchain maintenance). Prints only.
//!
//! ```text
//! cargo run --example device_report
//! ```

use std::ffi::CStr;
use vk_baton_context::{Context, ContextOptions};

/// The extensions asked about, with what vk-baton would use them for.
const ASKED: [(&CStr, &str); 13] = [
    (
        c"VK_KHR_acceleration_structure",
        "acceleration-structure accesses",
    ),
    (
        c"VK_KHR_ray_query",
        "ray queries in compute and fragment shaders",
    ),
    (
        c"VK_KHR_ray_tracing_pipeline",
        "ray-tracing shaders, shader binding tables",
    ),
    (
        c"VK_KHR_ray_tracing_maintenance1",
        "the acceleration-structure copy stage",
    ),
    (c"VK_EXT_mesh_shader", "mesh and task shaders"),
    (c"VK_KHR_video_queue", "video queues"),
    (c"VK_KHR_video_decode_queue", "video decode"),
    (c"VK_KHR_video_encode_queue", "video encode"),
    (
        c"VK_KHR_maintenance8",
        "exact stages around ownership transfers",
    ),
    (
        c"VK_KHR_maintenance9",
        "no ownership transfer where none is needed",
    ),
    (c"VK_KHR_unified_image_layouts", "GENERAL almost everywhere"),
    (c"VK_EXT_swapchain_maintenance1", "present fences"),
    (c"VK_KHR_swapchain_maintenance1", "present fences (KHR)"),
];

fn main() -> vk_baton::Result<()> {
    let ctx = Context::with_options(ContextOptions {
        validation: false,
        ..Default::default()
    })?;
    println!("device: {}", ctx.device_name());
    // SAFETY: plain queries on the context's live physical device.
    let (families, extensions) = unsafe {
        let i = ctx.instance();
        (
            i.get_physical_device_queue_family_properties(ctx.physical_device()),
            i.enumerate_device_extension_properties(ctx.physical_device())
                .map_err(|e| vk_baton::Error::vk("vkEnumerateDeviceExtensionProperties", e))?,
        )
    };
    for (index, f) in families.iter().enumerate() {
        println!("family {index}: {:?} x{}", f.queue_flags, f.queue_count);
    }
    for (name, why) in ASKED {
        let found = extensions
            .iter()
            .find(|e| e.extension_name_as_c_str() == Ok(name))
            .map(|e| e.spec_version);
        match found {
            Some(v) => println!("yes {} (spec {v}): {why}", name.to_string_lossy()),
            None => println!("no  {}: {why}", name.to_string_lossy()),
        }
    }
    Ok(())
}
