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
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// // SAFETY: the app's own compute shader wrote the whole image on `q` and left it in
    /// // GENERAL; the next graph's work on `q` comes after it in submission order.
    /// unsafe { img.declare_access(q, Access::COMPUTE_SHADER_WRITE) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::declare_state`]: the next barriers are planned from this declaration
    /// alone. The app's work really was `access` on `queue`, left the image in the access's
    /// layout (owned by the queue's family unless CONCURRENT), and is ordered before the next
    /// graph's work by submission order on `queue` or the app's own semaphores.
    pub unsafe fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        // SAFETY: this function's contract is `declare_state`'s.
        unsafe { self.declare_state(after(queue, access, access.layout, concurrent)) };
    }
}

impl StBuffer {
    /// Declares that the app's own work on `queue` last touched the whole buffer with
    /// `access`; see [`StImage::declare_access`].
    ///
    /// ```no_run
    /// # fn f(buf: &vk_baton::StBuffer, q: &vk_baton::Queue) {
    /// use vk_baton::Access;
    /// // SAFETY: the app's own vkCmdFillBuffer on `q` wrote the whole buffer, before the next
    /// // graph's work on `q` in submission order.
    /// unsafe { buf.declare_access(q, Access::TRANSFER_WRITE) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`StImage::declare_access`].
    pub unsafe fn declare_access(&self, queue: &Queue, access: Access) {
        let concurrent = self.desc().sharing.is_concurrent();
        // SAFETY: this function's contract is `declare_state`'s.
        unsafe { self.declare_state(after(queue, access, vk::ImageLayout::UNDEFINED, concurrent)) };
    }
}
