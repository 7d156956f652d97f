//! [`LayoutPolicy`]: which image layouts a graph's uses take, the table's own or `GENERAL`.

use super::{Access, DeviceFeatures};
use ash::vk;

/// Which layout each image use is planned in: the one the access table names
/// ([`LayoutPolicy::Optimal`]), or `GENERAL` wherever Vulkan allows it
/// ([`LayoutPolicy::General`]).
///
/// `VK_KHR_unified_image_layouts` guarantees that `GENERAL` costs nothing where the table
/// names another layout. Under [`LayoutPolicy::General`] the planner then has no layout to
/// change between two uses: its barriers keep their stages and accesses, and stay *image*
/// barriers, which the extension's proposal says some hardware still needs to flush its
/// caches, even from `GENERAL` to `GENERAL`. The only transitions left are the ones
/// `GENERAL` cannot replace: out of `UNDEFINED` (a new image, or a discard), and to and from
/// `PRESENT_SRC_KHR` and the video layouts.
///
/// `GENERAL` is valid for these uses in core Vulkan 1.3 too, without the extension, so a
/// device without it runs [`LayoutPolicy::General`] correctly, perhaps more slowly.
///
/// A pass records with the layouts of the graph's policy, not the table's
/// ([`Recorder::layout`](crate::Recorder::layout)):
///
/// ```
/// use vk_baton::{access::LayoutPolicy, ash::vk::ImageLayout as L, Access};
/// assert_eq!(LayoutPolicy::Optimal.layout(Access::COPY_WRITE), L::TRANSFER_DST_OPTIMAL);
/// assert_eq!(LayoutPolicy::General.layout(Access::COPY_WRITE), L::GENERAL);
/// assert_eq!(LayoutPolicy::General.layout(Access::FRAGMENT_SHADER_SAMPLED_READ), L::GENERAL);
/// // The presentation engine and video coding keep their own layouts.
/// assert_eq!(LayoutPolicy::General.layout(Access::PRESENT), L::PRESENT_SRC_KHR);
/// assert_eq!(LayoutPolicy::General.layout(Access::VIDEO_DECODE_OUTPUT_WRITE), L::VIDEO_DECODE_DST_KHR);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LayoutPolicy {
    /// Each use in the layout its access names ([`Access::layout`]): the layout every
    /// driver without `VK_KHR_unified_image_layouts` is fastest in.
    #[default]
    Optimal,
    /// Each use in `GENERAL`, except present, video and `UNDEFINED` (see the type's doc).
    General,
}

impl LayoutPolicy {
    /// The policy of a graph told of `features` and of no policy: [`LayoutPolicy::General`]
    /// with `VK_KHR_unified_image_layouts`' feature, [`LayoutPolicy::Optimal`] without.
    pub(crate) fn for_features(features: DeviceFeatures) -> Self {
        if features.contains(DeviceFeatures::UNIFIED_IMAGE_LAYOUTS) {
            LayoutPolicy::General
        } else {
            LayoutPolicy::Optimal
        }
    }

    /// `access` as a graph under this policy plans it: its layout replaced by `GENERAL` where
    /// the policy is [`LayoutPolicy::General`] and `GENERAL` can stand in for it.
    ///
    /// ```
    /// use vk_baton::{access::LayoutPolicy, ash::vk::ImageLayout as L, Access};
    /// let planned = LayoutPolicy::General.apply(Access::DEPTH_ATTACHMENT_WRITE);
    /// assert_eq!(planned.layout, L::GENERAL);
    /// assert_eq!(planned.stages, Access::DEPTH_ATTACHMENT_WRITE.stages);
    /// assert_eq!(LayoutPolicy::Optimal.apply(Access::COPY_READ), Access::COPY_READ);
    /// ```
    pub const fn apply(self, access: Access) -> Access {
        match self {
            LayoutPolicy::General if replaceable_by_general(access.layout) => {
                access.with_layout(vk::ImageLayout::GENERAL)
            }
            _ => access,
        }
    }

    /// The layout an image is in for `access` under this policy: what a pass names in its
    /// commands (a copy's `dstImageLayout`, an attachment's `imageLayout`, a descriptor's
    /// `imageLayout`).
    ///
    /// ```
    /// use vk_baton::{access::LayoutPolicy, ash::vk::ImageLayout as L, Access};
    /// assert_eq!(LayoutPolicy::Optimal.layout(Access::BLIT_READ), L::TRANSFER_SRC_OPTIMAL);
    /// assert_eq!(LayoutPolicy::General.layout(Access::BLIT_READ), L::GENERAL);
    /// ```
    pub const fn layout(self, access: Access) -> vk::ImageLayout {
        self.apply(access).layout
    }

