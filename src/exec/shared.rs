//! [`GraphPools`]: the Vulkan objects a graph reuses from one execution to the next (its
//! [`Reusable`] command pools and fences), the executions still in flight whose fences were
//! dropped early, and the emptied lists of the last executions.
//!
//! [`GraphPools`] is what a [`crate::Graph`], its executions and their
//! [`crate::ExecutionFence`]s share. An execution takes command buffers and fences from it while
//! recording and hands them back, with everything else it kept alive, as an [`InFlight`] once
//! its fences have signalled.

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::sync::Mutex;
use ash::vk;
use parking_lot::{MappedMutexGuard, MutexGuard};
use std::any::Any;
use std::sync::{Arc, OnceLock};

use super::pools::Reusable;
use crate::extensions::{Extensions, TransientHooks};
use crate::fence::{InFlight, PoolKey, Pools};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};

/// How many completed executions fences may hand back before the next execution reuses
/// them: more than a frame loop has in flight.
const RETURNED: usize = 16;

/// The part of a graph that its executions and their fences share.
pub(crate) struct GraphPools {
    pub(super) device: Arc<ash::Device>,
    pub(super) debug: Option<DebugUtils>,
    pub(super) reusable: Mutex<Reusable>,
    /// Where fences hand completed executions back, for the next one to reuse
    /// ([`GraphPools::give_back`]); `reusable` holds the other end.
    returned: SyncSender<InFlight>,
    /// Contents of dropped, incomplete execution fences.
    pending: Mutex<Vec<InFlight>>,
    /// Whether `pending` may hold any: a frame whose fences were all waited for takes no lock
    /// to look.
    any_pending: std::sync::atomic::AtomicBool,
    /// Moves on each time the app says its passes' recordings are stale
    /// ([`crate::Graph::invalidate_recordings`]): part of every kept recording's key.
    epoch: std::sync::atomic::AtomicU64,
    /// The transients' handles, memory and objects, once the `transients` leaf installed them
    /// (dropped after `Drop` has waited for every execution, before the device can go).
    transients: OnceLock<Box<dyn TransientHooks>>,
    /// What must outlive the pools ([`crate::Graph::with_device_owner`]: what destroys the
    /// device): the last field, so it drops after `Drop` destroyed the pools and fences.
    device_owner: Option<Arc<dyn Any + Send + Sync>>,
}

impl GraphPools {
    /// Empty pools for `device`; with `debug`, the command pools get names. `device_owner`
    /// (what destroys the device, if the pools should keep it alive) drops after them.
    pub(crate) fn new(
        device: Arc<ash::Device>,
        debug: Option<DebugUtils>,
        device_owner: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let (returned, receiver) = sync_channel(RETURNED);
        Self {
            transients: OnceLock::new(),
            device,
            debug,
            reusable: Mutex::new(Reusable::new(receiver)),
            returned,
            pending: Mutex::new(Vec::new()),
            any_pending: std::sync::atomic::AtomicBool::new(false),
            epoch: std::sync::atomic::AtomicU64::new(0),
            device_owner,
        }
    }

    /// Makes every kept recording stale ([`crate::Graph::invalidate_recordings`]).
    pub(crate) fn invalidate_recordings(&self) {
        self.epoch
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// What kept recordings are checked against: see `invalidate_recordings`.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The transients' handles, memory and objects, which executions bind, once the
    /// `transients` leaf installed them.
    pub(crate) fn transients(&self) -> &OnceLock<Box<dyn TransientHooks>> {
        &self.transients
    }

    /// Returns an execution's command buffers and fences for reuse and drops the rest, under
    /// the pools' lock. Only call once its fences have signalled (or it was never submitted).
    pub(super) fn recycle(&self, mut c: InFlight) {
        // What the execution kept alive is released here, before the lock below.
        c.release(&self.device);
        self.reusable.lock().reuse(c);
    }

    /// The graph's part of the optional features, locked with the command pools: to set
    /// them up ([`crate::Graph::set_gpu_timings`], `Graph::set_recording_threads`).
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    pub(crate) fn extensions(&self) -> MappedMutexGuard<'_, Extensions> {
        MutexGuard::map(self.reusable.lock(), |r| &mut r.extensions)
    }

