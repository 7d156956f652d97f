//! Declared unordered writes on the GPU: copies into disjoint regions of one image, and atomic
//! adds from several dispatches, with no barrier between them, checked by data; and the canary
//! that shows the layer would see copies that overlap.

use super::*;
use vk_baton::ash::vk::Handle;
use vk_baton::plan::{Region, Unordered};
use vk_baton_context::Context;

const SIDE: u32 = 32;
const HALF: u32 = SIDE / 2;
/// Bytes of one quadrant of an RGBA8 image.
const TILE_BYTES: u64 = (HALF * HALF * 4) as u64;

/// `vkCmdFillBuffer` of `range` of the buffer with `word`.
struct FillRange {
    buf: Arc<StBuffer>,
    range: BufferRange,
    word: u32,
}

impl Pass for FillRange {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::TRANSFER_WRITE)
            .range(self.range)
            .discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let BufferRange { offset, size } = self.range;
        // SAFETY: the range is inside the buffer, which has TRANSFER_DST usage.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.buf.handle(), offset, size, self.word)
        };
        Ok(())
    }
}

/// `vkCmdCopyBufferToImage` of quadrant `k`'s bytes of `src` into a texel box of `dst`,
/// declared as an unordered write of that box (or, for the canary, of `declared`).
struct CopyTile {
    src: Arc<StBuffer>,
    dst: Arc<StImage>,
    k: u32,
    at: [u32; 2],
    declared: Unordered,
}

impl Pass for CopyTile {
    fn declare(&self, d: &mut Declare<'_>) {
        let bytes = BufferRange {
            offset: self.k as u64 * TILE_BYTES,
            size: TILE_BYTES,
        };
        d.uses(&self.src, Access::TRANSFER_READ).range(bytes);
        d.uses(&self.dst, Access::TRANSFER_WRITE)
            .unordered(self.declared);
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferImageCopy {
            buffer_offset: self.k as u64 * TILE_BYTES,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            },
            image_offset: vk::Offset3D {
                x: self.at[0] as i32,
                y: self.at[1] as i32,
                z: 0,
            },
            image_extent: vk::Extent3D {
                width: HALF,
                height: HALF,
                depth: 1,
            },
        };
        // SAFETY: the image is in TRANSFER_DST_OPTIMAL, as declared; the box is inside it.
        unsafe {
            r.device().cmd_copy_buffer_to_image(
                r.cmd(),
                self.src.handle(),
                self.dst.handle(),
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            )
        };
        Ok(())
    }
}

/// Whether passes `first` to `first + count - 1` run one after another in one batch, with no
/// barrier among them.
fn runs_in_a_row(plan: &vk_baton::plan::Plan, first: usize, count: usize) -> bool {
    plan.queues.iter().flat_map(|q| &q.batches).any(|b| {
        b.commands
            .windows(count)
            .any(|w| (0..count).all(|i| matches!(w[i], Command::Pass(p) if p == first + i)))
    })
}

/// The top-left texel of quadrant `k` (row by row).
fn corner(k: u32) -> [u32; 2] {
    [(k % 2) * HALF, (k / 2) * HALF]
}

fn disjoint(at: [u32; 2]) -> Unordered {
    Unordered::Disjoint(Region::texels([at[0], at[1], 0], [HALF, HALF, 1]))
}

/// The byte every texel of quadrant `k` holds.
fn tile_byte(k: u32) -> u8 {
    0x11 * (k as u8 + 1)
}

struct Tiles {
    staging: Arc<StBuffer>,
    image: Arc<StImage>,
    readback: Arc<StBuffer>,
}

fn tiles(ctx: &Context) -> Tiles {
    use vk::BufferUsageFlags as B;
    use vk::ImageUsageFlags as U;
    let staging = ctx
        .buffer(
            BufferDesc::new(4 * TILE_BYTES, B::TRANSFER_SRC | B::TRANSFER_DST),
            "tile staging",
        )
        .unwrap();
    let image = ctx
        .image(
            ImageDesc::new_2d(
                SIDE,
                SIDE,
                vk::Format::R8G8B8A8_UNORM,
                U::TRANSFER_DST | U::TRANSFER_SRC,
            ),
            "tiled",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(4 * TILE_BYTES, B::TRANSFER_DST),
            "tiles readback",
        )
        .unwrap();
    Tiles {
        staging,
        image,
        readback,
    }
}

