//! Frames recorded once and submitted again (`Graph::set_replay`): a steady frame whose
//! inputs the host changes every frame replays its recording with the data right, and every
//! cause of recording again (a pass's key, labels, the app's invalidation, a state not at
//! rest, another plan, a resource made anew, a pass with no key) records once and then
//! replays again. Validation on, any message fails.

#[path = "common/busy.rs"]
mod busy;
mod common;

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferDesc, Declare, Pass, Recorder, StBuffer};
use vk_baton_context::Context;

const SIZE: u64 = 256;
const WORDS: usize = (SIZE / 4) as usize;

/// Copies all of `src` into `dst`; replayable while its generation stays, or under a fixed
/// key (`fixed`).
struct Copy {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    generation: Generation,
    fixed: Option<ReplayKey>,
}

impl Copy {
    fn new(src: &Arc<StBuffer>, dst: &Arc<StBuffer>) -> Self {
        let (src, dst) = (src.clone(), dst.clone());
        let generation = Generation::new();
        Copy {
            src,
            dst,
            generation,
            fixed: None,
        }
    }
}

impl Pass for Copy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::COPY_READ);
        d.uses(&self.dst, Access::COPY_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default().size(SIZE);
        // SAFETY: `cmd` is recording; both buffers are alive, SIZE long, in the declared states.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name only the two buffers, which the pass keeps alive, and
        // change only with them (a new pass, a new generation). A fixed key is the caller's.
        self.fixed.or(Some(unsafe { self.generation.key() }))
    }
}

/// The host reads `buf` after the GPU; records nothing, so its key never changes.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: it records no command.
        Some(unsafe { ReplayKey::new(0) })
    }
}

/// The frame: the host's `input` copied into device-local `mid`, `mid` into the readback
/// buffer `out`, and the host's read of `out`.
struct Frame {
    input: Arc<StBuffer>,
    mid: Arc<StBuffer>,
    out: Arc<StBuffer>,
    upload: Copy,
    download: Copy,
    read: HostRead,
}

fn buffer(ctx: &Context, desc: BufferDesc, name: &str) -> Arc<StBuffer> {
    ctx.buffer(desc, name).unwrap()
}

impl Frame {
    fn new(ctx: &Context) -> Self {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let input = buffer(ctx, BufferDesc::upload(SIZE, usage), "input");
        let mid = buffer(ctx, BufferDesc::new(SIZE, usage), "mid");
        let out = buffer(ctx, BufferDesc::readback(SIZE, usage), "out");
        Frame {
            upload: Copy::new(&input, &mid),
            download: Copy::new(&mid, &out),
            read: HostRead(out.clone()),
            input,
            mid,
            out,
        }
    }

    fn write(&self, n: u32) {
        write(&self.input, n);
    }

    fn check(&self, n: u32) {
        check(&self.out, n);
    }

    /// Runs frame `n` through the builder and waits: whether it replayed.
    fn run(&mut self, graph: &vk_baton::Graph, q: &vk_baton::Queue, n: u32) -> bool {
        self.write(n);
        let fence = graph
            .record()
            .insert_pass("upload", &mut self.upload, q)
            .insert_pass("download", &mut self.download, q)
            .insert_pass("read", &mut self.read, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        self.check(n);
        fence.replayed()
    }

    /// Runs frame `n` as [`Frame::run`] does, with `upload` in place of the frame's own.
    fn run_with(
        &mut self,
        upload: &mut Copy,
        graph: &vk_baton::Graph,
        q: &vk_baton::Queue,
        n: u32,
    ) -> bool {
        std::mem::swap(&mut self.upload, upload);
        let replayed = self.run(graph, q, n);
        std::mem::swap(&mut self.upload, upload);
        replayed
    }
}

/// Frame `n`'s words.
fn words(n: u32) -> Vec<u8> {
    (0..WORDS as u32)
        .flat_map(|i| (n.wrapping_mul(0x9e37_79b9) ^ i).to_le_bytes())
        .collect()
}

/// Writes frame `n`'s words into `input`.
fn write(input: &StBuffer, n: u32) {
    input.write(0, &words(n)).unwrap();
}

/// Asserts that `out` holds frame `n`'s words.
fn check(out: &StBuffer, n: u32) {
    let mut bytes = vec![0u8; SIZE as usize];
    out.read(0, &mut bytes).unwrap();
    assert!(
        bytes == words(n),
        "frame {n}: out is not what the host wrote"
    );
}

#[test]
fn a_steady_frame_replays_while_the_host_changes_its_input() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut frame = Frame::new(&ctx);
    let replayed: Vec<bool> = (1..=1000).map(|n| frame.run(&graph, &q, n)).collect();
    // Frame 1 records (its plan starts from undefined contents); frame 2 finds the states
    // frame 1 left, which plans differently, and records again; frame 3 is at rest on that
    // plan, whose recording is idle (waited for): from then on every frame replays it.
    let first = replayed.iter().position(|&r| r);
    assert_eq!(first, Some(2), "{:?}", &replayed[..8]);
    assert_eq!(replayed.iter().filter(|&&r| r).count(), 998);
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn a_held_plan_counts_its_replays() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (input, out) = (f.input.clone(), f.out.clone());
    let mut held = graph
        .record()
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    for n in 1..=1000 {
        write(&input, n);
        held.execute().unwrap().wait().unwrap();
        check(&out, n);
    }
    // As the builder's frames: frames 1 and 2 record, the rest replay.
    assert_eq!((held.replanned(), held.replayed()), (1, 998));
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}

