//! The same graphs through the library's other paths: transients made ordinary resources
//! (aliasing must ride on the plan's own order), and each graph's first pass handed to the
//! app (`Graph::hand_off`).

use super::*;

/// Aliasing rides on the plan's own order: graph 0 with its transients made ordinary
/// resources has the same passes on each queue, and its batches and waits are those of the
/// aliased plan, or fewer. A plan with aliasing dependencies is not pruned of redundant waits
/// and entries (the pruning does not know them), so it may keep a wait the plain plan drops,
/// and with it the batch that wait started, where the plain plan joins that batch to the one
/// before. Those waits are not needed: the aliased plan with only the plain plan's waits still
/// verifies. Without aliasing the two plans are the same. And each aliased image's first
/// barrier is needed: without its first scope, the verifier finds the transients on shared
/// memory unordered.
pub(super) fn check_aliasing(planned: &[Planned], seen: &Seen) -> Result<(), String> {
    let Some(first) = planned.first() else {
        return Ok(());
    };
    let mut plain = first.plan.input.clone();
    for r in &mut plain.resources {
        r.transient = None;
    }
    let plain = plan(&plain).map_err(|e| format!("without transients: {e}"))?;
    let (aliased, unaliased) = (batch_shapes(&first.plan), batch_shapes(&plain));
    let passes = |p: &Plan| -> Vec<Vec<usize>> {
        p.queues
            .iter()
            .map(|q| {
                q.batches
                    .iter()
                    .flat_map(|b| &b.commands)
                    .filter_map(|c| match c {
                        Command::Pass(i) => Some(*i),
                        Command::Barrier(_) => None,
                    })
                    .collect()
            })
            .collect()
    };
    // Each batch of the plain plan starts where one of the aliased plan does, and that one
    // (with a release-only batch split off just before it, see `matching`) has every wait the
    // plain one has.
    let refines = passes(&first.plan) == passes(&plain)
        && aliased.len() == unaliased.len()
        && unaliased.iter().zip(&aliased).all(|(plain_q, aliased_q)| {
            plain_q.iter().all(|(start, waits)| {
                aliased_q.iter().any(|(s, _)| s == start)
                    && waits.iter().all(|x| {
                        aliased_q
                            .iter()
                            .any(|(s, w)| matching(*s, *start) && w.contains(x))
                    })
            })
        });
    let pruned = first
        .plan
        .input
        .resources
        .iter()
        .all(|r| r.transient.is_none())
        || first
            .plan
            .transients
            .placements
            .iter()
            .all(|p| p.after.is_empty());
    if !refines || (pruned && aliased != unaliased) {
        return Err(format!(
            "aliasing changed the batches or waits:\n{}\nwithout transients:\n{plain}",
            first.plan
        ));
    }
    if !pruned {
        // Aliasing needs no semaphore the plain plan lacks: keep only the waits a batch of the
        // plain plan starting at the same place has, and the plan must still verify.
        let mut lean = first.plan.clone();
        let names = wait_names(&first.plan);
        for (q, qp) in lean.queues.iter_mut().enumerate() {
            for (b, batch) in qp.batches.iter_mut().enumerate() {
                let (start, _) = &aliased[q][b];
                let kept = unaliased[q].iter().find(|(s, _)| matching(*start, *s));
                let mut k = 0;
                batch.waits.retain(|_| {
                    let keep = kept.is_some_and(|(_, w)| w.contains(&names[q][b][k]));
                    k += 1;
                    keep
                });
            }
        }
        let waits = |p: &Plan| -> usize {
            p.queues
                .iter()
                .flat_map(|q| &q.batches)
                .map(|b| b.waits.len())
                .sum()
        };
        bump(
            &seen.aliasing_waits_not_needed,
            waits(&lean) < waits(&first.plan),
        );
        if let Err(v) = lean.verify_from(&first.values.start) {
            return Err(format!(
                "aliasing needs a wait the plan without transients drops: {v:?}\n{}\nwithout transients:\n{plain}",
                first.plan
            ));
        }
    }
    for p in planned {
        for b in p
            .plan
            .transients
            .placements
            .iter()
            .filter(|b| !b.after.is_empty())
        {
            let site = b.first_use;
            let mut mutant = p.plan.clone();
            let commands = &mut mutant.queues[site.queue].batches[site.batch].commands;
            let entry = match site.command.checked_sub(1).map(|c| &mut commands[c]) {
                Some(Command::Barrier(bc)) => {
                    bc.images.iter_mut().find(|e| e.resource == b.resource)
                }
                _ => None,
            };
            let Some(entry) = entry else { continue };
            entry.scopes.src_stages = vk::PipelineStageFlags2::NONE;
            entry.scopes.src_access = vk::AccessFlags2::NONE;
            let caught = mutant
                .verify_from(&p.values.start)
                .is_err_and(|v| v.iter().any(|x| x.to_string().contains("share memory")));
            if !caught {
                return Err(format!(
                    "removing the aliasing barrier of `{}` went unnoticed:\n{}",
                    p.plan.input.resources[b.resource].name, p.plan
                ));
            }
            bump(&seen.aliasing_mutants_caught, true);
        }
    }
    Ok(())
}

