//! Every multi-queue GPU test and every sample's frame loop, restated at the `PlanInput` level
//! (and culled frames with transients, and handoffs between frames: `simulated/scheduled.rs`)
//! and run frame after frame on simulated topologies, without a GPU: the NVIDIA 3-family
//! device, one family with one queue (lavapipe), and one family with two and three queues.
//! Each frame is planned, verified alone from the queues' timeline values (what a debug
//! `finish()` does) and chained with the frames before it, with the values the executor
//! assigns (`vk_baton::verify::simulate::Simulation`).
//!
//! Each scenario restates exactly what the source's passes declare (the stock passes declare
//! in their `declare` methods, in `passes/src/`), and names its source. Steady-state facts
//! (batches, semaphore waits, ownership-transfer barriers) are derived from the contract in
//! DESIGN.md: a wait only between distinct queues (rules 4, 10), a release/acquire pair only
//! across families for EXCLUSIVE contents that are needed (rules 5-7), batch boundaries only
//! where another queue waits (rule 10) or at external binary semaphores (rule 9).
#![cfg(feature = "verify")]

use vk_baton::ash::vk;
use vk_baton::plan::{
    BinarySignalDecl, BinaryWaitDecl, PassDecl, ResourceDecl, UseDecl, WaitTarget,
};
use vk_baton::verify::simulate::{Frame, FrameReport, SimError, Simulation, Topology};
use vk_baton::verify::{Actor, HazardKind};
use vk_baton::{Access, BufferRange, ImageRange, SubRange};

#[path = "simulated/deferred.rs"]
mod deferred;
#[path = "simulated/depth_stencil.rs"]
mod depth_stencil;
#[path = "simulated/frame_bench.rs"]
mod frame_bench;
#[path = "simulated/general_layouts.rs"]
mod general_layouts;
#[path = "simulated/maintenance9.rs"]
mod maintenance9;
#[path = "simulated/multi_family.rs"]
mod multi_family;
#[path = "simulated/passes_multi_family.rs"]
mod passes_multi_family;
#[path = "simulated/samples.rs"]
mod samples;
#[path = "simulated/scheduled.rs"]
mod scheduled;
#[path = "simulated/streaming_images.rs"]
mod streaming_images;
#[path = "simulated/unordered.rs"]
mod unordered;

use deferred::*;
use depth_stencil::*;
use frame_bench::*;
use general_layouts::*;
use maintenance9::*;
use multi_family::*;
use passes_multi_family::*;
use samples::*;
use scheduled::*;
use streaming_images::*;
use unordered::*;

const XFER: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw() | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);
const IXFER: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::TRANSFER_SRC.as_raw() | vk::ImageUsageFlags::TRANSFER_DST.as_raw(),
);
const FRAMES: usize = 8;

// --- Topologies and a small driver. --------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Topo {
    Nvidia,
    /// The H100 with `maintenance8` enabled (its driver exposes it): ownership transfers use
    /// all stages, and the waits around them are at the using stages.
    NvidiaMaintenance8,
    /// The H100's families with `maintenance9`, each handing optimal images to every other (its
    /// driver does not expose the extension; planned and verified only).
    NvidiaMaintenance9,
    Single,
    TwoQueues,
    ThreeQueues,
}
const TOPOLOGIES: [Topo; 5] = [
    Topo::Nvidia,
    Topo::NvidiaMaintenance8,
    Topo::Single,
    Topo::TwoQueues,
    Topo::ThreeQueues,
];

fn topology(t: Topo) -> Topology {
    match t {
        Topo::Nvidia => Topology::nvidia(),
        Topo::NvidiaMaintenance8 => Topology::nvidia().with_transfers_using_all_stages(),
        Topo::NvidiaMaintenance9 => Topology::nvidia().with_maintenance9(0b111),
        Topo::Single => Topology::single_family(),
        Topo::TwoQueues => Topology::two_queues_of_one_family(),
        Topo::ThreeQueues => {
            let all = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
            Topology::new()
                .with_family(all, 3)
                .with_queue("graphics", 0)
                .and_then(|t| t.with_queue("async_compute", 0))
                .and_then(|t| t.with_queue("transfer", 0))
                .unwrap()
        }
    }
}

