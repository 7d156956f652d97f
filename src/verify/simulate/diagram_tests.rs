//! Pictures of the samples' frames on a simulated NVIDIA device (graphics family 0, transfer
//! family 1, async compute family 2), where lavapipe has one queue: the plans the samples would
//! draw with `--plan-svg` there.

use crate::access::Access;
use crate::diagram::tests::check::{check_dot, check_svg, dump, groups, has_class};
use crate::plan::*;
use crate::verify::simulate::{Simulation, Topology};
use ash::vk;
use roxmltree::Document;

/// (batch waits, value waits) of a plan.
fn wait_kinds(plan: &Plan) -> (usize, usize) {
    let waits = plan
        .queues
        .iter()
        .flat_map(|q| &q.batches)
        .flat_map(|b| &b.waits);
    waits.fold((0, 0), |(b, v), w| match w.target {
        WaitTarget::Batch { .. } => (b + 1, v),
        WaitTarget::Value { .. } => (b, v + 1),
        WaitTarget::Binary(_) => (b, v),
    })
}

/// `examples/async_compute.rs --exclusive`: the step on async compute reads `state[cur]` and
/// overwrites `state[1 - cur]`; the render on graphics reads `state[cur]`. In the steady state
/// graphics waits for this frame's step, which releases `state[cur]` to it, and the step waits
/// for the previous frame's render (an earlier graph) to stop reading what it overwrites.
#[test]
fn async_compute_frame_on_nvidia_shows_the_earlier_graph() {
    let topo = Topology::nvidia();
    let (g, c) = (
        topo.queue("graphics").unwrap(),
        topo.queue("async_compute").unwrap(),
    );
    let mut sim = Simulation::new(topo);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let state = [
        sim.add_resource(ResourceDecl::buffer("state[0]", 2048, usage)),
        sim.add_resource(ResourceDecl::buffer("state[1]", 2048, usage)),
    ];
    let target = sim.add_resource(ResourceDecl::buffer("render target", 2048, usage));
    sim.frame(&[PassDecl::new("initial state", g)
        .with_use(UseDecl::new(state[0], Access::TRANSFER_WRITE).discard())])
        .unwrap();
    let mut report = None;
    for frame in 0..3 {
        let cur = frame % 2;
        report = Some(
            sim.frame(&[
                PassDecl::new("simulate step N+1", c)
                    .with_use(UseDecl::new(state[cur], Access::COMPUTE_SHADER_READ))
                    .with_use(UseDecl::new(state[1 - cur], Access::COMPUTE_SHADER_WRITE).discard()),
                PassDecl::new("render frame N", g)
                    .with_use(UseDecl::new(state[cur], Access::COMPUTE_SHADER_READ))
                    .with_use(UseDecl::new(target, Access::COMPUTE_SHADER_WRITE).discard()),
            ])
            .unwrap(),
        );
    }
    let plan = report.unwrap().plan;
    dump("async-compute-nvidia", &plan);
    assert_eq!(wait_kinds(&plan), (1, 1), "{plan}");
    let svg = check_svg(&plan);
    let doc = Document::parse(&svg).unwrap();
    // The step waits on graphics' value from the previous frame: an arrow from graphics'
    // "earlier graphs" marker into compute's batch.
    let earlier = groups(&doc, "earlier");
    let markers: Vec<&str> = earlier
        .iter()
        .filter(|g| !has_class(g, "wait"))
        .map(|g| g.attribute("id").unwrap())
        .collect();
    let graphics_lane = plan
        .input
        .queues
        .iter()
        .position(|q| q.family == 0)
        .unwrap();
    assert_eq!(markers, [format!("earlier-{graphics_lane}")]);
    let barriers = groups(&doc, "barrier");
    let count = |class: &str| barriers.iter().filter(|b| has_class(b, class)).count();
    assert_eq!((count("release"), count("acquire")), (1, 1), "{plan}");
    check_dot(&plan);
}

