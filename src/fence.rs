//! [`ExecutionFence`]: waits for one execution and keeps what it uses alive until then; and
//! [`CompletionToken`], a cloneable "is it done yet" for objects that outlive the fence.
//!
//! The fence holds the execution's `InFlight` until it sees it complete, and then hands it
//! back to its graph's pools through the one thing it knows of them, `Pools` (the executor
//! implements it).
//!
//! ```no_run
//! # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
//! use std::time::Duration;
//! if !fence.wait_timeout(Duration::from_millis(1))? {
//!     fence.wait()?;
//! }
//! # Ok(()) }
//! ```

pub use crate::completion::CompletionToken;
use crate::error::{Error, Result};
use crate::extensions::{CompletedExtensions, ExecutionExtensions};
use crate::queue::Queue;
use crate::resource::Resource;
use crate::sync::Mutex;
use ash::vk;
use parking_lot::{MappedMutexGuard, MutexGuard};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

/// Waits for one execution of a graph, and keeps every resource, pass-owned object and
/// command buffer it uses alive until the GPU has finished.
///
/// Dropping it never frees anything early: an incomplete execution's contents go to the graph,
/// which releases them once their fences signal (checked on the next `record()` and
/// `execute()`, and waited for when the graph drops).
///
/// # Dropping the last one blocks
///
/// A fence keeps its graph's pools alive. When the graph is gone, the last fence to drop
/// destroys them, and first waits, without a timeout, for every execution of that graph still
/// running: as long as their GPU work takes. Dropped on a thread that work needs (one that
/// would later signal a timeline value, event or external semaphore it waits on), it never
/// returns. [`ExecutionFence::wait`] first, or drop the fences before the graph, where that
/// can happen.
///
/// ```no_run
/// # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
/// if !fence.is_complete() {
///     fence.wait()?;
/// }
/// # Ok(()) }
/// ```
#[must_use = "dropping the fence does not wait; call wait() to block until the GPU is done"]
pub struct ExecutionFence {
    token: CompletionToken,
    /// The fence's one lock.
    contents: Mutex<Contents>,
    pools: Arc<dyn Pools>,
    /// The execution submitted command buffers recorded for an earlier one.
    replayed: bool,
}

/// What an execution fence holds: the execution until it completes, then what the optional
/// parts read when it did.
struct Contents {
    /// What the execution keeps alive, until the fence sees it complete.
    in_flight: Option<InFlight>,
    /// What the optional parts read when the execution completed (the GPU times).
    completed: CompletedExtensions,
}

impl ExecutionFence {
    /// The fence of the execution `contents`, whose objects go back to `pools`; `replayed`
    /// says whether it submitted a kept recording again.
    pub(crate) fn new(contents: InFlight, pools: Arc<dyn Pools>, replayed: bool) -> Self {
        Self {
            replayed,
            token: contents.token.clone(),
            contents: Mutex::new(Contents {
                in_flight: Some(contents),
                completed: CompletedExtensions::default(),
            }),
            pools,
        }
    }

