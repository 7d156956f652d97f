//! Transient resources on the GPU: memory shared between transients the plan orders, the same
//! results with aliasing off, steady frames that create nothing, a heap set per execution in
//! flight, culled graphs (`transients/culled.rs`), and the errors. Validation and synchronization validation are on (syncval tracks
//! memory, so a missing aliasing barrier is a hazard it reports).

#[path = "transients/buffers.rs"]
mod buffers;
#[path = "common/busy.rs"]
mod busy;
mod common;
#[path = "transients/culled.rs"]
mod culled;
#[path = "transients/memory.rs"]
mod memory;

use busy::Busy;
use common::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Error, ExecutionFence, Graph, ImageDesc, StBuffer, StImage};
use vk_baton_context::Context;

const SIDE: u32 = 64;
const BYTES: u64 = (SIDE * SIDE * 4) as u64;

fn image_desc() -> ImageDesc {
    ImageDesc::new_2d(
        SIDE,
        SIDE,
        vk::Format::R8G8B8A8_UNORM,
        vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST,
    )
}

fn whole_copy() -> vk::ImageCopy {
    let layers = vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    };
    vk::ImageCopy {
        src_subresource: layers,
        dst_subresource: layers,
        extent: vk::Extent3D {
            width: SIDE,
            height: SIDE,
            depth: 1,
        },
        ..Default::default()
    }
}

