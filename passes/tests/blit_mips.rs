//! Blits compared with a CPU reference, and every mip level after GenerateMipmaps.

mod common;

use common::*;
use vk_baton::ash::vk;
use vk_baton::ImageDesc;
use vk_baton_passes::{
    ClearColor, DownloadImage, Error, FormatSupport, GenerateMipmaps, ImageBlit, UploadImage,
};

const RGBA: vk::Format = vk::Format::R8G8B8A8_UNORM;

fn texel(data: &[u8], w: usize, x: usize, y: usize) -> [u8; 4] {
    let i = (y * w + x) * 4;
    [data[i], data[i + 1], data[i + 2], data[i + 3]]
}

#[test]
fn blit_nearest_upscale_matches_cpu() {
    let ctx = ctx();
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let src = image(&ctx, 4, 4, RGBA, 1, 1, "src");
    let dst = image(&ctx, 8, 8, RGBA, 1, 1, "dst");
    let data = random_bytes(4 * 4 * 4, 70);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), src.clone(), &data).unwrap();
    let mut blit = ImageBlit::new(&support, src, dst.clone(), vk::Filter::NEAREST).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [("up", &mut up), ("blit", &mut blit), ("down", &mut down)],
    );
    let got = h.read().unwrap();
    for y in 0..8 {
        for x in 0..8 {
            assert_eq!(
                texel(&got, 8, x, y),
                texel(&data, 4, x / 2, y / 2),
                "texel ({x}, {y})"
            );
        }
    }
    assert_clean(&ctx);
}

#[test]
fn blit_linear_downscale_matches_box_filter() {
    let ctx = ctx();
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let src = image(&ctx, 8, 8, RGBA, 1, 2, "src");
    let dst = image(&ctx, 4, 4, RGBA, 1, 2, "dst");
    // Multiples of 4: every 2x2 average is an integer, so the linear 2x downsample is exact.
    let data: Vec<u8> = random_bytes(8 * 8 * 4 * 2, 71)
        .iter()
        .map(|v| v & 0xfc)
        .collect();
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), src.clone(), &data).unwrap();
    let mut blit = ImageBlit::new(&support, src, dst.clone(), vk::Filter::LINEAR).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [("up", &mut up), ("blit", &mut blit), ("down", &mut down)],
    );
    let got = h.read().unwrap();
    for layer in 0..2 {
        let s = &data[layer * 256..(layer + 1) * 256];
        let g = &got[layer * 64..(layer + 1) * 64];
        for y in 0..4 {
            for x in 0..4 {
                let mut want = [0u8; 4];
                for (c, w) in want.iter_mut().enumerate() {
                    let sum: u32 = [(0, 0), (1, 0), (0, 1), (1, 1)]
                        .iter()
                        .map(|(dx, dy)| texel(s, 8, 2 * x + dx, 2 * y + dy)[c] as u32)
                        .sum();
                    *w = (sum / 4) as u8;
                }
                assert_eq!(texel(g, 4, x, y), want, "layer {layer} texel ({x}, {y})");
            }
        }
    }
    assert_clean(&ctx);
}

#[test]
fn blit_regions_mirror_into_part_of_the_destination() {
    let ctx = ctx();
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let src = image(&ctx, 8, 8, RGBA, 1, 1, "src");
    let dst = image(&ctx, 16, 16, RGBA, 1, 1, "dst");
    let data = random_bytes(8 * 8 * 4, 72);
    let mut up = UploadImage::new(ctx.device(), ctx.allocator(), src.clone(), &data).unwrap();
    let mut clear =
        ClearColor::new(dst.clone(), vk::ClearColorValue { float32: [0.0; 4] }).unwrap();
    let sub = vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    };
    let o = |x, y| vk::Offset3D { x, y, z: 0 };
    let o1 = |x, y| vk::Offset3D { x, y, z: 1 };
    // Src (2,2)..(6,6), mirrored horizontally, into dst (10,4)..(14,8).
    let region = vk::ImageBlit {
        src_subresource: sub,
        src_offsets: [o(2, 2), o1(6, 6)],
        dst_subresource: sub,
        dst_offsets: [o(14, 4), o1(10, 8)],
    };
    let mut blit = ImageBlit::regions(
        &support,
        src.clone(),
        dst.clone(),
        &[region],
        vk::Filter::NEAREST,
    )
    .unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), dst.clone()).unwrap();
    let h = down.handle();
    run(
        &ctx,
        ctx.graphics(),
        &mut [
            ("up", &mut up),
            ("clear", &mut clear),
            ("blit", &mut blit),
            ("down", &mut down),
        ],
    );
    let got = h.read().unwrap();
    for y in 0..16 {
        for x in 0..16 {
            let want = if (10..14).contains(&x) && (4..8).contains(&y) {
                texel(&data, 8, 2 + (13 - x), 2 + (y - 4))
            } else {
                [0; 4]
            };
            assert_eq!(texel(&got, 16, x, y), want, "texel ({x}, {y})");
        }
    }
    // A region outside the source is refused.
    let mut bad = region;
    bad.src_offsets[1] = o1(9, 6);
    assert!(ImageBlit::regions(&support, src, dst, &[bad], vk::Filter::NEAREST).is_err());
    assert_clean(&ctx);
}

