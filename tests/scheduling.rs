//! GPU tests: graphs of independent chains of copy and fill passes compute the same bytes
//! planned in program order and reordered (`Schedule::REORDER`), with validation and
//! synchronization validation clean: chains inserted one after another on one queue, and
//! items of a 3-queue frame (transfer, async compute, graphics) inserted one after another.
//! The chains meet in one readback buffer (disjoint ranges, then a fill across two of them
//! that must stay after both). The 3-family test, which checks that ownership transfers are
//! grouped, needs the NVIDIA machine.

mod common;

use common::*;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::plan::Schedule;
use vk_baton::{Access, BufferDesc, BufferRange, GraphBuilder, Queue, StBuffer};
use vk_baton_context::Context;

const CHAINS: usize = 4;
const SIZE: u64 = 256;
/// The bytes of a chain's buffer that its fill pass overwrites.
const MARK: BufferRange = BufferRange {
    offset: 64,
    size: 32,
};
/// The bytes of the readback buffer the last pass overwrites: across chains 0 and 1's ranges.
const OVERWRITE: BufferRange = BufferRange {
    offset: SIZE - 16,
    size: 32,
};

fn pattern(k: usize) -> Vec<u8> {
    (0..SIZE as usize)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(17 * k as u8 + 1))
        .collect()
}

/// What the graph leaves in the readback buffer.
fn expected() -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..CHAINS {
        let mut chunk = pattern(k);
        chunk[MARK.offset as usize..(MARK.offset + MARK.size) as usize].fill(k as u8 + 0x40);
        out.extend(chunk);
    }
    out[OVERWRITE.offset as usize..(OVERWRITE.offset + OVERWRITE.size) as usize].fill(0xEE);
    out
}

fn fill(r: &vk_baton::Recorder<'_>, buf: &StBuffer, range: BufferRange, byte: u8) {
    // SAFETY: the buffer is alive, large enough, and in the declared state.
    unsafe {
        r.device().cmd_fill_buffer(
            r.cmd(),
            buf.handle(),
            range.offset,
            range.size,
            u32::from_ne_bytes([byte; 4]),
        )
    };
}

fn copy(r: &vk_baton::Recorder<'_>, src: &StBuffer, dst: &StBuffer, dst_offset: u64) {
    let region = vk::BufferCopy {
        src_offset: 0,
        dst_offset,
        size: SIZE,
    };
    // SAFETY: both buffers are alive, large enough, and in the declared states.
    unsafe {
        r.device()
            .cmd_copy_buffer(r.cmd(), src.handle(), dst.handle(), &[region])
    };
}

/// Inserts the pass "`src` to `dst`": a copy of `src` into `dst` at `slot` (the whole of `dst`
/// when `None`), overwriting what it covers.
fn insert_copy<'a>(
    builder: GraphBuilder<'a>,
    q: &'a Queue,
    src: &'a Arc<StBuffer>,
    dst: &'a Arc<StBuffer>,
    slot: Option<BufferRange>,
) -> GraphBuilder<'a> {
    builder.insert_fn(
        format!("{} to {}", src.name(), dst.name()),
        q,
        move |d| {
            d.uses(src, Access::COPY_READ);
            let w = d.uses(dst, Access::COPY_WRITE);
            match slot {
                Some(range) => w.range(range).discard(),
                None => w.discard(),
            };
        },
        move |r| {
            copy(r, src, dst, slot.map_or(0, |s| s.offset));
            Ok(())
        },
    )
}