/// Copies slot `slot` (`SIZE` bytes at `slot * SIZE`) of `src` into `dst`: the slot of the frame
/// in flight, which the frame loop sets, as a pass that picks a descriptor set per slot does.
struct SlotCopy<'s> {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    slot: &'s std::cell::Cell<u64>,
}

impl Pass for SlotCopy<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::COPY_READ);
        d.uses(&self.dst, Access::COPY_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default()
            .src_offset(self.slot.get() * SIZE)
            .size(SIZE);
        // SAFETY: `cmd` is recording; both buffers are alive, in the declared states, and the
        // region is inside each.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name the two buffers, which the pass keeps alive, and the slot,
        // which is the key; the test asks the held plan to refresh its keys after each change.
        Some(unsafe { ReplayKey::new(self.slot.get()) })
    }
}

/// A held plan whose upload reads the slot the loop sets, as with two frames in flight: asked
/// for its keys again each frame, it keeps a recording per slot and replays the right one.
///
/// ```text
/// frame:     1  2  3  4  5  6 ...
/// slot:      1  0  1  0  1  0
/// plan:      P1 P2 P2 P2 P2 P2   (P1: from fresh states)
/// recorded:  x  x  x  .  .  .    (2: P2, slot 0; 3: P2, slot 1)
/// ```
#[test]
fn a_held_plan_told_its_keys_changed_replays_each_slots_recording() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC;
    let slots = buffer(&ctx, BufferDesc::upload(2 * SIZE, usage), "slots");
    let slot = std::cell::Cell::new(0);
    let mut upload = SlotCopy {
        src: slots.clone(),
        dst: f.mid.clone(),
        slot: &slot,
    };
    let out = f.out.clone();
    let mut held = graph
        .record()
        .insert_pass("upload", &mut upload, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    let mut replayed = Vec::new();
    for n in 1..=40u32 {
        slot.set(u64::from(n % 2));
        // The other slot holds the last frame's words: a recording of the wrong slot shows.
        slots.write(u64::from(n % 2) * SIZE, &words(n)).unwrap();
        held.refresh_replay_keys();
        let fence = held.execute().unwrap();
        replayed.push(fence.replayed());
        fence.wait().unwrap();
        check(&out, n);
    }
    let mut expected = vec![true; 40];
    expected[..3].fill(false);
    assert_eq!(replayed, expected);
    assert_eq!(held.replayed(), 37);
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}

/// Two upload passes in turn, as an app with a pass per frame in flight has (each reads its
/// own slot of a ring): their keys alternate, and each keeps a recording of its own.
///
/// ```text
/// frame:     1  2  3  4  5  6 ...
/// upload:    A  B  A  B  A  B
/// plan:      P1 P2 P2 P2 P2 P2   (P1: from fresh states)
/// recorded:  x  x  x  .  .  .    (2: P2 with A; 3: P2 with B is beside it, not over it)
/// ```
#[test]
fn keys_that_alternate_keep_a_recording_each() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let mut other = Copy::new(&f.input, &f.mid);
    let mut replayed = Vec::new();
    for n in 1..=12 {
        replayed.push(match n % 2 {
            0 => f.run_with(&mut other, &graph, &q, n),
            _ => f.run(&graph, &q, n),
        });
    }
    let mut expected = vec![true; 12];
    expected[..3].fill(false);
    assert_eq!(replayed, expected);
    drop(graph);
    common::assert_clean(&ctx);
}

