//! Refused input (each error names what is wrong), and regressions the verifier found in
//! shrunk random cases.

use super::*;
use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

fn plan_err(queues: Vec<QueueDecl>, resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> Error {
    plan(&PlanInput {
        queues,
        resources,
        passes,
    })
    .expect_err("should fail")
}

#[test]
fn conflicting_uses_in_one_pass_are_rejected() {
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![image("img")],
        vec![pass(
            "bad",
            0,
            &[
                (0, Access::TRANSFER_READ),
                (0, Access::FRAGMENT_SHADER_SAMPLED_READ),
            ],
        )],
    );
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("b")],
        vec![pass(
            "bad",
            0,
            &[
                (0, Access::TRANSFER_WRITE),
                (0, Access::COMPUTE_SHADER_READ),
            ],
        )],
    );
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");
    // Disjoint ranges are fine.
    let half = |o| {
        SubRange::Buffer(BufferRange {
            offset: o,
            size: 128,
        })
    };
    let ok = plan(&PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources: vec![buffer("b")],
        passes: vec![PassDecl::new("ok", 0)
            .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(half(0)))
            .with_use(UseDecl::new(0, Access::TRANSFER_READ).range(half(128)))],
    });
    assert!(ok.is_ok());
}

#[test]
fn a_queue_without_the_capability_is_rejected() {
    let e = plan_err(
        three_families(),
        vec![image("img")],
        vec![pass("draw", 2, &[(0, Access::COLOR_ATTACHMENT_WRITE)])],
    );
    assert!(matches!(e, Error::QueueCapability { .. }), "{e}");
    assert!(e.to_string().contains("transfer"));
}

/// A discard of contents the access only reads (LOAD with a discard, a read-only depth test
/// that discards) contradicts itself; a write that discards is the normal CLEAR.
#[test]
fn a_discard_on_a_read_only_use_is_rejected() {
    let input = |access| PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources: vec![image("target")],
        passes: vec![PassDecl::new("draw", 0).with_use(UseDecl::new(0, access).discard())],
    };
    for read in [
        Access::DEPTH_ATTACHMENT_READ,
        Access::FRAGMENT_SHADER_SAMPLED_READ,
    ] {
        let e = plan(&input(read)).expect_err("a read that discards");
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("discards the contents of `target` but only reads"),
            "{text}"
        );
    }
    assert!(plan(&input(Access::COLOR_ATTACHMENT_WRITE)).is_ok());
    assert!(plan(&input(Access::COLOR_ATTACHMENT_READ_WRITE)).is_ok()); // CLEAR, then blend
}

/// An attachment access must fit the format's aspects, whatever usage flags claim.
#[test]
fn an_attachment_on_the_wrong_aspect_is_rejected() {
    let usage =
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let mut depth = ResourceDecl::image("depth", 1, 1, usage);
    if let ResourceKind::Image { aspect, .. } = &mut depth.kind {
        *aspect = vk::ImageAspectFlags::DEPTH;
    }
    let color = ResourceDecl::image("albedo", 1, 1, usage);
    let cases = [
        (
            depth.clone(),
            Access::COLOR_ATTACHMENT_WRITE,
            "as a color attachment",
        ),
        (
            color.clone(),
            Access::DEPTH_ATTACHMENT_WRITE,
            "as a depth/stencil attachment",
        ),
        (
            color,
            Access::DEPTH_ATTACHMENT_READ,
            "only the COLOR aspect",
        ),
    ];
    for (res, access, says) in cases {
        let e = plan_err(
            vec![QueueDecl::new("gfx", 0, GFX)],
            vec![res],
            vec![pass("draw", 0, &[(0, access)])],
        );
        assert!(e.to_string().contains(says), "{e}");
    }
    let ok = PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GFX)],
        resources: vec![depth],
        passes: vec![pass("draw", 0, &[(0, Access::DEPTH_ATTACHMENT_WRITE)])],
    };
    assert!(plan(&ok).is_ok());
}

#[test]
fn usage_flags_are_checked() {
    let no_storage = ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::SAMPLED);
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![no_storage],
        vec![pass("write", 0, &[(0, Access::COMPUTE_SHADER_WRITE)])],
    );
    assert!(matches!(e, Error::UsageNotAllowed { .. }), "{e}");
}

#[test]
fn ranges_outside_the_resource_are_rejected() {
    let q = || vec![QueueDecl::new("gfx", 0, GFX)];
    let e = plan_err(
        q(),
        vec![buffer("b")],
        vec![
            PassDecl::new("p", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 200,
                    size: 100,
                }),
            )),
        ],
    );
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");
    let e = plan_err(
        q(),
        vec![image("i")],
        vec![PassDecl::new("p", 0).with_use(
            UseDecl::new(0, Access::TRANSFER_WRITE).range(SubRange::Image(ImageRange::mip(1, 1))),
        )],
    );
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");
}

#[test]
fn bad_indices_are_rejected() {
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![],
        vec![pass("p", 0, &[(3, Access::TRANSFER_WRITE)])],
    );
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let e = plan_err(vec![], vec![], vec![pass("p", 1, &[])]);
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

#[test]
fn initial_states_naming_unknown_queues_are_rejected() {
    let bad = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 5,
            value: Some(1),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![],
        visible: vec![],
    };
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("b").with_state(bad)],
        vec![pass("p", 0, &[(0, Access::TRANSFER_READ)])],
    );
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

