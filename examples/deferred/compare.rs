//! `--compare`: the library's frame and the hand-written one (`hand.rs`) in one run, timed
//! side by side, and their pictures compared.
//!
//! Each side renders `WARM_UP` frames, then `--frames` timed ones, in alternating blocks of
//! `BLOCK` frames (the side that goes first alternates too); each block ends with its frames
//! waited for, so the two sides never share the GPU. Per frame:
//!
//! - **CPU time**: the host's time to record and submit the frame (library: `record()`, the
//!   passes, `finish()` with a reused plan, which is checked, and `execute()`; hand-written:
//!   resetting its command pools, recording and submitting). Waiting for the frame in flight
//!   whose resources the new frame reuses is not counted on either side. Neither side records
//!   debug labels unless `--labels` turns the library's on (`Graph::set_labels`), as
//!   `benches/frame.rs --no-labels` compares. With `--held` the
//!   library side instead executes a plan it holds (`Planned::hold`, made by the first frame):
//!   `HeldPlan::execute` rebinds it to the new timeline values and records it, with no
//!   declaring, lowering or planning; each timed frame must do without a re-plan
//!   (`HeldPlan::replanned`). One held plan serves both frames in flight: the transients'
//!   heap set is picked for each execution (a free one of the graph's), and each compute pass
//!   writes the next of its descriptor sets with that execution's views as it records.
//!   With `--replay` the library's frames submit their recordings again (each compute pass
//!   keeps a set per heap set instead), and a third side runs: the hand-written frame
//!   recorded once per slot and submitted again, the floor. A held plan's timestamp passes
//!   read the slot from a cell the loop sets, so their keys name it and the loop tells the
//!   plan to ask for them again each frame (`HeldPlan::refresh_replay_keys`).
//! - **GPU time**: from the first timestamp to the last across the queues, written at the
//!   start and end of each queue's work in the frame (on the library side by a pass with no
//!   uses at either end of each queue's program order, so the plan is the same otherwise).
//!   Timestamps of two queues are compared as one clock (on the NVIDIA machine and lavapipe
//!   they are).
//!
//! The last frame of both sides (the same frame number) must give the same picture.

use super::hand::Hand;
use super::hand_record::BARRIER_CALLS;
use super::stamps::{stamp_passes, stamps, wait_front, InFlight, SlotOf, Stamps};
use super::{held, plan_frame_with, read_output, Options, Passes, FRAMES_IN_FLIGHT};
use crate::pipelines::Pipelines;
use crate::pipelines::Samplers;
use crate::scene::Scene;
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::vkerr;
use vk_baton::ash::vk;
use vk_baton::{Graph, HeldPlan, StImage};
use vk_baton_context::Context;

/// Frames per side before timing: the library makes its heap sets and plan, both sides touch
/// their memory.
const WARM_UP: u32 = 2 * FRAMES_IN_FLIGHT as u32 + 1;
/// Frames per side between switches.
const BLOCK: u32 = 10;

/// The median, quartiles and extremes of one side's times, in milliseconds.
struct Stats {
    median: f64,
    p25: f64,
    p75: f64,
    min: f64,
    max: f64,
}

impl Stats {
    fn of(times: &[Duration]) -> Stats {
        let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
        Stats {
            median: at(0.5),
            p25: at(0.25),
            p75: at(0.75),
            min: ms[0],
            max: ms[ms.len() - 1],
        }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "median {:.3} ms (quartiles {:.3}..{:.3}, min {:.3}, max {:.3})",
            self.median, self.p25, self.p75, self.min, self.max
        )
    }
}

