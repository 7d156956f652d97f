//! Replay keys: a held plan told its keys changed, keys that alternate per frame in flight,
//! a miss that records over the set submitted longest ago, and the keys asked again after a
//! pass's `replayed` hook.

use super::*;

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

/// Holds a plan of `passes` (the frame's upload, the passes under test, its download and its
/// read) and runs frames `1..=count` on it as [`run_held`] does.
fn held_frames<'a>(
    graph: &'a vk_baton::Graph,
    q: &'a vk_baton::Queue,
    passes: Vec<(&'static str, &'a mut dyn Pass)>,
    f: (&StBuffer, &StBuffer),
    count: u32,
    error: Option<&str>,
    each: impl FnMut(u32),
) -> String {
    let mut b = graph.record();
    for (name, pass) in passes {
        b = b.insert_pass(name, pass, q);
    }
    let mut held = b.finish().unwrap().hold();
    run_held(&mut held, f, 1..=count, error, each)
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
    let passes: Vec<(&str, &mut dyn Pass)> = vec![
        ("upload", &mut upload),
        ("hook", &mut hook),
        ("download", &mut f.download),
        ("read", &mut f.read),
    ];
    let frames = held_frames(&graph, &q, passes, (&f.input, &f.out), 40, None, |_| {});
    let recorded: Vec<usize> = frames.match_indices('x').map(|(i, _)| i + 1).collect();
    assert_eq!(recorded, [1, 2, 21]);
    assert_eq!((upload_asked.get(), hook_asked.get()), (4, 40));
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
    let asked = std::cell::Cell::new(0);
    let mut hook = Hooked {
        generation: Generation::new(),
        calls: 0,
        bump_at: 3,
        fails: true,
        asked: &asked,
    };
    let passes: Vec<(&str, &mut dyn Pass)> = vec![
        ("upload", &mut f.upload),
        ("hook", &mut hook),
        ("download", &mut f.download),
        ("read", &mut f.read),
    ];
    let fails = Some("the hook fails");
    let frames = held_frames(&graph, &q, passes, (&f.input, &f.out), 10, fails, |_| {});
    assert_eq!(frames, "xx..Ex....");
    drop(graph);
    common::assert_clean(&ctx);
}

/// A pass that records nothing, steered by the frame loop: `fail` makes its `record()` fail
/// and `bump` makes it move its key first; with `hook`, its key asks for `replayed`, which
/// takes its key away until it records again.
struct Steered<'c> {
    generation: Generation,
    hook: bool,
    keyless: bool,
    fail: &'c std::cell::Cell<bool>,
    bump: &'c std::cell::Cell<bool>,
}

impl<'c> Steered<'c> {
    fn new(hook: bool, fail: &'c std::cell::Cell<bool>, bump: &'c std::cell::Cell<bool>) -> Self {
        Steered {
            generation: Generation::new(),
            hook,
            keyless: false,
            fail,
            bump,
        }
    }
}

impl Pass for Steered<'_> {
    fn declare(&self, _: &mut Declare<'_>) {}
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.keyless = false;
        if self.bump.get() {
            self.generation.bump();
        }
        if self.fail.get() {
            return Err(vk_baton::Error::InvalidInput("the pass fails".into()));
        }
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: it records no command.
        let key = unsafe { self.generation.key() };
        match (self.keyless, self.hook) {
            (true, _) => None,
            (false, true) => Some(key.calling_replayed()),
            (false, false) => Some(key),
        }
    }
    fn replayed(&mut self, _: &vk_baton::CompletionToken) -> vk_baton::Result<()> {
        self.keyless = true;
        Ok(())
    }
}

/// A hooked pass whose hook takes its key away (until it records), and a recording that
/// fails on frame 4: the keys cut short by the missing key are asked for again in full, so
/// frame 5 replays the frame's recording rather than keeping one under the short keys.
///
/// ```text
/// frame:     1  2  3  4  5  6  7  8  9  10
/// hook key:  k  k  k  -  k  -  k  -  k  -     (-: none, after a replay)
/// recorded:  x  x  .  E  .  x  .  x  .  x     (E: the recording fails)
/// ```
#[test]
fn keys_cut_short_by_a_pass_with_none_are_asked_again_in_full() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (fail, never) = (std::cell::Cell::new(false), std::cell::Cell::new(false));
    let mut hooked = Steered::new(true, &never, &never);
    let mut failing = Steered::new(false, &fail, &never);
    let passes: Vec<(&str, &mut dyn Pass)> = vec![
        ("upload", &mut f.upload),
        ("hooked", &mut hooked),
        ("failing", &mut failing),
        ("download", &mut f.download),
        ("read", &mut f.read),
    ];
    let fails = Some("the pass fails");
    let frames = held_frames(&graph, &q, passes, (&f.input, &f.out), 10, fails, |n| {
        fail.set(n == 4)
    });
    assert_eq!(frames, "xx.E.x.x.x");
    drop(graph);
    common::assert_clean(&ctx);
}

/// A pass moves its key as it records, and a later pass's recording fails (frame 4, which
/// records because frame 3's recording is still in flight): frame 5 asks for the keys
/// again and records, rather than replaying frame 3's recording under the old key.
///
/// ```text
/// frame:     1  2  3  4  5  6
/// recorded:  x  x  .  E  x  .     (3 in flight during 4; E: moves a key, then fails)
/// ```
#[test]
fn a_recording_that_moves_a_key_and_fails_leaves_the_keys_to_be_asked_again() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (input, out) = (f.input.clone(), f.out.clone());
    let (fail, bump, never) = (
        std::cell::Cell::new(false),
        std::cell::Cell::new(false),
        std::cell::Cell::new(false),
    );
    let mut moving = Steered::new(false, &never, &bump);
    let mut failing = Steered::new(false, &fail, &never);
    // Keeps each execution in flight for a while: frame 3's, while frame 4 runs.
    let busy = busy::Busy::new(&ctx, &q, std::time::Duration::from_millis(50));
    let mut busy = super::in_flight::KeyedBusy(busy, Generation::new());
    let mut held = graph
        .record()
        .insert_pass("busy", &mut busy, &q)
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("moving", &mut moving, &q)
        .insert_pass("failing", &mut failing, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    let mut frames = String::new();
    let mut run = |held: &mut vk_baton::HeldPlan<'_>, n: u32| {
        write(&input, n);
        let fence = held.execute().unwrap();
        frames.push(if fence.replayed() { '.' } else { 'x' });
        fence
    };
    for n in 1..=2 {
        run(&mut held, n).wait().unwrap();
        check(&out, n);
    }
    let third = run(&mut held, 3);
    // Frame 4 while frame 3's recording is in flight: it records; `moving` moves its key,
    // then `failing` fails.
    assert!(
        !third.is_complete(),
        "frame 3 completed before frame 4: the busy pass is too short"
    );
    fail.set(true);
    bump.set(true);
    let Err(e) = held.execute() else {
        panic!("frame 4 fails")
    };
    assert!(e.to_string().contains("the pass fails"), "{e}");
    fail.set(false);
    bump.set(false);
    third.wait().unwrap();
    check(&out, 3);
    for n in 5..=6 {
        run(&mut held, n).wait().unwrap();
        check(&out, n);
    }
    assert_eq!(frames, "xx.x.");
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}
