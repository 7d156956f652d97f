//! Replay beside what a frame loop runs: frames in flight, several queue families,
//! swapchain-style images in rotation, two threads on one queue, a pass that fails to
//! record, what a recording keeps alive, transients in two heap sets, and GPU timings.

use super::*;

/// `Busy` with a replay key: its one dispatch is the same every execution.
pub(super) struct KeyedBusy(pub(super) busy::Busy, pub(super) Generation);

impl Pass for KeyedBusy {
    fn declare(&self, d: &mut Declare<'_>) {
        self.0.declare(d)
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.0.record(r)
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: `Busy` records the same dispatch every time, on objects it owns.
        Some(unsafe { self.1.key() })
    }
}

#[test]
fn frames_in_flight_replay_idle_recordings_and_keep_at_most_three() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let src = buffer(&ctx, BufferDesc::upload(SIZE, usage), "src");
    let mid = buffer(&ctx, BufferDesc::new(SIZE, usage), "mid");
    let dst = buffer(&ctx, BufferDesc::readback(SIZE, usage), "dst");
    write(&src, 7);
    let (mut there, mut back) = (Copy::new(&src, &mid), Copy::new(&mid, &dst));
    // Each execution stays in flight for a while after the next ones are submitted.
    let busy = busy::Busy::new(&ctx, &q, std::time::Duration::from_millis(20));
    let mut busy = KeyedBusy(busy, Generation::new());
    // Four executions in flight: each frame waits only for the one four frames before it.
    let mut in_flight = std::collections::VecDeque::new();
    let mut replayed = Vec::new();
    for frame in 1..=13 {
        if in_flight.len() == 4 {
            let fence: vk_baton::ExecutionFence = in_flight.pop_front().unwrap();
            fence.wait().unwrap();
        }
        let before = in_flight.back().map(vk_baton::ExecutionFence::completion);
        let fence = graph
            .record()
            .insert_pass("busy", &mut busy, &q)
            .insert_pass("there", &mut there, &q)
            .insert_pass("back", &mut back, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        // What the pattern below relies on: the frame before is still running.
        let running = before.is_none_or(|t| !t.is_complete());
        assert!(running, "frame {frame}: the busy pass was not long enough");
        replayed.push(fence.replayed());
        in_flight.push_back(fence);
    }
    for fence in in_flight {
        fence.wait().unwrap();
    }
    // Frame 1 records; frame 2 finds frame 1's states, plans again and records; frames 3 and
    // 4 find the recordings before them in flight and record a second and a third; frame 5
    // finds all three in flight and records once, keeping nothing. From frame 6 on, a frame
    // finds idle the recording of the frame four before it, which replays, unless that frame
    // recorded once: then all three are in flight again (frame 9, frame 13).
    let r = |v: &str| v.chars().map(|c| c == 'R').collect::<Vec<_>>();
    assert_eq!(replayed, r("-----RRR-RRR-"), "{replayed:?}");
    let mut read = HostRead(dst.clone());
    let last = graph.record().insert_pass("read", &mut read, &q);
    last.finish().unwrap().execute().unwrap().wait().unwrap();
    check(&dst, 7);
    drop(graph);
    common::assert_clean(&ctx);
}

