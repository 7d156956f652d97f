//! The cost of a frame that submits its recording again (`Graph::set_replay`), against the
//! hand-written frame that records every frame and the hand-written replay: the same command
//! buffers, recorded once and submitted again, which is the floor. Side by side in one run.
//!
//! The workload is `frame.rs`'s chain (`support/chain.rs`): N passes on the graphics queue,
//! or cut into three runs on the transfer, compute and graphics queues. Sides:
//!
//! - **replay**: the builder loop (`record()`, `insert_pass` ×N, `finish()`, `execute()`)
//!   on a graph with replay on: every frame from the third on replays (checked);
//! - **held**: a held plan (`Planned::hold`) on that graph, replaying too;
//! - **hand**: the hand-written frame of `frame.rs`, recorded every frame;
//! - **hand replay**: the hand-written frame recorded once, submitted again every frame.
//!
//! Each side has buffers of its own. Time is **cpu** up to the submit's return, then each
//! side waits for its fence. Medians of alternating rounds, with the spread, and the two
//! targets of the replay issue: replay at most 0.2× the hand frame, and at most the hand
//! replay plus 3 µs plus 50 ns per resource the frame uses.
//!
//! Within a round the sides take turns frame by frame, so each frame follows another side's,
//! which has filled the caches with its own data (the builder loop's thousand passes, the hand
//! frame's recording). `--blocks N` gives each side N frames in a row instead, as the
//! flagship's `--compare` does (blocks of 10): most frames then follow one of their own side,
//! as in an app that runs one frame loop. The two differ most at 1000 passes
//! (`docs/performance.md`, "Replay, seventh steps").
//!
//! ```text
//! cargo bench --bench replay -- --quick              # 8 buffers
//! cargo bench --bench replay -- --rounds 4 --buffers 64
//! cargo bench --bench replay -- --quick --rounds 4 --blocks 10    # each side 10 frames in a row
//! VK_BATON_VALIDATION=1 cargo bench --bench replay -- --quick   # checks every side
//! ```
//!
//! `--only SIDE --passes N --frames F` runs F frames of one side (`replay`, `held`, `hand`,
//! `hand-replay`) of the chain of N passes, for an instruction count:
//!
//! ```text
//! valgrind --tool=callgrind target/release/deps/replay-* --only held --passes 1000 --frames 100
//! ```

#[path = "support/chain.rs"]
mod chain;

use ash::vk;
use chain::{arg, median, run_of, spread, steps, Hand, Step};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::{BufferDesc, Graph, Queue, StBuffer};
use vk_baton_context::{Context, ContextOptions};

/// The sides, in the order they run in each round.
const SIDES: [&str; 4] = ["replay", "held", "hand", "hand replay"];

/// `count` buffers of the chain for `side`.
fn buffers(ctx: &Context, side: &str, count: usize) -> Arc<Vec<Arc<StBuffer>>> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let desc = BufferDesc::new(chain::BUFFER_SIZE, usage);
    let made = (0..count).map(|i| ctx.buffer(desc.clone(), &format!("{side} buf{i}")));
    Arc::new(made.map(|b| b.expect("buffer")).collect())
}