/// Four fills of the staging buffer, four copies of them into the image (copy `k` at
/// `place(k)`: the box's top-left texel, and the declaration), and a download; returns the
/// plan's text and whether the copies ran with nothing between them.
fn copy_tiles(
    ctx: &Context,
    t: &Tiles,
    place: impl Fn(u32) -> ([u32; 2], Unordered),
) -> (String, bool) {
    let graph = ctx.graph().unwrap();
    let mut fills: Vec<FillRange> = (0..4)
        .map(|k| FillRange {
            buf: t.staging.clone(),
            range: BufferRange {
                offset: k as u64 * TILE_BYTES,
                size: TILE_BYTES,
            },
            word: u32::from_ne_bytes([tile_byte(k); 4]),
        })
        .collect();
    let mut copies: Vec<CopyTile> = (0..4)
        .map(|k| CopyTile {
            src: t.staging.clone(),
            dst: t.image.clone(),
            k,
            at: place(k).0,
            declared: place(k).1,
        })
        .collect();
    let mut down = ImageToBuffer {
        src: t.image.clone(),
        dst: t.readback.clone(),
    };
    let mut host = HostRead(t.readback.clone());
    let mut b = graph.record();
    for (k, f) in fills.iter_mut().enumerate() {
        b = b.insert_pass(format!("fill {k}"), f, ctx.graphics());
    }
    for (k, c) in copies.iter_mut().enumerate() {
        b = b.insert_pass(format!("copy {k}"), c, ctx.graphics());
    }
    let planned = b
        .insert_pass("download", &mut down, ctx.graphics())
        .insert_pass("host", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    let text = planned.to_string();
    let adjacent = planned
        .plan()
        .queues
        .iter()
        .flat_map(|q| &q.batches)
        .any(|b| {
            b.commands
                .windows(4)
                .any(|w| (0..4).all(|i| matches!(w[i], Command::Pass(p) if p == 4 + i)))
        });
    planned.execute().unwrap().wait().unwrap();
    (text, adjacent)
}

#[test]
fn copies_into_disjoint_regions_of_one_image_need_no_barrier_between_them() {
    let ctx = ctx();
    let t = tiles(&ctx);
    for frame in 0..3 {
        let (plan, adjacent) = copy_tiles(&ctx, &t, |k| (corner(k), disjoint(corner(k))));
        assert!(
            adjacent,
            "frame {frame}: a barrier between the copies\n{plan}"
        );
        let mut got = vec![0u8; (4 * TILE_BYTES) as usize];
        t.readback.read(0, &mut got).unwrap();
        let wrong = (0..SIDE * SIDE)
            .filter(|&i| {
                let (x, y) = (i % SIDE, i / SIDE);
                let k = x / HALF + 2 * (y / HALF);
                got[i as usize * 4..i as usize * 4 + 4] != [tile_byte(k); 4]
            })
            .count();
        assert_eq!(wrong, 0, "frame {frame}: texels wrong");
    }
    assert_clean(&ctx);
}

/// The canary for the test above: copies into overlapping boxes, falsely declared atomic so
/// that the graph puts no barrier between them, are a hazard the layer reports, found by
/// content (a write-after-write hazard that names the image). So the layer tracks copies per
/// texel box, and the copies above were found disjoint.
#[test]
fn canary_overlapping_copies_without_a_barrier_are_reported() {
    let ctx = ctx();
    let t = tiles(&ctx);
    // Every copy lands on the top-left quadrant.
    let (plan, adjacent) = copy_tiles(&ctx, &t, |_| ([0, 0], Unordered::Atomic));
    assert!(adjacent, "{plan}");
    let m = ctx.validation_messages();
    let handle = t.image.handle().as_raw();
    let reported = m
        .messages
        .iter()
        .any(|x| x.id.starts_with("SYNC-HAZARD-WRITE") && x.names(handle));
    assert!(
        reported,
        "no write-after-write hazard on image {handle:#x}: {m}"
    );
}

/// The counters the atomic tests add to, and what each must end at.
const COUNTERS: u32 = 64;
const DISPATCHES: u32 = 4;
const INVOCATIONS: u32 = 256;

/// Asserts that every counter of every frame ended at [`counter_total`].
fn assert_totals(frames: &[Vec<u32>]) {
    for (frame, counters) in frames.iter().enumerate() {
        assert!(
            counters.iter().all(|&c| c == counter_total()),
            "frame {frame}: {counters:?}, each should be {}",
            counter_total()
        );
    }
}

/// Per counter: `INVOCATIONS / COUNTERS` adds per dispatch, dispatch `k` adding `k + 1`.
fn counter_total() -> u32 {
    (INVOCATIONS / COUNTERS) * (1..=DISPATCHES).sum::<u32>()
}

/// One dispatch of `atomic_add.comp` adding `amount`, declared as an unordered atomic write.
struct AtomicAdd<'a> {
    kit: &'a Compute,
    set: vk::DescriptorSet,
    counters: Arc<StBuffer>,
    amount: u32,
}

