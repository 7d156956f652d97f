//! The Vulkan handle a resource records with: its own, or, for a transient, the one the graph
//! bound for the execution being recorded.

use ash::vk;
use std::sync::atomic::{AtomicU64, Ordering};

/// A Vulkan handle that a transient resource changes for each execution (a plain one for
/// every other resource).
pub(super) struct CurrentHandle(AtomicU64);

impl CurrentHandle {
    pub(super) fn new<H: vk::Handle>(h: H) -> Self {
        CurrentHandle(AtomicU64::new(h.as_raw()))
    }

    pub(super) fn get<H: vk::Handle>(&self) -> H {
        // Relaxed: the graph sets it under its lock on the thread that then records the passes.
        H::from_raw(self.0.load(Ordering::Relaxed))
    }

    #[cfg(feature = "transients")]
    pub(super) fn set<H: vk::Handle>(&self, h: H) {
        self.0.store(h.as_raw(), Ordering::Relaxed)
    }
}