/// One scenario on one topology: the simulation and the samples' three queues.
struct S {
    sim: Simulation,
    topo: Topo,
    g: usize,
    c: usize,
    t: usize,
    /// Per frame: whether `finish()` would reuse the previous frame's plan.
    reused: Vec<bool>,
    /// Per frame: whether it would take the last plan at rest (`Planned::at_rest`).
    at_rest: Vec<bool>,
}

impl S {
    fn new(topo: Topo) -> S {
        let t = topology(topo);
        let q = |n| t.queue(n).unwrap();
        let (g, c, tr) = (q("graphics"), q("async_compute"), q("transfer"));
        S {
            sim: Simulation::new(t),
            topo,
            g,
            c,
            t: tr,
            reused: Vec::new(),
            at_rest: Vec::new(),
        }
    }
    /// The frames that reuse a kept plan, as a string of `r` (reused) and `p`
    /// (planned).
    fn reuse_pattern(&self) -> String {
        self.reused
            .iter()
            .map(|&r| if r { 'r' } else { 'p' })
            .collect()
    }
    /// The frames that take the last plan at rest, without reading the states, as a string
    /// of `a` (at rest) and `.` (not).
    fn rest_pattern(&self) -> String {
        (self.at_rest.iter())
            .map(|&r| if r { 'a' } else { '.' })
            .collect()
    }
    fn family(&self, q: usize) -> u32 {
        self.sim.topology().queues()[q].family
    }
    /// Two different families: ownership transfers for EXCLUSIVE contents.
    fn cross(&self, a: usize, b: usize) -> bool {
        self.family(a) != self.family(b)
    }
    fn buf(&mut self, name: &str, size: u64, usage: vk::BufferUsageFlags) -> usize {
        self.sim
            .add_resource(ResourceDecl::buffer(name, size, usage))
    }
    fn img(&mut self, name: &str, mips: u32, layers: u32, usage: vk::ImageUsageFlags) -> usize {
        self.sim
            .add_resource(ResourceDecl::image(name, mips, layers, usage))
    }
    fn run(&mut self, passes: Vec<PassDecl>) -> FrameReport {
        self.run_as(Frame::from(&passes))
    }
    fn run_as(&mut self, frame: Frame<'_>) -> FrameReport {
        match self.sim.frame(frame) {
            Ok(r) => {
                self.reused.push(r.reused);
                self.at_rest.push(r.at_rest);
                r
            }
            Err(SimError::Verification {
                frame,
                chained,
                violations,
            }) => {
                let text: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
                panic!(
                    "{:?} frame {frame} (chained: {chained}):\n{}",
                    self.topo,
                    text.join("\n")
                )
            }
            Err(e) => panic!("{:?}: {e}", self.topo),
        }
    }
}

fn pass(name: &str, queue: usize, uses: impl IntoIterator<Item = UseDecl>) -> PassDecl {
    let mut p = PassDecl::new(name, queue);
    p.uses.extend(uses);
    p
}
fn u(resource: usize, access: Access) -> UseDecl {
    UseDecl::new(resource, access)
}
fn ud(resource: usize, access: Access) -> UseDecl {
    UseDecl::new(resource, access).discard()
}
fn bytes(offset: u64, size: u64) -> SubRange {
    SubRange::Buffer(BufferRange { offset, size })
}
fn mip(level: u32, layers: u32) -> SubRange {
    SubRange::Image(ImageRange::mip(level, layers))
}
fn sem(raw: u64) -> vk::Semaphore {
    vk::Handle::from_raw(raw)
}

/// (batches, semaphore waits, ownership-transfer barriers).
fn facts(r: &FrameReport) -> (usize, usize, usize) {
    (
        r.plan.batch_count(),
        r.plan.semaphore_waits(),
        r.ownership_transfers(),
    )
}

fn check(s: &S, what: &str, r: &FrameReport, want: (usize, usize, usize)) {
    assert_eq!(
        facts(r),
        want,
        "{:?}, {what}, frame {}: (batches, waits, transfers)\n{}",
        s.topo,
        r.frame,
        r.plan
    );
}

