//! One `VkQueue`, its timeline semaphore and its submit lock.
//!
//! Make exactly one [`Queue`] per `VkQueue` and clone it wherever it is needed: clones share
//! the timeline semaphore and the submit lock. Two `Queue`s made separately for one `VkQueue`
//! would each have a timeline of their own, and graphs could no longer order work between them.
//!
//! ```no_run
//! # fn f(device: &ash::Device) -> vk_baton::Result<()> {
//! use vk_baton::{ash::vk, Queue};
//! // SAFETY: `device` was created with one queue of family 0, which has these capabilities,
//! // and with the timelineSemaphore and synchronization2 features.
//! let graphics = unsafe { Queue::new(device, 0, 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE, "graphics")? };
//! // No dedicated compute family: async compute is the very same queue.
//! let async_compute = graphics.clone();
//! assert_eq!(graphics, async_compute);
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use parking_lot::{Mutex, MutexGuard};
use std::fmt;
use std::sync::Arc;

struct Inner {
    device: ash::Device,
    handle: vk::Queue,
    family: u32,
    index: u32,
    caps: vk::QueueFlags,
    name: String,
    timeline: vk::Semaphore,
    /// The highest value handed out for the timeline so far. Guarded together with
    /// submissions to the queue.
    last: Mutex<u64>,
    /// What must outlive the queue's semaphore (the [`crate::Context`]'s device, for its
    /// queues); dropped last, after `Drop` destroyed the semaphore.
    device_owner: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
}

/// A `VkQueue` with its family, capabilities, one timeline semaphore and one submit lock.
///
/// Equality and hashing are by `VkQueue` handle. Cloning is cheap and shares everything.
///
/// ```no_run
/// # fn f(q: &vk_baton::Queue) {
/// println!("{} is family {} with {:?}", q.name(), q.family(), q.caps());
/// # }
/// ```
#[derive(Clone)]
pub struct Queue(Arc<Inner>);

impl Queue {
    /// Gets queue `index` of `family` from `device` and creates its timeline semaphore.
    ///
    /// `caps` are the family's capabilities (from `vkGetPhysicalDeviceQueueFamilyProperties`);
    /// the planner checks accesses against them.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device) -> vk_baton::Result<()> {
    /// // SAFETY: see the module example.
    /// let q = unsafe { vk_baton::Queue::new(device, 0, 0, ash::vk::QueueFlags::GRAPHICS, "graphics")? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// The library cannot check these, and each is undefined behaviour in a later Vulkan call:
    ///
    /// - `device` was created with at least `index + 1` queues of `family`, and with the
    ///   `timelineSemaphore` and `synchronization2` features enabled.
    /// - `caps` are no more than family `family`'s capabilities (the planner records only
    ///   commands they allow).
    /// - Every submission to this `VkQueue` outside vk-baton holds [`Queue::lock`]: Vulkan
    ///   needs queue submissions externally synchronized.
    pub unsafe fn new(
        device: &ash::Device,
        family: u32,
        index: u32,
        caps: vk::QueueFlags,
        name: &str,
    ) -> Result<Queue> {
        // SAFETY: the caller created `device` with queue `index` of `family` (this
        // function's contract); getting a queue has no other precondition.
        let handle = unsafe { device.get_device_queue(family, index) };
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut type_info);
        // SAFETY: valid create info on a live device; the semaphore is destroyed in `Drop`.
        let timeline = unsafe { device.create_semaphore(&info, None) }
            .map_err(|e| Error::vk("vkCreateSemaphore", e))?;
        log::debug!(
            "queue `{name}`: family {family} index {index}, {caps:?}, timeline {timeline:?}"
        );
        Ok(Queue(Arc::new(Inner {
            device: device.clone(),
            handle,
            family,
            index,
            caps,
            name: name.to_owned(),
            timeline,
            last: Mutex::new(0),
            device_owner: std::sync::OnceLock::new(),
        })))
    }

    /// The `VkQueue`.
    pub fn handle(&self) -> vk::Queue {
        self.0.handle
    }

    /// The queue family index.
    pub fn family(&self) -> u32 {
        self.0.family
    }

    /// The queue's index within its family.
    pub fn index(&self) -> u32 {
        self.0.index
    }

    /// The family's capabilities.
    pub fn caps(&self) -> vk::QueueFlags {
        self.0.caps
    }

    /// The debug name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The queue's timeline semaphore, shared by everything that submits to it.
    pub fn timeline(&self) -> vk::Semaphore {
        self.0.timeline
    }

    /// The `VkDevice` the queue belongs to (for identity checks).
    pub fn device_handle(&self) -> vk::Device {
        self.0.device.handle()
    }

    /// The highest timeline value handed out so far (not necessarily signalled yet).
    pub fn last_value(&self) -> u64 {
        *self.0.last.lock()
    }

    /// The timeline's current (signalled) value, from `vkGetSemaphoreCounterValue`.
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue) -> vk_baton::Result<()> {
    /// let done = q.completed_value()? >= q.last_value();
    /// # Ok(()) }
    /// ```
    pub fn completed_value(&self) -> Result<u64> {
        // SAFETY: the semaphore is a live timeline semaphore of this device.
        unsafe { self.0.device.get_semaphore_counter_value(self.0.timeline) }
            .map_err(|e| Error::vk("vkGetSemaphoreCounterValue", e))
    }

    /// Waits at most `timeout_ns` for the timeline to reach `value`; whether it did.
    pub(crate) fn wait_value(&self, value: u64, timeout_ns: u64) -> Result<bool> {
        let semaphores = [self.0.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        // SAFETY: the semaphore is a live timeline semaphore of this device.
        match unsafe { self.0.device.wait_semaphores(&info, timeout_ns) } {
            Ok(()) => Ok(true),
            Err(vk::Result::TIMEOUT) => Ok(false),
            Err(e) => Err(Error::vk("vkWaitSemaphores", e)),
        }
    }

    /// Takes the submit lock. `vkQueueSubmit*` needs external synchronization, so every
    /// submission to this `VkQueue`, the app's own included, must happen while holding it.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, q: &vk_baton::Queue, submit: &ash::vk::SubmitInfo2<'_>) {
    /// let lock = q.lock();
    /// // SAFETY (example): the lock gives the external synchronization the submit needs.
    /// unsafe { device.queue_submit2(lock.handle(), std::slice::from_ref(submit), ash::vk::Fence::null()) }.unwrap();
    /// # }
    /// ```
    pub fn lock(&self) -> QueueLock<'_> {
        QueueLock {
            queue: self,
            last: self.0.last.lock(),
        }
    }
}

