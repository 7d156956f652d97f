//! Presented images belong to the presentation engine.
//!
//! After `vkQueuePresentKHR` the application must not use a swapchain image until
//! `vkAcquireNextImageKHR` returns it again (WSI chapter: "use of a presentable image must
//! occur only after the image is returned by vkAcquireNextImageKHR, and before it is released
//! by vkQueuePresentKHR"; layout transitions included). No barrier or semaphore orders an
//! access after the presentation engine's read; only a new acquire does. And that acquire
//! cannot return an image this graph presents: the app acquires before it submits the graph,
//! while it still holds the image. So any use after a present in the same graph is an input
//! error, re-acquire or not; the next graph acquires the image again.

use super::PlanInput;
use crate::access::Access;
use crate::error::{Error, Result};

/// Whether `a` hands the image to the presentation engine ([`Access::PRESENT`]).
fn is_present(a: &Access) -> bool {
    a.stages.is_empty() && a.layout == Access::PRESENT.layout
}

/// Refuses any use of a resource after a pass presented it. Indices were validated before.
pub(super) fn check(input: &PlanInput) -> Result<()> {
    // Per resource: the pass that presented it.
    let mut presented_by: Vec<Option<usize>> = vec![None; input.resources.len()];
    for (pi, pass) in input.passes.iter().enumerate() {
        for u in &pass.uses {
            if let Some(by) = presented_by[u.resource] {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` uses `{}` after pass `{}` presented it: a presented image belongs to \
                     the presentation engine until an acquire returns it, in a later graph",
                    pass.name, input.resources[u.resource].name, input.passes[by].name
                )));
            }
        }
        for u in pass.uses.iter().filter(|u| is_present(&u.access)) {
            presented_by[u.resource] = Some(pi);
        }
    }
    Ok(())
}
