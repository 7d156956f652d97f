//! Sampling a depth/stencil image through `ComputeDispatch`: the view shows one aspect (depth
//! by default), and the pass declares its read of that aspect alone.

use super::common::*;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, ImageDesc, StBuffer};
use vk_baton_context::Context;
use vk_baton_passes::{ClearDepthStencil, ComputeDispatch, DownloadBuffer, ShaderAccess};

const FORMAT: vk::Format = vk::Format::D32_SFLOAT_S8_UINT;
const CLEAR: vk::ClearDepthStencilValue = vk::ClearDepthStencilValue {
    depth: 0.375,
    stencil: 0x5a,
};

/// An 8×8 depth/stencil image to clear and sample. Every Vulkan device samples the depth of
/// some depth/stencil format; this test takes D32_SFLOAT_S8_UINT and fails where the device
/// cannot sample it, rather than test a format with one aspect.
fn depth_stencil(ctx: &Context) -> std::sync::Arc<vk_baton::StImage> {
    // SAFETY: a plain query of the context's own physical device.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_format_properties(ctx.physical_device(), FORMAT)
    };
    let needs = vk::FormatFeatureFlags::SAMPLED_IMAGE | vk::FormatFeatureFlags::TRANSFER_DST;
    assert!(
        props.optimal_tiling_features.contains(needs),
        "{FORMAT:?} cannot be sampled here"
    );
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    ctx.image(ImageDesc::new_2d(8, 8, FORMAT, usage), "depth/stencil")
        .unwrap()
}

fn words_out(ctx: &Context, name: &str) -> std::sync::Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | XFER;
    ctx.buffer(BufferDesc::new(64 * 4, usage), name).unwrap()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    let words = bytes.chunks_exact(4);
    words
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `sampled_image` of a depth/stencil image: a depth view (two aspects would break
/// VUID-VkDescriptorImageInfo-imageView-01976), a use of the depth alone, and the depth the
/// clear wrote, bit for bit.
#[test]
fn sampled_image_of_a_depth_stencil_image_reads_its_depth() {
    let ctx = ctx();
    let ds = depth_stencil(&ctx);
    let out = words_out(&ctx, "depth words");
    let spirv = vk_baton_shaders::words(vk_baton_shaders::SAMPLED_DEPTH_COMP);
    // SAFETY: the crate's own shader, through the bindings it declares.
    let mut read = unsafe { ComputeDispatch::builder(ctx.device(), &spirv) }
        .sampled_image(0, ds.clone())
        .storage_buffer(1, out.clone(), ShaderAccess::WriteDiscard)
        .build()
        .unwrap();
    let mut clear = ClearDepthStencil::new(ds.clone(), CLEAR).unwrap();
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), out).unwrap();
    let got = down.handle();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let planned = graph
        .record()
        .insert_pass("clear", &mut clear, q)
        .insert_pass("read depth", &mut read, q)
        .insert_pass("download", &mut down, q)
        .finish()
        .unwrap();
    let plan = planned.plan();
    let read_uses = &plan.input.passes[1].uses;
    let aspects: Vec<_> = read_uses.iter().map(|u| u.aspect).collect();
    assert!(
        aspects.contains(&vk::ImageAspectFlags::DEPTH),
        "the read of `{}` is declared on {aspects:?}",
        ds.name()
    );
    planned.execute().unwrap().wait().unwrap();
    assert_eq!(words(&got.read().unwrap()), vec![CLEAR.depth.to_bits(); 64]);
    drop(graph);
    assert_clean(&ctx);
}

/// `sampled_image_aspect` with STENCIL beside a depth read of the same image: each view
/// shows its aspect, and each reads what the clear wrote.
#[test]
fn sampled_image_aspect_reads_the_stencil_beside_the_depth() {
    let ctx = ctx();
    let ds = depth_stencil(&ctx);
    let (depth_out, stencil_out) = (words_out(&ctx, "depth"), words_out(&ctx, "stencil"));
    let depth_spirv = vk_baton_shaders::words(vk_baton_shaders::SAMPLED_DEPTH_COMP);
    let stencil_spirv = vk_baton_shaders::words(vk_baton_shaders::SAMPLED_STENCIL_COMP);
    // SAFETY (both): the crate's own shaders, through the bindings they declare.
    let mut depth = unsafe { ComputeDispatch::builder(ctx.device(), &depth_spirv) }
        .sampled_image_aspect(0, ds.clone(), vk::ImageAspectFlags::DEPTH)
        .storage_buffer(1, depth_out.clone(), ShaderAccess::WriteDiscard)
        .build()
        .unwrap();
    let mut stencil = unsafe { ComputeDispatch::builder(ctx.device(), &stencil_spirv) }
        .sampled_image_aspect(0, ds.clone(), vk::ImageAspectFlags::STENCIL)
        .storage_buffer(1, stencil_out.clone(), ShaderAccess::WriteDiscard)
        .build()
        .unwrap();
    let mut clear = ClearDepthStencil::new(ds.clone(), CLEAR).unwrap();
    let mut down_depth = DownloadBuffer::whole(ctx.device(), ctx.allocator(), depth_out).unwrap();
    let mut down_stencil =
        DownloadBuffer::whole(ctx.device(), ctx.allocator(), stencil_out).unwrap();
    let (got_depth, got_stencil) = (down_depth.handle(), down_stencil.handle());
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let planned = graph
        .record()
        .insert_pass("clear", &mut clear, q)
        .insert_pass("read stencil", &mut stencil, q)
        .insert_pass("read depth", &mut depth, q)
        .insert_pass("download depth", &mut down_depth, q)
        .insert_pass("download stencil", &mut down_stencil, q)
        .finish()
        .unwrap();
    let stencil_uses = &planned.plan().input.passes[1].uses;
    assert!(stencil_uses
        .iter()
        .any(|u| u.aspect == vk::ImageAspectFlags::STENCIL));
    planned.execute().unwrap().wait().unwrap();
    assert_eq!(
        words(&got_depth.read().unwrap()),
        vec![CLEAR.depth.to_bits(); 64]
    );
    assert_eq!(words(&got_stencil.read().unwrap()), vec![CLEAR.stencil; 64]);
    drop(graph);
    assert_clean(&ctx);
}

/// A sampled view of no aspect of the format, or of two, is refused at `build()`.
#[test]
fn a_sampled_aspect_the_format_lacks_is_refused() {
    let ctx = ctx();
    let ds = depth_stencil(&ctx);
    let out = words_out(&ctx, "words");
    let spirv = vk_baton_shaders::words(vk_baton_shaders::SAMPLED_DEPTH_COMP);
    let both = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
    for aspect in [vk::ImageAspectFlags::COLOR, both] {
        // SAFETY: the crate's own shader; `build` refuses before it makes anything.
        let built = unsafe { ComputeDispatch::builder(ctx.device(), &spirv) }
            .sampled_image_aspect(0, ds.clone(), aspect)
            .storage_buffer(1, out.clone(), ShaderAccess::WriteDiscard)
            .build();
        let Err(e) = built else {
            panic!("{aspect:?} was not refused")
        };
        assert!(e.to_string().contains("one aspect"), "{e}");
    }
    assert_clean(&ctx);
}
