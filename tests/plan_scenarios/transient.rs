//! Transients on two queues: the whole plan, the aliasing dependencies the verifier must not
//! lose, and the refusals. (The placements check, which is private, is tested in
//! `src/transients/placement/tests.rs`.)

use super::*;

const MIB: u64 = 1 << 20;

fn image(name: &str, usage: vk::ImageUsageFlags) -> ResourceDecl {
    ResourceDecl::image(name, 1, 1, usage).transient(TransientMemory::image(MIB, 65536, 0b110))
}

/// Two queues of one family (graphics and async compute), five transients of 1 MiB:
/// `fill` (async) writes `a`; `draw` (graphics) samples `a` into `c`; `blur` (async) samples
/// `c` into `b`; `post` (graphics) samples `b` into `d`; `output` (graphics) samples `d` into
/// `e`, which `copy out` copies to the app's buffer `out`.
fn two_queues() -> PlanInput {
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let target = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let sample = Access::FRAGMENT_SHADER_SAMPLED_READ;
    let draw = Access::COLOR_ATTACHMENT_WRITE;
    PlanInput {
        queues: vec![
            QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
            QueueDecl::new(
                "async",
                0,
                vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
            ),
        ],
        resources: vec![
            image("a", storage),
            image("b", storage),
            image("c", target),
            image("d", target),
            image("e", target | vk::ImageUsageFlags::TRANSFER_SRC),
            ResourceDecl::buffer("out", MIB, vk::BufferUsageFlags::TRANSFER_DST),
        ],
        passes: vec![
            PassDecl::new("fill", 1).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("draw", 0)
                .with_use(UseDecl::new(0, sample))
                .with_use(UseDecl::new(2, draw)),
            PassDecl::new("blur", 1)
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_SAMPLED_READ))
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("post", 0)
                .with_use(UseDecl::new(1, sample))
                .with_use(UseDecl::new(3, draw)),
            PassDecl::new("output", 0)
                .with_use(UseDecl::new(3, sample))
                .with_use(UseDecl::new(4, draw)),
            PassDecl::new("copy out", 0)
                .with_use(UseDecl::new(4, Access::TRANSFER_READ))
                .with_use(UseDecl::new(5, Access::TRANSFER_WRITE)),
        ],
    }
}

/// The whole plan: `b` takes `a`'s memory (its first use on `async` waits for `draw`'s
/// sampling of `a` on `gfx`, through the wait `blur` already had for `c`: the signal now also
/// covers the fragment shader), `d` takes `c`'s (the wait for `b` now also guards the color
/// output, which `d`'s transition chains from), and `e` takes `b`'s on the same queue (a
/// barrier from `post`'s sampling). Two MiB instead of five, the lower bound.
///
/// ```text
/// async:  [fill] --a--.         .--> [blur: c -> b] --b--.
/// gfx:                '--> [draw: a -> c] --c--'          '--> [post: b -> d] --> [output: d -> e] --> [copy out: e -> out]
/// memory: a, b, e at 0 MiB; c, d at 1 MiB
/// ```
#[test]
fn two_queues_whole_plan() {
    let input = two_queues();
    let plan = plan(&input).unwrap();
    assert_plan!(
        plan,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `async` timeline after its batch 0 at FRAGMENT_SHADER
    barrier
      image  `a` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `draw`, after `fill`
      image  `c` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
    pass   `draw`
    signal timeline at FRAGMENT_SHADER | COLOR_ATTACHMENT_OUTPUT
  batch 1:
    wait   `async` timeline after its batch 1 at FRAGMENT_SHADER | COLOR_ATTACHMENT_OUTPUT
    barrier
      image  `b` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `post`, after `blur`
      image  `d` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `post`, after `blur` used the memory
    pass   `post`
    barrier
      image  `d` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `output`, after `post`
      image  `e` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, FRAGMENT_SHADER/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `output`, after `post` used the memory
    pass   `output`
    barrier
      image  `e` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `copy out`, after `output`
    pass   `copy out`
    signal timeline at ALL_COMMANDS
queue `async` (family 0):
  batch 0:
    barrier
      image  `a` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `fill`, with nothing before it
    pass   `fill`
    signal timeline at COMPUTE_SHADER
  batch 1:
    wait   `gfx` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      image  `c` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `blur`, after `draw`
      image  `b` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `blur`, after `draw` used the memory
    pass   `blur`
    signal timeline at ALL_COMMANDS
transient memory: 2097152 bytes in 1 heap(s); without aliasing 5242880, live-set lower bound 2097152
  heap 0: 2097152 bytes, alignment 65536, memory types 0b110
    `a` bytes 0..1048576: first `fill` (`async` batch 0 command 1), last `draw` (`gfx` batch 0 command 1), `fill` (`async` batch 0 command 1)
    `b` bytes 0..1048576: first `blur` (`async` batch 1 command 1), last `post` (`gfx` batch 1 command 1), `blur` (`async` batch 1 command 1); after `a`
    `e` bytes 0..1048576: first `output` (`gfx` batch 1 command 3), last `copy out` (`gfx` batch 1 command 5); after `b`
    `c` bytes 1048576..2097152: first `draw` (`gfx` batch 0 command 1), last `draw` (`gfx` batch 0 command 1), `blur` (`async` batch 1 command 1)
    `d` bytes 1048576..2097152: first `post` (`gfx` batch 1 command 1), last `output` (`gfx` batch 1 command 3); after `c`
"#
    );
    let site = |pass, queue, batch, command| UseSite {
        pass,
        queue,
        batch,
        command,
    };
    assert_eq!(
        plan.transients.heaps,
        vec![TransientHeap {
            size: 2 * MIB,
            alignment: 65536,
            memory_type_bits: 0b110
        }]
    );
    assert_eq!(
        plan.transients.placements[4],
        TransientPlacement {
            resource: 4,
            heap: 0,
            offset: 0,
            size: MIB,
            first_use: site(4, 0, 1, 3),
            last_uses: vec![site(5, 0, 1, 5)],
            // `a` is under `e` too, but `b` covers it and follows it.
            after: vec![1],
        }
    );
    let offsets: Vec<u64> = plan
        .transients
        .placements
        .iter()
        .map(|p| p.offset)
        .collect();
    assert_eq!(offsets, [0, 0, MIB, MIB, 0]);
    plan.verify().unwrap();
    // The app's buffer ends written; the transients end fresh.
    assert!(plan.final_states[5][0].1.defined);
    for r in 0..5 {
        assert_eq!(plan.final_states[r], vec![(0..1, SegmentState::default())]);
    }
}

