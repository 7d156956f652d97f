//! Random valid graphs for the verifier's property tests: queues of fake families, images and
//! buffers (EXCLUSIVE and CONCURRENT, partial ranges), passes with reads, writes, read-writes,
//! layout changes and discards, swapchain-like images acquired through guarded binary waits and
//! presented through binary signals, over 1 to 3 consecutive graphs.

#![allow(dead_code)]

use vk_baton::access::narrow_stages;
use vk_baton::ash::vk;
use vk_baton::ash::vk::Handle;
use vk_baton::plan::*;
use vk_baton::{Access, BufferRange, ImageRange, SubRange};

/// A tiny deterministic generator (xorshift64*).
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

/// Sizes of one case; proptest shrinks these.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub seed: u64,
    pub graphs: usize,
    pub families: usize,
    pub queues: usize,
    pub resources: usize,
    pub passes: usize,
}

/// The three fake families: graphics+compute(+transfer), compute-only, transfer-only.
pub fn family_caps(f: u32) -> vk::QueueFlags {
    match f {
        0 => vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        1 => vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        _ => vk::QueueFlags::TRANSFER,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Color,
    Depth,
    Swapchain,
    Buffer,
}

const COLOR_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::STORAGE.as_raw()
        | vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::COLOR_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw(),
);
const DEPTH_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::SAMPLED.as_raw()
        | vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw(),
);
const BUFFER_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw()
        | vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_BUFFER.as_raw()
        | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER.as_raw()
        | vk::BufferUsageFlags::VERTEX_BUFFER.as_raw()
        | vk::BufferUsageFlags::INDEX_BUFFER.as_raw()
        | vk::BufferUsageFlags::INDIRECT_BUFFER.as_raw(),
);

/// Accesses valid for a resource kind on a queue with `caps`: (access, pure write that may
/// discard). Drawn from every named access that fits the resource, kept where the library
/// says the queue can perform it: its capability, and at least one of its stages on the
/// queue's family (`narrow_stages`), so a uniform read or indirect arguments also land on
/// compute-only queues (narrowed there) and `GENERAL` on any queue. Host accesses and
/// `PRESENT` are drawn elsewhere or not at all.
fn accesses(kind: Kind, caps: vk::QueueFlags) -> Vec<(Access, bool)> {
    let all: &[(Access, bool)] = match kind {
        Kind::Color => &[
            (Access::TRANSFER_READ, false),
            (Access::TRANSFER_WRITE, true),
            (Access::COMPUTE_SHADER_READ, false),
            (Access::COMPUTE_SHADER_WRITE, true),
            (Access::COMPUTE_SHADER_READ_WRITE, false),
            (Access::COMPUTE_SHADER_SAMPLED_READ, false),
            (Access::GENERAL, false),
            (Access::VERTEX_SHADER_SAMPLED_READ, false),
            (Access::FRAGMENT_SHADER_SAMPLED_READ, false),
            (Access::COLOR_ATTACHMENT_WRITE, true),
            (Access::COLOR_ATTACHMENT_READ_WRITE, false),
        ],
        Kind::Depth => &[
            (Access::TRANSFER_READ, false),
            (Access::TRANSFER_WRITE, true),
            (Access::COMPUTE_SHADER_SAMPLED_READ, false),
            (Access::FRAGMENT_SHADER_SAMPLED_READ, false),
            (Access::DEPTH_ATTACHMENT_READ, false),
            (Access::DEPTH_ATTACHMENT_WRITE, false),
        ],
        Kind::Buffer => &[
            (Access::TRANSFER_READ, false),
            (Access::TRANSFER_WRITE, true),
            (Access::COMPUTE_SHADER_READ, false),
            (Access::COMPUTE_SHADER_WRITE, true),
            (Access::COMPUTE_SHADER_READ_WRITE, false),
            (Access::COMPUTE_SHADER_SAMPLED_READ, false),
            (Access::INDIRECT_BUFFER, false),
            (Access::UNIFORM_READ, false),
            (Access::GENERAL, false),
            (Access::VERTEX_BUFFER, false),
            (Access::INDEX_BUFFER, false),
        ],
        // The first two are what an acquire-draw pass picks from.
        Kind::Swapchain => &[
            (Access::TRANSFER_WRITE, true),
            (Access::COLOR_ATTACHMENT_WRITE, true),
            (Access::COLOR_ATTACHMENT_READ_WRITE, false),
        ],
    };
    all.iter()
        .copied()
        .filter(|(a, _)| caps.contains(a.queue) && !narrow_stages(a.stages, caps).is_empty())
        .collect()
}

