//! Writing the laid-out plan as SVG.
//!
//! Every mark is a `<g>` with a `class` that says what it is (`lane`, `batch`, `pass`,
//! `barrier`, `wait timeline`, `wait earlier`, `wait binary`, `signal`, `signal binary`) and a
//! `<title>`, which browsers show as a tooltip, with the full text. The arrows come last, so
//! they lie on top, each over a white halo that keeps it readable where it crosses a lane.

use super::layout::{
    frame_y_h, Arrow, BatchBox, Lane, Layout, Mark, Slot, Timing, BARRIER_W, EARLIER_W, LABEL_W,
    LANE_H, LEGEND_COLS, LEGEND_ITEM_W, LEGEND_ROW, LEGEND_ROWS, MARGIN, PASS_H, PASS_W,
};
use super::route::path;
use super::text::{fit, xml, BOLD, FONT};
use super::{
    barrier_resources, barrier_tooltip, batch_tooltip, caps_label, family, family_label, pass_name,
    pass_tooltip, queue_colour, queue_name, queue_tooltip, title, wait_line, BarrierKind, Rgb,
    BARRIER, BINARY, MUTED, OWNERSHIP, QUEUE_COLOURS,
};
use crate::plan::{Command, Plan, WaitTarget};
use std::fmt::{self, Write};

/// Dark text.
const INK: Rgb = Rgb(0x1f, 0x1f, 0x1f);
/// The outline of a pass on the critical path ([`super::Plan::to_svg_timed`]).
const CRITICAL: Rgb = Rgb(0xc6, 0x28, 0x28);

/// The SVG document.
pub(super) fn render(plan: &Plan, layout: &Layout) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = document(&mut out, plan, layout);
    out
}

fn document(out: &mut String, plan: &Plan, l: &Layout) -> fmt::Result {
    let (w, h) = (l.width, l.height);
    writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" font-size="12">"#
    )?;
    let title = title(plan);
    writeln!(out, "<title>{}</title>", xml(&title))?;
    defs(out)?;
    writeln!(out, r##"<rect width="{w}" height="{h}" fill="#ffffff"/>"##)?;
    writeln!(
        out,
        r#"<text x="{MARGIN}" y="{:.1}" font-size="16" font-weight="bold" fill="{INK}">{}</text>"#,
        MARGIN + 18.0,
        xml(&title)
    )?;
    for lane in &l.lanes {
        self::lane(out, plan, l, lane)?;
    }
    if let Some(ex) = l.earlier_x {
        for (lane, _) in l.lanes.iter().zip(&l.earlier_marks).filter(|(_, m)| **m) {
            earlier(out, plan, ex, lane)?;
        }
    }
    writeln!(out, r#"<g class="arrows">"#)?;
    for a in &l.arrows {
        arrow(out, plan, a)?;
    }
    writeln!(out, "</g>")?;
    legend(out, l.legend_y)?;
    if let Some(t) = &l.timing {
        writeln!(
            out,
            r#"<text class="prediction" x="{MARGIN}" y="{:.1}" fill="{INK}">{}</text>"#,
            l.legend_y + LEGEND_ROWS as f32 * LEGEND_ROW + 14.0,
            xml(&t.caption)
        )?;
    }
    writeln!(out, "</svg>")
}

/// Arrowheads, one per colour (SVG 1.1 markers cannot take their path's colour).
fn defs(out: &mut String) -> fmt::Result {
    writeln!(out, "<defs>")?;
    let heads = QUEUE_COLOURS
        .iter()
        .enumerate()
        .map(|(i, c)| (i.to_string(), *c))
        .chain([("muted".to_string(), MUTED), ("binary".to_string(), BINARY)]);
    for (id, c) in heads {
        writeln!(
            out,
            r#"<marker id="head-{id}" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>"#
        )?;
    }
    writeln!(out, "</defs>")
}

fn lane(out: &mut String, plan: &Plan, l: &Layout, lane: &Lane) -> fmt::Result {
    let q = lane.queue;
    let colour = queue_colour(q);
    let y = lane.y;
    let row = lane.row_y();
    writeln!(out, r#"<g class="lane" id="lane-{q}">"#)?;
    writeln!(
        out,
        r#"<rect x="{MARGIN}" y="{y:.1}" width="{:.1}" height="{LANE_H}" rx="6" fill="{}"/>"#,
        l.width - 2.0 * MARGIN,
        colour.tint(0.9)
    )?;
    writeln!(
        out,
        r#"<g class="lane-label"><title>{}</title>"#,
        xml(&queue_tooltip(plan, q))
    )?;
    writeln!(
        out,
        r#"<rect x="{MARGIN}" y="{y:.1}" width="7" height="{LANE_H}" rx="2" fill="{colour}"/>"#
    )?;
    let text_x = MARGIN + 18.0;
    let text_w = LABEL_W - 18.0 - 10.0;
    let (name, _) = fit(queue_name(plan, q), 14.0 * BOLD, text_w);
    let lines = [
        (row - 12.0, 14.0, "bold", colour, name),
        (row + 7.0, 12.0, "normal", INK, family_label(plan, q)),
        (
            row + 24.0,
            11.0,
            "normal",
            MUTED,
            fit(&caps_label(plan, q), 11.0, text_w).0,
        ),
    ];
    for (ty, size, weight, fill, s) in lines {
        writeln!(
            out,
            r#"<text x="{text_x}" y="{ty:.1}" font-size="{size}" font-weight="{weight}" fill="{fill}">{}</text>"#,
            xml(&s)
        )?;
    }
    writeln!(out, "</g>")?;
    if lane.batches.is_empty() {
        writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-style="italic" fill="{MUTED}">no work on this queue</text>"#,
            MARGIN + LABEL_W + 12.0,
            row + 4.0
        )?;
    }
    for b in &lane.batches {
        batch(out, plan, lane, b, l.timing.as_ref())?;
    }
    writeln!(out, "</g>")
}

fn batch(
    out: &mut String,
    plan: &Plan,
    lane: &Lane,
    bb: &BatchBox,
    timing: Option<&Timing>,
) -> fmt::Result {
    let (q, b) = (lane.queue, bb.index);
    let batch = &plan.queues[q].batches[b];
    let colour = queue_colour(q);
    let (fy, fh) = frame_y_h(lane.y);
    writeln!(
        out,
        r#"<g class="batch" id="batch-{q}-{b}"><title>{}</title>"#,
        xml(&batch_tooltip(plan, q, b, batch))
    )?;
    writeln!(
        out,
        r##"<rect x="{:.1}" y="{fy:.1}" width="{:.1}" height="{fh:.1}" rx="8" fill="#ffffff" stroke="{colour}" stroke-width="1.5"/>"##,
        bb.x, bb.w
    )?;
    writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="{MUTED}">batch {b}</text>"#,
        bb.x + 9.0,
        fy + 15.0
    )?;
    for slot in &bb.slots {
        self::slot(out, plan, (lane, bb, slot), timing)?;
    }
    if let Some(stages) = batch.signal {
        let tip = format!(
            "signals the `{}` timeline at {stages:?}: batches that wait on it may start",
            queue_name(plan, q)
        );
        writeln!(
            out,
            r##"<g class="signal" id="signal-{q}-{b}"><title>{}</title><circle cx="{:.1}" cy="{:.1}" r="6" fill="{colour}" stroke="#ffffff" stroke-width="2"/></g>"##,
            xml(&tip),
            bb.x + bb.w,
            lane.row_y()
        )?;
    }
    writeln!(out, "</g>")
}

