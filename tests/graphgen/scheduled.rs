//! Scheduled plans against program order: each scheduled graph verifies (alone and chained),
//! records its passes in the order it took them, and leaves every resource with the contents
//! (in the CPU model of `model.rs`), layouts, definedness and owners that program order
//! leaves.

use super::model::Contents;
use super::*;
use std::cell::Cell;

/// Figures over the checked cases.
#[derive(Default)]
pub struct ScheduleSeen {
    /// Graphs planned with a schedule (each case counts once per schedule).
    pub graphs: Cell<u32>,
    /// Graphs where a pass moved.
    pub moved: Cell<u32>,
    /// Graphs where culling dropped a pass.
    pub culled: Cell<u32>,
    /// Reordered graphs (no culling) with fewer / more barrier commands than program order.
    pub fewer: Cell<u32>,
    pub more: Cell<u32>,
    /// Barrier commands over all reordered graphs (no culling), and in program order.
    pub barriers_in_order: Cell<u64>,
    pub barriers_reordered: Cell<u64>,
    /// Batches over all reordered graphs (no culling), and in program order.
    pub batches_in_order: Cell<u64>,
    pub batches_reordered: Cell<u64>,
}

fn add<T: Copy + std::ops::Add<Output = T>>(c: &Cell<T>, v: T) {
    c.set(c.get() + v);
}

/// The case for culling: its transients (the generator draws them, each first used by a
/// whole write) are what culling may drop passes for.
pub fn with_transients(case: &Case) -> Case {
    case.clone()
}

/// Per cell of resource `r`: (layout, defined, owner) in `final_states`.
fn cell_states(plan: &Plan, r: usize) -> Vec<(vk::ImageLayout, bool, Option<u32>)> {
    let mut out = vec![];
    for (cells, s) in &plan.final_states[r] {
        for _ in cells.clone() {
            out.push((s.layout, s.defined, s.owner));
        }
    }
    out
}

/// The passes each queue records are the plan's order, restricted to that queue.
fn records_in_order(plan: &Plan) -> Result<(), String> {
    for (q, qp) in plan.queues.iter().enumerate() {
        let recorded: Vec<usize> = qp
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .filter_map(|c| match c {
                Command::Pass(i) => Some(*i),
                Command::Barrier(_) => None,
            })
            .collect();
        let taken: Vec<usize> = plan
            .order
            .iter()
            .copied()
            .filter(|&i| plan.input.passes[i].queue == q)
            .collect();
        if recorded != taken {
            return Err(format!(
                "queue {q} records {recorded:?}, the order takes {taken:?}"
            ));
        }
    }
    Ok(())
}

/// Plans the case with `Schedule::REORDER`, and with culling too (every other fresh resource
/// transient), and checks both against program order.
pub fn check_schedules(case: &Case, seen: &ScheduleSeen) -> Result<(), String> {
    let marked = with_transients(case);
    // The transient flag changes nothing in program order: one plan serves both.
    let in_order = plan_case(&marked)?;
    for (schedule, c) in [
        (Schedule::REORDER.without_fallback(), case),
        (Schedule::REORDER.with_culling().without_fallback(), &marked),
    ] {
        let what = format!("{schedule:?}");
        let planned = plan_case_with(c, schedule).map_err(|e| format!("{what}: {e}"))?;
        if let Err((g, v)) = verify_each_alone(&planned) {
            return Err(report_schedule(
                &format!("{what}: graph {g} alone"),
                &v,
                c,
                &planned,
            ));
        }
        if planned.len() > 1 {
            if let Err(v) = verify_all(&planned) {
                return Err(report_schedule(
                    &format!("{what}: the chain"),
                    &v,
                    c,
                    &planned,
                ));
            }
        }
        let mut expected = Contents::new(&c.resources);
        let mut got = expected.clone();
        for (g, (a, b)) in in_order.iter().zip(&planned).enumerate() {
            let (a, b) = (&a.plan, &b.plan);
            records_in_order(b).map_err(|e| format!("{what}: graph {g}: {e}\n{b}"))?;
            let mut input = a.input.clone();
            for (r, d) in input.resources.iter_mut().enumerate() {
                d.transient = c.resources[r].transient;
            }
            expected.run(g as u64, &input, &a.order);
            got.run(g as u64, &input, &b.order);
            for (r, d) in c
                .resources
                .iter()
                .enumerate()
                .filter(|(_, d)| d.transient.is_none())
            {
                if expected.0[r] != got.0[r] {
                    return Err(format!(
                        "{what}: graph {g}: `{}` holds other contents than in program order\n{c:?}\nin order:\n{a}\nscheduled:\n{b}",
                        d.name
                    ));
                }
                if cell_states(a, r) != cell_states(b, r) {
                    return Err(format!(
                        "{what}: graph {g}: `{}` ends in another layout, definedness or owner\n{c:?}\nin order:\n{a}\nscheduled:\n{b}",
                        d.name
                    ));
                }
            }
            add(&seen.graphs, 1);
            add(
                &seen.moved,
                b.moved_before().iter().any(Option::is_some) as u32,
            );
            add(&seen.culled, !b.culled().is_empty() as u32);
            if !schedule.cull {
                let (x, y) = (a.barrier_commands(), b.barrier_commands());
                add(&seen.barriers_in_order, x as u64);
                add(&seen.barriers_reordered, y as u64);
                add(&seen.batches_in_order, a.batch_count() as u64);
                add(&seen.batches_reordered, b.batch_count() as u64);
                add(&seen.fewer, (y < x) as u32);
                add(&seen.more, (y > x) as u32);
            }
        }
    }
    Ok(())
}

fn report_schedule(
    what: &str,
    v: &[vk_baton::verify::Violation],
    case: &Case,
    planned: &[Planned],
) -> String {
    let mut msg = format!("{what}: {} violations\n", v.len());
    for x in v.iter().take(20) {
        msg += &format!("  {x}\n");
    }
    msg += &format!("{case:?}\n");
    for (i, p) in planned.iter().enumerate() {
        msg += &format!("--- graph {i}:\n{}\n", p.plan);
    }
    msg
}
