//! Frames recorded once and submitted again (`Graph::set_replay`): a steady frame whose
//! inputs the host changes every frame replays its recording with the data right, and every
//! cause of recording again (a pass's key, labels, the app's invalidation, a state not at
//! rest, another plan, a resource made anew, a pass with no key) records once and then
//! replays again. Validation on, any message fails.

#[path = "common/busy.rs"]
mod busy;
mod common;

#[path = "replay/in_flight.rs"]
mod in_flight;
#[path = "replay/keys.rs"]
mod keys;
#[path = "replay/records_again.rs"]
mod records_again;

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
        let Frame {
            input,
            out,
            upload,
            download,
            read,
            ..
        } = self;
        run_frame([upload, download, read], (input, out), graph, q, n)
    }

    /// Runs frame `n` as [`Frame::run`] does, with `upload` in place of the frame's own.
    fn run_with(
        &mut self,
        upload: &mut dyn Pass,
        graph: &vk_baton::Graph,
        q: &vk_baton::Queue,
        n: u32,
    ) -> bool {
        let passes: [&mut dyn Pass; 3] = [upload, &mut self.download, &mut self.read];
        run_frame(passes, (&self.input, &self.out), graph, q, n)
    }
}

/// Runs frame `n` of `passes` (an upload from `input`, a download and the host's read of
/// `out`) through the builder and waits, checking the data: whether it replayed.
fn run_frame(
    [upload, download, read]: [&mut dyn Pass; 3],
    (input, out): (&StBuffer, &StBuffer),
    graph: &vk_baton::Graph,
    q: &vk_baton::Queue,
    n: u32,
) -> bool {
    write(input, n);
    let fence = graph
        .record()
        .insert_pass("upload", upload, q)
        .insert_pass("download", download, q)
        .insert_pass("read", read, q)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    check(out, n);
    fence.replayed()
}

/// Runs `frames` of `held`, `each(n)` before frame `n`, the host writing frame `n`'s words
/// into `input` and checking them in `out` after every frame that ran. A character per frame:
/// `x` recorded, `.` replayed, `E` failed with an error that names `error` (any other error
/// fails the test).
fn run_held(
    held: &mut vk_baton::HeldPlan<'_>,
    (input, out): (&StBuffer, &StBuffer),
    frames: std::ops::RangeInclusive<u32>,
    error: Option<&str>,
    mut each: impl FnMut(u32),
) -> String {
    let mut outcomes = String::new();
    for n in frames {
        each(n);
        write(input, n);
        match held.execute() {
            Ok(fence) => {
                outcomes.push(if fence.replayed() { '.' } else { 'x' });
                fence.wait().unwrap();
                check(out, n);
            }
            Err(e) => {
                assert!(error.is_some_and(|m| e.to_string().contains(m)), "{e}");
                outcomes.push('E');
            }
        }
    }
    outcomes
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
