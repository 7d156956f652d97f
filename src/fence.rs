//! [`ExecutionFence`]: waits for one execution and keeps what it uses alive until then; and
//! [`CompletionToken`], a cloneable "is it done yet" for objects that outlive the fence.
//!
//! ```no_run
//! # fn f(fence: vk_baton::ExecutionFence) -> vk_baton::Result<()> {
//! use std::time::Duration;
//! if !fence.wait_timeout(Duration::from_millis(1))? {
//!     fence.wait()?;
//! }
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::graph::GraphShared;
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

struct Completion {
    fences: Vec<vk::Fence>,
    submitted: bool,
    done: bool,
    /// The execution failed before all of it reached the GPU: its results never appear.
    failed: bool,
}

struct TokenInner {
    device: Arc<ash::Device>,
    state: Mutex<Completion>,
}

/// Reports whether one execution's GPU work has completed. Cheap to clone; outlives the
/// [`ExecutionFence`]. Get one from [`crate::Recorder::completion`] or
/// [`ExecutionFence::completion`].
///
/// An execution either completes or fails before reaching the GPU (a pass's `record()`
/// returned an error or panicked, the plan was stale, a submit failed). A failed one never
/// completes: [`CompletionToken::has_failed`] turns true and [`CompletionToken::check`]
/// returns [`Error::NotExecuted`]. A token from a fence that `execute()` returned cannot fail
/// any more; one a pass got while recording can, so wait on it with `check()`:
///
/// ```no_run
/// # fn f(token: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
/// use vk_baton::Error;
/// loop {
///     match token.check() {
///         Ok(()) => break,                               // complete
///         Err(Error::NotReady) => std::thread::yield_now(), // still running
///         Err(e) => return Err(e),                       // NotExecuted, device loss
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CompletionToken(Arc<TokenInner>);

impl CompletionToken {
    pub(crate) fn new(device: Arc<ash::Device>) -> Self {
        Self(Arc::new(TokenInner {
            device,
            state: Mutex::new(Completion {
                fences: Vec::new(),
                submitted: false,
                done: false,
                failed: false,
            }),
        }))
    }

    /// Records the fences the execution was submitted with (an empty list: nothing to wait
    /// for, complete at once).
    pub(crate) fn set_submitted(&self, fences: Vec<vk::Fence>) {
        let mut s = self.0.state.lock();
        s.done = fences.is_empty();
        s.fences = fences;
        s.submitted = true;
    }

    /// Marks the execution as failed: users see it never complete ([`Error::NotExecuted`]),
    /// while the graph still tracks whatever part of it did reach the GPU.
    pub(crate) fn set_failed(&self) {
        self.0.state.lock().failed = true;
    }

    /// Marks the work complete: after this the fences are never touched through the token,
    /// so the owner may recycle them.
    pub(crate) fn mark_done(&self) {
        let mut s = self.0.state.lock();
        s.done = true;
        s.fences.clear();
    }

    pub(crate) fn fences(&self) -> Vec<vk::Fence> {
        self.0.state.lock().fences.clone()
    }

    /// Queries the fences; `Ok(true)` once every one has signalled.
    pub(crate) fn poll(&self) -> Result<bool> {
        let mut s = self.0.state.lock();
        if s.done {
            return Ok(true);
        }
        if !s.submitted {
            return Ok(false);
        }
        for &f in &s.fences {
            // SAFETY: the fences stay alive and unrecycled until `done` is set, which
            // happens under this lock.
            if !unsafe { self.0.device.get_fence_status(f) }
                .map_err(|e| Error::vk("vkGetFenceStatus", e))?
            {
                return Ok(false);
            }
        }
        s.done = true;
        s.fences.clear();
        Ok(true)
    }