/// Runs the graph with fresh buffers: the readback bytes, the barrier commands, and the order
/// the passes were taken in.
fn run(ctx: &Context, schedule: Schedule) -> (Vec<u8>, usize, Vec<usize>) {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let buffer = |name: String| ctx.buffer(BufferDesc::new(SIZE, usage), &name).unwrap();
    let uploads: Vec<Arc<StBuffer>> = (0..CHAINS)
        .map(|k| {
            let b = ctx
                .buffer(BufferDesc::upload(SIZE, usage), &format!("upload{k}"))
                .unwrap();
            b.write(0, &pattern(k)).unwrap();
            b
        })
        .collect();
    let a: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("a{k}"))).collect();
    let b: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("b{k}"))).collect();
    let out = ctx
        .buffer(
            BufferDesc::readback(SIZE * CHAINS as u64, vk::BufferUsageFlags::TRANSFER_DST),
            "out",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let mut builder = graph.record();
    for k in 0..CHAINS {
        let (up, a, b, out) = (&uploads[k], &a[k], &b[k], &out);
        let slot = BufferRange {
            offset: k as u64 * SIZE,
            size: SIZE,
        };
        builder = builder
            .insert_fn(
                format!("upload to a{k}"),
                q,
                move |d| {
                    d.uses(up, Access::COPY_READ);
                    d.uses(a, Access::COPY_WRITE).discard();
                },
                move |r| {
                    copy(r, up, a, 0);
                    Ok(())
                },
            )
            .insert_fn(
                format!("mark a{k}"),
                q,
                move |d| {
                    d.uses(a, Access::TRANSFER_WRITE).range(MARK);
                },
                move |r| {
                    fill(r, a, MARK, k as u8 + 0x40);
                    Ok(())
                },
            );
        builder = insert_copy(builder, q, a, b, None);
        builder = insert_copy(builder, q, b, out, Some(slot));
    }
    let mut host_read = HostRead(out.clone());
    let planned = builder
        .insert_fn(
            "overwrite",
            q,
            |d| {
                d.uses(&out, Access::TRANSFER_WRITE).range(OVERWRITE);
            },
            |r| {
                fill(r, &out, OVERWRITE, 0xEE);
                Ok(())
            },
        )
        .insert_pass("host read", &mut host_read, q)
        .schedule(schedule)
        .finish()
        .unwrap();
    println!("{schedule:?}:\n{planned}");
    let barriers = planned.plan().barrier_commands();
    let order = planned.plan().order.clone();
    planned.execute().unwrap().wait().unwrap();
    let mut bytes = vec![0u8; (SIZE * CHAINS as u64) as usize];
    out.read(0, &mut bytes).unwrap();
    (bytes, barriers, order)
}

#[test]
fn reordered_graph_computes_the_same_bytes() {
    let ctx = ctx();
    let (in_order, in_order_barriers, in_order_order) = run(&ctx, Schedule::PROGRAM_ORDER);
    let (reordered, reordered_barriers, reordered_order) = run(&ctx, Schedule::REORDER);
    assert!(in_order == expected(), "program order computed other bytes");
    assert!(
        reordered == in_order,
        "the reordered graph computed other bytes"
    );
    let passes = 4 * CHAINS + 2;
    assert_eq!(in_order_order, (0..passes).collect::<Vec<_>>());
    // Level by level: each chain's uploads, then marks, copies, copies out, the overwrite.
    let level = |step: usize| (0..CHAINS).map(move |k| 4 * k + step);
    let levels: Vec<usize> = (0..4).flat_map(level).chain([16, 17]).collect();
    assert_eq!(reordered_order, levels);
    // One barrier before every later step of each chain, against one per level; lavapipe's
    // one queue family makes all of it one queue. In program order the overwrite's barrier
    // (over chains 0 and 1's bytes of `out`) joins the one before the last chain's copy out,
    // which touches other bytes: one command fewer than one per dependent pass.
    assert_eq!(in_order_barriers, 3 * CHAINS + 1);
    assert_eq!(reordered_barriers, 5);
    assert_clean(&ctx);
}

