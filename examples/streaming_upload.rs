//! Streaming upload: many pieces of host data (buffer pieces, or RGBA8 textures with full mip
//! chains) go through the transfer queue into device-local memory, and a consumer on the
//! async compute queue checksums every byte.
//!
//! The vk-baton side stages each batch of items in a stock `Uploader` (a reusable staging
//! ring) and inserts its one `UploadBatch` pass on `ctx.transfer()`, then the consumer on
//! `ctx.async_compute()` (for images, a copy back into a buffer first): one graph per batch,
//! three in flight. vk-baton adds the release/acquire pairs when the families differ, the
//! layout transitions, the semaphore, and the waits before a slot is reused.
//!
//! In the same run the same stream is written by hand with raw ash (its own staging buffers,
//! command buffers, barriers, ownership transfers, timeline semaphore and fences), and both
//! sides are timed twice: uploads only, and upload plus consumer. Each timed run goes round
//! the stream about as often as it takes to last `--min-ms` (250 by default), the sides take
//! turns `--repeat` times, and the ratio printed is the median over those paired runs (each
//! run's ratio is printed too). `--all-sizes` runs the four
//! standard streams (64 × 16 MiB, 256 × 1 MiB, 4096 × 64 KiB, 1000 textures of 512²) and the
//! fixed-cost loop in one process and prints one table.
//!
//! ```text
//! cargo run --release --example streaming_upload -- --all-sizes
//! cargo run --release --example streaming_upload -- --count 4096 --kib 64
//! cargo run --release --example streaming_upload -- --images 1000 --size 512
//! VK_BATON_VALIDATION=1 cargo run --example streaming_upload -- --all-sizes --scale 0.05 --min-ms 0
//! ```
//!
//! `--plan-svg PATH` draws the plan of one batch with its consumer there. Exits non-zero on any
//! validation message or a checksum mismatch.

#[path = "streaming_upload/baton.rs"]
mod baton;
#[path = "streaming_upload/hand.rs"]
mod hand;
#[path = "streaming_upload/workload.rs"]
mod workload;

use baton::{Baton, Phases};
use hand::HandWritten;
use std::time::Instant;
use support::{report_validation, InFlight, ValueExt};
use vk_baton::ash::vk;
use vk_baton::BufferDesc;
use vk_baton_context::Context;
use vk_baton_passes::UploadBuffer;
use workload::{Item, Workload};

const USAGE: &str = "usage: streaming_upload [--all-sizes [--scale F]] [--count N --kib KIB | --mib MIB] [--images N --size PIXELS] [--batch-mib MIB] [--in-flight N] [--repeat N] [--min-ms MS] [--groups N] [--fixed-cost N] [--sync-only] [--plan-svg PATH]";

/// Default graphs (or hand-written submits) in flight (`--in-flight`).
const IN_FLIGHT: usize = 3;
/// Default workgroups of the checksum dispatch (each writes one partial sum; `--groups`).
const GROUPS: u32 = 256;
/// The most workgroups a checksum may use (the partial-sums buffers are sized for it).
pub const MAX_GROUPS: u32 = 4096;
/// Default least length of a timed run, in milliseconds (`--min-ms`).
const MIN_MS: u64 = 250;
/// Default bytes per batch (`--batch-mib`): items are gathered until a batch holds this much.
const BATCH_MIB: u64 = 16;

fn gib_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / (1u64 << 30) as f64
}

/// Per paired run, hand-written time / vk-baton time in percent (vk-baton's throughput
/// relative to the hand-written one's).
fn percents(pairs: &[(f64, f64)]) -> impl Iterator<Item = f64> + '_ {
    pairs.iter().map(|(h, b)| h / b * 100.0)
}

/// The median of [`percents`].
fn median_ratio(pairs: &[(f64, f64)]) -> f64 {
    let mut r: Vec<f64> = percents(pairs).collect();
    r.sort_by(f64::total_cmp);
    match r.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => r[n / 2],
        n => (r[n / 2 - 1] + r[n / 2]) / 2.0,
    }
}

/// The shortest of the runs' times of one side.
fn best(pairs: &[(f64, f64)], side: impl Fn(&(f64, f64)) -> f64) -> f64 {
    pairs.iter().map(side).fold(f64::MAX, f64::min)
}

