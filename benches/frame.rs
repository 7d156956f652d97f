//! The cost of a whole frame through vk-baton against the floor: what an expert writes by hand
//! with raw ash, measured side by side in one run.
//!
//! Both sides do the same GPU work, each on buffers of its own. Pass 0 fills `buf[1]`; pass
//! `i > 0` copies `buf[i % B]` into `buf[(i + 1) % B]` (4 KiB each, B = 8 buffers), so every
//! pass reads what the one before wrote and every pass boundary is a dependency. Writes cover
//! the whole buffer and are declared `discard`, so no contents cross a frame.
//!
//! - **chain**: N passes on the graphics queue.
//! - **3 queues**: the N passes cut into three runs, on the transfer, async-compute and
//!   graphics queues in that order. The buffer read across a run boundary moves with a
//!   release/acquire pair when the families differ, behind a semaphore. On a device with one
//!   queue family (lavapipe) the three queues are one, so the graph plans one queue, while the
//!   hand-written side still submits three batches chained by semaphores.
//!
//! Per frame, the graph side does `record()`, `insert_pass` ×N, `finish()`, `execute()` and
//! waits for the frame's fence, two ways, each on a graph of its own: **planned** (plan reuse
//! off, so `finish()` plans every frame) and **reused** (the default: a frame like an earlier
//! one executes that plan, rebound to its timeline values; on its own graph every frame
//! reuses the plan, as in an app's steady loop, with the plan's barriers and labels built
//! once). A third side executes a plan the bench holds
//! (`Planned::hold`): no declaring, lowering or matching of passes, only the resources'
//! versions are re-checked. The hand side resets its command pools, records the
//! fewest correct barriers (one global `VkMemoryBarrier2` per pass boundary on one queue, one
//! at the frame start for the previous frame's accesses, the ownership transfer pair between
//! queues), submits with `vkQueueSubmit2` and waits for its fence.
//!
//! Each side has buffers of its own, as a frame loop that owns its resources does: every
//! reused and held frame from the third on finds them where its own last frame left them
//! (at rest), which the bench prints and checks. `--shared-buffers` gives the three graph
//! sides one set instead: each frame then finds them moved by another side's frame, and the
//! reused and held sides read and compare every resource's state (the states tier), as
//! after any change a frame did not make itself.
//!
//! Two times per frame: **cpu** up to the return of the submit (what the app's thread pays),
//! and **frame** including the fence wait. The table gives medians and the ratio graph / hand.
//!
//! ```text
//! cargo bench --bench frame              # about 3 s per side and row
//! cargo bench --bench frame -- --quick   # about 0.4 s per side and row, under a minute
//! cargo bench --bench frame -- --no-labels   # the graph records no pass labels either
//! cargo bench --bench frame -- --no-labels --rounds 4   # medians of 4 rounds, with spread
//! VK_BATON_VALIDATION=1 cargo bench --bench frame -- --quick   # checks both sides
//! ```
//!
//! `--buffers N` rotates the passes through N buffers instead of 8. The passes and barriers
//! are the same; what grows is the per-resource share of a frame: a reused or held frame checks,
//! locks and commits the tracked state of every resource it uses, which the hand side, knowing
//! its frame, never does (`--buffers 64`: every frame of 100 or more passes uses 64).
//!
//! `--hand-resets-buffers` makes the hand side recycle its command buffers as the library
//! does: pools made with `RESET_COMMAND_BUFFER`, each buffer reset by its `begin`, rather than
//! one `vkResetCommandPool` per pool and frame. The difference is what that choice costs in the
//! driver, apart from everything else the library does.
//!
//! `--only SIDE --passes N --frames F` runs only one side (`planned`, `reused`, `held` or
//! `hand`) of the chain, F frames of N passes, for an instruction count that this noisy
//! machine cannot give as a time:
//!
//! ```text
//! valgrind --tool=callgrind target/release/deps/frame-* --only reused --passes 100 --frames 200
//! ```

#[path = "support/chain.rs"]
mod chain;

use ash::vk;
use chain::{arg, median, run_of, spread, steps, Hand, Step};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::{BufferDesc, StBuffer};
use vk_baton_context::{Context, ContextOptions};

