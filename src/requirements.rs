//! What a device must offer before vk-baton records for it, checked where it can be.
//!
//! Everything the library records is Vulkan 1.3 core: `vkCmdPipelineBarrier2`,
//! `vkQueueSubmit2` and `vkCmdWriteTimestamp2` (synchronization2), timeline semaphores waited
//! and read with `vkWaitSemaphores` / `vkGetSemaphoreCounterValue`, and `vkResetQueryPool`
//! for timings with `hostQueryReset`. ash fills a function it could not load with a stub
//! that panics when called, and the library calls these from functions that cannot unwind,
//! so a device without them used to abort the process at its first graph.
//!
//! [`check_device`] runs in [`crate::Graph::new`] and [`crate::Queue::new`] and turns that
//! into an [`Error::Environment`] up front. It checks what a `VkDevice` lets one see:
//!
//! - the physical device's `apiVersion` is at least 1.3;
//! - `vkGetDeviceProcAddr` finds every entry point above 1.0 that the library calls. The
//!   loader returns none for a core function newer than the instance's `apiVersion`, so this
//!   also catches an instance created with `apiVersion` 1.0, which no query reports.
//!
//! What it cannot see: whether the `synchronization2` and `timelineSemaphore` features were
//! enabled when the device was created. Vulkan has no query for the features a `VkDevice` was
//! created with, and a driver need not refuse the calls without them. The constructors'
//! `# Safety` sections make the caller vouch for them.

use crate::error::{Error, Result};
use ash::vk;
use std::ffi::CStr;

/// The entry points above Vulkan 1.0 that the library calls, with the version they are core
/// in (1.0's are loaded with the device itself).
const ENTRY_POINTS: [(&CStr, &str); 6] = [
    (c"vkCmdPipelineBarrier2", "1.3"),
    (c"vkQueueSubmit2", "1.3"),
    (c"vkCmdWriteTimestamp2", "1.3"),
    (c"vkWaitSemaphores", "1.2"),
    (c"vkGetSemaphoreCounterValue", "1.2"),
    (c"vkResetQueryPool", "1.2"),
];

/// Checks that `device` (of `physical_device`, from `instance`) can run what vk-baton
/// records: a Vulkan 1.3 physical device, and every entry point of [`ENTRY_POINTS`].
/// `what` names the caller for the message ("graph", "queue `graphics`").
///
/// # Safety
///
/// `instance` is alive, `physical_device` is one of its physical devices, and `device` is a
/// live device created from `physical_device`.
pub(crate) unsafe fn check_device(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    device: &ash::Device,
    what: &str,
) -> Result<()> {
    // SAFETY: a plain query on a physical device of the live `instance` (this function's
    // contract).
    let props = unsafe { instance.get_physical_device_properties(physical_device) };
    let name = props
        .device_name_as_c_str()
        .map_or_else(|_| "?".into(), CStr::to_string_lossy);
    check_version(props.api_version, &name, what)?;
    for (function, core_in) in ENTRY_POINTS {
        // SAFETY: `device` is a live device of `instance` (this function's contract); looking
        // a name up has no other precondition, and the pointer is only compared with null.
        let found = unsafe { instance.get_device_proc_addr(device.handle(), function.as_ptr()) };
        if found.is_none() {
            let function = function.to_string_lossy();
            return Err(Error::Environment(format!(
                "{what}: the device `{name}` has no {function} (Vulkan {core_in} core), which \
                 vk-baton records with: create the instance with VkApplicationInfo::apiVersion \
                 1.3 or later (a lower apiVersion hides the newer functions); {NEXT}"
            )));
        }
    }
    log::debug!("{what}: the device `{name}` has what vk-baton records with");
    Ok(())
}

/// `Ok` for a physical device `api_version` of 1.3 or later (any variant 0).
fn check_version(api_version: u32, name: &str, what: &str) -> Result<()> {
    let (major, minor) = (
        vk::api_version_major(api_version),
        vk::api_version_minor(api_version),
    );
    if vk::api_version_variant(api_version) == 0 && (major, minor) >= (1, 3) {
        return Ok(());
    }
    Err(Error::Environment(format!(
        "{what}: the device `{name}` supports Vulkan {major}.{minor}; vk-baton needs 1.3 \
         (synchronization2 and timeline semaphores); {NEXT}"
    )))
}

/// What an app meets next once the version and entry points are right, and which no query
/// can check for it: said in both errors so that the fix is made in one go.
const NEXT: &str = "then create the device with the `synchronization2` (Vulkan 1.3) and \
    `timelineSemaphore` (Vulkan 1.2) features enabled, which Vulkan cannot report and vk-baton \
    therefore cannot check";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_below_1_3_are_refused_with_the_version_and_device() {
        let e = check_version(vk::make_api_version(0, 1, 2, 198), "old gpu", "graph").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the Vulkan environment is not usable: graph: the device `old gpu` supports Vulkan \
             1.2; vk-baton needs 1.3 (synchronization2 and timeline semaphores); then create \
             the device with the `synchronization2` (Vulkan 1.3) and `timelineSemaphore` \
             (Vulkan 1.2) features enabled, which Vulkan cannot report and vk-baton therefore \
             cannot check"
        );
        assert!(check_version(vk::API_VERSION_1_0, "gpu", "graph").is_err());
        // A variant other than 0 is not Vulkan (Vulkan SC is 1).
        assert!(check_version(vk::make_api_version(1, 1, 3, 0), "sc", "graph").is_err());
        for ok in [
            vk::API_VERSION_1_3,
            vk::make_api_version(0, 1, 3, 280),
            vk::make_api_version(0, 1, 4, 0),
            vk::make_api_version(0, 2, 0, 0),
        ] {
            assert!(check_version(ok, "gpu", "graph").is_ok());
        }
    }

    /// Counts error-level records on the test's own thread.
    struct CountErrors;

    thread_local! {
        static ERRORS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    impl log::Log for CountErrors {
        fn enabled(&self, m: &log::Metadata<'_>) -> bool {
            m.level() <= log::Level::Error
        }
        fn log(&self, r: &log::Record<'_>) {
            if r.level() == log::Level::Error {
                ERRORS.with(|e| e.set(e.get() + 1));
            }
        }
        fn flush(&self) {}
    }

    /// The refusal is returned, not logged too: the caller decides what to say about it.
    #[test]
    fn a_refused_version_is_not_logged() {
        log::set_logger(&CountErrors).expect("the only logger of the unit tests");
        log::set_max_level(log::LevelFilter::Error);
        assert!(check_version(vk::API_VERSION_1_2, "old gpu", "graph").is_err());
        assert_eq!(ERRORS.with(std::cell::Cell::get), 0);
    }
}
