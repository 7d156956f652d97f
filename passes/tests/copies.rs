//! Copy regions (partial regions and offsets), checked exactly.

mod common;

use common::*;
use vk_baton::ash::vk;
use vk_baton_passes::{
    CopyBuffer, CopyBufferToImage, CopyImage, CopyImageToBuffer, DownloadBuffer, DownloadImage,
    UploadBuffer, UploadImage,
};

fn layers(mip: u32, base: u32, count: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: mip,
        base_array_layer: base,
        layer_count: count,
    }
}

#[test]
fn copy_buffer_regions_with_offsets() {
    let ctx = ctx();
    let (a, b) = (buffer(&ctx, 512, "a"), buffer(&ctx, 512, "b"));
    let da = random_bytes(512, 20);
    let db = random_bytes(512, 21);
    let mut up_a = UploadBuffer::new(ctx.device(), ctx.allocator(), a.clone(), 0, &da).unwrap();
    let mut up_b = UploadBuffer::new(ctx.device(), ctx.allocator(), b.clone(), 0, &db).unwrap();
    let regions = [
        vk::BufferCopy {
            src_offset: 0,
            dst_offset: 100,
            size: 50,
        },
        vk::BufferCopy {
            src_offset: 300,
            dst_offset: 7,
            size: 13,
        },
        vk::BufferCopy {
            src_offset: 310,
            dst_offset: 400,
            size: 112,
        },
    ];
    let mut copy = CopyBuffer::regions(a.clone(), b.clone(), &regions).unwrap();
    // A copy within one buffer, to non-overlapping bytes.
    let mut inner = CopyBuffer::regions(
        a.clone(),
        a.clone(),
        &[vk::BufferCopy {
            src_offset: 0,
            dst_offset: 256,
            size: 16,
        }],
    )
    .unwrap();
    let mut down_a = DownloadBuffer::whole(ctx.device(), ctx.allocator(), a.clone()).unwrap();
    let mut down_b = DownloadBuffer::whole(ctx.device(), ctx.allocator(), b.clone()).unwrap();
    let (ha, hb) = (down_a.handle(), down_b.handle());
    run(
        &ctx,
        ctx.transfer(),
        &mut [
            ("up a", &mut up_a),
            ("up b", &mut up_b),
            ("copy", &mut copy),
            ("inner", &mut inner),
            ("down a", &mut down_a),
            ("down b", &mut down_b),
        ],
    );
    let mut want_b = db.clone();
    for r in &regions {
        let (s, d, n) = (
            r.src_offset as usize,
            r.dst_offset as usize,
            r.size as usize,
        );
        want_b[d..d + n].copy_from_slice(&da[s..s + n]);
    }
    let mut want_a = da.clone();
    want_a.copy_within(0..16, 256);
    assert_eq!(hb.read().unwrap(), want_b);
    assert_eq!(ha.read().unwrap(), want_a);
    // Bad regions are refused as values.
    assert!(CopyBuffer::regions(
        a.clone(),
        b.clone(),
        &[vk::BufferCopy {
            src_offset: 500,
            dst_offset: 0,
            size: 13
        }]
    )
    .is_err());
    assert!(CopyBuffer::regions(
        a.clone(),
        b.clone(),
        &[
            vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: 8
            },
            vk::BufferCopy {
                src_offset: 0,
                dst_offset: 4,
                size: 8
            },
        ]
    )
    .is_err());
    assert!(CopyBuffer::regions(
        a.clone(),
        a.clone(),
        &[vk::BufferCopy {
            src_offset: 0,
            dst_offset: 4,
            size: 8
        }]
    )
    .is_err());
    assert!(CopyBuffer::regions(a, b, &[]).is_err());
    assert_clean(&ctx);
}

#[test]
fn copy_image_partial_regions_between_mips_and_layers() {
    let ctx = ctx();
    let f = vk::Format::R8G8B8A8_UINT;
    let src = image(&ctx, 16, 16, f, 2, 2, "src");
    let dst = image(&ctx, 16, 16, f, 2, 2, "dst");
    let size = UploadImage::packed_size(&src).unwrap() as usize;
    let (ds, dd) = (random_bytes(size, 30), random_bytes(size, 31));
    let mut up_s = UploadImage::new(ctx.device(), ctx.allocator(), src.clone(), &ds).unwrap();
    let mut up_d = UploadImage::new(ctx.device(), ctx.allocator(), dst.clone(), &dd).unwrap();
    let regions = [
        // src mip 0 layer 1, (2,3) 5x4 -> dst mip 1 layer 0 at (1,2)
        vk::ImageCopy {
            src_subresource: layers(0, 1, 1),
            src_offset: vk::Offset3D { x: 2, y: 3, z: 0 },
            dst_subresource: layers(1, 0, 1),
            dst_offset: vk::Offset3D { x: 1, y: 2, z: 0 },
            extent: vk::Extent3D {
                width: 5,
                height: 4,
                depth: 1,
            },
        },
        // src mip 1 layers 0..2 whole -> dst mip 1 ... no: -> dst mip 0 layers 0..2 at (8,8)
        vk::ImageCopy {
            src_subresource: layers(1, 0, 2),
            src_offset: vk::Offset3D::default(),
            dst_subresource: layers(0, 0, 2),
            dst_offset: vk::Offset3D { x: 8, y: 8, z: 0 },
            extent: vk::Extent3D {
                width: 8,
                height: 8,
                depth: 1,
            },
        },
    ];
    let mut copy = CopyImage::regions(src.clone(), dst.clone(), &regions).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [
            ("up s", &mut up_s),
            ("up d", &mut up_d),
            ("copy", &mut copy),
            ("down", &mut down),
        ],
    );

    // CPU reference over the packed layout: level 0 (2 layers of 16x16), level 1 (2 of 8x8).
    let at = |mip: usize, layer: usize, x: usize, y: usize| {
        let w = 16 >> mip;
        let base = if mip == 0 { 0 } else { 2 * 16 * 16 * 4 };
        base + ((layer * w * w) + y * w + x) * 4
    };
    let mut want = dd.clone();
    for y in 0..4 {
        for x in 0..5 {
            let s = at(0, 1, 2 + x, 3 + y);
            let d = at(1, 0, 1 + x, 2 + y);
            want[d..d + 4].copy_from_slice(&ds[s..s + 4]);
        }
    }
    for layer in 0..2 {
        for y in 0..8 {
            for x in 0..8 {
                let s = at(1, layer, x, y);
                let d = at(0, layer, 8 + x, 8 + y);
                want[d..d + 4].copy_from_slice(&ds[s..s + 4]);
            }
        }
    }
    assert_eq!(h.read().unwrap(), want);
    assert_clean(&ctx);
}

