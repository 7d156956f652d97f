//! A deferred-style 1080p frame with async compute: G-buffer, three shadow cascades resolved
//! into a screen-space shadow mask, SSAO and light culling on the async compute queue (another
//! family, so ownership moves between them), lighting, a bloom chain, TAA and tone mapping:
//! 21 transients. Its transient memory must come within 5 % of the live-set lower bound and
//! save at least 30 % against no aliasing, with no semaphore wait or batch added.

use super::*;

const GRANULARITY: u64 = 1024;
const IMAGE_TYPES: u32 = 0b0110;
const BUFFER_TYPES: u32 = 0b0111;

/// An optimal-tiling image of `w`×`h` texels of `bytes` bytes, its size rounded to 64 KiB as
/// drivers report it.
fn image(name: &str, w: u64, h: u64, bytes: u64, usage: vk::ImageUsageFlags) -> ResourceDecl {
    let size = (w * h * bytes).div_ceil(65536) * 65536;
    let mem = TransientMemory::image(size, 65536, IMAGE_TYPES).with_granularity(GRANULARITY);
    ResourceDecl::image(name, 1, 1, usage).transient(mem)
}

fn depth(name: &str, w: u64, h: u64) -> ResourceDecl {
    let mut r = image(
        name,
        w,
        h,
        4,
        vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
    );
    if let ResourceKind::Image { aspect, .. } = &mut r.kind {
        *aspect = vk::ImageAspectFlags::DEPTH;
    }
    r
}

/// The frame, and the index of each resource by name.
fn deferred_frame() -> (PlanInput, impl Fn(&str) -> usize) {
    let target = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let (w, h) = (1920, 1080);
    let mut resources = vec![
        depth("depth", w, h),
        image("albedo", w, h, 4, target),
        image("normal", w, h, 8, target),
        image("material", w, h, 4, target),
        image("motion", w, h, 4, target),
        image("ssao raw", w, h, 1, storage),
        image("ssao", w, h, 1, storage),
        depth("shadow 0", 2048, 2048),
        depth("shadow 1", 2048, 2048),
        depth("shadow 2", 2048, 2048),
        image("shadow mask", w, h, 1, target),
        image("hdr", w, h, 8, target),
    ];
    // Bloom: four downsamples from half resolution, three upsamples back.
    for (i, s) in [2, 4, 8, 16].iter().enumerate() {
        resources.push(image(&format!("bloom down {i}"), w / s, h / s, 8, target));
    }
    for (i, s) in [8, 4, 2].iter().enumerate() {
        resources.push(image(
            &format!("bloom up {}", 2 - i),
            w / s,
            h / s,
            8,
            target,
        ));
    }
    resources.push(image("resolved", w, h, 8, target));
    resources.push(image(
        "ldr",
        w,
        h,
        4,
        target | vk::ImageUsageFlags::TRANSFER_SRC,
    ));
    // Light culling: one 32-bit light list per 16×16 tile, up to 256 lights, in a buffer.
    let tiles = (w / 16) * (h / 16 + 1) * 256 * 4;
    let mem = TransientMemory::buffer(tiles, 256, BUFFER_TYPES).with_granularity(GRANULARITY);
    resources.push(
        ResourceDecl::buffer("light tiles", tiles, vk::BufferUsageFlags::STORAGE_BUFFER)
            .transient(mem),
    );
    // The one resource the app keeps: what the frame ends in.
    resources.push(ResourceDecl::image(
        "backbuffer",
        1,
        1,
        vk::ImageUsageFlags::TRANSFER_DST,
    ));
    let names: Vec<String> = resources.iter().map(|r| r.name.clone()).collect();
    let id = move |n: &str| {
        names
            .iter()
            .position(|x| x == n)
            .unwrap_or_else(|| panic!("no resource {n}"))
    };
    let (gfx, compute) = (0, 1);
    let write = |n: &str, a: Access| UseDecl::new(id(n), a).discard();
    let read = |n: &str, a: Access| UseDecl::new(id(n), a);
    let color = Access::COLOR_ATTACHMENT_WRITE;
    let sample = Access::FRAGMENT_SHADER_SAMPLED_READ;
    let csample = Access::COMPUTE_SHADER_SAMPLED_READ;
    let pass = |name: &str, q: usize, uses: Vec<UseDecl>| {
        uses.into_iter()
            .fold(PassDecl::new(name, q), |p, u| p.with_use(u))
    };
    let mut passes = vec![
        pass(
            "depth prepass",
            gfx,
            vec![write("depth", Access::DEPTH_ATTACHMENT_WRITE)],
        ),
        pass(
            "gbuffer",
            gfx,
            vec![
                read("depth", Access::DEPTH_ATTACHMENT_READ),
                write("albedo", color),
                write("normal", color),
                write("material", color),
                write("motion", color),
            ],
        ),
        // Async compute, while graphics renders the shadow cascades.
        pass(
            "ssao",
            compute,
            vec![
                read("depth", csample),
                read("normal", csample),
                write("ssao raw", Access::COMPUTE_SHADER_WRITE),
            ],
        ),
        pass(
            "ssao blur",
            compute,
            vec![
                read("ssao raw", csample),
                write("ssao", Access::COMPUTE_SHADER_WRITE),
            ],
        ),
        pass(
            "light culling",
            compute,
            vec![
                read("depth", csample),
                write("light tiles", Access::COMPUTE_SHADER_WRITE),
            ],
        ),
    ];
    for c in 0..3 {
        let s = format!("shadow {c}");
        passes.push(pass(
            &format!("cascade {c}"),
            gfx,
            vec![write(&s, Access::DEPTH_ATTACHMENT_WRITE)],
        ));
    }
    passes.push(pass(
        "shadow mask",
        gfx,
        vec![
            read("depth", sample),
            read("shadow 0", sample),
            read("shadow 1", sample),
            read("shadow 2", sample),
            write("shadow mask", color),
        ],
    ));
    passes.push(pass(
        "lighting",
        gfx,
        vec![
            read("depth", sample),
            read("albedo", sample),
            read("normal", sample),
            read("material", sample),
            read("shadow mask", sample),
            read("ssao", sample),
            read("light tiles", Access::FRAGMENT_SHADER_STORAGE_READ),
            write("hdr", color),
        ],
    ));
    let mut from = "hdr".to_string();
    for i in 0..4 {
        let to = format!("bloom down {i}");
        passes.push(pass(
            &format!("bloom down {i}"),
            gfx,
            vec![read(&from, sample), write(&to, color)],
        ));
        from = to;
    }
    for i in (0..3).rev() {
        let to = format!("bloom up {i}");
        let skip = format!("bloom down {i}");
        passes.push(pass(
            &format!("bloom up {i}"),
            gfx,
            vec![read(&from, sample), read(&skip, sample), write(&to, color)],
        ));
        from = to;
    }
    passes.push(pass(
        "taa",
        gfx,
        vec![
            read("hdr", sample),
            read("motion", sample),
            write("resolved", color),
        ],
    ));
    passes.push(pass(
        "tonemap",
        gfx,
        vec![
            read("resolved", sample),
            read("bloom up 0", sample),
            write("ldr", color),
        ],
    ));
    passes.push(pass(
        "to backbuffer",
        gfx,
        vec![
            read("ldr", Access::TRANSFER_READ),
            write("backbuffer", Access::TRANSFER_WRITE),
        ],
    ));
    let input = PlanInput {
        queues: vec![
            QueueDecl::new(
                "graphics",
                0,
                vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            ),
            QueueDecl::new(
                "async compute",
                1,
                vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            ),
        ],
        resources,
        passes,
    };
    let names: Vec<String> = input.resources.iter().map(|r| r.name.clone()).collect();
    let id = move |n: &str| names.iter().position(|x| x == n).unwrap();
    (input, id)
}