/// Aliasing rides on the plan's own order: the same graph with ordinary resources has the
/// same batches and waits (only masks widen and barriers gain source stages).
///
/// ```text
/// the two-queue graph of `two_queues_whole_plan`, with and without transient memory
/// ```
#[test]
fn aliasing_adds_no_batch_and_no_wait() {
    let with = plan(&two_queues()).unwrap();
    let mut input = two_queues();
    for r in &mut input.resources {
        r.transient = None;
    }
    let without = plan(&input).unwrap();
    assert_plan!(
        without,
        r#"
queue `gfx` (family 0):
  batch 0:
    wait   `async` timeline after its batch 0 at FRAGMENT_SHADER
    barrier
      image  `a` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `draw`, after `fill`
      image  `c` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
    pass   `draw`
    signal timeline at COLOR_ATTACHMENT_OUTPUT
  batch 1:
    wait   `async` timeline after its batch 1 at FRAGMENT_SHADER
    barrier
      image  `b` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `post`, after `blur`
      image  `d` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `post`, with nothing before it
    pass   `post`
    barrier
      image  `d` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `output`, after `post`
      image  `e` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `output`, with nothing before it
    pass   `output`
    barrier
      image  `e` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> TRANSFER_SRC_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `copy out`, after `output`
    pass   `copy out`
    signal timeline at ALL_COMMANDS
queue `async` (family 0):
  batch 0:
    barrier
      image  `a` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `fill`, with nothing before it
    pass   `fill`
    signal timeline at COMPUTE_SHADER
  batch 1:
    wait   `gfx` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      image  `c` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `blur`, after `draw`
      image  `b` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `blur`, with nothing before it
    pass   `blur`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(with.batch_count(), without.batch_count());
    assert_eq!(with.semaphore_waits(), without.semaphore_waits());
    assert_eq!(with.barrier_commands(), without.barrier_commands());
    let targets = |p: &Plan| -> Vec<WaitTarget> {
        p.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.waits)
            .map(|w| w.target)
            .collect()
    };
    assert_eq!(targets(&with), targets(&without));
    assert_eq!(without.transients, TransientPlan::default());
}

/// The scopes of an image barrier entry of `plan` on resource `r` before pass `pass`.
fn entry_before(plan: &mut Plan, pass: usize, r: usize) -> &mut Scopes {
    for b in plan.queues.iter_mut().flat_map(|q| &mut q.batches) {
        let at = b.commands.iter().position(|c| *c == Command::Pass(pass));
        if let Some(Command::Barrier(bc)) = at
            .and_then(|i| i.checked_sub(1))
            .map(|i| &mut b.commands[i])
        {
            if let Some(e) = bc.images.iter_mut().find(|e| e.resource == r) {
                return &mut e.scopes;
            }
        }
    }
    panic!("no barrier on resource {r} before pass {pass}")
}

