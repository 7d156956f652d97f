//! Upload → download round trips with random bytes, on lavapipe with validation and
//! synchronization validation.

mod common;

use common::*;
use vk_baton::ash::vk;
use vk_baton_passes::{DownloadBuffer, DownloadImage, Error, UploadBuffer, UploadImage};

#[test]
fn buffer_round_trip_random_bytes() {
    let ctx = ctx();
    let buf = buffer(&ctx, 4096, "dst");
    let data = random_bytes(4096, 1);
    let mut up = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &data).unwrap();
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
    let h = down.handle();
    assert!(matches!(h.read(), Err(Error::NotExecuted(_))));
    assert!(!h.is_ready());
    let graph = ctx.graph().unwrap();
    let fence = graph
        .record()
        .insert_pass("up", &mut up, ctx.transfer())
        .insert_pass("down", &mut down, ctx.transfer())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    assert_eq!(h.read().unwrap(), data);
    assert_eq!(h.bytes().unwrap(), data);
    drop(fence);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn buffer_partial_upload_and_range_download() {
    let ctx = ctx();
    let buf = buffer(&ctx, 1024, "dst");
    let a = random_bytes(1024, 2);
    let b = random_bytes(100, 3);
    let mut up_a = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &a).unwrap();
    let mut up_b = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 300, &b).unwrap();
    let mut down =
        DownloadBuffer::range(ctx.device(), ctx.allocator(), buf.clone(), 200, 400).unwrap();
    let mut all = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
    let (h, h_all) = (down.handle(), all.handle());
    run(
        &ctx,
        ctx.graphics(),
        &mut [
            ("a", &mut up_a),
            ("b", &mut up_b),
            ("down", &mut down),
            ("all", &mut all),
        ],
    );
    let mut want = a.clone();
    want[300..400].copy_from_slice(&b);
    assert_eq!(h.read().unwrap(), want[200..600].to_vec());
    assert_eq!(h_all.read().unwrap(), want);
    // Out-of-range and empty uploads are refused as values.
    assert!(UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 1000, &b).is_err());
    assert!(UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &[]).is_err());
    assert!(DownloadBuffer::range(ctx.device(), ctx.allocator(), buf, 1000, 100).is_err());
    assert_clean(&ctx);
}