    /// Keeps an incomplete execution's contents until its fences signal.
    pub(super) fn defer(&self, c: InFlight) {
        let mut pending = self.pending.lock();
        pending.push(c);
        self.any_pending
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Releases the deferred executions that have completed.
    pub(crate) fn collect(&self) {
        use std::sync::atomic::Ordering;
        if !self.any_pending.load(Ordering::Acquire) {
            return;
        }
        let mut done = Vec::new();
        {
            let mut pending = self.pending.lock();
            let mut i = 0;
            while i < pending.len() {
                match pending[i].token.poll() {
                    Ok(true) => done.push(pending.swap_remove(i)),
                    Ok(false) => i += 1,
                    Err(e) => {
                        log::error!("deferred execution: {e}; keeping its resources");
                        i += 1;
                    }
                }
            }
            self.any_pending
                .store(!pending.is_empty(), Ordering::Release);
        }
        for c in done {
            self.recycle_completed(c);
        }
    }

    /// Recycles a completed execution whose fence is gone, letting the optional parts see
    /// it complete first (timing logs the GPU times at debug level): nobody else will.
    pub(super) fn recycle_completed(&self, mut c: InFlight) {
        c.note_reached();
        c.ext.complete_unseen(&self.device);
        self.recycle(c);
    }

    /// Allocates (or reuses) a primary command buffer from the pool `key`. Call with
    /// `reusable` locked.
    pub(super) fn command_buffer(
        &self,
        reusable: &mut Reusable,
        key: PoolKey,
    ) -> Result<vk::CommandBuffer> {
        let PoolKey { family, thread } = key;
        let fp = reusable.families.entry(key).or_default();
        if fp.pool == vk::CommandPool::null() {
            let info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            // SAFETY: valid create info on a live device.
            fp.pool = unsafe { self.device.create_command_pool(&info, None) }
                .map_err(|e| Error::vk("vkCreateCommandPool", e))?;
            if let Some(d) = &self.debug {
                // SAFETY: the pool is a live object of the graph's device, which `d` was
                // loaded for (`Graph::new`'s contract).
                let name = match thread {
                    0 => format!("vk-baton pool (family {family})"),
                    t => format!("vk-baton pool (family {family}, recording thread {t})"),
                };
                unsafe { d.set_name(fp.pool, &name) };
            }
        }
        if let Some(cmd) = fp.free.pop() {
            return Ok(cmd);
        }
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(fp.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is live and externally synchronized by the `reusable` lock.
        let cmds = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(|e| Error::vk("vkAllocateCommandBuffers", e))?;
        Ok(cmds[0])
    }

    /// An unsignalled fence. Call with `reusable` locked.
    pub(super) fn fence(&self, reusable: &mut Reusable) -> Result<vk::Fence> {
        if let Some(f) = reusable.fences.pop() {
            return Ok(f);
        }
        // SAFETY: valid create info on a live device.
        unsafe {
            self.device
                .create_fence(&vk::FenceCreateInfo::default(), None)
        }
        .map_err(|e| Error::vk("vkCreateFence", e))
    }
}

impl Pools for GraphPools {
    fn device(&self) -> &ash::Device {
        &self.device
    }

    /// [`GraphPools::recycle`] without a lock: what the execution kept alive is released
    /// now, and the rest goes to the next execution, which reuses it under the lock it takes
    /// to record. Should the channel be full (many executions completed and none started
    /// since), it waits with the pending ones for the next execution's `collect`.
    fn give_back(&self, mut c: InFlight) {
        c.release(&self.device);
        if let Err(e) = self.returned.try_send(c) {
            let c = match e {
                TrySendError::Full(c) | TrySendError::Disconnected(c) => c,
            };
            self.defer(c);
        }
    }

    /// Never takes the pools' lock: a fence or a frame's kept recordings may be dropped
    /// while the same thread records (a pass's `record()` that drops them).
    fn dropped(&self, mut c: InFlight) {
        match c.token.poll() {
            Ok(true) => {
                c.note_reached();
                c.ext.complete_unseen(&self.device);
                self.give_back(c);
            }
            Ok(false) => self.defer(c),
            Err(e) => {
                log::error!("execution fence dropped after {e}: leaking its resources rather than freeing them while the GPU may use them");
                std::mem::forget(c);
            }
        }
    }
}

impl Drop for GraphPools {
    fn drop(&mut self) {
        // Wait for every deferred execution, then destroy pools and fences.
        let pending = std::mem::take(self.pending.get_mut());
        let mut leak = false;
        for c in pending {
            let fences = c.token.fences();
            // SAFETY: the fences are live; waiting has no other precondition.
            let r = if fences.is_empty() {
                Ok(())
            } else {
                unsafe { self.device.wait_for_fences(&fences, true, u64::MAX) }
            };
            match r {
                Ok(()) => {
                    c.token.mark_done();
                    self.recycle_completed(c);
                }
                Err(e) => {
                    log::error!("graph dropped while an execution's fence failed ({e}): leaking its resources and pools");
                    leak = true;
                    std::mem::forget(c);
                }
            }
        }
        if leak {
            // The device must then outlive what leaked.
            std::mem::forget(self.device_owner.take());
            return;
        }
        let reusable = self.reusable.get_mut();
        reusable.take_returned();
        reusable.extensions.destroy(&self.device);
        for f in reusable.fences.drain(..) {
            // SAFETY: recycled fences are not in use.
            unsafe { self.device.destroy_fence(f, None) };
        }
        for (_, fp) in reusable.families.drain() {
            if fp.pool != vk::CommandPool::null() {
                // SAFETY: every command buffer of the pool has completed (all executions
                // were waited for); destroying the pool frees them.
                unsafe { self.device.destroy_command_pool(fp.pool, None) };
            }
        }
    }
}

#[cfg(test)]
impl GraphPools {
    /// (queue family, recording thread, spare command buffers) of every command pool, sorted.
    pub(crate) fn free_command_buffers(&self) -> Vec<(u32, usize, Vec<vk::CommandBuffer>)> {
        let mut reusable = self.reusable.lock();
        reusable.take_returned();
        let mut pools: Vec<_> = (reusable.families.iter())
            .map(|(k, p)| (k.family, k.thread, p.free.clone()))
            .collect();
        pools.sort_by_key(|p| (p.0, p.1));
        pools
    }
}
