//! ComputeDispatch with storage buffers, a storage image and a sampled image, checked
//! exactly.

mod common;
#[path = "compute/depth_stencil.rs"]
mod depth_stencil;
// The core tests' gate: holds a queue's work back until the test opens it.
#[path = "../../tests/common/gate.rs"]
#[allow(dead_code)]
mod gate;

use common::*;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, ImageDesc};
use vk_baton_passes::{
    ComputeDispatch, DownloadBuffer, DownloadImage, ShaderAccess, UploadBuffer, UploadImage,
};

/// `fill.comp` over 1000 words of `buf`, with 8 bytes of push constants (count, seed).
fn fill_pass(
    ctx: &vk_baton_context::Context,
    words: &[u32],
    buf: &std::sync::Arc<vk_baton::StBuffer>,
    access: ShaderAccess,
) -> ComputeDispatch {
    // SAFETY: the crate's own shader, through the bindings it declares.
    unsafe { ComputeDispatch::builder(ctx.device(), words) }
        .name("fill")
        .storage_buffer(0, buf.clone(), access)
        .push_constant_size(8)
        .groups(1000_u32.div_ceil(64), 1, 1)
        .build()
        .unwrap()
}

/// The host's read of `out` after the GPU, as a pass that replays (it records nothing).
fn host_read(out: &std::sync::Arc<vk_baton::StBuffer>) -> impl vk_baton::Pass + '_ {
    let declare = |d: &mut vk_baton::Declare<'_>| {
        d.uses(out, vk_baton::Access::HOST_READ);
    };
    // SAFETY: the pass records no command.
    let key = unsafe { vk_baton::pass::ReplayKey::new(0) };
    vk_baton::pass::FnPass::new(declare, |_: &mut vk_baton::Recorder<'_>| Ok(()))
        .with_replay_key(key)
}

#[test]
fn storage_buffer_fill_with_push_constants() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
    let graph = ctx.graph().unwrap();
    for seed in [7u32, 100] {
        // A fresh buffer per round: a write in a later graph after a write and a read in an
        // earlier one trips the planner (see .planner_findings.md).
        let buf = ctx
            .buffer(
                BufferDesc::new(1000 * 4, vk::BufferUsageFlags::STORAGE_BUFFER | XFER),
                "data",
            )
            .unwrap();
        let mut fill = fill_pass(&ctx, &words, &buf, ShaderAccess::Write);
        let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
        let h = down.handle();
        fill.set_push_constants(&[1000u32.to_le_bytes(), seed.to_le_bytes()].concat())
            .unwrap();
        graph
            .record()
            .insert_pass("fill", &mut fill, ctx.async_compute())
            .insert_pass("down", &mut down, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap()
            .wait()
            .unwrap();
        let got: Vec<u32> = h
            .read()
            .unwrap()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let want: Vec<u32> = (0..1000).map(|i| i * 3 + seed).collect();
        assert_eq!(got, want);
        assert!(fill.set_push_constants(&[0; 4]).is_err());
    }
    drop(graph);
    assert_clean(&ctx);
}

/// With replay on, a dispatch replays its recording until its push constants change: each
/// setter call records once, and the frames after it replay.
#[test]
fn a_dispatch_replays_until_its_push_constants_change() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | XFER;
    let buf = ctx
        .buffer(BufferDesc::new(1000 * 4, usage), "data")
        .unwrap();
    let out = ctx
        .buffer(BufferDesc::readback(1000 * 4, XFER), "out")
        .unwrap();
    let mut fill = fill_pass(&ctx, &words, &buf, ShaderAccess::Write);
    let mut copy = vk_baton_passes::CopyBuffer::whole(buf.clone(), out.clone()).unwrap();
    let mut read = host_read(&out);
    let mut replays = String::new();
    for (frame, seed) in [7u32, 7, 7, 7, 9, 9, 9, 7].into_iter().enumerate() {
        if frame == 0 || seed != [7u32, 7, 7, 7, 9, 9, 9, 7][frame - 1] {
            let push = [1000u32.to_le_bytes(), seed.to_le_bytes()].concat();
            fill.set_push_constants(&push).unwrap();
        }
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, ctx.graphics())
            .insert_pass("copy", &mut copy, ctx.graphics())
            .insert_pass("read", &mut read, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        replays.push(if fence.replayed() { 'R' } else { '-' });
        let mut bytes = vec![0u8; 4000];
        out.read(0, &mut bytes).unwrap();
        let got: Vec<u32> = (bytes.chunks_exact(4))
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let want: Vec<u32> = (0..1000).map(|i| i * 3 + seed).collect();
        assert!(got == want, "frame {frame}, seed {seed}");
    }
    // Frames 1 and 2 plan (fresh, then written states) and record; each new seed records.
    assert_eq!(replays, "--RR-RR-");
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn sampled_image_to_storage_image_and_buffer() {
    let layouts = invert(LayoutPolicy::Optimal, LayoutPolicy::Optimal);
    assert!(layouts.iter().any(|l| leaves_general(*l)), "{layouts:?}");
}

