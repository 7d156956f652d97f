//! The vk-baton side: a stock `Uploader` gathers every item of a batch into one pass on the
//! transfer queue; with a consumer, the checksum (and, for images, a copy back into a buffer
//! first) runs on the async compute queue in the same graph, which adds the release/acquire
//! pairs, the layout transitions and the semaphore.

use crate::workload::{image_regions, Item, Workload};
use std::sync::Arc;
use std::time::Instant;
use support::push_u32s;
use vk_baton::ash::vk;
use vk_baton::{
    Access, BufferDesc, BufferRange, Declare, ExecutionFence, Graph, ImageDesc, Pass, Recorder,
    StBuffer, StImage,
};
use vk_baton_context::Context;
use vk_baton_passes::{ComputeDispatch, CopyImageToBuffer, ShaderAccess, Uploader};

/// The consumer: `checksum.comp` checksums `data` into the `groups` partial sums of its slot's
/// `partials`, all overwritten, so batches need not be ordered among themselves.
struct Verify<'a> {
    dispatch: &'a mut ComputeDispatch,
    data: Arc<StBuffer>,
    partials: Arc<StBuffer>,
    groups: u32,
}

impl Pass for Verify<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.data, Access::COMPUTE_SHADER_READ);
        d.uses(&self.partials, Access::COMPUTE_SHADER_WRITE)
            .range(BufferRange {
                offset: 0,
                size: self.groups as u64 * 4,
            })
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.dispatch.record(r)
    }
}

/// Makes GPU writes to bytes of a mapped buffer visible to the host once the fence signals.
struct HostRead(Arc<StBuffer>, BufferRange);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ).range(self.1);
    }

    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

/// Everything one batch in flight uses. Slots are alike (each its own partial sums too, rather
/// than a share of one buffer), so a graph declares the same uses whichever slot it runs on and
/// `finish()` reuses the last plan ([`vk_baton::Planned::reused`]) instead of planning anew.
struct Slot {
    /// What the checksum reads: the pieces' destination, or the images' copy-back.
    data: Arc<StBuffer>,
    partials: Arc<StBuffer>,
    images: Vec<Arc<StImage>>,
    copies_back: Vec<CopyImageToBuffer>,
    verify: ComputeDispatch,
}

/// Seconds spent in each host phase of the vk-baton path, summed over batches.
#[derive(Default, Clone, Copy, Debug)]
pub struct Phases {
    /// Staging the items (host copies into the ring) and `flush_pass`.
    pub stage: f64,
    /// `record()`, inserting the passes, `finish()` (lowering and planning).
    pub plan: f64,
    /// `execute()`: recording the command buffers and submitting.
    pub submit: f64,
    /// Executions, and those whose `finish()` reused the last plan instead of planning.
    pub executions: usize,
    pub reused: usize,
}

pub struct Baton {
    pub graph: Graph,
    pub uploader: Uploader,
    slots: Vec<Slot>,
    groups: u32,
    /// The checksum each batch must give.
    expected: Vec<u32>,
    /// Batches checked, and those whose checksum matched.
    pub checks: crate::Checks,
    /// The plan of one batch with its consumer.
    pub plan: Option<vk_baton::plan::Plan>,
}

