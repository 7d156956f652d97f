//! One frame of a report: a plan, with its measured times and findings where there are some,
//! turned into the viewer's data (`src/report/viewer/README.md` gives the schema).
//!
//! The layout's only decision is the x axis: measured GPU time when every recorded pass was
//! timed, the best case [`Plan::predict`] gives from the measured durations when only some
//! were, and plan order (each pass one unit, cross-queue waits kept) without times.

use super::batches::write_batch;
use super::json::{array, index, number, string, Strings};
use crate::plan::display::{flags, range_line};
use crate::plan::{Plan, ResourceKind};
use crate::predict::{best_moves, Prediction};
use crate::violation::{Actor, Violation};
use std::fmt::Write;

/// How many passes a frame may have for its report to try moving each one to another queue
/// ([`best_moves`] plans the frame again per pass and queue).
const MOVES_UP_TO_PASSES: usize = 64;

/// What one frame of a report is made of.
pub(super) struct FrameInput<'a> {
    pub(super) label: &'a str,
    pub(super) plan: &'a Plan,
    /// Per pass (by index): when it ran on the GPU, in ns from any origin; `None` if untimed.
    pub(super) measured: &'a [Option<(u64, u64)>],
    pub(super) findings: &'a [Violation],
}

/// Where things go on the x axis.
struct Axis {
    name: &'static str,
    /// Per pass: its start and end; `None` for a culled pass.
    passes: Vec<Option<(u64, u64)>>,
    /// With times: the prediction from the measured durations.
    predicted: Option<Prediction>,
    durations: Vec<u64>,
}

impl Axis {
    fn of(f: &FrameInput) -> Axis {
        let plan = f.plan;
        let n = plan.input.passes.len();
        let measured = |i: usize| f.measured.get(i).copied().flatten();
        let durations: Vec<u64> = (0..n)
            .map(|i| measured(i).map_or(0, |(s, e)| e.saturating_sub(s)))
            .collect();
        let timed = plan
            .order
            .iter()
            .filter(|&&i| measured(i).is_some())
            .count();
        if timed == 0 {
            let order = plan.predict(&vec![1; n]);
            return Axis {
                name: "order",
                passes: order.passes,
                predicted: None,
                durations,
            };
        }
        let predicted = plan.predict(&durations);
        if timed < plan.order.len() {
            let passes = predicted.passes.clone();
            return Axis {
                name: "predicted",
                passes,
                predicted: Some(predicted),
                durations,
            };
        }
        let origin = plan
            .order
            .iter()
            .filter_map(|&i| measured(i))
            .map(|t| t.0)
            .min();
        let origin = origin.unwrap_or(0);
        let mut passes = vec![None; n];
        for &i in &plan.order {
            passes[i] = measured(i).map(|(s, e)| (s - origin, e.max(s) - origin));
        }
        Axis {
            name: "measured",
            passes,
            predicted: Some(predicted),
            durations,
        }
    }

    /// The measured span: first start to last end of the timed passes.
    fn measured_span(&self, f: &FrameInput) -> Option<u64> {
        let times = || {
            f.plan
                .order
                .iter()
                .filter_map(|&i| f.measured.get(i).copied().flatten())
        };
        Some(times().map(|t| t.1).max()? - times().map(|t| t.0).min()?)
    }
}

/// Appends frame `f` as a JSON object.
pub(super) fn write(out: &mut String, s: &mut Strings, f: &FrameInput) {
    let axis = Axis::of(f);
    let plan = f.plan;
    out.push_str("{\"label\":");
    string(out, f.label);
    let _ = write!(out, ",\"axis\":\"{}\",\"queues\":", axis.name);
    array(out, &plan.input.queues, |out, q| {
        out.push_str("{\"name\":");
        string(out, &q.name);
        let _ = write!(
            out,
            ",\"family\":{},\"caps\":{}}}",
            q.family,
            s.of(&flags(q.caps))
        );
    });
    out.push_str(",\"resources\":");
    array(out, &plan.input.resources, |out, r| {
        out.push_str("{\"name\":");
        string(out, &r.name);
        let kind = match r.kind {
            ResourceKind::Image { .. } => "image",
            ResourceKind::Buffer { .. } => "buffer",
        };
        let _ = write!(
            out,
            ",\"kind\":\"{kind}\",\"transient\":{}}}",
            r.transient.is_some()
        );
    });
    out.push_str(",\"passes\":");
    write_passes(out, s, f, &axis);
    out.push_str(",\"batches\":");
    let batches = (plan.queues.iter().enumerate()).flat_map(|(q, qp)| {
        qp.batches
            .iter()
            .enumerate()
            .map(move |(b, batch)| (q, b, batch))
    });
    let mut lane_end = vec![0; plan.queues.len()];
    array(out, batches, |out, (q, b, batch)| {
        write_batch(
            out,
            s,
            (plan, &axis.passes),
            (q, b, batch),
            &mut lane_end[q],
        );
    });
    write_span(out, f, &axis);
    write_memory(out, plan, &axis);
    out.push_str(",\"findings\":");
    array(out, f.findings, write_finding);
    out.push('}');
}

