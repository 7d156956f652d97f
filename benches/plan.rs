//! Planning plus recording cost of a graph, against a hand-written ash recording of the same
//! barriers and commands, measured side by side in one run.
//!
//! Synthetic graphs of 10, 100 and 1000 passes on 1 and 3 queues. Each pass clears or fills
//! one resource (8 images and 8 buffers in rotation) and reads another, so most pass
//! boundaries need a barrier and, on 3 queues, many need semaphores and ownership transfers.
//!
//! - `graph`: declare the passes, snapshot states, plan, and record every batch's command
//!   buffer (barriers, debug labels, the passes' commands). No submit.
//! - `hand`: record the identical barriers and commands with raw ash into command buffers
//!   allocated up front, the way a hand-written renderer would. No submit.
//!
//! Run: `cargo bench --bench plan`. The ratio `graph / hand` is what to quote; absolute
//! times mean something only on a real GPU machine.

use ash::vk;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::sync::Arc;
use vk_baton::plan::{Command, Plan};
use vk_baton::{Access, BufferDesc, Declare, ImageDesc, Pass, Queue, Recorder, StBuffer, StImage};
use vk_baton_context::{Context, ContextOptions};

#[derive(Clone)]
enum Res {
    Image(Arc<StImage>),
    Buffer(Arc<StBuffer>),
}

/// Writes one resource (clear or fill) and reads another.
struct Synth {
    write: Res,
    read: Res,
}

