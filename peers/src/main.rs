//! GPU and CPU time per frame of one workload, three ways side by side in one process:
//! raw ash written by hand, vk-baton, and vk-graph 0.14.8.
//!
//! The workload is `benches/frame.rs`'s chain (see `workload.rs`) at N = 10, 100 and 1000
//! passes on one queue. Every side brackets its frame's command stream with the same two
//! timestamps (`timer.rs`): GPU time is the time between them, CPU time runs from the first
//! call of the frame to the return of its submit. The sides take turns frame by frame, so
//! they share the machine's load; medians over frames.
//!
//! ```text
//! cargo run --release --manifest-path peers/Cargo.toml -- --quick      # ~0.4 s per side and row
//! cargo run --release --manifest-path peers/Cargo.toml                 # ~3 s per side and row
//! ... -- --variants   # hand-written rows with other barrier encodings (sync1, buffer barriers)
//! ... -- --explain    # the barriers each side records for a 10-pass frame, then exits
//! VK_BATON_VALIDATION=1 ... -- --quick   # validation on every side (vk-graph panics on a message)
//! ```
//!
//! vk-graph makes its own instance and device (it cannot record on vk-baton's): the hand and
//! vk-baton sides share vk-baton's device, vk-graph uses a second device on the same GPU. The
//! row `hand@vkg` runs the hand-written frame on vk-graph's device, to tell the devices'
//! difference from the encodings'.

mod baton;
mod explain;
mod hand;
mod timer;
mod vkgraph;
mod workload;

use hand::{Encoding, Hand, HandQueue};
use std::sync::Arc;
use std::time::{Duration, Instant};
use timer::FrameTimer;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, StBuffer};
use vk_baton_context::{Context, ContextOptions};
use workload::{BUFFERS, BUFFER_SIZE};

/// One side's samples: (cpu, gpu) per frame.
#[derive(Default)]
struct Samples(Vec<(Duration, Duration)>);

impl Samples {
    fn median(&self, pick: impl Fn(&(Duration, Duration)) -> Duration) -> Duration {
        self.quantile(pick, 0.5)
    }

    /// The sample at fraction `f` of the sorted samples.
    fn quantile(&self, pick: impl Fn(&(Duration, Duration)) -> Duration, f: f64) -> Duration {
        let mut v: Vec<Duration> = self.0.iter().map(pick).collect();
        v.sort();
        v[((v.len() - 1) as f64 * f).round() as usize]
    }
}