#[test]
fn repeated_download_execution_after_one_upload() {
    let ctx = ctx();
    let buf = buffer(&ctx, 256, "dst");
    let data = random_bytes(256, 9);
    let mut up = UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &data).unwrap();
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
    let h = down.handle();
    let graph = ctx.graph().unwrap();
    graph
        .record()
        .insert_pass("up", &mut up, ctx.graphics())
        .insert_pass("down", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(h.read().unwrap(), data);
    // The same download pass again, in a later graph: the handle follows the new execution.
    let fence = graph
        .record()
        .insert_pass("down again", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    assert_eq!(h.read().unwrap(), data);
    drop(fence);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn repeated_download_executions_return_fresh_data() {
    let ctx = ctx();
    let buf = buffer(&ctx, 256, "dst");
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), buf.clone()).unwrap();
    let h = down.handle();
    let graph = ctx.graph().unwrap();
    for seed in 10..13 {
        let data = random_bytes(256, seed);
        let mut up =
            UploadBuffer::new(ctx.device(), ctx.allocator(), buf.clone(), 0, &data).unwrap();
        graph
            .record()
            .insert_pass("up", &mut up, ctx.graphics())
            .insert_pass("down", &mut down, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(h.read().unwrap(), data);
    }
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn image_round_trip_all_mips_and_layers() {
    let ctx = ctx();
    let img = image(&ctx, 32, 16, vk::Format::R8G8B8A8_UNORM, 4, 3, "img");
    let size = UploadImage::packed_size(&img).unwrap() as usize;
    // 3 layers of 32x16, 16x8, 8x4 and 4x2 texels of 4 bytes.
    assert_eq!(size, 3 * 4 * (32 * 16 + 16 * 8 + 8 * 4 + 4 * 2));
    let data = random_bytes(size, 4);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &data).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let mut lvl2 = DownloadImage::level(ctx.device(), ctx.allocator(), img.clone(), 2).unwrap();
    let (h, h2) = (down.handle(), lvl2.handle());
    let graph = ctx.graph().unwrap();
    graph
        .record()
        .insert_pass("up", &mut up, ctx.transfer())
        .insert_pass("down", &mut down, ctx.transfer())
        .insert_pass("level 2", &mut lvl2, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(h.read().unwrap(), data);
    let l2_start = 3 * 4 * (32 * 16 + 16 * 8);
    assert_eq!(
        h2.read().unwrap(),
        data[l2_start..l2_start + 3 * 4 * 8 * 4].to_vec()
    );
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn image_upload_regions_into_one_mip_and_layer() {
    let ctx = ctx();
    let img = image(&ctx, 8, 8, vk::Format::R32_UINT, 2, 2, "img");
    let base = random_bytes(UploadImage::packed_size(&img).unwrap() as usize, 5);
    let mut up_all = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &base).unwrap();
    // A 2x2 patch at (1, 1) of mip 1, layer 1, from a buffer with a row length of 3 texels.
    let patch = random_bytes(3 * 2 * 4, 6);
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 3,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 1,
            base_array_layer: 1,
            layer_count: 1,
        },
        image_offset: vk::Offset3D { x: 1, y: 1, z: 0 },
        image_extent: vk::Extent3D {
            width: 2,
            height: 2,
            depth: 1,
        },
    };
    let mut up_patch = UploadImage::regions(
        ctx.device(),
        ctx.allocator(),
        img.clone(),
        &patch,
        &[region],
    )
    .unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [
            ("all", &mut up_all),
            ("patch", &mut up_patch),
            ("down", &mut down),
        ],
    );
    let mut want = base.clone();
    let mip1 = 2 * 8 * 8 * 4; // two layers of mip 0
    let layer1 = mip1 + 4 * 4 * 4; // mip 1, layer 1
    for y in 0..2 {
        for x in 0..2 {
            let dst = layer1 + ((1 + y) * 4 + 1 + x) * 4;
            let src = (y * 3 + x) * 4;
            want[dst..dst + 4].copy_from_slice(&patch[src..src + 4]);
        }
    }
    assert_eq!(h.read().unwrap(), want);
    // Wrong data sizes are refused.
    assert!(UploadImage::new(ctx.device(), ctx.allocator(), img, &base[1..]).is_err());
    assert_clean(&ctx);
}