/// The same frame in a graph under `LayoutPolicy::General`, with the pass built for it: every
/// image barrier, ownership transfers included, stays in `GENERAL`.
#[test]
fn sampled_image_in_general_layouts() {
    let layouts = invert(LayoutPolicy::General, LayoutPolicy::General);
    assert!(!layouts.iter().any(|l| leaves_general(*l)), "{layouts:?}");
}

/// A pass built for `Optimal` in a graph under `General`: its sampled image's descriptor says
/// `SHADER_READ_ONLY_OPTIMAL`, and the graph moves the image there for it.
#[test]
fn sampled_image_of_an_optimal_pass_in_a_general_graph() {
    let layouts = invert(LayoutPolicy::General, LayoutPolicy::Optimal);
    let read_only = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
    assert!(layouts.iter().any(|l| l.1 == read_only), "{layouts:?}");
}

/// Uploads an image and a buffer on the transfer queue, inverts the image into a storage
/// image and adds its red channel to the buffer on async compute, downloads both on graphics
/// and checks them; in a graph under `graph_policy`, the pass built for `pass_policy`.
/// Returns the layouts of the plan's image barriers.
fn invert(
    graph_policy: LayoutPolicy,
    pass_policy: LayoutPolicy,
) -> Vec<(vk::ImageLayout, vk::ImageLayout)> {
    let ctx = ctx();
    if graph_policy == LayoutPolicy::General {
        // Copies in GENERAL on purpose: old layers' performance warning is expected.
        ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    }
    let words = vk_baton_shaders::words(vk_baton_shaders::INVERT_COMP);
    let (w, h) = (12u32, 10u32);
    let src = ctx
        .image(
            ImageDesc::new_2d(
                w,
                h,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
            ),
            "src",
        )
        .unwrap();
    let dst = ctx
        .image(
            ImageDesc::storage_2d(w, h, vk::Format::R8G8B8A8_UNORM),
            "dst",
        )
        .unwrap();
    let n = (w * h) as usize;
    let sums = ctx
        .buffer(
            BufferDesc::new(n as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER | XFER),
            "sums",
        )
        .unwrap();
    let pixels = random_bytes(n * 4, 80);
    let start: Vec<u32> = (0..n as u32).map(|i| i * 5).collect();
    let start_bytes: Vec<u8> = start.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut up_img = UploadImage::new(ctx.device(), ctx.allocator(), src.clone(), &pixels).unwrap();
    let mut up_buf =
        UploadBuffer::new(ctx.device(), ctx.allocator(), sums.clone(), 0, &start_bytes).unwrap();
    // SAFETY: the crate's own shader, through the bindings it declares.
    let mut pass = unsafe { ComputeDispatch::builder(ctx.device(), &words) }
        .name("invert")
        .layout_policy(pass_policy)
        .sampled_image(0, src.clone())
        .storage_image(1, dst.clone(), ShaderAccess::Write)
        .storage_buffer(2, sums.clone(), ShaderAccess::ReadWrite)
        .push_constant_size(12)
        .groups(w.div_ceil(8), h.div_ceil(8), 1)
        .build()
        .unwrap();
    pass.set_push_constants(&[w.to_le_bytes(), h.to_le_bytes(), 3u32.to_le_bytes()].concat())
        .unwrap();
    let mut down_img =
        DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst.clone()).unwrap();
    let mut down_buf = DownloadBuffer::whole(ctx.device(), ctx.allocator(), sums.clone()).unwrap();
    let (hi, hb) = (down_img.handle(), down_buf.handle());
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(graph_policy);
    let planned = graph
        .record()
        .insert_pass("up img", &mut up_img, ctx.transfer())
        .insert_pass("up buf", &mut up_buf, ctx.transfer())
        .insert_pass("invert", &mut pass, ctx.async_compute())
        .insert_pass("down img", &mut down_img, ctx.graphics())
        .insert_pass("down buf", &mut down_buf, ctx.graphics())
        .finish()
        .unwrap();
    let layouts = image_layouts(planned.plan());
    planned.execute().unwrap().wait().unwrap();
    let want_img: Vec<u8> = pixels.iter().map(|v| 255 - v).collect();
    assert_eq!(hi.read().unwrap(), want_img);
    let got: Vec<u32> = hb
        .read()
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let want: Vec<u32> = (0..n)
        .map(|i| start[i] * 2 + pixels[i * 4] as u32 + 3)
        .collect();
    assert_eq!(got, want);
    // The pass can be dropped right away: its objects live on in the fence until done.
    drop(pass);
    drop(graph);
    assert_clean(&ctx);
    layouts
}

