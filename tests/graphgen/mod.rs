//! Random valid graphs for the verifier's property tests, as proptest strategies: queues of
//! fake families (graphics+compute+transfer, compute+transfer, transfer-only; sometimes two
//! queues of one family), images and buffers (EXCLUSIVE and CONCURRENT, mips and layers, partial
//! ranges, trimmed usage), passes with reads, writes, read-writes, layout changes and discards,
//! swapchain-like images acquired through guarded binary waits and presented through binary
//! signals, transients (first written whole in each graph, placed and aliased by the planner),
//! over 1 to 3 consecutive graphs whose timelines start at drawn values.
//!
//! The strategy draws the graph's own parts (a list of passes, each a list of uses, each an
//! index into the resources and into the accesses that fit), and `build.rs` turns them into a
//! valid [`Case`] whatever they are. So when a case fails, proptest shrinks it by dropping
//! graphs, passes, uses and resources and by moving indices towards 0, and reports a small graph.

#![allow(dead_code)]

mod build;
mod draw;
pub mod model;
pub mod scheduled;
mod show;

pub use draw::cases;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::ops::RangeInclusive;
use vk_baton::ash::vk;
use vk_baton::plan::*;
use vk_baton::{Access, SubRange};

/// A tiny deterministic generator (xorshift64*), for tests that draw shapes from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn range(&mut self, lo: u64, hi_incl: u64) -> u64 {
        lo + self.below(hi_incl - lo + 1)
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Exact sizes of one case, drawn from `seed` (for [`generate`]).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub seed: u64,
    pub graphs: usize,
    pub families: usize,
    pub queues: usize,
    pub resources: usize,
    pub passes: usize,
}

/// Size bounds for [`cases`].
#[derive(Clone, Debug)]
pub struct Sizes {
    pub graphs: RangeInclusive<usize>,
    /// Queue families (1 to 3).
    pub families: RangeInclusive<usize>,
    /// Queues (at least 1; the first is on family 0).
    pub queues: RangeInclusive<usize>,
    pub resources: RangeInclusive<usize>,
    /// Passes drawn per graph, before swapchain passes are added.
    pub passes: RangeInclusive<usize>,
    /// Whether images and buffers may be transient (drawn last, so the rest of a case is the
    /// same either way).
    pub transients: bool,
}

impl Sizes {
    /// The random suite's bounds.
    pub fn suite() -> Self {
        Sizes {
            graphs: 1..=3,
            families: 1..=3,
            queues: 1..=4,
            resources: 1..=16,
            passes: 1..=64,
            transients: true,
        }
    }
    fn exactly(s: &Shape) -> Self {
        Sizes {
            graphs: s.graphs..=s.graphs,
            families: s.families..=s.families,
            queues: s.queues..=s.queues,
            resources: s.resources..=s.resources,
            passes: s.passes..=s.passes,
            transients: false,
        }
    }
}

pub const GRAPHICS_COMPUTE_TRANSFER: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);
pub const COMPUTE_TRANSFER: vk::QueueFlags =
    vk::QueueFlags::from_raw(vk::QueueFlags::COMPUTE.as_raw() | vk::QueueFlags::TRANSFER.as_raw());
pub const TRANSFER_ONLY: vk::QueueFlags = vk::QueueFlags::TRANSFER;

