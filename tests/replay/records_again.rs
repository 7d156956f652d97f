//! What a held plan records again when labels or GPU timings switch, what a culled pass is
//! told on a replay, and the recordings of resources the app dropped: four faults a review
//! found, each stated here.

use super::*;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use vk_baton::plan::Schedule;

/// Labels switched off, then on again, under a held plan: each switch records once, then
/// the frames replay; switching back finds the recording with labels still kept. Before, a
/// held plan asked for no key after the switch, so it recorded under the old hash of the
/// passes' names, then again once the keys were asked (`xx..` off), and that second
/// recording took the place of the one with labels (`xx.` on).
///
/// ```text
/// frames:   1 2 3 4 | labels off: 5 6 7 8 | labels on: 9 10 11
/// recorded: x x . . |             x . . . |            .  .  .
/// ```
#[test]
fn a_held_plan_records_once_when_labels_switch() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    assert!(
        graph.debug().is_some(),
        "the validated context has debug utils"
    );
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let io = (f.input.clone(), f.out.clone());
    let io = (&*io.0, &*io.1);
    let mut held = graph
        .record()
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    let run = |held: &mut vk_baton::HeldPlan<'_>, frames| run_held(held, io, frames, None, |_| {});
    assert_eq!(run(&mut held, 1..=4), "xx..", "steady");
    graph.set_labels(false);
    assert_eq!(run(&mut held, 5..=8), "x...", "labels off");
    graph.set_labels(true);
    assert_eq!(run(&mut held, 9..=11), "...", "labels on again");
    assert_eq!(held.replayed(), 8);
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}

/// A pass with a `replayed` hook that the plan culls: it is never recorded, so a replay
/// calls no hook of it either. Before, the hook ran on every replay (4 times in 6 frames).
#[test]
fn a_culled_pass_gets_no_replayed_call() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let scratch = graph
        .transient_buffer(BufferDesc::new(SIZE, usage), "scratch")
        .unwrap();
    let (records, hooks) = (Cell::new(0), Cell::new(0));
    let mut culled = CulledHooked {
        scratch,
        records: &records,
        hooks: &hooks,
    };
    let mut frames = String::new();
    for n in 1..=6 {
        f.write(n);
        let planned = graph
            .record()
            .insert_pass("culled", &mut culled, &q)
            .insert_pass("upload", &mut f.upload, &q)
            .insert_pass("download", &mut f.download, &q)
            .insert_pass("read", &mut f.read, &q)
            .schedule(Schedule::PROGRAM_ORDER.with_culling())
            .finish()
            .unwrap();
        assert_eq!(planned.plan().culled(), [0], "the scratch pass is culled");
        let fence = planned.execute().unwrap();
        fence.wait().unwrap();
        f.check(n);
        frames.push(if fence.replayed() { '.' } else { 'x' });
    }
    assert_eq!(frames, "xx....");
    assert_eq!((records.get(), hooks.get()), (0, 0), "(records, hooks)");
    drop(graph);
    common::assert_clean(&ctx);
}

/// Writes a transient nobody reads (so culling drops it) and asks for `replayed`, counting
/// its `record()` and `replayed()` calls.
struct CulledHooked<'c> {
    scratch: Arc<StBuffer>,
    records: &'c Cell<u32>,
    hooks: &'c Cell<u32>,
}

impl Pass for CulledHooked<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.scratch, Access::TRANSFER_WRITE);
    }
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.records.set(self.records.get() + 1);
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: it records no command.
        Some(unsafe { ReplayKey::new(7) }.calling_replayed())
    }
    fn replayed(&mut self, _: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
        self.hooks.set(self.hooks.get() + 1);
        Ok(())
    }
}

