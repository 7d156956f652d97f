//! The diagram of a three-family frame, checked as a structure: the SVG parses as XML, and
//! it and the DOT text hold one lane per queue, one box per pass, one marker per barrier
//! command and one arrow or marker per semaphore wait, each where the plan says.

pub(crate) mod check;

use crate::access::Access;
use crate::plan::*;
use ash::vk::{self, Handle};
use check::*;
use roxmltree::Document;

const GFX: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);
const COMPUTE: vk::QueueFlags =
    vk::QueueFlags::from_raw(vk::QueueFlags::COMPUTE.as_raw() | vk::QueueFlags::TRANSFER.as_raw());

/// A frame on graphics (family 0), async compute (family 1) and transfer (family 2): the
/// transfer queue uploads a mesh, compute simulates particles, graphics waits for the
/// swapchain image, draws with both (two ownership acquires) and presents.
pub(crate) fn three_family_input() -> PlanInput {
    let acquired = vk::Semaphore::from_raw(0xa1);
    let rendered = vk::Semaphore::from_raw(0xb2);
    PlanInput {
        queues: vec![
            QueueDecl::new("graphics", 0, GFX),
            QueueDecl::new("async compute", 1, COMPUTE),
            QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER),
        ],
        resources: vec![
            ResourceDecl::buffer(
                "mesh",
                4096,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER,
            ),
            ResourceDecl::image(
                "particles",
                1,
                1,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
            ),
            ResourceDecl::image("swapchain", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT),
        ],
        passes: vec![
            PassDecl::new("upload mesh", 2)
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard()),
            PassDecl::new("simulate particles", 1)
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE).discard()),
            PassDecl::new("draw", 0)
                .with_wait(BinaryWaitDecl {
                    semaphore: acquired,
                    guards: vec![2],
                    stages: None,
                })
                .with_use(UseDecl::new(0, Access::VERTEX_BUFFER))
                .with_use(UseDecl::new(1, Access::FRAGMENT_SHADER_SAMPLED_READ))
                .with_use(UseDecl::new(2, Access::COLOR_ATTACHMENT_WRITE).discard()),
            PassDecl::new("present", 0)
                .with_use(UseDecl::new(2, Access::PRESENT))
                .with_signal(BinarySignalDecl {
                    semaphore: rendered,
                    stages: None,
                }),
        ],
    }
}

#[test]
fn svg_of_a_three_family_frame_has_every_mark_in_place() {
    let plan = plan(&three_family_input()).unwrap();
    dump("plan-3-family", &plan);
    let svg = check_svg(&plan);
    let doc = Document::parse(&svg).unwrap();

    // What the plan holds: graphics waits on both other queues, with an acquire of each
    // resource, and on the swapchain's binary semaphore.
    assert_eq!(plan.batch_count(), 3, "{plan}");
    let graphics = &plan.queues[0].batches[0];
    let targets: Vec<WaitTarget> = graphics.waits.iter().map(|w| w.target).collect();
    assert_eq!(targets.len(), 3, "{plan}");
    for t in [
        WaitTarget::Batch { queue: 1, batch: 0 },
        WaitTarget::Batch { queue: 2, batch: 0 },
        WaitTarget::Binary(vk::Semaphore::from_raw(0xa1)),
    ] {
        assert!(targets.contains(&t), "{plan}");
    }
    assert_eq!(
        (
            plan.semaphore_waits(),
            plan.barrier_commands(),
            plan.input.passes.len()
        ),
        (3, 5, 4),
        "{plan}"
    );

    // Lanes are labelled with their queue's name and family.
    for (lane, name) in groups(&doc, "lane")
        .iter()
        .zip(["graphics", "async compute", "transfer"])
    {
        let label = lane
            .children()
            .find(|c| has_class(c, "lane-label"))
            .unwrap();
        let texts: Vec<&str> = label.descendants().filter_map(|t| t.text()).collect();
        assert!(texts.contains(&name), "{texts:?}");
        assert!(texts.iter().any(|t| t.starts_with("family ")), "{texts:?}");
    }
    // Every pass name fits its box here.
    let shown: Vec<&str> = groups(&doc, "pass")
        .iter()
        .map(|g| {
            g.descendants()
                .find(|n| n.has_tag_name("text"))
                .unwrap()
                .text()
                .unwrap()
        })
        .collect();
    assert_eq!(
        shown,
        ["draw", "present", "simulate particles", "upload mesh"]
    );

    // Two releases, and graphics' acquires in one command.
    let barriers = groups(&doc, "barrier");
    let count = |class: &str| barriers.iter().filter(|b| has_class(b, class)).count();
    assert_eq!((count("release"), count("acquire")), (2, 1), "{plan}");
    for b in &barriers {
        assert!(title(b).starts_with("vkCmdPipelineBarrier2"), "{b:?}");
    }
    let acquire = barriers.iter().find(|b| has_class(b, "acquire")).unwrap();
    for part in [
        "`mesh` bytes 0..4096",
        "family 2 -> 0",
        "`particles`",
        "family 1 -> 0",
    ] {
        assert!(title(acquire).contains(part), "{}", title(acquire));
    }

    // Each timeline arrow says which ownership it carries.
    let arrows = groups(&doc, "timeline");
    let mut carried: Vec<&str> = arrows
        .iter()
        .map(|a| title(a).split_once("\ncarries ownership of ").unwrap().1)
        .collect();
    carried.sort();
    assert_eq!(
        carried,
        ["`mesh` (family 2 -> 0)", "`particles` (family 1 -> 0)"]
    );
    // The arrows do not cross each other.
    assert_eq!(arrow_crossings(&doc), 0);
    let binary = groups(&doc, "binary");
    let classes: Vec<&str> = binary.iter().filter_map(|b| b.attribute("class")).collect();
    assert_eq!(classes, ["wait binary", "signal binary"]);
    let tip = title(&binary[0]);
    assert!(
        tip.contains("binary 0xa1 at COLOR_ATTACHMENT_OUTPUT"),
        "{tip}"
    );
}

