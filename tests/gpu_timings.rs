//! Per-pass GPU timings (`Graph::set_gpu_timings`): what the fence hands over, in order and
//! consistent, with either way of resetting the queries; nothing when off. Validation and
//! synchronization validation on: any message fails.

mod common;

use common::*;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::timing::{GpuTimings, TimestampSupport};
use vk_baton::{Access, BufferDesc, Declare, Graph, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::Context;

/// Enough bytes that filling them takes measurable time, even on a GPU.
const BIG: u64 = 64 << 20;

/// `vkCmdFillBuffer` of the whole buffer.
struct Fill(Arc<StBuffer>, u32);

impl Pass for Fill {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // SAFETY: the buffer is alive and in the declared state.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, self.1)
        };
        Ok(())
    }
}

struct Buffers {
    big: Arc<StBuffer>,
    copy: Arc<StBuffer>,
    small: Arc<StBuffer>,
}

fn buffers(ctx: &Context) -> Buffers {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let make = |size, name| ctx.buffer(BufferDesc::new(size, usage), name).unwrap();
    Buffers {
        big: make(BIG, "big"),
        copy: make(1 << 20, "copy"),
        small: make(256, "small"),
    }
}

/// Three passes on `q`: a large fill, a copy from it, a small fill; executed and waited for.
/// Returns what the fence hands over.
fn frame(graph: &Graph, q: &Queue, b: &Buffers) -> Option<GpuTimings> {
    let mut fill = Fill(b.big.clone(), 7);
    let mut copy = CopyBuffer {
        src: b.big.clone(),
        dst: b.copy.clone(),
    };
    let mut small = Fill(b.small.clone(), 9);
    let fence = graph
        .record()
        .insert_pass("fill big", &mut fill, q)
        .insert_pass("copy", &mut copy, q)
        .insert_pass("fill small", &mut small, q)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    let times = fence.take_gpu_timings();
    assert!(fence.take_gpu_timings().is_none(), "handed over once");
    times
}

/// Three entries in program order on `q`, each ending after it starts, starts and ends never
/// going back on the queue, and the large fill taking time.
fn check(times: &GpuTimings, q: &Queue) {
    let names: Vec<&str> = times.passes().iter().map(|t| t.pass()).collect();
    assert_eq!(names, ["fill big", "copy", "fill small"], "{times:?}");
    for t in times {
        assert_eq!(t.queue(), q);
        assert!(t.start_ns() <= t.end_ns(), "{t:?}");
        assert_eq!(t.duration_ns(), t.end_ns() - t.start_ns());
    }
    for w in times.passes().windows(2) {
        assert!(w[0].start_ns() <= w[1].start_ns(), "{times:?}");
        assert!(w[0].end_ns() <= w[1].end_ns(), "{times:?}");
    }
    let big = times.get("fill big").unwrap();
    assert!(big.duration_ns() > 0, "a 64 MiB fill takes time: {big:?}");
    assert_eq!(
        times.busy_ns(q),
        times.passes().iter().map(|t| t.duration_ns()).sum::<u64>()
    );
    let (first, last) = times.span_ns(q).unwrap();
    assert_eq!(
        (first, last),
        (times.passes()[0].start_ns(), times.passes()[2].end_ns())
    );
    let line = times.to_string();
    assert!(
        line.starts_with("fill big ") && line.contains(" ms (graphics), copy "),
        "{line}"
    );
}

#[test]
fn timed_passes_come_in_program_order_with_consistent_times() {
    let ctx = ctx();
    let support = ctx.timestamp_support();
    assert!(
        support.valid_bits(ctx.graphics().family()) > 0,
        "lavapipe and every GPU time graphics queues"
    );
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(support));
    let b = buffers(&ctx);
    // Several frames: the later ones reuse the first one's query pool (and plan).
    for _ in 0..4 {
        let times = frame(&graph, ctx.graphics(), &b).expect("timed");
        check(&times, ctx.graphics());
    }
    drop(graph);
    assert_clean(&ctx);
}

