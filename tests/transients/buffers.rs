//! Transient buffers: a chain of three through which a fill value reaches the app's buffer,
//! `t2` taking `t0`'s memory (and buffer), executed through the builder and as a held plan.

use super::*;
use std::cell::Cell;
use vk_baton::{GraphBuilder, Queue, Recorder};

pub(super) fn chain_buffers(graph: &Graph) -> Vec<Arc<StBuffer>> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    (0..3)
        .map(|i| {
            graph
                .transient_buffer(BufferDesc::new(BYTES, usage), &format!("t{i}"))
                .unwrap()
        })
        .collect()
}

fn copy(from: &StBuffer, to: &StBuffer, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
    let region = vk::BufferCopy::default().size(BYTES);
    // SAFETY: both buffers are bound for this execution, in the declared states.
    unsafe {
        r.device()
            .cmd_copy_buffer(r.cmd(), from.handle(), to.handle(), &[region])
    };
    Ok(())
}

/// The passes: `t0` filled with the byte `value`, copied to `t1`, `t1` to `t2`, `t2` to `out`,
/// which the host then reads.
pub(super) fn chain<'a>(
    b: GraphBuilder<'a>,
    q: &'a Queue,
    t: &'a [Arc<StBuffer>],
    out: &'a Arc<StBuffer>,
    value: &'a Cell<u8>,
) -> GraphBuilder<'a> {
    b.insert_fn(
        "fill t0",
        q,
        |d| {
            d.uses(&t[0], Access::TRANSFER_WRITE).discard();
        },
        move |r| {
            let v = u32::from_ne_bytes([value.get(); 4]);
            // SAFETY: `t0` is bound for this execution.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), t[0].handle(), 0, BYTES, v)
            };
            Ok(())
        },
    )
    .insert_fn(
        "t0 to t1",
        q,
        |d| {
            d.uses(&t[0], Access::COPY_READ);
            d.uses(&t[1], Access::COPY_WRITE).discard();
        },
        |r| copy(&t[0], &t[1], r),
    )
    .insert_fn(
        "t1 to t2",
        q,
        |d| {
            d.uses(&t[1], Access::COPY_READ);
            d.uses(&t[2], Access::COPY_WRITE).discard();
        },
        |r| copy(&t[1], &t[2], r),
    )
    .insert_fn(
        "t2 to out",
        q,
        |d| {
            d.uses(&t[2], Access::COPY_READ);
            d.uses(out, Access::COPY_WRITE).discard();
        },
        |r| copy(&t[2], out, r),
    )
    .insert_fn(
        "host read",
        q,
        |d| {
            d.uses(out, Access::HOST_READ);
        },
        |_| Ok(()),
    )
}

/// Transient buffers alias like images: `t2` takes `t0`'s memory and buffer.
#[test]
fn aliased_buffers_give_the_right_result() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let t = chain_buffers(&graph);
    let out = readback(&ctx);
    let value = Cell::new(0);
    for v in [3u8, 0xA5] {
        value.set(v);
        let planned = chain(graph.record(), ctx.graphics(), &t, &out, &value)
            .finish()
            .unwrap();
        let p = &planned.plan().transients;
        assert_eq!(
            p.placement(0).map(|x| (x.heap, x.offset)),
            p.placement(2).map(|x| (x.heap, x.offset))
        );
        planned.execute().unwrap().wait().unwrap();
        assert_filled(&read(&out), v, "chain");
    }
    // Three probes, then t0 and t1 (t2 shares t0's buffer).
    assert_eq!(graph.transient_stats().objects_created, 5);
    drop(graph);
    assert_clean(&ctx);
}

/// A held plan with transients binds them at every execution: the right results, and after the
/// first execution nothing allocated or created.
#[test]
fn a_held_plan_binds_its_transients_every_execution() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let t = chain_buffers(&graph);
    let out = readback(&ctx);
    let value = Cell::new(0);
    let mut held = chain(graph.record(), ctx.graphics(), &t, &out, &value)
        .finish()
        .unwrap()
        .hold();
    let mut first = None;
    for frame in 1..=5u8 {
        value.set(frame * 11);
        held.execute().unwrap().wait().unwrap();
        assert_filled(&read(&out), frame * 11, &format!("execution {frame}"));
        first.get_or_insert(graph.transient_stats());
    }
    let (first, last) = (first.unwrap(), graph.transient_stats());
    assert_eq!(
        (last.heap_allocations, last.objects_created, last.sets),
        (first.heap_allocations, first.objects_created, 1)
    );
    assert_eq!(last.executions, 5);
    drop(held);
    drop(graph);
    assert_clean(&ctx);
}
