//! The diagram of a three-family frame, checked as a structure: the SVG parses as XML, and
//! it and the DOT text hold one lane per queue, one box per pass, one marker per barrier
//! command and one arrow or marker per semaphore wait, each where the plan says.

use super::text;
use crate::access::Access;
use crate::plan::*;
use ash::vk::{self, Handle};
use roxmltree::{Document, Node};

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

fn has_class(n: &Node, class: &str) -> bool {
    n.attribute("class")
        .is_some_and(|c| c.split(' ').any(|t| t == class))
}

/// The `<g>` elements whose class has `class` among its words.
fn groups<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && has_class(n, class))
        .collect()
}

fn title<'a>(n: &Node<'a, '_>) -> &'a str {
    n.children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap_or_default()
}

fn f(n: &Node, attr: &str) -> f32 {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("{n:?} has no {attr}"))
        .parse()
        .unwrap()
}

/// The frame of `batch-q-b`: (left, right).
fn frame(doc: &Document, q: usize, b: usize) -> (f32, f32) {
    let id = format!("batch-{q}-{b}");
    let g = doc
        .descendants()
        .find(|n| n.attribute("id") == Some(id.as_str()))
        .unwrap_or_else(|| panic!("no {id}"));
    let rect = g.children().find(|c| c.has_tag_name("rect")).unwrap();
    (f(&rect, "x"), f(&rect, "x") + f(&rect, "width"))
}

/// The corners of an arrow's path (absolute `M`, `H`, `V`, `Q`, `L` commands; a `Q`'s control
/// point is its corner), so every segment is horizontal or vertical.
fn corners(d: &str) -> Vec<(f32, f32)> {
    let mut out: Vec<(f32, f32)> = Vec::new();
    let mut cmd = ' ';
    let mut nums: Vec<f32> = Vec::new();
    let flush = |cmd: char, nums: &mut Vec<f32>, out: &mut Vec<(f32, f32)>| {
        let last = out.last().copied().unwrap_or((0.0, 0.0));
        match (cmd, nums.as_slice()) {
            (' ', []) => {}
            ('M' | 'L', [x, y]) => out.push((*x, *y)),
            ('H', [x]) => out.push((*x, last.1)),
            ('V', [y]) => out.push((last.0, *y)),
            ('Q', [cx, cy, x, y]) => out.extend([(*cx, *cy), (*x, *y)]),
            _ => panic!("unexpected path command {cmd} {nums:?} in {d}"),
        }
        nums.clear();
    };
    for token in d.split([' ', ',']).filter(|t| !t.is_empty()) {
        let (head, rest) = token.split_at(if token.starts_with(char::is_alphabetic) {
            1
        } else {
            0
        });
        if let Some(c) = head.chars().next() {
            flush(cmd, &mut nums, &mut out);
            cmd = c;
        }
        if !rest.is_empty() {
            nums.push(rest.parse().unwrap());
        }
    }
    flush(cmd, &mut nums, &mut out);
    out
}

/// Boxes of the marks that must not overlap: pass boxes and barrier markers.
fn mark_rects(doc: &Document) -> Vec<(String, [f32; 4])> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && (has_class(n, "pass") || has_class(n, "barrier")))
        .map(|g| {
            let r = g.children().find(|c| c.has_tag_name("rect")).unwrap();
            let (x, y) = (f(&r, "x"), f(&r, "y"));
            let id = g.attribute("id").unwrap().to_string();
            (id, [x, y, x + f(&r, "width"), y + f(&r, "height")])
        })
        .collect()
}

/// Writes the picture to `$VK_BATON_DIAGRAM_DIR/NAME.svg` (and `.dot`) when that is set, to
/// look at it.
fn dump(name: &str, plan: &Plan) {
    if let Some(dir) = std::env::var_os("VK_BATON_DIAGRAM_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::write(dir.join(format!("{name}.svg")), plan.to_svg()).unwrap();
        std::fs::write(dir.join(format!("{name}.dot")), plan.to_dot()).unwrap();
    }
}

