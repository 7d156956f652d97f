//! The allocator resources are made from, the memory each resource owns, and resource ids.

use super::Destroy;
use crate::error::{Error, Result};
use crate::plan::TransientMemory;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator};
use gpu_allocator::MemoryLocation;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// A gpu-allocator [`Allocator`] shared by every resource made from it, together with the
/// `VkDevice` it allocates for. Clones share the allocator.
///
/// Resource constructors check that the device they are given is this one, so memory of one
/// device is never bound to an object of another.
///
/// ```no_run
/// # fn main() -> vk_baton::Result<()> {
/// use vk_baton::SharedAllocator;
/// use vk_baton_context::Context;
/// let ctx = Context::new()?;
/// // Every resource and stock pass allocates through this one handle; clones share it.
/// let allocator: SharedAllocator = ctx.allocator().clone();
/// let report = allocator.lock().generate_report();
/// println!("{} bytes allocated", report.total_allocated_bytes);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SharedAllocator {
    device: vk::Device,
    inner: Arc<Mutex<Allocator>>,
}

impl SharedAllocator {
    /// Shares `allocator`, which allocates memory of `device`.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, device: &ash::Device, physical_device: ash::vk::PhysicalDevice) -> vk_baton::Result<()> {
    /// use vk_baton::gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
    /// let allocator = Allocator::new(&AllocatorCreateDesc {
    ///     instance: instance.clone(),
    ///     device: device.clone(),
    ///     physical_device,
    ///     debug_settings: Default::default(),
    ///     buffer_device_address: false,
    ///     allocation_sizes: Default::default(),
    /// })?;
    /// // SAFETY: the allocator was just created for `device`.
    /// let shared = unsafe { vk_baton::SharedAllocator::new(device, allocator) };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// `allocator` was created for `device` (`AllocatorCreateDesc::device`). The handle is the
    /// only thing the library can compare: memory from an allocator of another device, bound
    /// to this device's images and buffers, is undefined behaviour.
    pub unsafe fn new(device: &ash::Device, allocator: Allocator) -> Self {
        Self {
            device: device.handle(),
            inner: Arc::new(Mutex::new(allocator)),
        }
    }

    /// The allocator, locked. Allocations made here are the caller's to free.
    pub fn lock(&self) -> MutexGuard<'_, Allocator> {
        self.inner.lock()
    }

    /// The `VkDevice` the allocator allocates for.
    pub fn device_handle(&self) -> vk::Device {
        self.device
    }

    /// A weak reference to the allocator, which does not keep it alive: whoever destroys the
    /// device checks with it that no clone of the allocator (and no resource made from it)
    /// is left, since the allocator frees its memory through the device. The
    /// `vk-baton-context` crate's `Context` leaks its device rather than destroy it under a
    /// live allocator.
    ///
    /// ```no_run
    /// # fn f(allocator: vk_baton::SharedAllocator) {
    /// let weak = allocator.downgrade();
    /// drop(allocator);
    /// assert_eq!(weak.strong_count(), 0); // no clone and no resource hold it
    /// # }
    /// ```
    pub fn downgrade(&self) -> Weak<Mutex<Allocator>> {
        Arc::downgrade(&self.inner)
    }

    /// Refuses a device other than the allocator's.
    pub(super) fn check_device(&self, device: &ash::Device, what: &str) -> Result<()> {
        if device.handle() == self.device {
            Ok(())
        } else {
            Err(Error::ForeignDevice {
                what: format!("the allocator given for `{what}`"),
            })
        }
    }
}

impl std::fmt::Debug for SharedAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedAllocator({:?})", self.device)
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-wide unique resource id.
pub(super) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Where a resource's memory comes from, and so what its `Drop` frees.
pub(super) enum Memory {
    Allocated {
        allocator: SharedAllocator,
        allocation: Option<Allocation>,
    },
    Raw(Destroy),
    /// A transient: its objects and memory belong to the graph that made it.
    Transient(TransientSlot),
}

pub(super) fn allocate(
    allocator: &SharedAllocator,
    name: &str,
    requirements: vk::MemoryRequirements,
    location: MemoryLocation,
    linear: bool,
) -> Result<Allocation> {
    let desc = AllocationCreateDesc {
        name,
        requirements,
        location,
        linear,
        allocation_scheme: AllocationScheme::GpuAllocatorManaged,
    };
    allocator
        .inner
        .lock()
        .allocate(&desc)
        .map_err(|e| Error::allocation(name, requirements.size, e.into()))
}

pub(super) fn free(allocator: &SharedAllocator, allocation: Allocation, name: &str) {
    if let Err(e) = allocator.inner.lock().free(allocation) {
        log::error!("`{name}`: freeing memory failed: {e}");
    }
}

/// What makes a resource transient (see `transient.rs`). The fields a frame reads first
/// (`repr(C)`), next to the resource's own.
#[repr(C)]
pub(super) struct TransientSlot {
    /// The graph whose executions bind it.
    pub(super) graph: u64,
    /// The serial of the object bound for the execution being recorded (0: none): the
    /// object's identity, as a handle value may come back after a destroy.
    pub(super) bound: AtomicU64,
    /// An image's view of the execution being recorded (null: none).
    pub(super) view: AtomicU64,
    /// The memory every image or buffer of its description needs.
    pub(super) memory: TransientMemory,
}
