//! Holding GPU work back, two ways: [`Gate`], which holds it until the test opens it, so a
//! test can prove that an execution is incomplete at a given point instead of hoping the GPU
//! is slow; and [`Busy`], a long dispatch that keeps an execution in flight for a while.
//!
//! The gate is a timeline semaphore that only the host signals, in [`Gate::open`]. Before the
//! graph executes, [`Gate::hold`] submits a batch to the gate's queue that waits on it, and
//! the graph's batches queue up behind. Unlike a host-set `VkEvent` that a pending command
//! buffer waits on (`VUID-vkSetEvent-event-09543`), every step is valid usage. (A binary
//! semaphore signalled by that batch and awaited by the graph would order the graph after the
//! gate by the specification's rules too, but lavapipe's `vkQueueSubmit2` blocks until a
//! binary semaphore it waits on has its signal in flight, which the host holds back.)
//!
//! # A layer quirk behind the gate
//!
//! Validation layers 1.4.309 and 1.4.363 do not retire a batch that waited on a host-signalled
//! timeline when the host later waits on that batch's fence (`vkWaitForFences`): to the layer
//! the work behind the gate stays in flight. Valid work after the fence that reuses its memory
//! without a barrier (a graph's transient heaps, say) is then reported as a hazard against it,
//! a write-after-read for one. Waiting for the queue to be idle (`vkQueueWaitIdle`) retires it
//! (`raster_matrix/placements.rs` does). So use the gate where "incomplete" is the point of
//! the test; where it only needs executions in flight, hold them with [`Busy`] instead.
//!
//! Debian 12's layer 1.3.239 has a quirk of its own here: when the gate opens on one thread
//! while another waits for a fence behind it, the layer can wait about 10 s for its own
//! record of the signal and then report `UNASSIGNED-VkFence-state-timeout` or
//! `UNASSIGNED-VkSemaphore-state-timeout` ("most likely a validation bug"). Seen on a loaded
//! machine in `gpu::lifetime::dropping_an_incomplete_fence_frees_nothing_early`, about one
//! run in three.

use super::Compute;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::Context;

/// A host-signalled timeline semaphore that holds back the work submitted to one queue.
pub struct Gate {
    device: vk_baton::ash::Device,
    queue: Queue,
    timeline: vk::Semaphore,
    /// The value the next [`Gate::open`] signals; a [`Gate::hold`] now waits for it.
    target: AtomicU64,
}

impl Gate {
    /// A closed gate on `queue`; the queue is waited idle before the semaphore is destroyed.
    pub fn new(ctx: &Context, queue: &Queue) -> Gate {
        let device = ctx.device().clone();
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: a valid create info on a live device; destroyed in Drop.
        let timeline = unsafe { device.create_semaphore(&info, None) }.unwrap();
        Gate {
            device,
            queue: queue.clone(),
            timeline,
            target: AtomicU64::new(1),
        }
    }