fn write_passes(out: &mut String, s: &mut Strings, f: &FrameInput, axis: &Axis) {
    let plan = f.plan;
    let critical = axis
        .predicted
        .as_ref()
        .map_or(&[][..], |p| &p.critical_path[..]);
    array(out, plan.input.passes.iter().enumerate(), |out, (i, p)| {
        out.push_str("{\"name\":");
        string(out, &p.name);
        let _ = write!(out, ",\"queue\":{},\"x\":", p.queue);
        match axis.passes.get(i).copied().flatten() {
            Some((a, b)) => {
                let _ = write!(out, "[{a},{b}]");
            }
            None => out.push_str("null"),
        }
        out.push_str(",\"ns\":");
        let timed = f.measured.get(i).copied().flatten();
        number(out, timed.map(|_| axis.durations[i]));
        let _ = write!(out, ",\"critical\":{},\"uses\":", critical.contains(&i));
        array(out, &p.uses, |out, u| {
            let res = plan.input.resources.get(u.resource);
            let range = u.range.or(res.map(|r| r.kind.whole()));
            let range = range.map_or_else(String::new, |r| range_line(&r));
            let access = format!("{}/{}", flags(u.access.stages), flags(u.access.access));
            let image = res.is_some_and(|r| matches!(r.kind, ResourceKind::Image { .. }));
            let layout = image.then(|| s.of(&format!("{:?}", u.access.layout)));
            let _ = write!(out, "[{},{},{},", u.resource, s.of(&range), s.of(&access));
            index(out, layout);
            out.push(']');
        });
        out.push('}');
    });
}

/// `,"span":{..},"moves":[..]`: the predicted and measured spans, the critical path, and the
/// moves to another queue that would shorten the span.
fn write_span(out: &mut String, f: &FrameInput, axis: &Axis) {
    let p = axis.predicted.as_ref();
    out.push_str(",\"span\":{\"predicted_ns\":");
    number(out, p.map(|p| p.span_ns));
    out.push_str(",\"measured_ns\":");
    number(out, p.and(axis.measured_span(f)));
    out.push_str(",\"serial_ns\":");
    number(out, p.map(|p| p.serial_ns));
    out.push_str(",\"critical\":");
    array(
        out,
        p.map_or(&[][..], |p| &p.critical_path[..]),
        |out, i| {
            let _ = write!(out, "{i}");
        },
    );
    out.push_str("},\"moves\":");
    let small = f.plan.input.passes.len() <= MOVES_UP_TO_PASSES;
    let moves = match p {
        Some(_) if small => best_moves(f.plan, &axis.durations),
        _ => Vec::new(),
    };
    array(out, moves.iter().take(8), |out, m| {
        let _ = write!(out, "[{},{},{}]", m.pass, m.to_queue, m.span_ns);
    });
}

/// `,"memory":..`: where the transients sit in their heaps, and when.
fn write_memory(out: &mut String, plan: &Plan, axis: &Axis) {
    let t = &plan.transients;
    if t.placements.is_empty() {
        out.push_str(",\"memory\":null");
        return;
    }
    out.push_str(",\"memory\":{\"heaps\":");
    array(out, &t.heaps, |out, h| {
        let _ = write!(out, "{}", h.size);
    });
    out.push_str(",\"placements\":");
    let at = |i: usize| axis.passes.get(i).copied().flatten();
    array(out, &t.placements, |out, p| {
        let start = at(p.first_use.pass).map_or(0, |x| x.0);
        let ends = p.last_uses.iter().filter_map(|u| at(u.pass)).map(|x| x.1);
        let end = ends.max().unwrap_or(start);
        let _ = write!(
            out,
            "[{},{},{},{},{start},{end}]",
            p.resource, p.heap, p.offset, p.size
        );
    });
    let _ = write!(
        out,
        ",\"aliased\":{},\"unaliased\":{},\"lower_bound\":{}}}",
        t.total_size(),
        t.unaliased_size,
        t.lower_bound
    );
}

/// One verifier finding, placed at the passes it names.
fn write_finding(out: &mut String, v: &Violation) {
    let pass = |a: &Option<Actor>| match a {
        Some(Actor::Pass { pass, .. }) => Some(*pass),
        _ => None,
    };
    out.push_str("{\"kind\":");
    string(out, &v.kind.to_string());
    out.push_str(",\"text\":");
    string(out, &v.to_string());
    out.push_str(",\"pass\":");
    index(out, pass(&v.second));
    out.push_str(",\"first_pass\":");
    index(out, pass(&v.first));
    out.push_str(",\"resource\":");
    match &v.resource {
        Some(r) => string(out, r),
        None => out.push_str("null"),
    }
    out.push('}');
}
