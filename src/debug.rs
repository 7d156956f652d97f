//! Debug names and command-buffer labels through `VK_EXT_debug_utils`.
//!
//! Everything that takes a `DebugUtils` takes it as an `Option`: without the extension,
//! naming and labelling are simply skipped.
//!
//! Calls that take a raw handle or command buffer are `unsafe`: the library cannot check that
//! the handle is a live object of the loader's device, or that the command buffer is
//! recording. Passes label through [`crate::Recorder`], which knows both.
//!
//! ```no_run
//! # fn f(instance: &ash::Instance, device: &ash::Device, cmd: ash::vk::CommandBuffer) {
//! let debug = vk_baton::DebugUtils::new(instance, device);
//! // SAFETY: `cmd` is a command buffer of `device` in the recording state.
//! unsafe {
//!     debug.begin_label(cmd, "shadow pass");
//!     debug.end_label(cmd);
//! }
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
    pub fn loader(&self) -> &ash::ext::debug_utils::Device {
        &self.loader
    }

    /// The `VkDevice` the functions were loaded for.
    pub fn device_handle(&self) -> vk::Device {
        self.loader.device()
    }

    /// Names a Vulkan object. Failures are logged, never returned. Resources name themselves
    /// safely with `named`.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, img: ash::vk::Image) {
    /// // SAFETY: `img` is a live image of the device `d` was loaded for.
    /// unsafe { d.set_name(img, "albedo") };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// `handle` is a live object of the device the functions were loaded for
    /// ([`DebugUtils::device_handle`]), and no other thread uses it during the call.
    pub unsafe fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        with_c_name(name, |name| {
            let info = vk::DebugUtilsObjectNameInfoEXT::default()
                .object_handle(handle)
                .object_name(name);
            // SAFETY: the handle is a live object of the loader's device (this function's
            // contract); `name` outlives the call.
            if let Err(e) = unsafe { self.loader.set_debug_utils_object_name(&info) } {
                log::warn!("vkSetDebugUtilsObjectNameEXT failed: {e}");
            }
        })
    }

    /// Opens a label region in a command buffer that is recording.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, cmd: ash::vk::CommandBuffer) {
    /// // SAFETY: `cmd` is recording, on this thread only.
    /// unsafe { d.begin_label(cmd, "bloom"); d.end_label(cmd) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// `cmd` is a command buffer of the loader's device in the recording state, used by no
    /// other thread during the call.
    pub unsafe fn begin_label(&self, cmd: vk::CommandBuffer, name: &str) {
        with_c_name(name, |name| {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: `cmd` is recording and externally synchronized (this function's
            // contract); `name` outlives the call.
            unsafe { self.loader.cmd_begin_debug_utils_label(cmd, &label) };
        })
    }

    /// Opens a label region drawn in `color` (RGBA, each 0 to 1) by tools that show colours,
    /// such as RenderDoc. vk-baton colours each pass by its queue and each barrier command grey
    /// (purple where it transfers ownership), as the plan's diagram does.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton::DebugUtils, cmd: ash::vk::CommandBuffer) {
    /// // SAFETY: `cmd` is recording, on this thread only.
    /// unsafe { d.begin_label_with_color(cmd, "bloom", [1.0, 0.5, 0.0, 1.0]); d.end_label(cmd) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`DebugUtils::begin_label`].
    pub unsafe fn begin_label_with_color(
        &self,
        cmd: vk::CommandBuffer,
        name: &str,
        color: [f32; 4],
    ) {
        with_c_name(name, |name| {
            let label = vk::DebugUtilsLabelEXT::default()
                .label_name(name)
                .color(color);
            // SAFETY: `cmd` is recording and externally synchronized (this function's
            // contract); `name` outlives the call.
            unsafe { self.loader.cmd_begin_debug_utils_label(cmd, &label) };
        })
    }

    /// [`DebugUtils::begin_label_with_color`] for a name that is a C string already.
    ///
    /// # Safety
    ///
    /// As for [`DebugUtils::begin_label`].
    pub(crate) unsafe fn begin_label_c(
        &self,
        cmd: vk::CommandBuffer,
        name: &CStr,
        color: [f32; 4],
    ) {
        let label = vk::DebugUtilsLabelEXT::default()
            .label_name(name)
            .color(color);
        // SAFETY: `cmd` is recording and externally synchronized (this function's contract);
        // `name` outlives the call.
        unsafe { self.loader.cmd_begin_debug_utils_label(cmd, &label) };
    }

    /// Closes the innermost label region (see [`DebugUtils::begin_label`]).
    ///
    /// # Safety
    ///
    /// As for [`DebugUtils::begin_label`], and a label region is open: one begun in `cmd`,
    /// or earlier on the queue `cmd` is submitted to, and not yet closed.
    pub unsafe fn end_label(&self, cmd: vk::CommandBuffer) {
        // SAFETY: `cmd` is recording and a label is open (this function's contract).
        unsafe { self.loader.cmd_end_debug_utils_label(cmd) };
    }

    /// Inserts a single label.
    ///
    /// # Safety
    ///
    /// As for [`DebugUtils::begin_label`].
    pub unsafe fn insert_label(&self, cmd: vk::CommandBuffer, name: &str) {
        with_c_name(name, |name| {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: `cmd` is recording (this function's contract); `name` outlives the call.
            unsafe { self.loader.cmd_insert_debug_utils_label(cmd, &label) };
        })
    }
}

impl std::fmt::Debug for DebugUtils {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DebugUtils")
    }
}
