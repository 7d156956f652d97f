//! State-tracked images and buffers: [`StImage`] and [`StBuffer`], used as `Arc`s.
//!
//! Each holds its handle, its description and its tracked state: per cell (image: `mip *
//! array_layers + layer`; buffer: byte), the layout, whether the contents are defined, the
//! owning queue family, and the last write plus the reads since, each as a queue and timeline
//! value. Graphs read that state when they plan and write it back when they execute.
//!
//! Each also records with a `CurrentHandle`: its own Vulkan handle or, for a transient, the
//! one the graph bound for the execution being recorded. And the app can declare, in the
//! access vocabulary of passes, what its own work did to a resource
//! ([`StImage::declare_access`], [`StBuffer::declare_access`]).
//!
//! ```no_run
//! # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
//! use std::sync::Arc;
//! use vk_baton::{ash::vk, ImageDesc, StImage};
//! let desc = ImageDesc::storage_2d(256, 256, vk::Format::R8G8B8A8_UNORM).mips(4);
//! let img = Arc::new(StImage::new(device, alloc, desc, "mandelbrot")?);
//! assert_eq!(img.state().layout(), Some(vk::ImageLayout::UNDEFINED));
//! # Ok(()) }
//! ```

use crate::access::Access;
use crate::queue::Queue;
use ash::vk;
use parking_lot::{Mutex, MutexGuard};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

mod buffer;
mod desc;
mod host;
mod image;
mod memory;
mod state;
mod transient;

pub use buffer::StBuffer;
pub use desc::{BufferDesc, Destroy, ImageDesc, ResourceState, Sharing};
pub use host::{HostMapping, HostMemory};
pub use image::StImage;
pub use memory::SharedAllocator;
pub use state::StateSnapshot;
pub(crate) use state::{Tracked, MERGED};

/// An image or a buffer, for code that handles both.
///
/// ```no_run
/// # fn f(img: std::sync::Arc<vk_baton::StImage>) {
/// let r = vk_baton::Resource::Image(img);
/// println!("{}", r.name());
/// # }
/// ```
#[derive(Clone, Debug)]
pub enum Resource {
    /// An image.
    Image(Arc<StImage>),
    /// A buffer.
    Buffer(Arc<StBuffer>),
}

impl Resource {
    /// The resource's unique id.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let id = r.id();
    /// # }
    /// ```
    pub fn id(&self) -> u64 {
        match self {
            Resource::Image(i) => i.id(),
            Resource::Buffer(b) => b.id(),
        }
    }

    /// Number of state-tracking cells: mip levels × array layers, or bytes.
    pub(crate) fn cells(&self) -> u64 {
        match self {
            Resource::Image(i) => i.desc().cells(),
            Resource::Buffer(b) => b.size(),
        }
    }

    /// The debug name.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// println!("{}", r.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        match self {
            Resource::Image(i) => i.name(),
            Resource::Buffer(b) => b.name(),
        }
    }

    /// The `VkDevice` it belongs to.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let d = r.device_handle();
    /// # }
    /// ```
    pub fn device_handle(&self) -> vk::Device {
        match self {
            Resource::Image(i) => i.device_handle(),
            Resource::Buffer(b) => b.device_handle(),
        }
    }

    /// A copy of the tracked state.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let s = r.state();
    /// # }
    /// ```
    pub fn state(&self) -> StateSnapshot {
        self.tracked().lock().snapshot()
    }

    pub(crate) fn tracked(&self) -> &TrackedState {
        match self {
            Resource::Image(i) => i.tracked(),
            Resource::Buffer(b) => b.tracked(),
        }
    }

    /// A reference that does not keep it alive.
    pub(crate) fn downgrade(&self) -> WeakResource {
        match self {
            Resource::Image(i) => WeakResource::Image(Arc::downgrade(i)),
            Resource::Buffer(b) => WeakResource::Buffer(Arc::downgrade(b)),
        }
    }
}