/// Once the app dropped the resources a frame's recordings name, the graph's next frames give
/// those recordings back, with what they keep alive, rather than keeping them until their
/// plan is evicted. Before, both guards lived on (`(2, 0)`) until the graph was dropped.
#[test]
fn recordings_of_dropped_resources_are_given_back() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let (made, dropped) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    {
        let mut f = Frame::new(&ctx);
        let mut upload = in_flight::KeepsAGuard {
            copy: Copy::new(&f.input, &f.mid),
            made: made.clone(),
            dropped: dropped.clone(),
        };
        let replayed: Vec<bool> = (1..=4)
            .map(|n| f.run_with(&mut upload, &graph, &q, n))
            .collect();
        assert_eq!(replayed, [false, false, true, true]);
        // Two recordings (of the plans for fresh and for written states), a guard each.
        assert_eq!((made.load(SeqCst), dropped.load(SeqCst)), (2, 0));
        // The app drops the passes and every buffer they named.
    }
    let usage = vk::BufferUsageFlags::TRANSFER_DST;
    let mut read_other = HostRead(buffer(&ctx, BufferDesc::readback(SIZE, usage), "other"));
    for _ in 0..3 {
        let frame = graph.record().insert_pass("other", &mut read_other, &q);
        frame.finish().unwrap().execute().unwrap().wait().unwrap();
    }
    assert_eq!(
        (made.load(SeqCst), dropped.load(SeqCst)),
        (2, 2),
        "(made, dropped)"
    );
    drop(graph);
    common::assert_clean(&ctx);
}

/// With labels off and GPU timings on, a pass renamed between frames: each frame's timings
/// name the passes as that frame named them (the renamed frame records, since the timings
/// show the names). Before, frames 4 to 6 replayed and their timings said "upload".
#[test]
fn a_replayed_frames_timings_name_its_own_passes() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    graph.set_labels(false);
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let mut frames = String::new();
    for n in 1..=6u32 {
        let name = if n <= 3 { "upload" } else { "upload, renamed" };
        f.write(n);
        let fence = (graph.record())
            .insert_pass(name, &mut f.upload, &q)
            .insert_pass("download", &mut f.download, &q)
            .insert_pass("read", &mut f.read, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        f.check(n);
        let times = fence.take_gpu_timings().expect("timed");
        assert_eq!(times.passes()[0].pass(), name, "frame {n}'s timings");
        frames.push(if fence.replayed() { '.' } else { 'x' });
    }
    assert_eq!(frames, "xx.x..");
    drop(graph);
    common::assert_clean(&ctx);
}

/// A frame away from the plan cache while the app drops the resources its recordings name (a
/// held plan on other buffers took it, made with replay off), then given back when the held
/// plan re-plans: its recording of them is given back too, though the cache looked at its own
/// frames while that one was away. Before, it stayed until some other image or buffer was
/// dropped: guards given back `(1, 1)`.
#[test]
fn a_frame_away_from_the_cache_gives_back_recordings_of_dropped_resources() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let (made, dropped) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let mut a = Frame::new(&ctx);
    let mut a_upload = in_flight::KeepsAGuard {
        copy: Copy::new(&a.input, &a.mid),
        made: made.clone(),
        dropped: dropped.clone(),
    };
    for n in 1..=4 {
        a.run_with(&mut a_upload, &graph, &q, n);
    }
    assert_eq!((made.load(SeqCst), dropped.load(SeqCst)), (2, 0));

    // With replay off, the held plan of frame `b` takes one of `a`'s kept frames.
    let mut b = Frame::new(&ctx);
    let io = (b.input.clone(), b.out.clone());
    graph.set_replay(false);
    let mut held = (graph.record())
        .insert_pass("upload", &mut b.upload, &q)
        .insert_pass("download", &mut b.download, &q)
        .insert_pass("read", &mut b.read, &q)
        .finish()
        .unwrap()
        .hold();
    graph.set_replay(true);
    drop((a, a_upload));
    // Frames on another buffer: the cache gives back the recording it keeps.
    let usage = vk::BufferUsageFlags::TRANSFER_DST;
    let mut other = HostRead(buffer(&ctx, BufferDesc::readback(SIZE, usage), "other"));
    let mut run_other = || {
        for _ in 0..3 {
            let frame = graph.record().insert_pass("other", &mut other, &q);
            frame.finish().unwrap().execute().unwrap().wait().unwrap();
        }
    };
    run_other();
    let while_away = dropped.load(SeqCst);
    run_held(&mut held, (&io.0, &io.1), 1..=4, None, |_| {});
    assert!(held.replanned() >= 1, "the held plan re-planned");
    drop(held);
    run_other();
    assert_eq!(
        (while_away, dropped.load(SeqCst)),
        (1, 2),
        "guards given back"
    );
    drop(graph);
    common::assert_clean(&ctx);
}
