//! Frames planned with a schedule (culled and reordered, as `GraphBuilder::schedule` plans
//! them), with transients, and handoffs (`Graph::hand_off`) between frames: the scenarios of
//! `tests/transients/culled.rs` and `tests/handoff.rs` on every topology.

use super::*;
use vk_baton::plan::{Schedule, TransientMemory};

fn transient(s: &mut S, name: &str) -> usize {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let memory = TransientMemory::buffer(4096, 256, 0b1);
    s.sim
        .add_resource(ResourceDecl::buffer(name, 4096, usage).transient(memory))
}

/// Transient `kept` is filled on async compute and copied into the app's `out` on graphics;
/// transient `dropped` is written only by a copy of `kept` that nothing reads, and `scratch`
/// only by a fill on the transfer queue that nothing reads. Culled, both are dropped, and
/// `kept` alone is placed; without culling every pass stays and every transient is placed.
/// The frames cycle through culling in program order, culling reordered, and no culling.
pub(crate) fn culled_transients(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let kept = transient(&mut s, "kept");
    let dropped = transient(&mut s, "dropped");
    let scratch = transient(&mut s, "scratch");
    let out = s.buf("out", 4096, XFER);
    let passes = vec![
        pass("fill kept", s.c, [ud(kept, Access::TRANSFER_WRITE)]),
        pass(
            "kept to dropped",
            s.g,
            [u(kept, Access::COPY_READ), ud(dropped, Access::COPY_WRITE)],
        ),
        pass("fill scratch", s.t, [ud(scratch, Access::TRANSFER_WRITE)]),
        pass(
            "kept to out",
            s.g,
            [u(kept, Access::COPY_READ), ud(out, Access::COPY_WRITE)],
        ),
    ];
    let schedules = [
        Schedule::PROGRAM_ORDER.with_culling(),
        Schedule::REORDER.with_culling(),
        Schedule::PROGRAM_ORDER,
    ];
    for f in 0..3 * FRAMES {
        let schedule = schedules[f % 3];
        let r = s.run_as(Frame::Graph(&passes, schedule));
        let placed: Vec<usize> = r
            .plan
            .transients
            .placements
            .iter()
            .map(|p| r.resources[p.resource])
            .collect();
        if schedule.cull {
            assert_eq!(r.plan.culled(), [1, 2], "{topo:?} frame {f}\n{}", r.plan);
            assert_eq!(placed, [kept], "{topo:?} frame {f}\n{}", r.plan);
            // `kept` is written on async compute and read on graphics: a wait (and a transfer
            // across families), as in any frame.
            let w = usize::from(s.c != s.g);
            let transfers = if s.cross(s.c, s.g) { 2 } else { 0 };
            check(&s, "culled", &r, (1 + w, w, transfers));
        } else {
            assert_eq!(r.plan.order, [0, 1, 2, 3], "{topo:?} frame {f}");
            assert_eq!(
                placed,
                [kept, dropped, scratch],
                "{topo:?} frame {f}\n{}",
                r.plan
            );
        }
    }
    // A frame reuses the kept plan of the frame three before it (the same schedule) once both
    // find `out` as a frame before left it: every frame from the fifth on. The first culled
    // frame found `out` fresh.
    assert_eq!(
        s.reuse_pattern(),
        format!("pppp{}", "r".repeat(3 * FRAMES - 4)),
        "{topo:?}"
    );
    3 * FRAMES
}

/// A buffer written by a graph on async compute, then handed to the app on graphics
/// (`Graph::hand_off`), frame after frame: across families the library releases it on async
/// compute and the app's batch acquires it; the next frame waits for the app's read. A handoff
/// that uses a transient is refused, and changes nothing.
pub(crate) fn handoffs(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let data = s.sim.add_resource(ResourceDecl::buffer("data", 256, usage));
    let scratch = transient(&mut s, "scratch");
    let write = [pass("write", s.c, [ud(data, Access::COMPUTE_SHADER_WRITE)])];
    let app = pass("app read", s.g, [u(data, Access::COMPUTE_SHADER_READ)]);
    let app_scratch = pass("app scratch", s.g, [ud(scratch, Access::TRANSFER_WRITE)]);
    for f in 0..FRAMES {
        s.run(write.to_vec());
        let before = s.sim.last_values().to_vec();
        match s.sim.frame(Frame::HandOff(&app_scratch)) {
            Err(SimError::Refused { error, .. }) => assert!(
                error.to_string().contains("handoff cannot use transients"),
                "{error}"
            ),
            other => panic!("{topo:?}: a handoff with a transient: {other:?}"),
        }
        assert_eq!(
            s.sim.last_values(),
            before,
            "{topo:?}: a refused frame changed nothing"
        );
        let r = s.run_as(Frame::HandOff(&app));
        let app_batch = r.plan.app_batch().expect("the shape of a handoff");
        assert_eq!(r.queues[app_batch.queue], s.g);
        // The library's release-only batch, on async compute across families.
        let releases = r
            .plan
            .queues
            .iter()
            .enumerate()
            .filter(|&(q, qp)| q != app_batch.queue && !qp.batches.is_empty())
            .count();
        assert_eq!(
            releases,
            usize::from(s.cross(s.c, s.g)),
            "{topo:?} frame {f}"
        );
        // From the second frame on the same handoff meets the same states: its kept plan.
        assert_eq!(
            r.reused,
            f > 0,
            "{topo:?} frame {f}: a handoff that comes back"
        );
        let transfers = if s.cross(s.c, s.g) { 2 } else { 0 };
        let w = usize::from(s.c != s.g);
        check(&s, "handoff", &r, (1 + releases, w, transfers));
    }
    2 * FRAMES
}
