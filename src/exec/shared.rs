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
use ash::vk;
use parking_lot::{MappedMutexGuard, Mutex, MutexGuard};
use std::any::Any;
use std::sync::{Arc, OnceLock};

use super::pools::{PoolKey, Reusable};
use super::scratch::{give, Spares};
use crate::completion::CompletionToken;
use crate::extensions::{ExecutionExtensions, Extensions, TransientHooks};
use crate::queue::Queue;
use crate::resource::Resource;

/// The part of a graph that its executions and their fences share.
pub(crate) struct GraphPools {
    pub(crate) device: Arc<ash::Device>,
    pub(crate) debug: Option<DebugUtils>,
    /// Whether each pass is recorded inside a debug label with its name (with `debug`).
    pub(crate) labels: std::sync::atomic::AtomicBool,
    pub(super) reusable: Mutex<Reusable>,
    /// Contents of dropped, incomplete execution fences.
    pending: Mutex<Vec<InFlight>>,
    /// Whether `pending` may hold any: a frame whose fences were all waited for takes no lock
    /// to look.
    any_pending: std::sync::atomic::AtomicBool,
    /// Emptied vectors, scratch space and spent tokens for the next execution.
    pub(crate) spares: Mutex<Spares>,
    /// The transients' handles, memory and objects, once the `transients` leaf installed them
    /// (dropped after `Drop` has waited for every execution, before the device can go).
    pub(crate) transients: OnceLock<Box<dyn TransientHooks>>,
    /// What must outlive the pools ([`crate::Graph::with_device_owner`]: what destroys the
    /// device): the last field, so it drops after `Drop` destroyed the pools and fences.
    device_owner: Option<Arc<dyn Any + Send + Sync>>,
}

impl GraphPools {
    /// Empty pools for `device`; with `debug`, the command pools get names. `device_owner`
    /// (what destroys the device, if the pools should keep it alive) drops after them.
    pub(crate) fn new(
        device: &ash::Device,
        debug: Option<DebugUtils>,
        device_owner: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let device = Arc::new(device.clone());
        Self {
            transients: OnceLock::new(),
            device,
            debug,
            labels: std::sync::atomic::AtomicBool::new(true),
            reusable: Mutex::new(Reusable::default()),
            pending: Mutex::new(Vec::new()),
            any_pending: std::sync::atomic::AtomicBool::new(false),
            spares: Mutex::new(Spares::default()),
            device_owner,
        }
    }

    /// Returns an execution's command buffers and fences for reuse and drops the rest.
    /// Only call once its fences have signalled (or it was never submitted).
    pub(super) fn recycle(&self, c: InFlight) {
        let InFlight {
            token,
            mut fences,
            mut cmds,
            resources,
            queues,
            reached,
            mut keep,
            ext,
        } = c;
        {
            let mut reusable = self.reusable.lock();
            if !fences.is_empty() {
                // SAFETY: the fences are signalled or were never submitted; none is in use.
                match unsafe { self.device.reset_fences(&fences) } {
                    Ok(()) => reusable.fences.append(&mut fences),
                    Err(e) => {
                        log::error!("vkResetFences failed ({e}); destroying the fences");
                        for f in fences.drain(..) {
                            // SAFETY: not in use (see above).
                            unsafe { self.device.destroy_fence(f, None) };
                        }
                    }
                }
            }
            // In reverse, so that the next execution takes them in this one's order: a command
            // buffer keeps its batch (and debug name) from frame to frame.
            for (key, cmd) in cmds.drain(..).rev() {
                reusable.families.entry(key).or_default().free.push(cmd);
            }
        }
        // What the execution kept alive is released here, before the lock below.
        keep.clear();
        ext.release();
        let mut spares = self.spares.lock();
        give(&mut spares.fences, fences);
        give(&mut spares.cmds, cmds);
        give(&mut spares.keep, keep);
        give(&mut spares.resources, resources);
        give(&mut spares.queues, queues);
        give(&mut spares.reached, reached);
        spares.give_token(token);
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
        let mut reusable = std::mem::take(self.reusable.get_mut());
        reusable.extensions.destroy(&self.device);
        for f in reusable.fences {
            // SAFETY: recycled fences are not in use.
            unsafe { self.device.destroy_fence(f, None) };
        }
        for (_, fp) in reusable.families {
            if fp.pool != vk::CommandPool::null() {
                // SAFETY: every command buffer of the pool has completed (all executions
                // were waited for); destroying the pool frees them.
                unsafe { self.device.destroy_command_pool(fp.pool, None) };
            }
        }
    }
}

/// Everything one execution keeps alive until its fences signal.
pub(crate) struct InFlight {
    pub(super) token: CompletionToken,
    /// Every VkFence of the execution (submitted or not) to return to the pools.
    pub(super) fences: Vec<vk::Fence>,
    /// Command buffers to return to their pool.
    pub(super) cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    pub(super) resources: Vec<Resource>,
    pub(super) queues: Vec<Queue>,
    /// Per queue of `queues`: the timeline value known reached once the execution's fences
    /// signal (its own last value there, or the highest it waited for), 0 for none.
    pub(super) reached: Vec<u64>,
    pub(super) keep: Vec<Box<dyn Any + Send + Sync>>,
    /// The optional parts' objects (timestamp queries).
    pub(super) ext: ExecutionExtensions,
}

impl InFlight {
    /// Tells the queues what the host now knows complete: call once its fences were seen
    /// signalled (never for an execution that failed).
    pub(super) fn note_reached(&self) {
        for (q, &v) in self.queues.iter().zip(&self.reached) {
            if v != 0 {
                q.note_host_complete(v);
            }
        }
    }
}

#[cfg(test)]
impl GraphPools {
    /// (queue family, recording thread, spare command buffers) of every command pool, sorted.
    pub(crate) fn free_command_buffers(&self) -> Vec<(u32, usize, Vec<vk::CommandBuffer>)> {
        let reusable = self.reusable.lock();
        let mut pools: Vec<_> = (reusable.families.iter())
            .map(|(k, p)| (k.family, k.thread, p.free.clone()))
            .collect();
        pools.sort_by_key(|p| (p.0, p.1));
        pools
    }
}