/// Per queue, per batch: where it starts (the passes before it on its queue, and whether it has
/// none of its own: a release-only batch), and what it waits on, sorted (see [`wait_names`]).
type BatchShapes = Vec<Vec<((usize, bool), Vec<String>)>>;

fn batch_shapes(p: &Plan) -> BatchShapes {
    let names = wait_names(p);
    p.queues
        .iter()
        .enumerate()
        .map(|(q, qp)| {
            let mut before = 0;
            qp.batches
                .iter()
                .enumerate()
                .map(|(b, batch)| {
                    let start = (before, own_passes(batch) == 0);
                    before += own_passes(batch);
                    let mut w = names[q][b].clone();
                    w.sort();
                    (start, w)
                })
                .collect()
        })
        .collect()
}

/// Whether a batch of the aliased plan starting at `aliased` stands for (part of) the batch of
/// the plain plan starting at `plain`: the same start, or a release-only batch at the start of
/// a plain batch with passes. The aliased plan is not pruned, so it may keep a wait at a pass
/// that the plain plan drops; waiting as late as possible, that wait then starts a batch after
/// the release phase before the pass, which the plain plan records in the pass's own batch.
fn matching(aliased: (usize, bool), plain: (usize, bool)) -> bool {
    aliased == plain || (aliased.1 && !plain.1 && aliased.0 == plain.0)
}

fn own_passes(b: &Batch) -> usize {
    b.commands
        .iter()
        .filter(|c| matches!(c, Command::Pass(_)))
        .count()
}

