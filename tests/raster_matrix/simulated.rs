//! The matrix planned and verified without a GPU: every placement on a simulated NVIDIA-like
//! topology (graphics, compute-only and transfer-only families), frame after frame, each frame
//! verified alone and chained with the ones before (`vk_baton::verify::simulate`).

use super::cases::*;
use super::gpu_stencil::depth_read_barriers;
use super::placements::{ownership_transfers, Placement, Q};
use std::collections::HashMap;
use vk_baton::ash::vk;
use vk_baton::plan::{PassDecl, ResourceDecl, UseDecl};
use vk_baton::verify::simulate::{FrameReport, SimError, Simulation, Topology};

pub const SIM_FRAMES: usize = 8;

/// Family 0 graphics+compute+transfer, family 1 transfer-only, family 2 compute-only, as on
/// the H100 (`Topology::nvidia`), with a second queue of family 0 for `Placement::TwoQueues`.
fn topology() -> Topology {
    let gct = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
    Topology::new()
        .with_family(gct, 16)
        .with_family(vk::QueueFlags::TRANSFER, 2)
        .with_family(vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER, 8)
        .with_queue("graphics", 0)
        .and_then(|t| t.with_queue("transfer", 1))
        .and_then(|t| t.with_queue("async_compute", 2))
        .and_then(|t| t.with_queue("graphics 1", 0))
        .expect("a valid topology")
}

/// The simulated resources of every case, by (case, slot).
fn resources(
    sim: &mut Simulation,
    pairs: &[Pair],
    placement: Placement,
) -> HashMap<(usize, Slot), usize> {
    let mut out = HashMap::new();
    for p in pairs {
        for s in slots(p, placement.middle()) {
            let name = format!("#{} {s:?}", p.index);
            let mut decl = if is_buffer(p, s) {
                ResourceDecl::buffer(&name, (WORDS * 4) as u64, buffer_usage(s))
            } else {
                let (format, usage) = image_desc(p, s);
                let d = ResourceDecl::image(&name, 1, 1, usage);
                match format {
                    DEPTH => d.aspect(vk::ImageAspectFlags::DEPTH),
                    DEPTH_STENCIL => {
                        d.aspect(vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL)
                    }
                    _ => d,
                }
            };
            if s == Slot::Data && placement == Placement::FamiliesConcurrent {
                decl = decl.concurrent();
            }
            out.insert((p.index, s), sim.add_resource(decl));
        }
    }
    out
}

fn frame(sim: &mut Simulation, passes: &[PassDecl], what: &str) -> FrameReport {
    match sim.frame(passes) {
        Ok(r) => r,
        Err(SimError::Verification {
            frame,
            chained,
            violations,
        }) => {
            let text: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
            panic!(
                "{what} frame {frame} (chained: {chained}):\n{}",
                text.join("\n")
            )
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Plans and verifies `SIM_FRAMES` frames of the whole matrix in `placement`; returns the
/// frames' ownership-transfer barrier counts.
pub fn simulate(placement: Placement) -> Vec<usize> {
    let topo = topology();
    let q = |name: &str| topo.queue(name).unwrap();
    let queues: HashMap<&str, usize> = [
        ("g", q("graphics")),
        ("g1", q("graphics 1")),
        ("c", q("async_compute")),
        ("t", q("transfer")),
    ]
    .into();
    let mut sim = Simulation::new(topo);
    let pairs = pairs();
    let res = resources(&mut sim, &pairs, placement);
    let graphs: Vec<Vec<PassDecl>> = placement
        .graphs(&pairs)
        .iter()
        .map(|specs| {
            specs
                .iter()
                .map(|(i, s)| {
                    let queue = match placement.queue(&pairs[*i], s.role) {
                        Q::Graphics => queues["g"],
                        Q::Graphics1 => queues["g1"],
                        Q::Compute => queues["c"],
                        Q::Transfer => queues["t"],
                    };
                    let mut pass = PassDecl::new(&s.name, queue);
                    for u in &s.uses {
                        let d = UseDecl::new(res[&(*i, u.slot)], u.access).aspect(u.aspect);
                        pass = pass.with_use(if u.discard { d.discard() } else { d });
                    }
                    pass
                })
                .collect()
        })
        .collect();
    let mut transfers = Vec::new();
    for n in 0..SIM_FRAMES {
        let mut count = 0;
        for (g, passes) in graphs.iter().enumerate() {
            let r = frame(
                &mut sim,
                passes,
                &format!("{placement:?} frame {n}, graph {g}"),
            );
            count += ownership_transfers(&r.plan);
            if !placement.middle() {
                let same_graph = placement != Placement::TwoGraphs;
                for p in &pairs {
                    if let Err(e) = depth_read_barriers(&r.plan, p, same_graph) {
                        panic!("{placement:?} frame {n}, graph {g}: needless barriers, {e}");
                    }
                }
            }
        }
        // The app reads the results after the frame's fence, before the next frame.
        sim.host_waited();
        transfers.push(count);
    }
    transfers
}
