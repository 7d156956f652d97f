//! Turns what the strategy drew into a valid case: indices pick among the queues, resources
//! and the accesses that fit (see [`super::accesses`]), and uses that the planner would refuse
//! together are left out.

use super::draw::{CaseDraw, ResourceDraw};
use super::*;
use proptest::sample::Index;
use vk_baton::ash::vk::Handle;
use vk_baton::{BufferRange, ImageRange};

fn range_of(kind: &ResourceKind, draw: &Option<[Index; 4]>) -> Option<SubRange> {
    let [a, b, c, d] = draw.as_ref()?;
    Some(match *kind {
        ResourceKind::Image { mips, layers, .. } => {
            let base_mip = a.index(mips as usize) as u32;
            let base_layer = c.index(layers as usize) as u32;
            SubRange::Image(ImageRange {
                base_mip,
                mip_count: 1 + b.index((mips - base_mip) as usize) as u32,
                base_layer,
                layer_count: 1 + d.index((layers - base_layer) as usize) as u32,
            })
        }
        ResourceKind::Buffer { size, .. } => {
            let chunks = size / 16;
            let start = a.index(chunks as usize) as u64;
            SubRange::Buffer(BufferRange {
                offset: start * 16,
                size: 16 * (1 + b.index((chunks - start) as usize) as u64),
            })
        }
    })
}

const DEPTH_STENCIL: vk::ImageAspectFlags = vk::ImageAspectFlags::from_raw(
    vk::ImageAspectFlags::DEPTH.as_raw() | vk::ImageAspectFlags::STENCIL.as_raw(),
);

/// What a use of an image with depth and stencil names: every aspect, depth, stencil.
const ASPECTS: [vk::ImageAspectFlags; 3] = [
    vk::ImageAspectFlags::empty(),
    vk::ImageAspectFlags::DEPTH,
    vk::ImageAspectFlags::STENCIL,
];

/// The aspect a use names alone (DEPTH or STENCIL of an image with both), or `None`.
fn plane(res: &ResourceDecl, u: &UseDecl) -> Option<vk::ImageAspectFlags> {
    let two = matches!(res.kind, ResourceKind::Image { aspect, .. } if aspect == DEPTH_STENCIL);
    (two && !u.aspect.is_empty() && u.aspect != DEPTH_STENCIL).then_some(u.aspect)
}

/// Whether two uses of one resource in one pass are allowed together (the planner's rule:
/// overlapping uses must both read, and of an image in one layout; uses of the two aspects of
/// a depth/stencil image apart never overlap, and each takes its aspect's layout).
fn compatible(res: &ResourceDecl, a: &UseDecl, b: &UseDecl) -> bool {
    let whole = res.kind.whole();
    let (pa, pb) = (plane(res, a), plane(res, b));
    let planes_meet = pa.is_none() || pb.is_none() || pa == pb;
    let overlap = planes_meet
        && match (a.range.unwrap_or(whole), b.range.unwrap_or(whole)) {
            (SubRange::Image(x), SubRange::Image(y)) => x.overlaps(&y),
            (SubRange::Buffer(x), SubRange::Buffer(y)) => x.overlaps(&y),
            _ => true,
        };
    let layout = |u: &UseDecl, p: Option<vk::ImageAspectFlags>| match p {
        Some(aspect) => u.access.layout_in(aspect),
        None => u.access.layout,
    };
    let is_image = matches!(res.kind, ResourceKind::Image { .. });
    !overlap
        || !(a.access.is_write()
            || b.access.is_write()
            || (is_image && layout(a, pa) != layout(b, pb)))
}

/// The memory of transient `i` of `kind`: a few KiB, of one of three overlapping sets of
/// memory types, on a device whose bufferImageGranularity is 1 KiB.
fn transient_memory(i: usize, kind: &ResourceKind, chunks: u64) -> TransientMemory {
    let types = [0b011, 0b110, 0b010][i % 3];
    match *kind {
        ResourceKind::Image { mips, layers, .. } => {
            let size = 4096 * (mips * layers) as u64 + 256 * chunks;
            TransientMemory::image(size, 4096, types)
        }
        ResourceKind::Buffer { size, .. } => TransientMemory::buffer(size, 64, types),
    }
    .with_granularity(1024)
}

