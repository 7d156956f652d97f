//! Async compute: each frame, the graphics queue "renders" frame N (an ALU-heavy compute
//! dispatch that reads the simulation state) while the async compute queue runs the next,
//! independent simulation step, whose result frame N+1 consumes.
//!
//! The simulation state is double-buffered (`state[0]`, `state[1]`): in frame N the
//! simulation reads `state[N % 2]` and writes `state[(N + 1) % 2]`, and the renderer reads
//! `state[N % 2]`. Inside one frame the two passes don't conflict (two reads, and a write to
//! the other buffer), so vk-baton puts no semaphore between them: they can overlap. Across
//! frames it adds exactly what the double buffer needs: frame N's render waits for step N-1's
//! write, and step N waits for render N-1's read of the buffer it overwrites. Where the two
//! queues are different families, the state buffers are CONCURRENT (both families read
//! `state[N % 2]` at once, which an EXCLUSIVE buffer cannot allow without serializing).
//!
//! It prints the GPU time of each queue per frame (the graph's own timestamps around each pass:
//! `Graph::set_gpu_timings`), the frame time, and the overlap achieved: serial time (the
//! sum of both queues' busy time) over the measured frame time, against the ideal sum/max.
//! Both results are checked against the host. On a single-queue device (lavapipe) it runs
//! the same graph, correctly and without overlap, and says so.
//!
//! ```text
//! cargo run --release --example async_compute -- --frames 200 --size 256 --iters 100000
//! VK_BATON_VALIDATION=1 cargo run --example async_compute -- --frames 8 --size 4 --iters 500
//! ```
//!
//! `--size` is the number of 64-wide workgroups of each workload, `--iters` the length of
//! each invocation's integer ALU loop. The defaults (256 workgroups, 100k iterations on a
//! GPU; far less on a CPU device) keep each workload small enough that neither fills an
//! H100 alone. `--plan-svg PATH` draws the steady-state frame's plan there. Exits non-zero
//! on any validation message or a wrong result.

use std::sync::Arc;
use std::time::Instant;
use support::{push_u32s, report_validation, InFlight, ValueExt};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, ExecutionFence, Pass, Recorder, StBuffer};
use vk_baton_context::Context;
use vk_baton_passes::{ComputeDispatch, ShaderAccess};

const USAGE: &str =
    "usage: async_compute [--frames N] [--size WORKGROUPS] [--iters N] [--exclusive] [--maintenance8] [--plan-svg PATH]";

/// Frames the CPU may run ahead of the GPU.
const FRAMES_IN_FLIGHT: usize = 2;
/// Workgroup width of `sim.comp`.
const WG: u32 = 64;
/// The two passes of a frame.
const STEP: &str = "simulate step N+1";
const RENDER: &str = "render frame N";
/// Salt bit that tells the render's mixing apart from the simulation's.
const RENDER_SALT: u32 = 0x8000_0000;

/// The host's copy of `sim.comp`'s mixing function.
fn mix(x: u32, salt: u32, iters: u32) -> u32 {
    let mut x = x ^ salt;
    for _ in 0..iters {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x ^= x >> 16;
    }
    x
}

/// The initial simulation state.
fn initial(i: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) ^ 0xA5A5_A5A5
}

/// `vkCmdCopyBuffer` of the whole of `src` into `dst`.
struct Copy {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
}

impl Pass for Copy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default().size(self.src.size());
        // SAFETY: both buffers are in the declared transfer states and large enough.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
}

/// Makes a mapped buffer's GPU writes visible to the host once the fence signals.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }

    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

/// Per-frame GPU times, from the graph's timings.
#[derive(Default)]
struct Times {
    graphics_ns: f64,
    compute_ns: f64,
    /// Each execution's first start to last end on the GPU, summed.
    execution_span_ns: f64,
    frames: u32,
    first_begin: Option<u64>,
    last_end: u64,
}