#[test]
fn buffer_to_image_and_back_with_row_pitch_and_offsets() {
    let ctx = ctx();
    let img = image(&ctx, 8, 8, vk::Format::R8G8B8A8_UNORM, 1, 1, "img");
    let staging = buffer(&ctx, 1024, "src");
    let out = buffer(&ctx, 1024, "out");
    let sdata = random_bytes(1024, 40);
    let mut up =
        UploadBuffer::new(ctx.device(), ctx.allocator(), staging.clone(), 0, &sdata).unwrap();
    let mut zero_img =
        vk_baton_passes::ClearColor::new(img.clone(), vk::ClearColorValue { uint32: [0; 4] })
            .unwrap();
    let mut zero_out = vk_baton_passes::FillBuffer::whole(out.clone(), 0).unwrap();
    // 3x2 texels from buffer offset 64 with a row length of 5 texels, into (4, 5).
    let to_img = vk::BufferImageCopy {
        buffer_offset: 64,
        buffer_row_length: 5,
        buffer_image_height: 0,
        image_subresource: layers(0, 0, 1),
        image_offset: vk::Offset3D { x: 4, y: 5, z: 0 },
        image_extent: vk::Extent3D {
            width: 3,
            height: 2,
            depth: 1,
        },
    };
    let mut b2i = CopyBufferToImage::regions(staging.clone(), img.clone(), &[to_img]).unwrap();
    // The 4x3 block at (3, 4) of the image back to buffer offset 100 with row length 6.
    let to_buf = vk::BufferImageCopy {
        buffer_offset: 100,
        buffer_row_length: 6,
        buffer_image_height: 0,
        image_subresource: layers(0, 0, 1),
        image_offset: vk::Offset3D { x: 3, y: 4, z: 0 },
        image_extent: vk::Extent3D {
            width: 4,
            height: 3,
            depth: 1,
        },
    };
    let mut i2b = CopyImageToBuffer::regions(img.clone(), out.clone(), &[to_buf]).unwrap();
    let mut down = DownloadBuffer::whole(ctx.device(), ctx.allocator(), out.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [
            ("up", &mut up),
            ("zero img", &mut zero_img),
            ("zero out", &mut zero_out),
            ("b2i", &mut b2i),
            ("i2b", &mut i2b),
            ("down", &mut down),
        ],
    );
    // CPU reference: the 8x8 image after b2i.
    let mut imgv = vec![0u8; 8 * 8 * 4];
    for y in 0..2 {
        for x in 0..3 {
            let s = 64 + (y * 5 + x) * 4;
            let d = ((5 + y) * 8 + 4 + x) * 4;
            imgv[d..d + 4].copy_from_slice(&sdata[s..s + 4]);
        }
    }
    let mut want = vec![0u8; 1024];
    for y in 0..3 {
        for x in 0..4 {
            let s = ((4 + y) * 8 + 3 + x) * 4;
            let d = 100 + (y * 6 + x) * 4;
            want[d..d + 4].copy_from_slice(&imgv[s..s + 4]);
        }
    }
    assert_eq!(h.read().unwrap(), want);
    // Regions outside the image or the buffer are refused.
    let mut bad = to_img;
    bad.image_offset.x = 6;
    assert!(CopyBufferToImage::regions(staging.clone(), img.clone(), &[bad]).is_err());
    let mut bad = to_buf;
    bad.buffer_offset = 1000;
    assert!(CopyImageToBuffer::regions(img, out, &[bad]).is_err());
    assert_clean(&ctx);
}

#[test]
fn whole_image_copy_all_levels() {
    let ctx = ctx();
    let a = image(&ctx, 8, 4, vk::Format::R16G16_SFLOAT, 3, 2, "a");
    let b = image(&ctx, 8, 4, vk::Format::R16G16_SFLOAT, 3, 2, "b");
    let data = random_bytes(UploadImage::packed_size(&a).unwrap() as usize, 50);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), a.clone(), &data).unwrap();
    let mut copy = CopyImage::whole(a, b.clone()).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), b).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.transfer(),
        &mut [("up", &mut up), ("copy", &mut copy), ("down", &mut down)],
    );
    assert_eq!(h.read().unwrap(), data);
    assert_clean(&ctx);
}
