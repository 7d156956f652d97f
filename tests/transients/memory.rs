//! What a graph's transients may take: an allocation failure names the transients of the heap
//! that failed.

use super::*;
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
