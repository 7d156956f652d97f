//! The Vulkan objects executions reuse: a command pool per queue family and recording
//! thread, with its spare command buffers, spare fences, and the optional features' objects. [`Reusable`] is held locked while
//! recording: command pools need external synchronization.

use crate::extensions::Extensions;
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
    /// The graph's part of the optional features (timestamp query pools, recording threads).
    pub(super) extensions: Extensions,
}
