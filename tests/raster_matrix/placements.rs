//! Where a case's passes run (the placements), and the GPU run of the whole matrix in one.

use super::cases::*;
use super::common::gate::Gate;
use super::gpu::Case;
use super::gpu_stencil::depth_read_barriers;
use super::kit::Kit;
use vk_baton::ash::vk;
use vk_baton::plan::{Command, Plan};
use vk_baton::{ExecutionFence, Pass, Queue};
use vk_baton_context::{Context, ContextOptions};

/// Where the writes, the middle reads and the reads go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Everything on the graphics queue.
    OneQueue,
    /// Write on graphics, a compute read on the async compute family, read on graphics:
    /// EXCLUSIVE resources, so the data goes there and back by ownership transfers.
    FamiliesExclusive,
    /// The same with the data CONCURRENT between the two families: semaphores only.
    FamiliesConcurrent,
    /// Write on graphics queue 0, read on graphics queue 1 (one family): a semaphore.
    TwoQueues,
    /// Write in one graph, read in the next (one queue).
    TwoGraphs,
    /// Each write on the queue made for it (copies and fills on the transfer family, clears
    /// and compute on the async compute family, raster on graphics), read on graphics.
    WriterQueues,
}

pub const PLACEMENTS: [Placement; 6] = [
    Placement::OneQueue,
    Placement::FamiliesExclusive,
    Placement::FamiliesConcurrent,
    Placement::TwoQueues,
    Placement::TwoGraphs,
    Placement::WriterQueues,
];

/// A queue by role, as `Context` and `Topology::nvidia` name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Q {
    Graphics,
    /// Graphics family, queue 1.
    Graphics1,
    Compute,
    Transfer,
}

impl Placement {
    pub fn middle(self) -> bool {
        matches!(
            self,
            Placement::FamiliesExclusive | Placement::FamiliesConcurrent
        )
    }

    /// The queue of a pass of `pair` in role `role`.
    pub fn queue(self, pair: &Pair, role: Role) -> Q {
        match (self, role) {
            (Placement::FamiliesExclusive | Placement::FamiliesConcurrent, Role::Middle) => {
                Q::Compute
            }
            (Placement::TwoQueues, Role::Reader) => Q::Graphics1,
            (Placement::WriterQueues, Role::Writer) => match pair.write {
                Write::CopyBuffer | Write::FillBuffer | Write::CopyImage => Q::Transfer,
                Write::ClearImage | Write::ComputeBuffer | Write::ComputeImage => Q::Compute,
                _ => Q::Graphics,
            },
            _ => Q::Graphics,
        }
    }

    /// The graphs of a frame, each the passes of every case in program order: each case's
    /// write, middle read and read follow one another; across two graphs, every write goes in
    /// the first and every read in the second.
    pub fn graphs(self, pairs: &[Pair]) -> Vec<Vec<(usize, PassSpec)>> {
        let tagged = |i: usize, v: Vec<PassSpec>| v.into_iter().map(move |s| (i, s));
        if self == Placement::TwoGraphs {
            let writes = pairs.iter().flat_map(|p| tagged(p.index, write_passes(p)));
            let reads = pairs.iter().flat_map(|p| tagged(p.index, read_passes(p)));
            return vec![writes.collect(), reads.collect()];
        }
        let one = pairs.iter().flat_map(|p| {
            let mut v = write_passes(p);
            if self.middle() {
                v.extend(middle_passes(p));
            }
            v.extend(read_passes(p));
            tagged(p.index, v)
        });
        vec![one.collect()]
    }

    /// Ownership transfers a frame must have (rules 5 to 7 of the contract), counted by
    /// [`ownership_transfers`]: the data goes to the other family and back, needed both ways,
    /// so a release and an acquire each way per case (per plane of a depth/stencil image that
    /// goes that way) when EXCLUSIVE; none when CONCURRENT or on one family. `None`: not
    /// stated (writes on their own queues: the count depends on the write).
    pub fn transfers(self, pairs: &[Pair]) -> Option<usize> {
        // A release and an acquire of each plane of the data each way: the planes the middle
        // read takes there, the planes the read takes back (`stencil.rs`: one of two).
        let planes = |p: &Pair, specs: Vec<PassSpec>| {
            let uses = specs.into_iter().flat_map(|s| s.uses);
            let data = uses
                .filter(|u| u.slot == Slot::Data)
                .map(|u| match u.aspect {
                    a if !a.is_empty() => a,
                    _ if p.kind() == Kind::Stencil => {
                        vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL
                    }
                    _ => vk::ImageAspectFlags::COLOR,
                });
            let aspects = data.fold(vk::ImageAspectFlags::empty(), |a, b| a | b);
            aspects.as_raw().count_ones() as usize
        };
        let both_ways = |p: &Pair| 2 * planes(p, middle_passes(p)) + 2 * planes(p, read_passes(p));
        match self {
            Placement::FamiliesExclusive => Some(pairs.iter().map(both_ways).sum()),
            Placement::WriterQueues => None,
            _ => Some(0),
        }
    }
}

