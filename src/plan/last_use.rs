//! Accesses after which nothing in the same graph may use the resource: a present and a host
//! access.
//!
//! - **Present.** After `vkQueuePresentKHR` the application must not use a swapchain image
//!   until `vkAcquireNextImageKHR` returns it again (WSI chapter: "use of a presentable image
//!   must occur only after the image is returned by vkAcquireNextImageKHR, and before it is
//!   released by vkQueuePresentKHR"; layout transitions included). No barrier or semaphore
//!   orders an access after the presentation engine's read; only a new acquire does, and that
//!   acquire cannot return an image this graph presents: the app acquires before it submits
//!   the graph, while it still holds the image. Only images are presented.
//! - **Host access.** A [`Access::HOST_READ`] or [`Access::HOST_WRITE`] pass makes the GPU's
//!   writes available to the host; the host itself reads or writes only once the execution's
//!   fence has signalled, after every pass of the graph. A use of the resource later in the
//!   same graph would run before the host access it follows in program order, and no barrier
//!   or semaphore can wait for the host there.
//!
//! So any use after either, in the same graph, is an input error; the next graph may use the
//! resource again.

use super::{PlanInput, ResourceKind};
use crate::access::Access;
use crate::error::{Error, Result};
use ash::vk;

/// Whether `a` hands the image to the presentation engine ([`Access::PRESENT`]).
pub(super) fn is_present(a: &Access) -> bool {
    a.stages.is_empty() && a.layout == Access::PRESENT.layout
}

/// Whether `a` is an access of the host, which happens after the execution's fence.
fn is_host(a: &Access) -> bool {
    a.stages.intersects(vk::PipelineStageFlags2::HOST)
}

/// Refuses a present of a buffer, and any use of a resource after a pass presented it or
/// declared a host access to it. Indices were validated before.
pub(super) fn check(input: &PlanInput) -> Result<()> {
    // Per resource: the pass whose access ended its use in this graph, and whether it was a
    // present.
    let mut ended_by: Vec<Option<(usize, bool)>> = vec![None; input.resources.len()];
    for (pi, pass) in input.passes.iter().enumerate() {
        for u in &pass.uses {
            let resource = &input.resources[u.resource];
            if let Some((by, present)) = ended_by[u.resource] {
                let why = if present {
                    "presented it: a presented image belongs to the presentation engine until \
                     an acquire returns it, in a later graph"
                } else {
                    "declared a host access to it: the host acts only once the execution's fence \
                     signals, after every pass of the graph; use it again in a later graph"
                };
                return Err(Error::InvalidInput(format!(
                    "pass `{}` uses `{}` after pass `{}` {why}",
                    pass.name, resource.name, input.passes[by].name
                )));
            }
            if is_present(&u.access) && matches!(resource.kind, ResourceKind::Buffer { .. }) {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` presents `{}`, a buffer: only swapchain images are presented",
                    pass.name, resource.name
                )));
            }
        }
        for u in &pass.uses {
            if is_present(&u.access) {
                ended_by[u.resource] = Some((pi, true));
            } else if is_host(&u.access) {
                ended_by[u.resource] = Some((pi, false));
            }
        }
    }
    Ok(())
}
