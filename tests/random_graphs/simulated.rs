//! The case's graphs through `vk_baton::verify::simulate::Simulation`, frame after frame, on the
//! case's own queues as a simulated topology. Each graph runs culled and reordered twice (the
//! second time `finish()` may reuse the first plan), then with its first pass handed to the app
//! (`Graph::hand_off`) and the rest culled in program order. Every frame is planned as
//! `finish()` (or `hand_off`) plans it and verified alone; checked as the executor checks a
//! plan before it submits (the transients it binds, the app's batch of a handoff); and
//! verified chained with the frame before it. Every kept plan that `finish()` could reuse must
//! be the planner's answer.
//!
//! Between graphs, the host reads some buffers and writes others ([`run_host_frame`]): a frame
//! of host passes, then the app's wait for its fence. No plan may put `HOST` in a semaphore's
//! stage mask ([`no_host_on_semaphores`]), whatever the later graphs do after the host.

use super::other_paths::uses_a_transient;
use super::*;
use vk_baton::verify::simulate::{Frame, SimError, Simulation, Topology};

/// How many frames each chained verification covers: a frame and the one before it, so that
/// every two frames that follow each other (schedules, a handoff and the rest of its graph, a
/// graph's last frame and the next graph's first) are verified together.
const WINDOW: usize = 2;

/// Figures over the simulated frames.
#[derive(Default)]
pub struct SimSeen {
    pub frames: Cell<u32>,
    /// Culled frames where a transient that only culled passes use got no place: the shape
    /// `execute()` once refused.
    pub unplaced_transients: Cell<u32>,
    /// Culled frames that `finish()` would run as a kept plan (checked equal to a new one).
    pub reused_culled: Cell<u32>,
    /// Handoffs run between graph frames.
    pub handoffs: Cell<u32>,
    /// Handoffs of a pass that uses a transient, refused as `hand_off` refuses them.
    pub refused_handoffs: Cell<u32>,
    /// Frames of host reads and writes between graphs, on topologies of several families.
    pub host_frames_multi_family: Cell<u32>,
}

/// Whether `plan` has a semaphore signal or wait whose stage mask names `HOST`, which no
/// queue runs: an error naming the batch, or `Ok`.
pub(super) fn no_host_on_semaphores(plan: &Plan) -> Result<(), String> {
    let host = |s: vk::PipelineStageFlags2| s.contains(vk::PipelineStageFlags2::HOST);
    for (q, qp) in plan.queues.iter().enumerate() {
        for (b, batch) in qp.batches.iter().enumerate() {
            let waits = batch.waits.iter().map(|w| w.stages);
            let binary = batch.binary_signals.iter().map(|&(_, s)| s);
            if batch
                .signal
                .into_iter()
                .chain(waits)
                .chain(binary)
                .any(host)
            {
                return Err(format!("queue {q}, batch {b}: a semaphore at HOST\n{plan}"));
            }
        }
    }
    Ok(())
}

/// The case's queues as a topology: each one a distinct `VkQueue` of its family, in the
/// case's order, so that topology queue `i` is the case's queue `i`.
fn topology(case: &Case) -> Result<Topology, String> {
    let families = case.queues.iter().map(|q| q.family).max().unwrap_or(0) + 1;
    let mut t = Topology::new();
    for f in 0..families {
        let on_f: Vec<&QueueDecl> = case.queues.iter().filter(|q| q.family == f).collect();
        // A family no queue is on: its capabilities matter to nothing.
        let caps = on_f.first().map_or(TRANSFER_ONLY, |q| q.caps);
        t = t.with_family(caps, on_f.len() as u32);
    }
    for q in &case.queues {
        t = t.with_queue(&q.name, q.family).map_err(|e| e.to_string())?;
    }
    Ok(t)
}

/// The error, with every violation when there are some.
fn describe(e: &SimError) -> String {
    match e {
        SimError::Verification { violations, .. } => {
            let mut s = e.to_string();
            for v in violations.iter().take(20) {
                s += &format!("\n  {v}");
            }
            s
        }
        other => other.to_string(),
    }
}

/// Runs the case's graphs as frames (see the module docs).
pub(super) fn check_simulated(case: &Case, seen: &SimSeen) -> Result<(), String> {
    let mut sim = Simulation::new(topology(case)?).with_window(WINDOW);
    for (q, &start) in case.start.iter().enumerate() {
        for _ in 0..start {
            sim.app_submit(q);
        }
    }
    for r in &case.resources {
        sim.add_resource(r.clone());
    }
    for (g, passes) in case.graphs.iter().enumerate() {
        for schedule in [Schedule::REORDER.with_culling(); 2] {
            run_graph(&mut sim, passes, schedule, seen)
                .map_err(|e| format!("simulated graph {g}, {schedule:?}: {e}"))?;
        }
        run_handed_off(&mut sim, case, passes, seen)
            .map_err(|e| format!("simulated graph {g}, handed off: {e}"))?;
        run_host_frame(&mut sim, case, g, seen)
            .map_err(|e| format!("simulated host frame after graph {g}: {e}"))?;
    }
    Ok(())
}