    /// Holds back what is submitted to the gate's queue from now on until the gate opens: a
    /// submit that waits on the timeline for the next [`Gate::open`] (a wait before its signal,
    /// which timeline semaphores allow).
    ///
    /// Queues start batches in submission order, and the implementations we run on (lavapipe,
    /// NVIDIA) start no batch before an earlier one's waits are met. The specification does
    /// not promise the latter, so tests that rely on it check that the work is indeed
    /// incomplete: a device that ran it early fails them rather than passing them falsely.
    pub fn hold(&self) {
        let wait = [vk::SemaphoreSubmitInfo::default()
            .semaphore(self.timeline)
            .value(self.target.load(Ordering::SeqCst))
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let submit = [vk::SubmitInfo2::default().wait_semaphore_infos(&wait)];
        let lock = self.queue.lock();
        // SAFETY: the queue's submit lock is held; the timeline lives until the queue is idle
        // (Drop).
        unsafe {
            self.device
                .queue_submit2(lock.handle(), &submit, vk::Fence::null())
        }
        .unwrap();
    }

    /// Lets the held-back work run. Opening an open gate does nothing.
    pub fn open(&self) {
        let target = self.target.load(Ordering::SeqCst);
        // SAFETY: a live timeline semaphore of this device.
        let now = unsafe { self.device.get_semaphore_counter_value(self.timeline) }.unwrap();
        if now < target {
            let info = vk::SemaphoreSignalInfo::default()
                .semaphore(self.timeline)
                .value(target);
            // SAFETY: a live timeline semaphore; `target` is above its current value, and no
            // queue signals it.
            unsafe { self.device.signal_semaphore(&info) }.unwrap();
        }
    }

    /// Closes the gate again: a [`Gate::hold`] from now on waits for the next [`Gate::open`].
    pub fn close(&self) {
        // SAFETY: a live timeline semaphore of this device.
        let now = unsafe { self.device.get_semaphore_counter_value(self.timeline) }.unwrap();
        self.target.store(now + 1, Ordering::SeqCst);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        let lock = self.queue.lock();
        // SAFETY: the queue's submit lock is held; once idle, nothing uses the semaphore.
        unsafe {
            let _ = self.device.queue_wait_idle(lock.handle());
            self.device.destroy_semaphore(self.timeline, None);
        }
    }
}

/// A pass that keeps its queue busy for at least a given time: one compute dispatch of
/// `busy.comp` whose rounds are calibrated on the device when it is made. Inserted into a
/// graph's execution, it keeps that execution (and its fence) in flight for that long, with
/// nothing for a validation layer to misread: unlike the [`Gate`], no host signal is involved.
///
/// Only the execution's completion is held back: the graph may run the execution's other
/// passes beside the dispatch. A test that relies on the execution being in flight must check
/// it (`!fence.is_complete()`, or a count that only holds then), so that a device faster than
/// the calibration fails it rather than passing it falsely.
pub struct Busy {
    kit: Compute,
    /// What the dispatch writes; the graph orders the dispatches of successive executions.
    scratch: Arc<StBuffer>,
    set: vk::DescriptorSet,
    rounds: u32,
}

/// Invocations of one busy dispatch.
const BUSY_INVOCATIONS: u32 = 64 * 64;

impl Busy {
    /// A busy pass whose dispatch takes at least `at_least` on `queue`'s device: timed on
    /// `queue`, growing the rounds until one execution takes that long.
    pub fn new(ctx: &Context, queue: &Queue, at_least: Duration) -> Busy {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let kit = Compute::new(ctx, vk_baton_shaders::BUSY_COMP, storage);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let size = u64::from(BUSY_INVOCATIONS) * 4;
        let scratch = ctx.buffer(BufferDesc::new(size, usage), "busy").unwrap();
        let set = kit.buffer_set(&scratch);
        let mut busy = Busy {
            kit,
            scratch,
            set,
            rounds: 1 << 10,
        };
        let graph = ctx.graph().unwrap();
        loop {
            let start = Instant::now();
            graph
                .record()
                .insert_pass("calibrate busy", &mut busy, queue)
                .finish()
                .unwrap()
                .execute()
                .unwrap()
                .wait()
                .unwrap();
            let took = start.elapsed();
            if took >= at_least {
                return busy;
            }
            assert!(
                busy.rounds < 1 << 30,
                "a dispatch of {} rounds took only {took:?}",
                busy.rounds
            );
            // Aim a fifth past the target, at most 16 times the rounds per step.
            let scale = (at_least.as_secs_f64() * 1.2 / took.as_secs_f64().max(1e-6)).min(16.0);
            busy.rounds = (f64::from(busy.rounds) * scale)
                .ceil()
                .min(f64::from(1u32 << 30)) as u32;
        }
    }
}

impl Pass for Busy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.scratch, Access::COMPUTE_SHADER_WRITE)
            .discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let groups = BUSY_INVOCATIONS / 64;
        self.kit
            .dispatch(r, self.set, [BUSY_INVOCATIONS, self.rounds], [groups, 1, 1]);
        Ok(())
    }
}