/// A [`Resource`] that does not keep it alive: what a kept recording names, to tell when the
/// app dropped it.
pub(crate) enum WeakResource {
    Image(Weak<StImage>),
    Buffer(Weak<StBuffer>),
}

impl WeakResource {
    /// Whether the app dropped it.
    pub(crate) fn dropped(&self) -> bool {
        match self {
            WeakResource::Image(i) => i.strong_count() == 0,
            WeakResource::Buffer(b) => b.strong_count() == 0,
        }
    }
}

/// How many images and buffers were dropped so far, in the whole process: kept recordings
/// look at the resources they name only after it moved.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// [`DROPPED`]'s count.
pub(crate) fn dropped_so_far() -> u64 {
    DROPPED.load(Ordering::Acquire)
}

/// An image or buffer is being dropped (its last `Arc` is gone).
fn note_dropped() {
    DROPPED.fetch_add(1, Ordering::Release);
}

/// A Vulkan handle that a transient resource changes for each execution (a plain one for
/// every other resource).
struct CurrentHandle(AtomicU64);

impl CurrentHandle {
    fn new<H: vk::Handle>(h: H) -> Self {
        CurrentHandle(AtomicU64::new(h.as_raw()))
    }

    fn get<H: vk::Handle>(&self) -> H {
        // Relaxed: the graph sets it under its lock on the thread that then records the passes.
        H::from_raw(self.0.load(Ordering::Relaxed))
    }

    fn set<H: vk::Handle>(&self, h: H) {
        self.0.store(h.as_raw(), Ordering::Relaxed)
    }
}

/// The state after the app's `access` on `queue`: defined, in the access's layout, owned by
/// the queue's family unless the resource is CONCURRENT.
fn after(
    queue: &Queue,
    access: Access,
    layout: vk::ImageLayout,
    concurrent: bool,
) -> ResourceState {
    let state = ResourceState::defined(layout).last_access(queue, access.stages, access.access);
    if concurrent {
        state
    } else {
        state.owned_by(queue.family())
    }
}

impl StImage {
    /// Declares that the app's own work on `queue` last touched the whole image with `access`
    /// (the same constants a pass declares), leaving it in the access's layout. The next graph
    /// chains from those stages and accesses and transitions from that layout. For work made
    /// through a handoff (`Graph::hand_off`) there is nothing to declare.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// // SAFETY: the app's own compute shader wrote the whole image on `q` and left it in
    /// // GENERAL; the next graph's work on `q` comes after it in submission order.
    /// unsafe { img.declare_access(q, Access::COMPUTE_SHADER_WRITE) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::declare_state`]: the next barriers are planned from this declaration
    /// alone. The app's work really was `access` on `queue`, left the image in the access's
    /// layout (owned by the queue's family unless CONCURRENT), and is ordered before the next
    /// graph's work by submission order on `queue` or the app's own semaphores.
    pub unsafe fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        // SAFETY: this function's contract is `declare_state`'s.
        unsafe { self.declare_state(after(queue, access, access.layout, concurrent)) };
    }
}

impl StBuffer {
    /// Declares that the app's own work on `queue` last touched the whole buffer with
    /// `access`; see [`StImage::declare_access`].
    ///
    /// ```no_run
    /// # fn f(buf: &vk_baton::StBuffer, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// // SAFETY: the app's own vkCmdFillBuffer on `q` wrote the whole buffer, before the next
    /// // graph's work on `q` in submission order.
    /// unsafe { buf.declare_access(q, Access::TRANSFER_WRITE) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::declare_access`].
    pub unsafe fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        // SAFETY: this function's contract is `declare_state`'s.
        unsafe { self.declare_state(after(queue, access, vk::ImageLayout::UNDEFINED, concurrent)) };
    }
}