fn slot(
    out: &mut String,
    plan: &Plan,
    (lane, bb, slot): (&Lane, &BatchBox, &Slot),
    timing: Option<&Timing>,
) -> fmt::Result {
    let (q, b) = (lane.queue, bb.index);
    let batch = &plan.queues[q].batches[b];
    let row = lane.row_y();
    let cx = slot.x + slot.w / 2.0;
    let word_y = row + PASS_H / 2.0 + 13.0;
    match slot.mark {
        Mark::Command(c) => match &batch.commands[c] {
            Command::Pass(p) => {
                let colour = queue_colour(q);
                let (name, _) = fit(pass_name(plan, *p), 12.0, PASS_W - 14.0);
                let mut tip = pass_tooltip(plan, *p);
                let critical = timing.is_some_and(|t| t.critical.get(*p) == Some(&true));
                if let Some(Some((start, end))) = timing.map(|t| t.passes[*p]) {
                    let ms = |ns: u64| ns as f64 / 1e6;
                    let path = if critical {
                        ", on the critical path"
                    } else {
                        ""
                    };
                    tip += &format!(
                        "\npredicted at best: {:.3} to {:.3} ms{path}",
                        ms(start),
                        ms(end)
                    );
                }
                let (class, stroke, width) = if critical {
                    ("pass critical", CRITICAL, 3.0)
                } else {
                    ("pass", colour, 1.5)
                };
                writeln!(
                    out,
                    r#"<g class="{class}" id="cmd-{q}-{b}-{c}" data-pass="{p}"><title>{}</title>"#,
                    xml(&tip)
                )?;
                writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{PASS_W}" height="{PASS_H}" rx="5" fill="{}" stroke="{stroke}" stroke-width="{width}"/>"#,
                    slot.x,
                    row - PASS_H / 2.0,
                    colour.tint(0.75)
                )?;
                writeln!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="{INK}">{}</text></g>"#,
                    row + 4.0,
                    xml(&name)
                )
            }
            Command::Barrier(bar) => {
                let kind = BarrierKind::of(bar, family(plan, q));
                let colour = if kind == BarrierKind::Plain {
                    BARRIER
                } else {
                    OWNERSHIP
                };
                writeln!(
                    out,
                    r#"<g class="{}" id="cmd-{q}-{b}-{c}"><title>{}</title>"#,
                    kind.class(),
                    xml(&barrier_tooltip(plan, bar, kind))
                )?;
                writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="12" height="{PASS_H}" rx="3" fill="{colour}"/>"#,
                    cx - 6.0,
                    row - PASS_H / 2.0
                )?;
                let (names, _) = fit(&barrier_resources(plan, bar), 10.0, BARRIER_W - 4.0);
                writeln!(
                    out,
                    r#"<text x="{cx:.1}" y="{word_y:.1}" text-anchor="middle" font-size="10" fill="{colour}">{}</text>"#,
                    kind.label()
                )?;
                writeln!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="{MUTED}">{}</text></g>"#,
                    word_y + 12.0,
                    xml(&names)
                )
            }
        },
        Mark::BinaryWait(w) => {
            let tip = format!(
                "waits on a binary semaphore (swapchain acquire or external): {}",
                wait_line(plan, &batch.waits[w])
            );
            writeln!(
                out,
                r#"<g class="wait binary" id="wait-{q}-{b}-{w}"><title>{}</title>"#,
                xml(&tip)
            )?;
            binary_glyph(out, cx - 8.0, row, (cx + 4.0, slot.x + slot.w))?;
            writeln!(
                out,
                r#"<text x="{cx:.1}" y="{word_y:.1}" text-anchor="middle" font-size="10" fill="{BINARY}">wait</text></g>"#
            )
        }
        Mark::BinarySignal(s) => {
            let (sem, stages) = batch.binary_signals[s];
            let tip = format!(
                "signals binary {sem:?} at {stages:?} (present or external) at the end of the batch"
            );
            writeln!(
                out,
                r#"<g class="signal binary" id="binary-signal-{q}-{b}-{s}"><title>{}</title>"#,
                xml(&tip)
            )?;
            binary_glyph(out, cx + 8.0, row, (slot.x, cx - 4.0))?;
            writeln!(
                out,
                r#"<text x="{cx:.1}" y="{word_y:.1}" text-anchor="middle" font-size="10" fill="{BINARY}">signal</text></g>"#
            )
        }
    }
}