/// The image chain: `a` cleared to `value`, copied to `b`, `b` to `c`, `c` to `out`; `c` may
/// take `a`'s memory. With `busy`, the execution also runs that pass, which keeps it in
/// flight. Returns the fence and the handle `a` was recorded with.
fn image_frame(
    ctx: &Context,
    graph: &Graph,
    [a, b, c]: [&Arc<StImage>; 3],
    out: &Arc<StBuffer>,
    value: u8,
    busy: Option<&mut Busy>,
) -> (ExecutionFence, vk::Image) {
    let q = ctx.graphics();
    let color = vk::ClearColorValue {
        float32: [value as f32 / 255.0; 4],
    };
    let seen = Mutex::new(vk::Image::null());
    let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    let src = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    let copy = |from: &Arc<StImage>, to: &Arc<StImage>, r: &mut vk_baton::Recorder<'_>| {
        // SAFETY: both images are bound for this execution and in the declared layouts.
        unsafe {
            r.device().cmd_copy_image(
                r.cmd(),
                from.handle(),
                src,
                to.handle(),
                dst,
                &[whole_copy()],
            )
        };
        Ok(())
    };
    let builder = graph
        .record()
        .insert_fn(
            "clear a",
            q,
            |d| {
                d.uses(a, Access::CLEAR_COLOR_WRITE).discard();
            },
            |r| {
                *seen.lock().unwrap() = a.handle();
                // SAFETY: `a` is bound for this execution and in TRANSFER_DST_OPTIMAL.
                unsafe {
                    r.device().cmd_clear_color_image(
                        r.cmd(),
                        a.handle(),
                        dst,
                        &color,
                        &[a.full_range()],
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "a to b",
            q,
            |d| {
                d.uses(a, Access::COPY_READ);
                d.uses(b, Access::COPY_WRITE).discard();
            },
            |r| copy(a, b, r),
        )
        .insert_fn(
            "b to c",
            q,
            |d| {
                d.uses(b, Access::COPY_READ);
                d.uses(c, Access::COPY_WRITE).discard();
            },
            |r| copy(b, c, r),
        )
        .insert_fn(
            "c to out",
            q,
            |d| {
                d.uses(c, Access::COPY_READ);
                d.uses(out, Access::COPY_WRITE).discard();
            },
            |r| {
                let region = vk::BufferImageCopy {
                    image_subresource: whole_copy().src_subresource,
                    image_extent: whole_copy().extent,
                    ..Default::default()
                };
                // SAFETY: `c` is bound and in TRANSFER_SRC_OPTIMAL; `out` holds the image.
                unsafe {
                    r.device().cmd_copy_image_to_buffer(
                        r.cmd(),
                        c.handle(),
                        src,
                        out.handle(),
                        &[region],
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "host read",
            q,
            |d| {
                d.uses(out, Access::HOST_READ);
            },
            |_| Ok(()),
        );
    // Last, so that the transients keep their resource indices.
    let planned = match busy {
        Some(busy) => builder.insert_pass("busy", busy, q),
        None => builder,
    }
    .finish()
    .unwrap();
    let t = &planned.plan().transients;
    let (pa, pc) = (t.placement(0).unwrap(), t.placement(2).unwrap());
    assert_eq!((pa.heap, pa.offset), (pc.heap, pc.offset), "{}", planned);
    assert_eq!(t.total_size() * 3, t.unaliased_size * 2, "{}", planned);
    let fence = planned.execute().unwrap();
    let handle = *seen.lock().unwrap();
    (fence, handle)
}

fn readback(ctx: &Context) -> Arc<StBuffer> {
    ctx.buffer(
        BufferDesc::readback(BYTES, vk::BufferUsageFlags::TRANSFER_DST),
        "out",
    )
    .unwrap()
}

fn read(out: &StBuffer) -> Vec<u8> {
    let mut bytes = vec![0u8; BYTES as usize];
    out.read(0, &mut bytes).unwrap();
    bytes
}

/// Asserts that every byte of `bytes` is `value`, printing only the first few otherwise.
fn assert_filled(bytes: &[u8], value: u8, what: &str) {
    let wrong = bytes.iter().filter(|&&b| b != value).count();
    assert_eq!(
        wrong,
        0,
        "{what}: {wrong} bytes are not {value}: {:?}...",
        &bytes[..16]
    );
}

fn transients(graph: &Graph) -> [Arc<StImage>; 3] {
    ["a", "b", "c"].map(|n| graph.transient_image(image_desc(), n).unwrap())
}

/// `c` takes `a`'s memory; every frame's result is its clear color; after the first frame
/// nothing is allocated or created; a transient ends each execution without contents.
#[test]
fn aliased_images_give_the_right_result_and_a_steady_frame_creates_nothing() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let [a, b, c] = transients(&graph);
    assert!(a.is_transient() && a.handle() == vk::Image::null());
    let out = readback(&ctx);
    let mut stats = Vec::new();
    for frame in 0..6u8 {
        let value = 10 + frame;
        image_frame(&ctx, &graph, [&a, &b, &c], &out, value, None)
            .0
            .wait()
            .unwrap();
        assert_filled(&read(&out), value, &format!("frame {frame}"));
        stats.push(graph.transient_stats());
        assert_eq!(c.state().layout(), Some(vk::ImageLayout::UNDEFINED));
        assert!(!c.state().defined());
    }
    let first = stats[0];
    assert_eq!((first.sets, first.heaps, first.heap_allocations), (1, 1, 1));
    // Three probes, then two images (`c` shares `a`'s object: same description and place).
    assert_eq!(first.objects_created, 3 + 2, "{first:?}");
    assert!(first.heap_bytes >= 2 * BYTES && first.heap_bytes < 3 * BYTES);
    for (i, s) in stats.iter().enumerate().skip(1) {
        assert_eq!(
            (s.heaps, s.heap_bytes, s.heap_allocations, s.objects_created),
            (
                first.heaps,
                first.heap_bytes,
                first.heap_allocations,
                first.objects_created
            ),
            "frame {i}"
        );
        assert_eq!(s.executions, i as u64 + 1);
    }
    drop(graph);
    assert_clean(&ctx);
}

/// Without aliasing every transient has its own heap, and the results are the same.
#[test]
fn aliasing_off_gives_each_transient_its_own_memory_and_the_same_result() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let [a, b, c] = transients(&graph);
    let out = readback(&ctx);
    image_frame(&ctx, &graph, [&a, &b, &c], &out, 77, None)
        .0
        .wait()
        .unwrap();
    let aliased = read(&out);
    let with = graph.transient_stats();
    graph.set_transient_aliasing(false);
    for _ in 0..2 {
        image_frame(&ctx, &graph, [&a, &b, &c], &out, 77, None)
            .0
            .wait()
            .unwrap();
        assert!(read(&out) == aliased, "without aliasing");
    }
    let without = graph.transient_stats();
    assert_eq!((without.sets, without.heaps), (1, 3), "{without:?}");
    assert!(without.heap_bytes >= 3 * BYTES, "{without:?}");
    assert!(with.heap_bytes < without.heap_bytes);
    // Back on: one heap again.
    graph.set_transient_aliasing(true);
    image_frame(&ctx, &graph, [&a, &b, &c], &out, 78, None)
        .0
        .wait()
        .unwrap();
    assert_filled(&read(&out), 78, "aliasing back on");
    assert_eq!(graph.transient_stats().heaps, 1);
    drop(graph);
    assert_clean(&ctx);
}

/// Executions in flight at once bind heap sets of their own (other images, other memory):
/// three kept in flight by a long dispatch take three sets; a loop that then keeps two in
/// flight reuses them and creates nothing more.
///
/// Not a host-signalled gate (`common/gate.rs`): layers 1.4.309 and 1.4.363 would not retire
/// the gated executions at their fence waits, and report the loop's reuse of their memory as a
/// hazard. Three sets can only be counted while all three executions were in flight, so a
/// device that finished one early fails the test rather than passing it.
#[test]
fn each_execution_in_flight_gets_a_heap_set_of_its_own() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let [a, b, c] = transients(&graph);
    let outs: Vec<Arc<StBuffer>> = (0..3).map(|_| readback(&ctx)).collect();
    // Each dispatch outlasts recording the three executions by far.
    let mut busy = Busy::new(&ctx, ctx.graphics(), Duration::from_millis(300));
    let held: Vec<(ExecutionFence, vk::Image)> = (0..3)
        .map(|i| {
            image_frame(
                &ctx,
                &graph,
                [&a, &b, &c],
                &outs[i],
                50 + i as u8,
                Some(&mut busy),
            )
        })
        .collect();
    let stats = graph.transient_stats();
    assert_eq!((stats.sets, stats.heaps), (3, 3), "{stats:?}");
    let handles: Vec<vk::Image> = held.iter().map(|h| h.1).collect();
    assert!(
        handles[0] != handles[1] && handles[1] != handles[2] && handles[0] != handles[2],
        "{handles:?}"
    );
    for (i, (fence, _)) in held.into_iter().enumerate() {
        fence.wait().unwrap();
        assert_filled(&read(&outs[i]), 50 + i as u8, &format!("held frame {i}"));
    }
    let mut in_flight: Vec<(usize, ExecutionFence)> = Vec::new();
    for frame in 0..8usize {
        if in_flight.len() == 2 {
            let (f, fence) = in_flight.remove(0);
            fence.wait().unwrap();
            assert_filled(&read(&outs[f % 3]), f as u8, &format!("frame {f}"));
        }
        let (fence, _) = image_frame(
            &ctx,
            &graph,
            [&a, &b, &c],
            &outs[frame % 3],
            frame as u8,
            None,
        );
        in_flight.push((frame, fence));
    }
    for (f, fence) in in_flight {
        fence.wait().unwrap();
        assert_filled(&read(&outs[f % 3]), f as u8, &format!("frame {f}"));
    }
    let after = graph.transient_stats();
    assert_eq!(
        (after.sets, after.heap_allocations, after.objects_created),
        (stats.sets, stats.heap_allocations, stats.objects_created)
    );
    drop(graph);
    drop(busy);
    assert_clean(&ctx);
}

/// The same name and description give the same handle; bad uses are clear errors.
#[test]
fn transients_are_kept_by_name_and_misuse_is_refused() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let a = graph.transient_image(image_desc(), "a").unwrap();
    assert!(Arc::ptr_eq(
        &a,
        &graph.record().transient_image(image_desc(), "a").unwrap()
    ));
    let bigger = ImageDesc::new_2d(
        2 * SIDE,
        SIDE,
        vk::Format::R8G8B8A8_UNORM,
        vk::ImageUsageFlags::TRANSFER_SRC,
    );
    assert!(!Arc::ptr_eq(
        &a,
        &graph.transient_image(bigger, "a").unwrap()
    ));
    assert_eq!(graph.transient_stats().objects_created, 2, "two probes");

    // Read before any pass wrote it.
    let q = ctx.graphics();
    let out = readback(&ctx);
    let err = graph
        .record()
        .insert_fn(
            "read a",
            q,
            |d| {
                d.uses(&a, Access::COPY_READ);
                d.uses(&out, Access::COPY_WRITE).discard();
            },
            |_| Ok(()),
        )
        .finish()
        .expect_err("a read before any write");
    assert!(
        err.to_string()
            .contains("the first use of a transient must write all of it"),
        "{err}"
    );

    // Another graph's transient.
    let other = ctx.graph().unwrap();
    let err = other
        .record()
        .insert_fn(
            "clear",
            q,
            |d| {
                d.uses(&a, Access::CLEAR_COLOR_WRITE).discard();
            },
            |_| Ok(()),
        )
        .finish()
        .unwrap()
        .execute()
        .expect_err("another graph's transient");
    assert!(
        err.to_string().contains("belongs to another graph"),
        "{err}"
    );

    // A handoff records outside the graph's binding.
    let err = graph
        .hand_off("app clear", q, |d| {
            d.uses(&a, Access::CLEAR_COLOR_WRITE).discard();
        })
        .expect_err("a handoff with a transient");
    assert!(
        err.to_string().contains("handoff cannot use transients"),
        "{err}"
    );

    // Host-visible transients, and graphs without an allocator.
    let err = graph
        .transient_buffer(
            BufferDesc::upload(64, vk::BufferUsageFlags::TRANSFER_SRC),
            "staging",
        )
        .err()
        .unwrap();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // SAFETY: the context's device, from its instance and physical device, has
    // synchronization2 and timeline semaphores and outlives the graph.
    let bare =
        unsafe { Graph::new(ctx.instance(), ctx.physical_device(), ctx.device(), None) }.unwrap();
    // Another graph's transient in a graph that never made one (so has nothing to bind with).
    let err = bare
        .record()
        .insert_fn(
            "clear",
            q,
            |d| {
                d.uses(&a, Access::CLEAR_COLOR_WRITE).discard();
            },
            |_| Ok(()),
        )
        .finish()
        .unwrap()
        .execute()
        .expect_err("another graph's transient, in a graph without transients");
    assert!(
        err.to_string().contains("belongs to another graph"),
        "{err}"
    );
    let err = bare.transient_image(image_desc(), "a").err().unwrap();
    assert!(
        err.to_string().contains("no allocator for transients"),
        "{err}"
    );
    drop((bare, other, graph));
    assert_clean(&ctx);
}
