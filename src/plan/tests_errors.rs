//! Refused input (each error names what is wrong), and regressions the verifier found in
//! shrunk random cases. No GPU. The helpers are those of `tests.rs`.

use super::*;

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
    };
    let e = plan_err(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("b").with_state(bad)],
        vec![pass("p", 0, &[(0, Access::TRANSFER_READ)])],
    );
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
}

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
    let Command::Barrier(b) = &p.queues[0].batches[0].commands[2] else {
        panic!("{p}")
    };
    // Mip 0 becomes a transfer source; mip 1 stays a destination (WAW, same layout).
    assert_eq!(b.images.len(), 2, "{p}");
    assert_eq!(b.images[0].range, ImageRange::mip(0, 1));
    assert_eq!(b.images[0].new_layout, L::TRANSFER_SRC_OPTIMAL);
    assert_eq!(b.images[1].range, ImageRange::mip(1, 1));
    assert_eq!(
        (b.images[1].old_layout, b.images[1].new_layout),
        (L::TRANSFER_DST_OPTIMAL, L::TRANSFER_DST_OPTIMAL)
    );
}

// ---------------------------------------------------------------------------------------------
// Regressions found by the verifier (shrunk random cases)
// ---------------------------------------------------------------------------------------------

/// Each acquire names exactly the range of one release: neighbouring segments released at
/// different points are not merged into one acquire.
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
    let transfers = |q: usize| -> Vec<BufferRange> {
        let mut v: Vec<BufferRange> = p.queues[q]
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .filter_map(|c| match c {
                Command::Barrier(b) => Some(
                    b.buffers
                        .iter()
                        .filter(|x| x.scopes.families.is_some())
                        .map(|x| x.range)
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
            .flatten()
            .collect();
        v.sort_by_key(|r| r.offset);
        v
    };
    let expect = vec![
        BufferRange {
            offset: 0,
            size: 32,
        },
        BufferRange {
            offset: 32,
            size: 96,
        },
    ];
    assert_eq!(transfers(0), expect, "releases\n{p}");
    assert_eq!(transfers(1), expect, "acquires\n{p}");
}

/// A write after an earlier graph's write and read on the same queue names both in its
/// source scope: the earlier graph's chain is not part of this plan.
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
    };
    let p = run(
        vec![QueueDecl::new("gfx", 0, GFX)],
        vec![buffer("buf").with_state(earlier)],
        vec![PassDecl::new("fill2", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard())],
    );
    let b = &p.queues[0].batches[0];
    assert_eq!(
        b.commands[0],
        buffers(vec![buf_barrier(
            0,
            scopes(
                (S::COPY | S::ALL_TRANSFER, A::TRANSFER_WRITE),
                (S::ALL_TRANSFER, A::TRANSFER_WRITE)
            )
        )])
    );
    assert!(p.verify().is_ok(), "{p}");
}