/// Without host query reset, each batch resets its queries with `vkCmdResetQueryPool`.
#[test]
fn queries_reset_in_the_command_buffer_without_host_reset() {
    let ctx = ctx();
    // SAFETY: the context's physical device belongs to its instance.
    let support = unsafe { TimestampSupport::query(ctx.instance(), ctx.physical_device()) };
    assert!(!support.host_query_reset());
    assert!(
        ctx.timestamp_support().host_query_reset(),
        "lavapipe has it"
    );
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(support));
    let b = buffers(&ctx);
    for _ in 0..3 {
        let times = frame(&graph, ctx.graphics(), &b).expect("timed");
        check(&times, ctx.graphics());
    }
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn untimed_graphs_hand_over_nothing_and_timing_can_stop() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let b = buffers(&ctx);
    assert!(
        frame(&graph, ctx.graphics(), &b).is_none(),
        "off by default"
    );
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    check(&frame(&graph, ctx.graphics(), &b).unwrap(), ctx.graphics());
    graph.set_gpu_timings(None);
    assert!(frame(&graph, ctx.graphics(), &b).is_none(), "off again");
    drop(graph);
    assert_clean(&ctx);
}

/// Fences dropped before completion, a failed recording and a held plan: the query pools go
/// back and the next timed frames are right.
#[test]
fn dropped_fences_failed_recordings_and_held_plans_keep_timing_right() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    let b = buffers(&ctx);
    let q = ctx.graphics();
    for _ in 0..3 {
        let mut fill = Fill(b.big.clone(), 1);
        let fence = graph
            .record()
            .insert_pass("dropped", &mut fill, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        drop(fence);
    }
    let failed = graph
        .record()
        .insert_fn(
            "fails",
            q,
            |_| {},
            |_| Err(vk_baton::Error::PassFailed("no".into())),
        )
        .finish()
        .unwrap()
        .execute();
    assert!(failed.is_err());
    check(&frame(&graph, q, &b).unwrap(), q);

    let mut fill = Fill(b.big.clone(), 3);
    let mut held = graph
        .record()
        .insert_pass("held fill", &mut fill, q)
        .finish()
        .unwrap()
        .hold();
    for _ in 0..3 {
        let fence = held.execute().unwrap();
        fence.wait().unwrap();
        let times = fence.take_gpu_timings().unwrap();
        assert_eq!(times.passes().len(), 1);
        assert_eq!(times.passes()[0].pass(), "held fill");
        assert!(times.passes()[0].duration_ns() > 0);
    }
    drop(held);
    drop(graph);
    assert_clean(&ctx);
}

/// Passes on two queues (one `VkQueue` on lavapipe, two on most GPUs): each pass keeps its
/// queue, in program order.
#[test]
fn passes_on_two_queues_keep_their_queue() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    let b = buffers(&ctx);
    let (gfx, compute) = (ctx.graphics(), ctx.async_compute());
    let mut fill = Fill(b.big.clone(), 5);
    let mut copy = CopyBuffer {
        src: b.big.clone(),
        dst: b.copy.clone(),
    };
    let fence = graph
        .record()
        .insert_pass("fill on compute", &mut fill, compute)
        .insert_pass("copy on graphics", &mut copy, gfx)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    let times = fence.take_gpu_timings().unwrap();
    let got: Vec<(&str, &Queue)> = times
        .passes()
        .iter()
        .map(|t| (t.pass(), t.queue()))
        .collect();
    assert_eq!(
        got,
        [("fill on compute", compute), ("copy on graphics", gfx)]
    );
    drop(graph);
    assert_clean(&ctx);
}