#[test]
fn bad_bindings_are_refused() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
    let no_storage = buffer(&ctx, 64, "plain");
    // SAFETY: the crate's own shader, through the bindings it declares.
    assert!(unsafe { ComputeDispatch::builder(ctx.device(), &words) }
        .storage_buffer(0, no_storage, ShaderAccess::Write)
        .build()
        .is_err());
    let ok = ctx
        .buffer(
            BufferDesc::new(64, vk::BufferUsageFlags::STORAGE_BUFFER),
            "ok",
        )
        .unwrap();
    // SAFETY: the crate's own shader, through the bindings it declares.
    assert!(unsafe { ComputeDispatch::builder(ctx.device(), &words) }
        .storage_buffer(0, ok.clone(), ShaderAccess::Write)
        .storage_buffer(0, ok.clone(), ShaderAccess::Read)
        .build()
        .is_err());
    // SAFETY: no SPIR-V magic number: `build` refuses it before any Vulkan call.
    assert!(
        unsafe { ComputeDispatch::builder(ctx.device(), &[1, 2, 3]) }
            .build()
            .is_err()
    );
    // SAFETY: the crate's own shader, through the bindings it declares.
    assert!(unsafe { ComputeDispatch::builder(ctx.device(), &words) }
        .push_constant_size(6)
        .build()
        .is_err());
    assert_clean(&ctx);
}

/// `ShaderAccess::WriteDiscard` declares the storage image with discard: after a download
/// left it in TRANSFER_SRC_OPTIMAL, the next dispatch takes it from UNDEFINED (the contents
/// are not kept), where `Write` transitions it from TRANSFER_SRC_OPTIMAL. The shader writes
/// every pixel, so all three rounds read back the same image.
#[test]
fn write_discard_storage_image_starts_from_undefined() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::PATTERN_COMP);
    let (w, h) = (16u32, 8u32);
    let img = ctx
        .image(
            ImageDesc::storage_2d(w, h, vk::Format::R8G8B8A8_UNORM),
            "pattern",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let mut pixels = Vec::new();
    for (access, transition) in [
        (ShaderAccess::Write, "UNDEFINED -> GENERAL"),
        (ShaderAccess::Write, "TRANSFER_SRC_OPTIMAL -> GENERAL"),
        (ShaderAccess::WriteDiscard, "UNDEFINED -> GENERAL"),
    ] {
        // SAFETY: the crate's own shader, through the bindings it declares.
        let mut draw = unsafe { ComputeDispatch::builder(ctx.device(), &words) }
            .storage_image(0, img.clone(), access)
            .groups(w.div_ceil(8), h.div_ceil(8), 1)
            .build()
            .unwrap();
        let mut down =
            DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
        let result = down.handle();
        let planned = graph
            .record()
            .insert_pass("draw", &mut draw, ctx.graphics())
            .insert_pass("down", &mut down, ctx.graphics())
            .finish()
            .unwrap();
        let plan = planned.to_string();
        let to_general: Vec<&str> = plan
            .lines()
            .filter(|l| l.contains("`pattern`") && l.contains("-> GENERAL,"))
            .collect();
        assert_eq!(to_general.len(), 1, "{plan}");
        assert!(
            to_general[0].contains(&format!(": {transition},")),
            "{access:?}: {plan}"
        );
        planned.execute().unwrap().wait().unwrap();
        pixels.push(result.read().unwrap());
    }
    assert_eq!(pixels[0].len(), (w * h * 4) as usize);
    assert!(pixels[0].iter().any(|&p| p != 0));
    assert_eq!(pixels[1], pixels[0]);
    assert_eq!(pixels[2], pixels[0]);
    drop(graph);
    assert_clean(&ctx);
}