/// Runs both sides and prints their times; whether every check passed.
#[allow(clippy::too_many_arguments)]
pub fn run(
    ctx: &Context,
    graph: &Graph,
    o: &Options,
    passes: &mut Passes,
    output: &Arc<StImage>,
    scene: &Arc<Scene>,
    samplers: &Arc<Samplers>,
    pipelines: &Arc<Pipelines>,
    upload: u64,
) -> vk_baton::Result<bool> {
    let slots = FRAMES_IN_FLIGHT;
    let hand = Hand::new(ctx, o, scene, samplers, pipelines, upload, slots, false)?;
    let mut hands = vec![HandSide::new(hand, slots)];
    if o.replay {
        let replay = Hand::new(ctx, o, scene, samplers, pipelines, upload, slots, true)?;
        hands.push(HandSide::new(replay, slots));
    }
    let (gfx, compute) = (ctx.graphics().clone(), ctx.async_compute().clone());
    let two = gfx.handle() != compute.handle();
    let info = vk::QueryPoolCreateInfo::default()
        .query_type(vk::QueryType::TIMESTAMP)
        .query_count(4 * slots as u32);
    let support = ctx.timestamp_support();
    let mask = |family: u32| match support.valid_bits(family) {
        0 => 0,
        64.. => u64::MAX,
        b => (1u64 << b) - 1,
    };
    let stamps = Stamps {
        // SAFETY: a valid create info on a live device; destroyed below, after every frame.
        pool: unsafe { ctx.device().create_query_pool(&info, None) }
            .map_err(vkerr("vkCreateQueryPool"))?,
        period_ns: support.period_ns() as f64,
        masks: [mask(gfx.family()), mask(compute.family())],
        two,
    };
    // Like for like: the hand-written frame records no debug labels.
    graph.set_labels(o.labels);
    let result = compare(ctx, graph, o, passes, output, &mut hands, &stamps);
    graph.set_labels(true);
    drop(hands);
    if result.is_err() {
        // A library frame in flight may still write its timestamps (a dropped fence need not
        // block).
        // SAFETY: no other thread submits meanwhile.
        unsafe { ctx.device().device_wait_idle() }.map_err(vkerr("vkDeviceWaitIdle"))?;
    }
    // SAFETY: every library frame was waited for (by `compare`, or just above).
    unsafe { ctx.device().destroy_query_pool(stamps.pool, None) };
    result
}

/// A hand-written side's frames and times: the frame that records, or (`--replay`) the one
/// that submits its recording again.
struct HandSide {
    hand: Hand,
    /// Frames so far.
    n: u32,
    /// Per slot: whether its frame in flight is timed.
    timed: Vec<bool>,
    cpu: Vec<Duration>,
    gpu: Vec<Duration>,
    /// Barrier commands of the last frame.
    barriers: u64,
}

impl HandSide {
    fn new(hand: Hand, slots: usize) -> Self {
        Self {
            hand,
            n: 0,
            timed: vec![false; slots],
            cpu: Vec::new(),
            gpu: Vec::new(),
            barriers: 0,
        }
    }