/// Three families (the NVIDIA machine): a fill on the transfer queue, a copy on async compute,
/// a copy on graphics, with ownership transfers between them. Every pass is timed on its own
/// queue with host query reset; without it, the transfer-only queue cannot reset queries
/// (`vkCmdResetQueryPool` needs graphics or compute) and its pass is left out.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn three_families_time_each_pass_on_its_own_queue() {
    let ctx = ctx();
    let (gfx, compute, transfer) = (ctx.graphics(), ctx.async_compute(), ctx.transfer());
    assert!(
        compute.family() != gfx.family() && transfer.family() != gfx.family(),
        "this test needs dedicated compute and transfer queue families, but `{}` has {gfx:?}, {compute:?}, {transfer:?}",
        ctx.device_name()
    );
    let host = ctx.timestamp_support();
    assert!(
        host.host_query_reset(),
        "the context enables hostQueryReset"
    );
    for family in [gfx.family(), compute.family(), transfer.family()] {
        assert!(
            host.valid_bits(family) > 0,
            "family {family} has timestamps"
        );
    }
    // SAFETY: the context's physical device belongs to its instance.
    let in_cmd = unsafe { TimestampSupport::query(ctx.instance(), ctx.physical_device()) };
    let b = buffers(&ctx);
    let graph = ctx.graph().unwrap();
    for (support, expected) in [
        (
            host,
            vec![
                ("fill on transfer", transfer),
                ("copy on compute", compute),
                ("copy on graphics", gfx),
            ],
        ),
        (
            in_cmd,
            vec![("copy on compute", compute), ("copy on graphics", gfx)],
        ),
    ] {
        graph.set_gpu_timings(Some(support));
        for _ in 0..2 {
            let mut fill = Fill(b.big.clone(), 5);
            let mut to_copy = CopyBuffer {
                src: b.big.clone(),
                dst: b.copy.clone(),
            };
            let mut to_small = CopyBuffer {
                src: b.copy.clone(),
                dst: b.small.clone(),
            };
            let fence = graph
                .record()
                .insert_pass("fill on transfer", &mut fill, transfer)
                .insert_pass("copy on compute", &mut to_copy, compute)
                .insert_pass("copy on graphics", &mut to_small, gfx)
                .finish()
                .unwrap()
                .execute()
                .unwrap();
            fence.wait().unwrap();
            let times = fence.take_gpu_timings().unwrap();
            let got: Vec<(&str, &Queue)> = times
                .passes()
                .iter()
                .map(|t| (t.pass(), t.queue()))
                .collect();
            assert_eq!(got, expected);
            for t in &times {
                assert!(t.start_ns() <= t.end_ns(), "{t:?}");
            }
            // Timed with host reset (the first round), and then taking time.
            let fill = times.get("fill on transfer");
            assert!(fill.is_none_or(|f| f.duration_ns() > 0), "{fill:?}");
            assert!(times.get("copy on compute").unwrap().duration_ns() > 0);
        }
    }
    drop(graph);
    assert_clean(&ctx);
}

/// `Graph::capture_report` (feature `report`): of four executions, the first three go into the
/// report when they complete, with their GPU times, whether a fence saw them complete (the
/// first two) or it was dropped (the third, found complete by the graph later), and the
/// later ones are not captured. The app's fence still hands over its times.
#[cfg(feature = "report")]
#[test]
fn a_report_capture_takes_the_next_executions_with_their_times() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    let q = ctx.graphics();
    let b = buffers(&ctx);
    let capture = graph.capture_report("timed frames", 3);
    for _ in 0..2 {
        assert!(
            frame(&graph, q, &b).is_some(),
            "the fence's times are still there"
        );
    }
    assert_eq!(capture.completed(), 2);
    let mut fill = Fill(b.small.clone(), 1);
    let dropped = graph
        .record()
        .insert_pass("dropped", &mut fill, q)
        .finish()
        .unwrap();
    drop(dropped.execute().unwrap());
    // The graph looks at executions whose fences were dropped when it records the next: by
    // the second frame after it, the dropped one (earlier on the same queue) is complete.
    frame(&graph, q, &b);
    frame(&graph, q, &b);
    assert!(capture.is_done(), "{} of 3", capture.completed());
    let html = capture.to_html();
    for label in ["execution 0", "execution 1", "execution 2"] {
        assert!(html.contains(&format!("\"label\":\"{label}\"")), "{label}");
    }
    assert!(!html.contains("execution 3"));
    assert_eq!(html.matches("\"axis\":\"measured\"").count(), 3);
    assert_eq!(html.matches("\"findings\":[]").count(), 3);
    assert_clean(&ctx);
}