/// With no room for another set (a frame keeps three), a frame that misses records over the
/// idle set submitted longest ago, not over the one it would use next.
///
/// ```text
/// frame:     1  2  3  4  5  6  7  8
/// upload:    A  A  B  C  A  D  A  B
/// sets:      .  A  AB ABC ABC ADC ADC ADB   (D over B, submitted at 3; B over C, at 4)
/// replayed:  .  .  .  .  x  .  x  .
/// ```
#[test]
fn a_miss_records_over_the_set_submitted_longest_ago() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    // Upload passes B, C and D: the same copy, each with a key of its own.
    let mut others: Vec<Copy> = (0..3).map(|_| Copy::new(&f.input, &f.mid)).collect();
    let order = [None, None, Some(0), Some(1), None, Some(2), None, Some(0)];
    let mut replayed = Vec::new();
    for (n, other) in (1..).zip(order) {
        replayed.push(match other {
            Some(i) => f.run_with(&mut others[i], &graph, &q, n),
            None => f.run(&graph, &q, n),
        });
    }
    assert_eq!(
        replayed,
        [false, false, false, false, true, false, true, false]
    );
    drop(graph);
    common::assert_clean(&ctx);
}

/// Runs `frames` frames of `f` from frame `n` on: whether each replayed.
fn frames(
    f: &mut Frame,
    graph: &vk_baton::Graph,
    q: &vk_baton::Queue,
    n: &mut u32,
    frames: usize,
) -> Vec<bool> {
    (0..frames)
        .map(|_| {
            *n += 1;
            f.run(graph, q, *n)
        })
        .collect()
}

