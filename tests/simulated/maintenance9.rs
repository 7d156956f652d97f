//! `VK_KHR_maintenance9` on the NVIDIA topology, frame after frame: what the feature keeps
//! moves between families with no ownership transfer, the rest still transfers.

use super::*;

/// ```text
/// transfer:      [upload vertices]  ------------------.
/// async compute: [light: storage image] --------------+--> graphics: [draw: vertices, lit]
/// graphics:      [shadow: depth attachment] --> async compute: [blur: samples shadow]
/// ```
///
/// Every family hands optimal images to every other. The vertices (a buffer) and `lit` (a
/// storage image) change families with no release and acquire, each frame and between
/// frames; `shadow`, a depth attachment, is released by graphics and acquired by async compute
/// each frame, and comes back discarded (no transfer back). Each frame is verified alone and
/// chained with the ones before.
pub(crate) fn kept_contents_and_attachments(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let vertices = s.buf("vertices", 4096, XFER | vk::BufferUsageFlags::VERTEX_BUFFER);
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let lit = s.img("lit", 1, 1, storage);
    let shadow = s.sim.add_resource(
        ResourceDecl::image(
            "shadow",
            1,
            1,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
        )
        .aspect(vk::ImageAspectFlags::DEPTH),
    );
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass("upload", s.t, [u(vertices, Access::COPY_WRITE)]),
            pass("light", s.c, [u(lit, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "draw",
                s.g,
                [
                    u(vertices, Access::VERTEX_BUFFER),
                    u(lit, Access::FRAGMENT_SHADER_SAMPLED_READ),
                ],
            ),
            pass("shadow", s.g, [ud(shadow, Access::DEPTH_ATTACHMENT_WRITE)]),
            pass(
                "blur",
                s.c,
                [u(shadow, Access::COMPUTE_SHADER_SAMPLED_READ)],
            ),
        ]);
        assert_eq!(
            transferred(&r),
            ["shadow"],
            "{topo:?} frame {f}: only the attachment transfers\n{}",
            r.plan
        );
    }
    FRAMES
}

/// The resources the frame's barriers release or acquire, sorted, each once.
fn transferred(r: &FrameReport) -> Vec<String> {
    let p = &r.plan;
    let mut out: Vec<String> = (p.queues.iter())
        .flat_map(|q| &q.batches)
        .flat_map(|b| &b.commands)
        .filter_map(|c| match c {
            vk_baton::plan::Command::Barrier(b) => Some(b),
            _ => None,
        })
        .flat_map(|b| {
            let images = (b.images.iter())
                .filter(|i| i.scopes.families.is_some())
                .map(|i| i.resource);
            let buffers = (b.buffers.iter())
                .filter(|x| x.scopes.families.is_some())
                .map(|x| x.resource);
            images.chain(buffers).collect::<Vec<_>>()
        })
        .map(|i| p.input.resources[i].name.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}
