//! Scheduling's win on the GPU: the same frames planned in program order and reordered
//! (`Schedule::REORDER`), side by side in one run.
//!
//! - **chains**: 8 independent chains of copies on the graphics queue (each a fill, then
//!   copies ping-ponging between two 4 KiB buffers), inserted chain after chain: in program
//!   order every pass but each chain's first needs a barrier.
//! - **interleaved**: the same chains inserted step after step.
//! - **3 queues**: independent items, each an upload (fill) on the transfer queue, a copy on
//!   async compute and a copy on graphics, inserted item after item. Buffers are EXCLUSIVE:
//!   each hop is an ownership transfer where the families differ. On a device with one queue
//!   family (lavapipe) the three queues are one.
//!
//! Per workload and size, the table gives the plan's barrier commands, batches and semaphore
//! waits in program order -> reordered, and the medians of two times per frame for each
//! side: **cpu** (record, insert, plan, record command buffers, submit) and **frame** (including
//! the fence wait; each side has a graph of its own, so a frame like the last reuses its plan),
//! and the **GPU** time from per-pass timestamps (the longest queue's span). No frame's reordered plan may have more barrier commands.
//!
//! ```text
//! cargo bench --bench schedule              # about 2 s per side and row
//! cargo bench --bench schedule -- --quick   # about 0.3 s per side and row
//! VK_BATON_VALIDATION=1 cargo bench --bench schedule -- --quick   # checks every frame
//! ```

