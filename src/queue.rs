//! One `VkQueue`, its timeline semaphore and its submit lock.
//!
//! Make exactly one [`Queue`] per `VkQueue` and clone it wherever it is needed: clones share
//! the timeline semaphore and the submit lock. Two `Queue`s made separately for one `VkQueue`
//! would each have a timeline of their own, and graphs could no longer order work between them.
//!
//! ```no_run
//! # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice, device: &ash::Device) -> vk_baton::Result<()> {
//! use vk_baton::{ash::vk, Queue};
//! // SAFETY: `device` was created from `physical_device` of `instance` with one queue of
//! // family 0, and with the timelineSemaphore and synchronization2 features.
//! let graphics = unsafe { Queue::new(instance, physical_device, device, 0, 0, "graphics")? };
//! // No dedicated compute family: async compute is the very same queue.
//! let async_compute = graphics.clone();
//! assert_eq!(graphics, async_compute);
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use parking_lot::{Mutex, MutexGuard};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct Inner {
    /// Boxed, as a resource's is: its function tables take 1.5 KB.
    device: Box<ash::Device>,
    handle: vk::Queue,
    family: u32,
    index: u32,
    caps: vk::QueueFlags,
    name: String,
    timeline: vk::Semaphore,
    /// The highest value handed out for the timeline so far. Guarded together with
    /// submissions to the queue.
    last: Mutex<u64>,
    /// The highest timeline value the host knows to be reached because it saw a fence of
    /// vk-baton signal after it (see [`Queue::host_complete`]).
    host_complete: AtomicU64,
    /// What must outlive the queue's semaphore ([`Queue::keep_alive_with`]: what destroys the
    /// device); dropped last, after `Drop` destroyed the semaphore.
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
    /// The queue's capabilities ([`Queue::caps`]), which the planner checks accesses against,
    /// are the family's `VkQueueFamilyProperties::queueFlags` as `physical_device` reports
    /// them, plus `TRANSFER` for a graphics or compute family (which always supports
    /// transfers, reported or not).
    ///
    /// `instance` and `physical_device` serve to check the arguments and the device first,
    /// each failure an error that creates nothing: a family or queue index the physical
    /// device does not have is [`Error::InvalidArgument`]; a physical device below
    /// Vulkan 1.3, or a device without an entry point the library calls (`vkQueueSubmit2`,
    /// `vkWaitSemaphores`, ...; an instance created with `apiVersion` 1.0 hides them), is
    /// [`Error::Environment`], rather than a crash at the first execution. The README's
    /// "What the device must enable" lists everything.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice, device: &ash::Device) -> vk_baton::Result<()> {
    /// use vk_baton::ash::vk;
    /// // SAFETY: see the module example.
    /// let q = unsafe { vk_baton::Queue::new(instance, physical_device, device, 0, 0, "graphics")? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// The library checks the family and index, reads the capabilities, and checks the API
    /// version and entry points against `physical_device`; it cannot check these, and each is undefined behaviour in a
    /// later Vulkan call:
    ///
    /// - `instance` is alive, `physical_device` is one of its physical devices, and `device`
    ///   was created from `physical_device` (its function table loaded for it, as
    ///   `ash::Instance::create_device` does).
    /// - `device` was created with at least `index + 1` queues of `family` (the family may
    ///   have more than the app created).
    /// - `device` was created with the `timelineSemaphore` (Vulkan 1.2) and `synchronization2`
    ///   (Vulkan 1.3) features enabled: Vulkan has no query for the features a device was
    ///   created with.
    /// - Every submission to this `VkQueue` outside vk-baton holds [`Queue::lock`]: Vulkan
    ///   needs queue submissions externally synchronized.
    pub unsafe fn new(
        instance: &ash::Instance,
        physical_device: vk::PhysicalDevice,
        device: &ash::Device,
        family: u32,
        index: u32,
        name: &str,
    ) -> Result<Queue> {
        // SAFETY: the three belong together and are alive (this function's contract).
        let caps = unsafe { family_caps(instance, physical_device, family, index, name) }?;
        let what = format!("queue `{name}`");
        // SAFETY: as above.
        unsafe { crate::requirements::check_device(instance, physical_device, device, &what) }?;
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
            device: Box::new(device.clone()),
            handle,
            family,
            index,
            caps,
            name: name.to_owned(),
            timeline,
            last: Mutex::new(0),
            host_complete: AtomicU64::new(0),
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

    /// The family's capabilities, as the physical device reports them (`queueFlags`), with
    /// `TRANSFER` for a graphics or compute family; the planner checks accesses against them.
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

    /// Takes the submit lock. Every command that needs the `VkQueue` externally synchronized
    /// must happen while holding it, the app's own included: `vkQueueSubmit*`,
    /// `vkQueuePresentKHR`, `vkQueueWaitIdle` and `vkQueueBindSparse` (the Vulkan
    /// specification marks their `queue` parameter "externally synchronized"; the graph submits
    /// from whatever thread calls `execute()`). `vkDeviceWaitIdle` needs *every* queue of the
    /// device externally synchronized: hold the lock of each around it, always in the same
    /// order (`vk_baton_context::Context::device_wait_idle` does). The lock is not
    /// reentrant: taking it twice on one thread never returns.
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

    /// An identity for [`Queue::same_object`]: equal for clones of one `Queue`, distinct for
    /// any two alive at once.
    pub(crate) fn id(&self) -> u64 {
        Arc::as_ptr(&self.0) as usize as u64
    }

    /// The highest timeline value up to which the host knows this queue's work complete,
    /// through vk-baton's fences: the last value of an execution whose
    /// [`ExecutionFence`](crate::ExecutionFence) it saw signalled (`wait`, `wait_timeout`,
    /// `is_complete`, or the graph collecting a dropped fence), or a value such an execution
    /// waited for. (The timeline's counter may show it a moment later: Vulkan does not order a
    /// fence signal after the semaphore signals of the same submit.)
    ///
    /// That work completed before anything submitted since: an app may reuse what it tracks
    /// by this queue's values up to it, and [`StBuffer`](crate::StBuffer)'s host access takes
    /// it as complete without asking the timeline. Submits still carry the plan's waits for such work:
    /// the fence orders it before them, but only a semaphore wait or a barrier of the waiting
    /// queue makes its writes visible there. Only the library's fences count: the app's own
    /// waits (its fences, `vkQueueWaitIdle`), handoffs and the timeline's counter do not.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let fence = graph.record().insert_pass("upload", pass, q).finish()?.execute()?;
    /// let uploaded = q.last_value(); // (no other thread submits to `q` meanwhile)
    /// fence.wait()?;
    /// // The upload's work is done, and whatever the app keyed by its value may be reused.
    /// assert!(q.host_complete() >= uploaded);
    /// # Ok(()) }
    /// ```
    pub fn host_complete(&self) -> u64 {
        self.0.host_complete.load(Ordering::Acquire)
    }

    /// Raises [`Queue::host_complete`] to `value` (never lowers it). Call only after the host
    /// saw a fence signal that follows the queue's work up to `value`.
    pub(crate) fn note_host_complete(&self, value: u64) {
        self.0.host_complete.fetch_max(value, Ordering::AcqRel);
    }

    /// Keeps `owner` alive until the last clone of the queue has dropped, and drops it after
    /// destroying the queue's timeline semaphore. Meant for what destroys the device, in its
    /// `Drop` (the `vk-baton-context` crate's `Context` gives its queues the owner of its
    /// device): the device then outlives the queue. Set once, right after [`Queue::new`]; a
    /// second call is ignored (and drops its `owner` at once).
    ///
    /// ```no_run
    /// # fn f(q: vk_baton::Queue, owner: std::sync::Arc<dyn std::any::Any + Send + Sync>) {
    /// let q = q.keep_alive_with(owner);
    /// # }
    /// ```
    pub fn keep_alive_with(self, owner: Arc<dyn std::any::Any + Send + Sync>) -> Self {
        let _ = self.0.device_owner.set(owner);
        self
    }
}

/// Checks that `physical_device` has queue family `family` with at least `index + 1` queues,
/// and returns the family's capabilities (a graphics or compute family has `TRANSFER`).
///
/// # Safety
///
/// `instance` is alive and `physical_device` is one of its physical devices.
unsafe fn family_caps(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    family: u32,
    index: u32,
    name: &str,
) -> Result<vk::QueueFlags> {
    // SAFETY: a plain query on a physical device of the live `instance` (the contract).
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical_device) };
    let Some(props) = families.get(family as usize) else {
        return Err(Error::InvalidArgument(format!(
            "queue `{name}`: family {family}, but the device has {} queue families",
            families.len()
        )));
    };
    if index >= props.queue_count {
        return Err(Error::InvalidArgument(format!(
            "queue `{name}`: index {index}, but family {family} has {} queue(s)",
            props.queue_count
        )));
    }
    let mut has = props.queue_flags;
    if has.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE) {
        has |= vk::QueueFlags::TRANSFER;
    }
    Ok(has)
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
