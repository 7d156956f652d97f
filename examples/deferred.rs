//! The flagship sample: a rasterized deferred frame on two queues, whose intermediate images
//! live in transient memory.
//!
//! The frame, in program order (queue in brackets):
//!
//! 1. **cull** [async compute]: one `VkDrawIndexedIndirectCommand` per opaque instance, with no
//!    instance where the camera's frustum culls it (`deferred_cull.comp`).
//! 2. **forward depth**, **transparent** [graphics, 4× MSAA]: the opaque scene's depth at 4
//!    samples from the culled draws, then glass tested against it read-only
//!    (`DepthTarget::read_only`, store op NONE) and blended into a layer that is resolved to one
//!    sample (`resolve_into`).
//! 3. **gbuffer** [graphics]: albedo, normal and depth, drawn with one
//!    `vkCmdDrawIndexedIndirect` from the culling's commands.
//! 4. **ssao**, **ssao blur**, **light culling** [async compute] beside the **shadow map**
//!    [graphics]: the sun's depth-only draws of every opaque instance.
//! 5. **lighting** [async compute]: samples the G-buffer, the depth buffer, the shadow map and
//!    the SSAO; writes the HDR image.
//! 6. **bloom** down and up, **tonemap** [graphics]: HDR under the glass layer, plus bloom,
//!    into the app's output image.
//! 7. **ui** [graphics]: an overlay drawn over the output with load op LOAD and blending.
//!
//! The forward layer comes first because it needs only the culled draws: its multisampled
//! targets are gone before the G-buffer, so their memory holds what follows, and the queues
//! overlap where little is alive (shadow map beside SSAO). `tests/simulated/deferred.rs`
//! plans and verifies the same frame on the multi-family topologies the CI machine lacks.
//!
//! The meshes (a box and a sphere), their instances (the ground, boxes, balls, glass) and their
//! indices are streamed in once by the stock `Uploader` on the transfer queue, in a graph of
//! their own that the first frame waits for. The raster passes are the stock `Render` pass;
//! what they record is in the plain functions of `deferred/draw.rs` (and the compute passes'
//! in `deferred/dispatch.rs`), which a hand-written version of this frame can call between its
//! own barriers and submits.
//!
//! The transients come from the graph (`graph.transient_image(desc, name)`) and are used like
//! any image. The plan places them in shared heaps: two transients share memory when every
//! use of one happens-before the first use of the other, and the plan orders them with the
//! barriers (and, across queues, the semaphores) that sharing needs. The sample prints the
//! transient memory with aliasing, without it, and the live-set lower bound (the most memory
//! that transients used at the same time need), then checks what it claims:
//!
//! - the aliased frame needs at most 5 % more than the lower bound, and at least 30 % less
//!   than without aliasing;
//! - a steady frame reuses the plan, allocates no device memory and creates no Vulkan object.
//!   Steady frames are those after the first `FRAMES_IN_FLIGHT`, but for any that made the
//!   heap set of a frame in flight: a fast GPU may finish the first frames before the next one
//!   binds, so that two frames first overlap (and need two sets) later on, up to the last frame
//!   (`deferred/steady.rs`);
//! - the last frame rendered again without aliasing (`Graph::set_transient_aliasing(false)`)
//!   is identical bit for bit.
//!
//! It writes the last frame to `deferred.png` (or `--png PATH`); `tests/samples.rs` compares
//! it with `tests/reference/deferred_320x180.png`.
//!
//! ```text
//! cargo run --release --example deferred -- --width 1920 --height 1080 --frames 60
//! VK_BATON_VALIDATION=1 cargo run --example deferred -- --width 320 --height 180 --frames 4
//! ```
//!
//! Where async compute is another queue family, the images and the draw commands both queues
//! use (the G-buffer, depth, shadow map, HDR image, draws) are CONCURRENT between the families,
//! so both can read them at once; `--exclusive` keeps them EXCLUSIVE (ownership transfers) for
//! comparison. The scene's buffers are CONCURRENT either way (see `Scene::new`). `--plan`
//! prints the steady frame's plan; `--skip PASS` makes a raster pass draw nothing (what the
//! test's comparison with the reference picture must notice). Exits non-zero on a validation
//! message or a failed check.
//!
//! `--compare` runs the same frame written by hand with raw ash beside the library's
//! (`deferred/hand.rs`: its own targets, barriers, semaphores and submits; the same scene,
//! pipelines, shaders and recording functions), `--frames` timed frames per side in alternating
//! blocks, and prints each side's CPU time per frame (record + submit; the library's with a
//! reused plan, which it checks) and GPU time per frame (timestamps at either end of each
//! queue's work), their medians and spread, and the ratios library / hand; it checks that the
//! hand-written frame's picture is the library's (`deferred/compare.rs`). The aliasing checks
//! above are not run then.
//!
//! `--held` (with or without `--compare`) executes a plan the sample holds instead of building
//! the frame every frame (`deferred/held.rs`: `Planned::hold` on the first frame, then
//! `HeldPlan::execute`, which must not re-plan once the upload's frame is past).
//!
//! `--replay` turns on `Graph::set_replay`: every pass gives a replay key, so a frame whose
//! plan, passes and heap set an earlier frame had submits that frame's command buffers again
//! and records nothing. The compute passes pick their descriptor sets by the objects bound
//! (one per heap set, not written again), and the frame number the point lights move with
//! is a word of memory the host writes, not a push constant (`deferred/dispatch.rs`). The
//! sample prints which frames recorded. With `--compare` (builder loop only), the library's
//! timestamp passes are keyed by their query slot, and a third side joins: the hand-written
//! frame recorded once per slot and submitted again (`--replay` in `deferred/hand.rs`), the
//! floor a replay can reach.
//!
//! ```text
//! cargo run --release --example deferred -- --compare --width 1920 --height 1080 --shadow 2048 --frames 200
//! cargo run --release --example deferred -- --compare --replay --width 1920 --height 1080 --shadow 2048 --frames 200
//! cargo run --release --example deferred -- --compare --held --width 1920 --height 1080 --shadow 2048 --frames 200
//! VK_BATON_VALIDATION=1 cargo run --example deferred -- --compare --frames 4
//! ```
//!
//! (The layer checks hazards through descriptors, such as a compute pass's storage buffer,
//! only with its shader-access heuristic on: `Context` turns it on with validation.)