/// Prints the span the plan allows at best with `durations` (ns per pass), its critical path,
/// the one move of a pass to another queue that would shorten it most, and the measured span
/// of one execution.
fn report_prediction(plan: &vk_baton::plan::Plan, durations: &[u64], measured_ns: u64) {
    let at_best = plan.predict(durations);
    let ms = |ns: u64| ns as f64 / 1e6;
    let names = |passes: &[usize]| -> Vec<&str> {
        passes
            .iter()
            .map(|&p| plan.input.passes[p].name.as_str())
            .collect()
    };
    println!(
        "predicted at best (this plan, these pass times): span {:.3} ms per execution, serial {:.3} ms, overlap {:.2}x; critical path: {}",
        ms(at_best.span_ns),
        ms(at_best.serial_ns),
        at_best.overlap(),
        names(&at_best.critical_path).join(" -> ")
    );
    println!(
        "measured: span {:.3} ms per execution (GPU timestamps)",
        ms(measured_ns)
    );
    match vk_baton::predict::best_moves(plan, durations).first() {
        Some(m) => println!(
            "moving `{}` to queue `{}` would allow {:.3} ms at best",
            plan.input.passes[m.pass].name,
            plan.input.queues[m.to_queue].name,
            ms(m.span_ns)
        ),
        None => println!("no single move of a pass to another queue would shorten the execution"),
    }
}