    /// Blocks until the GPU has finished the execution, then releases what it kept alive.
    /// Returns [`Error::DeviceLost`] if the device is lost (nothing is freed then).
    ///
    /// ```no_run
    /// # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
    /// fence.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn wait(&self) -> Result<()> {
        self.wait_for(u64::MAX).map(|_| ())
    }

    /// Waits at most `timeout`; `Ok(true)` if the execution completed.
    ///
    /// ```no_run
    /// # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
    /// let done = fence.wait_timeout(std::time::Duration::from_millis(16))?;
    /// # Ok(()) }
    /// ```
    pub fn wait_timeout(&self, timeout: Duration) -> Result<bool> {
        self.wait_for(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX))
    }

    /// Whether the execution completed (releasing what it kept alive if so). Never blocks.
    /// `false`, with an error logged, after device loss.
    ///
    /// ```no_run
    /// # fn f(fence: &vk_baton::ExecutionFence) {
    /// let done = fence.is_complete();
    /// # }
    /// ```
    pub fn is_complete(&self) -> bool {
        match self.wait_for(0) {
            Ok(done) => done,
            Err(e) => {
                log::error!("execution fence: {e}");
                false
            }
        }
    }

    /// A token that reports completion and outlives the fence.
    ///
    /// ```no_run
    /// # fn f(fence: &vk_baton::ExecutionFence) {
    /// let t = fence.completion();
    /// # }
    /// ```
    pub fn completion(&self) -> CompletionToken {
        self.token.clone()
    }

    /// Whether the execution submitted command buffers recorded for an earlier one again,
    /// recording nothing ([`crate::Graph::set_replay`]).
    ///
    /// ```no_run
    /// # fn f(fence: &vk_baton::ExecutionFence) {
    /// if fence.replayed() {
    ///     log::trace!("no pass recorded this frame");
    /// }
    /// # }
    /// ```
    pub fn replayed(&self) -> bool {
        self.replayed
    }

    /// The optional parts' share of the fence: what they read when the execution completed
    /// (the GPU times), once it has; `None` while the GPU is still running (this never
    /// blocks).
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    pub(crate) fn extensions(&self) -> Option<MappedMutexGuard<'_, CompletedExtensions>> {
        if !self.is_complete() {
            return None;
        }
        Some(MutexGuard::map(self.contents.lock(), |c| &mut c.completed))
    }

    fn wait_for(&self, timeout_ns: u64) -> Result<bool> {
        let device = self.pools.device();
        // SAFETY: the fences belong to this execution and stay unrecycled while its contents
        // are held (`wait_with` holds them during the call).
        self.wait_with(timeout_ns, |fences, t| unsafe {
            device.wait_for_fences(fences, true, t)
        })
    }

    /// `wait_for` with the `vkWaitForFences` call passed in, so tests can make it fail the way
    /// a lost device does.
    fn wait_with(
        &self,
        timeout_ns: u64,
        wait: impl FnOnce(&[vk::Fence], u64) -> ash::prelude::VkResult<()>,
    ) -> Result<bool> {
        let mut contents = self.contents.lock();
        let Some(held) = contents.in_flight.as_ref() else {
            return Ok(true);
        };
        // The execution's own fences: the same as its token's, without copying them.
        let fences = &held.lists.fences;
        let done = if fences.is_empty() || timeout_ns == 0 {
            self.token.poll()?
        } else {
            match wait(fences, timeout_ns) {
                Ok(()) => true,
                Err(vk::Result::TIMEOUT) => false,
                Err(e) => return Err(Error::vk("vkWaitForFences", e)),
            }
        };
        if done {
            self.token.mark_done();
            if let Some(mut c) = contents.in_flight.take() {
                c.note_reached();
                // Read before the objects (a query pool) go back to the graph.
                contents.completed = c.ext.complete(self.pools.device());
                drop(contents);
                self.pools.give_back(c);
            }
        }
        Ok(done)
    }
}

impl Drop for ExecutionFence {
    fn drop(&mut self) {
        if let Some(c) = self.contents.get_mut().in_flight.take() {
            self.pools.dropped(c);
        }
    }
}

/// The pools an execution's objects come from and go back to, as its fence sees them.
pub(crate) trait Pools: Send + Sync {
    /// The device the fences belong to.
    fn device(&self) -> &ash::Device;
    /// Takes back an execution the fence saw complete.
    fn give_back(&self, c: InFlight);
    /// Takes an execution whose fence was dropped, complete or not: it keeps it until it is.
    fn dropped(&self, c: InFlight);
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

/// Everything one execution keeps alive until its fences signal.
pub(crate) struct InFlight {
    pub(crate) token: CompletionToken,
    pub(crate) lists: Lists,
    /// The optional parts' objects (timestamp queries).
    pub(crate) ext: ExecutionExtensions,
}

/// The lists one execution fills and its fence keeps, taken from the graph's spares and
/// given back to them together, emptied.
#[derive(Default)]
pub(crate) struct Lists {
    /// Every VkFence of the execution (submitted or not) to return to the pools.
    pub(crate) fences: Vec<vk::Fence>,
    /// Command buffers to return to their pool.
    pub(crate) cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) queues: Vec<Queue>,
    /// Per queue of `queues`: the timeline value known reached once the execution's fences
    /// signal (its own last value there, or the highest it waited for), 0 for none.
    pub(crate) reached: Vec<u64>,
    /// Objects the passes asked to keep alive until the GPU is done.
    pub(crate) keep: Vec<Box<dyn Any + Send + Sync>>,
}