    /// Runs `count` frames and waits for them; their times count if `timed`.
    fn block(&mut self, count: u32, timed: bool) -> vk_baton::Result<()> {
        for _ in 0..count {
            let s = self.n as usize % self.timed.len();
            let before = BARRIER_CALLS.load(Ordering::Relaxed);
            let (cpu, gpu) = self.hand.frame(self.n)?;
            self.barriers = BARRIER_CALLS.load(Ordering::Relaxed) - before;
            if let (Some(g), true) = (gpu, self.timed[s]) {
                self.gpu.push(g);
            }
            self.timed[s] = timed;
            if timed {
                self.cpu.push(cpu);
            }
            self.n += 1;
        }
        for (s, was_timed) in self.timed.iter().enumerate() {
            if let (Some(g), true) = (self.hand.wait_slot(s)?, *was_timed) {
                self.gpu.push(g);
            }
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn compare(
    ctx: &Context,
    graph: &Graph,
    o: &Options,
    passes: &mut Passes,
    output: &Arc<StImage>,
    hands: &mut [HandSide],
    st: &Stamps,
) -> vk_baton::Result<bool> {
    let (gfx, compute) = (ctx.graphics(), ctx.async_compute());
    let slots = FRAMES_IN_FLIGHT;
    let (mut lib_cpu, mut lib_gpu) = (Vec::new(), Vec::new());
    // The builder loop's part of each library frame: `record()` to `finish()`.
    let mut lib_build = Vec::new();
    let mut in_flight = InFlight::new();
    let mut lib_sync = (0, 0);
    let (mut reused, mut lib_n) = (0u32, 0u32);
    let total = WARM_UP + o.frames;
    // The query slot and frame number of the library frame being recorded: the timestamp
    // passes and (held) the compute passes read them while they record.
    let (slot, frame) = (Cell::new(0usize), Cell::new(0u32));
    // `--held`: the passes, each reading the frame number as it records, in a plan the first
    // frame makes and holds (one for both frames in flight: see `held.rs`).
    let (mut builder_passes, mut numbered) = (None, Vec::new());
    if o.held {
        numbered = held::numbered(passes, &frame);
    } else {
        builder_passes = Some(passes);
    }
    let mut numbered = Some(&mut numbered);
    // A held plan's timestamp passes read the slot as they record; the builder loop makes its
    // own for each frame, whose keys name their slot (`--replay`).
    let mut held_stamps = stamp_passes(st, SlotOf::Set(&slot));
    let mut held_stamps = Some(&mut held_stamps);
    let mut held_plan: Option<HeldPlan<'_>> = None;
    let mut replayed = 0u32;
    let mut lib_block = |count: u32, timed: bool| -> vk_baton::Result<()> {
        for _ in 0..count {
            let s = lib_n as usize % slots;
            if in_flight.len() == slots {
                wait_front(ctx, &mut in_flight, st, &mut lib_gpu)?;
            }
            let (mut first, mut last) = stamp_passes(st, SlotOf::Fixed(s));
            let start = Instant::now();
            slot.set(s);
            frame.set(lib_n);
            let (fence, was_reused) = if let Some(passes) = builder_passes.as_deref_mut() {
                let planned = plan_frame_with(
                    graph,
                    passes,
                    lib_n,
                    |b| stamps(b, &mut first, st.two, [gfx, compute]),
                    |b| stamps(b, &mut last, st.two, [gfx, compute]),
                )?;
                let was_reused = planned.reused();
                // The four timestamp passes record no barrier and wait for nothing.
                lib_sync = (
                    planned.plan().barrier_commands(),
                    planned.plan().semaphore_waits(),
                );
                if timed {
                    lib_build.push(start.elapsed());
                }
                (planned.execute()?, was_reused)
            } else if let Some(h) = held_plan.as_mut() {
                // The timestamp passes' keys name the slot just set.
                h.refresh_replay_keys();
                let before = h.replanned();
                let fence = h.execute()?;
                (fence, h.replanned() == before)
            } else {
                // The first frame plans, as the builder loop's does, and the plan is held.
                let (first, last) = held_stamps.take().expect("held once");
                let planned = held::plan_to_hold(
                    graph,
                    numbered.take().expect("held once"),
                    |b| stamps(b, first, st.two, [gfx, compute]),
                    |b| stamps(b, last, st.two, [gfx, compute]),
                )?;
                let was_reused = planned.reused();
                (held_plan.insert(planned.hold()).execute()?, was_reused)
            };
            let cpu = start.elapsed();
            if let Some(h) = &held_plan {
                lib_sync = (h.plan().barrier_commands(), h.plan().semaphore_waits());
            }
            if timed {
                lib_cpu.push(cpu);
                reused += was_reused as u32;
                replayed += fence.replayed() as u32;
            }
            in_flight.push_back((fence, s, timed));
            lib_n += 1;
        }
        while !in_flight.is_empty() {
            wait_front(ctx, &mut in_flight, st, &mut lib_gpu)?;
        }
        Ok(())
    };
    lib_block(WARM_UP, false)?;
    for h in hands.iter_mut() {
        h.block(WARM_UP, false)?;
    }
    // Blocks in turn, the side that goes first rotating.
    let (mut round, mut done) = (0, 0);
    while done < o.frames {
        let count = BLOCK.min(o.frames - done);
        for k in 0..1 + hands.len() {
            match (round + k) % (1 + hands.len()) {
                0 => lib_block(count, true)?,
                h => hands[h - 1].block(count, true)?,
            }
        }
        done += count;
        round += 1;
    }
    assert!(lib_n == total && hands.iter().all(|h| h.n == total));

    let last = total - 1;
    let lib_pixels = read_output(ctx, graph, output)?;
    let (lc, lg) = (Stats::of(&lib_cpu), Stats::of(&lib_gpu));
    let (hc, hg) = (Stats::of(&hands[0].cpu), Stats::of(&hands[0].gpu));
    println!(
        "compare: {} timed frames per side after {WARM_UP} warm-up frames, in blocks of {BLOCK}; {}",
        o.frames,
        match (st.two, o.hand_split) {
            (true, _) => "two queues (shared images CONCURRENT on both sides where the families differ)",
            (false, false) => "one VkQueue",
            (false, true) => "one VkQueue (the hand-written side in its two-queue batches on it)",
        }
    );
    println!(
        "per frame: library {} barrier commands, {} semaphore waits; hand {} barrier commands, {} semaphore waits",
        lib_sync.0,
        lib_sync.1,
        hands[0].barriers,
        hands[0].hand.semaphore_waits()
    );
    let held_replanned = held_plan.as_ref().map(HeldPlan::replanned);
    println!(
        "library side: {}",
        if o.held {
            "held plan (Planned::hold once, then HeldPlan::execute each frame; one plan for both frames in flight)"
        } else {
            "builder loop (record, insert_pass, finish with the plan cache, execute each frame)"
        }
    );
    println!(
        "debug labels: {}",
        if o.labels {
            "library side on (--labels), hand side none"
        } else {
            "off on both sides (--labels turns the library's on)"
        }
    );
    println!(
        "library cpu per frame (record + submit, {}): {lc}",
        if o.held { "held plan" } else { "reused plan" }
    );
    println!(
        "hand    cpu per frame (record + submit{}): {hc}",
        if o.hand_write_sets {
            ", descriptor sets written every frame"
        } else {
            ""
        }
    );
    if !lib_build.is_empty() {
        println!(
            "library cpu per frame to finish() (record, the passes, finish): {}",
            Stats::of(&lib_build)
        );
    }
    if let Some(r) = hands.get(1) {
        println!(
            "hand replay cpu per frame (the slot's recording submitted again): {}",
            Stats::of(&r.cpu)
        );
    }
    println!("library gpu per frame (first to last timestamp): {lg}");
    println!("hand    gpu per frame (first to last timestamp): {hg}");
    if let Some(r) = hands.get(1) {
        let (rc, rg) = (Stats::of(&r.cpu), Stats::of(&r.gpu));
        println!("hand replay gpu per frame (first to last timestamp): {rg}");
        println!(
            "library replay against the hand replay: cpu {:.3}x, {:+.1} us; the hand replay is {:.3}x the hand frame that records",
            lc.median / rc.median,
            (lc.median - rc.median) * 1e3,
            rc.median / hc.median
        );
    }
    let cpu_ratio = lc.median / hc.median;
    // Issue targets: a frame built (or held) each frame within 1.2x of the hand-written one; a
    // replayed frame at most 0.3x of the hand-written frame, which records every frame.
    let cpu_target = if o.replay { 0.3 } else { 1.2 };
    let gpu_ratio = lg.median / hg.median;
    // Within the run's spread: the medians differ by less than half the wider interquartile
    // range of the two sides.
    let spread = ((lg.p75 - lg.p25).max(hg.p75 - hg.p25) / 2.0) / hg.median;
    let gpu_ok = gpu_ratio <= 1.0 + spread;
    println!(
        "ratios library / hand: cpu {cpu_ratio:.3}x (target at most {cpu_target}x: {}), gpu {gpu_ratio:.3}x (target at most 1.00x within the spread of {:.1} %: {})",
        if cpu_ratio <= cpu_target { "OK" } else { "MISSED" },
        spread * 100.0,
        if gpu_ok { "OK" } else { "MISSED" }
    );
    let reused_ok = reused == o.frames;
    println!(
        "library plans reused: {reused} of {} timed frames ({})",
        o.frames,
        if reused_ok { "OK" } else { "MISSED" }
    );
    // With replay on, a frame submits a recording again when one was made for its query slot
    // (the timestamp passes' keys) and heap set. The warm-up frames made them, and the graph
    // gives frames in flight its heap sets in turn (the free set bound longest ago), so the
    // pairs stay the same across the blocks' waits. A timed frame records only where a fast
    // GPU let the first frames share one heap set and the second set came late: once per
    // slot at most.
    let replay_ok = !o.replay || replayed + FRAMES_IN_FLIGHT as u32 >= o.frames;
    if o.replay {
        println!(
            "library frames replayed: {replayed} of {} timed frames (target: all but at most {FRAMES_IN_FLIGHT}: {})",
            o.frames,
            if replay_ok { "OK" } else { "MISSED" }
        );
    }
    if let Some(n) = held_replanned {
        // Timed frames that re-planned count as not reused above.
        println!(
            "library held plan: re-planned {n} of {total} executions, {} of them in the {} timed frames",
            o.frames - reused,
            o.frames
        );
    }
    let mut same = true;
    for (h, side) in hands.iter_mut().zip(["hand-written", "hand replay"]) {
        let pixels = h.hand.readback(ctx, last)?;
        same &= same_picture(
            &lib_pixels,
            &pixels,
            &format!("frame {last} of the {side} side"),
        );
    }
    Ok(same && reused_ok && replay_ok)
}

/// Compares `hand` with the library's picture `lib`, says how `what` compares, and returns
/// whether it is within the reference tolerance.
fn same_picture(lib: &[u8], hand: &[u8], what: &str) -> bool {
    // Per pixel, the largest difference of a channel.
    let diffs: Vec<u8> = lib
        .chunks_exact(4)
        .zip(hand.chunks_exact(4))
        .map(|(a, b)| (0..4).map(|c| a[c].abs_diff(b[c])).max().unwrap_or(0))
        .collect();
    let differ = diffs.iter().filter(|&&d| d > 0).count();
    let worst = diffs.iter().copied().max().unwrap_or(0);
    // The sample's reference tolerance (tests/samples/reference.rs): a channel off by at most
    // 2 levels, more only in 60 of 57 600 pixels (in proportion).
    let beyond = diffs.iter().filter(|&&d| d > 2).count();
    let sized = lib.len() == hand.len();
    let same = sized && differ == 0;
    let close = sized && beyond * 960 <= diffs.len();
    println!(
        "check: {what} is {} the library's ({differ} pixels differ, by at most {worst})",
        if same {
            "identical bit for bit to"
        } else if close {
            "within the reference tolerance of"
        } else {
            "DIFFERENT from"
        },
    );
    close
}