/// How many buffers the passes rotate through, unless `--buffers N` says otherwise.
const BUFFERS: usize = 8;

/// One round of alternating frames: (cpu, frame) times of each side, in the order planned,
/// reused, held, hand.
#[derive(Default)]
struct Round {
    sides: [Vec<(Duration, Duration)>; 4],
    frames: usize,
    total: Duration,
}

/// One round's medians: per side, (cpu, frame).
type RoundMedians = [(Duration, Duration); 4];

impl Round {
    fn push(&mut self, frames: [(Duration, Duration); 4]) {
        for (side, f) in self.sides.iter_mut().zip(frames) {
            self.total += f.1;
            side.push(f);
        }
        self.frames += 1;
    }

    fn medians(self) -> RoundMedians {
        self.sides.map(|v| {
            let cpu = median(v.iter().map(|x| x.0).collect());
            (cpu, median(v.iter().map(|x| x.1).collect()))
        })
    }
}

/// One row of the table: the median round's times and ratios, then, over several rounds, the
/// spread of each ratio.
fn print_row(label: &str, n: usize, rounds: &[RoundMedians], finish: Duration) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let ratio = |r: &RoundMedians, side: usize, frame: bool| {
        let pick = |t: (Duration, Duration)| if frame { t.1 } else { t.0 };
        pick(r[side]).as_secs_f64() / pick(r[3]).as_secs_f64()
    };
    let of =
        |side: usize, frame: bool| spread(rounds.iter().map(|r| ratio(r, side, frame)).collect());
    let time = |side: usize| {
        let (m, _, _) = spread(rounds.iter().map(|r| us(r[side].0)).collect());
        m
    };
    println!(
        "{:<10} {:>6} | {:>7.1}us {:>7.1}us {:>7.1}us {:>7.1}us | {:>6.2}x {:>6.2}x {:>6.2}x | {:>6.2}x {:>6.2}x {:>6.2}x",
        label,
        n,
        time(0),
        time(1),
        time(2),
        time(3),
        of(0, false).0,
        of(1, false).0,
        of(2, false).0,
        of(0, true).0,
        of(1, true).0,
        of(2, true).0,
    );
    if rounds.len() > 1 {
        let range = |side| {
            let (_, lo, hi) = of(side, false);
            format!("{lo:.2}-{hi:.2}x")
        };
        println!(
            "    cpu ratio spread over {} rounds: planned {}, reused {}, held {}",
            rounds.len(),
            range(0),
            range(1),
            range(2)
        );
    }
    println!(
        "    reused split: finish {:.1}us, execute {:.1}us (medians over frames)",
        us(finish),
        time(1) - us(finish),
    );
}

