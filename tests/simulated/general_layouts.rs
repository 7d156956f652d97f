//! Every image use in `GENERAL` (`LayoutPolicy::General`), frame after frame on every
//! topology: each frame is verified alone and chained with the ones before, and no image
//! changes layout except out of `UNDEFINED`.

use super::*;
use vk_baton::access::LayoutPolicy;

/// `p` with every use's access as a graph under `LayoutPolicy::General` declares it.
fn general(mut p: PassDecl) -> PassDecl {
    for u in &mut p.uses {
        u.access = LayoutPolicy::General.apply(u.access);
    }
    p
}

/// Every image barrier of the frame's plan that moves an image to another layout than
/// `GENERAL`, or from another than `UNDEFINED` or `GENERAL`.
fn transitions(r: &FrameReport) -> Vec<(vk::ImageLayout, vk::ImageLayout)> {
    use vk::ImageLayout as L;
    (r.plan.image_barriers())
        .map(|i| (i.old_layout, i.new_layout))
        .filter(|&(old, new)| new != L::GENERAL || !matches!(old, L::UNDEFINED | L::GENERAL))
        .collect()
}

/// ```text
/// transfer: [upload texture] ----------------------------.
/// graphics: [gbuffer: color + depth] --> compute: [light: samples texture, gbuffer, depth]
///           --lit--> graphics: [tonemap: samples lit, blits into output] --> [copy out]
/// ```
///
/// Copies, attachments, sampled and storage images and a blit, on three queues: under the
/// table's layouts nearly every use moves its image; in `GENERAL` none does after the first.
pub(crate) fn deferred_frame_in_general_layouts(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let color = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED | IXFER;
    let texture = s.img("texture", 1, 1, IXFER | vk::ImageUsageFlags::SAMPLED);
    let gbuffer = s.img("gbuffer", 1, 1, color);
    let depth = s.sim.add_resource(
        ResourceDecl::image(
            "depth",
            1,
            1,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
        )
        .aspect(vk::ImageAspectFlags::DEPTH),
    );
    let lit = s.img("lit", 1, 1, storage);
    let output = s.img("output", 1, 1, IXFER);
    let readback = s.buf("readback", 4096, XFER);
    for f in 0..FRAMES {
        let mut passes = Vec::new();
        if f == 0 {
            passes.push(pass("upload", s.t, [u(texture, Access::COPY_WRITE)]));
        }
        passes.extend([
            pass(
                "gbuffer",
                s.g,
                [
                    ud(gbuffer, Access::COLOR_ATTACHMENT_WRITE),
                    ud(depth, Access::DEPTH_ATTACHMENT_WRITE),
                ],
            ),
            pass(
                "light",
                s.c,
                [
                    u(texture, Access::COMPUTE_SHADER_SAMPLED_READ),
                    u(gbuffer, Access::COMPUTE_SHADER_SAMPLED_READ),
                    u(depth, Access::COMPUTE_SHADER_SAMPLED_READ),
                    ud(lit, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "tonemap",
                s.g,
                [u(lit, Access::BLIT_READ), ud(output, Access::BLIT_WRITE)],
            ),
            pass(
                "copy out",
                s.g,
                [
                    u(output, Access::COPY_READ),
                    ud(readback, Access::COPY_WRITE),
                ],
            ),
        ]);
        let r = s.run(passes.into_iter().map(general).collect());
        assert_eq!(transitions(&r), [], "{topo:?} frame {f}\n{}", r.plan);
    }
    FRAMES
}
