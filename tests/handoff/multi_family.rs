//! Handoffs across queue families: a transfer-family graph, a graphics-family handoff, and a
//! transfer-family graph again. Ignored by default: they need a dedicated transfer family.

use super::*;

fn multi_ctx() -> Context {
    let ctx = ctx();
    assert!(
        ctx.transfer().family() != ctx.graphics().family(),
        "this test needs a dedicated transfer family, but `{}` has graphics = {:?}, transfer = {:?}; run it on the NVIDIA machine",
        ctx.device_name(),
        ctx.graphics(),
        ctx.transfer()
    );
    ctx
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn multi_family_transfer_graph_then_graphics_handoff_then_transfer_graph() {
    let ctx = multi_ctx();
    let (t, g) = (ctx.transfer().clone(), ctx.graphics().clone());
    graph_handoff_graph(&ctx, (&t, &g, &t), LayoutPolicy::Optimal);
}

/// The same across families in `GENERAL`: the release and the acquire name `GENERAL` on both
/// sides.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn multi_family_handoff_in_general_layouts() {
    let ctx = multi_ctx();
    let (t, g) = (ctx.transfer().clone(), ctx.graphics().clone());
    graph_handoff_graph(&ctx, (&t, &g, &t), LayoutPolicy::General);
}

/// A release went to the transfer queue; the app never submits. The handoff's drop acquires
/// on graphics itself, so the buffer's contents survive and a graph on transfer reads them.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn multi_family_dropped_handoff_completes_the_ownership_transfer() {
    let ctx = multi_ctx();
    let (t, g) = (ctx.transfer().clone(), ctx.graphics().clone());
    let graph = ctx.graph().unwrap();
    let c = chain(&ctx);
    upload(&graph, &c, &t);
    let handoff = graph
        .hand_off("dropped", &g, |d| {
            d.uses(&c.data, Access::COPY_READ);
        })
        .unwrap();
    let value = handoff.signal_value();
    drop(handoff);
    assert_eq!(c.data.state().owner(), Some(Some(g.family())));
    copy_into_image(&graph, &c, &t);
    assert!(g.completed_value().unwrap() >= value);
    assert_eq!(download(&graph, &c, &t), c.pattern);
    drop(graph);
    assert_clean(&ctx);
}