/// Per queue, per batch, per wait in order: what it waits on. A wait on a batch of this
/// execution names the queue, the passes up to the end of that batch and whether the batch ends
/// with its release phase (a barrier command after its last pass), none of which joining
/// batches changes: a release-only batch and the batch before it differ.
fn wait_names(p: &Plan) -> Vec<Vec<Vec<String>>> {
    // Per queue, per batch: (passes up to its end, whether it ends with a release phase).
    let ends: Vec<Vec<(usize, bool)>> = p
        .queues
        .iter()
        .map(|q| {
            q.batches
                .iter()
                .scan(0, |n, b| {
                    *n += own_passes(b);
                    let release = matches!(b.commands.last(), Some(Command::Barrier(_)));
                    Some((*n, release))
                })
                .collect()
        })
        .collect();
    p.queues
        .iter()
        .map(|q| {
            q.batches
                .iter()
                .map(|b| {
                    b.waits
                        .iter()
                        .map(|w| match w.target {
                            WaitTarget::Batch { queue, batch } => {
                                let (n, release) = ends[queue][batch];
                                let release = if release { " and its release" } else { "" };
                                format!("queue {queue} after {n} passes{release}")
                            }
                            other => format!("{other:?}"),
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

pub(super) fn uses_a_transient(case: &Case, pass: &PassDecl) -> bool {
    pass.uses
        .iter()
        .any(|u| case.resources[u.resource].transient.is_some())
}

/// The same graphs with each one's first pass handed to the app (`Graph::hand_off`): a plan of
/// that pass alone, then the rest. Program order is the same, so the chain must verify, and
/// each handoff must have the shape the executor splits (`Plan::app_batch`): the pass's batch
/// for the app, release-only batches for the library. The first handoff records the barrier
/// the whole first graph records before that pass.
pub(super) fn check_handoffs(case: &Case, whole: &[Planned], seen: &Seen) -> Result<(), String> {
    let mut split = case.clone();
    split.graphs = case
        .graphs
        .iter()
        .flat_map(|g| match g.split_first() {
            // A transient's contents do not outlive a plan: no split after its first use.
            Some((first, rest)) if !rest.is_empty() && !uses_a_transient(case, first) => {
                vec![vec![first.clone()], rest.to_vec()]
            }
            _ => vec![g.clone()],
        })
        .collect();
    let planned = plan_case(&split).map_err(|e| format!("with handoffs: {e}"))?;
    // A graph of one pass has a handoff's shape, unless it uses a transient (which
    // `Plan::app_batch` refuses: the app records outside the graph's binding of memory).
    let handoffs: Vec<usize> = (0..split.graphs.len())
        .filter(|&g| matches!(&split.graphs[g][..], [p] if !uses_a_transient(case, p)))
        .collect();
    for &g in &handoffs {
        let app = planned[g]
            .plan
            .app_batch()
            .map_err(|e| format!("handoff {g}: {e}\n{}", planned[g].plan))?;
        let releases = planned[g]
            .plan
            .queues
            .iter()
            .enumerate()
            .any(|(q, qp)| q != app.queue && !qp.batches.is_empty());
        bump(&seen.handoffs_after_a_release, releases);
    }
    if let Err((g, v)) = verify_each_alone(&planned) {
        return Err(report(
            &format!("with handoffs: graph {g} alone"),
            &v,
            case,
            &planned,
        ));
    }
    if let Err(v) = verify_all(&planned) {
        return Err(report("with handoffs: the chain", &v, case, &planned));
    }
    // A whole graph with aliasing dependencies is not pruned of redundant entries (the first
    // handoff, with no transient, is), so its barrier may hold more: compared without them.
    let aliased = whole[0]
        .plan
        .transients
        .placements
        .iter()
        .any(|p| !p.after.is_empty());
    if handoffs.first() == Some(&0) && !aliased {
        // Pass 0 comes first in program order: its barriers depend on the initial states
        // alone. The whole graph may put other passes' releases into the same command, and
        // the barriers of later passes that pass 0 does not touch (hoisted into it): only the
        // entries over ranges pass 0 uses are its own.
        let app = planned[0].plan.app_batch().map_err(|e| e.to_string())?;
        let used: Vec<(usize, SubRange)> = case.graphs[0][0]
            .uses
            .iter()
            .map(|u| {
                let whole = case.resources[u.resource].kind.whole();
                (u.resource, u.range.unwrap_or(whole))
            })
            .collect();
        let own = |resource: usize, range: SubRange| {
            used.iter().any(|&(r, u)| {
                r == resource
                    && match (u, range) {
                        (SubRange::Image(a), SubRange::Image(b)) => a.overlaps(&b),
                        (SubRange::Buffer(a), SubRange::Buffer(b)) => a.overlaps(&b),
                        _ => false,
                    }
            })
        };
        let mut whole_barrier = BarrierCmd::default();
        for b in &whole[0].plan.queues[app.queue].batches {
            for w in b.commands.windows(2) {
                if let [Command::Barrier(b), Command::Pass(0)] = w {
                    whole_barrier.images.extend(
                        b.images
                            .iter()
                            .filter(|x| own(x.resource, SubRange::Image(x.range))),
                    );
                    whole_barrier.buffers.extend(
                        b.buffers
                            .iter()
                            .filter(|x| own(x.resource, SubRange::Buffer(x.range))),
                    );
                }
            }
        }
        let handoff_barrier = app.barrier.cloned().unwrap_or_default();
        if handoff_barrier != whole_barrier {
            return Err(format!(
                "the first handoff's barrier differs from the graph's before pass 0:\n{}\n{}",
                planned[0].plan, whole[0].plan
            ));
        }
    }
    Ok(())
}