/// Items of a 3-queue frame: an upload copy on the transfer queue, a copy and a partial fill on
/// async compute, a copy into the shared readback buffer on graphics. Returns the readback
/// bytes and the plan's (barrier commands, batches).
fn run_items(ctx: &Context, schedule: Schedule) -> (Vec<u8>, (usize, usize)) {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let buffer = |name: String| ctx.buffer(BufferDesc::new(SIZE, usage), &name).unwrap();
    let uploads: Vec<Arc<StBuffer>> = (0..CHAINS)
        .map(|k| {
            let b = ctx
                .buffer(BufferDesc::upload(SIZE, usage), &format!("upload{k}"))
                .unwrap();
            b.write(0, &pattern(k)).unwrap();
            b
        })
        .collect();
    let t: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("t{k}"))).collect();
    let c: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("c{k}"))).collect();
    let out = ctx
        .buffer(
            BufferDesc::readback(SIZE * CHAINS as u64, vk::BufferUsageFlags::TRANSFER_DST),
            "out",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let (transfer, compute, graphics) = (ctx.transfer(), ctx.async_compute(), ctx.graphics());
    let mut builder = graph.record();
    for k in 0..CHAINS {
        let (up, t, c, out) = (&uploads[k], &t[k], &c[k], &out);
        let slot = BufferRange {
            offset: k as u64 * SIZE,
            size: SIZE,
        };
        builder = builder
            .insert_fn(
                format!("upload{k}"),
                transfer,
                move |d| {
                    d.uses(up, Access::COPY_READ);
                    d.uses(t, Access::COPY_WRITE).discard();
                },
                move |r| {
                    copy(r, up, t, 0);
                    Ok(())
                },
            )
            .insert_fn(
                format!("simulate{k}"),
                compute,
                move |d| {
                    d.uses(t, Access::COPY_READ);
                    d.uses(c, Access::COPY_WRITE).discard();
                },
                move |r| {
                    copy(r, t, c, 0);
                    Ok(())
                },
            )
            .insert_fn(
                format!("mark{k}"),
                compute,
                move |d| {
                    d.uses(c, Access::TRANSFER_WRITE).range(MARK);
                },
                move |r| {
                    fill(r, c, MARK, k as u8 + 0x40);
                    Ok(())
                },
            )
            .insert_fn(
                format!("draw{k}"),
                graphics,
                move |d| {
                    d.uses(c, Access::COPY_READ);
                    d.uses(out, Access::COPY_WRITE).range(slot).discard();
                },
                move |r| {
                    copy(r, c, out, slot.offset);
                    Ok(())
                },
            );
    }
    let mut host_read = HostRead(out.clone());
    let planned = builder
        .insert_fn(
            "overwrite",
            graphics,
            |d| {
                d.uses(&out, Access::TRANSFER_WRITE).range(OVERWRITE);
            },
            |r| {
                fill(r, &out, OVERWRITE, 0xEE);
                Ok(())
            },
        )
        .insert_pass("host read", &mut host_read, graphics)
        .schedule(schedule)
        .finish()
        .unwrap();
    println!("{schedule:?}:\n{planned}");
    let p = planned.plan();
    let figures = (p.barrier_commands(), p.batch_count());
    planned.execute().unwrap().wait().unwrap();
    let mut bytes = vec![0u8; (SIZE * CHAINS as u64) as usize];
    out.read(0, &mut bytes).unwrap();
    (bytes, figures)
}

/// The 3-queue frame computes the same bytes reordered, on any device (on one queue family
/// the three queues are one).
#[test]
fn reordered_three_queue_frame_computes_the_same_bytes() {
    let ctx = ctx();
    let (in_order, in_order_figures) = run_items(&ctx, Schedule::PROGRAM_ORDER);
    let (reordered, reordered_figures) = run_items(&ctx, Schedule::REORDER);
    assert!(in_order == expected(), "program order computed other bytes");
    assert!(
        reordered == in_order,
        "the reordered frame computed other bytes"
    );
    assert!(
        reordered_figures.0 < in_order_figures.0,
        "{reordered_figures:?} against {in_order_figures:?}"
    );
    assert_clean(&ctx);
}

/// With three queue families, every hop is an ownership transfer: in program order a release
/// and an acquire per item and hop, each pass in a batch of its own; reordered, one release
/// command and one acquire command per hop and one batch per queue.
#[test]
#[ignore = "needs dedicated compute and transfer queue families (the NVIDIA machine)"]
fn reordered_three_family_frame_groups_its_ownership_transfers() {
    let ctx = ctx();
    assert!(
        ctx.async_compute().family() != ctx.graphics().family()
            && ctx.transfer().family() != ctx.graphics().family()
            && ctx.transfer().family() != ctx.async_compute().family(),
        "this test needs three queue families; `{}` has graphics {:?}, async compute {:?}, transfer {:?}",
        ctx.device_name(),
        ctx.graphics(),
        ctx.async_compute(),
        ctx.transfer()
    );
    let (in_order, in_order_figures) = run_items(&ctx, Schedule::PROGRAM_ORDER);
    let (reordered, reordered_figures) = run_items(&ctx, Schedule::REORDER);
    assert!(in_order == expected(), "program order computed other bytes");
    assert!(
        reordered == in_order,
        "the reordered frame computed other bytes"
    );
    println!("program order {in_order_figures:?}, reordered {reordered_figures:?}");
    assert!(
        reordered_figures.0 < in_order_figures.0 && reordered_figures.1 < in_order_figures.1,
        "{reordered_figures:?} against {in_order_figures:?}"
    );
    assert_clean(&ctx);
}