/// The `id` of a wait's mark, `wait-Q-B-W`, back to (queue, batch, wait).
fn wait_id(id: &str) -> [usize; 3] {
    id.trim_start_matches("wait-")
        .split('-')
        .map(|s| s.parse().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap()
}

/// What every picture of a plan the planner made must be: well-formed XML with one lane per
/// queue, one box per pass (named), one marker per barrier command, one arrow or marker per
/// semaphore wait; arrows from the end of the batch that signals (or the "earlier graphs"
/// marker) to the start of the batch that waits, horizontal and vertical runs only, never
/// leftwards and across no mark; no text over another. Returns the SVG.
fn check_svg(plan: &Plan) -> String {
    let svg = plan.to_svg();
    let doc = Document::parse(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");

    let lanes = groups(&doc, "lane");
    let ids: Vec<String> = lanes
        .iter()
        .map(|l| l.attribute("id").unwrap().into())
        .collect();
    let expected: Vec<String> = (0..plan.queues.len())
        .map(|q| format!("lane-{q}"))
        .collect();
    assert_eq!(ids, expected);

    let commands = || {
        plan.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.commands)
    };
    let passes = groups(&doc, "pass");
    assert_eq!(
        passes.len(),
        commands().filter(|c| matches!(c, Command::Pass(_))).count()
    );
    for g in &passes {
        let p: usize = g.attribute("data-pass").unwrap().parse().unwrap();
        let decl = &plan.input.passes[p];
        let id = g.attribute("id").unwrap();
        assert!(id.starts_with(&format!("cmd-{}-", decl.queue)), "{id}");
        let shown = g
            .descendants()
            .find(|n| n.has_tag_name("text"))
            .unwrap()
            .text()
            .unwrap();
        assert!(
            shown == decl.name || decl.name.starts_with(shown.trim_end_matches('…')),
            "{shown}"
        );
        assert!(title(g).starts_with(&format!("pass `{}`", decl.name)));
    }
    assert_eq!(groups(&doc, "barrier").len(), plan.barrier_commands());

    let waits = || {
        plan.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.waits)
    };
    let kind = |f: fn(&WaitTarget) -> bool| waits().filter(|w| f(&w.target)).count();
    assert_eq!(groups(&doc, "wait").len(), plan.semaphore_waits());
    let timeline = groups(&doc, "timeline");
    assert_eq!(
        timeline.len(),
        kind(|t| matches!(t, WaitTarget::Batch { .. }))
    );
    assert_eq!(
        groups(&doc, "earlier")
            .iter()
            .filter(|g| has_class(g, "wait"))
            .count(),
        kind(|t| matches!(t, WaitTarget::Value { .. }))
    );
    let binary = groups(&doc, "binary")
        .into_iter()
        .filter(|g| has_class(g, "wait"));
    assert_eq!(binary.count(), kind(|t| matches!(t, WaitTarget::Binary(_))));

    let marks = mark_rects(&doc);
    for a in groups(&doc, "wait")
        .iter()
        .filter(|g| !has_class(g, "binary"))
    {
        let id = a.attribute("id").unwrap();
        let [q, b, w] = wait_id(id);
        let path = a.children().rfind(|c| c.has_tag_name("path")).unwrap();
        let points = corners(path.attribute("d").unwrap());
        let (from, to) = (points[0], points[points.len() - 1]);
        let dst = frame(&doc, q, b);
        assert_eq!(to.0, dst.0, "{id} ends at the start of batch {q}/{b}");
        if let WaitTarget::Batch { queue, batch } = plan.queues[q].batches[b].waits[w].target {
            let src = frame(&doc, queue, batch);
            assert_eq!(
                from.0, src.1,
                "{id} starts at the end of batch {queue}/{batch}"
            );
            assert!(
                dst.0 > src.1,
                "the waiting batch sits right of the one it waits on"
            );
        }
        for pair in points.windows(2) {
            assert!(
                pair[0].0 == pair[1].0 || pair[0].1 == pair[1].1,
                "{points:?}"
            );
            assert!(pair[1].0 >= pair[0].0, "{id} runs left: {points:?}");
            let (xa, xb) = (pair[0].0.min(pair[1].0), pair[0].0.max(pair[1].0));
            let (ya, yb) = (pair[0].1.min(pair[1].1), pair[0].1.max(pair[1].1));
            for (mark, r) in &marks {
                let apart = xb <= r[0] || xa >= r[2] || yb <= r[1] || ya >= r[3];
                assert!(apart, "{id} crosses {mark}: {points:?} {r:?}");
            }
        }
    }
    for (i, (a, ra)) in marks.iter().enumerate() {
        for (b, rb) in &marks[i + 1..] {
            let apart = ra[2] <= rb[0] || rb[2] <= ra[0] || ra[3] <= rb[1] || rb[3] <= ra[1];
            assert!(apart, "{a} {ra:?} overlaps {b} {rb:?}");
        }
    }
    assert_texts_apart(&doc);
    svg
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
    let binary = groups(&doc, "binary");
    let classes: Vec<&str> = binary.iter().filter_map(|b| b.attribute("class")).collect();
    assert_eq!(classes, ["wait binary", "signal binary"]);
    let tip = title(&binary[0]);
    assert!(
        tip.contains("binary 0xa1 at COLOR_ATTACHMENT_OUTPUT"),
        "{tip}"
    );
}