/// Hostile regions (huge row lengths, image heights, layer counts, offsets; blit offsets at
/// the ends of i32) are errors from the constructors: no panic, no wrapped staging size.
#[test]
fn hostile_regions_are_errors_not_panics() {
    let ctx = ctx();
    let img = image(&ctx, 8, 8, vk::Format::R8G8B8A8_UNORM, 1, 2, "img");
    let buf = buffer(&ctx, 4096, "buf");
    let base = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: 8,
            height: 8,
            depth: 1,
        },
    };
    let hostile = [
        vk::BufferImageCopy {
            buffer_offset: u64::MAX - 3,
            ..base
        },
        vk::BufferImageCopy {
            buffer_row_length: u32::MAX,
            buffer_image_height: u32::MAX,
            ..base
        },
        vk::BufferImageCopy {
            image_subresource: vk::ImageSubresourceLayers {
                base_array_layer: 1,
                layer_count: u32::MAX,
                ..base.image_subresource
            },
            ..base
        },
        vk::BufferImageCopy {
            image_offset: vk::Offset3D {
                x: i32::MAX,
                y: 0,
                z: 0,
            },
            ..base
        },
        vk::BufferImageCopy {
            image_extent: vk::Extent3D {
                width: u32::MAX,
                height: u32::MAX,
                depth: u32::MAX,
            },
            ..base
        },
        vk::BufferImageCopy {
            image_extent: vk::Extent3D {
                width: 8,
                height: 0,
                depth: 1,
            },
            ..base
        },
    ];
    let data = vec![0u8; 256];
    for r in &hostile {
        let is_region_error = |e: &Error| matches!(e, Error::InvalidRegion(_));
        let e =
            DownloadImage::regions(ctx.device(), ctx.allocator(), img.clone(), &[*r]).unwrap_err();
        // A huge row length on a valid region may only fail at the staging allocation.
        assert!(
            is_region_error(&e) || r.buffer_row_length == u32::MAX,
            "{r:?}: {e}"
        );
        let e = UploadImage::regions(ctx.device(), ctx.allocator(), img.clone(), &data, &[*r])
            .unwrap_err();
        assert!(is_region_error(&e), "{r:?}: {e}");
        let e = vk_baton_passes::CopyBufferToImage::regions(buf.clone(), img.clone(), &[*r])
            .unwrap_err();
        assert!(is_region_error(&e), "{r:?}: {e}");
        let e = vk_baton_passes::CopyImageToBuffer::regions(img.clone(), buf.clone(), &[*r])
            .unwrap_err();
        assert!(is_region_error(&e), "{r:?}: {e}");
    }
    let support = vk_baton_passes::FormatSupport::new(ctx.instance(), ctx.physical_device());
    let dst = image(&ctx, 8, 8, vk::Format::R8G8B8A8_UNORM, 1, 2, "dst");
    let o = |x, y, z| vk::Offset3D { x, y, z };
    for offsets in [
        [o(i32::MIN, 0, 0), o(i32::MAX, 8, 1)],
        [o(0, i32::MAX, 0), o(8, i32::MIN, 1)],
        [o(0, 0, i32::MIN), o(8, 8, i32::MAX)],
    ] {
        let sub = base.image_subresource;
        let region = vk::ImageBlit {
            src_subresource: sub,
            src_offsets: offsets,
            dst_subresource: sub,
            dst_offsets: [o(0, 0, 0), o(8, 8, 1)],
        };
        let e = vk_baton_passes::ImageBlit::regions(
            &support,
            img.clone(),
            dst.clone(),
            &[region],
            vk::Filter::NEAREST,
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidRegion(_)), "{offsets:?}: {e}");
    }
    assert_clean(&ctx);
}

/// Packed mip levels of a format whose level sizes are not multiples of 4 start at aligned
/// offsets (lcm(texel, 4)), and round-trip exactly; regions naming two aspects are refused.
#[test]
fn packed_levels_are_aligned_and_one_aspect_per_region() {
    let ctx = ctx();
    // R8 5x3, 3 levels: 15 bytes; 2x1 at 16; 1x1 at 20.
    let img = image(&ctx, 5, 3, vk::Format::R8_UNORM, 3, 1, "r8");
    assert_eq!(UploadImage::packed_size(&img).unwrap(), 21);
    let mut data = random_bytes(21, 7);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &data).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.transfer(),
        &mut [("up", &mut up), ("down", &mut down)],
    );
    let got = h.read().unwrap();
    assert_eq!(got.len(), 21);
    // The padding bytes (15, 18, 19) are not copied.
    for i in [15, 18, 19] {
        data[i] = got[i];
    }
    assert_eq!(got, data);

    let ds = image(&ctx, 4, 4, vk::Format::D32_SFLOAT_S8_UINT, 1, 1, "ds");
    let buf = buffer(&ctx, 4096, "buf");
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: 4,
            height: 4,
            depth: 1,
        },
    };
    let e = vk_baton_passes::CopyBufferToImage::regions(buf.clone(), ds.clone(), &[region])
        .unwrap_err();
    assert!(matches!(e, Error::InvalidRegion(_)), "{e}");
    let e =
        DownloadImage::regions(ctx.device(), ctx.allocator(), ds.clone(), &[region]).unwrap_err();
    assert!(matches!(e, Error::InvalidRegion(_)), "{e}");
    let depth_only = vk::BufferImageCopy {
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::DEPTH,
            ..region.image_subresource
        },
        ..region
    };
    assert!(vk_baton_passes::CopyBufferToImage::regions(buf, ds, &[depth_only]).is_ok());
    assert_clean(&ctx);
}