fn resource(i: usize, d: &ResourceDraw, queues: &[QueueDecl], transient: bool) -> ResourceDecl {
    let kept = |n: usize| (0..n).filter(|b| d.usage_dropped & (1 << b) == 0);
    let image_usage = |flags: &[vk::ImageUsageFlags]| {
        let u = kept(flags.len()).fold(vk::ImageUsageFlags::empty(), |u, b| u | flags[b]);
        if u.is_empty() {
            flags[0]
        } else {
            u
        }
    };
    let mut r = match d.kind {
        Kind::Color => ResourceDecl::image(
            &format!("img{i}"),
            d.mips,
            d.layers,
            image_usage(&COLOR_USAGE),
        ),
        Kind::Depth => ResourceDecl::image(
            &format!("depth{i}"),
            d.mips,
            d.layers,
            image_usage(&DEPTH_USAGE),
        )
        // Half the depth images (by their otherwise unused buffer size) have stencil too.
        .aspect(if d.chunks % 2 == 0 {
            DEPTH_STENCIL
        } else {
            vk::ImageAspectFlags::DEPTH
        }),
        Kind::Swapchain => ResourceDecl::image(
            &format!("swap{i}"),
            1,
            1,
            SWAPCHAIN_USAGE[0] | SWAPCHAIN_USAGE[1],
        ),
        Kind::Buffer => {
            let u = kept(BUFFER_USAGE.len())
                .fold(vk::BufferUsageFlags::empty(), |u, b| u | BUFFER_USAGE[b]);
            let u = if u.is_empty() { BUFFER_USAGE[0] } else { u };
            ResourceDecl::buffer(&format!("buf{i}"), 16 * d.chunks, u)
        }
    };
    if d.kind == Kind::Swapchain {
        return r;
    }
    if d.concurrent {
        r = r.concurrent();
    }
    if transient && d.handed_over.is_none() {
        let memory = transient_memory(i, &r.kind, d.chunks);
        return r.transient(memory);
    }
    if let Some(q) = &d.handed_over {
        // The app wrote it with a copy on queue `q` and hands it over.
        let q = q.index(queues.len());
        let layout = match d.kind {
            Kind::Buffer => vk::ImageLayout::UNDEFINED,
            _ => vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        };
        let owner = (!r.concurrent).then_some(queues[q].family);
        r = r.with_state(SegmentState::handed_over(
            layout,
            owner,
            Some((
                q,
                vk::PipelineStageFlags2::ALL_TRANSFER,
                vk::AccessFlags2::TRANSFER_WRITE,
            )),
        ));
    }
    r
}