/// Verifies `plan`, expecting a violation between transients `x` and `y` sharing memory.
fn caught(plan: &Plan, x: &str, y: &str) {
    let v = plan.verify().expect_err("the mutant verifies");
    let shared = format!("transients `{x}` and `{y}` share memory");
    assert!(
        v.iter().any(|v| v.to_string().contains(&shared)),
        "no violation names {shared}:\n{}",
        v.iter().map(|v| format!("  {v}\n")).collect::<String>()
    );
}

/// Every aliasing dependency of the two-queue plan, removed, is caught by the verifier, which
/// models memory shared between transients.
#[test]
fn removing_an_aliasing_dependency_is_caught() {
    let plan = plan(&two_queues()).unwrap();
    let frag = vk::PipelineStageFlags2::FRAGMENT_SHADER;
    let color = vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT;
    // Across queues: `gfx`'s signal no longer covers `draw`'s sampling of `a`, which `b`'s
    // first use on `async` must follow.
    let mut m = plan.clone();
    let signal = m.queues[0].batches[0].signal.as_mut().unwrap();
    *signal &= !frag;
    caught(&m, "a", "b");
    // `d`'s first use on `gfx` no longer waits (at the color output) for `blur`'s sampling of
    // `c` on `async`...
    let mut m = plan.clone();
    m.queues[0].batches[1].waits[0].stages &= !color;
    caught(&m, "c", "d");
    // ...or its transition no longer chains from that wait.
    let mut m = plan.clone();
    entry_before(&mut m, 3, 3).src_stages &= !color;
    caught(&m, "c", "d");
    // On one queue: `e`'s barrier no longer follows `post`'s sampling of `b`.
    let mut m = plan.clone();
    entry_before(&mut m, 4, 4).src_stages &= !frag;
    caught(&m, "b", "e");
}

/// A placement that puts two transients in use at once on the same memory is caught: their
/// accesses are unordered, and each write destroys the other's contents.
#[test]
fn overlapping_live_transients_are_caught() {
    let mut plan = plan(&two_queues()).unwrap();
    // `e` onto `d`'s memory: `output` samples `d` while writing `e`.
    plan.transients.placements[4].offset = MIB;
    caught(&plan, "d", "e");
    // A placement outside its heap, or misaligned, is refused before any hazard.
    let mut bad = plan.clone();
    bad.transients.placements[4].offset = 2 * MIB - 4096;
    let v = bad.verify().unwrap_err();
    assert!(
        v.iter()
            .any(|v| v.to_string().contains("does not fit heap 0")),
        "{v:?}"
    );
    assert!(
        v.iter()
            .any(|v| v.to_string().contains("is not aligned to 65536")),
        "{v:?}"
    );
}

/// One graphics queue and transient `t`, used by the passes `uses` in turn.
fn one_queue(t: ResourceDecl, uses: &[UseDecl]) -> PlanInput {
    PlanInput {
        queues: vec![QueueDecl::new(
            "gfx",
            0,
            vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        )],
        resources: vec![t],
        passes: uses
            .iter()
            .enumerate()
            .map(|(i, u)| PassDecl::new(&format!("p{i}"), 0).with_use(*u))
            .collect(),
    }
}

fn refused(input: &PlanInput, words: &str) {
    match plan(input) {
        Err(Error::InvalidInput(msg)) => assert!(msg.contains(words), "{msg}"),
        other => panic!("expected InvalidInput containing {words:?}, got {other:?}"),
    }
}