#[test]
fn each_cause_of_recording_again_records_once_then_replays() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let n = &mut 0;
    assert_eq!(
        frames(&mut f, &graph, &q, n, 3),
        [false, false, true],
        "steady"
    );

    // A pass's commands changed: its generation moved.
    f.upload.generation.bump();
    assert_eq!(frames(&mut f, &graph, &q, n, 2), [false, true], "a new key");

    // Labels on or off change what is recorded (when the graph has debug utils to record
    // them with).
    let labels = graph.debug().is_some();
    assert!(labels, "the validated context has debug utils");
    graph.set_labels(false);
    assert_eq!(
        frames(&mut f, &graph, &q, n, 2),
        [!labels, true],
        "labels off"
    );
    // Back on: the recording with labels is still kept beside the one without (a frame keeps
    // up to three), and replays.
    graph.set_labels(true);
    assert_eq!(frames(&mut f, &graph, &q, n, 2), [true, true], "labels on");

    // The app says its recordings are stale.
    graph.invalidate_recordings();
    assert_eq!(
        frames(&mut f, &graph, &q, n, 2),
        [false, true],
        "invalidated"
    );

    // Another graph ran the same frame: the resources moved on in time only, so the frame is
    // not at rest but its plan is the same (rebound to the new values), and so are the
    // barriers its recording holds: it replays.
    let elsewhere = ctx.graph().unwrap();
    *n += 1;
    f.run(&elsewhere, &q, *n);
    assert_eq!(
        frames(&mut f, &graph, &q, n, 2),
        [true, true],
        "moved on in time"
    );

    // Another frame read `mid` where the frame's next write must wait for it: a state that
    // changes the plan, which records. The frame after finds the steady states again, takes
    // the steady plan's kept frame, and replays its recording.
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let spare = buffer(&ctx, BufferDesc::new(SIZE, usage), "spare");
    let mut reader = Copy::new(&f.mid, &spare);
    let read_mid = graph.record().insert_pass("reader", &mut reader, &q);
    read_mid
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(
        frames(&mut f, &graph, &q, n, 3),
        [false, true, true],
        "a state that matters"
    );
    let mut other = Copy::new(&f.input, &f.mid);

    // Another plan: a frame of another shape records; the steady frame after it (its
    // resources moved on in time by it) takes its kept frame and replays.
    *n += 1;
    write(&f.input, *n);
    let fence = graph
        .record()
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("upload again", &mut other, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    assert!(!fence.replayed(), "a new plan records");
    check(&f.out, *n);
    assert_eq!(
        frames(&mut f, &graph, &q, n, 2),
        [true, true],
        "another plan"
    );

    // Replay off records every frame; back on, the kept recording is still the plan's.
    graph.set_replay(false);
    assert_eq!(
        frames(&mut f, &graph, &q, n, 2),
        [false, false],
        "replay off"
    );
    graph.set_replay(true);
    assert_eq!(frames(&mut f, &graph, &q, n, 1), [true], "replay on again");

    // A pass that gives no key: every frame records.
    let mut plain = common::CopyBuffer {
        src: f.mid.clone(),
        dst: f.out.clone(),
    };
    for _ in 0..3 {
        *n += 1;
        write(&f.input, *n);
        let fence = graph
            .record()
            .insert_pass("upload", &mut f.upload, &q)
            .insert_pass("download, no key", &mut plain, &q)
            .insert_pass("read", &mut f.read, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        assert!(!fence.replayed(), "a pass without a key records");
        check(&f.out, *n);
    }
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn a_resource_made_anew_records_again_even_under_the_same_pass_key() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let input = buffer(&ctx, BufferDesc::upload(SIZE, usage), "input");
    // A copy under a key that stays when its `dst` is replaced: only the resource's identity
    // tells the graph that the recording names another buffer.
    let mut pass = Copy::new(
        &input,
        &buffer(&ctx, BufferDesc::readback(SIZE, usage), "out"),
    );
    // SAFETY: the test's own bend of the contract: the key stays when `dst` is replaced, so
    // that the graph's resource identities alone must catch it (and the data check fails if
    // they do not). A real pass would bump a generation.
    pass.fixed = Some(unsafe { ReplayKey::new(1) });
    let run = |pass: &mut Copy, n: u32| {
        write(&input, n);
        let mut read = HostRead(pass.dst.clone());
        let fence = graph
            .record()
            .insert_pass("copy", &mut *pass, &q)
            .insert_pass("read", &mut read, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        check(&pass.dst, n);
        fence.replayed()
    };
    let steady: Vec<bool> = (1..=3).map(|n| run(&mut pass, n)).collect();
    assert_eq!(steady, [false, false, true]);
    let placeholder = buffer(&ctx, BufferDesc::readback(SIZE, usage), "placeholder");
    let mut same_handles = 0;
    for n in 4..=6 {
        // The old buffer goes: the pass lets go of it, and a frame on other resources makes
        // the graph let go of the frame it executed last. A new one takes its place, often
        // at the same handle value; the pass's key stays.
        let old = std::mem::replace(&mut pass.dst, placeholder.clone());
        let old_handle = old.handle();
        drop(old);
        let mut other = HostRead(input.clone());
        let flush = graph.record().insert_pass("other", &mut other, &q);
        flush.finish().unwrap().execute().unwrap().wait().unwrap();
        pass.dst = buffer(&ctx, BufferDesc::readback(SIZE, usage), "out");
        same_handles += u32::from(old_handle == pass.dst.handle());
        assert!(
            !run(&mut pass, n),
            "frame {n}: another `out`, recorded again"
        );
    }
    eprintln!("new buffers at the old handle value: {same_handles} of 3");
    drop(graph);
    common::assert_clean(&ctx);
}

/// `Busy` with a replay key: its one dispatch is the same every execution.
struct KeyedBusy(busy::Busy, Generation);

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
struct KeepsAGuard {
    copy: Copy,
    made: Arc<std::sync::atomic::AtomicU32>,
    dropped: Arc<std::sync::atomic::AtomicU32>,
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
    let f = Frame::new(&ctx);
    let (made, dropped) = (Arc::default(), Arc::default());
    let (mut download, mut read) = (f.download, f.read);
    let mut upload = KeepsAGuard {
        copy: f.upload,
        made: Arc::clone(&made),
        dropped: Arc::clone(&dropped),
    };
    let mut run = |n: u32, upload: &mut KeepsAGuard| {
        write(&f.input, n);
        let fence = graph
            .record()
            .insert_pass("upload", upload, &q)
            .insert_pass("download", &mut download, &q)
            .insert_pass("read", &mut read, &q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        check(&f.out, n);
        fence.replayed()
    };
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

/// A pass that records nothing and asks for [`Pass::replayed`], counting the calls; its hook
/// moves its key on its `bump_at`-th call, as a pass whose bookkeeping changes its commands,
/// and fails there too with `fails`.
struct Hooked<'c> {
    generation: Generation,
    calls: u32,
    bump_at: u32,
    fails: bool,
    asked: &'c std::cell::Cell<u32>,
}

impl Pass for Hooked<'_> {
    fn declare(&self, _: &mut Declare<'_>) {}
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        self.asked.set(self.asked.get() + 1);
        // SAFETY: it records no command.
        Some(unsafe { self.generation.key() }.calling_replayed())
    }
    fn replayed(&mut self, _: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
        self.calls += 1;
        if self.calls == self.bump_at {
            self.generation.bump();
            if self.fails {
                return Err(vk_baton::Error::InvalidInput("the hook fails".into()));
            }
        }
        Ok(())
    }
}

/// A pass of the frame, counting how often it is asked for its key.
struct Counted<'p> {
    pass: &'p mut Copy,
    asked: &'p std::cell::Cell<u32>,
}

impl Pass for Counted<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        self.pass.declare(d);
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.pass.record(r)
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        self.asked.set(self.asked.get() + 1);
        self.pass.replay_key()
    }
}