/// A blit from mip 0 to mip 1 after a fill of all three mips: mip 0 becomes a transfer
/// source; mip 1 stays a destination (write after write, same layout); mip 2 is untouched.
///
/// ```text
/// gfx:  [fill: mips 0..3] --mip 0 (src), mip 1 (dst)--> [blit1]
/// ```
#[test]
fn mip_levels_are_tracked_separately() {
    let r = ResourceDecl::image("mips", 3, 1, all_image_usage());
    let mip = |m| SubRange::Image(ImageRange::mip(m, 1));
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![r],
        vec![
            pass("fill", 0, &[(0, Access::TRANSFER_WRITE)]),
            PassDecl::new("blit1", 0)
                .with_use(UseDecl::new(0, Access::TRANSFER_READ).range(mip(0)))
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(mip(1))),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `mips` mips 0+3 layers 0+1: UNDEFINED -> TRANSFER_DST_OPTIMAL, NONE/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `fill`, with nothing before it
    pass   `fill`
    barrier
      image  `mips` mips 0+1 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_SRC_OPTIMAL, ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `blit1`, after `fill`
      image  `mips` mips 1+1 layers 0+1: TRANSFER_DST_OPTIMAL -> TRANSFER_DST_OPTIMAL, ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `blit1`, after `fill`
    pass   `blit1`
    signal timeline at ALL_COMMANDS
"#
    );
}

// ---------------------------------------------------------------------------------------------
// Regressions found by the verifier (shrunk random cases)
// ---------------------------------------------------------------------------------------------

/// Each acquire names exactly the range of one release: neighbouring segments released at
/// different points are not merged into one acquire.
///
/// ```text
/// gfx     (family 0):  [a: bytes 0..32] [b: bytes 32..128] --release 0..32, 32..128--.
///                                                                                  | semaphore
/// compute (family 1):                           acquire 0..32, 32..128 <-----------'  [c]
/// ```
#[test]
fn acquires_match_releases_range_for_range() {
    let p = run(
        vec![
            QueueDecl::new("gfx", 0, GFX),
            QueueDecl::new("compute", 1, COMPUTE),
        ],
        vec![ResourceDecl::buffer(
            "buf",
            128,
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
        )],
        vec![
            PassDecl::new("a", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 0,
                    size: 32,
                }),
            )),
            PassDecl::new("b", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).range(
                SubRange::Buffer(BufferRange {
                    offset: 32,
                    size: 96,
                }),
            )),
            pass("c", 1, &[(0, Access::COMPUTE_SHADER_READ)]),
        ],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `a`
    barrier
      buffer `buf` bytes 0..32: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 0 -> 1
        why: for `c`, after `a`
    pass   `b`
    barrier
      buffer `buf` bytes 32..128: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 0 -> 1
        why: for `c`, after `b`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `gfx` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..32: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_READ, family 0 -> 1
        why: for `c`, after `a`
      buffer `buf` bytes 32..128: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_READ, family 0 -> 1
        why: for `c`, after `b`
    pass   `c`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A write after an earlier graph's write and read on the same queue names both in its
/// source scope: the earlier graph's chain is not part of this plan.
///
/// ```text
/// gfx:  (earlier graph: transfer write, copy read, value 3) --buf--> [fill2: discard]
/// ```
#[test]
fn a_write_after_an_earlier_graphs_write_and_read_orders_both() {
    let earlier = SegmentState {
        layout: L::UNDEFINED,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 0,
            value: Some(3),
            stages: S::ALL_TRANSFER,
            access: A::TRANSFER_WRITE,
        }),
        reads: vec![Recorded {
            queue: 0,
            value: Some(3),
            stages: S::COPY,
            access: A::TRANSFER_READ,
        }],
        visible: vec![],
    };
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf").with_state(earlier)],
        vec![PassDecl::new("fill2", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard())],
    );
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      buffer `buf` bytes 0..256: ALL_TRANSFER | COPY/TRANSFER_WRITE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `fill2`, after an earlier graph's work on `gfx`
    pass   `fill2`
    signal timeline at ALL_COMMANDS
"#
    );
    #[cfg(feature = "verify")]
    assert!(p.verify().is_ok(), "{p}");
}

/// An app's explicit binary semaphore mask naming `HOST` is refused, naming the pass and the
/// semaphore: Vulkan forbids `HOST` in a semaphore's stage mask, and rewriting it would order
/// something else than the app asked for.
#[test]
fn a_binary_semaphore_mask_naming_host_is_refused() {
    let sem = vk::Semaphore::from_raw(0x5e);
    let gfx = || vec![QueueDecl::new("gfx", 0, GFX)];
    let fill = || on("fill", 0, Access::TRANSFER_WRITE);
    let waits = |stages| {
        fill().with_wait(BinaryWaitDecl {
            semaphore: sem,
            guards: vec![],
            stages: Some(stages),
        })
    };
    let signals = |stages| {
        fill().with_signal(BinarySignalDecl {
            semaphore: sem,
            stages: Some(stages),
        })
    };
    for bad in [
        waits(S::HOST),
        waits(S::HOST | S::COPY),
        signals(S::HOST),
        signals(S::HOST | S::COPY),
    ] {
        let e = plan_err(gfx(), vec![buffer("b")], vec![bad]);
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        assert!(
            text.contains("`fill`") && text.contains(&format!("{sem:?}")) && text.contains("HOST"),
            "{e}"
        );
    }
    // Device stages alone are fine.
    let ok = PlanInput {
        queues: gfx(),
        resources: vec![buffer("b")],
        passes: vec![waits(S::COPY), signals(S::COPY)],
    };
    assert!(plan(&ok).is_ok());
}
