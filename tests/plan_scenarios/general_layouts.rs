//! Image uses in `GENERAL` (`LayoutPolicy::General`, for `VK_KHR_unified_image_layouts`): the
//! plan keeps every barrier, release, acquire and semaphore of the table's layouts, and moves
//! no image between layouts except out of `UNDEFINED`. Whole plans, verified, and the
//! verifier's canary that the barriers between `GENERAL` uses are still needed.

use super::*;

/// `p` with every use's access as a graph under `policy` declares it.
fn under(policy: LayoutPolicy, mut p: PassDecl) -> PassDecl {
    for u in &mut p.uses {
        u.access = policy.apply(u.access);
    }
    p
}

/// The transfer queue uploads a texture; graphics draws a G-buffer; async compute samples both
/// and writes a lit image; graphics samples that. Every resource EXCLUSIVE, so each family
/// change is a release and an acquire.
///
/// ```text
/// transfer: [upload] --texture--.
/// graphics: [gbuffer] --gbuffer-+--> compute: [light] --lit--> graphics: [tonemap]
/// ```
fn frame(policy: LayoutPolicy) -> PlanInput {
    PlanInput {
        queues: three_families(),
        resources: vec![image("texture"), image("gbuffer"), image("lit")],
        passes: [
            pass("upload", 2, &[(0, Access::COPY_WRITE)]),
            pass("gbuffer", 0, &[(1, Access::COLOR_ATTACHMENT_WRITE)]),
            pass(
                "light",
                1,
                &[
                    (0, Access::COMPUTE_SHADER_SAMPLED_READ),
                    (1, Access::COMPUTE_SHADER_SAMPLED_READ),
                    (2, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass("tonemap", 0, &[(2, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ]
        .into_iter()
        .map(|p| under(policy, p))
        .collect(),
    }
}

/// The frame above in `GENERAL`: the releases and acquires keep their stages and accesses,
/// and every image barrier is `UNDEFINED` or `GENERAL` to `GENERAL`.
#[test]
fn general_layouts_keep_every_barrier_and_transfer_without_transitions() {
    let p = planned(&frame(LayoutPolicy::General));
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `gbuffer` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `gbuffer`, with nothing before it
    pass   `gbuffer`
    barrier
      image  `gbuffer` mips 0+1 layers 0+1: GENERAL -> GENERAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/NONE, family 0 -> 1
        why: for `light`, after `gbuffer`
    signal timeline at ALL_COMMANDS
  batch 1:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `lit` mips 0+1 layers 0+1: GENERAL -> GENERAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ, family 1 -> 0
        why: for `tonemap`, after `light`
    pass   `tonemap`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    wait   `graphics` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `texture` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ, family 2 -> 1
        why: for `light`, after `upload`
      image  `gbuffer` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ, family 0 -> 1
        why: for `light`, after `gbuffer`
      image  `lit` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `light`, with nothing before it
    pass   `light`
    barrier
      image  `lit` mips 0+1 layers 0+1: GENERAL -> GENERAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `tonemap`, after `light`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    barrier
      image  `texture` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COPY/TRANSFER_WRITE
        why: for `upload`, with nothing before it
    pass   `upload`
    barrier
      image  `texture` mips 0+1 layers 0+1: GENERAL -> GENERAL, COPY/TRANSFER_WRITE -> COPY/NONE, family 2 -> 1
        why: for `light`, after `upload`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// The same frame in the table's layouts has as many barriers, transfers and waits: only the
/// layouts differ.
#[test]
fn general_layouts_change_only_the_layouts() {
    let general = planned(&frame(LayoutPolicy::General));
    let optimal = planned(&frame(LayoutPolicy::Optimal));
    let shape = |p: &Plan| {
        let batches = p.queues.iter().flat_map(|q| &q.batches);
        let commands = batches.flat_map(|b| {
            let waits = b.waits.len();
            b.commands.iter().map(move |c| match c {
                Command::Barrier(b) => (waits, b.images.len(), b.buffers.len()),
                Command::Pass(p) => (waits, usize::MAX, *p),
            })
        });
        commands.collect::<Vec<_>>()
    };
    assert_eq!(shape(&general), shape(&optimal), "{general}\n{optimal}");
    let layouts = |p: &Plan| {
        let layouts = p.image_barriers().map(|i| (i.old_layout, i.new_layout));
        layouts.collect::<Vec<_>>()
    };
    use vk::ImageLayout as L;
    let moved =
        |(old, new): &(L, L)| *new != L::GENERAL || !matches!(*old, L::UNDEFINED | L::GENERAL);
    assert!(!layouts(&general).iter().any(moved), "{general}");
    assert!(layouts(&optimal).iter().any(moved), "{optimal}");
}

/// The verifier's canary: `GENERAL` to `GENERAL` changes no layout, but the barrier between
/// a write and a read in that layout is still what makes the write visible. Without it, the
/// verifier reports the read after write.
#[test]
fn canary_a_general_plan_without_its_barrier_is_a_read_after_write() {
    let input = PlanInput {
        queues: three_families(),
        resources: vec![image("lit")],
        passes: vec![
            under(
                LayoutPolicy::General,
                on("light", 0, Access::COMPUTE_SHADER_WRITE),
            ),
            under(
                LayoutPolicy::General,
                on("tonemap", 0, Access::FRAGMENT_SHADER_SAMPLED_READ),
            ),
        ],
    };
    let mut p = planned(&input);
    let between = |c: &Command| matches!(c, Command::Barrier(b) if b.images.iter().any(|i| i.old_layout == vk::ImageLayout::GENERAL));
    let commands = &mut p.queues[0].batches[0].commands;
    let before = commands.len();
    commands.retain(|c| !between(c));
    assert_eq!(commands.len(), before - 1, "{p}");
    let found = p.verify().unwrap_err();
    assert!(
        found
            .iter()
            .any(|v| v.kind == vk_baton::verify::HazardKind::Raw),
        "{found:?}"
    );
}
