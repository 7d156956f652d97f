//! The `VkRenderingAttachmentInfo`s of a [`Render`](super::Render) pass's targets, in the
//! layouts its uses were planned in.

use super::targets::{ColorTarget, DepthTarget, Load, Store};
use ash::vk;
use vk_baton::access::LayoutPolicy;
use vk_baton::Access;

/// The color attachment of `c` with its view (and its resolve target's), in the layout the
/// graph's `layouts` give its access.
pub(super) fn color_info(
    c: &ColorTarget,
    (view, resolve): (vk::ImageView, Option<vk::ImageView>),
    layouts: LayoutPolicy,
) -> vk::RenderingAttachmentInfo<'static> {
    let mut info = vk::RenderingAttachmentInfo::default()
        .image_view(view)
        .image_layout(layouts.layout(c.access()))
        .load_op(c.load.op())
        .store_op(c.store.op());
    if let Load::Clear(value) = c.load {
        info = info.clear_value(vk::ClearValue { color: value });
    }
    if let Some(rv) = resolve {
        info = info
            .resolve_mode(resolve_mode(c.image.desc().format))
            .resolve_image_view(rv)
            .resolve_image_layout(layouts.layout(Access::COLOR_ATTACHMENT_WRITE));
    }
    info
}

/// The depth and the stencil attachment of `t` (the same view), each in the layout its use
/// declared: both aspects' combined layout, or each aspect's own where the stencil has its own
/// ops that make it another use. `covered`: the render area covers the target.
pub(super) fn depth_infos(
    t: &DepthTarget,
    view: vk::ImageView,
    (covered, layouts): (bool, LayoutPolicy),
) -> (
    vk::RenderingAttachmentInfo<'static>,
    vk::RenderingAttachmentInfo<'static>,
) {
    let (depth_layout, stencil_layout) = t.layouts(covered, layouts);
    let info = |layout, load: vk::AttachmentLoadOp, store: Store| {
        vk::RenderingAttachmentInfo::default()
            .image_view(view)
            .image_layout(layout)
            .load_op(load)
            .store_op(store.op())
    };
    let mut depth = info(depth_layout, t.load.op(), t.store);
    if let Load::Clear(value) = t.load {
        depth = depth.clear_value(vk::ClearValue {
            depth_stencil: value,
        });
    }
    let stencil = match t.stencil_ops {
        None => depth.image_layout(stencil_layout),
        Some(s) => {
            let mut stencil = info(stencil_layout, s.load.op(), s.store);
            if let Load::Clear(value) = s.load {
                let depth_stencil = vk::ClearDepthStencilValue {
                    depth: 0.0,
                    stencil: value,
                };
                stencil = stencil.clear_value(vk::ClearValue { depth_stencil });
            }
            stencil
        }
    };
    (depth, stencil)
}

/// Averages for float and normalized formats; integer formats resolve to sample 0 (the only
/// mode core Vulkan guarantees for them).
fn resolve_mode(format: vk::Format) -> vk::ResolveModeFlags {
    let name = format!("{format:?}");
    if name.contains("UINT") || name.contains("SINT") {
        vk::ResolveModeFlags::SAMPLE_ZERO
    } else {
        vk::ResolveModeFlags::AVERAGE
    }
}
