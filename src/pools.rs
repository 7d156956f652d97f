//! The objects a graph reuses from one execution to the next: a command pool per queue family
//! with its spare command buffers, spare fences, and the executions still in flight whose
//! fences were dropped early.
//!
//! [`GraphPools`] is what a [`crate::Graph`], its executions and their
//! [`crate::ExecutionFence`]s share. An execution takes command buffers and fences from it while
//! recording and hands them back, with everything else it kept alive, as an [`InFlight`] once
//! its fences have signalled.

use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::queue::Queue;
use crate::resource::Resource;
use crate::transient::Transients;
use ash::vk;
use parking_lot::Mutex;
use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

mod kept;
mod plan_barriers;
mod plan_labels;
mod spares;
mod timestamps;
mod workers;

pub(crate) use kept::{KeptPlans, Match};
pub(crate) use plan_barriers::{dependency_info, PlanBarriers};
pub(crate) use plan_labels::PlanLabels;
pub(crate) use spares::{give, take, BarrierScratch, EmptyVec, Spares, SubmitScratch};
pub(crate) use timestamps::{ExecutionTimer, Instrumentation};
pub(crate) use workers::{RecordingWorkers, Task};

/// Everything one execution keeps alive until its fences signal.
pub(crate) struct InFlight {
    pub(crate) token: CompletionToken,
    /// Every VkFence of the execution (submitted or not) to return to the pools.
    pub(crate) fences: Vec<vk::Fence>,
    /// Command buffers to return to their pool.
    pub(crate) cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) queues: Vec<Queue>,
    /// Per queue of `queues`: the timeline value known reached once the execution's fences
    /// signal (its own last value there, or the highest it waited for), 0 for none.
    pub(crate) reached: Vec<u64>,
    pub(crate) keep: Vec<Box<dyn Any + Send + Sync>>,
    /// The timestamp queries, when the graph is timed.
    pub(crate) timer: Option<ExecutionTimer>,
}

impl InFlight {
    /// Tells the queues what the host now knows complete: call once its fences were seen
    /// signalled (never for an execution that failed).
    pub(crate) fn note_reached(&self) {
        for (q, &v) in self.queues.iter().zip(&self.reached) {
            if v != 0 {
                q.note_host_complete(v);
            }
        }
    }
}

/// Reusable objects of one queue family.
#[derive(Default)]
pub(crate) struct FamilyPool {
    pub(crate) pool: vk::CommandPool,
    pub(crate) free: Vec<vk::CommandBuffer>,
}

/// Which command pool a command buffer comes from: its queue family, and the recording
/// thread that uses the pool (0: the thread that calls `execute()`; see
/// [`crate::Graph::set_recording_threads`]). Command pools are externally synchronized, so
/// threads recording side by side each need their own.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct PoolKey {
    pub(crate) family: u32,
    pub(crate) thread: usize,
}

impl PoolKey {
    /// The calling thread's pool of `family`.
    pub(crate) fn main(family: u32) -> Self {
        PoolKey { family, thread: 0 }
    }
}

/// How executions spread their recording over threads ([`crate::Graph::set_recording_threads`]).
pub(crate) struct RecordingThreads {
    pub(crate) threads: std::sync::atomic::AtomicUsize,
    pub(crate) min_passes: std::sync::atomic::AtomicUsize,
}

impl Default for RecordingThreads {
    fn default() -> Self {
        RecordingThreads {
            threads: 1.into(),
            min_passes: crate::Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD.into(),
        }
    }
}

/// Command pools per family and recording thread, and spare fences. Held locked while
/// recording (command pools need external synchronization).
#[derive(Default)]
pub(crate) struct Reusable {
    /// Keyed by (family, thread): Fx-hashed, looked up twice per execution.
    pub(crate) families: HashMap<PoolKey, FamilyPool, crate::fx::FxBuildHasher>,
    /// Unsignalled, ready to submit with.
    pub(crate) fences: Vec<vk::Fence>,
    /// Timestamp query pools and command buffer names.
    pub(crate) instrument: Instrumentation,
    /// The threads that record beside the calling one, started by the first execution that
    /// needs them.
    pub(crate) workers: RecordingWorkers,
}

