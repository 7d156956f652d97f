//! Depth and stencil of one image, tracked apart: whole plans, stated as text and verified.
//! No GPU.
//!
//! A format with both aspects has two planes per (mip, layer), each with its own layout and
//! last accesses. A use narrowed to one aspect takes that aspect's layout
//! (`DEPTH_STENCIL_ATTACHMENT_OPTIMAL` becomes `DEPTH_ATTACHMENT_OPTIMAL` or
//! `STENCIL_ATTACHMENT_OPTIMAL`, the read-only layouts likewise) and gets barriers naming only
//! its aspect; a barrier that treats both planes alike names both aspects, once. Scopes follow
//! the contract as in `raster.rs`: a barrier's source is the prior conflicting accesses
//! of its own plane; a layout transition after reads waits for the reads, with no access.

use super::*;
use vk::ImageAspectFlags as A;
use vk::ImageUsageFlags as IU;

/// A D24_UNORM_S8_UINT-like depth/stencil target that is also sampled and copied from.
fn ds() -> ResourceDecl {
    let usage = IU::DEPTH_STENCIL_ATTACHMENT | IU::SAMPLED | IU::TRANSFER_SRC;
    ResourceDecl::image("ds", 1, 1, usage).aspect(A::DEPTH | A::STENCIL)
}

/// A pass on `queue` with a use of resource 0 per (access, aspect); empty: every aspect.
fn pass(name: &str, queue: usize, list: &[(Access, A)]) -> PassDecl {
    list.iter()
        .fold(PassDecl::new(name, queue), |p, &(a, aspect)| {
            p.with_use(UseDecl::new(0, a).aspect(aspect))
        })
}

fn input(passes: Vec<PassDecl>) -> PlanInput {
    PlanInput {
        queues: queues(),
        resources: vec![ds()],
        passes,
    }
}

/// The depth prepass writes both aspects (discarding them); decals test depth read-only and
/// write stencil; lighting samples depth. Before the decals, each plane moves to its own
/// layout after the prepass's writes; before the lighting only the depth plane changes, after
/// the decals' depth test (a read: no access to make available).
///
/// ```text
/// graphics:  [prepass] --depth+stencil--> [decals] --depth--> [light]
///                                          depth: read-only test
///                                          stencil: written
/// ```
#[test]
fn decals_test_depth_read_only_and_write_stencil() {
    let input = input(vec![
        pass(
            "prepass",
            0,
            &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
        ),
        pass(
            "decals",
            0,
            &[
                (Access::DEPTH_ATTACHMENT_READ, A::DEPTH),
                (Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL),
            ],
        ),
        pass(
            "light",
            0,
            &[(Access::FRAGMENT_SHADER_SAMPLED_READ, A::DEPTH)],
        ),
    ]);
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `ds` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> DEPTH_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `decals`, after `prepass`
      image  `ds` mips 0+1 layers 0+1 STENCIL: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> STENCIL_ATTACHMENT_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `decals`, after `prepass`
    pass   `decals`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `light`, after `decals`
    pass   `light`
    signal timeline at ALL_COMMANDS
"#
    );
    // The planes end in their own layouts: depth sampled, stencil attachment.
    let layouts: Vec<_> = p.final_states[0]
        .iter()
        .map(|(c, s)| (c.clone(), s.layout))
        .collect();
    assert_eq!(
        layouts,
        [
            (0..1, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL),
            (1..2, vk::ImageLayout::STENCIL_ATTACHMENT_OPTIMAL)
        ]
    );
}