/// One graph, frames alternating between program order and reordering: a program-order frame
/// never reuses a reordered plan (it would run another order, or barriers regrouped), though
/// the graph keeps both kinds, and every frame computes the same bytes. Then two reordered
/// frames in a row: the second reuses the plan of the first, now the most recent.
#[test]
fn program_order_frames_never_reuse_a_reordered_plan() {
    let ctx = ctx();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let buffer = |name: String| ctx.buffer(BufferDesc::new(SIZE, usage), &name).unwrap();
    let a: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("a{k}"))).collect();
    let b: Vec<Arc<StBuffer>> = (0..CHAINS).map(|k| buffer(format!("b{k}"))).collect();
    let out = ctx
        .buffer(
            BufferDesc::readback(SIZE * CHAINS as u64, vk::BufferUsageFlags::TRANSFER_DST),
            "out",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let whole = BufferRange {
        offset: 0,
        size: SIZE,
    };
    let mut seen = Vec::new();
    for frame in 0..7 {
        // Frame 6 is reordered like frame 5.
        let schedule = [Schedule::PROGRAM_ORDER, Schedule::REORDER][(frame % 2) | (frame / 6)];
        let mut builder = graph.record();
        // Chain after chain: fill a, copy a to b, copy b to its slot of `out`.
        for k in 0..CHAINS {
            let (a, b, out) = (&a[k], &b[k], &out);
            let slot = k as u64 * SIZE;
            let byte = (frame * CHAINS + k) as u8;
            builder = builder.insert_fn(
                format!("fill a{k}"),
                q,
                move |d| {
                    d.uses(a, Access::TRANSFER_WRITE).discard();
                },
                move |r| {
                    fill(r, a, whole, byte);
                    Ok(())
                },
            );
            builder = insert_copy(builder, q, a, b, None);
            let slot = BufferRange {
                offset: slot,
                size: SIZE,
            };
            builder = insert_copy(builder, q, b, out, Some(slot));
        }
        let mut host_read = HostRead(out.clone());
        let planned = builder
            .insert_pass("host read", &mut host_read, q)
            .schedule(schedule)
            .finish()
            .unwrap();
        let p = planned.plan();
        let fresh = vk_baton::plan::plan_scheduled(&p.input, schedule).unwrap();
        seen.push((
            planned.reused(),
            p.schedule,
            p.barrier_commands(),
            fresh.barrier_commands(),
        ));
        assert_eq!(p.order, fresh.order, "frame {frame}\n{p}");
        assert_eq!(p.queues, fresh.queues, "frame {frame}\n{p}");
        planned.execute().unwrap().wait().unwrap();
        let mut bytes = vec![0u8; (SIZE * CHAINS as u64) as usize];
        out.read(0, &mut bytes).unwrap();
        let expected: Vec<u8> = (0..CHAINS)
            .flat_map(|k| vec![(frame * CHAINS + k) as u8; SIZE as usize])
            .collect();
        assert!(bytes == expected, "frame {frame} computed other bytes");
    }
    // Each frame but the last follows the one before with the other schedule, so the last
    // plan never answers it; the graph keeps several plans, and from the fourth frame on each
    // frame finds the one of two frames before, made with its own schedule (the third finds
    // the first frame's, made from fresh buffers: not the same states). Every frame's plan has
    // its own schedule and equals a fresh plan (asserted above). Program order records a
    // barrier before each copy; reordered, one per level. From the second frame on, the fills
    // wait for the last frame's copies too.
    let po = Schedule::PROGRAM_ORDER;
    let re = Schedule::REORDER;
    let figures: Vec<_> = seen.iter().map(|s| ((s.0, s.1), s.2, s.3)).collect();
    assert_eq!(
        figures,
        [
            ((false, po), 2 * CHAINS + 1, 2 * CHAINS + 1),
            ((false, re), 4, 4),
            ((false, po), 3 * CHAINS + 1, 3 * CHAINS + 1),
            ((true, re), 4, 4),
            ((true, po), 3 * CHAINS + 1, 3 * CHAINS + 1),
            ((true, re), 4, 4),
            ((true, re), 4, 4),
        ]
    );
    assert_clean(&ctx);
}