fn random_range(rng: &mut Rng, kind: &ResourceKind) -> Option<SubRange> {
    if rng.chance(1, 2) {
        return None;
    }
    match *kind {
        ResourceKind::Image { mips, layers, .. } => {
            let base_mip = rng.below(mips as u64) as u32;
            let mip_count = rng.range(1, (mips - base_mip) as u64) as u32;
            let base_layer = rng.below(layers as u64) as u32;
            let layer_count = rng.range(1, (layers - base_layer) as u64) as u32;
            Some(SubRange::Image(ImageRange {
                base_mip,
                mip_count,
                base_layer,
                layer_count,
            }))
        }
        ResourceKind::Buffer { size, .. } => {
            let chunks = size / 16;
            let start = rng.below(chunks);
            let len = rng.range(1, chunks - start);
            Some(SubRange::Buffer(BufferRange {
                offset: start * 16,
                size: len * 16,
            }))
        }
    }
}

/// The graphs of one case (the first with fresh or handed-over resources; later ones get their
/// initial states from the previous plan).
pub struct Case {
    pub shape: Shape,
    pub queues: Vec<QueueDecl>,
    pub resources: Vec<ResourceDecl>,
    /// Per graph: the passes.
    pub graphs: Vec<Vec<PassDecl>>,
}