impl Lists {
    /// Empties every list, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.fences.clear();
        self.cmds.clear();
        self.resources.clear();
        self.queues.clear();
        self.reached.clear();
        self.keep.clear();
    }
}

impl InFlight {
    /// Releases what the execution kept alive (the passes' objects, the resources, queues
    /// and the optional parts' objects), keeping the emptied lists for the pools, and resets
    /// its fences for the next execution. Called once the fences signalled, or for an
    /// execution that submitted nothing: as a hand-written frame loop resets its fence after
    /// the wait, on the waiting thread, and not in the next frame's recording.
    pub(crate) fn release(&mut self, device: &ash::Device) {
        self.lists.keep.clear();
        self.lists.resources.clear();
        self.lists.queues.clear();
        std::mem::take(&mut self.ext).release();
        let fences = &mut self.lists.fences;
        if fences.is_empty() {
            return;
        }
        // SAFETY: the fences are signalled or were never submitted, and this execution owns
        // them: none is in use or reset elsewhere.
        if let Err(e) = unsafe { device.reset_fences(fences) } {
            log::error!("vkResetFences failed ({e}); destroying the fences");
            for f in fences.drain(..) {
                // SAFETY: not in use (see above).
                unsafe { device.destroy_fence(f, None) };
            }
        }
    }

    /// Tells the queues what the host now knows complete: call once its fences were seen
    /// signalled (never for an execution that failed).
    pub(crate) fn note_reached(&self) {
        for (q, &v) in self.lists.queues.iter().zip(&self.lists.reached) {
            if v != 0 {
                q.note_host_complete(v);
            }
        }
    }
}

impl std::fmt::Debug for ExecutionFence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExecutionFence({:?})", self.token)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Access, BufferDesc, Context, Declare, Error, Pass, Recorder, StBuffer};
    use ash::vk;
    use std::sync::Arc;

    struct Fill(Arc<StBuffer>);

    impl Pass for Fill {
        fn declare(&self, d: &mut Declare<'_>) {
            d.uses(&self.0, Access::TRANSFER_WRITE).discard();
        }
        fn record(&mut self, r: &mut Recorder<'_>) -> crate::Result<()> {
            // SAFETY: the buffer is alive and the graph ordered this pass.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 1)
            };
            Ok(())
        }
    }

    /// Device loss during a wait is a clear error, and the execution keeps everything it
    /// holds: nothing the GPU may still use is freed.
    #[test]
    fn device_loss_during_a_wait_keeps_everything_alive() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let buf = ctx
            .buffer(
                BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
                "buf",
            )
            .unwrap();
        let graph = ctx.graph().unwrap();
        let mut fill = Fill(buf.clone());
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        let held = Arc::strong_count(&buf);
        assert!(held >= 3, "the test's, the pass's and the execution's");

        let lost = fence.wait_with(u64::MAX, |_, _| Err(vk::Result::ERROR_DEVICE_LOST));
        assert!(matches!(lost, Err(Error::DeviceLost)), "{lost:?}");
        assert_eq!(
            Arc::strong_count(&buf),
            held,
            "nothing released after device loss"
        );

        // The real wait then completes and releases the execution's hold.
        fence.wait().unwrap();
        assert_eq!(Arc::strong_count(&buf), held - 1);
        drop(fill);
        assert_eq!(Arc::strong_count(&buf), 1);
        assert_eq!(
            ctx.validation_messages(),
            0,
            "{}",
            ctx.validation_messages()
        );
    }
}