/// Reads `bytes` as little-endian `u32`s.
fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A `ComputeDispatch` on a transient storage buffer: its descriptor is written per execution
/// from the handle the graph bound. Three frames in flight at once bind the transient to
/// other `VkBuffer`s (one heap set per execution in flight), and each frame's copy out of it
/// reads exactly what that frame's dispatch wrote. A gate holds the frames back until all three
/// are submitted: a fast GPU would otherwise finish each before the next binds.
#[test]
fn storage_buffer_transient_is_written_per_execution() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
    let graph = ctx.graph().unwrap();
    let n = 1000u32;
    let size = n as u64 * 4;
    let scratch = graph
        .transient_buffer(
            BufferDesc::new(size, vk::BufferUsageFlags::STORAGE_BUFFER | XFER),
            "scratch",
        )
        .unwrap();
    let mut fill = fill_pass(&ctx, &words, &scratch, ShaderAccess::WriteDiscard);
    let handles = std::sync::Mutex::new(Vec::new());
    let gate = gate::Gate::new(&ctx, ctx.async_compute());
    gate.hold();
    let seeds = [5u32, 60, 700];
    let mut fences = Vec::new();
    let mut results = Vec::new();
    for seed in seeds {
        let out = buffer(&ctx, size, "out");
        let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), out.clone()).unwrap();
        results.push(down.handle());
        fill.set_push_constants(&[n.to_le_bytes(), seed.to_le_bytes()].concat())
            .unwrap();
        let (src, dst) = (scratch.clone(), out.clone());
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, ctx.async_compute())
            .insert_fn(
                "copy out",
                ctx.graphics(),
                |d| {
                    d.uses(&src, vk_baton::Access::COPY_READ);
                    d.uses(&dst, vk_baton::Access::COPY_WRITE).discard();
                },
                |r| {
                    handles.lock().unwrap().push(src.handle());
                    let region = vk::BufferCopy::default().size(size);
                    // SAFETY: both are bound for this execution and in the declared states.
                    unsafe {
                        r.device()
                            .cmd_copy_buffer(r.cmd(), src.handle(), dst.handle(), &[region])
                    };
                    Ok(())
                },
            )
            .insert_pass("down", &mut down, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fences.push(fence);
    }
    assert!(
        fences.iter().all(|f| !f.is_complete()),
        "the gate holds them"
    );
    gate.open();
    for f in &fences {
        f.wait().unwrap();
    }
    for (seed, result) in seeds.iter().zip(&results) {
        let want: Vec<u32> = (0..n).map(|i| i * 3 + seed).collect();
        assert_eq!(words_of(&result.read().unwrap()), want, "seed {seed}");
    }
    let mut distinct = handles.into_inner().unwrap();
    distinct.sort_by_key(|h| vk::Handle::as_raw(*h));
    distinct.dedup();
    assert!(distinct.len() > 1, "frames in flight bind other buffers");
    refused_outside_its_graph(&ctx, &fill);
    drop((fences, fill, graph, gate));
    assert_clean(&ctx);
}

/// With replay on, a dispatch into a transient replays: each recording keeps the descriptor
/// set it wrote for the transient's object, and a new seed records once.
#[test]
fn a_dispatch_into_a_transient_replays() {
    let ctx = ctx();
    let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let (n, q) = (1000u32, ctx.graphics());
    let size = n as u64 * 4;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | XFER;
    let scratch = graph
        .transient_buffer(BufferDesc::new(size, usage), "scratch")
        .unwrap();
    let out = ctx.buffer(BufferDesc::readback(size, XFER), "out").unwrap();
    let mut fill = fill_pass(&ctx, &words, &scratch, ShaderAccess::WriteDiscard);
    let mut copy = vk_baton_passes::CopyBuffer::whole(scratch.clone(), out.clone()).unwrap();
    let mut read = host_read(&out);
    let (mut replays, mut last) = (String::new(), None);
    for seed in [5u32, 5, 5, 5, 60, 60] {
        if last != Some(seed) {
            let push = [n.to_le_bytes(), seed.to_le_bytes()].concat();
            fill.set_push_constants(&push).unwrap();
            last = Some(seed);
        }
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, q)
            .insert_pass("copy", &mut copy, q)
            .insert_pass("read", &mut read, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        replays.push(if fence.replayed() { 'R' } else { '-' });
        let mut bytes = vec![0u8; size as usize];
        out.read(0, &mut bytes).unwrap();
        let want: Vec<u32> = (0..n).map(|i| i * 3 + seed).collect();
        assert_eq!(words_of(&bytes), want, "seed {seed}, frames {replays}");
    }
    // Frames 1 and 2 plan (fresh, then written states) and record; the new seed records once.
    assert_eq!(replays, "--RR-R");
    drop(graph);
    assert_clean(&ctx);
}