/// The frames each GPU placement runs (the second finds every resource in the state the first
/// left it in, and reuses the first's plan).
pub const GPU_FRAMES: u32 = 2;

/// A context with validation, the features the matrix's shaders use, and `queues` graphics
/// queues. A missing device fails the test.
pub fn context(queues: u32) -> Context {
    let _ = env_logger::builder().is_test(true).try_init();
    let features = vk::PhysicalDeviceFeatures {
        draw_indirect_first_instance: vk::TRUE,
        vertex_pipeline_stores_and_atomics: vk::TRUE,
        fragment_stores_and_atomics: vk::TRUE,
        ..Default::default()
    };
    let ctx = Context::with_options(ContextOptions {
        validation: true,
        app_name: "vk-baton raster matrix".into(),
        features,
        graphics_queues: queues,
        ..Default::default()
    })
    .expect("the raster matrix needs a Vulkan 1.3 device with the validation layer (and the queues its placement names)");
    assert!(ctx.validation(), "validation must be on");
    ctx
}

/// Ownership transfers (releases and acquires) in a plan, of buffers and of image planes: a
/// barrier on both planes of a depth/stencil image (the planner joins them where they are in
/// one state) counts two.
pub fn ownership_transfers(plan: &Plan) -> usize {
    let barriers = plan
        .queues
        .iter()
        .flat_map(|q| &q.batches)
        .flat_map(|b| &b.commands);
    barriers
        .map(|c| match c {
            Command::Barrier(b) => {
                b.images
                    .iter()
                    .filter(|i| i.scopes.families.is_some())
                    .map(|i| i.aspect.as_raw().count_ones() as usize)
                    .sum::<usize>()
                    + b.buffers
                        .iter()
                        .filter(|x| x.scopes.families.is_some())
                        .count()
            }
            Command::Pass(_) => 0,
        })
        .sum()
}

/// What a GPU run of one placement needs at hand.
struct Run<'a> {
    ctx: &'a Context,
    kit: &'a Kit,
    placement: Placement,
    pairs: Vec<Pair>,
}

impl Run<'_> {
    fn queue(&self, q: Q) -> &Queue {
        match q {
            Q::Graphics => self.ctx.graphics(),
            Q::Graphics1 => &self.ctx.graphics_queues()[1],
            Q::Compute => self.ctx.async_compute(),
            Q::Transfer => self.ctx.transfer(),
        }
    }

    /// Plans and executes `specs` in `graph`, checking the ownership transfers.
    fn execute(
        &self,
        graph: &vk_baton::Graph,
        specs: &[(usize, PassSpec)],
        cases: &[Case],
        frame: u32,
    ) -> ExecutionFence {
        let placement = self.placement;
        let mut passes: Vec<(&str, Q, Box<dyn Pass + '_>)> = specs
            .iter()
            .map(|(i, s)| {
                let q = placement.queue(&self.pairs[*i], s.role);
                (s.name.as_str(), q, cases[*i].pass(self.ctx, self.kit, s))
            })
            .collect();
        let mut b = graph.record();
        for (name, q, p) in passes.iter_mut() {
            b = b.insert_pass(*name, p.as_mut(), self.queue(*q));
        }
        let planned = b
            .finish()
            .unwrap_or_else(|e| panic!("{placement:?} frame {frame}: {e}"));
        if let Some(want) = placement.transfers(&self.pairs) {
            let got = ownership_transfers(planned.plan());
            assert_eq!(
                got,
                want,
                "{placement:?} frame {frame}: ownership-transfer barriers\n{}",
                planned.plan()
            );
        }
        if !placement.middle() {
            let same_graph = placement != Placement::TwoGraphs;
            let needless: Vec<String> = self
                .pairs
                .iter()
                .filter_map(|p| depth_read_barriers(planned.plan(), p, same_graph).err())
                .collect();
            assert!(
                needless.is_empty(),
                "{placement:?} frame {frame}: a read of depth alone after the stencil write \
                 needs no barrier:\n{}\n{}",
                needless.join("\n"),
                planned.plan()
            );
        }
        planned.execute().unwrap()
    }
}