/// A copy of both aspects after the decals: the planes are in different layouts with
/// different last accesses, so two barriers, each with its own plane's source scope.
///
/// ```text
/// graphics:  [prepass] --> [decals: depth read, stencil write] --depth, stencil--> [copy]
/// ```
#[test]
fn a_use_of_both_aspects_after_split_uses_gets_a_barrier_per_plane() {
    let input = input(vec![
        pass(
            "prepass",
            0,
            &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
        ),
        pass(
            "decals",
            0,
            &[
                (Access::DEPTH_ATTACHMENT_READ, A::DEPTH),
                (Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL),
            ],
        ),
        pass("copy", 0, &[(Access::DEPTH_STENCIL_COPY_READ, A::empty())]),
    ]);
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `ds` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> DEPTH_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `decals`, after `prepass`
      image  `ds` mips 0+1 layers 0+1 STENCIL: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> STENCIL_ATTACHMENT_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `decals`, after `prepass`
    pass   `decals`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_READ_ONLY_OPTIMAL -> TRANSFER_SRC_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE -> COPY/TRANSFER_READ
        why: for `copy`, after `decals`
      image  `ds` mips 0+1 layers 0+1 STENCIL: STENCIL_ATTACHMENT_OPTIMAL -> TRANSFER_SRC_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> COPY/TRANSFER_READ
        why: for `copy`, after `decals`
    pass   `copy`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Depth and stencil sampled by two passes, then copied whole: both planes go from
/// `SHADER_READ_ONLY_OPTIMAL` to `TRANSFER_SRC_OPTIMAL` after fragment shader reads, so one
/// barrier names both aspects (the scopes of the two planes agree).
///
/// ```text
/// graphics:  [prepass] --depth--> [sample depth] --stencil--> [sample stencil] --both--> [copy]
/// ```
#[test]
fn planes_that_agree_share_one_barrier_of_both_aspects() {
    let read = Access::FRAGMENT_SHADER_SAMPLED_READ;
    let input = input(vec![
        pass(
            "prepass",
            0,
            &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
        ),
        pass("sample depth", 0, &[(read, A::DEPTH)]),
        pass("sample stencil", 0, &[(read, A::STENCIL)]),
        pass(
            "copy",
            0,
            &[(Access::DEPTH_STENCIL_COPY_READ, A::DEPTH | A::STENCIL)],
        ),
    ]);
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `ds` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample depth`, after `prepass`
    pass   `sample depth`
    barrier
      image  `ds` mips 0+1 layers 0+1 STENCIL: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample stencil`, after `prepass`
    pass   `sample stencil`
    barrier
      image  `ds` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> TRANSFER_SRC_OPTIMAL, FRAGMENT_SHADER/NONE -> COPY/TRANSFER_READ
        why: for `copy`, after `sample depth`
    pass   `copy`
    signal timeline at ALL_COMMANDS
"#
    );
    let Command::Barrier(b) = &p.queues[0].batches[0].commands[6] else {
        panic!("{p}")
    };
    assert_eq!(b.images[0].aspect, A::DEPTH | A::STENCIL);
}

/// Graphics (family 0) writes both aspects; async compute (family 1) samples depth while
/// graphics goes on writing stencil. Only the depth plane changes family: a release of DEPTH
/// on graphics and its acquire on compute, with the same layouts; the stencil plane stays,
/// and moves to its own attachment layout on graphics. Graphics signals right after the
/// release (as early as possible), so the decals start a second batch.
///
/// ```text
/// graphics (family 0):  [prepass] --release DEPTH 0->1--. | [decals: stencil]
///                                                       | semaphore
/// compute  (family 1):           acquire DEPTH 0->1 <---'  [ao: samples depth]
/// ```
#[test]
fn one_plane_changes_family_the_other_stays() {
    let input = input(vec![
        pass(
            "prepass",
            0,
            &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
        ),
        pass("ao", 1, &[(Access::COMPUTE_SHADER_SAMPLED_READ, A::DEPTH)]),
        pass("decals", 0, &[(Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL)]),
    ]);
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `ds` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE, family 0 -> 1
        why: for `ao`, after `prepass`
    signal timeline at ALL_COMMANDS
  batch 1:
    barrier
      image  `ds` mips 0+1 layers 0+1 STENCIL: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> STENCIL_ATTACHMENT_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `decals`, after `prepass`
    pass   `decals`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ, family 0 -> 1
        why: for `ao`, after `prepass`
    pass   `ao`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An aspect the format lacks, or any aspect on a buffer, is an input error; two uses in one
/// pass conflict only where their planes meet.
#[test]
fn aspects_are_checked_before_planning() {
    let err = |input: &PlanInput| plan(input).unwrap_err();
    let color = input(vec![pass(
        "p",
        0,
        &[(Access::DEPTH_ATTACHMENT_WRITE, A::COLOR)],
    )]);
    let e = err(&color);
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("aspect COLOR of an image whose format has DEPTH | STENCIL")),
        "{e}"
    );
    let mut depth_only = input(vec![pass(
        "p",
        0,
        &[(Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL)],
    )]);
    depth_only.resources[0] = ds().aspect(A::DEPTH);
    assert!(matches!(err(&depth_only), Error::InvalidInput(_)));
    let buffer = PlanInput {
        queues: queues(),
        resources: vec![ResourceDecl::buffer(
            "b",
            64,
            vk::BufferUsageFlags::STORAGE_BUFFER,
        )],
        passes: vec![pass("p", 0, &[(Access::COMPUTE_SHADER_READ, A::DEPTH)])],
    };
    let e = err(&buffer);
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("on a buffer")),
        "{e}"
    );

    let write = Access::DEPTH_ATTACHMENT_WRITE;
    let read = Access::DEPTH_ATTACHMENT_READ;
    let conflicts = |a: (Access, A), b: (Access, A)| {
        matches!(
            plan(&input(vec![pass("p", 0, &[a, b])])),
            Err(Error::ConflictingUses { .. })
        )
    };
    // The same plane, written and read; every plane written, one read.
    assert!(conflicts((write, A::DEPTH), (read, A::DEPTH)));
    assert!(conflicts((write, A::empty()), (read, A::STENCIL)));
    // A read of both planes and a read of one: two layouts on that plane.
    assert!(conflicts((read, A::empty()), (read, A::DEPTH)));
    // Different planes never meet.
    assert!(!conflicts((read, A::DEPTH), (write, A::STENCIL)));
    assert!(!conflicts((write, A::DEPTH), (write, A::STENCIL)));
}