/// Releases on `from`'s queue and acquires on `to`'s, from `from`'s family to `to`'s.
fn releases_acquires(s: &S, r: &FrameReport, from: usize, to: usize) -> (usize, usize) {
    let fam = (s.family(from), s.family(to));
    let count = |q: usize| {
        let Some(pq) = r.plan_queue(q) else { return 0 };
        r.plan.queues[pq]
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .filter_map(|c| match c {
                vk_baton::plan::Command::Barrier(b) => Some(b),
                _ => None,
            })
            .map(|b| {
                b.images
                    .iter()
                    .filter(|i| i.scopes.families == Some(fam))
                    .count()
                    + b.buffers
                        .iter()
                        .filter(|x| x.scopes.families == Some(fam))
                        .count()
            })
            .sum()
    };
    (count(from), count(to))
}

/// Waits on another queue's batch of this frame, and on values of earlier frames.
fn wait_kinds(r: &FrameReport) -> (usize, usize) {
    let waits = r
        .plan
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

/// A writer on `w` and a reader on `rd` of one resource, repeated: the shape of several tests.
/// Steady state: `w` waits for the previous frame's read (WAR), `rd` for this frame's write.
fn writer_reader_steady(s: &S, w: usize, rd: usize, concurrent: bool) -> (usize, usize, usize) {
    if w == rd {
        (1, 0, 0)
    } else if s.cross(w, rd) && !concurrent {
        (2, 2, 2)
    } else {
        (2, 2, 0)
    }
}

// --- The tests. ------------------------------------------------------------------------------

fn on_every_topology(name: &str, f: impl Fn(Topo) -> usize) {
    let mut frames = 0;
    for t in TOPOLOGIES {
        let n = f(t);
        assert!(n >= FRAMES, "{name}: only {n} frames on {t:?}");
        frames += n;
    }
    println!("{name}: {frames} frames on {} topologies", TOPOLOGIES.len());
}

#[test]
fn maintenance9_keeps_contents_across_families_without_transfers() {
    let frames = kept_contents_and_attachments(Topo::NvidiaMaintenance9);
    assert_eq!(frames, FRAMES);
}

#[test]
fn every_image_use_in_general_layouts() {
    on_every_topology(
        "every image use in GENERAL",
        deferred_frame_in_general_layouts,
    );
}

#[test]
fn unordered_groups_on_two_queues() {
    on_every_topology("unordered groups", groups_on_two_queues);
}

#[test]
fn depth_and_stencil_planes_on_two_queues() {
    on_every_topology("depth and stencil planes", depth_to_compute_stencil_stays);
}

#[test]
fn a_writer_moving_between_queues_is_at_rest_only_where_it_stays() {
    on_every_topology(
        "a writer moving between queues",
        writer_moving_between_queues,
    );
}

#[test]
fn uploaded_once_sampled_every_frame_needs_no_barrier_after_the_first() {
    on_every_topology(
        "uploaded once, sampled every frame",
        uploaded_once_sampled_every_frame,
    );
}

#[test]
fn multi_family_compute_to_graphics_buffer() {
    on_every_topology("compute_to_graphics_buffer_ownership_transfer", |t| {
        compute_to_graphics_buffer(t, false)
    });
}
#[test]
fn multi_family_concurrent_sharing() {
    on_every_topology("concurrent_sharing_needs_no_transfer", |t| {
        compute_to_graphics_buffer(t, true)
    });
}
#[test]
fn multi_family_compute_to_graphics_image() {
    on_every_topology("compute_to_graphics_image_ownership_transfer", |t| {
        draw_download(t, false, 96 * 64 * 4) + draw_download(t, true, 96 * 64 * 4)
    });
}
#[test]
fn multi_family_transfer_to_graphics_upload() {
    on_every_topology("transfer_to_graphics_upload", transfer_to_graphics_upload);
}
#[test]
fn multi_family_ownership_inherited_across_graphs() {
    on_every_topology(
        "ownership_inherited_across_graphs",
        ownership_inherited_across_graphs,
    );
}
#[test]
fn passes_buffer_upload_on_transfer_read_on_graphics() {
    on_every_topology(
        "buffer_upload_on_transfer_family_read_on_graphics",
        buffer_upload_transfer_graphics,
    );
}
#[test]
fn passes_image_upload_and_download_on_transfer() {
    on_every_topology(
        "image_upload_and_download_on_transfer_family",
        image_upload_download_transfer,
    );
}
#[test]
fn passes_present_style_handoff() {
    on_every_topology(
        "present_style_handoff_to_another_family_and_back",
        present_style_handoff,
    );
}
#[test]
fn passes_packed_levels_and_depth_copies() {
    on_every_topology(
        "aligned_packed_levels_and_depth_copies_on_transfer_family",
        packed_levels_and_depth,
    );
}
#[test]
fn scheduled_culled_frames_with_transients() {
    on_every_topology("culled frames with transients", culled_transients);
}
#[test]
fn handoffs_between_frames() {
    on_every_topology("handoffs between frames", handoffs);
}
#[test]
fn sample_headless() {
    on_every_topology("headless", |t| draw_download(t, true, 640 * 400 * 4));
}
#[test]
fn sample_async_compute() {
    on_every_topology("async_compute", |t| async_compute(t, false));
}
#[test]
fn sample_async_compute_exclusive() {
    on_every_topology("async_compute --exclusive", |t| async_compute(t, true));
}
#[test]
fn sample_streaming_upload() {
    on_every_topology("streaming_upload", |t| streaming_upload(t, false));
}
#[test]
fn sample_streaming_upload_concurrent() {
    on_every_topology("streaming_upload --concurrent", |t| {
        streaming_upload(t, true)
    });
}
#[test]
fn sample_streaming_images_with_consumer() {
    on_every_topology("streaming_upload --images", streaming_images);
}
#[test]
fn sample_incremental() {
    on_every_topology("incremental", incremental);
}
#[test]
fn sample_window() {
    on_every_topology("window", window);
}
#[test]
fn sample_deferred() {
    on_every_topology("deferred", |t| deferred(t, 640, 360, 1024, false));
}
#[test]
fn sample_deferred_exclusive() {
    on_every_topology("deferred --exclusive", |t| {
        deferred(t, 640, 360, 1024, true)
    });
}
#[test]
fn sample_deferred_1080p() {
    on_every_topology("deferred --width 1920 --height 1080 --shadow 2048", |t| {
        deferred(t, 1920, 1080, 2048, false)
    });
}
#[test]
fn bench_frame_three_queues_many_buffers() {
    for (buffers, passes) in [(8, 100), (64, 10), (64, 100)] {
        on_every_topology("benches/frame.rs 3 queues", |t| {
            chained_copies_on_three_queues(t, buffers, passes)
        });
    }
}

#[test]
fn maintenance8_waits_before_acquires_at_the_stages_that_use_the_resource() {
    use vk::PipelineStageFlags2 as S;
    let without = waits_around_transfers(Topo::Nvidia);
    let with = waits_around_transfers(Topo::NvidiaMaintenance8);
    // Frame 1 waits on graphics for the write; from frame 2 on, compute also waits for the
    // sampling before writing again: 1 + 2 * 7 waits, the same count both ways.
    assert_eq!((without.len(), with.len()), (15, 15));
    assert!(without.iter().all(|&s| s == S::ALL_COMMANDS), "{without:?}");
    assert!(
        with.iter()
            .all(|&s| s == S::FRAGMENT_SHADER || s == S::COMPUTE_SHADER),
        "{with:?}"
    );
    assert!(with.contains(&S::FRAGMENT_SHADER) && with.contains(&S::COMPUTE_SHADER));
}

#[test]
fn a_handoff_waits_at_all_commands_around_transfers_even_with_maintenance8() {
    let waits = handoff_waits_around_transfers(Topo::NvidiaMaintenance8);
    assert_eq!(waits, [vk::PipelineStageFlags2::ALL_COMMANDS]);
}