/// The submit lock of a [`Queue`], from [`Queue::lock`]. It also guards the next value of the
/// queue's timeline: an app that signals the timeline itself takes values from
/// [`QueueLock::next_value`].
///
/// ```no_run
/// # fn f(q: &vk_baton::Queue) {
/// let mut lock = q.lock();
/// let value = lock.next_value(); // signal `q.timeline()` with this value in the app's submit
/// # }
/// ```
pub struct QueueLock<'a> {
    queue: &'a Queue,
    last: MutexGuard<'a, u64>,
}

impl QueueLock<'_> {
    /// The `VkQueue`, to submit to while the lock is held.
    pub fn handle(&self) -> vk::Queue {
        self.queue.handle()
    }

    /// The queue this lock belongs to.
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue) {
    /// assert_eq!(q.lock().queue(), q);
    /// # }
    /// ```
    pub fn queue(&self) -> &Queue {
        self.queue
    }

    /// The highest timeline value handed out so far.
    pub fn last_value(&self) -> u64 {
        *self.last
    }

    /// Reserves the next timeline value; the caller must signal it in a submit made while
    /// this lock is held.
    ///
    /// ```no_run
    /// # fn f(q: &vk_baton::Queue) {
    /// let mut l = q.lock(); let v = l.next_value(); assert_eq!(v, l.last_value());
    /// # }
    /// ```
    pub fn next_value(&mut self) -> u64 {
        *self.last += 1;
        *self.last
    }

    /// Records that values up to `value` have been handed out (used by the executor after
    /// [`crate::plan::Plan::assign_values`]). Never lowers the value.
    pub(crate) fn set_last_value(&mut self, value: u64) {
        *self.last = (*self.last).max(value);
    }
}

impl Queue {
    /// Whether both are clones of one `Queue` (not merely the same VkQueue).
    pub(crate) fn same_object(&self, other: &Queue) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Keeps `owner` (what destroys the device) alive until the last clone of the queue has
    /// dropped. Set once, right after `new`; a second call is ignored.
    pub(crate) fn keep_alive_with(self, owner: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        let _ = self.0.device_owner.set(owner);
        self
    }
}

impl PartialEq for Queue {
    fn eq(&self, other: &Self) -> bool {
        self.0.handle == other.0.handle
    }
}

impl Eq for Queue {}

impl std::hash::Hash for Queue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.handle.hash(state)
    }
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Queue(`{}`, family {}, {:?})",
            self.0.name, self.0.family, self.0.handle
        )
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Only the last clone gets here, so no submit lock is held and no other clone can
        // submit. Work already submitted may still signal the timeline: wait for the queue
        // to go idle before destroying the semaphore.
        // SAFETY: the queue is externally synchronized (last owner); the device is alive
        // (the owner destroys queues before the device).
        if let Err(e) = unsafe { self.device.queue_wait_idle(self.handle) } {
            log::error!(
                "queue `{}`: vkQueueWaitIdle failed ({e}); leaking its timeline semaphore",
                self.name
            );
            // The device must then outlive the leaked semaphore.
            std::mem::forget(self.device_owner.take());
            return;
        }
        // SAFETY: no pending submission references the semaphore any more (queue idle).
        unsafe { self.device.destroy_semaphore(self.timeline, None) };
    }
}