impl Pass for AtomicAdd<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.counters, Access::COMPUTE_SHADER_READ_WRITE)
            .unordered(Unordered::Atomic);
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let groups = INVOCATIONS.div_ceil(64);
        self.kit
            .dispatch(r, self.set, [COUNTERS, self.amount], [groups, 1, 1]);
        Ok(())
    }
}

/// Clears the counters, adds to them from `DISPATCHES` dispatches with no barrier between
/// them on `adds_on`, and copies them back on `read_on`, `frames` times; returns the counters
/// of each frame.
fn add_atomically(
    ctx: &Context,
    frames: usize,
    [adds_on, read_on]: [&vk_baton::Queue; 2],
) -> Vec<Vec<u32>> {
    use vk::BufferUsageFlags as B;
    let kit = Compute::new(
        ctx,
        vk_baton_shaders::ATOMIC_ADD_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let bytes = COUNTERS as u64 * 4;
    let counters = ctx
        .buffer(
            BufferDesc::new(bytes, B::STORAGE_BUFFER | B::TRANSFER_DST | B::TRANSFER_SRC),
            "counters",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(bytes, B::TRANSFER_DST),
            "counters readback",
        )
        .unwrap();
    let set = kit.buffer_set(&counters);
    let graph = ctx.graph().unwrap();
    let mut out = Vec::new();
    for _ in 0..frames {
        let mut clear = FillRange {
            buf: counters.clone(),
            range: BufferRange {
                offset: 0,
                size: bytes,
            },
            word: 0,
        };
        let mut adds: Vec<AtomicAdd<'_>> = (1..=DISPATCHES)
            .map(|amount| AtomicAdd {
                kit: &kit,
                set,
                counters: counters.clone(),
                amount,
            })
            .collect();
        let mut copy = CopyBuffer {
            src: counters.clone(),
            dst: readback.clone(),
        };
        let mut host = HostRead(readback.clone());
        let mut b = graph.record().insert_pass("clear", &mut clear, adds_on);
        for (k, a) in adds.iter_mut().enumerate() {
            b = b.insert_pass(format!("add {k}"), a, adds_on);
        }
        let planned = b
            .insert_pass("copy", &mut copy, read_on)
            .insert_pass("host", &mut host, read_on)
            .finish()
            .unwrap();
        // The adds (passes 1 to 4) run one after another, with no barrier among them.
        assert!(
            runs_in_a_row(planned.plan(), 1, DISPATCHES as usize),
            "{planned}"
        );
        planned.execute().unwrap().wait().unwrap();
        let mut got = vec![0u8; bytes as usize];
        readback.read(0, &mut got).unwrap();
        out.push(
            got.chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        );
    }
    out
}

/// Four dispatches add to one set of counters with atomics and no barrier between them: every
/// counter ends at the exact sum, frame after frame, validation clean (the layer checks
/// accesses through descriptors too; within one command buffer it reports no hazard between
/// dispatches that write through one bound descriptor).
#[test]
fn atomic_adds_from_several_dispatches_sum_exactly() {
    let ctx = ctx();
    let queues = [ctx.graphics(), ctx.graphics()];
    assert_totals(&add_atomically(&ctx, 3, queues));
    assert_clean(&ctx);
}

/// The same adds on async compute, copied back on graphics: across families the counters are
/// released after the group and acquired before the copy, frame after frame.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn atomic_adds_on_async_compute_are_read_on_graphics() {
    let ctx = ctx();
    assert!(ctx.has_several_families(), "run where there are several");
    let queues = [ctx.async_compute(), ctx.graphics()];
    assert_totals(&add_atomically(&ctx, 3, queues));
    assert_clean(&ctx);
}