/// Family 0 of every case: graphics+compute+transfer.
pub fn family_caps(f: u32) -> vk::QueueFlags {
    match f {
        0 => GRAPHICS_COMPUTE_TRANSFER,
        1 => COMPUTE_TRANSFER,
        _ => TRANSFER_ONLY,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Color,
    Depth,
    Swapchain,
    Buffer,
}

/// Usage flags each kind may be created with; a resource drops some of them.
const COLOR_USAGE: [vk::ImageUsageFlags; 5] = [
    vk::ImageUsageFlags::STORAGE,
    vk::ImageUsageFlags::SAMPLED,
    vk::ImageUsageFlags::COLOR_ATTACHMENT,
    vk::ImageUsageFlags::TRANSFER_SRC,
    vk::ImageUsageFlags::TRANSFER_DST,
];
const DEPTH_USAGE: [vk::ImageUsageFlags; 4] = [
    vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
    vk::ImageUsageFlags::SAMPLED,
    vk::ImageUsageFlags::TRANSFER_SRC,
    vk::ImageUsageFlags::TRANSFER_DST,
];
const SWAPCHAIN_USAGE: [vk::ImageUsageFlags; 2] = [
    vk::ImageUsageFlags::COLOR_ATTACHMENT,
    vk::ImageUsageFlags::TRANSFER_DST,
];
const BUFFER_USAGE: [vk::BufferUsageFlags; 8] = [
    vk::BufferUsageFlags::TRANSFER_SRC,
    vk::BufferUsageFlags::TRANSFER_DST,
    vk::BufferUsageFlags::STORAGE_BUFFER,
    vk::BufferUsageFlags::UNIFORM_BUFFER,
    vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
    vk::BufferUsageFlags::VERTEX_BUFFER,
    vk::BufferUsageFlags::INDEX_BUFFER,
    vk::BufferUsageFlags::INDIRECT_BUFFER,
];

/// The named accesses the generator draws: (name, access, a pure write that may discard, the
/// kinds it applies to). HOST_READ/HOST_WRITE and PRESENT are not drawn here (PRESENT only
/// ends a swapchain image's use in [`build`]).
pub const DRAWN: &[(&str, Access, bool, &[Kind])] = {
    use Kind::*;
    &[
        (
            "TRANSFER_READ",
            Access::TRANSFER_READ,
            false,
            &[Color, Depth, Buffer],
        ),
        (
            "TRANSFER_WRITE",
            Access::TRANSFER_WRITE,
            true,
            &[Color, Depth, Buffer, Swapchain],
        ),
        (
            "COMPUTE_SHADER_READ",
            Access::COMPUTE_SHADER_READ,
            false,
            &[Color, Buffer],
        ),
        (
            "COMPUTE_SHADER_WRITE",
            Access::COMPUTE_SHADER_WRITE,
            true,
            &[Color, Buffer],
        ),
        (
            "COMPUTE_SHADER_READ_WRITE",
            Access::COMPUTE_SHADER_READ_WRITE,
            false,
            &[Color, Buffer],
        ),
        (
            "COMPUTE_SHADER_SAMPLED_READ",
            Access::COMPUTE_SHADER_SAMPLED_READ,
            false,
            &[Color, Depth, Buffer],
        ),
        (
            "VERTEX_SHADER_SAMPLED_READ",
            Access::VERTEX_SHADER_SAMPLED_READ,
            false,
            &[Color, Buffer],
        ),
        (
            "FRAGMENT_SHADER_SAMPLED_READ",
            Access::FRAGMENT_SHADER_SAMPLED_READ,
            false,
            &[Color, Depth, Buffer],
        ),
        (
            "COLOR_ATTACHMENT_WRITE",
            Access::COLOR_ATTACHMENT_WRITE,
            true,
            &[Color, Swapchain],
        ),
        (
            "COLOR_ATTACHMENT_READ_WRITE",
            Access::COLOR_ATTACHMENT_READ_WRITE,
            false,
            &[Color, Swapchain],
        ),
        (
            "DEPTH_ATTACHMENT_READ",
            Access::DEPTH_ATTACHMENT_READ,
            false,
            &[Depth],
        ),
        (
            "DEPTH_ATTACHMENT_WRITE",
            Access::DEPTH_ATTACHMENT_WRITE,
            false,
            &[Depth],
        ),
        ("VERTEX_BUFFER", Access::VERTEX_BUFFER, false, &[Buffer]),
        ("INDEX_BUFFER", Access::INDEX_BUFFER, false, &[Buffer]),
        ("INDIRECT_BUFFER", Access::INDIRECT_BUFFER, false, &[Buffer]),
        ("UNIFORM_READ", Access::UNIFORM_READ, false, &[Buffer]),
        ("GENERAL", Access::GENERAL, false, &[Color, Buffer]),
    ]
};

/// The accesses a pass on a queue with `caps` may make to a resource of `kind` created with
/// `usage`: (access, a pure write that may discard). The one place accesses are chosen per queue.
pub fn accesses(kind: Kind, caps: vk::QueueFlags, usage: Usage) -> Vec<(Access, bool)> {
    DRAWN
        .iter()
        .filter(|(_, a, _, kinds)| {
            kinds.contains(&kind)
                // The library's rule: the command's queue requirement and at least one stage
                // on this family; the planner narrows the rest away (a uniform read on a
                // compute-only queue is a compute read).
                && a.runs_on(caps)
                && match usage {
                    Usage::Image(u) => u.contains(a.image_usage),
                    Usage::Buffer(u) => u.contains(a.buffer_usage),
                }
        })
        .map(|&(_, a, discard, _)| (a, discard))
        .collect()
}

#[derive(Clone, Copy, Debug)]
pub enum Usage {
    Image(vk::ImageUsageFlags),
    Buffer(vk::BufferUsageFlags),
}

pub fn usage_of(kind: &ResourceKind) -> Usage {
    match *kind {
        ResourceKind::Image { usage, .. } => Usage::Image(usage),
        ResourceKind::Buffer { usage, .. } => Usage::Buffer(usage),
    }
}

/// One case drawn deterministically from `shape.seed`, with exactly `shape`'s sizes.
pub fn generate(shape: Shape) -> Case {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&shape.seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    cases(&Sizes::exactly(&shape))
        .new_tree(&mut runner)
        .expect("the case strategy never rejects")
        .current()
}

/// The graphs of one case (the first with fresh or handed-over resources; later ones get their
/// initial states from the previous plan). `Debug` prints it compactly (see `show.rs`).
#[derive(Clone)]
pub struct Case {
    pub queues: Vec<QueueDecl>,
    pub resources: Vec<ResourceDecl>,
    /// Per queue: its timeline's value before the first graph.
    pub start: Vec<u64>,
    /// Per graph: the passes.
    pub graphs: Vec<Vec<PassDecl>>,
}

/// One planned graph and the values the executor assigns it.
pub struct Planned {
    pub plan: Plan,
    /// `values.start`: each queue's timeline value before this graph.
    pub values: TimelineValues,
}

/// Plans every graph of the case in turn, feeding final states and timeline values forward.
pub fn plan_case(case: &Case) -> Result<Vec<Planned>, String> {
    plan_case_with(case, Schedule::PROGRAM_ORDER)
}

/// [`plan_case`], each graph planned with `schedule`.
pub fn plan_case_with(case: &Case, schedule: Schedule) -> Result<Vec<Planned>, String> {
    let mut resources = case.resources.clone();
    let mut last = case.start.clone();
    let mut out = vec![];
    for (g, passes) in case.graphs.iter().enumerate() {
        let input = PlanInput {
            queues: case.queues.clone(),
            resources: resources.clone(),
            passes: passes.clone(),
        };
        let plan = plan_scheduled(&input, schedule)
            .map_err(|e| format!("graph {g}: planning failed: {e}\ninput: {input:#?}"))?;
        stages_fit(&plan).map_err(|e| format!("graph {g}: {e}\n{plan}"))?;
        let values = plan.assign_values(&mut last);
        for (r, s) in resources
            .iter_mut()
            .zip(plan.resolved_final_states(&values))
        {
            r.initial = s;
        }
        out.push(Planned { plan, values });
    }
    Ok(out)
}

/// Every stage mask of `plan` (barriers, waits, signals) holds only stages its queue's
/// family supports.
pub fn stages_fit(plan: &Plan) -> Result<(), String> {
    for (qp, q) in plan.queues.iter().zip(&plan.input.queues) {
        let ok = vk_baton::access::supported_stages(q.caps);
        let mut masks = vec![];
        for b in &qp.batches {
            masks.extend(b.waits.iter().map(|w| w.stages));
            masks.extend(b.signal);
            masks.extend(b.binary_signals.iter().map(|s| s.1));
            for c in &b.commands {
                if let Command::Barrier(cmd) = c {
                    let scopes = cmd.images.iter().map(|b| b.scopes);
                    for s in scopes.chain(cmd.buffers.iter().map(|b| b.scopes)) {
                        masks.extend([s.src_stages, s.dst_stages]);
                    }
                }
            }
        }
        if let Some(m) = masks.into_iter().find(|m| !ok.contains(*m)) {
            return Err(format!("stages {m:?} on queue `{}` ({:?})", q.name, q.caps));
        }
    }
    Ok(())
}

/// Verifies all graphs of a planned case together.
pub fn verify_all(planned: &[Planned]) -> Result<(), Vec<vk_baton::verify::Violation>> {
    let execs: Vec<(&Plan, &TimelineValues)> =
        planned.iter().map(|p| (&p.plan, &p.values)).collect();
    vk_baton::verify::verify(&execs)
}

/// Verifies each graph alone, as `GraphBuilder::finish()` does: from the timeline values the
/// queues had reached before it. On failure: the graph's index and its violations.
pub fn verify_each_alone(
    planned: &[Planned],
) -> Result<(), (usize, Vec<vk_baton::verify::Violation>)> {
    for (g, p) in planned.iter().enumerate() {
        p.plan.verify_from(&p.values.start).map_err(|v| (g, v))?;
    }
    Ok(())
}