fn u64_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn run() -> vk_baton::Result<bool> {
    // The defaults depend on the device: parse first, fill in after.
    let (mut frames, mut size, mut iters, mut exclusive) = (None, None, None, false);
    let mut features = vk_baton::access::DeviceFeatures::NONE;
    let mut plan_svg = None::<std::path::PathBuf>;
    support::parse_args(USAGE, |name, p| {
        match name {
            "frames" => frames = Some(p.value()?.parse()?),
            "size" => size = Some(p.value()?.parse()?),
            "iters" => iters = Some(p.value()?.parse()?),
            "exclusive" => exclusive = true,
            "maintenance8" => features |= vk_baton::access::DeviceFeatures::MAINTENANCE8,
            "plan-svg" => plan_svg = Some(std::path::PathBuf::from(p.value()?)),
            _ => return Ok(false),
        }
        Ok(true)
    });
    // `--maintenance8`: ownership transfers (with `--exclusive`) wait at the using stages.
    let ctx = Context::with_options(vk_baton_context::ContextOptions {
        device_features: features,
        ..Default::default()
    })?;
    // SAFETY: plain query on a live physical device.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_properties(ctx.physical_device())
    };
    let cpu = props.device_type == vk::PhysicalDeviceType::CPU;
    let frames: u32 = frames.unwrap_or(if cpu { 12 } else { 200 });
    let size: u32 = size.unwrap_or(if cpu { 8 } else { 256 });
    let iters: u32 = iters.unwrap_or(if cpu { 2_000 } else { 100_000 });
    let warmup = (frames / 4).min(3);
    if frames < 2 || size == 0 {
        return Err(vk_baton::Error::InvalidInput(
            "--frames must be at least 2 and --size at least 1".into(),
        ));
    }
    let count = size * WG;
    let single = ctx.graphics() == ctx.async_compute();

    println!("device: {}", ctx.device_name());
    println!(
        "queues: graphics = family {}, async compute = family {}{}",
        ctx.graphics().family(),
        ctx.async_compute().family(),
        if single {
            " (one VkQueue: single-queue device)"
        } else {
            " (separate queues)"
        }
    );
    println!(
        "workloads: {size} workgroups x {WG} invocations x {iters} iterations each; {frames} frames ({warmup} warm-up)"
    );

    // The graph writes timestamps around each pass on the queues that have them.
    let timestamps = ctx.timestamp_support();
    let (gfx_bits, cmp_bits) = (
        timestamps.valid_bits(ctx.graphics().family()),
        timestamps.valid_bits(ctx.async_compute().family()),
    );
    let stamped = gfx_bits > 0 && cmp_bits > 0;
    if stamped {
        println!(
            "timestamps: {gfx_bits} / {cmp_bits} valid bits (graphics / async compute), period {} ns",
            timestamps.period_ns()
        );
    } else {
        println!("timestamps: not supported on both queues; GPU times are n/a");
    }

    // Resources: the double-buffered state, the render target and a staging buffer.
    let bytes = count as u64 * 4;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;
    // In frame N both queues read `state[N % 2]`. An EXCLUSIVE buffer belongs to one family
    // at a time, so with two families the render would have to wait for the simulation to
    // release it (no overlap). CONCURRENT sharing lets both families read it at once: vk-baton
    // then orders the frames with semaphores alone, and never transfers ownership.
    let mut state_desc = BufferDesc::new(bytes, usage);
    // `--exclusive` keeps them EXCLUSIVE (ownership transfers, serialized), for comparison.
    if ctx.graphics().family() != ctx.async_compute().family() && !exclusive {
        state_desc =
            state_desc.concurrent(&[ctx.graphics().family(), ctx.async_compute().family()]);
        println!(
            "state sharing: CONCURRENT between families {} and {}",
            ctx.graphics().family(),
            ctx.async_compute().family()
        );
    }
    let state = [
        ctx.buffer(state_desc.clone(), "state[0]")?,
        ctx.buffer(state_desc, "state[1]")?,
    ];
    let target = ctx.buffer(BufferDesc::new(bytes, usage), "render target")?;
    let staging = ctx.buffer(
        BufferDesc::upload(bytes, vk::BufferUsageFlags::TRANSFER_SRC),
        "initial state",
    )?;
    let init: Vec<u32> = (0..count).map(initial).collect();
    staging.write(0, &u64_bytes(&init))?;

    // One `sim.comp` dispatch per direction: steps state[k] -> state[1-k], renders
    // state[k] -> target. Each overwrites all of its destination: the old contents are not
    // needed.
    let code = support::spirv(vk_baton_shaders::SIM_COMP)?;
    let sim_dispatch = |name: &str, src: &Arc<StBuffer>, dst: &Arc<StBuffer>| {
        // SAFETY: the sample's own shader (compiled from shaders/), with exactly the bindings
        // and push constants declared below.
        unsafe { ComputeDispatch::builder(ctx.device(), &code) }
            .name(name)
            .storage_buffer(0, src.clone(), ShaderAccess::Read)
            .storage_buffer(1, dst.clone(), ShaderAccess::WriteDiscard)
            .push_constant_size(12)
            .groups(count.div_ceil(WG), 1, 1)
            .build()
    };
    let mut steps = [
        sim_dispatch("step state[0] -> state[1]", &state[0], &state[1])?,
        sim_dispatch("step state[1] -> state[0]", &state[1], &state[0])?,
    ];
    let mut renders = [
        sim_dispatch("render state[0]", &state[0], &target)?,
        sim_dispatch("render state[1]", &state[1], &target)?,
    ];
    let graph = ctx.graph()?;
    let mut seed = Copy {
        src: staging.clone(),
        dst: state[0].clone(),
    };
    graph
        .record()
        .insert_pass("initial state", &mut seed, ctx.graphics())
        .finish()?
        .execute()?
        .wait()?;
    // Timed from the frames on: the seed above is not.
    graph.set_gpu_timings(Some(timestamps));

    let mut in_flight = InFlight::new();
    let mut times = Times::default();
    let collect = |frame: u32, fence: ExecutionFence, times: &mut Times| -> vk_baton::Result<()> {
        fence.wait()?;
        if !stamped || frame < warmup {
            return Ok(());
        }
        let Some(gpu) = fence.take_gpu_timings() else {
            return Ok(());
        };
        let (Some(step), Some(render)) = (gpu.get(STEP), gpu.get(RENDER)) else {
            return Err(vk_baton::Error::InvalidInput(format!(
                "frame {frame}: no GPU time for both passes ({gpu})"
            )));
        };
        times.compute_ns += step.duration_ns() as f64;
        times.graphics_ns += render.duration_ns() as f64;
        // Across the two queues: Vulkan promises comparable timestamps only within one queue,
        // which this span assumes of the two (it holds on the devices measured).
        let begin = step.start_ns().min(render.start_ns());
        let end = step.end_ns().max(render.end_ns());
        times.execution_span_ns += end.saturating_sub(begin) as f64;
        times.first_begin = Some(times.first_begin.map_or(begin, |b| b.min(begin)));
        times.last_end = times.last_end.max(step.end_ns().max(render.end_ns()));
        times.frames += 1;
        Ok(())
    };

    let mut start = Instant::now();
    let mut plan_text = String::new();
    let mut steady_plan = None;
    for frame in 0..frames {
        if frame == warmup {
            // Measure from here: drain the warm-up frames first.
            while let Some((f, fence)) = in_flight.0.pop_front() {
                collect(f, fence, &mut times)?;
            }
            start = Instant::now();
        }
        if in_flight.0.len() >= FRAMES_IN_FLIGHT {
            let (f, fence) = in_flight.0.pop_front().expect("non-empty");
            collect(f, fence, &mut times)?;
        }
        let cur = (frame % 2) as usize;
        steps[cur].set_push_constants(&push_u32s(&[count, iters, frame]))?;
        renders[cur].set_push_constants(&push_u32s(&[count, iters, RENDER_SALT | frame]))?;
        let planned = graph
            .record()
            .insert_pass(STEP, &mut steps[cur], ctx.async_compute())
            .insert_pass(RENDER, &mut renders[cur], ctx.graphics())
            .finish()?;
        if frame == 2 {
            plan_text = planned.to_string();
            steady_plan = Some(planned.plan().clone());
        }
        in_flight.0.push_back((frame, planned.execute()?));
    }
    while let Some((f, fence)) = in_flight.0.pop_front() {
        collect(f, fence, &mut times)?;
    }
    let wall = start.elapsed().as_secs_f64();
    let measured = frames - warmup;

    println!("\nplan of a steady-state frame (frame 2):");
    print!("{plan_text}");
    // What the plan allows at best with these pass times, against what the GPU did
    // (`vk_baton::predict`); the diagram shows the same.
    let mean = |ns: f64| (ns / times.frames.max(1) as f64) as u64;
    let durations: Option<Vec<u64>> = steady_plan.as_ref().filter(|_| times.frames > 0).map(|p| {
        (p.input.passes.iter())
            .map(|pass| match pass.name.as_str() {
                STEP => mean(times.compute_ns),
                _ => mean(times.graphics_ns),
            })
            .collect()
    });
    let execution_span = mean(times.execution_span_ns);
    if let (Some(plan), Some(durations)) = (&steady_plan, &durations) {
        report_prediction(plan, durations, execution_span);
    }
    if let (Some(path), Some(plan)) = (&plan_svg, &steady_plan) {
        match &durations {
            Some(d) => {
                std::fs::write(path, plan.to_svg_timed(d, Some(execution_span))).map_err(|e| {
                    vk_baton::Error::InvalidInput(format!("{}: {e}", path.display()))
                })?;
                println!(
                    "wrote {} (the plan's diagram, with predicted and measured times)",
                    path.display()
                );
            }
            None => support::write_plan_svg(path, plan)?,
        }
    }

    // Read back the final state and the last render.
    let readback = ctx.buffer(
        BufferDesc::readback(bytes * 2, vk::BufferUsageFlags::TRANSFER_DST),
        "readback",
    )?;
    let final_state = state[(frames % 2) as usize].clone();
    struct Download {
        src: [Arc<StBuffer>; 2],
        dst: Arc<StBuffer>,
    }
    impl Pass for Download {
        fn declare(&self, d: &mut Declare<'_>) {
            d.uses(&self.src[0], Access::TRANSFER_READ);
            d.uses(&self.src[1], Access::TRANSFER_READ);
            d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
        }
        fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
            let size = self.src[0].size();
            // SAFETY: the buffers are in the declared transfer states; `dst` holds both.
            unsafe {
                r.device().cmd_copy_buffer(
                    r.cmd(),
                    self.src[0].handle(),
                    self.dst.handle(),
                    &[vk::BufferCopy::default().size(size)],
                );
                r.device().cmd_copy_buffer(
                    r.cmd(),
                    self.src[1].handle(),
                    self.dst.handle(),
                    &[vk::BufferCopy::default().dst_offset(size).size(size)],
                );
            }
            Ok(())
        }
    }
    let mut download = Download {
        src: [final_state, target.clone()],
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    graph
        .record()
        .insert_pass("download", &mut download, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()?
        .execute()?
        .wait()?;
    let mut raw = vec![0u8; (bytes * 2) as usize];
    readback.read(0, &mut raw)?;
    let words: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let (gpu_state, gpu_render) = words.split_at(count as usize);

    // Check a spread of elements (all of them for small runs) against the host.
    let samples = count.min(256);
    let mut state_ok = true;
    let mut render_ok = true;
    for k in 0..samples {
        let i = (k as u64 * count as u64 / samples as u64) as u32;
        let mut s = initial(i);
        let mut rendered = 0;
        for f in 0..frames {
            if f == frames - 1 {
                rendered = mix(s, RENDER_SALT | f, iters);
            }
            s = mix(s, f, iters);
        }
        state_ok &= gpu_state[i as usize] == s;
        render_ok &= gpu_render[i as usize] == rendered;
    }

    let ms = |ns: f64| ns / 1e6 / times.frames.max(1) as f64;
    let frame_ms = wall * 1e3 / measured as f64;
    println!();
    if stamped && times.frames > 0 {
        let (g, c) = (ms(times.graphics_ns), ms(times.compute_ns));
        let serial = g + c;
        let ideal = serial / g.max(c);
        let achieved = serial / frame_ms;
        let span_ms = times
            .first_begin
            .map(|b| times.last_end.saturating_sub(b) as f64 / 1e6)
            .unwrap_or(0.0)
            / times.frames as f64;
        println!("per-queue GPU time per frame: graphics {g:.3} ms, async compute {c:.3} ms");
        println!("frame time: {frame_ms:.3} ms (wall clock, mean of {measured} frames)");
        println!(
            "overlap: serial/wall = {achieved:.2}x, ideal sum/max = {ideal:.2}x (wall/serial = {:.2}, ideal max/sum = {:.2})",
            1.0 / achieved,
            1.0 / ideal
        );
        if span_ms > 0.0 {
            println!(
                "overlap (GPU timestamps only): serial/span = {:.2}x, span {span_ms:.3} ms per frame",
                serial / span_ms
            );
        }
        if single {
            println!("no overlap: single-queue device; graphics and async compute share one VkQueue, so the two workloads ran one after the other (correctly)");
        } else if ideal > 1.0 {
            println!(
                "overlap achieved: {:.0}% of the ideal",
                ((achieved - 1.0) / (ideal - 1.0) * 100.0).max(0.0)
            );
        }
    } else {
        println!("per-queue GPU time per frame: n/a (no timestamps)");
        println!("frame time: {frame_ms:.3} ms (wall clock, mean of {measured} frames)");
        if single {
            println!(
                "no overlap: single-queue device; graphics and async compute share one VkQueue"
            );
        }
    }
    println!(
        "check: simulation state after {frames} steps: {} ({samples} elements)",
        if state_ok { "OK" } else { "MISMATCH" }
    );
    println!(
        "check: render of frame {}: {} ({samples} elements)",
        frames - 1,
        if render_ok { "OK" } else { "MISMATCH" }
    );
    drop(graph);
    let messages = report_validation(&ctx);
    Ok(messages == 0 && state_ok && render_ok)
}

fn main() {
    support::main_with(run)
}
