//! Writing the plan as Graphviz DOT.
//!
//! A cluster per queue (the lane) holds a cluster per batch, which holds a node per mark in
//! recording order: binary waits, passes and barrier commands, binary signals, the timeline
//! signal. Thin grey edges keep each lane's program order; a coloured edge per timeline wait
//! runs from the signalling batch's last node to the waiting batch's first (clipped to the
//! batch frames). Nodes, clusters and edges carry the same `id` and `class` as the SVG's marks,
//! which Graphviz copies into its SVG output.

use super::text::{dot as esc, FONT};
use super::{
    barrier_tooltip, batch_tooltip, caps_label, family, family_label, pass_name, pass_tooltip,
    queue_colour, queue_name, queue_tooltip, wait_line, BarrierKind, BARRIER, BINARY, MUTED,
    OWNERSHIP,
};
use crate::plan::{Command, Plan, WaitTarget};
use std::fmt::{self, Write};

/// The DOT document.
pub(super) fn render(plan: &Plan) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = document(&mut out, plan);
    out
}

/// The node ids of each batch, in order (at least one per batch: an anchor if it is empty).
fn batch_nodes(plan: &Plan) -> Vec<Vec<Vec<String>>> {
    plan.queues
        .iter()
        .enumerate()
        .map(|(q, qp)| {
            qp.batches
                .iter()
                .enumerate()
                .map(|(b, batch)| {
                    let mut ids: Vec<String> = batch
                        .waits
                        .iter()
                        .enumerate()
                        .filter(|(_, w)| matches!(w.target, WaitTarget::Binary(_)))
                        .map(|(w, _)| format!("w_{q}_{b}_{w}"))
                        .chain((0..batch.commands.len()).map(|c| format!("c_{q}_{b}_{c}")))
                        .chain((0..batch.binary_signals.len()).map(|s| format!("s_{q}_{b}_{s}")))
                        .collect();
                    if batch.signal.is_some() || ids.is_empty() {
                        ids.push(format!("end_{q}_{b}"));
                    }
                    ids
                })
                .collect()
        })
        .collect()
}