#[path = "deferred/compare.rs"]
mod compare;
#[path = "deferred/dispatch.rs"]
mod dispatch;
#[path = "deferred/draw.rs"]
mod draw;
#[path = "deferred/frame.rs"]
mod frame;
#[path = "deferred/frame_report.rs"]
mod frame_report;
#[path = "deferred/hand.rs"]
mod hand;
#[path = "deferred/hand_record.rs"]
mod hand_record;
#[path = "deferred/held.rs"]
mod held;
#[path = "deferred/options.rs"]
mod options;
#[path = "deferred/pipelines.rs"]
mod pipelines;
#[path = "deferred/replays.rs"]
mod replays;
#[path = "deferred/scene.rs"]
mod scene;
#[path = "deferred/stamps.rs"]
mod stamps;
#[path = "deferred/steady.rs"]
mod steady;

use dispatch::Dispatch;
use frame::{passes, size, targets};
pub use options::Options;
use pipelines::Samplers;
use scene::Scene;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;
use support::report_validation;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, ExecutionFence, Graph, GraphBuilder, Queue, StImage};
use vk_baton_context::Context;
use vk_baton_passes::Uploader;

/// Executions the sample keeps in flight: fewer than the descriptor sets each pass cycles
/// through.
const FRAMES_IN_FLIGHT: usize = 2;
const _: () = assert!(FRAMES_IN_FLIGHT < dispatch::SETS);

