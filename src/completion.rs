//! [`CompletionToken`]: a cloneable "is this execution done yet" that outlives the execution's
//! fence; download handles keep one and refuse to read before the GPU is done.
//!
//! The lowest layer of the runtime: it knows the execution's `VkFence`s and nothing else, so
//! the pools, the execution fence and the passes' [`crate::Recorder`] can all hold one.

use crate::error::{Error, Result};
use ash::vk;
use parking_lot::Mutex;
use std::sync::Arc;

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
/// [`ExecutionFence`](crate::ExecutionFence). Get one from [`crate::Recorder::completion`] or
/// [`ExecutionFence::completion`](crate::ExecutionFence::completion).
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
    pub(crate) fn set_submitted(&self, fences: &[vk::Fence]) {
        let mut s = self.0.state.lock();
        s.done = fences.is_empty();
        s.fences.clear();
        s.fences.extend_from_slice(fences);
        s.submitted = true;
    }

    /// If nothing but `self` refers to this token any more, resets it to a new execution's
    /// token (keeping its fence list's allocation) and returns `true`.
    pub(crate) fn reset_if_unique(&mut self) -> bool {
        let Some(inner) = Arc::get_mut(&mut self.0) else {
            return false;
        };
        let s = inner.state.get_mut();
        s.fences.clear();
        s.submitted = false;
        s.done = false;
        s.failed = false;
        true
    }

    /// Whether `other` is a clone of this token (the same execution's).
    pub(crate) fn same(&self, other: &CompletionToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
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