use ash::vk;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::plan::Schedule;
use vk_baton::{Access, BufferDesc, Declare, Graph, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::{Context, ContextOptions};

const BUFFER_SIZE: u64 = 4096;
const CHAINS: usize = 8;

/// One pass: fill a buffer, or copy one into another.
struct Step {
    src: Option<Arc<StBuffer>>,
    dst: Arc<StBuffer>,
}

impl Pass for Step {
    fn declare(&self, d: &mut Declare<'_>) {
        match &self.src {
            Some(src) => {
                d.uses(src, Access::COPY_READ);
                d.uses(&self.dst, Access::COPY_WRITE).discard();
            }
            None => {
                d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let (device, cmd, dst) = (r.device(), r.cmd(), self.dst.handle());
        match &self.src {
            // SAFETY: `cmd` is recording; both buffers are alive and BUFFER_SIZE long.
            Some(src) => unsafe {
                let region = vk::BufferCopy::default().size(BUFFER_SIZE);
                device.cmd_copy_buffer(cmd, src.handle(), dst, &[region])
            },
            // SAFETY: `cmd` is recording and the buffer is alive.
            None => unsafe { device.cmd_fill_buffer(cmd, dst, 0, vk::WHOLE_SIZE, 7) },
        }
        Ok(())
    }
}

/// A frame: its passes, each with the index of its queue.
struct Frame {
    steps: Vec<(Step, usize)>,
}

fn buffers(ctx: &Context, n: usize) -> Vec<Arc<StBuffer>> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    (0..n)
        .map(|i| {
            ctx.buffer(BufferDesc::new(BUFFER_SIZE, usage), &format!("buf{i}"))
                .expect("buffer")
        })
        .collect()
}

/// `CHAINS` chains of `steps` passes on queue 0, chain after chain or step after step.
fn chains(ctx: &Context, steps: usize, interleaved: bool) -> Frame {
    let bufs = buffers(ctx, 2 * CHAINS);
    let step = |k: usize, s: usize| {
        let (a, b) = (2 * k + s % 2, 2 * k + (s + 1) % 2);
        let src = (s > 0).then(|| bufs[b].clone());
        (
            Step {
                src,
                dst: bufs[a].clone(),
            },
            0,
        )
    };
    let steps = if interleaved {
        (0..steps)
            .flat_map(|s| (0..CHAINS).map(move |k| (k, s)))
            .map(|(k, s)| step(k, s))
            .collect()
    } else {
        (0..CHAINS)
            .flat_map(|k| (0..steps).map(move |s| (k, s)))
            .map(|(k, s)| step(k, s))
            .collect()
    };
    Frame { steps }
}

/// `items` items of upload (queue 2), simulate (queue 1) and draw (queue 0).
fn three_queues(ctx: &Context, items: usize) -> Frame {
    let bufs = buffers(ctx, 3 * items);
    let steps = (0..items)
        .flat_map(|k| {
            let b = |i: usize| bufs[3 * k + i].clone();
            [
                (
                    Step {
                        src: None,
                        dst: b(0),
                    },
                    2,
                ),
                (
                    Step {
                        src: Some(b(0)),
                        dst: b(1),
                    },
                    1,
                ),
                (
                    Step {
                        src: Some(b(1)),
                        dst: b(2),
                    },
                    0,
                ),
            ]
        })
        .collect();
    Frame { steps }
}

/// The plan's figures: barrier commands, batches, semaphore waits.
type Figures = (usize, usize, usize);

/// A workload: its name, how to make a frame of `n` passes, and the sizes measured.
type Workload<'a> = (&'a str, Box<dyn Fn(usize) -> Frame + 'a>, [usize; 3]);

/// Plans, executes and waits for one frame: (figures, cpu time, frame time, GPU time). The
/// GPU time is the longest, over the queues, from the first pass's start to the last pass's
/// end (per-pass timestamps: `Graph::set_gpu_timings`).
fn run(
    graph: &Graph,
    queues: &[Queue],
    frame: &mut Frame,
    s: Schedule,
) -> (Figures, Duration, Duration, Duration) {
    let t = Instant::now();
    let mut b = graph.record();
    for (step, q) in frame.steps.iter_mut() {
        b = b.insert_pass("step", step, &queues[*q]);
    }
    let planned = b.schedule(s).finish().expect("plan");
    let p = planned.plan();
    let figures = (p.barrier_commands(), p.batch_count(), p.semaphore_waits());
    let fence = planned.execute().expect("execute");
    let cpu = t.elapsed();
    fence.wait().expect("wait");
    let whole = t.elapsed();
    let timings = fence.take_gpu_timings().expect("timed, and complete");
    let gpu = queues
        .iter()
        .filter_map(|q| timings.span_ns(q))
        .map(|(a, b)| b.saturating_sub(a))
        .max()
        .unwrap_or(0);
    (figures, cpu, whole, Duration::from_nanos(gpu))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let per_side = if quick {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(2)
    };
    let ctx = Context::with_options(ContextOptions::default()).expect("a Vulkan device");
    let log = ctx.message_log();
    // A graph per side, as an app keeps one schedule: each side reuses its own last plan.
    let graphs = [ctx.graph().expect("graph"), ctx.graph().expect("graph")];
    for graph in &graphs {
        graph.set_gpu_timings(Some(ctx.timestamp_support()));
    }
    let queues = [
        ctx.graphics().clone(),
        ctx.async_compute().clone(),
        ctx.transfer().clone(),
    ];
    println!(
        "device: {}, validation {}, {}",
        ctx.device_name(),
        if ctx.validation() { "on" } else { "off" },
        if ctx.has_several_families() {
            "several queue families"
        } else {
            "one queue family"
        },
    );
    println!(
        "{:<12} {:>6} | {:>13} {:>11} {:>9} | {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6}",
        "workload",
        "passes",
        "barrier cmds",
        "batches",
        "waits",
        "cpu",
        "reordered",
        "ratio",
        "frame",
        "reordered",
        "ratio",
        "gpu",
        "reordered",
        "ratio"
    );
    let workloads: [Workload; 3] = [
        (
            "chains",
            Box::new(|n| chains(&ctx, n / CHAINS, false)),
            [16, 128, 1024],
        ),
        (
            "interleaved",
            Box::new(|n| chains(&ctx, n / CHAINS, true)),
            [16, 128, 1024],
        ),
        (
            "3 queues",
            Box::new(|n| three_queues(&ctx, n / 3)),
            [12, 96, 768],
        ),
    ];
    for (label, make, sizes) in &workloads {
        for &n in sizes {
            let mut frame = make(n);
            let sides = [Schedule::PROGRAM_ORDER, Schedule::REORDER];
            let mut times: [Vec<(Duration, Duration, Duration)>; 2] = [Vec::new(), Vec::new()];
            let mut figures: [Figures; 2] = [(0, 0, 0); 2];
            let mut total = [Duration::ZERO; 2];
            for _ in 0..3 {
                for (i, s) in sides.into_iter().enumerate() {
                    run(&graphs[i], &queues, &mut frame, s);
                }
            }
            // Alternate the sides so that both see the same machine load.
            while (total[0] < per_side || total[1] < per_side || times[0].len() < 11)
                && times[0].len() < 100_000
            {
                for (i, s) in sides.into_iter().enumerate() {
                    let (f, cpu, whole, gpu) = run(&graphs[i], &queues, &mut frame, s);
                    figures[i] = f;
                    total[i] += whole;
                    times[i].push((cpu, whole, gpu));
                }
                // Program-order plans are pruned of redundant entries and reordered ones are
                // not, so a small frame can come out even; a reordered plan is never worse.
                assert!(
                    figures[1].0 <= figures[0].0,
                    "{label} {n}: reordered {:?} against {:?} in program order",
                    figures[1],
                    figures[0]
                );
            }
            let cpu = |i: usize| median(times[i].iter().map(|x| x.0).collect());
            let whole = |i: usize| median(times[i].iter().map(|x| x.1).collect());
            let gpu = |i: usize| median(times[i].iter().map(|x| x.2).collect());
            let pair = |a: usize, b: usize| format!("{a} -> {b}");
            println!(
                "{:<12} {:>6} | {:>13} {:>11} {:>9} | {:>7.1}us {:>7.1}us {:>5.2}x | {:>7.1}us {:>7.1}us {:>5.2}x | {:>7.1}us {:>7.1}us {:>5.2}x",
                label,
                n,
                pair(figures[0].0, figures[1].0),
                pair(figures[0].1, figures[1].1),
                pair(figures[0].2, figures[1].2),
                us(cpu(0)),
                us(cpu(1)),
                cpu(1).as_secs_f64() / cpu(0).as_secs_f64(),
                us(whole(0)),
                us(whole(1)),
                whole(1).as_secs_f64() / whole(0).as_secs_f64(),
                us(gpu(0)),
                us(gpu(1)),
                gpu(1).as_secs_f64() / gpu(0).as_secs_f64().max(1e-9),
            );
        }
    }
    drop(workloads);
    drop(graphs);
    if ctx.validation() {
        let messages = log.validation();
        println!("validation messages: {messages}");
        assert!(messages == 0, "{messages}");
    }
}
