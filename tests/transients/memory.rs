//! What a graph's transients may take: a budget, checked before anything is allocated, and an
//! allocation failure that names the transients of the heap that failed.

use super::buffers::{chain, chain_buffers};
use super::*;
use std::cell::Cell;
use vk_baton::{GraphBuilder, Queue};

/// Every transient of `ts` written, then all read together, so their lifetimes overlap and
/// none takes another's memory; `out` gets the first one's first word.
fn overlapping<'a>(
    mut b: GraphBuilder<'a>,
    q: &'a Queue,
    ts: &'a [Arc<StBuffer>],
    out: &'a Arc<StBuffer>,
) -> GraphBuilder<'a> {
    for t in ts {
        b = b.insert_fn(
            "fill",
            q,
            move |d| {
                d.uses(t, Access::TRANSFER_WRITE).discard();
            },
            move |r| {
                // SAFETY: the buffer is bound for this execution, in the declared state.
                unsafe {
                    r.device()
                        .cmd_fill_buffer(r.cmd(), t.handle(), 0, vk::WHOLE_SIZE, 7)
                };
                Ok(())
            },
        );
    }
    b.insert_fn(
        "read all",
        q,
        move |d| {
            for t in ts {
                d.uses(t, Access::COPY_READ);
            }
            d.uses(out, Access::COPY_WRITE).discard();
        },
        move |r| {
            let region = vk::BufferCopy::default().size(4);
            // SAFETY: both are bound or alive, in the declared states.
            unsafe {
                r.device()
                    .cmd_copy_buffer(r.cmd(), ts[0].handle(), out.handle(), &[region])
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

/// The device's largest memory heap and `maxBufferSize`.
fn largest_heap_and_buffer(ctx: &Context) -> (u64, u64) {
    let (instance, physical) = (ctx.instance(), ctx.physical_device());
    // SAFETY (both): plain queries of the context's own physical device.
    let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
    let mut v13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut v13);
    unsafe { instance.get_physical_device_properties2(physical, &mut props) };
    let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
    let largest = heaps.iter().map(|h| h.size).max().unwrap_or(0);
    (largest, v13.max_buffer_size)
}

/// Heaps larger than the device has fail the execution with `Error::Allocation` before
/// anything is recorded, naming the heap's transients with their bytes and the heap's total.
/// The transients together exceed the device's largest heap (each within `maxBufferSize`),
/// so the allocator refuses the heap without asking the driver.
#[test]
fn an_allocation_failure_names_the_heaps_transients() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let (heap, max_buffer) = largest_heap_and_buffer(&ctx);
    let each = heap.min(max_buffer) / 65536 * 65536;
    let ts: Vec<_> = (0..=heap / each)
        .map(|i| transient(&graph, each, &format!("large {i}")))
        .collect();
    let out = readback(&ctx);
    let planned = overlapping(graph.record(), ctx.graphics(), &ts, &out)
        .finish()
        .unwrap();
    let t = &planned.plan().transients;
    assert_eq!(t.heaps.len(), 1, "{}", planned.plan());
    let total = t.total_size();
    match planned.execute() {
        Err(Error::Allocation { resource, size, .. }) => {
            assert!(size > heap && size >= total, "{size}");
            let names = (0..ts.len()).map(|i| format!("large {i}: {each} bytes"));
            let named = names.collect::<Vec<_>>().join(", ");
            assert_eq!(
                resource,
                format!("transient heap 0 ({named}; {size} bytes in all)")
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

/// The budget caps what the execution's heap set holds, not only what the frame needs: a
/// heap kept from a larger frame (under twice the new need, so kept without a budget) is
/// made anew at the need once a budget below it is set, and the next frame holds at most
/// the budget, with the right result.
#[test]
fn a_lowered_budget_caps_the_heap_a_set_keeps_from_a_larger_frame() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let out = readback(&ctx);
    let q = ctx.graphics();
    let frame = |size: u64, name: &str| {
        let ts = [transient(&graph, size, name)];
        let planned = overlapping(graph.record(), q, &ts, &out).finish().unwrap();
        planned.execute().unwrap().wait().unwrap();
        assert_eq!(read(&out)[..4], 7u32.to_ne_bytes(), "{name}");
        graph.transient_stats()
    };
    let page = 64 << 10;
    let large = frame(8 * page, "large");
    assert_eq!((large.sets, large.execution_heap_bytes), (1, 8 * page));

    // Frame 2 needs 5 pages: the 8-page heap is kept (less than twice the need).
    let kept = frame(5 * page, "small");
    assert_eq!(kept.heap_allocations, large.heap_allocations);
    assert_eq!(kept.execution_heap_bytes, 8 * page);

    // A budget above the need but below the kept heap: the next frame holds within it.
    let budget = 6 * page;
    graph.set_transient_budget(Some(budget));
    let capped = frame(5 * page, "small");
    assert!(
        capped.execution_heap_bytes <= budget && capped.heap_bytes <= budget,
        "{capped:?} over the budget {budget}"
    );
    assert_eq!(capped.heap_allocations, kept.heap_allocations + 1);
    // Within the budget now: the next frame allocates nothing.
    let steady = frame(5 * page, "small");
    assert_eq!(steady.heap_allocations, capped.heap_allocations);
    drop(graph);
    assert_clean(&ctx);
}