/// After a replay a held plan asks again only the pass whose `replayed` hook ran (it had
/// `&mut self`); the upload's key is asked for after each recording only. The hook moving its
/// key on its 18th call (frame 20) records frame 21 once; then the frames replay again.
///
/// ```text
/// frame:         1  2  3  4 ... 20 21 22 ... 40
/// recorded:      x  x  .  .      .  x  .      .
/// upload asked:  x  x  x  .      .  .  x      .   (after each recording: 4 times)
/// hook asked:    x  x  x  x      x  x  x      x   (every frame: 40 times)
/// ```
#[test]
fn after_a_replay_only_the_passes_with_a_hook_are_asked_for_their_keys() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (input, out) = (f.input.clone(), f.out.clone());
    let (upload_asked, hook_asked) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut upload = Counted {
        pass: &mut f.upload,
        asked: &upload_asked,
    };
    let mut hook = Hooked {
        generation: Generation::new(),
        calls: 0,
        bump_at: 18,
        fails: false,
        asked: &hook_asked,
    };
    let mut held = graph
        .record()
        .insert_pass("upload", &mut upload, &q)
        .insert_pass("hook", &mut hook, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    let mut recorded = Vec::new();
    for n in 1..=40 {
        write(&input, n);
        let fence = held.execute().unwrap();
        if !fence.replayed() {
            recorded.push(n);
        }
        fence.wait().unwrap();
        check(&out, n);
    }
    assert_eq!(recorded, [1, 2, 21]);
    assert_eq!((upload_asked.get(), hook_asked.get()), (4, 40));
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}

/// A hook that moves its key and then fails: its execution fails, and the next one asks for
/// the hook's key again and records, rather than replaying commands the key no longer names.
///
/// ```text
/// frame:     1  2  3  4  5  6  7 ...
/// recorded:  x  x  .  .  E  x  .       (E: the hook's 3rd call moves its key and fails)
/// ```
#[test]
fn a_hook_that_moves_its_key_and_fails_records_the_next_frame() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (input, out) = (f.input.clone(), f.out.clone());
    let asked = std::cell::Cell::new(0);
    let mut hook = Hooked {
        generation: Generation::new(),
        calls: 0,
        bump_at: 3,
        fails: true,
        asked: &asked,
    };
    let mut held = graph
        .record()
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("hook", &mut hook, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    let mut frames = String::new();
    for n in 1..=10 {
        write(&input, n);
        match held.execute() {
            Ok(fence) => {
                frames.push(if fence.replayed() { '.' } else { 'x' });
                fence.wait().unwrap();
                check(&out, n);
            }
            Err(e) => {
                assert!(e.to_string().contains("the hook fails"), "{e}");
                frames.push('E');
            }
        }
    }
    assert_eq!(frames, "xx..Ex....");
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}
