//! Debug names and command-buffer labels through `VK_EXT_debug_utils`.
//!
//! Everything that takes a `DebugUtils` takes it as an `Option`: without the extension,
//! naming and labelling are simply skipped.
//!
//! ```no_run
//! # fn f(instance: &ash::Instance, device: &ash::Device, cmd: ash::vk::CommandBuffer) {
//! let debug = vk_baton::DebugUtils::new(instance, device);
//! debug.begin_label(cmd, "shadow pass");
//! debug.end_label(cmd);
//! # }
//! ```

use ash::vk;
use std::ffi::{CStr, CString};

/// The device-level `VK_EXT_debug_utils` functions. Cheap to clone.
///
/// ```no_run
/// # fn f(instance: &ash::Instance, device: &ash::Device) {
/// let debug = vk_baton::DebugUtils::new(instance, device);
/// # }
/// ```
#[derive(Clone)]
pub struct DebugUtils {
    loader: ash::ext::debug_utils::Device,
}

/// Calls `f` with `name` as a C string. Short names (every pass name in practice) go through
/// a stack buffer, since labels are written for every pass of every frame.
fn with_c_name<R>(name: &str, f: impl FnOnce(&CStr) -> R) -> R {
    let mut buf = [0u8; 128];
    if name.len() < buf.len() && !name.contains('\0') {
        buf[..name.len()].copy_from_slice(name.as_bytes());
        if let Ok(c) = CStr::from_bytes_until_nul(&buf) {
            return f(c);
        }
    }
    // Interior NULs cannot appear in a C string: replace them.
    f(&CString::new(name.replace('\0', "?")).unwrap_or_default())
}

impl DebugUtils {
    /// Loads the functions. The instance must have been created with `VK_EXT_debug_utils`.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, device: &ash::Device) {
    /// let debug = vk_baton::DebugUtils::new(instance, device);
    /// # }
    /// ```
    pub fn new(instance: &ash::Instance, device: &ash::Device) -> Self {
        Self {
            loader: ash::ext::debug_utils::Device::new(instance, device),
        }
    }

    /// Wraps functions the app already loaded.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, device: &ash::Device) {
    /// let loader = ash::ext::debug_utils::Device::new(instance, device);
    /// let debug = vk_baton::DebugUtils::from_loader(loader);
    /// # }
    /// ```
    pub fn from_loader(loader: ash::ext::debug_utils::Device) -> Self {
        Self { loader }
    }

    /// The loaded functions.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils) {
    /// let _ = d.loader();
    /// # }
    /// ```
    pub fn loader(&self) -> &ash::ext::debug_utils::Device {
        &self.loader
    }

    /// Names a Vulkan object. Failures are logged, never returned.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, img: ash::vk::Image) {
    /// d.set_name(img, "albedo");
    /// # }
    /// ```
    pub fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        with_c_name(name, |name| {
            let info = vk::DebugUtilsObjectNameInfoEXT::default()
                .object_handle(handle)
                .object_name(name);
            // SAFETY: the handle belongs to the device the loader was made for (caller's
            // promise); `name` outlives the call.
            if let Err(e) = unsafe { self.loader.set_debug_utils_object_name(&info) } {
                log::warn!("vkSetDebugUtilsObjectNameEXT failed: {e}");
            }
        })
    }

    /// Opens a label region in a command buffer that is recording.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, cmd: ash::vk::CommandBuffer) {
    /// d.begin_label(cmd, "bloom"); d.end_label(cmd);
    /// # }
    /// ```
    pub fn begin_label(&self, cmd: vk::CommandBuffer, name: &str) {
        with_c_name(name, |name| {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: `cmd` is recording (caller's promise) and externally synchronized by the
            // recorder; `name` outlives the call.
            unsafe { self.loader.cmd_begin_debug_utils_label(cmd, &label) };
        })
    }

    /// Closes the innermost label region.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, cmd: ash::vk::CommandBuffer) {
    /// d.begin_label(cmd, "x"); d.end_label(cmd);
    /// # }
    /// ```
    pub fn end_label(&self, cmd: vk::CommandBuffer) {
        // SAFETY: `cmd` is recording and has an open label (caller's promise).
        unsafe { self.loader.cmd_end_debug_utils_label(cmd) };
    }

    /// Inserts a single label.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, cmd: ash::vk::CommandBuffer) {
    /// d.insert_label(cmd, "here");
    /// # }
    /// ```
    pub fn insert_label(&self, cmd: vk::CommandBuffer, name: &str) {
        with_c_name(name, |name| {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: `cmd` is recording (caller's promise); `name` outlives the call.
            unsafe { self.loader.cmd_insert_debug_utils_label(cmd, &label) };
        })
    }
}

impl std::fmt::Debug for DebugUtils {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DebugUtils")
    }
}
