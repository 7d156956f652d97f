//! The checks every picture must pass, and helpers to read an SVG.

use super::super::text;
use crate::plan::*;
use roxmltree::{Document, Node};

pub(crate) fn has_class(n: &Node, class: &str) -> bool {
    n.attribute("class")
        .is_some_and(|c| c.split(' ').any(|t| t == class))
}

/// The `<g>` elements whose class has `class` among its words.
pub(crate) fn groups<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && has_class(n, class))
        .collect()
}

pub(crate) fn title<'a>(n: &Node<'a, '_>) -> &'a str {
    n.children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap_or_default()
}

pub(crate) fn f(n: &Node, attr: &str) -> f32 {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("{n:?} has no {attr}"))
        .parse()
        .unwrap()
}

/// The frame of `batch-q-b`: (left, right).
pub(crate) fn frame(doc: &Document, q: usize, b: usize) -> (f32, f32) {
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
pub(crate) fn corners(d: &str) -> Vec<(f32, f32)> {
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
pub(crate) fn mark_rects(doc: &Document) -> Vec<(String, [f32; 4])> {
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
pub(crate) fn dump(name: &str, plan: &Plan) {
    if let Some(dir) = std::env::var_os("VK_BATON_DIAGRAM_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::write(dir.join(format!("{name}.svg")), plan.to_svg()).unwrap();
        std::fs::write(dir.join(format!("{name}.dot")), plan.to_dot()).unwrap();
    }
}

/// The `id` of a wait's mark, `wait-Q-B-W`, back to (queue, batch, wait).
pub(crate) fn wait_id(id: &str) -> [usize; 3] {
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
pub(crate) fn check_svg(plan: &Plan) -> String {
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
    // Arrows also keep out of every batch frame: they leave one at its right edge and enter
    // one at its left edge.
    let frames: Vec<(String, [f32; 4])> = groups(&doc, "batch")
        .iter()
        .map(|g| {
            let r = g.children().find(|c| c.has_tag_name("rect")).unwrap();
            let (x, y) = (f(&r, "x"), f(&r, "y"));
            let id = g.attribute("id").unwrap().to_string();
            (id, [x, y, x + f(&r, "width"), y + f(&r, "height")])
        })
        .collect();
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
            for (mark, r) in marks.iter().chain(&frames) {
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

/// No text runs off the picture or into another text (by the estimated widths, which err wide).
pub(crate) fn assert_texts_apart(doc: &Document) {
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
pub(crate) fn check_dot(plan: &Plan) -> String {
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

/// Braces balance outside strings, and every string closes.
pub(crate) fn assert_balanced(dot: &str) {
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

/// A straight run of an arrow: from, to.
type Segment = ((f32, f32), (f32, f32));

/// How many times one wait arrow crosses another (a vertical run through a horizontal one).
pub(crate) fn arrow_crossings(doc: &Document) -> usize {
    let segments: Vec<Vec<Segment>> = groups(doc, "wait")
        .iter()
        .filter(|g| !has_class(g, "binary"))
        .map(|g| {
            let path = g.children().rfind(|c| c.has_tag_name("path")).unwrap();
            let points = corners(path.attribute("d").unwrap());
            points.windows(2).map(|p| (p[0], p[1])).collect()
        })
        .collect();
    let cross = |v: Segment, h: Segment| {
        let vertical = v.0 .0 == v.1 .0 && v.0 .1 != v.1 .1;
        let horizontal = h.0 .1 == h.1 .1 && h.0 .0 != h.1 .0;
        let x = v.0 .0;
        let y = h.0 .1;
        vertical
            && horizontal
            && h.0 .0.min(h.1 .0) < x
            && x < h.0 .0.max(h.1 .0)
            && v.0 .1.min(v.1 .1) < y
            && y < v.0 .1.max(v.1 .1)
    };
    let mut n = 0;
    for (i, a) in segments.iter().enumerate() {
        for b in &segments[i + 1..] {
            for &sa in a {
                for &sb in b {
                    n += usize::from(cross(sa, sb)) + usize::from(cross(sb, sa));
                }
            }
        }
    }
    n
}
