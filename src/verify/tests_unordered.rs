//! Declared unordered writes: the verifier lets members of one group go unordered, orders the
//! group as a whole against other uses, and checks disjoint regions as ordinary writes where
//! they overlap.

use super::HazardKind;
use crate::plan::*;
use crate::Access;
use ash::vk;

/// Three tiles of one image by compute, then a sampling pass; each tile's region is `x`.
fn tiles(xs: [u32; 3]) -> Plan {
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let tile = |k: usize| {
        let region = Region::texels([xs[k], 0, 0], [64, 64, 1]);
        PassDecl::new(&format!("tile {k}"), 0).with_use(
            UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).unordered(Unordered::Disjoint(region)),
        )
    };
    let input = PlanInput {
        queues: vec![QueueDecl::new(
            "gfx",
            0,
            vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
        )],
        resources: vec![ResourceDecl::image("atlas", 1, 1, usage)],
        passes: vec![
            tile(0),
            tile(1),
            tile(2),
            PassDecl::new("sample", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    };
    plan(&input).unwrap()
}

/// The pairs of passes the verifier reports, as (earlier, later, kind).
fn reported(p: &Plan) -> Vec<(String, String, HazardKind)> {
    let name = |a: &Option<super::Actor>| a.as_ref().map_or(String::new(), |a| a.to_string());
    p.verify()
        .err()
        .unwrap_or_default()
        .iter()
        .map(|v| (name(&v.first), name(&v.second), v.kind))
        .collect()
}

#[test]
fn a_group_needs_no_order_within_and_is_ordered_as_a_whole() {
    let mut p = tiles([0, 64, 128]);
    assert!(p.verify().is_ok(), "{p}");
    // The members run with no barrier between them.
    let cmds = &p.queues[0].batches[0].commands;
    assert!(
        matches!(
            cmds[1..4],
            [Command::Pass(0), Command::Pass(1), Command::Pass(2)]
        ),
        "{p}"
    );
    // Without the barrier before `sample`, every member's write is unordered before it.
    let cmds = &mut p.queues[0].batches[0].commands;
    let last = cmds
        .iter()
        .rposition(|c| matches!(c, Command::Barrier(_)))
        .unwrap();
    cmds.remove(last);
    let found = reported(&p);
    for k in 0..3 {
        let member = format!("tile {k}");
        assert!(
            found
                .iter()
                .any(|(a, b, _)| a.contains(&member) && b.contains("sample")),
            "{member}: {found:?}"
        );
    }
}

#[test]
fn the_same_plan_with_ordinary_writes_is_a_write_after_write() {
    // The canary for the rule above: without the declarations, the members race.
    let mut p = tiles([0, 64, 128]);
    for pass in &mut p.input.passes {
        for u in &mut pass.uses {
            u.unordered = None;
        }
    }
    let found = reported(&p);
    assert!(
        found
            .iter()
            .any(|(a, b, k)| *k == HazardKind::Waw && a.contains("tile 0") && b.contains("tile 1")),
        "{found:?}"
    );
}

#[test]
fn overlapping_disjoint_regions_are_checked_as_ordinary_writes() {
    let mut p = tiles([0, 64, 128]);
    // Tile 2 now overlaps tile 1; the plan has no barrier between them.
    let region = Region::texels([100, 0, 0], [64, 64, 1]);
    p.input.passes[2].uses[0].unordered = Some(Unordered::Disjoint(region));
    let found = reported(&p);
    assert_eq!(
        found
            .iter()
            .filter(|(_, _, k)| *k == HazardKind::Waw)
            .map(|(a, b, _)| (a.contains("tile 1"), b.contains("tile 2")))
            .collect::<Vec<_>>(),
        [(true, true)],
        "{found:?}"
    );
    // Atomics of one group pass; atomics and disjoint writes are not one group.
    let mut mixed = tiles([0, 64, 128]);
    for k in 0..2 {
        mixed.input.passes[k].uses[0].unordered = Some(Unordered::Atomic);
    }
    let found = reported(&mixed);
    assert!(
        found
            .iter()
            .all(|(a, b, _)| !(a.contains("tile 0") && b.contains("tile 1"))),
        "tile 0 and tile 1 are atomics: {found:?}"
    );
    for k in 0..2 {
        let member = format!("tile {k}");
        assert!(
            found
                .iter()
                .any(|(a, b, _)| a.contains(&member) && b.contains("tile 2")),
            "{member} and tile 2: {found:?}"
        );
    }
}
