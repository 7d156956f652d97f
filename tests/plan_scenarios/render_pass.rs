//! An app's own `VkRenderPass`: attachments declared with their `initialLayout` and
//! `finalLayout` ([`UseDecl::render_pass`]). Whole plans, stated as text and verified. No GPU.
//!
//! The expectations, from the specification: the graph moves the image to `initialLayout`
//! (from UNDEFINED when the use discards, or when `initialLayout` is UNDEFINED, to the
//! subpass's layout); the render pass's own transitions are writes at the use's stages (the
//! external subpass dependencies of `crate::render_pass` put them there), so the next access
//! is ordered after them even where it only reads; and the graph tracks `finalLayout` after
//! the pass, never transitioning there again.

use super::*;
use vk::ImageLayout as L;
use vk::ImageUsageFlags as IU;
use vk_baton::verify::Actor;

fn layouts(initial_layout: L, final_layout: L) -> RenderPassLayouts {
    RenderPassLayouts {
        initial_layout,
        final_layout,
    }
}

fn color() -> ResourceDecl {
    ResourceDecl::image("color", 1, 1, IU::COLOR_ATTACHMENT | IU::SAMPLED)
}

fn depth() -> ResourceDecl {
    let usage = IU::DEPTH_STENCIL_ATTACHMENT | IU::SAMPLED;
    let mut r = ResourceDecl::image("depth", 1, 1, usage);
    if let ResourceKind::Image { aspect, .. } = &mut r.kind {
        *aspect = vk::ImageAspectFlags::DEPTH;
    }
    r
}