/// A transient's first use must write all of it without reading; what comes after is free.
///
/// ```text
/// gfx:  [p0: t read-write, discarding] --t--> [p1: t mip 0 written] --t--> [p2: t read]
/// ```
#[test]
fn first_use_must_write_everything_without_reading() {
    let usage = vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::COLOR_ATTACHMENT
        | vk::ImageUsageFlags::TRANSFER_DST;
    let img = ResourceDecl::image("t", 2, 1, usage).transient(TransientMemory::image(MIB, 256, 1));
    let words = "first use of a transient must write all of it without reading";
    // A read, a read-write (load op LOAD), a write of one mip.
    refused(
        &one_queue(img.clone(), &[UseDecl::new(0, Access::COMPUTE_SHADER_READ)]),
        words,
    );
    let blend = UseDecl::new(0, Access::COLOR_ATTACHMENT_READ_WRITE);
    refused(&one_queue(img.clone(), &[blend]), words);
    let mip0 =
        UseDecl::new(0, Access::TRANSFER_WRITE).range(SubRange::Image(ImageRange::mip(0, 1)));
    refused(&one_queue(img.clone(), &[mip0]), words);
    // The same read-write, declared as discarding the old contents: accepted, then anything.
    let read = UseDecl::new(0, Access::COMPUTE_SHADER_READ);
    let ok = one_queue(img.clone(), &[blend.discard(), mip0, read]);
    let p = plan(&ok).unwrap();
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `t` mips 0+2 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_READ | COLOR_ATTACHMENT_WRITE
        why: for `p0`, with nothing before it
    pass   `p0`
    barrier
      image  `t` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> TRANSFER_DST_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `p1`, after `p0`
    pass   `p1`
    barrier
      image  `t` mips 0+1 layers 0+1: TRANSFER_DST_OPTIMAL -> GENERAL, ALL_TRANSFER/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `p2`, after `p1`
      image  `t` mips 1+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> GENERAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `p2`, after `p0`
    pass   `p2`
    signal timeline at ALL_COMMANDS
transient memory: 1048576 bytes in 1 heap(s); without aliasing 1048576, live-set lower bound 1048576
  heap 0: 1048576 bytes, alignment 256, memory types 0b1
    `t` bytes 0..1048576: first `p0` (`gfx` batch 0 command 1), last `p2` (`gfx` batch 0 command 5)
"#
    );
    p.verify().unwrap();
    assert_eq!(p.transients.placements.len(), 1);
    // A buffer: every byte.
    let buf = ResourceDecl::buffer("t", 256, vk::BufferUsageFlags::TRANSFER_DST)
        .transient(TransientMemory::buffer(256, 64, 1));
    let half = UseDecl::new(0, Access::TRANSFER_WRITE).range(SubRange::Buffer(BufferRange {
        offset: 0,
        size: 128,
    }));
    refused(&one_queue(buf.clone(), &[half]), words);
    plan(&one_queue(buf, &[UseDecl::new(0, Access::TRANSFER_WRITE)])).unwrap();
}

/// Requirements that cannot be bound, a state carried in, and the host or the presentation
/// engine touching a transient are refused.
#[test]
fn impossible_transients_are_refused() {
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT;
    let write = [UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)];
    let with =
        |m: TransientMemory| one_queue(ResourceDecl::image("t", 1, 1, usage).transient(m), &write);
    refused(&with(TransientMemory::image(0, 256, 1)), "memory size is 0");
    refused(&with(TransientMemory::image(MIB, 3, 1)), "powers of two");
    refused(
        &with(TransientMemory::image(MIB, 256, 1).with_granularity(0)),
        "powers of two",
    );
    refused(
        &with(TransientMemory::image(MIB, 256, 0)),
        "memoryTypeBits are empty",
    );
    let buf = ResourceDecl::buffer("t", 64, vk::BufferUsageFlags::TRANSFER_DST)
        .transient(TransientMemory::image(64, 64, 1));
    refused(
        &one_queue(buf, &[UseDecl::new(0, Access::TRANSFER_WRITE)]),
        "a buffer is linear",
    );
    let state = SegmentState::handed_over(vk::ImageLayout::GENERAL, Some(0), None);
    let carried = ResourceDecl::image("t", 1, 1, usage)
        .with_state(state)
        .transient(TransientMemory::image(MIB, 256, 1));
    refused(&one_queue(carried, &write), "has an initial state");
    let host = ResourceDecl::buffer("t", 64, vk::BufferUsageFlags::TRANSFER_DST)
        .transient(TransientMemory::buffer(64, 64, 1));
    let uses = [
        UseDecl::new(0, Access::TRANSFER_WRITE),
        UseDecl::new(0, Access::HOST_READ),
    ];
    refused(
        &one_queue(host, &uses),
        "to the host or the presentation engine",
    );
    let present = [write[0], UseDecl::new(0, Access::PRESENT)];
    let t = ResourceDecl::image("t", 1, 1, usage).transient(TransientMemory::image(MIB, 256, 1));
    refused(
        &one_queue(t.clone(), &present),
        "to the host or the presentation engine",
    );
    let mut guarded = one_queue(t, &write);
    guarded.passes[0].waits.push(BinaryWaitDecl {
        semaphore: vk::Semaphore::null(),
        guards: vec![0],
        stages: None,
    });
    refused(&guarded, "guards transient `t`");
}
