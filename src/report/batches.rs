//! A frame's batches for the viewer: where each sits on its lane, its semaphore waits and
//! signals, and its commands, with every barrier entry's scopes and cause.

use super::json::{array, index, Strings};
use crate::plan::display::{cause_line, flags, range_line, single_aspect};
use crate::plan::{BarrierCmd, Batch, Command, Plan, Prior, Scopes, WaitTarget};
use crate::predict::passes_in;
use crate::range::SubRange;
use std::fmt::Write;

/// Appends batch `b` of queue `q` as a JSON object. `passes` are the passes' places on the
/// axis; `lane_end` is where the queue's previous batch ended, and becomes where this one does.
pub(super) fn write_batch(
    out: &mut String,
    s: &mut Strings,
    (plan, passes): (&Plan, &[Option<(u64, u64)>]),
    (q, b, batch): (usize, usize, &Batch),
    lane_end: &mut u64,
) {
    let at = |i: usize| passes.get(i).copied().flatten();
    let pass_xs = || passes_in(&batch.commands).filter_map(at);
    let start = pass_xs().map(|x| x.0).min().unwrap_or(*lane_end);
    let end = pass_xs().map(|x| x.1).max().unwrap_or(start);
    *lane_end = end;
    let _ = write!(
        out,
        "{{\"queue\":{q},\"index\":{b},\"x\":[{start},{end}],\"waits\":"
    );
    array(out, &batch.waits, |out, w| {
        let (kind, queue, n) = match w.target {
            WaitTarget::Batch { queue, batch } => (0, Some(queue), batch as u64),
            WaitTarget::Value { queue, value } => (1, Some(queue), value),
            WaitTarget::Binary(_) => (2, None, 0),
        };
        let _ = write!(out, "[{kind},");
        index(out, queue);
        let _ = write!(out, ",{n},{}]", s.of(&flags(w.stages)));
    });
    out.push_str(",\"signal\":");
    index(out, batch.signal.map(|st| s.of(&flags(st))));
    out.push_str(",\"binary_signals\":");
    array(out, &batch.binary_signals, |out, (_, st)| {
        let _ = write!(out, "{}", s.of(&flags(*st)));
    });
    out.push_str(",\"items\":");
    let commands = batch.commands.iter().enumerate();
    array(out, commands, |out, (c, command)| match command {
        Command::Pass(i) => {
            let _ = write!(out, "{i}");
        }
        Command::Barrier(bar) => {
            // At the start of the pass after it, else at the end of the pass before it.
            let (before, after) = batch.commands.split_at(c);
            let next = passes_in(after).next().and_then(at);
            let prev = passes_in(before).next_back().and_then(at);
            let x = next.map(|x| x.0).or(prev.map(|x| x.1)).unwrap_or(start);
            let _ = write!(out, "{{\"x\":{x},\"entries\":");
            write_entries(out, s, plan, q, bar);
            out.push('}');
        }
    });
    out.push('}');
}

/// The entries of barrier command `bar` on queue `q`, images first.
fn write_entries(out: &mut String, s: &mut Strings, plan: &Plan, q: usize, bar: &BarrierCmd) {
    let family = plan.input.queues.get(q).map(|d| d.family);
    let images = bar.images.iter().map(|b| {
        let mut range = range_line(&SubRange::Image(b.range));
        if let Some(aspect) = single_aspect(plan, b) {
            range = format!("{range} {aspect}");
        }
        let layouts = Some((format!("{:?}", b.old_layout), format!("{:?}", b.new_layout)));
        (b.resource, range, layouts, b.scopes, b.cause)
    });
    let buffers = bar.buffers.iter().map(|b| {
        let range = range_line(&SubRange::Buffer(b.range));
        (b.resource, range, None, b.scopes, b.cause)
    });
    array(
        out,
        images.chain(buffers),
        |out, (r, range, layouts, sc, cause)| {
            let _ = write!(out, "[{r},{},", s.of(&range));
            let (old, new) = match &layouts {
                Some((old, new)) => (Some(s.of(old)), Some(s.of(new))),
                None => (None, None),
            };
            index(out, old);
            out.push(',');
            index(out, new);
            write_scopes(out, s, &sc, family);
            let after = cause.and_then(|c| match c.after {
                Prior::Pass(p) | Prior::SharedMemory(p) | Prior::BinaryWait(p) => Some(p),
                Prior::Nothing | Prior::EarlierExecution { .. } => None,
            });
            out.push(',');
            index(out, cause.map(|c| c.pass));
            out.push(',');
            index(out, cause.map(|c| s.of(&cause_line(plan, &c))));
            out.push(',');
            index(out, after);
            out.push(']');
        },
    );
}

/// `,src stages,src access,dst stages,dst access,families,kind` of an entry on a queue of
/// `family`: kind 1 is a release (this family gives the resource away), 2 an acquire.
fn write_scopes(out: &mut String, s: &mut Strings, sc: &Scopes, family: Option<u32>) {
    let _ = write!(
        out,
        ",{},{},{},{},",
        s.of(&flags(sc.src_stages)),
        s.of(&flags(sc.src_access)),
        s.of(&flags(sc.dst_stages)),
        s.of(&flags(sc.dst_access))
    );
    let kind = match sc.families {
        Some((from, to)) if from != to => {
            let _ = write!(out, "[{from},{to}]");
            if family == Some(from) {
                1
            } else {
                2
            }
        }
        _ => {
            out.push_str("null");
            0
        }
    };
    let _ = write!(out, ",{kind}");
}
