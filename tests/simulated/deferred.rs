//! Mirrors `examples/deferred.rs`: its 18 passes over 20 transients and the app's output image,
//! frame after frame, with memory requirements as a discrete GPU reports them (images in 64 KiB
//! pages, `bufferImageGranularity` 1 KiB). Where async compute is another family, the images
//! both queues read are CONCURRENT, as the sample makes them.

use super::*;
use vk_baton::plan::TransientMemory;

const GRANULARITY: u64 = 1024;
const IMAGE_TYPES: u32 = 0b0110;
const BUFFER_TYPES: u32 = 0b0111;

/// The sample's frame at `w`×`h` with `shadow`×`shadow` shadow maps, on `topo`: checks each
/// steady frame's transient memory against the issue's targets and against the same frame
/// planned without transients (aliasing adds no batch and no semaphore wait).
pub(crate) fn deferred(topo: Topo, w: u64, h: u64, shadow: u64) -> usize {
    let mut s = S::new(topo);
    let (g, c) = (s.g, s.c);
    let both = s.cross(g, c);
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let image = |s: &mut S, name: &str, w: u64, h: u64, bytes: u64, shared: bool| {
        let size = (w.max(1) * h.max(1) * bytes).div_ceil(65536) * 65536;
        let memory = TransientMemory::image(size, 65536, IMAGE_TYPES).with_granularity(GRANULARITY);
        let mut d = ResourceDecl::image(name, 1, 1, storage).transient(memory);
        d.concurrent = shared && both;
        s.sim.add_resource(d)
    };
    let depth = image(&mut s, "depth", w, h, 4, true);
    let albedo = image(&mut s, "albedo", w, h, 4, false);
    let normal = image(&mut s, "normal", w, h, 8, true);
    let material = image(&mut s, "material", w, h, 4, false);
    let ssao_raw = image(&mut s, "ssao raw", w, h, 4, false);
    let ssao = image(&mut s, "ssao", w, h, 4, true);
    let tiles_bytes = w.div_ceil(16) * h.div_ceil(16) * 13 * 4;
    let mut tiles_decl = ResourceDecl::buffer(
        "light tiles",
        tiles_bytes,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    )
    .transient(
        TransientMemory::buffer(tiles_bytes, 256, BUFFER_TYPES).with_granularity(GRANULARITY),
    );
    tiles_decl.concurrent = both;
    let tiles = s.sim.add_resource(tiles_decl);
    let maps = [
        image(&mut s, "shadow map sun", shadow, shadow, 4, false),
        image(&mut s, "shadow map rim", shadow, shadow, 4, false),
    ];
    let masks = [
        image(&mut s, "shadow mask sun", w, h, 4, false),
        image(&mut s, "shadow mask rim", w, h, 4, false),
    ];
    let hdr = image(&mut s, "hdr", w, h, 8, false);
    let down: Vec<usize> = (1..=4)
        .map(|i| {
            image(
                &mut s,
                &format!("bloom down {}", i - 1),
                w >> i,
                h >> i,
                8,
                false,
            )
        })
        .collect();
    let up: Vec<usize> = (1..=3)
        .map(|i| {
            image(
                &mut s,
                &format!("bloom up {}", i - 1),
                w >> i,
                h >> i,
                8,
                false,
            )
        })
        .collect();
    let ldr = image(&mut s, "ldr", w, h, 4, false);
    let output = s.img("output", 1, 1, storage | vk::ImageUsageFlags::TRANSFER_SRC);

    let write = |r| ud(r, Access::COMPUTE_SHADER_WRITE);
    let read = |r| u(r, Access::COMPUTE_SHADER_SAMPLED_READ);
    let mut passes = vec![
        pass(
            "gbuffer",
            g,
            [write(depth), write(albedo), write(normal), write(material)],
        ),
        pass("ssao", c, [read(depth), read(normal), write(ssao_raw)]),
        pass("ssao blur", c, [read(ssao_raw), write(ssao)]),
        pass("light culling", c, [read(depth), write(tiles)]),
    ];
    for k in 0..2 {
        passes.push(pass("shadow map", g, [write(maps[k])]));
        passes.push(pass(
            "shadow mask",
            g,
            [read(depth), read(maps[k]), write(masks[k])],
        ));
    }
    passes.push(pass(
        "lighting",
        g,
        [
            read(depth),
            read(albedo),
            read(normal),
            read(material),
            read(masks[0]),
            read(masks[1]),
            read(ssao),
            u(tiles, Access::COMPUTE_SHADER_READ),
            write(hdr),
        ],
    ));
    let mut from = hdr;
    for &to in &down {
        passes.push(pass("bloom down", g, [read(from), write(to)]));
        from = to;
    }
    for i in (0..3).rev() {
        passes.push(pass(
            "bloom up",
            g,
            [read(from), read(down[i]), write(up[i])],
        ));
        from = up[i];
    }
    passes.push(pass("tonemap", g, [read(hdr), read(up[0]), write(ldr)]));
    passes.push(pass("sharpen", g, [read(ldr), write(output)]));

    let frames = FRAMES;
    let mut memory = (0, 0, 0);
    for frame in 0..frames {
        let r = s.run(passes.clone());
        let t = &r.plan.transients;
        assert_eq!(t.placements.len(), 20, "{topo:?}");
        let (total, bound, unaliased) = (t.total_size(), t.lower_bound, t.unaliased_size);
        memory = (total, bound, unaliased);
        assert!(
            bound <= total && total * 100 <= bound * 105,
            "{topo:?} {w}x{h}: {total} bytes, more than 1.05 x the bound {bound}\n{}",
            r.plan
        );
        assert!(
            total * 10 <= unaliased * 7,
            "{topo:?} {w}x{h}: {total} bytes, not 30 % below {unaliased}"
        );
        // Async compute beside the shadow maps: SSAO's images and the tiles never share memory
        // with them when the queues differ.
        if g != c {
            for a in [ssao_raw, ssao, tiles] {
                for m in maps {
                    let (x, y) = (t.placement(a).unwrap(), t.placement(m).unwrap());
                    let apart = x.heap != y.heap
                        || x.offset + x.size <= y.offset
                        || y.offset + y.size <= x.offset;
                    assert!(apart, "{topo:?}: {a} and {m} overlap");
                }
            }
        }
        // The same frame without transients: aliasing adds no batch and no semaphore wait.
        let mut plain = r.plan.input.clone();
        for res in &mut plain.resources {
            res.transient = None;
        }
        let plain = vk_baton::plan::plan(&plain).unwrap();
        assert_eq!(
            (r.plan.batch_count(), r.plan.semaphore_waits()),
            (plain.batch_count(), plain.semaphore_waits()),
            "{topo:?} frame {frame}"
        );
    }
    // From the third frame on, the output's state repeats and the plan is reused.
    assert_eq!(
        s.reuse_pattern(),
        format!("pp{}", "r".repeat(frames - 2)),
        "{topo:?}"
    );
    let (total, bound, unaliased) = memory;
    println!(
        "deferred {w}x{h} on {topo:?}: {total} bytes with aliasing, lower bound {bound} ({:.3}x), \
         without aliasing {unaliased} ({:.1} % saved)",
        total as f64 / bound as f64,
        100.0 * (1.0 - total as f64 / unaliased as f64)
    );
    frames
}