/// One of the frame's passes: a compute dispatch (whose push constants carry the frame number),
/// or a draw (a stock `Render` pass).
pub enum Step {
    Compute(Dispatch),
    Draw(Box<dyn vk_baton::Pass>),
}

impl vk_baton::Pass for Step {
    fn declare(&self, d: &mut vk_baton::Declare<'_>) {
        match self {
            Step::Compute(p) => p.declare(d),
            Step::Draw(p) => p.declare(d),
        }
    }

    fn record(&mut self, r: &mut vk_baton::Recorder<'_>) -> vk_baton::Result<()> {
        match self {
            Step::Compute(p) => p.record(r),
            Step::Draw(p) => p.record(r),
        }
    }

    fn replay_key(&self) -> Option<vk_baton::pass::ReplayKey> {
        match self {
            Step::Compute(p) => p.replay_key(),
            Step::Draw(p) => p.replay_key(),
        }
    }

    fn replayed(&mut self, completion: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
        match self {
            Step::Compute(p) => p.replayed(completion),
            Step::Draw(p) => p.replayed(completion),
        }
    }
}

/// The frame's passes in program order: name, pass, queue.
pub type Passes = Vec<(&'static str, Step, Queue)>;

/// Plans frame `n` (the compute passes write it where their shaders read it: the point lights
/// move).
fn plan_frame<'a>(
    graph: &'a Graph,
    passes: &'a mut Passes,
    n: u32,
) -> vk_baton::Result<vk_baton::Planned<'a>> {
    plan_frame_with(graph, passes, n, |b| b, |b| b)
}

/// [`plan_frame`] with the passes `before` inserts first and those `after` inserts last.
fn plan_frame_with<'a>(
    graph: &'a Graph,
    passes: &'a mut Passes,
    n: u32,
    before: impl FnOnce(GraphBuilder<'a>) -> GraphBuilder<'a>,
    after: impl FnOnce(GraphBuilder<'a>) -> GraphBuilder<'a>,
) -> vk_baton::Result<vk_baton::Planned<'a>> {
    let mut b = before(graph.record());
    for (name, pass, queue) in passes.iter_mut() {
        if let Step::Compute(d) = pass {
            d.frame = n;
        }
        b = b.insert_pass(*name, pass, queue);
    }
    after(b).finish()
}