/// No text runs off the picture or into another text (by the estimated widths, which err wide).
fn assert_texts_apart(doc: &Document) {
    let width = f(&doc.root_element(), "width");
    let mut boxes: Vec<(&str, [f32; 4])> = Vec::new();
    for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let size = t
            .attribute("font-size")
            .map_or(12.0, |s| s.parse().unwrap());
        let s = t.text().unwrap_or_default();
        let w = text::width(s, size * text::BOLD);
        let (x, y) = (f(&t, "x"), f(&t, "y"));
        let left = match t.attribute("text-anchor") {
            Some("middle") => x - w / 2.0,
            _ => x,
        };
        assert!(left >= 0.0 && left + w <= width, "{s} runs off the picture");
        let b = [left, y - 0.8 * size, left + w, y + 0.25 * size];
        for (other, o) in &boxes {
            let apart = b[2] <= o[0] || o[2] <= b[0] || b[3] <= o[1] || o[3] <= b[1];
            assert!(apart, "`{s}` {b:?} overlaps `{other}` {o:?}");
        }
        boxes.push((s, b));
    }
}

/// What the DOT text of a plan the planner made must hold: balanced braces and strings, and
/// the same marks as the SVG, counted by class. Returns the text.
fn check_dot(plan: &Plan) -> String {
    let dot = plan.to_dot();
    assert_balanced(&dot);
    let count = |s: &str| dot.matches(s).count();
    let commands = || {
        plan.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.commands)
    };
    let waits = || {
        plan.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.waits)
    };
    let kind = |f: fn(&WaitTarget) -> bool| waits().filter(|w| f(&w.target)).count();
    assert_eq!(count(r#"class="lane""#), plan.queues.len());
    assert_eq!(count(r#"class="batch""#), plan.batch_count());
    let passes = commands().filter(|c| matches!(c, Command::Pass(_))).count();
    assert_eq!(count(r#"class="pass""#), passes);
    assert_eq!(count(r#"class="barrier"#), plan.barrier_commands());
    assert_eq!(count(r#"class="wait "#), plan.semaphore_waits());
    let timeline = kind(|t| matches!(t, WaitTarget::Batch { .. }));
    assert_eq!(count(r#"class="wait timeline""#), timeline);
    let earlier = kind(|t| matches!(t, WaitTarget::Value { .. }));
    assert_eq!(count(r#"class="wait earlier""#), earlier);
    let binary = kind(|t| matches!(t, WaitTarget::Binary(_)));
    assert_eq!(count(r#"class="wait binary""#), binary);
    dot
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

/// Braces balance outside strings, and every string closes.
fn assert_balanced(dot: &str) {
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, c) in dot.char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, '\n') => panic!("line break inside a string at {i}:\n{dot}"),
            (false, _, '"') => in_string = true,
            (false, _, '{') => depth += 1,
            (false, _, '}') => {
                depth -= 1;
                assert!(depth >= 0, "unbalanced at {i}:\n{dot}");
            }
            _ => {}
        }
    }
    assert!(!in_string && depth == 0, "{dot}");
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

#[cfg(feature = "verify")]
mod simulated;