/// One stream's figures.
struct Row {
    label: String,
    batches: usize,
    /// Times each timed run went round the stream.
    rounds: usize,
    per_batch: usize,
    /// Per run: (hand-written, vk-baton) seconds, uploads only and with the consumer.
    up: Vec<(f64, f64)>,
    both: Vec<(f64, f64)>,
    /// vk-baton's checks, then the hand-written side's.
    checks: (Checks, Checks),
    /// The consumed batch executions each side ran (warm-ups included): each must be checked.
    consumed: usize,
}

/// Batches checked against the host's checksum, and those that matched.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Checks {
    pub checked: usize,
    pub ok: usize,
}

impl Checks {
    pub fn add(&mut self, ok: bool) {
        self.checked += 1;
        self.ok += ok as usize;
    }
}

struct Options {
    in_flight: usize,
    /// Runs of each measurement per side (best throughput, median ratio).
    repeat: usize,
    /// The least a timed run should last: it goes round the stream as often as that takes
    /// (0: once).
    min_ms: u64,
    groups: u32,
    sync_only: bool,
}

/// Runs `w` four ways: hand-written and vk-baton, uploads only and with the consumer.
fn run_stream(
    ctx: &Context,
    w: &mut Workload,
    o: &Options,
    spirv: &[u32],
    plan: &mut Option<vk_baton::plan::Plan>,
) -> vk_baton::Result<Row> {
    let dispatched = if o.sync_only { 0 } else { o.groups };
    let batches = w.batches();
    let warm = batches.min(o.in_flight + 1);
    let expected: Vec<u32> = (0..batches).map(|b| w.expected(b)).collect();
    let mut hand = HandWritten::new(ctx, w, o.in_flight, spirv, o.groups, expected.clone())?;
    let mut baton = Baton::new(ctx, w, o.in_flight, spirv, o.groups, dispatched, expected)?;
    // Uploads only, then with the consumer.
    let mut phases = [Phases::default(); 2];

    // `n` batches (going round the stream as often as that takes); host times `counted` or not.
    let mut time_hand = |consume: bool, n: usize, counted: bool| -> vk_baton::Result<f64> {
        // The warm-up's host times are not counted, as on the vk-baton side.
        let before = hand.phases;
        for b in 0..warm {
            hand.batch(w, b, consume, dispatched)?;
        }
        hand.wait_all()?;
        hand.phases = before;
        let t = Instant::now();
        for b in 0..n {
            hand.batch(w, b, consume, dispatched)?;
        }
        hand.wait_all()?;
        let elapsed = t.elapsed().as_secs_f64();
        if !counted {
            hand.phases = before;
        }
        Ok(elapsed)
    };
    // A run of a few milliseconds moves by several percent from one run to the next (the
    // host's copy into write-combined memory, the clocks): a timed run goes round the stream
    // as many times as one uploads-only run of the hand-written side (not counted; it warms
    // the staging memory up as well) says it takes to last `min_ms`. Runs with the consumer
    // last longer; a slow sizing run gives shorter ones.
    let once = time_hand(false, batches, false)?;
    let rounds = if o.min_ms == 0 {
        1
    } else {
        ((o.min_ms as f64 / 1e3 / once).ceil() as usize).clamp(1, 10_000)
    };
    let timed = batches * rounds;

    // The warm-up goes once around the staging ring (and every slot), so that the timed run
    // pays no first-touch page faults on either side.
    let mut time_baton = |consume: bool| -> vk_baton::Result<f64> {
        let check = consume && !o.sync_only;
        let mut run = |n: usize, phases: &mut Phases| -> vk_baton::Result<f64> {
            let mut in_flight = InFlight::new();
            let t = Instant::now();
            for b in 0..n {
                if in_flight.0.len() >= o.in_flight {
                    let (done, f) = in_flight.0.pop_front().expect("non-empty");
                    f.wait()?;
                    if check {
                        baton.check(done)?;
                    }
                }
                let fence = baton.batch(ctx, w, b, consume, phases)?;
                in_flight.0.push_back((b, fence));
            }
            for (done, f) in in_flight.0.drain(..) {
                f.wait()?;
                if check {
                    baton.check(done)?;
                }
            }
            Ok(t.elapsed().as_secs_f64())
        };
        run(warm, &mut Phases::default())?;
        run(timed, &mut phases[usize::from(consume)])
    };
    // `repeat` runs of each side, interleaved: each vk-baton run is paired with the hand-written
    // run right before it, and the ratio is the median over the pairs, so that neither a burst
    // of other load nor a slow drift of the machine's speed (both seen on the H100 host)
    // decides it. The throughputs printed are each side's best run.
    let (mut up, mut both) = (Vec::new(), Vec::new());
    for _ in 0..o.repeat {
        up.push((time_hand(false, timed, true)?, time_baton(false)?));
        both.push((time_hand(true, timed, true)?, time_baton(true)?));
    }
    if plan.is_none() {
        *plan = baton.plan.take();
    }

    let staging_mib = baton.uploader.capacity() as f64 / (1 << 20) as f64;
    let host = |p: &Phases| {
        let per = |t: f64| t / p.executions.max(1) as f64 * 1e6;
        format!(
            "stage {:.1} µs, plan {:.1} µs, execute {:.1} µs, {}/{} plans reused",
            per(p.stage),
            per(p.plan),
            per(p.submit),
            p.reused,
            p.executions
        )
    };
    let hand_host = |p: &hand::HandPhases| {
        let per = |t: f64| t / p.batches.max(1) as f64 * 1e6;
        format!(
            "wait {:.1} µs, stage {:.1} µs, record + submit {:.1} µs",
            per(p.wait),
            per(p.stage),
            per(p.record_submit)
        )
    };
    println!(
        "{}: {} batches of {} ({:.1} MiB each), {rounds} time(s) round per timed run; vk-baton staging ring {staging_mib:.1} MiB in {} buffer(s); vk-baton host time per batch: uploads only {}; with the consumer {}; hand-written host time per batch: uploads only {}; with the consumer {}",
        w.label,
        batches,
        w.per_batch,
        w.batch_bytes() as f64 / (1 << 20) as f64,
        baton.uploader.staging_buffers(),
        host(&phases[0]),
        host(&phases[1]),
        hand_host(&hand.phases[0]),
        hand_host(&hand.phases[1]),
    );
    let by_run = |pairs: &[(f64, f64)]| {
        let p: Vec<String> = percents(pairs).map(|p| format!("{p:.1}")).collect();
        p.join(", ")
    };
    println!(
        "{}: vk-baton / hand-written, run by run: uploads only {} %; with the consumer {} %",
        w.label,
        by_run(&up),
        by_run(&both)
    );
    Ok(Row {
        label: w.label.clone(),
        batches,
        rounds,
        per_batch: w.per_batch,
        up,
        both,
        checks: (baton.checks, hand.checks),
        consumed: if o.sync_only {
            0
        } else {
            o.repeat * (warm + timed)
        },
    })
}