#[test]
fn blit_format_checks_give_clear_errors() {
    let ctx = ctx();
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let desc = |f| ImageDesc::new_2d(4, 4, f, IXFER);
    // A format this device cannot blit from: the check must say which feature is missing.
    let candidates = [
        vk::Format::BC1_RGBA_UNORM_BLOCK,
        vk::Format::ETC2_R8G8B8_UNORM_BLOCK,
        vk::Format::ASTC_4X4_UNORM_BLOCK,
        vk::Format::R64_UINT,
        vk::Format::D16_UNORM_S8_UINT,
    ];
    let mut checked = 0;
    for f in candidates {
        let features = support.features(f, vk::ImageTiling::OPTIMAL);
        if !features.contains(vk::FormatFeatureFlags::BLIT_SRC) {
            let e = support
                .check_blit(&desc(f), &desc(RGBA), vk::Filter::NEAREST)
                .unwrap_err();
            assert!(
                matches!(e, Error::FormatNotSupported { format, missing, .. } if format == f && missing.contains(vk::FormatFeatureFlags::BLIT_SRC)),
                "{e}"
            );
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "every candidate format supports blits on this device"
    );
    // Integer to float and depth with a linear filter are refused too.
    assert!(support
        .check_blit(
            &desc(vk::Format::R8G8B8A8_UINT),
            &desc(RGBA),
            vk::Filter::NEAREST
        )
        .is_err());
    assert!(support
        .check_blit(
            &desc(vk::Format::D32_SFLOAT),
            &desc(vk::Format::D32_SFLOAT),
            vk::Filter::LINEAR
        )
        .is_err());
    assert_clean(&ctx);
}

/// Level 0 of a 16x16 image with 2 layers: each channel is linear in x and y with even
/// coefficients, so every 2x2 average at every level is an exact integer.
fn level0(layer: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for y in 0..16i32 {
        for x in 0..16i32 {
            let px = if layer == 0 {
                [2 * x + 4 * y, 4 * x + 2 * y, 6 * x + 6 * y, 255]
            } else {
                [200 - 2 * x - 4 * y, 10 + 8 * x, 100 + 2 * y, 255]
            };
            v.extend(px.iter().map(|&c| u8::try_from(c).unwrap()));
        }
    }
    v
}

/// The 2x2 box filter of one level (asserting the averages are exact).
fn downsample(prev: &[u8], w: usize) -> Vec<u8> {
    let nw = w / 2;
    let mut out = Vec::new();
    for y in 0..nw {
        for x in 0..nw {
            for c in 0..4 {
                let sum: u32 = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .iter()
                    .map(|(dx, dy)| prev[((2 * y + dy) * w + 2 * x + dx) * 4 + c] as u32)
                    .sum();
                assert_eq!(sum % 4, 0, "the test pattern must downsample exactly");
                out.push((sum / 4) as u8);
            }
        }
    }
    out
}

#[test]
fn generate_mipmaps_every_level_exact() {
    let ctx = ctx();
    let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
    let img = image(&ctx, 16, 16, RGBA, 5, 2, "mipped");
    // Expected packed contents of every level, layer after layer.
    let mut levels: Vec<Vec<Vec<u8>>> = vec![vec![level0(0), level0(1)]];
    for l in 1..5 {
        let w = 16 >> (l - 1);
        let next = levels[l - 1].iter().map(|p| downsample(p, w)).collect();
        levels.push(next);
    }
    let want: Vec<u8> = levels.iter().flatten().flatten().copied().collect();
    // Upload level 0 only (levels 1.. get garbage first, to prove they are overwritten).
    let mut upload_data = want.clone();
    let l0 = 2 * 16 * 16 * 4;
    upload_data[l0..].iter_mut().for_each(|b| *b = 0x5a);
    let graph = ctx.graph().unwrap();
    let mut up =
        UploadImage::new(ctx.device(), ctx.allocator(), img.clone(), &upload_data).unwrap();
    let mut mips = GenerateMipmaps::new(&support, img.clone(), vk::Filter::LINEAR).unwrap();
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let h = down.handle();
    graph
        .record()
        .insert_pass("up", &mut up, ctx.graphics())
        .insert_pass("mips", &mut mips, ctx.graphics())
        .insert_pass("down", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let got = h.read().unwrap();
    let mut off = 0;
    for (l, layers) in levels.iter().enumerate() {
        for (layer, px) in layers.iter().enumerate() {
            assert_eq!(
                &got[off..off + px.len()],
                &px[..],
                "level {l}, layer {layer}"
            );
            off += px.len();
        }
    }
    assert_eq!(got, want);
    // A later graph reads the levels in the state the pass declared (and left).
    let mut again = DownloadImage::level(ctx.device(), ctx.allocator(), img.clone(), 3).unwrap();
    let h3 = again.handle();
    graph
        .record()
        .insert_pass("again", &mut again, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(
        h3.read().unwrap(),
        [levels[3][0].clone(), levels[3][1].clone()].concat()
    );
    // Every level ends in TRANSFER_SRC_OPTIMAL, as declared.
    assert_eq!(
        img.state().layout(),
        Some(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
    );
    drop(graph);
    // One level is refused.
    let one = image(&ctx, 4, 4, RGBA, 1, 1, "one");
    assert!(GenerateMipmaps::new(&support, one, vk::Filter::LINEAR).is_err());
    assert_clean(&ctx);
}