impl Pass for Synth {
    fn declare(&self, d: &mut Declare<'_>) {
        match &self.write {
            Res::Image(i) => {
                d.uses(i, Access::TRANSFER_WRITE);
            }
            Res::Buffer(b) => {
                d.uses(b, Access::TRANSFER_WRITE);
            }
        }
        match &self.read {
            Res::Image(i) => {
                d.uses(i, Access::TRANSFER_READ);
            }
            Res::Buffer(b) => {
                d.uses(b, Access::TRANSFER_READ);
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        record_write(r.device(), r.cmd(), &self.write);
        Ok(())
    }
}

fn record_write(device: &ash::Device, cmd: vk::CommandBuffer, res: &Res) {
    match res {
        Res::Image(i) => {
            let range = vk::ImageSubresourceRange::default()
                .aspect_mask(vk::ImageAspectFlags::COLOR)
                .level_count(1)
                .layer_count(1);
            // SAFETY: `cmd` is recording and the image is alive; the barrier before put it in
            // TRANSFER_DST_OPTIMAL.
            unsafe {
                device.cmd_clear_color_image(
                    cmd,
                    i.handle(),
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &vk::ClearColorValue { float32: [0.5; 4] },
                    &[range],
                )
            };
        }
        // SAFETY: `cmd` is recording and the buffer is alive.
        Res::Buffer(b) => unsafe { device.cmd_fill_buffer(cmd, b.handle(), 0, vk::WHOLE_SIZE, 7) },
    }
}

struct Setup {
    ctx: Context,
    resources: Vec<Res>,
}

fn setup() -> Setup {
    let ctx = Context::with_options(ContextOptions {
        validation: false,
        ..Default::default()
    })
    .expect("a Vulkan device");
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let mut resources = Vec::new();
    for i in 0..8 {
        let img = ctx
            .image(
                ImageDesc::new_2d(64, 64, vk::Format::R8G8B8A8_UNORM, usage),
                &format!("img{i}"),
            )
            .expect("image");
        resources.push(Res::Image(img));
        let buf = ctx
            .buffer(
                BufferDesc::new(
                    4096,
                    vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                ),
                &format!("buf{i}"),
            )
            .expect("buffer");
        resources.push(Res::Buffer(buf));
    }
    Setup { ctx, resources }
}

fn passes(s: &Setup, n: usize) -> Vec<Synth> {
    let k = s.resources.len();
    (0..n)
        .map(|i| Synth {
            write: s.resources[i % k].clone(),
            read: s.resources[(i + 5) % k].clone(),
        })
        .collect()
}

fn queues(ctx: &Context, count: usize) -> Vec<Queue> {
    if count == 1 {
        vec![ctx.graphics().clone()]
    } else {
        vec![
            ctx.graphics().clone(),
            ctx.async_compute().clone(),
            ctx.transfer().clone(),
        ]
    }
}

fn plan_once(s: &Setup, graph: &vk_baton::Graph, ps: &mut [Synth], qs: &[Queue]) -> Plan {
    let mut b = graph.record();
    for (i, p) in ps.iter_mut().enumerate() {
        b = b.insert_pass("synth", p, &qs[i % qs.len()]);
    }
    let _ = s;
    b.finish().expect("plan").plan().clone()
}

/// The hand-written side: the plan's barriers as ready-made ash structs, per queue and batch.
struct HandRecording {
    /// (family, batches: commands as either barrier structs or a pass index)
    queues: Vec<(u32, Vec<Vec<HandCmd>>)>,
}

enum HandCmd {
    Barrier(
        Vec<vk::ImageMemoryBarrier2<'static>>,
        Vec<vk::BufferMemoryBarrier2<'static>>,
    ),
    Pass(usize),
}

fn hand_recording(plan: &Plan, qs: &[Queue], planned_resources: &[Res]) -> HandRecording {
    let fam =
        |f: Option<(u32, u32)>| f.unwrap_or((vk::QUEUE_FAMILY_IGNORED, vk::QUEUE_FAMILY_IGNORED));
    let mut queues = Vec::new();
    for (qi, qp) in plan.queues.iter().enumerate() {
        let family = plan.input.queues[qi].family;
        let _ = qs;
        let mut batches = Vec::new();
        for b in &qp.batches {
            let mut cmds = Vec::new();
            for c in &b.commands {
                match c {
                    Command::Pass(i) => cmds.push(HandCmd::Pass(*i)),
                    Command::Barrier(bar) => {
                        let images = bar
                            .images
                            .iter()
                            .map(|ib| {
                                let Res::Image(img) = &planned_resources[ib.resource] else {
                                    unreachable!()
                                };
                                let (s, d) = fam(ib.scopes.families);
                                vk::ImageMemoryBarrier2::default()
                                    .src_stage_mask(ib.scopes.src_stages)
                                    .src_access_mask(ib.scopes.src_access)
                                    .dst_stage_mask(ib.scopes.dst_stages)
                                    .dst_access_mask(ib.scopes.dst_access)
                                    .old_layout(ib.old_layout)
                                    .new_layout(ib.new_layout)
                                    .src_queue_family_index(s)
                                    .dst_queue_family_index(d)
                                    .image(img.handle())
                                    .subresource_range(ib.range.to_vk(vk::ImageAspectFlags::COLOR))
                            })
                            .collect();
                        let buffers = bar
                            .buffers
                            .iter()
                            .map(|bb| {
                                let Res::Buffer(buf) = &planned_resources[bb.resource] else {
                                    unreachable!()
                                };
                                let (s, d) = fam(bb.scopes.families);
                                vk::BufferMemoryBarrier2::default()
                                    .src_stage_mask(bb.scopes.src_stages)
                                    .src_access_mask(bb.scopes.src_access)
                                    .dst_stage_mask(bb.scopes.dst_stages)
                                    .dst_access_mask(bb.scopes.dst_access)
                                    .src_queue_family_index(s)
                                    .dst_queue_family_index(d)
                                    .buffer(buf.handle())
                                    .offset(bb.range.offset)
                                    .size(bb.range.size)
                            })
                            .collect();
                        cmds.push(HandCmd::Barrier(images, buffers));
                    }
                }
            }
            batches.push(cmds);
        }
        queues.push((family, batches));
    }
    HandRecording { queues }
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let graph = s.ctx.graph().expect("graph");
    println!("device: {}", s.ctx.device_name());
    let mut group = c.benchmark_group("plan+record");
    for &qcount in &[1usize, 3] {
        let qs = queues(&s.ctx, qcount);
        for &n in &[10usize, 100, 1000] {
            let mut ps = passes(&s, n);
            let id = format!("{n} passes, {qcount} queues");
            group.bench_function(BenchmarkId::new("graph", &id), |b| {
                b.iter(|| {
                    let mut builder = graph.record();
                    for (i, p) in ps.iter_mut().enumerate() {
                        builder = builder.insert_pass("synth", p, &qs[i % qs.len()]);
                    }
                    builder
                        .finish()
                        .expect("plan")
                        .record_only()
                        .expect("record");
                })
            });

            // The hand-written side records exactly what the plan says, with no planning.
            let plan = plan_once(&s, &graph, &mut ps, &qs);
            // Planner resource index -> resource, in first-use order as the builder assigns.
            let mut order: Vec<Res> = Vec::new();
            for p in &ps {
                for r in [&p.write, &p.read] {
                    let same = |x: &Res| match (x, r) {
                        (Res::Image(a), Res::Image(b)) => Arc::ptr_eq(a, b),
                        (Res::Buffer(a), Res::Buffer(b)) => Arc::ptr_eq(a, b),
                        _ => false,
                    };
                    if !order.iter().any(same) {
                        order.push(r.clone());
                    }
                }
            }
            let hand = hand_recording(&plan, &qs, &order);
            let device = s.ctx.device();
            let mut pools = Vec::new();
            let mut cbs: Vec<Vec<vk::CommandBuffer>> = Vec::new();
            for (family, batches) in &hand.queues {
                let info = vk::CommandPoolCreateInfo::default()
                    .queue_family_index(*family)
                    .flags(vk::CommandPoolCreateFlags::TRANSIENT);
                // SAFETY: valid create info on a live device.
                let pool = unsafe { device.create_command_pool(&info, None) }.expect("pool");
                let count = batches.len().max(1) as u32;
                let alloc = vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(count);
                // SAFETY: valid allocate info.
                cbs.push(unsafe { device.allocate_command_buffers(&alloc) }.expect("cbs"));
                pools.push(pool);
            }
            group.bench_function(BenchmarkId::new("hand", &id), |b| {
                b.iter(|| {
                    for (qi, (_, batches)) in hand.queues.iter().enumerate() {
                        // SAFETY: none of the pool's buffers is pending.
                        unsafe {
                            device.reset_command_pool(pools[qi], vk::CommandPoolResetFlags::empty())
                        }
                        .expect("reset");
                        for (bi, cmds) in batches.iter().enumerate() {
                            let cmd = cbs[qi][bi];
                            let begin = vk::CommandBufferBeginInfo::default()
                                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                            // SAFETY: `cmd` is in the initial state after the pool reset.
                            unsafe { device.begin_command_buffer(cmd, &begin) }.expect("begin");
                            for c in cmds {
                                match c {
                                    HandCmd::Barrier(images, buffers) => {
                                        let dep = vk::DependencyInfo::default()
                                            .image_memory_barriers(images)
                                            .buffer_memory_barriers(buffers);
                                        // SAFETY: recording; every handle is alive.
                                        unsafe { device.cmd_pipeline_barrier2(cmd, &dep) };
                                    }
                                    HandCmd::Pass(i) => record_write(device, cmd, &ps[*i].write),
                                }
                            }
                            // SAFETY: recording.
                            unsafe { device.end_command_buffer(cmd) }.expect("end");
                        }
                    }
                })
            });
            for pool in pools {
                // SAFETY: no buffer of the pool is pending.
                unsafe { device.destroy_command_pool(pool, None) };
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