/// `record_commands` (for an app's own command buffer) refuses a pass with a transient
/// binding, recording nothing: outside its graph's executions a transient has no object.
fn refused_outside_its_graph(ctx: &vk_baton_context::Context, pass: &ComputeDispatch) {
    let device = ctx.device();
    let info = vk::CommandPoolCreateInfo::default().queue_family_index(ctx.graphics().family());
    // SAFETY: plain object creation on the context's live device; destroyed below.
    let pool = unsafe { device.create_command_pool(&info, None) }.unwrap();
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .command_buffer_count(1);
    // SAFETY: a live pool of this device.
    let cmd = unsafe { device.allocate_command_buffers(&info) }.unwrap()[0];
    // SAFETY: `cmd` is a new primary command buffer, begun and ended here, never submitted.
    let refused = unsafe {
        device
            .begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
            .unwrap();
        let refused = pass.record_commands(cmd);
        device.end_command_buffer(cmd).unwrap();
        refused
    };
    let err = refused.unwrap_err().to_string();
    assert!(err.contains("`fill` binds a transient"), "{err}");
    // SAFETY: `cmd` was never submitted; the pool and its buffer go together.
    unsafe { device.destroy_command_pool(pool, None) };
}

/// A transient storage image written by one dispatch and sampled by the next: both
/// descriptors are written per execution (a storage view and a sampled view of the image bound
/// for that execution), over two frames in flight (a gate holds both back until both are
/// submitted). The result is the inverse of the same
/// pattern drawn into an image of the app's, bit for bit.
#[test]
fn transient_image_as_storage_then_sampled() {
    let ctx = ctx();
    let pattern = vk_baton_shaders::words(vk_baton_shaders::PATTERN_COMP);
    let invert = vk_baton_shaders::words(vk_baton_shaders::INVERT_COMP);
    let (w, h) = (16u32, 8u32);
    let n = (w * h) as usize;
    let graph = ctx.graph().unwrap();
    let storage_sampled = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let desc = ImageDesc::new_2d(w, h, vk::Format::R8G8B8A8_UNORM, storage_sampled | IXFER);
    let reference = ctx.image(desc.clone(), "reference").unwrap();
    let drawn = graph.transient_image(desc, "drawn").unwrap();
    let draw = |img| {
        // SAFETY: the crate's own shader, through the bindings it declares.
        unsafe { ComputeDispatch::builder(ctx.device(), &pattern) }
            .storage_image(0, img, ShaderAccess::WriteDiscard)
            .groups(w.div_ceil(8), h.div_ceil(8), 1)
            .build()
            .unwrap()
    };
    let mut draw_reference = draw(reference.clone());
    let mut down_ref =
        DownloadImage::all_levels(ctx.device(), ctx.allocator(), reference.clone()).unwrap();
    let want = down_ref.handle();
    graph
        .record()
        .insert_pass("draw reference", &mut draw_reference, ctx.graphics())
        .insert_pass("down reference", &mut down_ref, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<u8> = want.read().unwrap().iter().map(|v| 255 - v).collect();

    let mut draw_transient = draw(drawn.clone());
    // Held back until both frames are submitted, so both are in flight at once.
    let gate = gate::Gate::new(&ctx, ctx.async_compute());
    gate.hold();
    let mut fences = Vec::new();
    let mut results = Vec::new();
    for _round in 0..2 {
        let dst = ctx
            .image(
                ImageDesc::storage_2d(w, h, vk::Format::R8G8B8A8_UNORM),
                "dst",
            )
            .unwrap();
        let sums = ctx
            .buffer(
                BufferDesc::new(n as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER | XFER),
                "sums",
            )
            .unwrap();
        // SAFETY: the crate's own shader, through the bindings it declares.
        let mut inv = unsafe { ComputeDispatch::builder(ctx.device(), &invert) }
            .sampled_image(0, drawn.clone())
            .storage_image(1, dst.clone(), ShaderAccess::Write)
            .storage_buffer(2, sums, ShaderAccess::ReadWrite)
            .push_constant_size(12)
            .groups(w.div_ceil(8), h.div_ceil(8), 1)
            .build()
            .unwrap();
        inv.set_push_constants(&[w.to_le_bytes(), h.to_le_bytes(), 0u32.to_le_bytes()].concat())
            .unwrap();
        let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst).unwrap();
        results.push(down.handle());
        let fence = graph
            .record()
            .insert_pass("draw", &mut draw_transient, ctx.async_compute())
            .insert_pass("invert", &mut inv, ctx.graphics())
            .insert_pass("down", &mut down, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fences.push(fence);
    }
    assert!(
        fences.iter().all(|f| !f.is_complete()),
        "the gate holds them"
    );
    gate.open();
    for f in &fences {
        f.wait().unwrap();
    }
    for r in &results {
        assert_eq!(r.read().unwrap(), want);
    }
    drop((fences, draw_transient, graph, gate));
    assert_clean(&ctx);
}
