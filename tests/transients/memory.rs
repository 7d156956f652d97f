//! What a graph's transients may take: a budget, checked before anything is allocated, and an
//! allocation failure that names the transients of the heap that failed.

use super::buffers::{chain, chain_buffers};
use super::*;
use std::cell::Cell;
use vk_baton::{GraphBuilder, Queue};

const SMALL: u64 = 4096;

/// `small` and `large` written, then both read, so their lifetimes overlap and neither takes
/// the other's memory; `out` gets `small`'s bytes.
fn overlapping<'a>(
    b: GraphBuilder<'a>,
    q: &Queue,
    [small, large]: [&'a Arc<StBuffer>; 2],
    out: &'a Arc<StBuffer>,
) -> GraphBuilder<'a> {
    let fill = |buf: &'a Arc<StBuffer>| {
        move |r: &mut vk_baton::Recorder<'_>| {
            // SAFETY: the buffer is bound for this execution, in the declared state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), buf.handle(), 0, vk::WHOLE_SIZE, 7)
            };
            Ok(())
        }
    };
    b.insert_fn(
        "fill small",
        q,
        move |d| {
            d.uses(small, Access::TRANSFER_WRITE).discard();
        },
        fill(small),
    )
    .insert_fn(
        "fill large",
        q,
        move |d| {
            d.uses(large, Access::TRANSFER_WRITE).discard();
        },
        fill(large),
    )
    .insert_fn(
        "read both",
        q,
        move |d| {
            d.uses(small, Access::COPY_READ);
            d.uses(large, Access::COPY_READ);
            d.uses(out, Access::COPY_WRITE).discard();
        },
        move |r| {
            let region = vk::BufferCopy::default().size(SMALL);
            // SAFETY: both are bound or alive, in the declared states.
            unsafe {
                r.device()
                    .cmd_copy_buffer(r.cmd(), small.handle(), out.handle(), &[region])
            };
            Ok(())
        },
    )
}

fn transient(graph: &Graph, size: u64, name: &str) -> Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    graph
        .transient_buffer(BufferDesc::new(size, usage), name)
        .unwrap()
}

/// A heap the device cannot give fails the execution with `Error::Allocation`, which names
/// the heap's transients with their bytes and the heap's total.
#[test]
fn an_allocation_failure_names_the_heaps_transients() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    // Within maxBufferSize on lavapipe (4 GiB - 1), beyond any of its 2 GiB heaps.
    let large_size = 0xC000_0000;
    let small = transient(&graph, SMALL, "small");
    let large = transient(&graph, large_size, "large");
    let out = readback(&ctx);
    let planned = overlapping(graph.record(), ctx.graphics(), [&small, &large], &out)
        .finish()
        .unwrap();
    let t = &planned.plan().transients;
    let total = t.total_size();
    assert_eq!(t.heaps.len(), 1, "{}", planned.plan());
    match planned.execute() {
        Err(Error::Allocation { resource, size, .. }) => {
            assert!(size >= large_size + SMALL, "{size}");
            assert!(
                resource.starts_with("transient heap 0 (")
                    && resource.contains(&format!("large: {large_size} bytes"))
                    && resource.contains(&format!("small: {SMALL} bytes"))
                    && resource.ends_with(&format!("; {size} bytes in all)")),
                "{resource} (plan total {total})"
            );
        }
        other => panic!("{other:?}"),
    }
    drop(graph);
    assert_clean(&ctx);
}

/// The `Error::TransientBudget` of `result`: its need and budget, and that it names `t0`.
fn over_budget<T: std::fmt::Debug>(result: vk_baton::Result<T>) -> (u64, u64) {
    match result {
        Err(Error::TransientBudget {
            need,
            budget,
            largest,
        }) => {
            assert!(largest.contains(&format!("t0: {BYTES} bytes")), "{largest}");
            (need, budget)
        }
        other => panic!("{other:?}"),
    }
}

/// A frame whose transients' heaps exceed the graph's budget is refused by `finish()`, before
/// anything is allocated, naming the need and the budget; the heaps are counted as binding
/// lays them out (aliasing off needs more), and a held plan is checked when it executes.
#[test]
fn a_frame_over_the_transient_budget_is_refused_before_anything_is_allocated() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let t = chain_buffers(&graph);
    let out = readback(&ctx);
    let value = Cell::new(0x3c);
    let q = ctx.graphics();
    // `t2` takes `t0`'s memory: the chain needs two buffers' worth.
    graph.set_transient_budget(Some(2 * BYTES - 1));
    let refused = chain(graph.record(), q, &t, &out, &value).finish();
    assert_eq!(over_budget(refused), (2 * BYTES, 2 * BYTES - 1));
    assert_eq!(graph.transient_stats().heap_allocations, 0);

    graph.set_transient_budget(Some(2 * BYTES));
    let planned = chain(graph.record(), q, &t, &out, &value).finish();
    planned.unwrap().execute().unwrap().wait().unwrap();
    assert_filled(&read(&out), 0x3c, "within the budget");

    // Without aliasing each transient has a heap of its own: three buffers' worth.
    graph.set_transient_aliasing(false);
    let refused = chain(graph.record(), q, &t, &out, &value).finish();
    assert_eq!(over_budget(refused), (3 * BYTES, 2 * BYTES));
    graph.set_transient_aliasing(true);

    // A held plan executes without planning: binding checks the budget set since.
    let mut held = chain(graph.record(), q, &t, &out, &value)
        .finish()
        .unwrap()
        .hold();
    graph.set_transient_budget(Some(BYTES));
    let before = graph.transient_stats();
    assert_eq!(over_budget(held.execute()), (2 * BYTES, BYTES));
    assert_eq!(
        graph.transient_stats().heap_allocations,
        before.heap_allocations
    );
    graph.set_transient_budget(None);
    value.set(0x5d);
    held.execute().unwrap().wait().unwrap();
    assert_filled(&read(&out), 0x5d, "the held plan without a budget");
    drop(held);
    drop(graph);
    assert_clean(&ctx);
}