/// Copies the output into a host-visible buffer and reads it.
fn read_output(ctx: &Context, graph: &Graph, output: &Arc<StImage>) -> vk_baton::Result<Vec<u8>> {
    let [w, h] = size(output);
    let bytes = w as u64 * h as u64 * 4;
    let readback = ctx.buffer(
        BufferDesc::readback(bytes, vk::BufferUsageFlags::TRANSFER_DST),
        "readback",
    )?;
    let region = vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(output.desc().extent);
    graph
        .record()
        .insert_fn(
            "download",
            ctx.graphics(),
            |d| {
                d.uses(output, Access::COPY_READ);
                d.uses(&readback, Access::COPY_WRITE).discard();
            },
            |r| {
                let layout = r.layout(Access::COPY_READ);
                // SAFETY: the output is in `layout` and the buffer holds it all.
                unsafe {
                    r.device().cmd_copy_image_to_buffer(
                        r.cmd(),
                        output.handle(),
                        layout,
                        readback.handle(),
                        &[region],
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "host read",
            ctx.graphics(),
            |d| {
                d.uses(&readback, Access::HOST_READ);
            },
            |_| Ok(()),
        )
        .finish()?
        .execute()?
        .wait()?;
    let mut pixels = vec![0u8; bytes as usize];
    readback.read(0, &mut pixels)?;
    Ok(pixels)
}

fn write_png(path: &std::path::Path, w: u32, h: u32, rgba: &[u8]) -> vk_baton::Result<()> {
    let err = |e: String| vk_baton::Error::InvalidInput(format!("{}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(|e| err(e.to_string()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut wr| wr.write_image_data(rgba))
        .map_err(|e| err(e.to_string()))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn run() -> vk_baton::Result<bool> {
    let o = options::options()?;
    let features = if o.maintenance8 {
        vk_baton::access::DeviceFeatures::MAINTENANCE8
    } else {
        vk_baton::access::DeviceFeatures::NONE
    };
    let ctx = Context::with_options(vk_baton_context::ContextOptions {
        device_features: features,
        ..Default::default()
    })?;
    println!("device: {}", ctx.device_name());
    let (gfx, compute) = (ctx.graphics(), ctx.async_compute());
    println!(
        "queues: graphics = family {}, async compute = family {}{}",
        gfx.family(),
        compute.family(),
        if gfx == compute {
            " (one VkQueue: single-queue device)"
        } else if o.exclusive {
            " (shared images EXCLUSIVE: ownership transfers)"
        } else {
            " (shared images CONCURRENT)"
        }
    );
    let graph = ctx.graph()?;
    if o.general_layouts {
        graph.set_layout_policy(LayoutPolicy::General);
        // Copies in GENERAL on purpose: old layers' performance warning is expected.
        ctx.allow_message(vk_baton_context::messages::COPY_IN_GENERAL_LAYOUT);
    }
    println!("image layouts: {:?}", graph.layout_policy());
    let samplers = Samplers::new(ctx.device())?;
    let families = [ctx.transfer().family(), gfx.family(), compute.family()];
    let mut uploader = Uploader::new(ctx.device(), ctx.allocator(), 1 << 20)
        .map_err(|e| vk_baton::Error::InvalidInput(e.to_string()))?;
    let (scene, mut upload) = Scene::new(&ctx, &mut uploader, &families)?;
    // The upload goes first, in a graph of its own: the first frame waits for it (on the
    // transfer queue's timeline, and takes the buffers' ownership where that is another
    // family). Not waited on here; the frames after the first start from the same states, so
    // they reuse one plan.
    let mut frame_report = o.report.as_ref().map(|_| {
        graph.set_gpu_timings(Some(ctx.timestamp_support()));
        frame_report::FrameReport::new(o.frames)
    });
    let planned = (graph.record())
        .insert_pass("upload", &mut upload, ctx.transfer())
        .finish()?;
    if let Some(r) = frame_report.as_mut() {
        r.planned(frame_report::UPLOAD, planned.plan());
    }
    let uploaded = planned.execute()?;
    // What the upload signals on the transfer queue's timeline (the hand-written frame waits
    // for it).
    let upload_value = ctx.transfer().last_value();
    let scene = Arc::new(scene);
    let t = targets(&ctx, &graph, &o, &scene)?;
    graph.set_replay(o.replay);
    let (mut passes, pipelines) = passes(&ctx, &t, &scene, &samplers, &o.skip, o.replay)?;
    let raster = |name: &str| {
        passes
            .iter()
            .any(|p| p.0 == name && matches!(p.1, Step::Draw(_)))
    };
    if let Some(unknown) = o.skip.iter().find(|s| !raster(s)) {
        return Err(vk_baton::Error::InvalidInput(format!(
            "--skip {unknown}: not a raster pass"
        )));
    }
    if o.compare {
        let ok = compare::run(
            &ctx,
            &graph,
            &o,
            &mut passes,
            &t.output,
            &scene,
            &samplers,
            &pipelines,
            upload_value,
        )?;
        uploaded.wait()?;
        drop(upload);
        drop(passes);
        drop(graph);
        let messages = report_validation(&ctx);
        return Ok(ok && messages == 0);
    }
    drop(pipelines);

    // Aliased frames, FRAMES_IN_FLIGHT at a time; the first ones make the heaps and objects.
    // `--held`: the first frame's plan is held and executed again each frame (`held.rs`).
    let frame = Cell::new(0);
    let (mut builder_passes, mut numbered) = (None, Vec::new());
    if o.held {
        numbered = held::numbered(&mut passes, &frame);
    } else {
        builder_passes = Some(&mut passes);
    }
    let mut numbered = Some(&mut numbered);
    let mut held_plan: Option<vk_baton::HeldPlan<'_>> = None;
    println!(
        "frame loop: {}",
        if o.held {
            "held plan (Planned::hold once, then HeldPlan::execute each frame)"
        } else {
            "builder (record, insert_pass, finish with the plan cache, execute each frame)"
        }
    );
    if o.replay {
        println!("replay: on (Graph::set_replay: recordings submitted again when nothing changed)");
    }
    // Each frame's number and fence.
    let mut in_flight: VecDeque<(u32, ExecutionFence)> = VecDeque::new();
    let (mut steady, mut plan) = (steady::Steady::new(FRAMES_IN_FLIGHT), None);
    let mut replays = replays::Replays::default();
    let mut stats_before = graph.transient_stats();
    for n in 0..o.frames {
        let start = std::time::Instant::now();
        if in_flight.len() == FRAMES_IN_FLIGHT {
            let (done, fence) = in_flight.pop_front().expect("non-empty");
            fence.wait()?;
            if let Some(r) = frame_report.as_mut() {
                r.completed(done, &fence);
            }
        }
        frame.set(n);
        let (fence, was_reused) = if let Some(passes) = builder_passes.as_deref_mut() {
            let planned = plan_frame(&graph, passes, n)?;
            if n == o.frames - 1 {
                plan = Some(planned.plan().clone());
            }
            if let Some(r) = frame_report.as_mut() {
                r.planned(n, planned.plan());
            }
            let was_reused = planned.reused();
            (planned.execute()?, was_reused)
        } else if let Some(h) = held_plan.as_mut() {
            // Not re-planned: the plan reused.
            let before = h.replanned();
            (h.execute()?, h.replanned() == before)
        } else {
            let planned = held::plan_to_hold(&graph, numbered.take().expect("once"), |b| b, |b| b)?;
            let was_reused = planned.reused();
            (held_plan.insert(planned.hold()).execute()?, was_reused)
        };
        if let (Some(h), true) = (&held_plan, n == o.frames - 1) {
            plan = Some(h.plan().clone());
        }
        if let (Some(h), Some(r)) = (&held_plan, frame_report.as_mut()) {
            r.planned(n, h.plan());
        }
        // The execution bound its transients: the stats after it are its own.
        let after = graph.transient_stats();
        steady.frame(n, (&stats_before, &after), was_reused, start.elapsed());
        replays.frame(n, fence.replayed(), after.sets);
        stats_before = after;
        in_flight.push_back((n, fence));
    }
    if let Some(h) = &held_plan {
        println!(
            "held plan: re-planned {} of {} executions",
            h.replanned(),
            o.frames
        );
    }
    let replay_ok = !o.replay || replays.ok();
    if o.replay {
        println!(
            "replay: {} ({})",
            replays.summary(o.frames),
            if replay_ok { "OK" } else { "MISSED" }
        );
    }
    // The passes again, for the frame without aliasing.
    drop(held_plan);
    // The steady frames' GPU work ends here: their time includes this wait.
    let drain = std::time::Instant::now();
    while let Some((done, fence)) = in_flight.pop_front() {
        fence.wait()?;
        if let Some(r) = frame_report.as_mut() {
            r.completed(done, &fence);
        }
    }
    steady.time += drain.elapsed();
    uploaded.wait()?;
    if let Some(r) = frame_report.as_mut() {
        r.completed(frame_report::UPLOAD, &uploaded);
    }
    drop(upload);
    let steady_stats = graph.transient_stats();
    let plan = plan.expect("frames > 0");
    let aliased = read_output(&ctx, &graph, &t.output)?;

    // The last frame again, each transient in memory of its own: other objects, for which
    // the replayable passes write sets anew (every frame that used the old ones is done).
    for (_, step, _) in &mut passes {
        if let Step::Compute(d) = step {
            // SAFETY: every frame was waited for above (and `read_output`'s execution uses
            // no compute pass).
            unsafe { d.forget_sets() };
        }
    }
    graph.set_transient_aliasing(false);
    plan_frame(&graph, &mut passes, o.frames - 1)?
        .execute()?
        .wait()?;
    let unaliased_stats = graph.transient_stats();
    let unaliased = read_output(&ctx, &graph, &t.output)?;

    let tp = &plan.transients;
    let images = plan
        .input
        .resources
        .iter()
        .filter(|r| {
            r.transient.is_some() && matches!(r.kind, vk_baton::plan::ResourceKind::Image { .. })
        })
        .count();
    let buffers = tp.placements.len() - images;
    let (total, without, bound) = (tp.total_size(), tp.unaliased_size, tp.lower_bound);
    let ratio = total as f64 / bound as f64;
    let saved = 100.0 * (1.0 - total as f64 / without as f64);
    if o.plan {
        println!("\nplan of the last frame:\n{plan}");
    }
    println!(
        "frame: {}x{}, shadow map {s}x{s}, {} instances; {} passes, {} batches, {} barrier commands, {} semaphore waits",
        o.width,
        o.height,
        scene.opaque as usize + scene.transparent.len(),
        plan.input.passes.len(),
        plan.batch_count(),
        plan.barrier_commands(),
        plan.semaphore_waits(),
        s = o.shadow
    );
    println!(
        "transients: {} ({images} images, {buffers} buffer{})",
        tp.placements.len(),
        if buffers == 1 { "" } else { "s" }
    );
    println!(
        "transient memory with aliasing: {total} bytes ({:.2} MiB) in {} heap(s)",
        mib(total),
        tp.heaps.len()
    );
    println!(
        "transient memory without aliasing: {without} bytes ({:.2} MiB)",
        mib(without)
    );
    println!(
        "live-set lower bound: {bound} bytes ({:.2} MiB)",
        mib(bound)
    );
    let ratio_ok = total * 100 <= bound * 105;
    let saved_ok = total * 10 <= without * 7;
    println!(
        "with aliasing: {ratio:.3}x the lower bound (target at most 1.05x: {}), {saved:.1} % less than without aliasing (target at least 30 %: {})",
        if ratio_ok { "OK" } else { "MISSED" },
        if saved_ok { "OK" } else { "MISSED" }
    );
    println!(
        "allocated for one execution: {} bytes with aliasing, {} bytes without ({} heap set(s) for {FRAMES_IN_FLIGHT} frames in flight)",
        steady_stats.execution_heap_bytes, unaliased_stats.execution_heap_bytes, steady_stats.sets
    );
    let steady_ok = steady.ok();
    println!(
        "steady frames: {} ({}); plans reused {}, heaps allocated {}, Vulkan objects created {} ({})",
        steady.frames,
        steady.which(o.frames),
        steady.reused,
        steady.made.0,
        steady.made.1,
        if steady_ok { "OK" } else { "MISSED" }
    );
    println!(
        "frame time: {:.2} ms (wall clock, mean of the {} steady frames)",
        steady.time.as_secs_f64() * 1e3 / steady.frames.max(1) as f64,
        steady.frames
    );
    let same = aliased == unaliased;
    println!(
        "check: frame {} without aliasing is {} ({} bytes)",
        o.frames - 1,
        if same {
            "identical bit for bit"
        } else {
            "DIFFERENT"
        },
        aliased.len()
    );
    write_png(&o.png, o.width, o.height, &aliased)?;
    if let (Some(r), Some(path)) = (&frame_report, &o.report) {
        r.write(path)?;
    }
    println!("wrote {} ({}x{})", o.png.display(), o.width, o.height);
    drop(passes);
    drop(graph);
    let messages = report_validation(&ctx);
    Ok(messages == 0 && ratio_ok && saved_ok && steady_ok && same && replay_ok)
}

fn main() {
    support::main_with(run)
}
