//! Ownership with `VK_KHR_maintenance9` (`QueueDecl::maintenance9`): contents the feature keeps
//! across families move without a release and an acquire, ordered by the semaphore alone; the
//! rest still transfer. Whole plans, verified, and the verifier's side of the rule.

use super::*;

/// The three families with maintenance9 enabled; each family hands optimal images to the
/// families in `mask`.
fn families_with_maintenance9(mask: u32) -> Vec<QueueDecl> {
    three_families()
        .into_iter()
        .map(|q| q.with_maintenance9(mask))
        .collect()
}

/// The transfer queue uploads vertices that graphics draws from; async compute writes a
/// storage image that graphics samples. Every family hands optimal images to graphics.
///
/// ```text
/// transfer: [upload] --vertices--.
/// compute:  [light]  --lit-------+--> graphics: [draw]
/// ```
///
/// No release, no acquire: the semaphore waits order the uses and make the writes visible.
/// The image still changes layout, on graphics, which now owns it. (`maintenance8.rs` and
/// `khronos.rs` have the same frame with transfers.)
#[test]
fn kept_contents_move_between_families_with_no_ownership_transfer() {
    let input = PlanInput {
        queues: families_with_maintenance9(0b001),
        resources: vec![buffer("vertices"), storage_image("lit")],
        passes: vec![
            pass("upload", 2, &[(0, Access::COPY_WRITE)]),
            pass("light", 1, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "draw",
                0,
                &[
                    (0, Access::VERTEX_BUFFER),
                    (1, Access::FRAGMENT_SHADER_SAMPLED_READ),
                ],
            ),
        ],
    };
    let p = plan(&input).unwrap();
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0, maintenance9 with optimal images to 0b1):
  batch 0:
    wait   `transfer` timeline after its batch 0 at VERTEX_ATTRIBUTE_INPUT
    wait   `compute` timeline after its batch 0 at FRAGMENT_SHADER
    barrier
      image  `lit` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `draw`, after `light`
    pass   `draw`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1, maintenance9 with optimal images to 0b1):
  batch 0:
    barrier
      image  `lit` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `light`, with nothing before it
    pass   `light`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2, maintenance9 with optimal images to 0b1):
  batch 0:
    pass   `upload`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().expect("verified");
    // The verifier's side: the same plan on a device without maintenance9 uses contents on
    // families that do not own them.
    let mut without = p.clone();
    for q in &mut without.input.queues {
        q.maintenance9 = None;
    }
    let found = without.verify().unwrap_err();
    assert!(
        found
            .iter()
            .any(|v| v.kind == vk_baton::verify::HazardKind::Ownership),
        "{found:?}"
    );
}

/// What maintenance9 does not keep still transfers: an image with attachment usage, and an
/// image going to a family outside the owner's mask.
#[test]
fn attachments_and_families_outside_the_mask_still_transfer() {
    let attachment = ResourceDecl::image(
        "shadow",
        1,
        1,
        vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
    )
    .aspect(vk::ImageAspectFlags::DEPTH);
    let input = |mask| PlanInput {
        queues: families_with_maintenance9(mask),
        resources: vec![attachment.clone(), storage_image("lit")],
        passes: vec![
            pass("shadow", 0, &[(0, Access::DEPTH_ATTACHMENT_WRITE)]),
            pass("light", 1, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass("blur", 1, &[(0, Access::COMPUTE_SHADER_SAMPLED_READ)]),
            pass("sample", 0, &[(1, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ],
    };
    // Graphics hands images to compute, compute hands them to graphics: only the
    // attachment transfers.
    let both = plan(&input(0b011)).unwrap();
    assert_eq!(transfers(&both), ["shadow"], "{both}");
    both.verify().expect("verified");
    // Compute does not hand optimal images to graphics: `lit` transfers too.
    let none = plan(&input(0b010)).unwrap();
    assert_eq!(transfers(&none), ["lit", "shadow"], "{none}");
    none.verify().expect("verified");
}

/// A storage image: sampled and written, no attachment usage.
fn storage_image(name: &str) -> ResourceDecl {
    ResourceDecl::image(
        name,
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
    )
}

/// The resources the plan's barriers transfer (release or acquire), sorted, each once.
fn transfers(p: &Plan) -> Vec<String> {
    let mut out: Vec<String> = (p.queues.iter())
        .flat_map(|q| &q.batches)
        .flat_map(|b| &b.commands)
        .filter_map(|c| match c {
            Command::Barrier(b) => Some(b),
            _ => None,
        })
        .flat_map(|b| {
            let images = b
                .images
                .iter()
                .filter(|i| i.scopes.families.is_some())
                .map(|i| i.resource);
            let buffers = b
                .buffers
                .iter()
                .filter(|x| x.scopes.families.is_some())
                .map(|x| x.resource);
            images.chain(buffers).collect::<Vec<_>>()
        })
        .map(|r| p.input.resources[r].name.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Taking kept contents over is taking ownership, which is exclusive: a read on a new family
/// waits for the old owner's reads, as an acquire would, whichever family reads first.
///
/// ```text
/// (graphics wrote `img` in an earlier graph)
/// compute:  [read]  ------.
/// graphics:        [read] +--> transfer: [copy]
/// ```
#[test]
fn a_family_taking_contents_over_waits_for_the_old_owners_reads() {
    let usage = vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST;
    let written = SegmentState {
        layout: vk::ImageLayout::GENERAL,
        defined: true,
        owner: Some(0),
        write: Some(Recorded {
            queue: 0,
            value: Some(3),
            stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
            access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
        }),
        reads: vec![],
        visible: vec![],
    };
    let mut queues = three_families();
    for (q, mask) in queues.iter_mut().zip([0b110, 0b001, 0]) {
        q.maintenance9 = Some(mask);
    }
    for first in [1, 0] {
        let input = PlanInput {
            queues: queues.clone(),
            resources: vec![ResourceDecl::image("img", 1, 1, usage).with_state(written.clone())],
            passes: vec![
                pass("first read", first, &[(0, Access::COMPUTE_SHADER_READ)]),
                pass(
                    "second read",
                    1 - first,
                    &[(0, Access::COMPUTE_SHADER_READ)],
                ),
                pass("copy", 2, &[(0, Access::COPY_READ)]),
            ],
        };
        let p = plan(&input).unwrap();
        p.verify().unwrap_or_else(|v| panic!("{p}\n{v:?}"));
        // The second read waits for the first, on the other queue.
        let second = &p.queues[1 - first].batches;
        let waits_for_first = second
            .iter()
            .flat_map(|b| &b.waits)
            .any(|w| matches!(w.target, WaitTarget::Batch { queue, .. } if queue == first));
        assert!(waits_for_first, "{p}");
    }
}
