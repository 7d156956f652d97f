//! The Vulkan objects executions reuse: a command pool per queue family and recording
//! thread, with its spare command buffers, and spare fences. [`Reusable`] is held locked while
//! recording: command pools need external synchronization.

#[cfg(feature = "timing")]
use super::timestamps::Instrumentation;
use ash::vk;
use std::collections::HashMap;

/// Reusable objects of one queue family.
#[derive(Default)]
pub(super) struct FamilyPool {
    pub(super) pool: vk::CommandPool,
    pub(super) free: Vec<vk::CommandBuffer>,
}

/// Which command pool a command buffer comes from: its queue family, and the recording
/// thread that uses the pool (0: the thread that calls `execute()`; see
/// [`crate::Graph::set_recording_threads`]). Command pools are externally synchronized, so
/// threads recording side by side each need their own.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct PoolKey {
    pub(super) family: u32,
    pub(super) thread: usize,
}

/// The default of [`crate::Graph::set_min_passes_per_recording_thread`].
#[cfg(feature = "parallel-recording")]
pub(crate) const DEFAULT_MIN_PASSES_PER_RECORDING_THREAD: usize = 64;

/// How executions spread their recording over threads ([`crate::Graph::set_recording_threads`]).
#[cfg(feature = "parallel-recording")]
pub(crate) struct RecordingThreads {
    pub(super) threads: std::sync::atomic::AtomicUsize,
    pub(super) min_passes: std::sync::atomic::AtomicUsize,
    /// The threads that record beside the calling one, kept from one execution to the next
    /// (with the thread count they were made for): a driver sets up each new thread that
    /// records, which costs far more than recording a few passes.
    pub(super) pool: parking_lot::Mutex<Option<(usize, std::sync::Arc<rayon_core::ThreadPool>)>>,
}

#[cfg(feature = "parallel-recording")]
impl RecordingThreads {
    /// The pool of `threads - 1` recording threads, made the first time it is needed (and
    /// again when the count changes).
    pub(super) fn pool(
        &self,
        threads: usize,
    ) -> Result<std::sync::Arc<rayon_core::ThreadPool>, rayon_core::ThreadPoolBuildError> {
        let mut pool = self.pool.lock();
        if let Some((_, p)) = pool.as_ref().filter(|(n, _)| *n == threads) {
            return Ok(p.clone());
        }
        let built = rayon_core::ThreadPoolBuilder::new()
            .num_threads(threads.saturating_sub(1).max(1))
            .thread_name(|i| format!("vk-baton recording {}", i + 1))
            .build()?;
        let built = std::sync::Arc::new(built);
        *pool = Some((threads, built.clone()));
        Ok(built)
    }
}

#[cfg(feature = "parallel-recording")]
impl Default for RecordingThreads {
    fn default() -> Self {
        RecordingThreads {
            threads: 1.into(),
            min_passes: DEFAULT_MIN_PASSES_PER_RECORDING_THREAD.into(),
            pool: Default::default(),
        }
    }
}

/// Command pools per family and recording thread, and spare fences. Held locked while
/// recording (command pools need external synchronization).
#[derive(Default)]
pub(crate) struct Reusable {
    /// Keyed by (family, thread): Fx-hashed, looked up twice per execution.
    pub(super) families: HashMap<PoolKey, FamilyPool, crate::fx::FxBuildHasher>,
    /// Unsignalled, ready to submit with.
    pub(super) fences: Vec<vk::Fence>,
    /// Per command buffer, the (queue, batch) its debug name says.
    pub(super) names: HashMap<vk::CommandBuffer, (vk::Queue, usize), crate::fx::FxBuildHasher>,
    /// Timestamp query pools.
    #[cfg(feature = "timing")]
    pub(super) instrument: Instrumentation,
}