/// A binary semaphore: a dashed orange circle at (`cx`, `cy`) and a short dashed arrow
/// between `arrow.0` and `arrow.1` (left to right) on the same line.
fn binary_glyph(out: &mut String, cx: f32, cy: f32, arrow: (f32, f32)) -> fmt::Result {
    writeln!(
        out,
        r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="11" fill="{}" stroke="{BINARY}" stroke-width="2" stroke-dasharray="4 3"/>"#,
        BINARY.tint(0.85)
    )?;
    writeln!(
        out,
        r#"<path d="M{:.1},{cy:.1} L{:.1},{cy:.1}" stroke="{BINARY}" stroke-width="2" stroke-dasharray="4 3" marker-end="url(#head-binary)"/>"#,
        arrow.0, arrow.1
    )
}

/// The "earlier graphs" marker of a lane: where waits on values from earlier executions start.
fn earlier(out: &mut String, plan: &Plan, ex: f32, lane: &Lane) -> fmt::Result {
    let row = lane.row_y();
    let tip = format!(
        "timeline values that earlier graphs (executions) signalled on `{}`",
        queue_name(plan, lane.queue)
    );
    writeln!(
        out,
        r#"<g class="earlier" id="earlier-{}"><title>{}</title>"#,
        lane.queue,
        xml(&tip)
    )?;
    writeln!(
        out,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="40" rx="5" fill="#f4f4f4" stroke="{MUTED}" stroke-dasharray="4 3"/>"##,
        ex + 8.0,
        row - 20.0,
        EARLIER_W - 16.0
    )?;
    let cx = ex + EARLIER_W / 2.0;
    for (dy, word) in [(-3.0, "earlier"), (12.0, "graphs")] {
        writeln!(
            out,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="{MUTED}">{word}</text>"#,
            row + dy
        )?;
    }
    writeln!(out, "</g>")
}