/// After graph `g`: the host reads or writes a third each of the case's buffers (which ones
/// turns with `g`), each in a pass on a queue of the family that owns it (any queue where no
/// family does, or it is CONCURRENT), then the app waits for the frame's fence. A buffer
/// whose segments different families own is left alone: one host pass cannot take it.
fn run_host_frame(
    sim: &mut Simulation,
    case: &Case,
    g: usize,
    seen: &SimSeen,
) -> Result<(), String> {
    let mut passes = Vec::new();
    for (r, decl) in case.resources.iter().enumerate() {
        let access = match (r + g) % 3 {
            0 => Access::HOST_READ,
            1 => Access::HOST_WRITE,
            _ => continue,
        };
        if !matches!(decl.kind, ResourceKind::Buffer { .. }) || decl.transient.is_some() {
            continue;
        }
        let owners: Vec<Option<u32>> = sim
            .state(r)
            .into_iter()
            .flatten()
            .map(|(_, s)| s.owner)
            .collect();
        let owner = owners.first().copied().flatten();
        if owners.iter().any(|&o| o != owners[0]) {
            continue;
        }
        let queue = owner
            .and_then(|f| case.queues.iter().position(|q| q.family == f))
            .unwrap_or(r % case.queues.len());
        let name = format!("host {r}");
        passes.push(PassDecl::new(&name, queue).with_use(UseDecl::new(r, access)));
    }
    if passes.is_empty() {
        return Ok(());
    }
    let r = sim.frame(&passes[..]).map_err(|e| describe(&e))?;
    no_host_on_semaphores(&r.plan)?;
    sim.host_waited();
    bump(&seen.frames, true);
    let families = case.queues.iter().map(|q| q.family).max().unwrap_or(0);
    bump(&seen.host_frames_multi_family, families > 0);
    Ok(())
}

fn run_graph(
    sim: &mut Simulation,
    passes: &[PassDecl],
    schedule: Schedule,
    seen: &SimSeen,
) -> Result<(), String> {
    let r = sim
        .frame(Frame::Graph(passes, schedule))
        .map_err(|e| describe(&e))?;
    no_host_on_semaphores(&r.plan)?;
    bump(&seen.frames, true);
    if schedule.cull {
        let t = &r.plan.transients;
        let resources = &r.plan.input.resources;
        let unplaced = (0..resources.len())
            .any(|i| resources[i].transient.is_some() && t.placement(i).is_none());
        bump(&seen.unplaced_transients, unplaced);
        bump(&seen.reused_culled, r.reused);
    }
    Ok(())
}

/// The graph's first pass handed to the app, then the rest culled in program order. A handoff
/// of a pass that uses a transient must be refused, changing nothing; the app then runs the
/// whole graph.
fn run_handed_off(
    sim: &mut Simulation,
    case: &Case,
    passes: &[PassDecl],
    seen: &SimSeen,
) -> Result<(), String> {
    let Some((first, rest)) = passes.split_first() else {
        return Ok(());
    };
    let states = |sim: &Simulation| -> Vec<_> {
        (0..case.resources.len())
            .map(|r| sim.state(r).map(<[_]>::to_vec))
            .collect()
    };
    let before = (sim.last_values().to_vec(), states(sim));
    let transient = uses_a_transient(case, first);
    match sim.frame(Frame::HandOff(first)) {
        Err(SimError::Refused { error, .. }) if transient => {
            if (sim.last_values().to_vec(), states(sim)) != before {
                return Err(format!(
                    "the refused handoff changed the simulation: {error}"
                ));
            }
            bump(&seen.refused_handoffs, true);
            return run_graph(sim, passes, Schedule::PROGRAM_ORDER.with_culling(), seen);
        }
        Ok(r) if !transient => {
            no_host_on_semaphores(&r.plan)?;
            bump(&seen.handoffs, true)
        }
        Ok(r) => {
            return Err(format!(
                "a handoff with a transient was accepted:\n{}",
                r.plan
            ))
        }
        Err(e) => return Err(describe(&e)),
    }
    bump(&seen.frames, true);
    if rest.is_empty() {
        return Ok(());
    }
    run_graph(sim, rest, Schedule::PROGRAM_ORDER.with_culling(), seen)
}