/// `examples/streaming_upload.rs`: an upload on the transfer queue, then a verify on async
/// compute that reads the uploaded buffer (released by transfer, acquired by compute) and a
/// host read.
#[test]
fn streaming_upload_batch_on_nvidia_moves_the_buffer_between_families() {
    let topo = Topology::nvidia();
    let (t, c) = (
        topo.queue("transfer").unwrap(),
        topo.queue("async_compute").unwrap(),
    );
    let mut sim = Simulation::new(topo);
    let staging = sim.add_resource(ResourceDecl::buffer(
        "staging 0",
        4096,
        vk::BufferUsageFlags::TRANSFER_SRC,
    ));
    let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
    let device = sim.add_resource(ResourceDecl::buffer("device 0", 4096, usage));
    let partials = sim.add_resource(ResourceDecl::buffer(
        "partial sums",
        64,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    ));
    let batch = || {
        [
            PassDecl::new("upload", t)
                .with_use(UseDecl::new(staging, Access::TRANSFER_READ))
                .with_use(UseDecl::new(device, Access::TRANSFER_WRITE).discard()),
            PassDecl::new("verify", c)
                .with_use(UseDecl::new(device, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(partials, Access::COMPUTE_SHADER_WRITE).discard()),
            PassDecl::new("host read", c).with_use(UseDecl::new(partials, Access::HOST_READ)),
        ]
    };
    sim.frame(&batch()).unwrap();
    let plan = sim.frame(&batch()).unwrap().plan;
    dump("streaming-upload-nvidia", &plan);
    // The upload waits for the previous verify's read; verify waits for this upload.
    assert_eq!(wait_kinds(&plan), (1, 1), "{plan}");
    let svg = check_svg(&plan);
    let doc = Document::parse(&svg).unwrap();
    let barriers = groups(&doc, "barrier");
    let count = |class: &str| barriers.iter().filter(|b| has_class(b, class)).count();
    assert_eq!((count("release"), count("acquire")), (1, 1), "{plan}");
    check_dot(&plan);
}

/// Passes that go back and forth between three families: several batches per queue, and
/// waits in both directions between lanes that are not neighbours.
#[test]
fn ping_pong_across_three_families() {
    let topo = Topology::nvidia();
    let q = |name: &str| topo.queue(name).unwrap();
    let (g, t, c) = (q("graphics"), q("transfer"), q("async_compute"));
    let mut sim = Simulation::new(topo);
    let vertices = sim.add_resource(ResourceDecl::buffer(
        "vertices",
        4096,
        vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::VERTEX_BUFFER
            | vk::BufferUsageFlags::STORAGE_BUFFER,
    ));
    let field = sim.add_resource(ResourceDecl::image(
        "velocity field",
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
    ));
    let params = sim.add_resource(ResourceDecl::buffer(
        "params",
        256,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    ));
    let frame = [
        PassDecl::new("upload vertices", t)
            .with_use(UseDecl::new(vertices, Access::TRANSFER_WRITE).discard()),
        PassDecl::new("advect", c)
            .with_use(UseDecl::new(vertices, Access::COMPUTE_SHADER_READ))
            .with_use(UseDecl::new(field, Access::COMPUTE_SHADER_WRITE).discard()),
        PassDecl::new("draw field", g)
            .with_use(UseDecl::new(field, Access::FRAGMENT_SHADER_SAMPLED_READ))
            .with_use(UseDecl::new(params, Access::COMPUTE_SHADER_WRITE).discard()),
        PassDecl::new("relax", c)
            .with_use(UseDecl::new(params, Access::COMPUTE_SHADER_READ))
            .with_use(UseDecl::new(field, Access::COMPUTE_SHADER_WRITE)),
        PassDecl::new("upload vertices again", t)
            .with_use(UseDecl::new(vertices, Access::TRANSFER_WRITE).discard()),
        PassDecl::new("draw", g)
            .with_use(UseDecl::new(field, Access::FRAGMENT_SHADER_SAMPLED_READ))
            .with_use(UseDecl::new(vertices, Access::VERTEX_BUFFER)),
    ];
    sim.frame(&frame).unwrap();
    let plan = sim.frame(&frame).unwrap().plan;
    dump("ping-pong-nvidia", &plan);
    let (batch_waits, value_waits) = wait_kinds(&plan);
    assert!(
        plan.batch_count() >= 5 && batch_waits >= 4 && value_waits >= 1,
        "{plan}"
    );
    check_svg(&plan);
    check_dot(&plan);
}

/// `examples/headless.rs` on NVIDIA: the Mandelbrot image drawn on async compute moves to
/// graphics (a release and an acquire) to be copied into a readback buffer.
#[test]
fn headless_on_nvidia_moves_the_image_to_graphics() {
    let topo = Topology::nvidia();
    let (g, c) = (
        topo.queue("graphics").unwrap(),
        topo.queue("async_compute").unwrap(),
    );
    let mut sim = Simulation::new(topo);
    let image = sim.add_resource(ResourceDecl::image(
        "mandelbrot",
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
    ));
    let readback = sim.add_resource(ResourceDecl::buffer(
        "readback",
        1_024_000,
        vk::BufferUsageFlags::TRANSFER_DST,
    ));
    let plan = sim
        .frame(&[
            PassDecl::new("draw mandelbrot", c)
                .with_use(UseDecl::new(image, Access::COMPUTE_SHADER_WRITE).discard()),
            PassDecl::new("download", g)
                .with_use(UseDecl::new(image, Access::TRANSFER_READ))
                .with_use(UseDecl::new(readback, Access::TRANSFER_WRITE).discard()),
            PassDecl::new("host read", g).with_use(UseDecl::new(readback, Access::HOST_READ)),
        ])
        .unwrap()
        .plan;
    dump("headless-nvidia", &plan);
    assert_eq!(wait_kinds(&plan), (1, 0), "{plan}");
    let svg = check_svg(&plan);
    let doc = Document::parse(&svg).unwrap();
    let barriers = groups(&doc, "barrier");
    let count = |class: &str| barriers.iter().filter(|b| has_class(b, class)).count();
    assert_eq!((count("release"), count("acquire")), (1, 1), "{plan}");
    check_dot(&plan);
}