/// The context a placement needs; fails, naming what is missing, on a device without it.
fn placement_context(placement: Placement) -> Context {
    let ctx = context(if placement == Placement::TwoQueues {
        2
    } else {
        1
    });
    let (g, c, t) = (ctx.graphics(), ctx.async_compute(), ctx.transfer());
    // Across families: a compute family apart from graphics; writes on their own queues: a
    // transfer family too.
    let transfer_apart = placement != Placement::WriterQueues || t.family() != g.family();
    if placement.middle() || placement == Placement::WriterQueues {
        assert!(
            c.family() != g.family() && transfer_apart,
            "{placement:?} needs its own queue families, but `{}` has graphics {:?}, compute {:?}, transfer {:?}",
            ctx.device_name(),
            g,
            c,
            t
        );
    }
    ctx
}

/// Runs every case of the matrix in `placement` on the GPU, `GPU_FRAMES` frames, and fails
/// with every wrong case (or any validation message).
pub fn run(placement: Placement) {
    let ctx = placement_context(placement);
    let kit = Kit::new(&ctx);
    let run = Run {
        ctx: &ctx,
        kit: &kit,
        placement,
        pairs: pairs(),
    };
    let families = [ctx.graphics().family(), ctx.async_compute().family()];
    let shared = (placement == Placement::FamiliesConcurrent).then_some(&families[..]);
    let mut cases: Vec<Case> = run
        .pairs
        .iter()
        .map(|p| Case::new(&ctx, *p, placement.middle(), shared, 0))
        .collect();
    let specs = placement.graphs(&run.pairs);
    let graphs: Vec<vk_baton::Graph> = specs.iter().map(|_| ctx.graph().unwrap()).collect();
    let gate = Gate::new(&ctx, ctx.graphics());
    for frame in 0..GPU_FRAMES {
        if frame > 0 {
            cases.iter_mut().for_each(|c| c.reset(frame));
            gate.close();
        }
        gate.hold();
        let fences: Vec<ExecutionFence> = graphs
            .iter()
            .zip(&specs)
            .map(|(graph, specs)| run.execute(graph, specs, &cases, frame))
            .collect();
        println!("{placement:?} frame {frame}: submitted, the gate opens");
        gate.open();
        println!("{placement:?} frame {frame}: the gate is open");
        for f in fences {
            f.wait().unwrap();
        }
        // The fences are signalled: the GPU is done with this frame. Layers 1.4.309 and
        // 1.4.363 do not retire the batches that waited on the gate (a host-signalled
        // timeline) when their fence is waited (`common/gate.rs`; the gate is this test's
        // point), and report the next frame's accesses as racing these finished ones (seen on
        // an H100 with the CONCURRENT placement, reported at the next `vkSignalSemaphore`).
        // Waiting for each queue to be idle retires them in the layer too; on the device it
        // waits for nothing.
        for q in [ctx.graphics(), ctx.async_compute(), ctx.transfer()] {
            let lock = q.lock();
            // SAFETY: the queue's lock is held; the queue belongs to `ctx`'s live device.
            unsafe { ctx.device().queue_wait_idle(lock.handle()) }.unwrap();
        }
        let wrong: Vec<String> = cases.iter().filter_map(Case::check).collect();
        assert!(
            wrong.is_empty(),
            "{placement:?} frame {frame}: {} of {} cases wrong:\n{}",
            wrong.len(),
            cases.len(),
            wrong.join("\n")
        );
    }
    println!(
        "{placement:?}: {} cases x {GPU_FRAMES} frames, every word right",
        cases.len()
    );
    drop(graphs);
    drop(kit);
    let m = ctx.unexpected_messages();
    assert!(m == 0, "{placement:?}: {m} validation message(s)");
}