pub(super) fn build(d: &CaseDraw) -> Case {
    let mut families = vec![GRAPHICS_COMPUTE_TRANSFER];
    families.extend(&d.other_families);
    let mut queue_family = vec![0u32];
    queue_family.extend(
        d.other_queues
            .iter()
            .map(|i| i.index(families.len()) as u32),
    );
    let queues: Vec<QueueDecl> = queue_family
        .iter()
        .enumerate()
        .map(|(i, &f)| QueueDecl::new(&format!("q{i}f{f}"), f, families[f as usize]))
        .collect();
    let kinds: Vec<Kind> = d.resources.iter().map(|r| r.kind).collect();
    let resources: Vec<ResourceDecl> = d
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let transient = !d.transient.is_empty() && d.transient[i % d.transient.len()];
            resource(i, r, &queues, transient)
        })
        .collect();
    let graphics: Vec<usize> = (0..queues.len())
        .filter(|&q| queues[q].caps.contains(vk::QueueFlags::GRAPHICS))
        .collect();
    let mut semaphore = 1u64;
    let mut graphs = vec![];
    for (gi, g) in d.graphs.iter().enumerate() {
        let mut passes: Vec<PassDecl> = vec![];
        // Transients written so far in this graph: a transient's first use writes all of it.
        let mut written = vec![false; resources.len()];
        for (p, pd) in g.passes.iter().enumerate() {
            let q = pd.queue.index(queues.len());
            // Now and then a pass with no uses (a timestamp, say) before it, on its queue: a
            // wait that pass needs may join its batch.
            if (p + gi) % 6 == 0 {
                passes.push(PassDecl::new(&format!("stamp{p}"), q));
            }
            let mut pass = PassDecl::new(&format!("p{p}"), q);
            for ud in &pd.uses {
                let r = ud.resource.index(resources.len());
                if kinds[r] == Kind::Swapchain {
                    continue;
                }
                let choices = accesses(kinds[r], queues[q].caps, usage_of(&resources[r].kind));
                if choices.is_empty() {
                    continue;
                }
                let first_of_transient = resources[r].transient.is_some() && !written[r];
                let u = if first_of_transient {
                    // A whole-range pure write, or no use at all.
                    let writes: Vec<Access> = choices.iter().filter(|c| c.1).map(|c| c.0).collect();
                    if writes.is_empty() {
                        continue;
                    }
                    UseDecl::new(r, writes[ud.access.index(writes.len())]).discard()
                } else {
                    // The access, and in the index's finer digits which aspects of an image
                    // with depth and stencil (`index(3n) / 3 == index(n)`: the access drawn
                    // is the same as without aspects).
                    let k = ud.access.index(3 * choices.len());
                    let (access, may_discard) = choices[k / 3];
                    let mut u = UseDecl::new(r, access);
                    if let Some(range) = range_of(&resources[r].kind, &ud.range) {
                        u = u.range(range);
                    }
                    if may_discard && ud.discard {
                        u = u.discard();
                    }
                    let two = matches!(resources[r].kind,
                        ResourceKind::Image { aspect, .. } if aspect == DEPTH_STENCIL);
                    if two {
                        u = u.aspect(ASPECTS[k % 3]);
                    }
                    u
                };
                let clash = pass
                    .uses
                    .iter()
                    .any(|v| v.resource == r && !compatible(&resources[r], v, &u));
                if !clash {
                    written[r] = true;
                    pass = pass.with_use(u);
                }
            }
            if !pass.uses.is_empty() {
                passes.push(pass);
            }
        }
        // Swapchain images: acquire (guarded binary wait) on a graphics queue, draw or copy,
        // then present (binary signal) as the last use in this graph.
        for (r, k) in kinds.iter().enumerate() {
            let Some(s) = &g.swaps[r % g.swaps.len()] else {
                continue;
            };
            if *k != Kind::Swapchain || passes.is_empty() {
                continue;
            }
            let q = graphics[s.draw_queue.index(graphics.len())];
            let at = s.draw_at.index(passes.len() + 1);
            let acquire = vk::Semaphore::from_raw(semaphore);
            let present = vk::Semaphore::from_raw(semaphore + 1);
            semaphore += 2;
            let choices = accesses(
                Kind::Swapchain,
                queues[q].caps,
                usage_of(&resources[r].kind),
            );
            let (access, _) = choices[s.access.index(choices.len())];
            let wait = BinaryWaitDecl {
                semaphore: acquire,
                guards: vec![r],
                stages: None,
            };
            let draw = PassDecl::new(&format!("acquire-draw{r}"), q)
                .with_use(UseDecl::new(r, access).discard());
            // Every other image is acquired by a pass of its own with no uses, on any queue:
            // the draw waits for that pass, which no wait may then go before.
            let at = if r % 2 == 1 {
                let aq = s.draw_queue.index(queues.len());
                passes.insert(
                    at,
                    PassDecl::new(&format!("acquire{r}"), aq).with_wait(wait),
                );
                passes.insert(at + 1, draw);
                at + 1
            } else {
                passes.insert(at, draw.with_wait(wait));
                at
            };
            let after = at + 1 + s.present_after.index(passes.len() - at);
            let pq = graphics[s.present_queue.index(graphics.len())];
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
    let start = (0..queues.len())
        .map(|q| d.start[q % d.start.len()])
        .collect();
    Case {
        queues,
        resources,
        start,
        graphs,
    }
}