#[test]
fn dot_of_a_three_family_frame_has_the_same_marks() {
    let plan = plan(&three_family_input()).unwrap();
    let dot = check_dot(&plan);
    for p in &plan.input.passes {
        assert!(dot.contains(&format!(r#"label="{}""#, p.name)), "{dot}");
    }
    // The waits run from the other queues' batches into graphics' batch.
    assert!(
        dot.contains("ltail=cluster_batch_1_0, lhead=cluster_batch_0_0"),
        "{dot}"
    );
    assert!(
        dot.contains("ltail=cluster_batch_2_0, lhead=cluster_batch_0_0"),
        "{dot}"
    );
}

/// A plan made by hand, with names that are markup, control characters, a name too long for
/// its box, a wait on an earlier graph and indices the plan does not have: both forms stay
/// well formed and say what they can.
#[test]
fn hostile_names_and_bad_indices_stay_well_formed() {
    let long = "a pass name far too long to fit in any box of the picture";
    let nasty = "<b>&\"quoted\"\u{7}\nnext";
    let mut input = three_family_input();
    input.passes[0].name = nasty.into();
    input.passes[1].name = long.into();
    input.queues[1].name = "</svg> \\".into();
    let mut plan = plan(&input).unwrap();
    let graphics = &mut plan.queues[0].batches[0];
    graphics.waits.push(Wait {
        target: WaitTarget::Value { queue: 1, value: 7 },
        stages: vk::PipelineStageFlags2::FRAGMENT_SHADER,
    });
    graphics.waits.push(Wait {
        target: WaitTarget::Batch { queue: 9, batch: 0 },
        stages: vk::PipelineStageFlags2::FRAGMENT_SHADER,
    });
    graphics.commands.push(Command::Pass(99));

    let svg = plan.to_svg();
    let doc = Document::parse(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    let passes = groups(&doc, "pass");
    let shown = |i: usize| -> Vec<String> {
        let g = passes
            .iter()
            .find(|g| g.attribute("data-pass") == Some(&i.to_string()))
            .unwrap();
        g.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|t| t.text().map(str::to_string))
            .collect()
    };
    // Markup stays text; the control character becomes U+FFFD in the tooltip, a space on screen.
    let g0 = passes
        .iter()
        .find(|g| g.attribute("data-pass") == Some("0"))
        .unwrap();
    assert!(
        title(g0).contains("<b>&\"quoted\"\u{FFFD}\nnext"),
        "{}",
        title(g0)
    );
    assert!(shown(0)[0].starts_with("<b>&\"quoted\" "), "{:?}", shown(0));
    // The long name is cut short on screen and whole in the tooltip.
    let cut = &shown(1)[0];
    assert!(
        cut.ends_with('…') && long.starts_with(cut.trim_end_matches('…')),
        "{cut}"
    );
    let g1 = passes
        .iter()
        .find(|g| g.attribute("data-pass") == Some("1"))
        .unwrap();
    assert!(title(g1).contains(long));
    assert_eq!(shown(99), ["?"]);
    // Both extra waits come from the "earlier graphs" column, which marks lanes 1 and 0.
    assert_eq!(groups(&doc, "wait").len(), plan.semaphore_waits());
    let earlier = groups(&doc, "earlier");
    let classes: Vec<&str> = earlier
        .iter()
        .filter_map(|g| g.attribute("class"))
        .collect();
    assert_eq!(
        classes,
        ["earlier", "earlier", "wait earlier", "wait earlier"]
    );

    let dot = plan.to_dot();
    assert_balanced(&dot);
    assert!(dot.contains(r#"label="<b>&\"quoted\" \nnext""#), "{dot}");
    assert!(dot.contains(r#"label="</svg> \\\l"#), "{dot}");
    assert_eq!(
        dot.matches(r#"class="wait "#).count(),
        plan.semaphore_waits()
    );
    assert_eq!(dot.matches(r#"class="wait earlier""#).count(), 2);
}

#[test]
fn an_empty_plan_draws_an_empty_picture() {
    let plan = plan(&PlanInput::default()).unwrap();
    let doc_text = plan.to_svg();
    let doc = Document::parse(&doc_text).unwrap();
    assert!(groups(&doc, "lane").is_empty());
    assert_balanced(&plan.to_dot());
}

#[test]
fn the_crossing_count_sees_a_crossing() {
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg">
        <g class="wait timeline"><path d="M0,50 L100,50"/></g>
        <g class="wait earlier"><path d="M40,0 H50 Q50,0 50,10 V100 L60,100"/></g>
        <g class="wait timeline"><path d="M0,200 L100,200"/></g>
    </svg>"#;
    assert_eq!(arrow_crossings(&Document::parse(svg).unwrap()), 1);
}