/// Three queue families: the host's input copied on the transfer queue, moved on the
/// compute queue, read back on the graphics queue, with ownership transfers and semaphores
/// between them in every frame, replayed. Ignored by default: run on the NVIDIA machine
/// (`--include-ignored`); a device with one family fails it with a clear message.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn a_multi_family_frame_replays() {
    let ctx = common::ctx();
    let (t, c, g) = (
        ctx.transfer().clone(),
        ctx.async_compute().clone(),
        ctx.graphics().clone(),
    );
    let families = [t.family(), c.family(), g.family()];
    assert!(
        families[0] != families[2] && families[1] != families[2],
        "this test needs dedicated transfer and compute families, but `{}` has {families:?}",
        ctx.device_name()
    );
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let input = buffer(&ctx, BufferDesc::upload(SIZE, usage), "input");
    let a = buffer(&ctx, BufferDesc::new(SIZE, usage), "a");
    let b = buffer(&ctx, BufferDesc::new(SIZE, usage), "b");
    let out = buffer(&ctx, BufferDesc::readback(SIZE, usage), "out");
    let (mut up, mut across) = (Copy::new(&input, &a), Copy::new(&a, &b));
    let (mut down, mut read) = (Copy::new(&b, &out), HostRead(out.clone()));
    let mut replayed = 0;
    for n in 1..=300 {
        write(&input, n);
        let fence = graph
            .record()
            .insert_pass("up", &mut up, &t)
            .insert_pass("across", &mut across, &c)
            .insert_pass("down", &mut down, &g)
            .insert_pass("read", &mut read, &g)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        check(&out, n);
        replayed += u32::from(fence.replayed());
    }
    assert_eq!(replayed, 298, "every frame from the third on replays");
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn three_images_in_rotation_each_replay_their_own_recording() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let input = buffer(&ctx, BufferDesc::upload(SIZE, usage), "input");
    let mid = buffer(&ctx, BufferDesc::new(SIZE, usage), "mid");
    // Like a swapchain's images: one of three each frame, in turn, behind a shared `mid`.
    let outs: Vec<_> = (0..3)
        .map(|i| buffer(&ctx, BufferDesc::readback(SIZE, usage), &format!("out{i}")))
        .collect();
    let mut upload = Copy::new(&input, &mid);
    let mut downloads: Vec<_> = outs.iter().map(|o| Copy::new(&mid, o)).collect();
    let mut reads: Vec<_> = outs.iter().map(|o| HostRead(o.clone())).collect();
    let mut replayed = Vec::new();
    for n in 1..=30u32 {
        let i = n as usize % 3;
        write(&input, n);
        let fence = graph
            .record()
            .insert_pass("upload", &mut upload, &q)
            .insert_pass("download", &mut downloads[i], &q)
            .insert_pass("read", &mut reads[i], &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        check(&outs[i], n);
        replayed.push(fence.replayed());
    }
    // Each image's first frame plans and records its own plan (its `out` starts undefined);
    // its second finds `out` written and records once more; from its third on, it replays
    // the recording its own plan kept, though the other images' frames moved `mid` on.
    let r = |v: &str| v.chars().map(|c| c == 'R').collect::<Vec<_>>();
    let want = r("------RRRRRRRRRRRRRRRRRRRRRRRR");
    assert_eq!(replayed, want, "{replayed:?}");
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn two_threads_replay_their_graphs_on_one_queue() {
    let ctx = common::ctx();
    let q = ctx.graphics().clone();
    let replays: Vec<u32> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|t| {
                let (ctx, q) = (&ctx, &q);
                s.spawn(move || {
                    let graph = ctx.graph().unwrap();
                    graph.set_replay(true);
                    let mut f = Frame::new(ctx);
                    let frames = (1..=200).map(|n| f.run(&graph, q, n * 2 + t));
                    frames.map(u32::from).sum()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(
        replays,
        [198, 198],
        "each thread's frames from the third on"
    );
    common::assert_clean(&ctx);
}

/// Fails its `record()` on the frames `fail` names, as a pass with an error does.
struct FailsSometimes {
    copy: Copy,
    frame: u32,
    fail: &'static [u32],
}

impl Pass for FailsSometimes {
    fn declare(&self, d: &mut Declare<'_>) {
        self.copy.declare(d)
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.frame += 1;
        if self.fail.contains(&self.frame) {
            return Err(vk_baton::Error::InvalidInput("this frame fails".into()));
        }
        self.copy.record(r)
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        self.copy.replay_key()
    }
}

#[test]
fn a_pass_that_fails_to_record_leaves_the_kept_recordings_right() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let f = Frame::new(&ctx);
    let (mut download, mut read) = (f.download, f.read);
    // Its recordings fail at the first and third: the second kept set stays, the first is
    // given back.
    let mut upload = FailsSometimes {
        copy: f.upload,
        frame: 0,
        fail: &[1, 3],
    };
    let mut outcomes = Vec::new();
    for n in 1..=6 {
        write(&f.input, n);
        let executed = graph
            .record()
            .insert_pass("upload", &mut upload, &q)
            .insert_pass("download", &mut download, &q)
            .insert_pass("read", &mut read, &q)
            .finish()
            .unwrap()
            .execute();
        outcomes.push(match executed {
            Err(e) => {
                assert!(e.to_string().contains("upload"), "{e}");
                'E'
            }
            Ok(fence) => {
                fence.wait().unwrap();
                check(&f.out, n);
                if fence.replayed() {
                    'R'
                } else {
                    '-'
                }
            }
        });
    }
    // Frame 1's recording fails; frame 2 plans from the fresh states again and records;
    // frame 3's recording (the plan for written states) fails; frame 4 records it; frames 5
    // and 6 replay.
    assert_eq!(String::from_iter(outcomes), "E-E-RR");
    drop(graph);
    common::assert_clean(&ctx);
}

/// Counts the guards its `record()` asks the graph to keep alive, and those dropped.
pub(super) struct KeepsAGuard {
    pub(super) copy: Copy,
    pub(super) made: Arc<std::sync::atomic::AtomicU32>,
    pub(super) dropped: Arc<std::sync::atomic::AtomicU32>,
}

/// Counts itself dropped.
struct Guard(Arc<std::sync::atomic::AtomicU32>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Pass for KeepsAGuard {
    fn declare(&self, d: &mut Declare<'_>) {
        self.copy.declare(d)
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        r.keep_alive(Guard(self.dropped.clone()));
        self.copy.record(r)
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        self.copy.replay_key()
    }
}

#[test]
fn what_a_recording_kept_alive_lives_as_long_as_the_recording() {
    use std::sync::atomic::Ordering::SeqCst;
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (made, dropped) = (Arc::default(), Arc::default());
    let mut upload = KeepsAGuard {
        copy: Copy::new(&f.input, &f.mid),
        made: Arc::clone(&made),
        dropped: Arc::clone(&dropped),
    };
    let mut run = |n: u32, upload: &mut KeepsAGuard| f.run_with(upload, &graph, &q, n);
    let replayed: Vec<bool> = (1..=5).map(|n| run(n, &mut upload)).collect();
    assert_eq!(replayed, [false, false, true, true, true]);
    // The two recordings (of the plans for fresh and for written states) keep their guards,
    // though their executions completed: replays submit what the guards keep alive.
    assert_eq!((made.load(SeqCst), dropped.load(SeqCst)), (2, 0));
    // Recorded again: the old recording's guard goes with the execution that replaced it.
    graph.invalidate_recordings();
    assert!(!run(6, &mut upload));
    assert_eq!((made.load(SeqCst), dropped.load(SeqCst)), (3, 1));
    // The graph goes, and with it the recordings and what they kept.
    drop(graph);
    assert_eq!((made.load(SeqCst), dropped.load(SeqCst)), (3, 3));
    common::assert_clean(&ctx);
}

/// The frame of [`Frame`] through two transient buffers: `input` to `t0`, `t0` to `t1`, `t1`
/// to `out`, and the host's read.
struct TransientFrame {
    passes: [Copy; 3],
    read: HostRead,
}

impl TransientFrame {
    fn new(graph: &vk_baton::Graph, input: &Arc<StBuffer>, out: &Arc<StBuffer>) -> Self {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let t = |name| {
            graph
                .transient_buffer(BufferDesc::new(SIZE, usage), name)
                .unwrap()
        };
        let (t0, t1) = (t("t0"), t("t1"));
        let passes = [
            Copy::new(input, &t0),
            Copy::new(&t0, &t1),
            Copy::new(&t1, out),
        ];
        TransientFrame {
            passes,
            read: HostRead(out.clone()),
        }
    }

    fn execute(
        &mut self,
        graph: &vk_baton::Graph,
        q: &vk_baton::Queue,
    ) -> vk_baton::ExecutionFence {
        let [a, b, c] = &mut self.passes;
        let frame = graph
            .record()
            .insert_pass("in", a, q)
            .insert_pass("across", b, q)
            .insert_pass("out", c, q)
            .insert_pass("read", &mut self.read, q);
        frame.finish().unwrap().execute().unwrap()
    }
}

#[test]
fn transients_replay_per_heap_set() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let input = buffer(&ctx, BufferDesc::upload(SIZE, usage), "input");
    let out = buffer(&ctx, BufferDesc::readback(SIZE, usage), "out");
    let mut frame = TransientFrame::new(&graph, &input, &out);
    // One execution at a time: one heap set, whose objects each replay names.
    let mut replayed = String::new();
    for n in 1..=20 {
        write(&input, n);
        let fence = frame.execute(&graph, &q);
        fence.wait().unwrap();
        check(&out, n);
        replayed.push(if fence.replayed() { 'R' } else { '-' });
    }
    assert_eq!(replayed, format!("--{}", "R".repeat(18)));
    assert_eq!(graph.transient_stats().sets, 1);
    // Two executions in flight (the busy pass holds each): two heap sets, each with its own
    // objects, and a recording for each.
    let busy = busy::Busy::new(&ctx, &q, std::time::Duration::from_millis(20));
    let mut busy = KeyedBusy(busy, Generation::new());
    let mut in_flight = std::collections::VecDeque::new();
    let mut replayed = String::new();
    for _ in 0..12 {
        if in_flight.len() == 2 {
            let fence: vk_baton::ExecutionFence = in_flight.pop_front().unwrap();
            fence.wait().unwrap();
        }
        let [a, b, c] = &mut frame.passes;
        let fence = graph
            .record()
            .insert_pass("busy", &mut busy, &q)
            .insert_pass("in", a, &q)
            .insert_pass("across", b, &q)
            .insert_pass("out", c, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        replayed.push(if fence.replayed() { 'R' } else { '-' });
        in_flight.push_back(fence);
    }
    in_flight.into_iter().for_each(|f| f.wait().unwrap());
    assert_eq!(graph.transient_stats().sets, 2);
    // Frame 1 plans the new shape and records on the first set; frame 2 plans again (from
    // the busy pass's written scratch) and records on the second set, the first being in
    // flight; frame 3 has that plan on the first set, which it records there; from then on
    // each frame's set has its recording.
    assert_eq!(replayed, format!("---{}", "R".repeat(9)));
    let fence = frame.execute(&graph, &q);
    fence.wait().unwrap();
    check(&out, 20);
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn timed_frames_replay_and_read_their_kept_queries() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let mut replayed = String::new();
    let mut last_start = 0;
    for n in 1..=10 {
        write(&f.input, n);
        let fence = graph
            .record()
            .insert_pass("upload", &mut f.upload, &q)
            .insert_pass("download", &mut f.download, &q)
            .insert_pass("read", &mut f.read, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        check(&f.out, n);
        replayed.push(if fence.replayed() { 'R' } else { '-' });
        // Every frame's own times, replayed or not: the pass names, in order, and starts
        // that move on from frame to frame (the queries were reset and written again).
        let times = fence.take_gpu_timings().expect("timed");
        let names: Vec<&str> = times.passes().iter().map(|t| t.pass()).collect();
        assert_eq!(names, ["upload", "download", "read"], "frame {n}");
        let first = &times.passes()[0];
        assert!(first.end_ns() >= first.start_ns(), "frame {n}");
        assert!(first.start_ns() > last_start, "frame {n}: a new time");
        last_start = first.start_ns();
    }
    assert_eq!(replayed, "--RRRRRRRR");
    // Two frames in flight, the first one's times read after the second was submitted: a
    // recording whose fence has not read its timestamps is not replayed over them.
    let mut pipelined = |n: u32| {
        write(&f.input, n);
        let frame = graph
            .record()
            .insert_pass("upload", &mut f.upload, &q)
            .insert_pass("download", &mut f.download, &q)
            .insert_pass("read", &mut f.read, &q);
        frame.finish().unwrap().execute().unwrap()
    };
    let first = pipelined(11);
    // The GPU is done with it (seen through its token, not its fence, which reads nothing).
    let token = first.completion();
    while !token.is_complete() {
        std::thread::yield_now();
    }
    let second = pipelined(12);
    first.wait().unwrap();
    let times = [first.take_gpu_timings(), {
        second.wait().unwrap();
        second.take_gpu_timings()
    }];
    let starts = times.map(|t| t.expect("timed").passes()[0].start_ns());
    assert!(starts[1] > starts[0], "{starts:?}: each frame's own times");
    assert!(
        first.replayed() && !second.replayed(),
        "the second found the first's unread"
    );
    // Timings off: the recording with timestamps is not this frame's; it records once more.
    graph.set_gpu_timings(None);
    let untimed = frames(&mut f, &graph, &q, &mut 12, 2);
    assert_eq!(untimed, [false, true]);
    drop(graph);
    common::assert_clean(&ctx);
}
