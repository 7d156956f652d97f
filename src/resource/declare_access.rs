//! Declaring, in the access vocabulary of passes, what the app's own work did to a resource.

use super::{ResourceState, StBuffer, StImage};
use crate::access::Access;
use crate::queue::Queue;
use ash::vk;

/// The state after the app's `access` on `queue`: defined, in the access's layout, owned by
/// the queue's family unless the resource is CONCURRENT.
fn after(
    queue: &Queue,
    access: Access,
    layout: vk::ImageLayout,
    concurrent: bool,
) -> ResourceState {
    let state = ResourceState::defined(layout).last_access(queue, access.stages, access.access);
    if concurrent {
        state
    } else {
        state.owned_by(queue.family())
    }
}

impl StImage {
    /// Declares that the app's own work on `queue` last touched the whole image with `access`
    /// (the same constants a pass declares), leaving it in the access's layout. The next graph
    /// chains from those stages and accesses and transitions from that layout. For work made
    /// through a handoff (`Graph::hand_off`) there is nothing to declare.
    ///
    /// As with [`StImage::declare_state`], the app's work must be ordered before the next
    /// graph's by submission order on `queue` (or the app's own semaphores).
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// // The app's own compute shader wrote the image (GENERAL) on `q`.
    /// img.declare_access(q, Access::COMPUTE_SHADER_WRITE);
    /// # }
    /// ```
    pub fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        self.declare_state(after(queue, access, access.layout, concurrent));
    }
}

impl StBuffer {
    /// Declares that the app's own work on `queue` last touched the whole buffer with
    /// `access`; see [`StImage::declare_access`].
    ///
    /// ```no_run
    /// # fn f(buf: &vk_baton::StBuffer, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// buf.declare_access(q, Access::TRANSFER_WRITE); // the app's own vkCmdFillBuffer
    /// # }
    /// ```
    pub fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        self.declare_state(after(queue, access, vk::ImageLayout::UNDEFINED, concurrent));
    }
}
