//! Who destroys the instance and the device, and when.
//!
//! The [`DeviceOwner`] sits in an `Arc` that the [`Context`](super::Context) holds, and so does
//! every queue, resource and graph the context makes (each drops it last, after destroying its
//! own Vulkan objects: [`vk_baton::Queue::keep_alive_with`],
//! [`vk_baton::StImage::keep_alive_with`], [`vk_baton::StBuffer::keep_alive_with`],
//! [`vk_baton::Graph::with_device_owner`]). The device is therefore destroyed when the last of
//! them drops, in whatever order the app drops them, and never under an object still alive.

use super::messages::Messages;
use ash::vk;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};
use vk_baton::gpu_allocator::vulkan::Allocator;
use vk_baton::parking_lot::Mutex;
use vk_baton::SharedAllocator;

/// A debug-utils messenger with the instance functions that destroy it.
pub(super) type Messenger = (ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT);

/// The loader, the instance and its debug messenger; destroys the messenger and the instance
/// when dropped.
pub(super) struct InstanceOwner {
    pub(super) entry: ash::Entry,
    pub(super) instance: ash::Instance,
    pub(super) messenger: Option<Messenger>,
    /// Whether the instance has `VK_EXT_debug_utils` (for object names and labels).
    pub(super) debug_utils: bool,
    /// The messenger's user data: it must outlive the messenger.
    pub(super) messages: Arc<Messages>,
    /// Whether the instance has `VK_EXT_surface_maintenance1` (and the
    /// `VK_KHR_get_surface_capabilities2` it requires), which `VK_EXT_swapchain_maintenance1`
    /// on the device requires.
    pub(super) surface_maintenance1: bool,
}

impl Drop for InstanceOwner {
    fn drop(&mut self) {
        // SAFETY: the device (if any) is destroyed (a `DeviceOwner` drops its instance only
        // after that); the messenger's user data is still alive (a field of `self`), and the
        // messenger goes before its instance.
        unsafe {
            if let Some((loader, m)) = self.messenger.take() {
                loader.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// The device, and the instance it came from. Destroys both when the last `Arc` drops.
pub(crate) struct DeviceOwner {
    pub(super) device: ash::Device,
    /// The context's allocator, set once it exists: it frees its memory blocks through the
    /// device, so the device must outlive it.
    pub(super) allocator: OnceLock<Weak<Mutex<Allocator>>>,
    /// Always `Some` until dropped (or leaked).
    instance: Option<InstanceOwner>,
}

impl DeviceOwner {
    pub(super) fn new(device: ash::Device, instance: InstanceOwner) -> Self {
        Self {
            device,
            allocator: OnceLock::new(),
            instance: Some(instance),
        }
    }

    /// Remembers the allocator, to check at the end that nothing still holds it.
    pub(super) fn watch_allocator(&self, allocator: &SharedAllocator) {
        let _ = self.allocator.set(allocator.downgrade());
    }
}

impl Drop for DeviceOwner {
    fn drop(&mut self) {
        // Queues, resources and graphs made through the context hold this owner, so they are
        // gone. The allocator can only be alive if the app cloned it (or made resources with it
        // directly): destroying the device would free memory under those.
        if self.allocator.get().is_some_and(|a| a.strong_count() > 0) {
            log::error!("the Context's allocator is still held (by resources made with it directly, or a clone of it): leaking the device instead of destroying it under them");
            // What is left keeps calling into the loader, the layers and the driver, and the
            // messenger may still report: keep the loader loaded and the messenger's user data
            // valid for good.
            std::mem::forget(self.instance.take());
            return;
        }
        // SAFETY: every object made from the device through the context is gone (they hold
        // this owner), and so is the allocator (checked above); the app's own objects made
        // with the context's device must, as documented, be gone before the context.
        unsafe { self.device.destroy_device(None) };
        if let Some(instance) = self.instance.take() {
            instance
                .messages
                .device_destroyed
                .store(true, Ordering::Release);
            drop(instance);
        }
    }
}
