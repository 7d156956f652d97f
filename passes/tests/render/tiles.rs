//! Tiles of one target drawn by separate passes ([`Render::disjoint_area`]): no barrier
//! between the tiles, the group ordered after the clear and before the download, with depth
//! testing and blending that read what the clear left.
//!
//! The layer (1.4.309) does not check one rendering's attachment accesses against another's:
//! two renderings that load and store one image over overlapping areas with no barrier
//! between them go unreported (its load-op check orders earlier color-attachment accesses as
//! rasterization order does within a rendering). Here the data and the verifier are the
//! evidence; `tests/gpu/unordered.rs` shows with copies that the layer does check disjoint
//! texel boxes, and reports overlapping ones.

use super::*;
use vk_baton::plan::Command;

/// The clear's red (exact in 8-bit UNORM).
const RED: f32 = 64.0 / 255.0;

/// The quadrant `k` (0 to 3, row by row) of the target.
fn quadrant(k: u32) -> vk::Rect2D {
    let half = SIDE / 2;
    vk::Rect2D {
        offset: vk::Offset2D {
            x: ((k % 2) * half) as i32,
            y: ((k / 2) * half) as i32,
        },
        extent: vk::Extent2D {
            width: half,
            height: half,
        },
    }
}

/// One triangle over the whole viewport at depth `z`, of colour `rgba`, as vertex bytes.
fn covering(z: f32, rgba: [f32; 4]) -> Vec<u8> {
    [(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)]
        .iter()
        .flat_map(|&(x, y)| [x, y, z].into_iter().chain(rgba))
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// Per tile, two triangles over the whole viewport: a near one adding `16 (k + 1)` of green,
/// then a far one adding all of blue, which the near one's depth hides.
fn tile_vertices() -> Vec<u8> {
    (0..4)
        .flat_map(|k| {
            let green = (16 * (k + 1)) as f32 / 255.0;
            [
                covering(0.5, [0.0, green, 0.0, 0.0]),
                covering(0.75, [0.0, 0.0, 1.0, 0.0]),
            ]
            .concat()
        })
        .collect()
}

/// How many texels of `got` differ from [`tiles_expected`], and the first of them.
fn wrong_texels(got: &[u8]) -> (usize, Option<(u32, u32, Vec<u8>)>) {
    let want = tiles_expected();
    let wrong: Vec<usize> = (0..want.len() / 4)
        .filter(|&t| got.get(t * 4..t * 4 + 4) != Some(&want[t * 4..t * 4 + 4]))
        .collect();
    let first = wrong.first().map(|&t| {
        let texel = got.get(t * 4..t * 4 + 4).unwrap_or_default().to_vec();
        (t as u32 % SIDE, t as u32 / SIDE, texel)
    });
    (wrong.len(), first)
}

/// What each texel must be: the clear's red and alpha, plus its quadrant's green.
fn tiles_expected() -> Vec<u8> {
    let mut out = Vec::new();
    for y in 0..SIDE {
        for x in 0..SIDE {
            let k = (x / (SIDE / 2)) + 2 * (y / (SIDE / 2));
            out.extend_from_slice(&[64, (16 * (k + 1)) as u8, 0, 255]);
        }
    }
    out
}

/// Whether the graphics queue's commands run the four tiles one after another, with no barrier
/// among them.
fn tiles_adjacent(plan: &vk_baton::plan::Plan, first: usize) -> bool {
    plan.queues.iter().flat_map(|q| &q.batches).any(|b| {
        b.commands
            .windows(4)
            .any(|w| (0..4).all(|i| matches!(w[i], Command::Pass(p) if p == first + i)))
    })
}

#[test]
fn tiles_drawn_by_separate_passes_have_no_barrier_between_them() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    use vk::ImageUsageFlags as U;
    let color = ctx
        .image(
            ImageDesc::new_2d(SIDE, SIDE, FORMAT, U::COLOR_ATTACHMENT | U::TRANSFER_SRC),
            "atlas",
        )
        .unwrap();
    let depth = ctx
        .image(
            ImageDesc::new_2d(
                SIDE,
                SIDE,
                vk::Format::D32_SFLOAT,
                U::DEPTH_STENCIL_ATTACHMENT,
            ),
            "atlas depth",
        )
        .unwrap();
    let bytes = tile_vertices();
    let vertices = ctx
        .buffer(
            BufferDesc::new(
                bytes.len() as u64,
                vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
            ),
            "tile vertices",
        )
        .unwrap();
    let mut upload =
        UploadBuffer::new(ctx.device(), ctx.allocator(), vertices.clone(), 0, &bytes).unwrap();
    let colors = || vec![ColorTarget::load(color.clone()).blending()];
    let depth_target = || Some(DepthTarget::load(depth.clone()));
    let pipeline = Pipeline::new(
        ctx.device(),
        &render_formats(&ctx, &colors(), depth_target().as_ref()),
        Options {
            depth_write: Some(true),
            additive: true,
            stencil_replace: false,
        },
    );
    let (p, vb) = (pipeline.pipeline, vertices.handle());
    let mut clear = Render::new(
        ctx.device(),
        area(),
        vec![ColorTarget::clear(color.clone(), [RED, 0.0, 0.0, 1.0])],
        Some(DepthTarget::clear(depth.clone(), 1.0)),
        |_| Ok(()),
    )
    .unwrap();
    let tile = |k: u32, at: vk::Rect2D| {
        Render::new(ctx.device(), at, colors(), depth_target(), move |r| {
            // SAFETY: a pipeline made for these targets; the vertex buffer is declared, and
            // the tile's six vertices are its two triangles.
            unsafe {
                let (d, c) = (r.device(), r.cmd());
                d.cmd_bind_pipeline(c, vk::PipelineBindPoint::GRAPHICS, p);
                d.cmd_bind_vertex_buffers(c, 0, &[vb], &[0]);
                d.cmd_draw(c, 3, 1, 6 * k, 0);
                d.cmd_draw(c, 3, 1, 6 * k + 3, 0);
            }
            Ok(())
        })
        .unwrap()
        .reads(&vertices, Access::VERTEX_BUFFER)
        .disjoint_area()
    };
    let mut tiles: Vec<_> = (0..4).map(|k| tile(k, quadrant(k))).collect();
    for frame in 0..3 {
        let mut down =
            DownloadImage::all_levels(ctx.device(), ctx.allocator(), color.clone()).unwrap();
        let pixels = down.handle();
        let mut b = graph.record();
        if frame == 0 {
            b = b.insert_pass("vertices", &mut upload, ctx.transfer());
        }
        b = b.insert_pass("clear", &mut clear, ctx.graphics());
        for (k, t) in tiles.iter_mut().enumerate() {
            b = b.insert_pass(
                ["tile 0", "tile 1", "tile 2", "tile 3"][k],
                t,
                ctx.graphics(),
            );
        }
        let planned = b
            .insert_pass("download", &mut down, ctx.graphics())
            .finish()
            .unwrap();
        let first = if frame == 0 { 2 } else { 1 };
        assert!(
            tiles_adjacent(planned.plan(), first),
            "frame {frame}:\n{}",
            planned.plan()
        );
        planned.execute().unwrap().wait().unwrap();
        let (wrong, first) = wrong_texels(&pixels.read().unwrap());
        assert_eq!(
            wrong, 0,
            "frame {frame}: the first wrong texel (x, y, rgba): {first:?}"
        );
    }
    // A tile that overlaps another is refused, and the graph goes on.
    let mut wide = tile(
        0,
        vk::Rect2D {
            extent: vk::Extent2D {
                width: SIDE,
                height: SIDE / 2,
            },
            ..quadrant(0)
        },
    );
    let err = graph
        .record()
        .insert_pass("clear", &mut clear, ctx.graphics())
        .insert_pass("wide", &mut wide, ctx.graphics())
        .insert_pass("tile 1", &mut tiles[1], ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(
        matches!(err, vk_baton::Error::UnorderedWriteOverlap { .. }),
        "{err}"
    );
    let mut down = DownloadImage::all_levels(ctx.device(), ctx.allocator(), color.clone()).unwrap();
    let pixels = down.handle();
    let mut b = graph
        .record()
        .insert_pass("clear", &mut clear, ctx.graphics());
    for (k, t) in tiles.iter_mut().enumerate() {
        b = b.insert_pass(
            ["tile 0", "tile 1", "tile 2", "tile 3"][k],
            t,
            ctx.graphics(),
        );
    }
    b.insert_pass("download", &mut down, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let (wrong, first) = wrong_texels(&pixels.read().unwrap());
    assert_eq!(
        wrong, 0,
        "after the refusal: the first wrong texel: {first:?}"
    );
    drop(graph);
    assert_clean(&ctx);
}
