//! When recording on several threads pays off ([`vk_baton::Graph::set_recording_threads`]):
//! the CPU time of one frame recorded on one thread and on N, side by side in one run.
//!
//! The frame is a chain on the graphics queue: pass `i` copies `buf[i % 8]` into
//! `buf[(i + 1) % 8]`, so every pass boundary has a barrier. Passes are inserted with
//! `insert_send_pass`. Two kinds of pass:
//!
//! - **cheap**: one `vkCmdCopyBuffer` of 16 bytes (recording costs about what the graph's own
//!   label and barrier cost);
//! - **heavy**: 50 `vkCmdCopyBuffer` calls of 16 bytes each, to disjoint bytes (a pass that
//!   binds, pushes constants and dispatches many times).
//!
//! Per frame: `record()`, `insert_send_pass` ×N, `finish()` (the plan is reused, the default
//! frame loop), `execute()`; the time stops when `execute()` returns (what the app's thread
//! pays), then the bench waits for the fence. Three sides alternate frame by frame on one
//! graph, so all see the same machine load; the table gives medians:
//!
//! - **1 thread**: `set_recording_threads(1)`, the default;
//! - **N, min 1**: N threads, at least 1 pass each, so every frame is spread over all N
//!   threads: the rows with few passes show what spreading costs where it does not pay;
//! - **N, min 64**: N threads with the default minimum
//!   ([`vk_baton::Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD`]): what an app that turns
//!   threads on gets; a frame under 128 passes stays on one thread.
//!
//! Lavapipe records no faster on two threads than on one (its command recording does not
//! scale: two threads recording raw `vkCmdCopyBuffer` calls into separate pools were measured
//! no faster), so on it the table shows only the overhead; run it on a real driver.
//!
//! ```text
//! cargo bench --bench parallel                         # threads: the machine's cores, up to 8
//! cargo bench --bench parallel -- --quick              # a few seconds per row
//! cargo bench --bench parallel -- --quick --threads 4
//! VK_BATON_VALIDATION=1 cargo bench --bench parallel -- --quick   # checks both sides
//! ```

use ash::vk;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::{Access, BufferDesc, Declare, Graph, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::{Context, ContextOptions};

const BUFFERS: usize = 8;
const BUFFER_SIZE: u64 = 1024;
/// Bytes per copy.
const COPY: u64 = 16;

/// Pass `i` of the chain, recording `copies` copies.
struct Step {
    bufs: Arc<Vec<Arc<StBuffer>>>,
    i: usize,
    copies: u64,
}

impl Pass for Step {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.bufs[self.i % BUFFERS], Access::COPY_READ);
        d.uses(&self.bufs[(self.i + 1) % BUFFERS], Access::COPY_WRITE)
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let src = self.bufs[self.i % BUFFERS].handle();
        let dst = self.bufs[(self.i + 1) % BUFFERS].handle();
        for c in 0..self.copies {
            let at = c * COPY;
            let region = vk::BufferCopy::default()
                .src_offset(at)
                .dst_offset(at)
                .size(COPY);
            // SAFETY: `r.cmd()` is recording on this thread; both buffers are alive, in the
            // declared states, and long enough (`copies * COPY <= BUFFER_SIZE`); the copies
            // write disjoint bytes.
            unsafe { r.device().cmd_copy_buffer(r.cmd(), src, dst, &[region]) };
        }
        Ok(())
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One frame on `threads` threads, each given at least `min` passes: CPU time to
/// `execute()`'s return.
fn frame(graph: &Graph, q: &Queue, steps: &mut [Step], threads: usize, min: usize) -> Duration {
    graph.set_recording_threads(threads);
    graph.set_min_passes_per_recording_thread(min);
    let t = Instant::now();
    let mut b = graph.record();
    for s in steps.iter_mut() {
        b = b.insert_send_pass("step", s, q);
    }
    let fence = b.finish().expect("plan").execute().expect("execute");
    let cpu = t.elapsed();
    fence.wait().expect("wait");
    cpu
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let threads = match args.iter().position(|a| a == "--threads") {
        Some(i) => args
            .get(i + 1)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n >= 2)
            .expect("--threads N, N >= 2"),
        None => std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8)),
    };
    let per_side = if quick {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(2)
    };
    let ctx = Context::with_options(ContextOptions::default()).expect("a Vulkan device");
    let log = ctx.message_log();
    let graph = ctx.graph().expect("graph");
    let q = ctx.graphics().clone();
    let bufs: Arc<Vec<Arc<StBuffer>>> = Arc::new(
        (0..BUFFERS)
            .map(|i| {
                let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
                ctx.buffer(BufferDesc::new(BUFFER_SIZE, usage), &format!("buf{i}"))
                    .expect("buffer")
            })
            .collect(),
    );
    println!(
        "device: {}, validation {}, {} CPU cores, N = {threads} recording threads",
        ctx.device_name(),
        if ctx.validation() { "on" } else { "off" },
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let default_min = Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD;
    println!(
        "{:<6} {:>6} | {:>10} {:>10} {:>10} | {:>8} {:>8}",
        "pass", "passes", "1 thread", "N, min 1", "N, min 64", "min 1", "min 64"
    );
    println!(
        "{:<13} | {:^32} | {:^17}",
        "", "cpu per frame (median)", "speedup"
    );
    assert_eq!(default_min, 64, "the header says 64");
    let rows: &[usize] = if quick {
        &[10, 100, 300, 1000]
    } else {
        &[10, 30, 100, 300, 1000, 3000]
    };
    for (kind, copies) in [("cheap", 1u64), ("heavy", 50)] {
        for &n in rows {
            let mut steps: Vec<Step> = (0..n)
                .map(|i| Step {
                    bufs: bufs.clone(),
                    i,
                    copies,
                })
                .collect();
            let sides = [(1, default_min), (threads, 1), (threads, default_min)];
            for _ in 0..3 {
                for &(t, min) in &sides {
                    frame(&graph, &q, &mut steps, t, min);
                }
            }
            let mut times: [Vec<Duration>; 3] = Default::default();
            let started = Instant::now();
            while (started.elapsed() < 3 * per_side || times[0].len() < 7)
                && times[0].len() < 100_000
            {
                for (side, &(t, min)) in times.iter_mut().zip(&sides) {
                    side.push(frame(&graph, &q, &mut steps, t, min));
                }
            }
            let [one, spread, default] = times.map(median);
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            let speedup = |d: Duration| one.as_secs_f64() / d.as_secs_f64();
            println!(
                "{:<6} {:>6} | {:>8.1}us {:>8.1}us {:>8.1}us | {:>7.2}x {:>7.2}x",
                kind,
                n,
                us(one),
                us(spread),
                us(default),
                speedup(spread),
                speedup(default),
            );
        }
    }
    drop(graph);
    if ctx.validation() {
        let messages = log.validation();
        println!("validation messages: {messages}");
        assert!(messages == 0, "{messages}");
    }
}
