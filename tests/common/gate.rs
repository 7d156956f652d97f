//! [`Gate`]: holds GPU work back until the test opens it, so a test can prove that an
//! execution is incomplete at a given point instead of hoping the GPU is slow. (`busy.rs`
//! holds work in flight another way: with a long dispatch.)
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
//! the test; where it only needs executions in flight, hold them with `busy.rs`'s `Busy`
//! instead.
//!
//! Debian 12's layer 1.3.239 has a quirk of its own here: when the gate opens on one thread
//! while another waits for a fence behind it, the layer can wait about 10 s for its own
//! record of the signal and then report `UNASSIGNED-VkFence-state-timeout` or
//! `UNASSIGNED-VkSemaphore-state-timeout` ("most likely a validation bug"). Seen on a loaded
//! machine in `gpu::lifetime::dropping_an_incomplete_fence_frees_nothing_early`, about one
//! run in three.

use std::sync::atomic::{AtomicU64, Ordering};
use vk_baton::ash::vk;
use vk_baton::Queue;
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