pub fn generate(shape: Shape) -> Case {
    let mut rng = Rng::new(shape.seed);
    let queues: Vec<QueueDecl> = (0..shape.queues)
        .map(|i| {
            // The first queue is always graphics so that every case can draw and present.
            let f = if i == 0 {
                0
            } else {
                rng.below(shape.families as u64) as u32
            };
            QueueDecl::new(&format!("q{i}f{f}"), f, family_caps(f))
        })
        .collect();
    let mut kinds = vec![];
    let resources: Vec<ResourceDecl> = (0..shape.resources)
        .map(|i| {
            let kind = match rng.below(8) {
                0..=2 => Kind::Color,
                3 => Kind::Depth,
                4 => Kind::Swapchain,
                _ => Kind::Buffer,
            };
            kinds.push(kind);
            let mut r = match kind {
                Kind::Color => ResourceDecl::image(
                    &format!("img{i}"),
                    rng.range(1, 3) as u32,
                    rng.range(1, 3) as u32,
                    COLOR_USAGE,
                ),
                Kind::Depth => {
                    let mut r = ResourceDecl::image(
                        &format!("depth{i}"),
                        rng.range(1, 2) as u32,
                        rng.range(1, 2) as u32,
                        DEPTH_USAGE,
                    );
                    if let ResourceKind::Image { aspect, .. } = &mut r.kind {
                        *aspect = vk::ImageAspectFlags::DEPTH;
                    }
                    r
                }
                Kind::Swapchain => ResourceDecl::image(
                    &format!("swap{i}"),
                    1,
                    1,
                    vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST,
                ),
                Kind::Buffer => {
                    ResourceDecl::buffer(&format!("buf{i}"), 16 * rng.range(1, 16), BUFFER_USAGE)
                }
            };
            if kind != Kind::Swapchain && rng.chance(1, 3) {
                r = r.concurrent();
            }
            // Sometimes the app hands the resource over, written on queue 0.
            if kind != Kind::Swapchain && rng.chance(1, 5) {
                let (layout, stages, access) = match kind {
                    Kind::Buffer => (
                        vk::ImageLayout::UNDEFINED,
                        vk::PipelineStageFlags2::ALL_TRANSFER,
                        vk::AccessFlags2::TRANSFER_WRITE,
                    ),
                    _ => (
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        vk::PipelineStageFlags2::ALL_TRANSFER,
                        vk::AccessFlags2::TRANSFER_WRITE,
                    ),
                };
                let owner = (!r.concurrent).then_some(queues[0].family);
                r = r.with_state(SegmentState::handed_over(
                    layout,
                    owner,
                    Some((0usize, stages, access)),
                ));
            }
            r
        })
        .collect();
    let mut sem = 1u64;
    let mut graphs = vec![];
    for _ in 0..shape.graphs {
        let n = shape.passes;
        let mut passes: Vec<PassDecl> = vec![];
        for p in 0..n {
            let q = rng.below(queues.len() as u64) as usize;
            let caps = queues[q].caps;
            let mut pass = PassDecl::new(&format!("p{p}"), q);
            let uses = rng.range(1, 3);
            let mut taken = vec![];
            for _ in 0..uses {
                let r = rng.below(resources.len() as u64) as usize;
                if taken.contains(&r) || kinds[r] == Kind::Swapchain {
                    continue;
                }
                taken.push(r);
                let (access, may_discard) = rng.pick(&accesses(kinds[r], caps));
                let mut u = UseDecl::new(r, access);
                if let Some(range) = random_range(&mut rng, &resources[r].kind) {
                    u = u.range(range);
                }
                if may_discard && rng.chance(1, 3) {
                    u = u.discard();
                }
                pass = pass.with_use(u);
            }
            if pass.uses.is_empty() {
                continue;
            }
            passes.push(pass);
        }
        // Swapchain images: acquire (guarded binary wait) on a graphics queue, draw or copy,
        // then present (binary signal) as the last use in this graph.
        for (r, k) in kinds.iter().enumerate() {
            if *k != Kind::Swapchain || !rng.chance(2, 3) || passes.is_empty() {
                continue;
            }
            let gq: Vec<usize> = (0..queues.len())
                .filter(|&q| queues[q].family == 0)
                .collect();
            let q = rng.pick(&gq);
            let at = rng.below(passes.len() as u64 + 1) as usize;
            let acquire = vk::Semaphore::from_raw(sem);
            let present = vk::Semaphore::from_raw(sem + 1);
            sem += 2;
            let (access, _) = rng.pick(&accesses(Kind::Swapchain, queues[q].caps)[..2]);
            let draw = PassDecl::new(&format!("acquire-draw{r}"), q)
                .with_use(UseDecl::new(r, access).discard())
                .with_wait(BinaryWaitDecl {
                    semaphore: acquire,
                    guards: vec![r],
                    stages: None,
                });
            passes.insert(at, draw);
            let after = rng.range(at as u64 + 1, passes.len() as u64) as usize;
            let pq = rng.pick(&gq);
            let pres = PassDecl::new(&format!("present{r}"), pq)
                .with_use(UseDecl::new(r, Access::PRESENT))
                .with_signal(BinarySignalDecl {
                    semaphore: present,
                    stages: None,
                });
            passes.insert(after, pres);
        }
        for (i, p) in passes.iter_mut().enumerate() {
            p.name = format!("{}#{i}", p.name);
        }
        graphs.push(passes);
    }
    Case {
        shape,
        queues,
        resources,
        graphs,
    }
}

/// One planned graph and its values.
pub struct Planned {
    pub plan: Plan,
    pub values: TimelineValues,
}

/// Plans every graph of the case in turn, feeding final states forward.
pub fn plan_case(case: &Case) -> Result<Vec<Planned>, String> {
    let mut resources = case.resources.clone();
    let mut last = vec![0u64; case.queues.len()];
    let mut out = vec![];
    for (g, passes) in case.graphs.iter().enumerate() {
        let input = PlanInput {
            queues: case.queues.clone(),
            resources: resources.clone(),
            passes: passes.clone(),
        };
        let plan = plan(&input)
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
