//! The external subpass dependencies an app's own `VkRenderPass` needs so that its automatic
//! layout transitions chain with the graph's barriers.
//!
//! A pass that begins a `VkRenderPass` declares each attachment with its `initialLayout` and
//! `finalLayout` (`d.uses(&image, access).initial_layout(..).final_layout(..)`). The graph then moves the image to
//! `initialLayout` before the pass, and tracks it in `finalLayout` after it. Between the two,
//! the render pass transitions the attachment itself, and those transitions must be ordered
//! against the graph's barriers on both sides:
//!
//! - **Before.** The graph's last barrier before the pass ends at the use's stages (its second
//!   scope is what the pass declared, say `COLOR_ATTACHMENT_OUTPUT`). The render pass's
//!   transition away from `initialLayout` happens after the first scope of the dependency from
//!   `VK_SUBPASS_EXTERNAL` into the subpass. Without an explicit one, that dependency is the
//!   implicit one, whose first scope is `TOP_OF_PIPE` (nothing): it forms no execution
//!   dependency chain with the barrier, so the transition may run before the barrier's
//!   transition or before earlier writes finish. [`incoming`] starts at the use's stages and
//!   accesses, the barrier's second scope, so the chain holds.
//! - **After.** The transition to `finalLayout` happens before the second scope of the
//!   dependency from the subpass to `VK_SUBPASS_EXTERNAL`. The implicit one ends at
//!   `BOTTOM_OF_PIPE` (nothing), so no later barrier chains from it. The graph's next barrier
//!   starts from the use's stages (what the pass declared), so [`outgoing`] ends there, with
//!   the use's accesses as its second access scope (the transition's write is visible to
//!   them, and the next barrier makes it visible onwards). That second scope is made of later
//!   commands; a semaphore signal is none, so the graph signals a present (or a wait of
//!   another queue) right after such a render pass at `ALL_COMMANDS`, which takes the
//!   transition in.
//!
//! Give both to `VkRenderPassCreateInfo2::dependencies` (or their fields to a
//! `VkSubpassDependency` of `vkCreateRenderPass`), with the accesses of every attachment
//! the graph hands the render pass.
//!
//! Declare what the attachment's ops do: a load op CLEAR or DONT_CARE and a store op STORE or
//! DONT_CARE are writes. A read-only attachment (an input attachment, a depth buffer only
//! tested) is declared with a read access only if its store op is NONE
//! (`VK_ATTACHMENT_STORE_OP_NONE`, core in 1.3); with STORE, declare the write access.
//!
//! ```
//! use vk_baton::{ash::vk, render_pass, Access};
//! let deps = render_pass::external_dependencies(&[Access::COLOR_ATTACHMENT_WRITE]);
//! assert_eq!(deps[0].src_subpass, vk::SUBPASS_EXTERNAL);
//! assert_eq!(deps[0].src_stage_mask, vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT);
//! assert_eq!(deps[1].dst_subpass, vk::SUBPASS_EXTERNAL);
//! assert_eq!(deps[1].dst_access_mask, vk::AccessFlags::COLOR_ATTACHMENT_WRITE);
//! ```

use crate::access::Access;
use ash::vk;

/// The dependency from `VK_SUBPASS_EXTERNAL` into `subpass` (the first that uses the
/// attachments): from the stages and accesses of the declared uses (the second scope of the
/// graph's barrier before the pass) to the same stages and accesses in the subpass. See the
/// [module docs](self) for why.
///
/// ```
/// use vk_baton::{ash::vk, render_pass, Access};
/// let d = render_pass::incoming(&[Access::DEPTH_ATTACHMENT_READ], 0);
/// let tests = vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
/// assert_eq!((d.src_stage_mask, d.dst_stage_mask), (tests, tests));
/// assert_eq!(d.dst_access_mask, vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ);
/// ```
pub fn incoming(attachments: &[Access], subpass: u32) -> vk::SubpassDependency2<'static> {
    let (stages, access) = union(attachments);
    vk::SubpassDependency2::default()
        .src_subpass(vk::SUBPASS_EXTERNAL)
        .dst_subpass(subpass)
        .src_stage_mask(stages)
        .src_access_mask(access)
        .dst_stage_mask(stages)
        .dst_access_mask(access)
}

/// The dependency from `subpass` (the last that uses the attachments) to
/// `VK_SUBPASS_EXTERNAL`: from the declared uses' stages and accesses to the same stages
/// (where the graph's next barrier starts) and accesses. See the [module docs](self).
///
/// ```
/// use vk_baton::{ash::vk, render_pass, Access};
/// let d = render_pass::outgoing(&[Access::COLOR_ATTACHMENT_WRITE], 2);
/// assert_eq!((d.src_subpass, d.dst_subpass), (2, vk::SUBPASS_EXTERNAL));
/// assert_eq!(d.dst_stage_mask, vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT);
/// ```
pub fn outgoing(attachments: &[Access], subpass: u32) -> vk::SubpassDependency2<'static> {
    let (stages, access) = union(attachments);
    vk::SubpassDependency2::default()
        .src_subpass(subpass)
        .dst_subpass(vk::SUBPASS_EXTERNAL)
        .src_stage_mask(stages)
        .src_access_mask(access)
        .dst_stage_mask(stages)
        .dst_access_mask(access)
}