/// The decal plan's barriers (see `decals_test_depth_read_only_and_write_stencil`).
fn decal_plan() -> Plan {
    planned(&input(vec![
        pass(
            "prepass",
            0,
            &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
        ),
        pass(
            "decals",
            0,
            &[
                (Access::DEPTH_ATTACHMENT_READ, A::DEPTH),
                (Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL),
            ],
        ),
    ]))
}

/// The diagram's barrier tooltips name the aspect of a single-aspect barrier, as the text does.
#[test]
#[cfg(feature = "diagram")]
fn the_diagram_names_a_single_aspect() {
    let svg = decal_plan().to_svg();
    // `->` is escaped in the SVG's text.
    let depth = "`ds` mips 0+1 layers 0+1 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -&gt; \
                 DEPTH_READ_ONLY_OPTIMAL";
    assert!(svg.contains(depth), "{svg}");
    assert!(svg.contains("layers 0+1 STENCIL: "), "{svg}");
    // The barrier of both aspects names none.
    assert!(svg.contains("`ds` mips 0+1 layers 0+1: UNDEFINED"), "{svg}");
}

/// JSON: `aspect` on a barrier of one aspect, absent on a barrier of both.
#[cfg(feature = "serde")]
#[test]
fn json_names_a_single_aspect() {
    let json: serde_json::Value = serde_json::from_str(&decal_plan().to_json()).unwrap();
    let commands = &json["queues"][0]["batches"][0]["commands"];
    let both = &commands[0]["images"][0];
    assert!(both.get("aspect").is_none(), "{both}");
    let split: Vec<&serde_json::Value> = commands[2]["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["aspect"])
        .collect();
    assert_eq!(
        split,
        [&serde_json::json!("DEPTH"), &serde_json::json!("STENCIL")]
    );
    assert_eq!(
        commands[2]["images"][1]["new_layout"],
        "STENCIL_ATTACHMENT_OPTIMAL"
    );
}

/// A transient's first use writes all of it: with depth and stencil apart, both planes.
#[test]
fn a_transient_first_written_on_one_plane_is_refused() {
    let transient = |passes| PlanInput {
        resources: vec![ds().transient(TransientMemory::image(4096, 256, 0b1))],
        ..input(passes)
    };
    // The depth test also reads: a first write discards.
    let write = |aspect| {
        UseDecl::new(0, Access::DEPTH_ATTACHMENT_WRITE)
            .aspect(aspect)
            .discard()
    };
    let depth_only = transient(vec![PassDecl::new("p", 0).with_use(write(A::DEPTH))]);
    let depth_only = transient_first_write(&depth_only);
    assert!(depth_only.contains("must write all of it"), "{depth_only}");
    let both = PassDecl::new("p", 0)
        .with_use(write(A::DEPTH))
        .with_use(write(A::STENCIL));
    planned(&transient(vec![both]));
}

fn transient_first_write(input: &PlanInput) -> String {
    match plan(input) {
        Err(Error::InvalidInput(m)) => m,
        other => panic!("{other:?}"),
    }
}

/// Decals on every layer of a 6-layer depth/stencil array (a cube shadow map): one plane's
/// cells are apart, one per layer, yet each plane gets one barrier over all six layers.
///
/// ```text
/// graphics:  [prepass: 6 layers, both] --> [decals: DEPTH read-only, STENCIL written]
/// ```
#[test]
fn one_plane_of_many_layers_is_one_barrier() {
    let usage = IU::DEPTH_STENCIL_ATTACHMENT;
    let cube = ResourceDecl::image("cube", 1, 6, usage).aspect(A::DEPTH | A::STENCIL);
    let p = planned(&PlanInput {
        resources: vec![cube],
        ..input(vec![
            pass(
                "prepass",
                0,
                &[(Access::DEPTH_ATTACHMENT_WRITE, A::empty())],
            ),
            pass(
                "decals",
                0,
                &[
                    (Access::DEPTH_ATTACHMENT_READ, A::DEPTH),
                    (Access::DEPTH_ATTACHMENT_WRITE, A::STENCIL),
                ],
            ),
        ])
    });
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `cube` mips 0+1 layers 0+6: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `cube` mips 0+1 layers 0+6 DEPTH: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> DEPTH_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `decals`, after `prepass`
      image  `cube` mips 0+1 layers 0+6 STENCIL: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> STENCIL_ATTACHMENT_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `decals`, after `prepass`
    pass   `decals`
    signal timeline at ALL_COMMANDS
"#
    );
}
