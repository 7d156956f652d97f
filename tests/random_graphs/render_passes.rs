//! The random cases again, with image uses of graphics passes turned into attachments of an
//! app's `VkRenderPass` ([`UseDecl::render_pass`]) that take the image in one layout and leave
//! it in another: the planner must order everything after the render pass's own transitions
//! (writes, even where the access reads), and the verifier, which models them on its own,
//! must find no violation, in program order and reordered.

use super::*;
use vk::ImageLayout as L;

/// The layouts a converted use's render pass takes and leaves the image in: the access's own
/// among them, so that some render passes change nothing. UNDEFINED (contents discarded) only
/// for an access that writes without reading, as a load op CLEAR or DONT_CARE does.
fn layouts(access: Access, pick: u64) -> RenderPassLayouts {
    let pure_write = access.is_write() && (access.access & !access.write_bits()).is_empty();
    let undefined = if pure_write {
        L::UNDEFINED
    } else {
        L::COLOR_ATTACHMENT_OPTIMAL
    };
    let some = [
        access.layout,
        L::GENERAL,
        L::TRANSFER_SRC_OPTIMAL,
        L::SHADER_READ_ONLY_OPTIMAL,
        // Presented without a transition of the graph's, when the image is a swapchain's.
        L::PRESENT_SRC_KHR,
    ];
    let initial = [
        access.layout,
        L::GENERAL,
        undefined,
        L::TRANSFER_DST_OPTIMAL,
    ];
    RenderPassLayouts {
        initial_layout: initial[(pick % 4) as usize],
        final_layout: some[((pick / 4) % 5) as usize],
    }
}

/// `case` with some image uses of graphics-queue passes made render pass attachments: uses
/// at device stages, of a resource the pass uses once. Counts them in `converted`, and those
/// that leave a swapchain image ready to present in `presented`.
fn with_render_passes(case: &Case, converted: &Cell<u32>, presented: &Cell<u32>) -> Case {
    let mut out = case.clone();
    let mut rng = graphgen::Rng::new(case.graphs.iter().map(Vec::len).sum::<usize>() as u64 + 7);
    for passes in &mut out.graphs {
        for pass in passes.iter_mut() {
            if !out.queues[pass.queue]
                .caps
                .contains(vk::QueueFlags::GRAPHICS)
            {
                continue;
            }
            let uses = pass.uses.clone();
            for u in pass.uses.iter_mut() {
                let image = matches!(out.resources[u.resource].kind, ResourceKind::Image { .. });
                let once = uses.iter().filter(|v| v.resource == u.resource).count() == 1;
                let device = !u.access.stages.is_empty()
                    && !u.access.stages.contains(vk::PipelineStageFlags2::HOST);
                if image && once && device && rng.chance(1, 2) {
                    *u = u.render_pass(layouts(u.access, rng.next()));
                    converted.set(converted.get() + 1);
                    let swapchain = out.resources[u.resource].name.starts_with("swap");
                    if swapchain && u.layout_after() == L::PRESENT_SRC_KHR {
                        presented.set(presented.get() + 1);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn random_graphs_with_render_pass_attachments_verify() {
    let n = cases() / 4;
    let config = ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let (converted, presented) = (Cell::new(0), Cell::new(0));
    let schedules = graphgen::scheduled::ScheduleSeen::default();
    let result = runner.run(&graphgen::cases(&Sizes::suite()), |case| {
        let case = with_render_passes(&case, &converted, &presented);
        let planned = plan_case(&case).map_err(TestCaseError::fail)?;
        if let Err((g, v)) = verify_each_alone(&planned) {
            let what = format!("graph {g} verified alone");
            return Err(TestCaseError::fail(report(&what, &v, &case, &planned)));
        }
        if let Err(v) = verify_all(&planned) {
            let what = "the chain verified together";
            return Err(TestCaseError::fail(report(what, &v, &case, &planned)));
        }
        graphgen::scheduled::check_schedules(&case, &schedules).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!(
        "render pass attachments: {} in {n} cases, {} leaving a swapchain image in PRESENT_SRC_KHR",
        converted.get(),
        presented.get()
    );
    assert!(
        presented.get() > 0,
        "no render pass left a swapchain image ready to present"
    );
    assert!(
        converted.get() > n,
        "too few uses converted: {}",
        converted.get()
    );
}