/// One builder frame of `steps` on `graph`: (cpu to the submit's return, replayed).
fn builder_frame(graph: &Graph, steps: &mut [Step], queues: &[Queue]) -> (Duration, bool) {
    let n = steps.len();
    let t = Instant::now();
    let mut b = graph.record();
    for (i, s) in steps.iter_mut().enumerate() {
        b = b.insert_pass("step", s, &queues[run_of(i, n, queues.len())]);
    }
    let fence = b.finish().expect("plan").execute().expect("execute");
    let cpu = t.elapsed();
    fence.wait().expect("wait");
    (cpu, fence.replayed())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds: usize = arg("--rounds").unwrap_or(1).max(1);
    let count: usize = arg("--buffers").unwrap_or(8).max(2);
    let block: usize = arg("--blocks").unwrap_or(1).max(1);
    let per_side = Duration::from_millis(if quick { 300 } else { 2000 });
    let only: Option<String> = arg("--only");
    let only_side = only.as_deref().map(|o| {
        let side = SIDES.iter().position(|s| s.replace(' ', "-") == o);
        side.expect("--only takes replay, held, hand or hand-replay")
    });
    let only_passes: usize = arg("--passes").unwrap_or(1000);
    let only_frames: usize = arg("--frames").unwrap_or(100);
    let ctx = Context::with_options(ContextOptions::default()).expect("a Vulkan device");
    let log = ctx.message_log();
    let graph = ctx.graph().expect("graph");
    graph.set_labels(false);
    graph.set_replay(true);
    println!(
        "device: {}, validation {}, {count} buffers, labels off, sides in turn every {block} frame(s)",
        ctx.device_name(),
        if ctx.validation() { "on" } else { "off" },
    );
    println!(
        "{:<9} {:>5} | {:>9} {:>9} {:>9} {:>9} | {:>6} {:>6} | minus hand replay",
        "workload", "passes", SIDES[0], SIDES[1], SIDES[2], SIDES[3], "replay", "held"
    );
    println!(
        "{:<16} | {:^39} | {:^13} |",
        "", "cpu time to the submit's return", "ratio to hand"
    );
    let (replay_bufs, held_bufs) = (buffers(&ctx, "replay", count), buffers(&ctx, "held", count));
    let (hand_bufs, again_bufs) = (buffers(&ctx, "hand", count), buffers(&ctx, "again", count));
    let three = vec![
        ctx.transfer().clone(),
        ctx.async_compute().clone(),
        ctx.graphics().clone(),
    ];
    let workloads = [("chain", vec![ctx.graphics().clone()]), ("3 queues", three)];
    for (label, queues) in workloads
        .into_iter()
        .take(if only.is_some() { 1 } else { 2 })
    {
        let hand = Hand::new(&ctx, &queues, false);
        let again = Hand::new(&ctx, &queues, false);
        let sizes = match only {
            Some(_) => vec![only_passes],
            None => vec![100usize, 1000],
        };
        for n in sizes {
            let mut replay_steps = steps(&replay_bufs, n);
            let mut held_steps = steps(&held_bufs, n);
            let mut b = graph.record();
            for (i, s) in held_steps.iter_mut().enumerate() {
                b = b.insert_pass("step", s, &queues[run_of(i, n, queues.len())]);
            }
            let mut held = b.finish().expect("plan").hold();
            again.record_frame(&again_bufs, n, false);
            let mut sides: [Box<dyn FnMut() -> (Duration, bool) + '_>; 4] = [
                Box::new(|| builder_frame(&graph, &mut replay_steps, &queues)),
                Box::new(|| {
                    let t = Instant::now();
                    let fence = held.execute().expect("execute");
                    let cpu = t.elapsed();
                    fence.wait().expect("wait");
                    (cpu, fence.replayed())
                }),
                Box::new(|| {
                    let t = Instant::now();
                    hand.submit_frame(&hand_bufs, n);
                    let cpu = t.elapsed();
                    hand.wait();
                    (cpu, true)
                }),
                Box::new(|| {
                    let t = Instant::now();
                    again.submit();
                    let cpu = t.elapsed();
                    again.wait();
                    (cpu, true)
                }),
            ];
            // Warm up, alternating as the rounds do: each graph side's first frames plan
            // and record, and the held plan's re-plan may take the builder's kept frame.
            for _ in 0..5 {
                for side in sides.iter_mut() {
                    side();
                }
            }
            if let Some(k) = only_side {
                let cpu: Vec<Duration> = (0..only_frames).map(|_| sides[k]().0).collect();
                println!("{}: {n} passes, cpu median {:.2?}", SIDES[k], median(cpu));
                continue;
            }
            let medians: Vec<[f64; 4]> = (0..rounds)
                .map(|_| {
                    let mut times: [Vec<Duration>; 4] = Default::default();
                    let start = Instant::now();
                    while start.elapsed() < 4 * per_side || times[0].len() < 11 {
                        for (k, (side, t)) in sides.iter_mut().zip(&mut times).enumerate() {
                            for _ in 0..block {
                                let (cpu, replayed) = side();
                                assert!(replayed, "a steady {} frame replays", SIDES[k]);
                                t.push(cpu);
                            }
                        }
                    }
                    times.map(|t| median(t).as_secs_f64() * 1e6)
                })
                .collect();
            let of = |f: &dyn Fn(&[f64; 4]) -> f64| spread(medians.iter().map(f).collect());
            let us = |side: usize| of(&|m| m[side]).0;
            let (replay, replay_lo, replay_hi) = of(&|m| m[0] / m[2]);
            let (held_ratio, held_lo, held_hi) = of(&|m| m[1] / m[2]);
            let (excess, excess_lo, excess_hi) = of(&|m| m[0] - m[3]);
            let (held_excess, held_excess_lo, held_excess_hi) = of(&|m| m[1] - m[3]);
            let budget = 3.0 + 0.05 * count as f64;
            println!(
                "{label:<9} {n:>5} | {:>7.1}us {:>7.1}us {:>7.1}us {:>7.1}us | {replay:>5.2}x {held_ratio:>5.2}x | {excess:+.1}us, held {held_excess:+.1}us (budget {budget:.1}us)",
                us(0), us(1), us(2), us(3),
            );
            if rounds > 1 {
                println!(
                    "    spread over {rounds} rounds: replay {replay_lo:.2}-{replay_hi:.2}x, held {held_lo:.2}-{held_hi:.2}x, replay - hand replay {excess_lo:+.1} to {excess_hi:+.1}us, held - hand replay {held_excess_lo:+.1} to {held_excess_hi:+.1}us",
                );
            }
            drop(sides);
        }
    }
    drop(graph);
    if ctx.validation() {
        let messages = log.validation();
        println!("validation messages: {messages}");
        assert!(messages == 0, "{messages}");
    }
}
