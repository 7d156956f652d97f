//! [`InFlight`]: what one execution keeps alive until its fences signal, held by its
//! [`crate::ExecutionFence`] (or by the graph's pools, once the fence was dropped early).

use super::pools::PoolKey;
#[cfg(feature = "timing")]
use super::timestamps::ExecutionTimer;
use crate::completion::CompletionToken;
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use std::any::Any;

/// Everything one execution keeps alive until its fences signal.
pub(crate) struct InFlight {
    pub(super) token: CompletionToken,
    /// Every VkFence of the execution (submitted or not) to return to the pools.
    pub(super) fences: Vec<vk::Fence>,
    /// Command buffers to return to their pool.
    pub(super) cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    pub(super) resources: Vec<Resource>,
    pub(super) queues: Vec<Queue>,
    /// Per queue of `queues`: the timeline value known reached once the execution's fences
    /// signal (its own last value there, or the highest it waited for), 0 for none.
    pub(super) reached: Vec<u64>,
    pub(super) keep: Vec<Box<dyn Any + Send + Sync>>,
    /// The timestamp queries, when the graph is timed.
    #[cfg(feature = "timing")]
    pub(super) timer: Option<ExecutionTimer>,
}

impl InFlight {
    /// Tells the queues what the host now knows complete: call once its fences were seen
    /// signalled (never for an execution that failed).
    pub(super) fn note_reached(&self) {
        for (q, &v) in self.queues.iter().zip(&self.reached) {
            if v != 0 {
                q.note_host_complete(v);
            }
        }
    }
}