    /// Whether the execution's GPU work has completed. `false` before it is submitted, for good
    /// if it failed before reaching the GPU ([`CompletionToken::has_failed`] tells), and (with
    /// an error logged) after device loss.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton::CompletionToken) {
    /// if t.is_complete() { /* safe to read results */ }
    /// # }
    /// ```
    pub fn is_complete(&self) -> bool {
        if self.0.state.lock().failed {
            return false;
        }
        self.poll().unwrap_or_else(|e| {
            log::error!("completion query failed: {e}");
            false
        })
    }

    /// Whether the execution failed before its work reached the GPU: it never completes, and
    /// [`CompletionToken::check`] returns [`Error::NotExecuted`]. `false` while recording and
    /// once submitted.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton::CompletionToken) {
    /// while !t.is_complete() && !t.has_failed() { std::thread::yield_now(); }
    /// # }
    /// ```
    pub fn has_failed(&self) -> bool {
        self.0.state.lock().failed
    }

    /// `Ok(())` when complete, [`Error::NotReady`] while running, [`Error::NotExecuted`] if the
    /// execution failed before it reached the GPU; for `?` in download handles.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
    /// t.check()?;
    /// # Ok(()) }
    /// ```
    pub fn check(&self) -> Result<()> {
        if self.0.state.lock().failed {
            return Err(Error::NotExecuted);
        }
        if self.poll()? {
            Ok(())
        } else {
            Err(Error::NotReady)
        }
    }
}

impl std::fmt::Debug for CompletionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.state.lock();
        write!(
            f,
            "CompletionToken {{ submitted: {}, done: {}, failed: {} }}",
            s.submitted, s.done, s.failed
        )
    }
}

/// Everything one execution keeps alive until its fences signal.
pub(crate) struct FenceContents {
    pub(crate) token: CompletionToken,
    /// Every VkFence of the execution (submitted or not) to return to the graph.
    pub(crate) fences: Vec<vk::Fence>,
    /// Command buffers to return to their family's pool.
    pub(crate) cmds: Vec<(u32, vk::CommandBuffer)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) queues: Vec<Queue>,
    pub(crate) keep: Vec<Box<dyn Any + Send + Sync>>,
}

/// Waits for one execution of a graph, and keeps every resource, pass-owned object and
/// command buffer it uses alive until the GPU has finished.
///
/// Dropping it never frees anything early: an incomplete execution's contents go to the graph,
/// which releases them once their fences signal (checked on the next `record()` and
/// `execute()`, and waited for when the graph drops).
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
    contents: Mutex<Option<FenceContents>>,
    shared: Arc<GraphShared>,
}

impl ExecutionFence {
    pub(crate) fn new(contents: FenceContents, shared: Arc<GraphShared>) -> Self {
        Self {
            token: contents.token.clone(),
            contents: Mutex::new(Some(contents)),
            shared,
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

    fn wait_for(&self, timeout_ns: u64) -> Result<bool> {
        let device = &self.shared.device;
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
        if contents.is_none() {
            return Ok(true);
        }
        let fences = self.token.fences();
        let done = if fences.is_empty() || timeout_ns == 0 {
            self.token.poll()?
        } else {
            match wait(&fences, timeout_ns) {
                Ok(()) => true,
                Err(vk::Result::TIMEOUT) => false,
                Err(e) => return Err(Error::vk("vkWaitForFences", e)),
            }
        };
        if done {
            self.token.mark_done();
            if let Some(c) = contents.take() {
                self.shared.recycle(c);
            }
        }
        Ok(done)
    }
}

impl Drop for ExecutionFence {
    fn drop(&mut self) {
        let Some(c) = self.contents.get_mut().take() else {
            return;
        };
        match self.token.poll() {
            Ok(true) => self.shared.recycle(c),
            Ok(false) => self.shared.defer(c),
            Err(e) => {
                log::error!("execution fence dropped after {e}: leaking its resources rather than freeing them while the GPU may use them");
                std::mem::forget(c);
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
            .insert_pass("fill", &mut fill, &ctx.graphics)
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