fn arrow(out: &mut String, plan: &Plan, a: &Arrow) -> fmt::Result {
    let batch = &plan.queues[a.queue].batches[a.batch];
    let wait = &batch.waits[a.wait];
    let mut tip = format!(
        "batch {} of `{}` waits for {}",
        a.batch,
        queue_name(plan, a.queue),
        wait_line(plan, wait)
    );
    if let (WaitTarget::Batch { queue, .. }, Some(dst)) = (wait.target, family(plan, a.queue)) {
        for line in ownership(plan, batch, family(plan, queue), dst) {
            tip += &format!("\ncarries ownership of {line}");
        }
    }
    let (class, head, colour, dash) = match (a.earlier, a.source_queue) {
        (false, Some(sq)) => (
            "wait timeline",
            (sq % QUEUE_COLOURS.len()).to_string(),
            queue_colour(sq),
            "",
        ),
        _ => (
            "wait earlier",
            "muted".to_string(),
            MUTED,
            r#" stroke-dasharray="6 4""#,
        ),
    };
    let d = path(a);
    writeln!(
        out,
        r#"<g class="{class}" id="wait-{}-{}-{}"><title>{}</title>"#,
        a.queue,
        a.batch,
        a.wait,
        xml(&tip)
    )?;
    writeln!(
        out,
        r##"<path d="{d}" fill="none" stroke="#ffffff" stroke-width="6" stroke-opacity="0.85"/>"##
    )?;
    writeln!(
        out,
        r#"<path d="{d}" fill="none" stroke="{colour}" stroke-width="2.2"{dash} marker-end="url(#head-{head})"/>"#
    )?;
    writeln!(
        out,
        r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/></g>"#,
        a.from.0, a.from.1
    )
}

/// The acquires in `batch` from family `src` to family `dst`: the ownership transfers that
/// travel along a wait on a queue of family `src`.
fn ownership(plan: &Plan, batch: &crate::plan::Batch, src: Option<u32>, dst: u32) -> Vec<String> {
    let Some(src) = src else { return vec![] };
    let bars = batch.commands.iter().filter_map(|c| match c {
        Command::Barrier(b) => Some(b),
        Command::Pass(_) => None,
    });
    let mut out = vec![];
    for bar in bars {
        let resources = bar
            .images
            .iter()
            .map(|b| (b.resource, b.scopes.families))
            .chain(bar.buffers.iter().map(|b| (b.resource, b.scopes.families)));
        for (r, families) in resources {
            if families == Some((src, dst)) {
                let name = super::resource_name(plan, r);
                out.push(format!("`{name}` (family {src} -> {dst})"));
            }
        }
    }
    out
}

/// What the marks mean, in two rows under the lanes.
fn legend(out: &mut String, y: f32) -> fmt::Result {
    writeln!(out, r#"<g class="legend">"#)?;
    let items: [(&str, &str); 6] = [
        ("pass", "pass (hover for its uses)"),
        ("barrier", "barrier command (hover for layouts)"),
        ("ownership", "ownership release or acquire"),
        ("timeline", "timeline wait, signal to waiting batch"),
        ("binary", "binary semaphore (swapchain)"),
        ("signal", "timeline signal at a batch's end"),
    ];
    for (i, (glyph, words)) in items.iter().enumerate() {
        let x = MARGIN + (i % LEGEND_COLS) as f32 * LEGEND_ITEM_W;
        let cy = y + (i / LEGEND_COLS) as f32 * LEGEND_ROW + LEGEND_ROW / 2.0;
        let grey = Rgb(0x88, 0x88, 0x88);
        match *glyph {
            "pass" => writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="34" height="16" rx="3" fill="{}" stroke="{grey}"/>"#,
                cy - 8.0,
                grey.tint(0.75)
            )?,
            "barrier" | "ownership" => writeln!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="8" height="18" rx="2" fill="{}"/>"#,
                x + 13.0,
                cy - 9.0,
                if *glyph == "barrier" {
                    BARRIER
                } else {
                    OWNERSHIP
                }
            )?,
            "timeline" => writeln!(
                out,
                r#"<path d="M{x:.1},{cy:.1} L{:.1},{cy:.1}" stroke="{}" stroke-width="2.2" marker-end="url(#head-0)"/>"#,
                x + 34.0,
                queue_colour(0)
            )?,
            "binary" => binary_glyph(out, x + 10.0, cy, (x + 22.0, x + 36.0))?,
            _ => writeln!(
                out,
                r##"<circle cx="{:.1}" cy="{cy:.1}" r="6" fill="{}" stroke="#ffffff" stroke-width="2"/>"##,
                x + 17.0,
                queue_colour(0)
            )?,
        }
        let (words, _) = fit(words, 11.0, LEGEND_ITEM_W - 56.0);
        writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" fill="{INK}">{}</text>"#,
            x + 44.0,
            cy + 4.0,
            xml(&words)
        )?;
    }
    writeln!(out, "</g>")
}