/// How many frames each side executed at rest (its plan rebound without reading a state), of
/// how many it reused.
fn print_rests(reused: (usize, usize), held: (u64, u64)) {
    println!(
        "    at rest: reused {} of {} frames, held {} of {}",
        reused.0, reused.1, held.0, held.1
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // One side alone (for callgrind): the side, passes, frames.
    let only: Option<String> = arg("--only");
    let only_passes: usize = arg("--passes").unwrap_or(100);
    let only_frames: usize = arg("--frames").unwrap_or(200);
    if let Some(side) = &only {
        assert!(
            ["planned", "reused", "held", "hand"].contains(&side.as_str()),
            "--only takes planned, reused, held or hand"
        );
    }
    // Like the hand side, record no debug labels around passes (they are on by default).
    let no_labels = std::env::args().any(|a| a == "--no-labels");
    // The hand side resets each command buffer at its begin, as the library does, rather than
    // its pools: what that way of recycling costs by itself.
    let hand_resets_buffers = std::env::args().any(|a| a == "--hand-resets-buffers");
    // More buffers, the same passes: what each resource adds to a frame.
    let buffers: usize = arg("--buffers").unwrap_or(BUFFERS).max(2);
    // Rounds per row: the table gives the median round and the spread.
    let rounds: usize = arg("--rounds").unwrap_or(1).max(1);
    let per_side = if quick {
        Duration::from_millis(400)
    } else {
        Duration::from_secs(3)
    };
    let ctx = Context::with_options(ContextOptions::default()).expect("a Vulkan device");
    let log = ctx.message_log();
    // The reused and held sides' graph, and the planned side's, which never reuses a plan.
    let graph = ctx.graph().expect("graph");
    graph.set_labels(!no_labels);
    let planning = ctx.graph().expect("graph");
    planning.set_labels(!no_labels);
    planning.set_plan_reuse(false);
    let make_buffers = |side: &str| -> Arc<Vec<Arc<StBuffer>>> {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let made = (0..buffers).map(|i| {
            ctx.buffer(
                BufferDesc::new(chain::BUFFER_SIZE, usage),
                &format!("{side} buf{i}"),
            )
            .expect("buffer")
        });
        Arc::new(made.collect())
    };
    // Each side's own buffers, as in an app whose frame owns its resources: a graph side's
    // frame finds them where its last frame left them (at rest). With --shared-buffers the
    // three graph sides use one set, so each frame finds them moved by another side's frame
    // and is rebound from their states. The hand side's are never seen by a graph (sharing
    // them undeclared would make the two sides race).
    let shared = std::env::args().any(|a| a == "--shared-buffers");
    let graph_bufs = make_buffers("graph");
    let own_bufs = |side: &str| match shared {
        true => graph_bufs.clone(),
        false => make_buffers(side),
    };
    let (planned_bufs, reused_bufs, held_bufs) =
        (own_bufs("planned"), own_bufs("reused"), own_bufs("held"));
    let hand_bufs = make_buffers("hand");
    println!(
        "device: {}, validation {}, pass labels {}, {}, {buffers} buffers{}",
        ctx.device_name(),
        if ctx.validation() { "on" } else { "off" },
        if no_labels { "off" } else { "on" },
        if ctx.has_several_families() {
            "several queue families"
        } else {
            "one queue family"
        },
        if shared {
            ", shared by the graph sides"
        } else {
            ""
        },
    );
    if only.is_none() {
        println!(
            "{:<10} {:>6} | {:>9} {:>9} {:>9} {:>9} | {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7}",
            "workload",
            "passes",
            "planned",
            "reused",
            "held",
            "hand",
            "planned",
            "reused",
            "held",
            "planned",
            "reused",
            "held",
        );
        println!(
            "{:<17} | {:^39} | {:^23} | {:^23}",
            "", "cpu time to the submit's return", "cpu ratio to hand", "frame ratio (with wait)"
        );
    }
    for (label, queues) in [
        ("chain", vec![ctx.graphics().clone()]),
        (
            "3 queues",
            vec![
                ctx.transfer().clone(),
                ctx.async_compute().clone(),
                ctx.graphics().clone(),
            ],
        ),
    ] {
        if only.is_some() && label != "chain" {
            continue;
        }
        let hand = Hand::new(&ctx, &queues, hand_resets_buffers);
        let sizes = match only {
            Some(_) => vec![only_passes],
            None => vec![10usize, 100, 1000],
        };
        for n in sizes {
            let make_steps = |bufs: &Arc<Vec<Arc<StBuffer>>>| steps(bufs, n);
            let mut planned_steps = make_steps(&planned_bufs);
            let mut reused_steps = make_steps(&reused_bufs);
            // The same passes in a plan the bench holds (`Planned::hold`).
            let mut held_steps = make_steps(&held_bufs);
            let mut b = graph.record();
            for (i, s) in held_steps.iter_mut().enumerate() {
                b = b.insert_pass("step", s, &queues[run_of(i, n, queues.len())]);
            }
            let mut held = b.finish().expect("plan").hold();
            let held_runs = std::cell::Cell::new(0u64);
            let mut held_frame = || {
                held_runs.set(held_runs.get() + 1);
                let t = Instant::now();
                let fence = held.execute().expect("execute");
                let cpu = t.elapsed();
                fence.wait().expect("wait");
                (cpu, t.elapsed())
            };
            // A frame on `g`: `graph` reuses its plan, `planning` plans every frame.
            // The reused side's time to `finish()`'s return, per frame, and how many of its
            // frames were reused at rest.
            let finish_times = std::cell::RefCell::new(Vec::new());
            let at_rest = std::cell::Cell::new(0usize);
            let graph_frame = |g: &vk_baton::Graph, steps: &mut [Step]| {
                let t = Instant::now();
                let mut b = g.record();
                for (i, s) in steps.iter_mut().enumerate() {
                    b = b.insert_pass("step", s, &queues[run_of(i, n, queues.len())]);
                }
                let planned = b.finish().expect("plan");
                let reused = planned.reused();
                if reused {
                    finish_times.borrow_mut().push(t.elapsed());
                    at_rest.set(at_rest.get() + usize::from(planned.at_rest()));
                }
                let fence = planned.execute().expect("execute");
                let cpu = t.elapsed();
                fence.wait().expect("wait");
                (cpu, t.elapsed(), reused)
            };
            let hand_frame = || {
                let t = Instant::now();
                hand.submit_frame(&hand_bufs, n);
                let cpu = t.elapsed();
                hand.wait();
                (cpu, t.elapsed())
            };
            if let Some(side) = only.as_deref() {
                let t = Instant::now();
                let mut cpu = Vec::with_capacity(only_frames);
                for _ in 0..only_frames {
                    cpu.push(match side {
                        "planned" => graph_frame(&planning, &mut planned_steps).0,
                        "reused" => graph_frame(&graph, &mut reused_steps).0,
                        "held" => held_frame().0,
                        _ => hand_frame().0,
                    });
                }
                println!(
                    "{side}: {n} passes, {only_frames} frames, {:.1?} per frame, cpu median {:.2?}",
                    t.elapsed() / only_frames as u32,
                    median(cpu)
                );
                let finish = std::mem::take(&mut *finish_times.borrow_mut());
                if !finish.is_empty() {
                    println!("{side}: finish median {:.2?}", median(finish));
                }
                print_rests(
                    (at_rest.get(), only_frames),
                    (held.at_rest(), held_runs.get()),
                );
                continue;
            }
            for _ in 0..3 {
                graph_frame(&planning, &mut planned_steps);
                graph_frame(&graph, &mut reused_steps);
                held_frame();
                hand_frame();
            }
            // Rounds of alternating sides, so that all see the same machine load; each
            // round gives each side's medians, and the table gives the median round's ratio
            // with the spread over rounds (a single round moves by up to 15 % on a busy host).
            let mut rounds_of = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let mut round = Round::default();
                while (round.total < 3 * per_side || round.frames < 11) && round.frames < 100_000 {
                    let (pc, pf, was_reused) = graph_frame(&planning, &mut planned_steps);
                    assert!(!was_reused, "reuse is off on the planned side's graph");
                    let (rc, rf, was_reused) = graph_frame(&graph, &mut reused_steps);
                    assert!(was_reused, "a frame like the last reuses its plan");
                    round.push([(pc, pf), (rc, rf), held_frame(), hand_frame()]);
                }
                rounds_of.push(round.medians());
            }
            // The held plan rebinds to the states the last frame on its buffers left: it
            // re-planned at most once, from the first frame's states.
            assert!(
                held.replanned() <= 1,
                "held plan re-planned {}",
                held.replanned()
            );
            let (held_at_rest, held_runs) = (held.at_rest(), held_runs.get());
            drop(held);
            let finish_times = finish_times.into_inner();
            print_rests(
                (at_rest.get(), finish_times.len()),
                (held_at_rest, held_runs),
            );
            if !shared {
                // On buffers of its own, every frame from the third on is at rest (the first
                // two find states their plan's input was not: fresh, then first written).
                assert!(
                    at_rest.get() + 3 >= finish_times.len(),
                    "reused frames at rest"
                );
                assert!(held_at_rest + 3 >= held_runs, "held frames at rest");
            }
            print_row(label, n, &rounds_of, median(finish_times));
        }
    }
    drop(graph);
    drop(planning);
    if ctx.validation() {
        let messages = log.validation();
        println!("validation messages: {messages}");
        assert!(messages == 0, "{messages}");
    }
}