#[test]
fn deferred_frame_memory() {
    let (input, id) = deferred_frame();
    let transients = input
        .resources
        .iter()
        .filter(|r| r.transient.is_some())
        .count();
    assert!(transients >= 15, "{transients} transients");
    let plan = plan(&input).unwrap();
    println!("{plan}");
    let t = &plan.transients;
    let (total, bound, unaliased) = (t.total_size(), t.lower_bound, t.unaliased_size);
    println!(
        "deferred frame: {transients} transients, transient memory {total} bytes, live-set lower \
         bound {bound}, without aliasing {unaliased}: {:.3}x the bound, {:.1} % saved",
        total as f64 / bound as f64,
        100.0 * (1.0 - total as f64 / unaliased as f64)
    );
    assert_eq!(t.placements.len(), transients);
    assert!(bound > 0 && bound <= total);
    assert!(total * 100 <= bound * 105, "{total} > 1.05 x {bound}");
    assert!(
        total * 10 <= unaliased * 7,
        "{total} is not 30 % below {unaliased}"
    );
    // Async compute runs beside the shadow cascades: SSAO's images and the tile buffer never
    // share memory with the shadow maps they overlap in time.
    let p = |n: &str| t.placement(id(n)).unwrap();
    for a in ["ssao raw", "ssao", "light tiles"] {
        for s in ["shadow 0", "shadow 1", "shadow 2"] {
            let (x, y) = (p(a), p(s));
            let apart =
                x.heap != y.heap || x.offset + x.size <= y.offset || y.offset + y.size <= x.offset;
            assert!(apart, "{a} and {s} overlap");
        }
    }
    plan.verify().unwrap();
    // No semaphore wait or batch is added for aliasing.
    let mut plain = input.clone();
    for r in &mut plain.resources {
        r.transient = None;
    }
    let plain = vk_baton::plan::plan(&plain).unwrap();
    assert_eq!(plan.batch_count(), plain.batch_count());
    assert_eq!(plan.semaphore_waits(), plain.semaphore_waits());
}