/// What one small execution costs on its own: `n` executions of a 256-byte upload, each
/// waited for before the next.
fn fixed_cost(ctx: &Context, n: usize, spirv: &[u32]) -> vk_baton::Result<()> {
    let mut w = Workload::new("fixed cost".into(), Item::Piece { bytes: 256 }, n, 256);
    let expected: Vec<u32> = (0..n).map(|b| w.expected(b)).collect();
    let mut baton = Baton::new(ctx, &w, 1, spirv, 1, 1, expected.clone())?;
    let mut hand = HandWritten::new(ctx, &w, 1, spirv, 1, expected)?;
    println!(
        "\nfixed cost per execution ({n} executions of one 256-byte upload, each waited for):"
    );
    for consume in [false, true] {
        let mut phases = Phases::default();
        let mut wait = 0.0;
        baton.batch(ctx, &w, 0, consume, &mut phases)?.wait()?;
        if consume {
            baton.check(0)?;
        }
        phases = Phases::default();
        let t = Instant::now();
        for b in 0..n {
            let fence = baton.batch(ctx, &w, b, consume, &mut phases)?;
            let tw = Instant::now();
            fence.wait()?;
            wait += tw.elapsed().as_secs_f64();
            if consume {
                baton.check(b)?;
            }
        }
        let total = t.elapsed().as_secs_f64();
        hand.batch(&w, 0, consume, 1)?;
        hand.wait_all()?;
        let th = Instant::now();
        for b in 0..n {
            hand.batch(&w, b, consume, 1)?;
            hand.wait_all()?;
        }
        let hand_total = th.elapsed().as_secs_f64();
        let us = |s: f64| s / n as f64 * 1e6;
        println!(
            "  {}: vk-baton {:.1} µs (stage {:.1}, record + plan {:.1}, execute {:.1}, wait {:.1}); hand-written {:.1} µs",
            if consume { "upload + consumer on the compute queue" } else { "upload only" },
            us(total),
            us(phases.stage),
            us(phases.plan),
            us(phases.submit),
            us(wait),
            us(hand_total),
        );
    }
    // The stock single upload: a new staging buffer per execution.
    let dst = ctx.buffer(
        BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
        "fixed-cost dst",
    )?;
    let graph = ctx.graph()?;
    let t = Instant::now();
    for i in 0..n {
        let mut up = UploadBuffer::new(ctx.device(), ctx.allocator(), dst.clone(), 0, w.source(i))?;
        let fence = graph
            .record()
            .insert_pass("upload", &mut up, ctx.transfer())
            .finish()?
            .execute()?;
        fence.wait()?;
    }
    println!(
        "  stock UploadBuffer (a new staging buffer per upload): {:.1} µs",
        t.elapsed().as_secs_f64() / n as f64 * 1e6
    );
    // Every consumed execution was checked, on both sides.
    let want = Checks {
        checked: n + 1,
        ok: n + 1,
    };
    if (baton.checks, hand.checks) != (want, want) {
        return Err(vk_baton::Error::InvalidInput(format!(
            "fixed-cost checksums: vk-baton {:?}, hand-written {:?}, want {want:?}",
            baton.checks, hand.checks
        )));
    }
    Ok(())
}

