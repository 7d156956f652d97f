//! [`Gate`]: holds GPU work back until the test opens it, so a test can prove that an
//! execution is incomplete at a given point instead of hoping the GPU is slow.
//!
//! A pass wrapped in [`Gated`] first waits (`vkCmdWaitEvents2`) on a `VkEvent` that only the
//! host sets, in [`Gate::open`]. A semaphore would not do on lavapipe: its `vkQueueSubmit2`
//! blocks the submitting thread until every binary semaphore it waits on has a signal in
//! flight, so a submit gated on a host-signalled semaphore chain never returns.

use vk_baton::ash::vk;
use vk_baton::{Context, Declare, Pass, Queue, Recorder};

/// A host-set `VkEvent` that [`Gated`] passes wait on.
pub struct Gate {
    device: vk_baton::ash::Device,
    queue: Queue,
    /// The event a [`Gated`] pass waits on.
    pub event: vk::Event,
}

impl Gate {
    /// A closed gate; `queue` is waited idle before the event is destroyed.
    pub fn new(ctx: &Context, queue: &Queue) -> Gate {
        let device = ctx.device().clone();
        // SAFETY: a valid create info on a live device; destroyed in Drop. Not DEVICE_ONLY:
        // the host sets it.
        let event = unsafe { device.create_event(&vk::EventCreateInfo::default(), None) }.unwrap();
        Gate {
            device,
            queue: queue.clone(),
            event,
        }
    }

    /// Lets the held-back work run.
    pub fn open(&self) {
        // SAFETY: a live event of this device.
        unsafe { self.device.set_event(self.event).unwrap() };
    }

    /// Closes the gate again. Only once the work that waited on it has completed.
    pub fn close(&self) {
        // SAFETY: a live event; no pending command waits on it (the caller's promise).
        unsafe { self.device.reset_event(self.event).unwrap() };
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        let lock = self.queue.lock();
        // SAFETY: the queue's submit lock is held; once idle, nothing uses the event.
        unsafe {
            let _ = self.device.queue_wait_idle(lock.handle());
            self.device.destroy_event(self.event, None);
        }
    }
}

/// `inner`, recorded after a wait on a [`Gate`]'s event.
pub struct Gated<P> {
    pub inner: P,
    pub gate: vk::Event,
}

impl<P: Pass> Pass for Gated<P> {
    fn declare(&self, d: &mut Declare<'_>) {
        self.inner.declare(d);
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // A host-set event: the wait's first scope holds host operations only.
        let barrier = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::HOST)
            .src_access_mask(vk::AccessFlags2::HOST_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .dst_access_mask(vk::AccessFlags2::MEMORY_READ)];
        let dep = [vk::DependencyInfo::default().memory_barriers(&barrier)];
        // SAFETY: recording; the event lives until the gate drops, after the queue is idle.
        unsafe { r.device().cmd_wait_events2(r.cmd(), &[self.gate], &dep) };
        self.inner.record(r)
    }
}
