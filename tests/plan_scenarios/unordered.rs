//! Declared unordered writes ([`Unordered`]): no barrier between the members of a group, the
//! group ordered against everything else, and the input refused where a group is
//! contradicted. Whole plans, verified.

use super::*;

fn atomic(name: &str, queue: usize, access: Access) -> PassDecl {
    PassDecl::new(name, queue).with_use(UseDecl::new(0, access).unordered(Unordered::Atomic))
}

fn tile(name: &str, queue: usize, access: Access, x: u32) -> PassDecl {
    let region = Region::texels([x, 0, 0], [64, 64, 1]);
    PassDecl::new(name, queue)
        .with_use(UseDecl::new(0, access).unordered(Unordered::Disjoint(region)))
}

/// Three passes add to one histogram with atomics after a clear, and one pass reads it.
///
/// ```text
/// graphics: [clear] -> [bin 0] [bin 1] [bin 2] -> [resolve]
///                      `-- one group ------'
/// ```
///
/// The group's first member waits for the clear, and its barrier's second scope already
/// holds the two members after it (same stages, same accesses). `resolve` waits for all three.
#[test]
fn atomic_adds_between_a_clear_and_a_read_have_no_barrier_among_them() {
    let p = run(
        queues(),
        vec![buffer("histogram")],
        vec![
            on("clear", 0, Access::TRANSFER_WRITE),
            atomic("bin 0", 0, Access::COMPUTE_SHADER_READ_WRITE),
            atomic("bin 1", 0, Access::COMPUTE_SHADER_READ_WRITE),
            atomic("bin 2", 0, Access::COMPUTE_SHADER_READ_WRITE),
            on("resolve", 0, Access::COMPUTE_SHADER_READ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `clear`
    barrier
      buffer `histogram` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ | SHADER_STORAGE_WRITE
        why: for `bin 0`, after `clear`
    pass   `bin 0`
    pass   `bin 1`
    pass   `bin 2`
    barrier
      buffer `histogram` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ
        why: for `resolve`, after `bin 2`
    pass   `resolve`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// Two tiles of one image written by compute, a third by a fragment shader, then sampled.
///
/// ```text
/// graphics: [left] [right] -> [bottom (fragment)] -> [sample]
/// ```
///
/// `left` moves the image to `GENERAL`; `right` is in that barrier's second scope. `bottom`
/// writes at a stage the barrier did not reach: a layout transition is ordered only before
/// its own barrier's second scope, so `bottom` waits for the members before it.
#[test]
fn disjoint_tiles_after_a_transition_join_where_the_transition_reached_them() {
    let p = run(
        queues(),
        vec![image("atlas")],
        vec![
            tile("left", 0, Access::COMPUTE_SHADER_WRITE, 0),
            tile("right", 0, Access::COMPUTE_SHADER_WRITE, 64),
            tile("bottom", 0, Access::FRAGMENT_SHADER_STORAGE_WRITE, 128),
            on("sample", 0, Access::FRAGMENT_SHADER_SAMPLED_READ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `atlas` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `left`, with nothing before it
    pass   `left`
    pass   `right`
    barrier
      image  `atlas` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> FRAGMENT_SHADER/SHADER_STORAGE_WRITE
        why: for `bottom`, after `right`
    pass   `bottom`
    barrier
      image  `atlas` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER | COMPUTE_SHADER/SHADER_STORAGE_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `bottom`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// Buffer members at different stages, with no transition: the second waits only for what
/// the first waited for (the upload), not for the first.
///
/// ```text
/// graphics: [upload] -> [compute adds] [fragment adds] -> [read]
/// ```
#[test]
fn a_member_at_other_stages_waits_for_what_the_group_waits_for() {
    let p = run(
        queues(),
        vec![buffer("counters")],
        vec![
            on("upload", 0, Access::COPY_WRITE),
            atomic("compute adds", 0, Access::COMPUTE_SHADER_READ_WRITE),
            atomic(
                "fragment adds",
                0,
                Access::FRAGMENT_SHADER_STORAGE_READ_WRITE,
            ),
            on("read", 0, Access::COPY_READ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `upload`
    barrier
      buffer `counters` bytes 0..256: COPY/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ | SHADER_STORAGE_WRITE
        why: for `compute adds`, after `upload`
    pass   `compute adds`
    barrier
      buffer `counters` bytes 0..256: COPY/TRANSFER_WRITE -> FRAGMENT_SHADER/SHADER_STORAGE_READ | SHADER_STORAGE_WRITE
        why: for `fragment adds`, after `upload`
    pass   `fragment adds`
    barrier
      buffer `counters` bytes 0..256: FRAGMENT_SHADER | COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COPY/TRANSFER_READ
        why: for `read`, after `fragment adds`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// A member on another queue is ordered after the group (a semaphore), and starts a group of
/// its own there; an ordinary write ends a group, and the unordered write after it starts a
/// new one.
///
/// ```text
/// graphics: [a 0] [a 1] ------------.            [clear] -> [a 3]
/// compute:                           `-> [a 2] --'
/// ```
#[test]
fn queues_and_ordinary_writes_bound_groups() {
    let p = run(
        queues(),
        vec![ResourceDecl::buffer("sums", 256, all_buffer_usage()).concurrent()],
        vec![
            atomic("a 0", 0, Access::COMPUTE_SHADER_READ_WRITE),
            atomic("a 1", 0, Access::COMPUTE_SHADER_READ_WRITE),
            atomic("a 2", 1, Access::COMPUTE_SHADER_READ_WRITE),
            on("clear", 0, Access::TRANSFER_WRITE),
            atomic("a 3", 0, Access::COMPUTE_SHADER_READ_WRITE),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `a 0`
    pass   `a 1`
    signal timeline at COMPUTE_SHADER
  batch 1:
    wait   `compute` timeline after its batch 0 at ALL_TRANSFER
    pass   `clear`
    barrier
      buffer `sums` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ | SHADER_STORAGE_WRITE
        why: for `a 3`, after `clear`
    pass   `a 3`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at COMPUTE_SHADER
    pass   `a 2`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// A read of other bytes between two members is no interruption: the group lives on the
/// bytes it writes.
#[test]
fn a_read_of_other_bytes_between_members_leaves_the_group_whole() {
    let head = SubRange::Buffer(BufferRange {
        offset: 0,
        size: 128,
    });
    let tail = SubRange::Buffer(BufferRange {
        offset: 128,
        size: 128,
    });
    let p = run(
        queues(),
        vec![buffer("sums")],
        vec![
            PassDecl::new("a", 0).with_use(
                UseDecl::new(0, Access::COMPUTE_SHADER_READ_WRITE)
                    .range(head)
                    .unordered(Unordered::Atomic),
            ),
            PassDecl::new("read tail", 0).with_use(UseDecl::new(0, Access::COPY_READ).range(tail)),
            PassDecl::new("b", 0).with_use(
                UseDecl::new(0, Access::COMPUTE_SHADER_READ_WRITE)
                    .range(head)
                    .unordered(Unordered::Atomic),
            ),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `a`
    pass   `read tail`
    pass   `b`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
}

/// An ordinary read of the same bytes between two members would see the group half done.
#[test]
fn a_read_between_members_is_refused_with_the_three_passes_named() {
    let input = PlanInput {
        queues: queues(),
        resources: vec![buffer("sums")],
        passes: vec![
            atomic("a", 0, Access::COMPUTE_SHADER_READ_WRITE),
            on("peek", 0, Access::COMPUTE_SHADER_READ),
            atomic("b", 0, Access::COMPUTE_SHADER_READ_WRITE),
        ],
    };
    let err = plan(&input).unwrap_err();
    let Error::UnorderedWriteInterrupted {
        resource,
        first,
        between,
        then,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (&resource[..], &first[..], &between[..], &then[..]),
        ("sums", "a", "peek", "b")
    );
    // A read on another queue interrupts the group all the same (a CONCURRENT buffer: the
    // read takes no ownership, which the next write would have to take back).
    let mut other = input.clone();
    other.passes[1].queue = 1;
    other.resources[0] = ResourceDecl::buffer("sums", 256, all_buffer_usage()).concurrent();
    assert!(matches!(
        plan(&other),
        Err(Error::UnorderedWriteInterrupted { .. })
    ));
    // Atomics after disjoint writes are another group: ordered after the read, no error.
    let mut kinds = input.clone();
    kinds.passes[0] = tile("a", 0, Access::COMPUTE_SHADER_WRITE, 0);
    kinds.resources[0] = image("sums");
    kinds.passes[2].uses[0].access = Access::COMPUTE_SHADER_WRITE;
    assert!(plan(&kinds).expect("a new group").verify().is_ok());
}

/// Disjoint regions that overlap, and declarations that contradict themselves.
#[test]
fn overlapping_tiles_and_contradictory_declarations_are_refused() {
    let input = |passes| PlanInput {
        queues: queues(),
        resources: vec![image("atlas"), buffer("b")],
        passes,
    };
    let overlapping = input(vec![
        tile("left", 0, Access::COMPUTE_SHADER_WRITE, 0),
        tile("middle", 0, Access::COMPUTE_SHADER_WRITE, 32),
    ]);
    let err = plan(&overlapping).unwrap_err();
    let Error::UnorderedWriteOverlap {
        resource,
        first,
        second,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        (&resource[..], &first[..], &second[..]),
        ("atlas", "left", "middle")
    );
    // On another queue the two are ordered: no group, no overlap to refuse.
    let mut apart = overlapping.clone();
    apart.passes[1].queue = 1;
    assert!(plan(&apart).expect("ordered").verify().is_ok());

    let refused = |u: UseDecl| {
        let err = plan(&input(vec![PassDecl::new("p", 0).with_use(u)])).unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
        err.to_string()
    };
    let atomic = Unordered::Atomic;
    let bytes = |offset, size| Unordered::Disjoint(Region::Bytes(BufferRange { offset, size }));
    let texels = Unordered::Disjoint(Region::texels([0, 0, 0], [8, 8, 1]));
    let read = refused(UseDecl::new(0, Access::COMPUTE_SHADER_READ).unordered(atomic));
    assert!(read.contains("only reads"), "{read}");
    let discard = refused(
        UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)
            .discard()
            .unordered(atomic),
    );
    assert!(discard.contains("discards"), "{discard}");
    let kind = refused(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).unordered(texels));
    assert!(kind.contains("bytes for a buffer"), "{kind}");
    let empty = refused(
        UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)
            .unordered(Unordered::Disjoint(Region::texels([0, 0, 0], [0, 8, 1]))),
    );
    assert!(empty.contains("empty region"), "{empty}");
    let outside = refused(
        UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)
            .range(SubRange::Buffer(BufferRange {
                offset: 0,
                size: 128,
            }))
            .unordered(bytes(64, 128)),
    );
    assert!(outside.contains("outside the bytes"), "{outside}");
    let huge = refused(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).unordered(bytes(u64::MAX, 2)));
    assert!(huge.contains("outside the bytes"), "{huge}");
    // The same declarations, right, plan.
    let fine = input(vec![
        PassDecl::new("p", 0)
            .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).unordered(bytes(0, 128))),
        PassDecl::new("q", 0)
            .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).unordered(bytes(128, 128))),
    ]);
    let p = plan(&fine).expect("disjoint halves");
    assert_eq!(p.barrier_commands(), 0, "{p}");
}

/// A small generator: the next of a 64-bit linear congruential sequence.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Random frames of ordinary and unordered uses of one buffer and one image on three families,
/// unordered writes at compute and fragment stages, resources EXCLUSIVE or CONCURRENT, on
/// devices with or without `maintenance9` (random masks): every plan either verifies or is
/// refused with one of the two unordered errors, and a fair share of the plans run groups with
/// no barrier among their members.
#[test]
fn random_frames_with_unordered_writes_verify_or_are_refused_for_a_stated_reason() {
    let mut rng = Lcg(7);
    let unordered_accesses = [
        Access::COMPUTE_SHADER_READ_WRITE,
        Access::COMPUTE_SHADER_WRITE,
        Access::FRAGMENT_SHADER_STORAGE_READ_WRITE,
    ];
    let (mut planned, mut refused, mut with_groups) = (0, 0, 0);
    let ordinary = [
        Access::COMPUTE_SHADER_READ,
        Access::COMPUTE_SHADER_WRITE,
        Access::COPY_READ,
        Access::COPY_WRITE,
    ];
    for _ in 0..6000 {
        let mut passes = Vec::new();
        for p in 0..rng.below(6) + 2 {
            let queue = rng.below(3) as usize;
            let r = rng.below(2) as usize;
            let unordered = rng.below(2) == 0 && queue < 2;
            let mut u = if unordered {
                // Fragment stages only on graphics (queue 0).
                let choices = if queue == 0 { 3 } else { 2 };
                UseDecl::new(r, unordered_accesses[rng.below(choices) as usize])
            } else {
                let mut a = ordinary[rng.below(4) as usize];
                if queue == 2 {
                    a = [Access::COPY_READ, Access::COPY_WRITE][rng.below(2) as usize];
                }
                UseDecl::new(r, a)
            };
            if r == 0 {
                let offset = 64 * rng.below(4);
                u = u.range(SubRange::Buffer(BufferRange { offset, size: 64 }));
            }
            if unordered {
                let kind = match (r, rng.below(2)) {
                    (_, 0) => Unordered::Atomic,
                    (0, _) => Unordered::Atomic,
                    _ => {
                        let x = 16 * rng.below(4) as u32;
                        Unordered::Disjoint(Region::texels(
                            [x, 0, 0],
                            [16 + 8 * rng.below(2) as u32, 16, 1],
                        ))
                    }
                };
                u = u.unordered(kind);
            }
            passes.push(PassDecl::new(&format!("p{p}"), queue).with_use(u));
        }
        let m9 = rng.below(3);
        let queues = queues()
            .into_iter()
            .map(|q| match m9 {
                0 => q,
                1 => q.with_maintenance9(0b111),
                _ => {
                    let mask = rng.below(8) as u32;
                    q.with_maintenance9(mask)
                }
            })
            .collect();
        let share = |r: ResourceDecl, rng: &mut Lcg| match rng.below(2) {
            0 => r,
            _ => r.concurrent(),
        };
        let resources = vec![share(buffer("b"), &mut rng), share(image("i"), &mut rng)];
        let input = PlanInput {
            queues,
            resources,
            passes,
        };
        match plan(&input) {
            Ok(p) => {
                planned += 1;
                p.verify()
                    .unwrap_or_else(|v| panic!("{input:#?}\n{p}\n{v:?}"));
                let members_in_a_row = p.queues.iter().flat_map(|q| &q.batches).any(|b| {
                    b.commands.windows(2).any(|w| match w {
                        [Command::Pass(a), Command::Pass(b)] => {
                            let (ua, ub) = (&input.passes[*a].uses[0], &input.passes[*b].uses[0]);
                            ua.unordered.is_some()
                                && ub.unordered.is_some()
                                && ua.resource == ub.resource
                        }
                        _ => false,
                    })
                });
                with_groups += members_in_a_row as usize;
            }
            Err(Error::UnorderedWriteInterrupted { .. } | Error::UnorderedWriteOverlap { .. }) => {
                refused += 1
            }
            Err(e) => panic!("{input:#?}: {e}"),
        }
    }
    println!("{planned} planned ({with_groups} with members in a row), {refused} refused");
    assert!(
        planned > 4000 && refused > 30 && with_groups > 300,
        "{planned} {refused} {with_groups}"
    );
}

/// Members that each add a stage or an access: the third member's stages were reached by the
/// second's barrier and its accesses by the first's, but no barrier made the upload visible to
/// that pair, so it gets a barrier of its own (visibility holds per stage and access pair).
///
/// ```text
/// graphics: [upload] -> [fragment adds] [compute writes] [compute adds]
/// ```
#[test]
fn a_member_is_covered_only_by_a_barrier_that_reached_its_stages_and_accesses_together() {
    let p = run(
        queues(),
        vec![buffer("counters")],
        vec![
            on("upload", 0, Access::COPY_WRITE),
            atomic(
                "fragment adds",
                0,
                Access::FRAGMENT_SHADER_STORAGE_READ_WRITE,
            ),
            atomic("compute writes", 0, Access::COMPUTE_SHADER_WRITE),
            atomic("compute adds", 0, Access::COMPUTE_SHADER_READ_WRITE),
        ],
    );
    p.verify().expect("verified");
    // A barrier right before `compute adds` (pass 3), from the upload.
    let cmds = &p.queues[0].batches[0].commands;
    let at = cmds
        .iter()
        .position(|c| matches!(c, Command::Pass(3)))
        .unwrap();
    let Command::Barrier(b) = &cmds[at - 1] else {
        panic!("{p}")
    };
    assert_eq!(
        b.buffers[0].scopes.src_stages,
        vk::PipelineStageFlags2::COPY,
        "{p}"
    );
}

/// A write on another queue after an ordinary read starts a group of its own: it is ordered
/// after the read, and nothing is refused.
#[test]
fn a_write_that_starts_a_new_group_is_not_interrupted() {
    let input = PlanInput {
        queues: queues(),
        resources: vec![ResourceDecl::buffer("sums", 256, all_buffer_usage()).concurrent()],
        passes: vec![
            atomic("a", 0, Access::COMPUTE_SHADER_READ_WRITE),
            on("peek", 0, Access::COMPUTE_SHADER_READ),
            atomic("b", 1, Access::COMPUTE_SHADER_READ_WRITE),
        ],
    };
    plan(&input)
        .expect("a new group")
        .verify()
        .expect("verified");
}