/// A render pass clears and draws the target (initialLayout COLOR_ATTACHMENT_OPTIMAL,
/// finalLayout SHADER_READ_ONLY_OPTIMAL); the next pass samples it. The graph moves the fresh
/// image to COLOR_ATTACHMENT_OPTIMAL, and before the sampling it only orders: the image is
/// already SHADER_READ_ONLY_OPTIMAL, so there is no second transition.
///
/// ```text
/// graphics:  [render pass: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL] --color--> [sample]
/// ```
#[test]
fn render_pass_leaves_the_target_readable_and_the_sampler_does_not_transition_again() {
    let draw = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
        .discard()
        .render_pass(layouts(
            L::COLOR_ATTACHMENT_OPTIMAL,
            L::SHADER_READ_ONLY_OPTIMAL,
        ));
    let input = PlanInput {
        queues: queues(),
        resources: vec![color()],
        passes: vec![
            PassDecl::new("render pass", 0).with_use(draw),
            PassDecl::new("sample", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    };
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render pass`, with nothing before it
    pass   `render pass`
    barrier
      image  `color` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `render pass`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(p.final_states[0][0].1.layout, L::SHADER_READ_ONLY_OPTIMAL);
}

/// An acquired swapchain image drawn by a render pass with initialLayout UNDEFINED and
/// finalLayout PRESENT_SRC_KHR, then presented. UNDEFINED discards, and the render pass moves
/// the image itself: the graph moves it nowhere first (issue 40, 2.4: it used to move it to
/// the subpass's layout, which the render pass then did again). The acquire's wait, at the
/// render pass's stages, chains with its incoming external dependency: no barrier at all. The
/// present needs no transition: the render pass left the image in PRESENT_SRC_KHR, and the
/// binary signal after the pass orders it. That signal is at ALL_COMMANDS (issue 40, 2.3): the
/// move to PRESENT_SRC_KHR happens in the render pass's dependency to VK_SUBPASS_EXTERNAL,
/// before its second scope (later commands), and a signal at the draw's stages alone does not
/// take it in (layer 1.4.309 reported SYNC-HAZARD-PRESENT-AFTER-WRITE).
///
/// ```text
/// binary 1 --> graphics:  [render pass: UNDEFINED -> PRESENT_SRC_KHR] --> [present] --> binary 2
/// ```
#[test]
fn render_pass_that_ends_in_present_src_needs_no_transition_before_present() {
    let draw = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
        .render_pass(layouts(L::UNDEFINED, L::PRESENT_SRC_KHR));
    let mut first = acquire("render pass", 1, Access::COLOR_ATTACHMENT_WRITE);
    first.uses = vec![draw];
    let input = PlanInput {
        queues: queues(),
        resources: vec![swapchain()],
        passes: vec![first, present(2)],
    };
    let p = planned(&input);
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   binary 0x1 at COLOR_ATTACHMENT_OUTPUT
    pass   `render pass`
    pass   `present`
    signal binary 0x2 at ALL_COMMANDS
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(p.final_states[0][0].1.layout, L::PRESENT_SRC_KHR);
}

/// The verifier models a render pass's move to its finalLayout: the plan above with its
/// present signalled at the draw's stages (what the planner made before issue 40, 2.3) is a
/// present after an unordered write; at ALL_COMMANDS it verifies.
#[test]
fn the_verifier_sees_a_present_signalled_before_the_render_pass_s_final_transition() {
    let draw = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
        .render_pass(layouts(L::UNDEFINED, L::PRESENT_SRC_KHR));
    let mut first = acquire("render pass", 1, Access::COLOR_ATTACHMENT_WRITE);
    first.uses = vec![draw];
    let input = PlanInput {
        queues: queues(),
        resources: vec![swapchain()],
        passes: vec![first, present(2)],
    };
    let mut p = planned(&input);
    let signal = &mut p.queues[0].batches[0].binary_signals[0].1;
    assert_eq!(*signal, vk::PipelineStageFlags2::ALL_COMMANDS);
    *signal = vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT;
    let v = p
        .verify()
        .expect_err("the present is not ordered after the move to PRESENT_SRC_KHR");
    assert!(
        v.iter().any(|v| v.kind == vk_baton::verify::HazardKind::Raw
            && matches!(&v.second, Some(Actor::Pass { name, .. }) if name == "present")),
        "{v:#?}"
    );
}

/// A target sampled last frame, drawn again by a render pass whose initialLayout is
/// UNDEFINED (it clears): the render pass moves the image itself, so the barrier before it
/// only orders the clear after the sampling, in the layout the image is in. No transition to
/// the subpass's layout first (issue 40, 2.4).
///
/// ```text
/// graphics:  (sampled, SHADER_READ_ONLY) --> [render pass: UNDEFINED -> SHADER_READ_ONLY] --> [sample]
/// ```
#[test]
fn a_render_pass_from_undefined_after_sampling_only_orders() {
    let sampled = Recorded {
        queue: 0,
        value: Some(1),
        stages: vk::PipelineStageFlags2::FRAGMENT_SHADER,
        access: vk::AccessFlags2::SHADER_SAMPLED_READ,
    };
    let mut state = SegmentState::handed_over(L::SHADER_READ_ONLY_OPTIMAL, Some(0), None);
    state.reads.push(sampled);
    let draw = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
        .render_pass(layouts(L::UNDEFINED, L::SHADER_READ_ONLY_OPTIMAL));
    let input = PlanInput {
        queues: queues(),
        resources: vec![color().with_state(state)],
        passes: vec![
            PassDecl::new("render pass", 0).with_use(draw),
            PassDecl::new("sample", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render pass`, after an earlier graph's work on `graphics`
    pass   `render pass`
    barrier
      image  `color` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `render pass`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A read-only depth attachment (load, store op NONE) whose render pass ends it in
/// SHADER_READ_ONLY_OPTIMAL, between two samplings. The access only reads, but the render
/// pass transitions the image: a write. So the render pass waits for the earlier sampling
/// (write after read: an execution dependency), and the later sampling waits for the
/// transition, though all three accesses read.
///
/// ```text
/// graphics:  [shadow lookup] --depth--> [depth test: render pass ends SHADER_READ_ONLY] --depth--> [sample]
/// ```
#[test]
fn read_only_depth_whose_final_layout_differs_is_a_write() {
    let state = SegmentState::handed_over(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL, Some(0), None);
    let test = UseDecl::new(0, Access::DEPTH_ATTACHMENT_READ).render_pass(layouts(
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
        L::SHADER_READ_ONLY_OPTIMAL,
    ));
    let sampled = Access::FRAGMENT_SHADER_SAMPLED_READ;
    let input = PlanInput {
        queues: queues(),
        resources: vec![depth().with_state(state)],
        passes: vec![
            PassDecl::new("shadow lookup", 0).with_use(UseDecl::new(
                0,
                sampled.with_layout(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL),
            )),
            PassDecl::new("depth test", 0).with_use(test),
            PassDecl::new("sample", 0).with_use(UseDecl::new(0, sampled)),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `shadow lookup`
    barrier
      image  `depth` mips 0+1 layers 0+1: DEPTH_STENCIL_READ_ONLY_OPTIMAL -> DEPTH_STENCIL_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `depth test`, after `shadow lookup`
    pass   `depth test`
    barrier
      image  `depth` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `depth test`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// The verifier models the render pass's transitions on its own: the depth plan above with
/// the barrier before `sample` removed is a hazard (the sampling may overlap the transition
/// to SHADER_READ_ONLY_OPTIMAL), and a plan whose sampler expected the old layout is a layout
/// violation.
#[test]
fn the_verifier_sees_the_render_pass_transitions() {
    let state = SegmentState::handed_over(L::DEPTH_STENCIL_READ_ONLY_OPTIMAL, Some(0), None);
    let test = UseDecl::new(0, Access::DEPTH_ATTACHMENT_READ).render_pass(layouts(
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
        L::SHADER_READ_ONLY_OPTIMAL,
    ));
    let input = PlanInput {
        queues: queues(),
        resources: vec![depth().with_state(state)],
        passes: vec![
            PassDecl::new("depth test", 0).with_use(test),
            PassDecl::new("sample", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    };
    let mut p = planned(&input);
    let commands = &mut p.queues[0].batches[0].commands;
    assert!(matches!(commands[1], Command::Barrier(_)), "{commands:?}");
    commands.remove(1);
    let v = p
        .verify()
        .expect_err("the sampling is not ordered after the transition");
    assert!(
        v.iter()
            .any(|v| v.kind == vk_baton::verify::HazardKind::Raw),
        "{v:#?}"
    );

    // The same plan, but the render pass said to leave it where it was: sampling in
    // SHADER_READ_ONLY_OPTIMAL without a transition is a layout violation.
    let mut p = planned(&input);
    p.input.passes[0].uses[0].render_pass = Some(layouts(
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
    ));
    let v = p
        .verify()
        .expect_err("the image is not in the sampler's layout");
    assert!(
        v.iter()
            .any(|v| v.kind == vk_baton::verify::HazardKind::Layout),
        "{v:#?}"
    );
}

/// What a render pass attachment cannot be: a buffer, left UNDEFINED, moved to PREINITIALIZED,
/// a read whose initialLayout UNDEFINED discards it, or in one pass beside another use of the
/// same image (the render pass changes its layout in the middle).
#[test]
fn impossible_render_pass_declarations_are_refused() {
    let input = |resources: Vec<ResourceDecl>, uses: Vec<UseDecl>| PlanInput {
        queues: queues(),
        resources,
        passes: vec![uses
            .into_iter()
            .fold(PassDecl::new("draw", 0), PassDecl::with_use)],
    };
    let rp = |initial, last| {
        UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).render_pass(layouts(initial, last))
    };
    let buffer = ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::VERTEX_BUFFER);
    let as_buffer =
        UseDecl::new(0, Access::VERTEX_BUFFER).render_pass(layouts(L::GENERAL, L::GENERAL));
    let e = plan(&input(vec![buffer], vec![as_buffer])).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let e = plan(&input(vec![color()], vec![rp(L::UNDEFINED, L::UNDEFINED)])).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    // The graph cannot move an image to PREINITIALIZED; a read-only attachment whose
    // initialLayout UNDEFINED throws its contents away.
    let says = |uses: Vec<UseDecl>, what: &str| {
        let e = plan(&input(vec![color()], uses)).unwrap_err().to_string();
        assert!(e.contains(what), "`{e}` does not say `{what}`");
    };
    says(
        vec![rp(L::PREINITIALIZED, L::SHADER_READ_ONLY_OPTIMAL)],
        "initial layout PREINITIALIZED",
    );
    let loaded = UseDecl::new(0, Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ)
        .render_pass(layouts(L::UNDEFINED, L::SHADER_READ_ONLY_OPTIMAL));
    says(vec![loaded], "but only reads them");
    // A read-only input attachment that the render pass moves on to another layout, and a
    // sampling of the same image in the same pass.
    let input_attachment = UseDecl::new(0, Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ)
        .render_pass(layouts(
            L::SHADER_READ_ONLY_OPTIMAL,
            L::COLOR_ATTACHMENT_OPTIMAL,
        ));
    let also = UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ);
    let color = ResourceDecl::image(
        "color",
        1,
        1,
        IU::COLOR_ATTACHMENT | IU::SAMPLED | IU::INPUT_ATTACHMENT,
    );
    let e = plan(&input(vec![color], vec![input_attachment, also])).unwrap_err();
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");
}

/// Two render passes in a row read an input attachment that each moves GENERAL ->
/// SHADER_READ_ONLY_OPTIMAL -> GENERAL. The second reads at the same stages as the first, but
/// the first's last transition ends its render pass, after its reads: the second is ordered
/// after it (and its own transitions after the first's reads) by a barrier, where two plain
/// reads in one layout would need none.
///
/// ```text
/// graphics:  [first: GENERAL -> SHADER_READ_ONLY -> GENERAL] --gbuffer--> [second: the same]
/// ```
#[test]
fn a_render_pass_after_another_that_transitions_waits_for_it_even_at_the_same_stages() {
    let state = SegmentState::handed_over(L::GENERAL, Some(0), None);
    let usage = IU::COLOR_ATTACHMENT | IU::INPUT_ATTACHMENT;
    let read = UseDecl::new(0, Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ)
        .render_pass(layouts(L::GENERAL, L::GENERAL));
    let input = PlanInput {
        queues: queues(),
        resources: vec![ResourceDecl::image("gbuffer", 1, 1, usage).with_state(state)],
        passes: vec![
            PassDecl::new("first", 0).with_use(read),
            PassDecl::new("second", 0).with_use(read),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `first`
    barrier
      image  `gbuffer` mips 0+1 layers 0+1: GENERAL -> GENERAL, FRAGMENT_SHADER | COLOR_ATTACHMENT_OUTPUT/NONE -> FRAGMENT_SHADER | COLOR_ATTACHMENT_OUTPUT/INPUT_ATTACHMENT_READ | COLOR_ATTACHMENT_READ
        why: for `second`, after `first`
    pass   `second`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// An app's render pass that draws the depth plane of a depth/stencil image and leaves it
/// SHADER_READ_ONLY_OPTIMAL, declared with the default `initialLayout` (the access's): on one
/// aspect, that default is the aspect's own layout, so the graph moves the depth plane to
/// DEPTH_ATTACHMENT_OPTIMAL (what the render pass's `initialLayout` then is) and no further;
/// the stencil plane is not touched.
///
/// ```text
/// graphics:  [shadow: render pass, depth plane DEPTH_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY]
/// ```
#[test]
fn a_render_pass_on_one_aspect_starts_from_that_aspect_s_layout() {
    use vk::ImageAspectFlags as A;
    let usage = IU::DEPTH_STENCIL_ATTACHMENT | IU::SAMPLED;
    let ds = ResourceDecl::image("ds", 1, 1, usage).aspect(A::DEPTH | A::STENCIL);
    let shadow = UseDecl::new(0, Access::DEPTH_ATTACHMENT_WRITE)
        .aspect(A::DEPTH)
        .render_pass(layouts(
            Access::DEPTH_ATTACHMENT_WRITE.layout,
            L::SHADER_READ_ONLY_OPTIMAL,
        ))
        .discard();
    let input = PlanInput {
        queues: queues(),
        resources: vec![ds],
        passes: vec![PassDecl::new("shadow", 0).with_use(shadow)],
    };
    let p = plan(&input).unwrap();
    p.verify().unwrap_or_else(|v| panic!("{p}\n{v:#?}"));
    // Only the depth plane moves, from UNDEFINED to DEPTH_ATTACHMENT_OPTIMAL.
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `ds` mips 0+1 layers 0+1 DEPTH: UNDEFINED -> DEPTH_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `shadow`, with nothing before it
    pass   `shadow`
    signal timeline at ALL_COMMANDS
"#
    );
    // Afterwards the depth plane (cell 0) is where the render pass left it; stencil (cell 1)
    // was never used.
    let layouts: Vec<_> = p.final_states[0]
        .iter()
        .map(|(cells, st)| (cells.clone(), st.layout))
        .collect();
    assert_eq!(
        layouts,
        vec![(0..1, L::SHADER_READ_ONLY_OPTIMAL), (1..2, L::UNDEFINED)],
        "{p}"
    );
}

/// A render pass on graphics leaves a CONCURRENT target in SHADER_READ_ONLY_OPTIMAL, and async
/// compute samples it while graphics goes on. The signal compute waits for must take in the
/// render pass's move to SHADER_READ_ONLY_OPTIMAL, which only ALL_COMMANDS does (issue 40,
/// 2.3): the batch signals there, not at COLOR_ATTACHMENT_OUTPUT.
///
/// ```text
/// graphics:  [render pass: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY] --.  [more]
/// compute:                                                                '--> [sample]
/// ```
#[test]
fn another_queue_waits_for_a_render_pass_s_final_transition_at_all_commands() {
    let draw = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
        .discard()
        .render_pass(layouts(
            L::COLOR_ATTACHMENT_OPTIMAL,
            L::SHADER_READ_ONLY_OPTIMAL,
        ));
    let input = PlanInput {
        queues: queues(),
        resources: vec![color().concurrent(), buffer("other")],
        passes: vec![
            PassDecl::new("render pass", 0).with_use(draw),
            PassDecl::new("sample", 1)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_SAMPLED_READ)),
            PassDecl::new("more", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render pass`, with nothing before it
    pass   `render pass`
    signal timeline at ALL_COMMANDS
  batch 1:
    pass   `more`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at COMPUTE_SHADER
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}