fn document(out: &mut String, plan: &Plan) -> fmt::Result {
    writeln!(out, "digraph plan {{")?;
    writeln!(
        out,
        r#"  graph [rankdir=LR, compound=true, newrank=true, nodesep=0.25, ranksep=0.3, fontname="{FONT}", fontsize=12, labelloc=t, label="{}"];"#,
        esc(&super::title(plan))
    )?;
    writeln!(out, r#"  node [fontname="{FONT}", fontsize=11];"#)?;
    writeln!(out, r#"  edge [fontname="{FONT}", fontsize=10];"#)?;
    let nodes = batch_nodes(plan);
    let lanes = plan.queues.len();
    let mut earlier = vec![false; lanes];
    for (q, qp) in plan.queues.iter().enumerate() {
        for w in qp.batches.iter().flat_map(|b| &b.waits) {
            match w.target {
                WaitTarget::Binary(_) => {}
                WaitTarget::Batch { queue, batch }
                    if nodes.get(queue).is_some_and(|n| batch < n.len()) => {}
                WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } => {
                    earlier[if queue < lanes { queue } else { q }] = true;
                }
            }
        }
    }
    for q in 0..plan.queues.len() {
        lane(out, plan, q, &nodes[q], earlier[q])?;
    }
    for (q, qp) in plan.queues.iter().enumerate() {
        for (b, batch) in qp.batches.iter().enumerate() {
            for (w, wait) in batch.waits.iter().enumerate() {
                timeline_wait(out, plan, &nodes, (q, b, w), wait)?;
            }
        }
    }
    writeln!(out, "}}")
}

fn lane(
    out: &mut String,
    plan: &Plan,
    q: usize,
    nodes: &[Vec<String>],
    earlier: bool,
) -> fmt::Result {
    let colour = queue_colour(q);
    writeln!(out, "  subgraph cluster_lane_{q} {{")?;
    // `\l` ends a left-justified line.
    let label = format!(
        "{}\\l{}\\l",
        esc(queue_name(plan, q)),
        esc(&format!(
            "{} · {}",
            family_label(plan, q),
            caps_label(plan, q)
        ))
    );
    writeln!(
        out,
        r#"    id="lane-{q}"; class="lane"; label="{label}"; tooltip="{}"; labeljust=l; style="filled,rounded"; fillcolor="{}"; color="{colour}"; penwidth=2;"#,
        esc(&queue_tooltip(plan, q)),
        colour.tint(0.9)
    )?;
    if earlier {
        writeln!(
            out,
            r#"    earlier_{q} [id="earlier-{q}", class="earlier", shape=box, style="dashed,rounded", color="{MUTED}", fontcolor="{MUTED}", label="earlier\ngraphs", tooltip="{}"];"#,
            esc(&format!(
                "timeline values that earlier graphs (executions) signalled on `{}`",
                queue_name(plan, q)
            ))
        )?;
    }
    if nodes.is_empty() {
        writeln!(
            out,
            r#"    empty_{q} [shape=plaintext, fontcolor="{MUTED}", label="no work on this queue"];"#
        )?;
    }
    for (b, ids) in nodes.iter().enumerate() {
        batch(out, plan, q, b, ids)?;
    }
    // Program order along the lane.
    let order: Vec<&String> = nodes.iter().flatten().collect();
    for pair in order.windows(2) {
        writeln!(
            out,
            r##"    {} -> {} [class="order", color="#999999", arrowsize=0.5];"##,
            pair[0], pair[1]
        )?;
    }
    writeln!(out, "  }}")
}

fn batch(out: &mut String, plan: &Plan, q: usize, b: usize, ids: &[String]) -> fmt::Result {
    let batch = &plan.queues[q].batches[b];
    let colour = queue_colour(q);
    writeln!(out, "    subgraph cluster_batch_{q}_{b} {{")?;
    writeln!(
        out,
        r##"      id="batch-{q}-{b}"; class="batch"; label="batch {b}"; tooltip="{}"; style="filled,rounded"; fillcolor="#ffffff"; color="{colour}"; fontcolor="{MUTED}"; penwidth=1.5;"##,
        esc(&batch_tooltip(plan, q, b, batch))
    )?;
    for (w, wait) in batch.waits.iter().enumerate() {
        if matches!(wait.target, WaitTarget::Binary(_)) {
            writeln!(
                out,
                r#"      w_{q}_{b}_{w} [id="wait-{q}-{b}-{w}", class="wait binary", shape=circle, style="dashed,filled", color="{BINARY}", fillcolor="{}", fontcolor="{BINARY}", fontsize=9, label="wait", tooltip="{}"];"#,
                BINARY.tint(0.85),
                esc(&format!(
                    "waits on a binary semaphore (swapchain acquire or external): {}",
                    wait_line(plan, wait)
                ))
            )?;
        }
    }
    for (c, cmd) in batch.commands.iter().enumerate() {
        match cmd {
            Command::Pass(p) => writeln!(
                out,
                r#"      c_{q}_{b}_{c} [id="cmd-{q}-{b}-{c}", class="pass", shape=box, style="rounded,filled", color="{colour}", fillcolor="{}", label="{}", tooltip="{}"];"#,
                colour.tint(0.75),
                esc(pass_name(plan, *p)),
                esc(&pass_tooltip(plan, *p))
            )?,
            Command::Barrier(bar) => {
                let kind = BarrierKind::of(bar, family(plan, q));
                let fill = if kind == BarrierKind::Plain {
                    BARRIER
                } else {
                    OWNERSHIP
                };
                writeln!(
                    out,
                    r#"      c_{q}_{b}_{c} [id="cmd-{q}-{b}-{c}", class="{}", shape=box, fixedsize=true, width=0.12, height=0.5, style=filled, color="{fill}", fillcolor="{fill}", label="", xlabel="{}", fontcolor="{fill}", fontsize=9, tooltip="{}"];"#,
                    kind.class(),
                    kind.label(),
                    esc(&barrier_tooltip(plan, bar, kind))
                )?
            }
        }
    }
    for (s, (sem, stages)) in batch.binary_signals.iter().enumerate() {
        writeln!(
            out,
            r#"      s_{q}_{b}_{s} [id="binary-signal-{q}-{b}-{s}", class="signal binary", shape=circle, style="dashed,filled", color="{BINARY}", fillcolor="{}", fontcolor="{BINARY}", fontsize=9, label="signal", tooltip="{}"];"#,
            BINARY.tint(0.85),
            esc(&format!(
                "signals binary {sem:?} at {stages:?} (present or external) at the end of the batch"
            ))
        )?;
    }
    if let Some(last) = ids.last().filter(|id| id.starts_with("end_")) {
        match batch.signal {
            Some(stages) => writeln!(
                out,
                r#"      {last} [id="signal-{q}-{b}", class="signal", shape=circle, fixedsize=true, width=0.15, style=filled, color="{colour}", fillcolor="{colour}", label="", tooltip="{}"];"#,
                esc(&format!(
                    "signals the `{}` timeline at {stages:?}",
                    queue_name(plan, q)
                ))
            )?,
            None => writeln!(out, "      {last} [shape=point, style=invis];")?,
        }
    }
    writeln!(out, "    }}")
}

/// One edge per timeline wait (binary waits are nodes of their batch).
fn timeline_wait(
    out: &mut String,
    plan: &Plan,
    nodes: &[Vec<Vec<String>>],
    (q, b, w): (usize, usize, usize),
    wait: &crate::plan::Wait,
) -> fmt::Result {
    let Some(head) = nodes[q][b].first() else {
        return Ok(());
    };
    let tip = format!(
        "batch {b} of `{}` waits for {}",
        queue_name(plan, q),
        wait_line(plan, wait)
    );
    let source = match wait.target {
        WaitTarget::Binary(_) => return Ok(()),
        WaitTarget::Batch { queue, batch } => nodes
            .get(queue)
            .and_then(|n| n.get(batch))
            .and_then(|n| n.last())
            .map(|tail| (tail.clone(), queue, batch)),
        WaitTarget::Value { .. } => None,
    };
    match source {
        Some((tail, sq, sb)) => writeln!(
            out,
            r#"  {tail} -> {head} [id="wait-{q}-{b}-{w}", class="wait timeline", ltail=cluster_batch_{sq}_{sb}, lhead=cluster_batch_{q}_{b}, color="{}", penwidth=2, tooltip="{}"];"#,
            queue_colour(sq),
            esc(&tip)
        ),
        None => {
            let from = match wait.target {
                WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. }
                    if queue < nodes.len() =>
                {
                    queue
                }
                _ => q,
            };
            writeln!(
                out,
                r#"  earlier_{from} -> {head} [id="wait-{q}-{b}-{w}", class="wait earlier", lhead=cluster_batch_{q}_{b}, style=dashed, color="{MUTED}", penwidth=1.5, tooltip="{}"];"#,
                esc(&tip)
            )
        }
    }
}