impl Baton {
    pub fn new(
        ctx: &Context,
        w: &Workload,
        in_flight: usize,
        spirv: &[u32],
        groups: u32,
        dispatched: u32,
        expected: Vec<u32>,
    ) -> vk_baton::Result<Self> {
        let mut slots = Vec::new();
        for s in 0..in_flight {
            let partials = ctx.buffer(
                BufferDesc::readback(
                    4 * crate::MAX_GROUPS as u64,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
                &format!("partial sums {s}"),
            )?;
            let data = ctx.buffer(
                BufferDesc::new(
                    w.batch_bytes(),
                    vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
                &format!("data {s}"),
            )?;
            let (mut images, mut copies_back) = (Vec::new(), Vec::new());
            if let Item::Image { size, mips } = w.item {
                for p in 0..w.per_batch {
                    let img = ctx.image(
                        ImageDesc::new_2d(
                            size,
                            size,
                            vk::Format::R8G8B8A8_UNORM,
                            vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC,
                        )
                        .mips(mips),
                        &format!("image {s}.{p}"),
                    )?;
                    let regions = image_regions(size, mips, p as u64 * w.item.bytes());
                    copies_back.push(CopyImageToBuffer::regions(
                        img.clone(),
                        data.clone(),
                        &regions,
                    )?);
                    images.push(img);
                }
            }
            // SAFETY: the sample's own checksum shader, with exactly the bindings and push
            // constants declared below.
            let verify = unsafe { ComputeDispatch::builder(ctx.device(), spirv) }
                .name("checksum")
                .storage_buffer(0, data.clone(), ShaderAccess::Read)
                .storage_buffer(1, partials.clone(), ShaderAccess::Write)
                .push_constant_size(8)
                .groups(dispatched, 1, 1)
                .build()?;
            slots.push(Slot {
                data,
                partials,
                images,
                copies_back,
                verify,
            });
        }
        // Room for the batches in flight and one being staged.
        let staging = w.batch_bytes() * (in_flight as u64 + 1);
        Ok(Self {
            graph: ctx.graph()?,
            uploader: Uploader::new(ctx.device(), ctx.allocator(), staging)?,
            slots,
            groups,
            expected,
            checks: crate::Checks::default(),
            plan: None,
        })
    }

    /// Stages batch `b` of `w` and executes it (with the checksum on the compute queue when
    /// `consume`).
    pub fn batch(
        &mut self,
        ctx: &Context,
        w: &Workload,
        b: usize,
        consume: bool,
        phases: &mut Phases,
    ) -> vk_baton::Result<ExecutionFence> {
        let t0 = Instant::now();
        let n = self.slots.len();
        let slot = &mut self.slots[b % n];
        let item_bytes = w.item.bytes();
        let items = w.items(b);
        for (p, i) in items.clone().enumerate() {
            match w.item {
                Item::Piece { .. } => {
                    self.uploader
                        .buffer(&slot.data, p as u64 * item_bytes, w.source(i))?
                }
                Item::Image { .. } => self.uploader.image(&slot.images[p], w.source(i))?,
            }
        }
        let mut uploads = self.uploader.flush_pass();
        let t1 = Instant::now();
        // Each slot has its own partial sums, checked when its fence has signalled.
        let partial_range = BufferRange {
            offset: 0,
            size: self.groups as u64 * 4,
        };
        let mut host_read = HostRead(slot.partials.clone(), partial_range);
        let words = (items.len() as u64 * item_bytes / 4) as u32;
        slot.verify.set_push_constants(&push_u32s(&[words, 0]))?;
        let mut verify = Verify {
            dispatch: &mut slot.verify,
            data: slot.data.clone(),
            partials: slot.partials.clone(),
            groups: self.groups,
        };
        let mut rec = self
            .graph
            .record()
            .insert_pass("upload", &mut uploads, ctx.transfer());
        if consume {
            for c in slot.copies_back.iter_mut().take(items.len()) {
                rec = rec.insert_pass("copy back", c, ctx.async_compute());
            }
            rec = rec
                .insert_pass("verify", &mut verify, ctx.async_compute())
                .insert_pass("host read", &mut host_read, ctx.async_compute());
        }
        let planned = rec.finish()?;
        let t2 = Instant::now();
        phases.executions += 1;
        phases.reused += usize::from(planned.reused());
        if consume && self.plan.is_none() && b == 1.min(w.batches() - 1) {
            self.plan = Some(planned.plan().clone());
        }
        // Bound to a local: the planned graph must be dropped before the passes it borrows.
        let fence = planned.execute();
        let t3 = Instant::now();
        phases.stage += (t1 - t0).as_secs_f64();
        phases.plan += (t2 - t1).as_secs_f64();
        phases.submit += (t3 - t2).as_secs_f64();
        fence
    }

    /// Checks batch `b`'s partial sums; the execution that consumed it must have completed.
    pub fn check(&mut self, b: usize) -> vk_baton::Result<()> {
        let slot = &self.slots[b % self.slots.len()];
        let sum = sum_u32s(&slot.partials, 0, self.groups)?;
        self.checks
            .add(sum == self.expected[b % self.expected.len()]);
        Ok(())
    }
}

/// The wrapping sum of `n` u32s of `b` from word `first`.
pub fn sum_u32s(b: &StBuffer, first: u64, n: u32) -> vk_baton::Result<u32> {
    let mut raw = vec![0u8; n as usize * 4];
    b.read(first * 4, &mut raw)?;
    Ok(raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .fold(0u32, |a, w| a.wrapping_add(w)))
}