fn run() -> vk_baton::Result<bool> {
    let (mut count, mut piece, mut images, mut size) =
        (None::<usize>, None::<u64>, None::<usize>, 512u32);
    let (mut all_sizes, mut scale, mut batch_mib, mut fixed) =
        (false, 1.0f64, BATCH_MIB, None::<usize>);
    let mut plan_svg = None::<std::path::PathBuf>;
    let mut o = Options {
        in_flight: IN_FLIGHT,
        repeat: 3,
        min_ms: MIN_MS,
        groups: GROUPS,
        sync_only: false,
    };
    support::parse_args(USAGE, |name, p| {
        match name {
            "count" => count = Some(p.value()?.parse()?),
            "kib" => piece = Some(p.value()?.parse::<u64>()? << 10),
            "mib" => piece = Some(p.value()?.parse::<u64>()? << 20),
            "images" => images = Some(p.value()?.parse()?),
            "size" => size = p.value()?.parse()?,
            "all-sizes" => all_sizes = true,
            "scale" => scale = p.value()?.parse()?,
            "batch-mib" => batch_mib = p.value()?.parse()?,
            "in-flight" => o.in_flight = p.value()?.parse()?,
            "repeat" => o.repeat = p.value()?.parse()?,
            "min-ms" => o.min_ms = p.value()?.parse()?,
            "groups" => o.groups = p.value()?.parse()?,
            "fixed-cost" => fixed = Some(p.value()?.parse()?),
            "sync-only" => o.sync_only = true,
            "plan-svg" => plan_svg = Some(std::path::PathBuf::from(p.value()?)),
            _ => return Ok(false),
        }
        Ok(true)
    });
    let bad = |m: &str| Err(vk_baton::Error::InvalidInput(m.into()));
    if o.in_flight == 0 || o.repeat == 0 || o.groups == 0 || o.groups > MAX_GROUPS || batch_mib == 0
    {
        return bad(
            "--in-flight, --repeat, --groups (at most 4096) and --batch-mib must be at least 1",
        );
    }
    if !(scale > 0.0 && scale <= 1.0)
        || size == 0
        || piece == Some(0)
        || piece.is_some_and(|p| p % 4 != 0)
    {
        return bad("--scale must lie in (0, 1], --size must be at least 1, and pieces a non-zero multiple of 4 bytes");
    }
    let ctx = Context::new()?;
    let spirv = support::spirv(vk_baton_shaders::CHECKSUM_COMP)?;
    let batch_bytes = batch_mib << 20;
    let scaled = |n: usize| ((n as f64 * scale).round() as usize).max(1);
    let mips = |s: u32| 32 - s.leading_zeros();
    let label_pieces = |n: usize, p: u64| {
        if p >= 1 << 20 {
            format!("{n} x {} MiB", p >> 20)
        } else {
            format!("{n} x {} KiB", p >> 10)
        }
    };
    let label_images = |n: usize, s: u32| format!("{n} images {s}x{s} RGBA8 + mips");
    let mut streams = Vec::new();
    if all_sizes {
        for (n, p) in [(64, 16u64 << 20), (256, 1 << 20), (4096, 64 << 10)] {
            let n = scaled(n);
            streams.push(Workload::new(
                label_pieces(n, p),
                Item::Piece { bytes: p },
                n,
                batch_bytes,
            ));
        }
        let n = scaled(1000);
        streams.push(Workload::new(
            label_images(n, size),
            Item::Image {
                size,
                mips: mips(size),
            },
            n,
            batch_bytes,
        ));
    } else if let Some(n) = images {
        let n = n.max(1);
        streams.push(Workload::new(
            label_images(n, size),
            Item::Image {
                size,
                mips: mips(size),
            },
            n,
            batch_bytes,
        ));
    } else {
        let (n, p) = (count.unwrap_or(64).max(1), piece.unwrap_or(16 << 20));
        streams.push(Workload::new(
            label_pieces(n, p),
            Item::Piece { bytes: p },
            n,
            batch_bytes,
        ));
    }
    let fixed = fixed.unwrap_or(if all_sizes { 200 } else { 0 });

    println!("device: {}", ctx.device_name());
    println!(
        "queues: transfer = family {}, compute = family {}{}",
        ctx.transfer().family(),
        ctx.async_compute().family(),
        if ctx.transfer() == ctx.async_compute() {
            " (one VkQueue: single-queue device, upload and consumer run one after the other)"
        } else {
            ""
        }
    );
    println!(
        "{} in flight, batches of up to {batch_mib} MiB, {} runs of at least {} ms each per side, interleaved: throughputs are each side's best run, ratios the median over the runs of vk-baton / hand-written; every figure includes the host copy into staging memory\n",
        o.in_flight, o.repeat, o.min_ms
    );

    let mut rows = Vec::new();
    let mut plan = None;
    for w in &mut streams {
        rows.push(run_stream(&ctx, w, &o, &spirv, &mut plan)?);
    }
    println!("\nplan of one batch with its consumer:");
    if let Some(plan) = &plan {
        print!("{plan}");
        if let Some(path) = &plan_svg {
            support::write_plan_svg(path, plan)?;
        }
    }
    if fixed > 0 {
        fixed_cost(&ctx, fixed, &spirv)?;
    }

    println!("\n| stream | batches x items x rounds | hand-written upload | vk-baton upload | ratio | hand-written upload + consumer | vk-baton upload + consumer | ratio | checked (vk-baton, hand-written) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut all_ok = true;
    for (r, w) in rows.iter().zip(&streams) {
        let total = w.total_bytes() * r.rounds as u64;
        let g = |s: f64| gib_per_s(total, s);
        let want = Checks {
            checked: r.consumed,
            ok: r.consumed,
        };
        let ok = r.checks == (want, want);
        all_ok &= ok;
        println!(
            "| {} | {} x {} x {} | {:.2} GiB/s | {:.2} GiB/s | {:.1}% | {:.2} GiB/s | {:.2} GiB/s | {:.1}% | {}/{}, {}/{}{} |",
            r.label,
            r.batches,
            r.per_batch,
            r.rounds,
            g(best(&r.up, |p| p.0)),
            g(best(&r.up, |p| p.1)),
            median_ratio(&r.up),
            g(best(&r.both, |p| p.0)),
            g(best(&r.both, |p| p.1)),
            median_ratio(&r.both),
            r.checks.0.ok,
            r.checks.0.checked,
            r.checks.1.ok,
            r.checks.1.checked,
            if ok { "" } else { " MISMATCH" },
        );
    }
    println!(
        "check: {}",
        if all_ok {
            if o.sync_only {
                "--sync-only: the consumer launched nothing, no checksum to check"
            } else {
                "every consumed batch verified by the compute checksum on both sides"
            }
        } else {
            "MISMATCH"
        }
    );
    drop(streams);
    let messages = report_validation(&ctx);
    Ok(messages == 0 && all_ok)
}

fn main() {
    support::main_with(run)
}