/// `0..n` in an order drawn from `seed` (xorshift, Fisher-Yates).
fn shuffled(n: usize, seed: &mut u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        v.swap(i, (*seed % (i as u64 + 1)) as usize);
    }
    v
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    for a in &args {
        if !["--quick", "--variants", "--explain", "--labels"].contains(&a.as_str()) {
            eprintln!("unknown argument {a}; use --quick, --variants, --explain, --labels");
            std::process::exit(2);
        }
    }
    let per_side = if has("--quick") {
        Duration::from_millis(400)
    } else {
        Duration::from_secs(3)
    };
    let ctx = Context::with_options(ContextOptions::default()).expect("a Vulkan device");
    let log = ctx.message_log();
    let graph = ctx.graph().expect("graph");
    // Like the other two sides, no debug labels unless asked.
    graph.set_labels(has("--labels"));
    let q = ctx.graphics().clone();
    let support = ctx.timestamp_support();
    let valid_bits = support.valid_bits(q.family());
    assert!(valid_bits > 0, "the graphics queue has no timestamps");
    let new_timer = || FrameTimer::new(ctx.device(), support.period_ns(), valid_bits);
    let bufs: Arc<Vec<Arc<StBuffer>>> = Arc::new(
        (0..BUFFERS)
            .map(|i| {
                let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
                ctx.buffer(BufferDesc::new(BUFFER_SIZE, usage), &format!("buf{i}"))
                    .expect("buffer")
            })
            .collect(),
    );
    let handles: Vec<vk::Buffer> = bufs.iter().map(|b| b.handle()).collect();
    let mut peer = vkgraph::VkGraph::new(&ctx.device_name(), ctx.validation());

    if has("--explain") {
        explain::print(&graph, &q, &bufs, new_timer(), &mut peer);
        return;
    }

    let encodings: Vec<Encoding> = if has("--variants") {
        Encoding::ALL.to_vec()
    } else {
        vec![Encoding::Global2]
    };
    let mut hands: Vec<Hand> = encodings
        .iter()
        .map(|&e| {
            let queue = HandQueue::Baton(q.clone());
            Hand::new(ctx.device(), queue, handles.clone(), new_timer(), e)
        })
        .collect();
    // The model once more on vk-graph's device: tells a device's effect from an encoding's.
    let (peer_device, peer_family, peer_bufs) = peer.for_hand();
    let on_peer = Hand::new(
        &peer_device,
        HandQueue::Peer(peer_device.clone(), peer_family),
        peer_bufs,
        peer.new_timer(),
        Encoding::Global2,
    );
    hands.insert(1, on_peer);

    println!(
        "device: {}, validation {}, vk-baton pass labels {}",
        ctx.device_name(),
        if ctx.validation() { "on" } else { "off" },
        if has("--labels") { "on" } else { "off" },
    );
    println!(
        "{:>6}  {:<11} {:>10} {:>8} {:>7}   {:>10} {:>8}   {:>7}",
        "passes", "side", "gpu", "gpu/hand", "gpu iqr", "cpu", "cpu/hand", "frames"
    );
    for n in [10usize, 100, 1000] {
        let mut baton = baton::Baton::new(new_timer(), &bufs, n);
        peer.check_order(n);
        let sides = 2 + hands.len();
        let mut samples: Vec<Samples> = (0..sides).map(|_| Samples::default()).collect();
        let mut total = Duration::ZERO;
        let mut round = 0;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        // Three rounds of warm-up, then rounds until each side had its time.
        while (round < 3 + 11 || total < per_side * sides as u32) && round < 100_000 {
            // Each round runs the sides in another order (a seeded shuffle), so that no side
            // always follows the same one: the side after vk-graph, which runs on another
            // device, finds colder caches.
            let order = shuffled(sides, &mut seed);
            for &side in &order {
                let t = Instant::now();
                let (cpu, gpu) = match side {
                    0 => {
                        let fence = baton.frame(&graph, &q);
                        let cpu = t.elapsed();
                        fence.wait().expect("wait");
                        (cpu, baton.timer.read())
                    }
                    1 => {
                        let mut fence = peer.frame(n);
                        let cpu = t.elapsed();
                        fence.wait().expect("vk-graph wait");
                        (cpu, peer.timer.read())
                    }
                    h => {
                        let hand = &mut hands[h - 2];
                        hand.submit_frame(n);
                        let cpu = t.elapsed();
                        hand.wait();
                        (cpu, hand.timer.read())
                    }
                };
                if round >= 3 {
                    samples[side].0.push((cpu, gpu));
                    total += t.elapsed();
                }
            }
            round += 1;
        }
        let (hand_gpu, hand_cpu) = (samples[2].median(|s| s.1), samples[2].median(|s| s.0));
        let labels = ["vk-baton", "vk-graph"]
            .into_iter()
            .chain(hands.iter().map(|h| h.label()));
        for (label, s) in labels.zip(&samples) {
            let (gpu, cpu) = (s.median(|s| s.1), s.median(|s| s.0));
            // The spread of the GPU times: interquartile range over the median.
            let iqr = (s.quantile(|s| s.1, 0.75) - s.quantile(|s| s.1, 0.25)).as_secs_f64()
                / gpu.as_secs_f64();
            println!(
                "{:>6}  {:<11} {:>8.1}us {:>7.3}x {:>6.1}%   {:>8.1}us {:>7.2}x   {:>7}",
                n,
                label,
                us(gpu),
                gpu.as_secs_f64() / hand_gpu.as_secs_f64(),
                100.0 * iqr,
                us(cpu),
                cpu.as_secs_f64() / hand_cpu.as_secs_f64(),
                s.0.len(),
            );
        }
    }
    drop(graph);
    if ctx.validation() {
        let messages = log.validation();
        println!("validation messages (hand and vk-baton device): {messages}");
        assert!(messages == 0, "{messages}");
    }
}