/// The part of a graph that its executions and their fences share.
pub(crate) struct GraphPools {
    pub(crate) device: Arc<ash::Device>,
    pub(crate) debug: Option<DebugUtils>,
    /// Whether each pass is recorded inside a debug label with its name (with `debug`).
    pub(crate) labels: std::sync::atomic::AtomicBool,
    /// How many threads record an execution.
    pub(crate) recording: RecordingThreads,
    pub(crate) reusable: Mutex<Reusable>,
    /// Contents of dropped, incomplete execution fences.
    pending: Mutex<Vec<InFlight>>,
    /// The last few executed plans, kept so that the next `finish()` reuses or refills one.
    pub(crate) kept: Mutex<KeptPlans>,
    /// Emptied vectors, scratch space and spent tokens for the next execution.
    pub(crate) spares: Mutex<Spares>,
    /// Pass-name strings of the last execution, refilled by the next builder's passes.
    pub(crate) spare_names: Mutex<Vec<String>>,
    /// How many passes the last builder had: the next one reserves that many up front.
    pub(crate) pass_count_hint: std::sync::atomic::AtomicUsize,
    /// The transients' handles, memory and objects (dropped after `Drop` has waited for every
    /// execution, before the device can go).
    pub(crate) transients: Transients,
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
            transients: Transients::new(device.clone()),
            device,
            debug,
            labels: std::sync::atomic::AtomicBool::new(true),
            recording: RecordingThreads::default(),
            reusable: Mutex::new(Reusable::default()),
            pending: Mutex::new(Vec::new()),
            kept: Mutex::new(KeptPlans::default()),
            spares: Mutex::new(Spares::default()),
            spare_names: Mutex::new(Vec::new()),
            pass_count_hint: std::sync::atomic::AtomicUsize::new(0),
            device_owner,
        }
    }

    /// Returns an execution's command buffers and fences for reuse and drops the rest.
    /// Only call once its fences have signalled (or it was never submitted).
    pub(crate) fn recycle(&self, c: InFlight) {
        let InFlight {
            token,
            mut fences,
            mut cmds,
            resources,
            queues,
            reached,
            mut keep,
            timer,
        } = c;
        {
            let mut reusable = self.reusable.lock();
            if let Some(t) = timer {
                reusable.instrument.give(t);
            }
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
        let mut spares = self.spares.lock();
        give(&mut spares.fences, fences);
        give(&mut spares.cmds, cmds);
        give(&mut spares.keep, keep);
        give(&mut spares.resources, resources);
        give(&mut spares.queues, queues);
        give(&mut spares.reached, reached);
        spares.give_token(token);
    }

    /// Keeps an incomplete execution's contents until its fences signal.
    pub(crate) fn defer(&self, c: InFlight) {
        self.pending.lock().push(c);
    }

    /// Releases the deferred executions that have completed.
    pub(crate) fn collect(&self) {
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
        }
        for c in done {
            self.recycle_completed(c);
        }
    }

    /// Recycles a completed execution whose fence is gone, logging its GPU times first (at
    /// debug level, if timed): nobody else will see them.
    pub(crate) fn recycle_completed(&self, mut c: InFlight) {
        c.note_reached();
        let logged = log::log_enabled!(target: crate::timing::LOG_TARGET, log::Level::Debug);
        if let (Some(t), true) = (&mut c.timer, logged) {
            t.finish(&self.device);
        }
        self.recycle(c);
    }

    /// Allocates (or reuses) a primary command buffer from the pool `key`. Call with
    /// `reusable` locked.
    pub(crate) fn command_buffer(
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
    pub(crate) fn fence(&self, reusable: &mut Reusable) -> Result<vk::Fence> {
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
        reusable.instrument.destroy(&self.device);
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