    /// The layout an image's `aspect` alone is in for `access` under this policy (a
    /// depth/stencil use narrowed to one aspect: [`Access::layout_in`]).
    ///
    /// ```
    /// use vk_baton::{access::LayoutPolicy, ash::vk::{ImageAspectFlags as Asp, ImageLayout as L}, Access};
    /// let depth = Access::DEPTH_ATTACHMENT_READ;
    /// assert_eq!(LayoutPolicy::Optimal.layout_in(depth, Asp::DEPTH), L::DEPTH_READ_ONLY_OPTIMAL);
    /// assert_eq!(LayoutPolicy::General.layout_in(depth, Asp::DEPTH), L::GENERAL);
    /// ```
    pub const fn layout_in(self, access: Access, aspect: vk::ImageAspectFlags) -> vk::ImageLayout {
        self.apply(access).layout_in(aspect)
    }
}

/// Whether `GENERAL` is valid, and under `VK_KHR_unified_image_layouts` as fast, wherever
/// `layout` is: every layout of the graphics, compute and transfer commands. Not `UNDEFINED`
/// and `PREINITIALIZED` (they say what the contents are), not the present layouts and not the
/// video layouts (the extension's proposal keeps them: they face engines outside the GPU's
/// caches), not the fragment density map's (a `VkRenderPass` takes it only in its own layout
/// or `SHADER_READ_ONLY_OPTIMAL`), and not the feedback-loop layout (`GENERAL` replaces it only with
/// `VkAttachmentFeedbackLoopInfoEXT`, which a use cannot declare).
const fn replaceable_by_general(layout: vk::ImageLayout) -> bool {
    use vk::ImageLayout as L;
    matches!(
        layout,
        L::COLOR_ATTACHMENT_OPTIMAL
            | L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL
            | L::DEPTH_STENCIL_READ_ONLY_OPTIMAL
            | L::DEPTH_ATTACHMENT_OPTIMAL
            | L::DEPTH_READ_ONLY_OPTIMAL
            | L::STENCIL_ATTACHMENT_OPTIMAL
            | L::STENCIL_READ_ONLY_OPTIMAL
            | L::DEPTH_READ_ONLY_STENCIL_ATTACHMENT_OPTIMAL
            | L::DEPTH_ATTACHMENT_STENCIL_READ_ONLY_OPTIMAL
            | L::SHADER_READ_ONLY_OPTIMAL
            | L::TRANSFER_SRC_OPTIMAL
            | L::TRANSFER_DST_OPTIMAL
            | L::READ_ONLY_OPTIMAL
            | L::ATTACHMENT_OPTIMAL
            | L::RENDERING_LOCAL_READ_KHR
            | L::FRAGMENT_SHADING_RATE_ATTACHMENT_OPTIMAL_KHR
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::ACCESS_TABLE;
    use vk::ImageLayout as L;

    /// Every row of the table: under `General`, its layout is `GENERAL` unless it is one that
    /// `GENERAL` cannot replace, and nothing but the layout changes; under `Optimal`, nothing.
    #[test]
    fn every_row_keeps_its_flags_and_takes_general_where_it_may() {
        let kept = [
            L::UNDEFINED,
            L::PRESENT_SRC_KHR,
            L::VIDEO_DECODE_DST_KHR,
            L::VIDEO_DECODE_DPB_KHR,
            L::VIDEO_ENCODE_SRC_KHR,
            L::VIDEO_ENCODE_DPB_KHR,
        ];
        let mut general = 0;
        for row in ACCESS_TABLE {
            let a = row.access();
            assert_eq!(LayoutPolicy::Optimal.apply(a), a, "{}", row.name);
            let planned = LayoutPolicy::General.apply(a);
            let expected = if kept.contains(&a.layout) {
                a.layout
            } else {
                general += 1;
                L::GENERAL
            };
            assert_eq!(planned, a.with_layout(expected), "{}", row.name);
        }
        // The table's transfer, attachment and sampled rows all moved (GENERAL rows too).
        assert!(general >= 40, "{general} rows in GENERAL");
    }

    /// A graph plans in `GENERAL` by default only where the app enabled the extension's
    /// feature.
    #[test]
    fn general_by_default_only_with_unified_image_layouts() {
        use DeviceFeatures as F;
        assert_eq!(LayoutPolicy::for_features(F::NONE), LayoutPolicy::Optimal);
        let others = F::MAINTENANCE8 | F::MAINTENANCE9 | F::MESH_SHADER;
        assert_eq!(LayoutPolicy::for_features(others), LayoutPolicy::Optimal);
        let unified = others | F::UNIFIED_IMAGE_LAYOUTS;
        assert_eq!(LayoutPolicy::for_features(unified), LayoutPolicy::General);
    }

    /// The per-aspect layouts of a depth/stencil use: the policy's `GENERAL` for both aspects.
    #[test]
    fn both_aspects_of_a_depth_stencil_use_are_general() {
        use vk::ImageAspectFlags as Asp;
        for a in [
            Access::DEPTH_ATTACHMENT_WRITE,
            Access::DEPTH_ATTACHMENT_READ,
        ] {
            for aspect in [Asp::DEPTH, Asp::STENCIL, Asp::DEPTH | Asp::STENCIL] {
                assert_eq!(LayoutPolicy::General.layout_in(a, aspect), L::GENERAL);
                assert_eq!(
                    LayoutPolicy::Optimal.layout_in(a, aspect),
                    a.layout_in(aspect)
                );
            }
        }
    }
}
