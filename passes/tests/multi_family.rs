//! Transfers across queue families: uploads and downloads on a dedicated transfer family, and
//! a present-style handoff of an image to another family and back. These need a device with
//! several queue families (run them on the NVIDIA machine with `--ignored`); they check data
//! exactly and assert zero validation messages.

mod common;

use common::*;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Access, Declare, Pass, Recorder, StImage};
use vk_baton_context::{Context, ContextOptions};
use vk_baton_passes::{
    ClearColor, CopyBuffer, DownloadBuffer, DownloadImage, UploadBuffer, UploadImage, WaitExternal,
};

const IGNORE: &str = "needs several queue families (run on the NVIDIA machine)";

fn multi_ctx() -> Context {
    let ctx = ctx();
    assert_ne!(
        ctx.transfer().family(),
        ctx.graphics().family(),
        "{IGNORE}: no dedicated transfer family on {}",
        ctx.device_name()
    );
    ctx
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn buffer_upload_on_transfer_family_read_on_graphics() {
    let ctx = multi_ctx();
    let buf = buffer(&ctx, 1 << 16, "buf");
    let copy_dst = buffer(&ctx, 1 << 16, "copy");
    let data = random_bytes(1 << 16, 90);
    let mut up = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &data).unwrap();
    // Used on graphics (ownership transfer transfer -> graphics), then downloaded on the
    // transfer family again (graphics -> transfer).
    let mut copy = CopyBuffer::whole(buf.clone(), copy_dst.clone()).unwrap();
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), copy_dst.clone()).unwrap();
    let mut down_src = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
    let (h, h_src) = (down.handle(), down_src.handle());
    let graph = ctx.graph().unwrap();
    graph
        .record()
        .insert_pass("up", &mut up, ctx.transfer())
        .insert_pass("copy", &mut copy, ctx.graphics())
        .insert_pass("down", &mut down, ctx.transfer())
        .insert_pass("down src", &mut down_src, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(h.read().unwrap(), data);
    assert_eq!(h_src.read().unwrap(), data);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn image_upload_and_download_on_transfer_family() {
    let ctx = multi_ctx();
    let img = image(&ctx, 64, 32, vk::Format::R8G8B8A8_UNORM, 3, 2, "img");
    let data = random_bytes(UploadImage::packed_size(&img).unwrap() as usize, 91);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &data).unwrap();
    let mut down_gfx =
        DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let mut down_xfer =
        DownloadImage::level(ctx.device(), ctx.allocator(), img.clone(), 1).unwrap();
    let (hg, hx) = (down_gfx.handle(), down_xfer.handle());
    let graph = ctx.graph().unwrap();
    graph
        .record()
        .insert_pass("up", &mut up, ctx.transfer())
        .insert_pass("down on graphics", &mut down_gfx, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    // A later graph reads level 1 back on the transfer family.
    graph
        .record()
        .insert_pass("down on transfer", &mut down_xfer, ctx.transfer())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(hg.read().unwrap(), data);
    let l1 = 2 * 64 * 32 * 4;
    assert_eq!(hx.read().unwrap(), data[l1..l1 + 2 * 32 * 16 * 4].to_vec());
    drop(graph);
    assert_clean(&ctx);
}

/// Hands an image to "presentation" on its queue: declares [`Access::PRESENT`] and signals a
/// binary semaphore, like `SwapchainPresent` (which needs a surface).
struct PresentLike {
    image: Arc<StImage>,
    signal: vk::Semaphore,
}

impl Pass for PresentLike {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.image, Access::PRESENT);
        // SAFETY: a live binary semaphore of the device, unsignalled; the test waits on it
        // after each execution.
        unsafe { d.signal_binary(self.signal) };
    }
    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn present_style_handoff_to_another_family_and_back() {
    // PRESENT_SRC_KHR is a layout of VK_KHR_swapchain: the device enables it, though nothing
    // here presents.
    let ctx = Context::with_options(ContextOptions {
        validation: true,
        swapchain: true,
        ..Default::default()
    })
    .unwrap();
    assert_ne!(ctx.transfer().family(), ctx.graphics().family(), "{IGNORE}");
    let other = if ctx.async_compute().family() != ctx.graphics().family() {
        ctx.async_compute().clone()
    } else {
        ctx.transfer().clone()
    };
    let img = image(
        &ctx,
        32,
        32,
        vk::Format::B8G8R8A8_UNORM,
        1,
        1,
        "fake swapchain image",
    );
    // SAFETY: plain object creation; destroyed after the device is idle below.
    let sem = unsafe {
        ctx.device()
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
    }
    .unwrap();
    let graph = ctx.graph().unwrap();
    let mut clear = ClearColor::new(
        img.clone(),
        vk::ClearColorValue {
            float32: [1.0, 0.0, 0.0, 1.0],
        },
    )
    .unwrap();
    let mut present = PresentLike {
        image: img.clone(),
        signal: sem,
    };
    graph
        .record()
        .insert_pass("render", &mut clear, ctx.graphics())
        .insert_pass("present", &mut present, &other)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(img.state().layout(), Some(vk::ImageLayout::PRESENT_SRC_KHR));
    assert_eq!(img.state().owner(), Some(Some(other.family())));
    // Consume the semaphore on the present queue, then read the image back on graphics: the
    // graph moves it from the present family back, contents kept.
    // SAFETY: the present-like graph above signalled `sem`; nothing else waits on it.
    let mut wait = unsafe { WaitExternal::new(sem, vk::PipelineStageFlags2::ALL_COMMANDS) };
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let h = down.handle();
    graph
        .record()
        .insert_pass("wait", &mut wait, &other)
        .insert_pass("down", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let want: Vec<u8> = (0..32 * 32).flat_map(|_| [0u8, 0, 255, 255]).collect(); // BGRA
    assert_eq!(h.read().unwrap(), want);
    drop(graph);
    // SAFETY: every execution completed (waited above); the semaphore is unused.
    unsafe {
        ctx.device().device_wait_idle().unwrap();
        ctx.device().destroy_semaphore(sem, None);
    }
    assert_clean(&ctx);
}

/// On a transfer-only family: packed mip levels of an R8 image (level sizes not multiples of
/// 4) copy at offsets aligned to 4, with no validation message; a depth copy is refused at
/// planning (depth/stencil buffer<->image copies need a graphics queue) and runs on graphics.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn aligned_packed_levels_and_depth_copies_on_transfer_family() {
    let ctx = multi_ctx();
    assert!(!ctx.transfer().caps().contains(vk::QueueFlags::GRAPHICS));
    let img = image(&ctx, 5, 3, vk::Format::R8_UNORM, 3, 2, "r8");
    let size = UploadImage::packed_size(&img).unwrap() as usize;
    let data = random_bytes(size, 92);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &data).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.transfer(),
        &mut [("up", &mut up), ("down", &mut down)],
    );
    let got = h.read().unwrap();
    // Level 0: 2 layers of 15 bytes (0..30); level 1 at 32 (2 x 2 bytes); level 2 at 36.
    assert_eq!(size, 38);
    for r in [0..30, 32..36, 36..38] {
        assert_eq!(got[r.clone()], data[r]);
    }

    let depth = ctx
        .image(
            vk_baton::ImageDesc::new_2d(4, 4, vk::Format::D32_SFLOAT, IXFER),
            "depth",
        )
        .unwrap();
    let bytes = random_bytes(64, 93);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), depth.clone(), &bytes).unwrap();
    let graph = ctx.graph().unwrap();
    let refused = graph
        .record()
        .insert_pass("depth up", &mut up, ctx.transfer())
        .finish();
    assert!(
        refused.is_err(),
        "a depth copy planned on a transfer-only queue"
    );
    drop(refused);
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), depth.clone()).unwrap();
    let h = down.handle();
    graph
        .record()
        .insert_pass("depth up", &mut up, ctx.graphics())
        .insert_pass("depth down", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(h.read().unwrap().len(), 64);
    drop(graph);
    assert_clean(&ctx);
}