// The tracked state's lock, and its version published outside it.
//
// A reused frame asks of every resource whether it is still where the plan's last execution
// left it: whether its version is the one that execution's commit gave it. That question needs
// no lock: `TrackedState::version` is one atomic load. The answer is a hint, as a locked read
// would be too once the lock is let go: at submit time the executor takes each lock once,
// compares the version again under it (the staleness check), and commits. So a frame takes
// each resource's lock once, not twice.

/// A resource's tracked state and its published version.
#[derive(Debug)]
pub(crate) struct TrackedState {
    tracked: Mutex<Tracked>,
    /// `tracked.version` as the last holder of the lock left it.
    version: AtomicU64,
}

impl TrackedState {
    pub(crate) fn new(tracked: Tracked) -> Self {
        TrackedState {
            version: AtomicU64::new(tracked.version),
            tracked: Mutex::new(tracked),
        }
    }

    /// Blocks until the lock is free, and takes it. Whatever the holder does to the version
    /// is published when the guard goes.
    pub(crate) fn lock(&self) -> TrackedGuard<'_> {
        #[cfg(test)]
        crate::sync::note_state_lock();
        TrackedGuard {
            guard: self.tracked.lock(),
            published: &self.version,
        }
    }

    /// The state, without locking: `self` is borrowed uniquely.
    pub(crate) fn unlocked(&mut self) -> &Tracked {
        self.tracked.get_mut()
    }

    /// The version, without the lock: the one the last holder left, which may have moved on
    /// by the time the caller acts. A hint to check again under the lock before relying on it.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}

/// The lock on a resource's [`Tracked`] state; publishes its version when dropped.
pub(crate) struct TrackedGuard<'t> {
    guard: MutexGuard<'t, Tracked>,
    published: &'t AtomicU64,
}

impl Deref for TrackedGuard<'_> {
    type Target = Tracked;
    fn deref(&self) -> &Tracked {
        &self.guard
    }
}

impl DerefMut for TrackedGuard<'_> {
    fn deref_mut(&mut self) -> &mut Tracked {
        &mut self.guard
    }
}

impl Drop for TrackedGuard<'_> {
    fn drop(&mut self) {
        // Still under the lock (the guard field goes after this): every holder's version is
        // published in the order the holders took the lock.
        self.published.store(self.guard.version, Ordering::Release);
    }
}

#[cfg(test)]
mod tracked_state_tests {
    use super::*;
    use crate::plan::SegmentState;

    #[test]
    fn a_version_changed_under_the_lock_is_published_when_the_lock_goes() {
        let state = TrackedState::new(Tracked::new(16, SegmentState::default()));
        assert_eq!(state.version(), 0);
        let mut g = state.lock();
        g.commit(vec![(0..16, SegmentState::default())]);
        // Not yet: the holder may still change it.
        assert_eq!(state.version(), 0);
        drop(g);
        assert_eq!(state.version(), 1);
        assert_eq!(state.lock().version, 1);
    }
}

/// A frame reads each of its resources' id, handle, state and transient slot: they stay within
/// a few cache lines, the device's function tables (1.5 KB) behind a pointer.
#[cfg(test)]
mod size_tests {
    #[test]
    fn a_resource_takes_a_few_cache_lines() {
        use std::mem::size_of;
        assert!(
            size_of::<super::StImage>() <= 5 * 64,
            "{}",
            size_of::<super::StImage>()
        );
        assert!(
            size_of::<super::StBuffer>() <= 5 * 64,
            "{}",
            size_of::<super::StBuffer>()
        );
    }

    /// The fields every frame reads (id, handle, tracked state, then the memory with a
    /// transient's slot) come first, beside the `Arc`'s counts, not behind the description.
    #[test]
    fn what_a_frame_reads_comes_first() {
        use std::mem::offset_of;
        assert!(offset_of!(super::StImage, memory) <= 64);
        assert!(offset_of!(super::StImage, desc) > offset_of!(super::StImage, memory));
        assert!(offset_of!(super::StBuffer, memory) <= 64);
        assert!(offset_of!(super::StBuffer, desc) > offset_of!(super::StBuffer, memory));
    }
}