/// [`incoming`] and [`outgoing`] for a render pass of one subpass.
///
/// ```
/// use vk_baton::{render_pass, Access};
/// let [into, out] = render_pass::external_dependencies(&[Access::COLOR_ATTACHMENT_WRITE]);
/// assert_eq!((into.dst_subpass, out.src_subpass), (0, 0));
/// ```
pub fn external_dependencies(attachments: &[Access]) -> [vk::SubpassDependency2<'static>; 2] {
    [incoming(attachments, 0), outgoing(attachments, 0)]
}

/// The union of the accesses' stages and access flags, as the `VkSubpassDependency2` masks
/// (the synchronization 1 flags) say them.
fn union(attachments: &[Access]) -> (vk::PipelineStageFlags, vk::AccessFlags) {
    attachments.iter().fold(
        (vk::PipelineStageFlags::empty(), vk::AccessFlags::empty()),
        |(s, a), x| (s | stages_sync1(x.stages), a | access_sync1(x.access)),
    )
}

/// Stage flags in the synchronization 1 type: the low 32 bits are the same bits; the stages
/// that only synchronization 2 names become the stage that holds them.
fn stages_sync1(s: vk::PipelineStageFlags2) -> vk::PipelineStageFlags {
    use vk::PipelineStageFlags as S1;
    use vk::PipelineStageFlags2 as S2;
    let mut out = S1::from_raw((s.as_raw() & u32::MAX as u64) as u32);
    let to = [
        (S2::COPY | S2::RESOLVE | S2::BLIT | S2::CLEAR, S1::TRANSFER),
        (
            S2::INDEX_INPUT | S2::VERTEX_ATTRIBUTE_INPUT,
            S1::VERTEX_INPUT,
        ),
        // Naming the tessellation and geometry stages is invalid on a device without those
        // features, and VERTEX_SHADER alone would miss them where they run: ALL_GRAPHICS holds
        // every pre-rasterization stage and is valid everywhere.
        (S2::PRE_RASTERIZATION_SHADERS, S1::ALL_GRAPHICS),
    ];
    let mut known = S2::from_raw(u32::MAX as u64);
    for (two, one) in to {
        known |= two;
        if s.intersects(two) {
            out |= one;
        }
    }
    if !(s & !known).is_empty() {
        // A stage synchronization 1 cannot name: all of them.
        out |= S1::ALL_COMMANDS;
    }
    out
}

/// Access flags in the synchronization 1 type: the low 32 bits are the same bits; the
/// shader accesses that only synchronization 2 names become the shader read or write.
fn access_sync1(a: vk::AccessFlags2) -> vk::AccessFlags {
    use vk::AccessFlags as A1;
    use vk::AccessFlags2 as A2;
    let mut out = A1::from_raw((a.as_raw() & u32::MAX as u64) as u32);
    if a.intersects(A2::SHADER_SAMPLED_READ | A2::SHADER_STORAGE_READ) {
        out |= A1::SHADER_READ;
    }
    if a.intersects(A2::SHADER_STORAGE_WRITE) {
        out |= A1::SHADER_WRITE;
    }
    let known = A2::from_raw(u32::MAX as u64)
        | A2::SHADER_SAMPLED_READ
        | A2::SHADER_STORAGE_READ
        | A2::SHADER_STORAGE_WRITE;
    let rest = a & !known;
    if !rest.is_empty() {
        // An access synchronization 1 cannot name: all reads, and all writes if it writes.
        out |= A1::MEMORY_READ;
        if crate::access::is_write_flags(rest) {
            out |= A1::MEMORY_WRITE;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync2_only_flags_become_the_sync1_flags_that_hold_them() {
        use vk::PipelineStageFlags as S1;
        let s = stages_sync1(Access::FRAGMENT_SHADER_SAMPLED_READ.stages);
        assert_eq!(s, S1::FRAGMENT_SHADER);
        assert_eq!(stages_sync1(Access::COPY_WRITE.stages), S1::TRANSFER);
        let a = access_sync1(Access::FRAGMENT_SHADER_SAMPLED_READ.access);
        assert_eq!(a, vk::AccessFlags::SHADER_READ);
        let (s, a) = union(&[
            Access::COLOR_ATTACHMENT_READ_WRITE,
            Access::DEPTH_ATTACHMENT_WRITE,
        ]);
        assert!(s.contains(S1::COLOR_ATTACHMENT_OUTPUT | S1::LATE_FRAGMENT_TESTS));
        assert!(a.contains(
            vk::AccessFlags::COLOR_ATTACHMENT_WRITE
                | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE
        ));
    }
}
