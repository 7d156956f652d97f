//! Culled graphs with transients (`Schedule::with_culling`): a pass whose transient writes
//! nobody uses is dropped, and the plan still executes. A transient that only culled passes use
//! needs no memory: the executor binds the transients the kept passes use, and nothing else.

use super::*;
use std::cell::Cell;
use vk_baton::plan::Schedule;
use vk_baton::{GraphBuilder, Queue, Recorder};

fn transient_buffer(graph: &Graph, name: &str) -> Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    graph
        .transient_buffer(BufferDesc::new(BYTES, usage), name)
        .unwrap()
}

/// A pass that fills all of `buf` with the byte `value` (discarding what it held) and counts
/// its recordings in `recorded`.
fn insert_fill<'a>(
    b: GraphBuilder<'a>,
    q: &'a Queue,
    buf: &'a Arc<StBuffer>,
    value: u8,
    recorded: &'a Cell<u32>,
) -> GraphBuilder<'a> {
    b.insert_fn(
        format!("fill {}", buf.name()),
        q,
        move |d| {
            d.uses(buf, Access::TRANSFER_WRITE).discard();
        },
        move |r| {
            recorded.set(recorded.get() + 1);
            let v = u32::from_ne_bytes([value; 4]);
            // SAFETY: `buf` is alive (bound for this execution if transient), in the declared
            // state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), buf.handle(), 0, BYTES, v)
            };
            Ok(())
        },
    )
}

/// A pass that copies all of `from` into `to`, counting its recordings in `recorded`.
fn insert_copy<'a>(
    b: GraphBuilder<'a>,
    q: &'a Queue,
    from: &'a Arc<StBuffer>,
    to: &'a Arc<StBuffer>,
    recorded: &'a Cell<u32>,
) -> GraphBuilder<'a> {
    b.insert_fn(
        format!("{} to {}", from.name(), to.name()),
        q,
        move |d| {
            d.uses(from, Access::COPY_READ);
            d.uses(to, Access::COPY_WRITE).discard();
        },
        move |r: &mut Recorder<'_>| {
            recorded.set(recorded.get() + 1);
            let region = vk::BufferCopy::default().size(BYTES);
            // SAFETY: both buffers are alive and bound for this execution, in the declared
            // states.
            unsafe {
                r.device()
                    .cmd_copy_buffer(r.cmd(), from.handle(), to.handle(), &[region])
            };
            Ok(())
        },
    )
}

fn insert_host_read<'a>(
    b: GraphBuilder<'a>,
    q: &'a Queue,
    out: &'a Arc<StBuffer>,
) -> GraphBuilder<'a> {
    b.insert_fn(
        "host read",
        q,
        move |d| {
            d.uses(out, Access::HOST_READ);
        },
        |_| Ok(()),
    )
}

/// The `Schedule::with_culling` example on a real graph: a transient that a pass fills and
/// nobody reads, beside a pass that fills the app's buffer. The first pass is culled and never
/// recorded; the plan places no transient, and it executes.
#[test]
fn a_culled_pass_of_a_transient_nobody_reads_leaves_an_executable_plan() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let scratch = transient_buffer(&graph, "scratch");
    let out = readback(&ctx);
    let (scratch_fills, out_fills) = (Cell::new(0), Cell::new(0));
    let b = insert_fill(graph.record(), q, &scratch, 0x11, &scratch_fills);
    let b = insert_fill(b, q, &out, 0x5C, &out_fills);
    let planned = insert_host_read(b, q, &out)
        .schedule(Schedule::PROGRAM_ORDER.with_culling())
        .finish()
        .unwrap();
    assert_eq!(planned.plan().order, [1, 2], "{planned}");
    assert_eq!(planned.plan().culled(), [0]);
    assert!(planned.plan().transients.placements.is_empty(), "{planned}");
    planned.execute().unwrap().wait().unwrap();
    assert_eq!(read(&out), vec![0x5C; BYTES as usize]);
    assert_eq!((scratch_fills.get(), out_fills.get()), (0, 1));
    // The probe alone: `scratch` never got memory or a buffer.
    let stats = graph.transient_stats();
    assert_eq!((stats.objects_created, stats.heaps), (1, 0), "{stats:?}");
    drop(graph);
    assert_clean(&ctx);
}

/// Transient `kept` is filled and copied into the app's buffer; transient `dropped` is written
/// only by a copy of `kept` that nothing reads, which is culled. Frame after frame (reusing the
/// culled plan), `kept` alone is placed and bound, and the app's buffer holds the fill value.
#[test]
fn a_culled_frame_binds_only_the_transients_its_kept_passes_use() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics();
    let kept = transient_buffer(&graph, "kept");
    let dropped = transient_buffer(&graph, "dropped");
    let out = readback(&ctx);
    let (fills, to_dropped, to_out) = (Cell::new(0), Cell::new(0), Cell::new(0));
    let mut reused = vec![];
    for frame in 0..4u8 {
        let value = 0x21 + frame;
        let b = insert_fill(graph.record(), q, &kept, value, &fills);
        let b = insert_copy(b, q, &kept, &dropped, &to_dropped);
        let b = insert_copy(b, q, &kept, &out, &to_out);
        let planned = insert_host_read(b, q, &out)
            .schedule(Schedule::PROGRAM_ORDER.with_culling())
            .finish()
            .unwrap();
        let plan = planned.plan();
        assert_eq!(plan.order, [0, 2, 3], "{planned}");
        assert_eq!(plan.culled(), [1]);
        // Resources in first-use order: `kept`, `dropped`, `out`.
        let placed: Vec<usize> = plan
            .transients
            .placements
            .iter()
            .map(|p| p.resource)
            .collect();
        assert_eq!(placed, [0], "{planned}");
        reused.push(planned.reused());
        planned.execute().unwrap().wait().unwrap();
        assert_eq!(read(&out), vec![value; BYTES as usize], "frame {frame}");
    }
    // `out` starts fresh, and from the second frame on in the state each frame leaves it in:
    // from the third frame on, the culled plan of the frame before is executed again.
    assert_eq!(reused, [false, false, true, true]);
    assert_eq!((fills.get(), to_dropped.get(), to_out.get()), (4, 0, 4));
    // Two probes and `kept`'s buffer, made once: `dropped` never got memory or a buffer.
    let stats = graph.transient_stats();
    assert_eq!((stats.objects_created, stats.heaps), (3, 1), "{stats:?}");
    drop(graph);
    assert_clean(&ctx);
}
