//! Lowering: the passes inserted into a graph, with their declarations and the resources'
//! tracked states, become a [`PlanInput`] of plain indices for the pure planner.
//!
//! This is where the runtime's objects meet the planner's data: every distinct [`Queue`] and
//! [`Resource`] gets an index, and each resource's state is snapshot (with its version, so
//! the executor can tell whether the plan went stale). Nothing here calls Vulkan.

use crate::error::{Error, Result};
use crate::execute::PassEntry;
use crate::pass::{Declare, Declared};
use crate::plan::{
    BinarySignalDecl, BinaryWaitDecl, PlanInput, Recorded, ResourceKind, SegmentState, UseDecl,
};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use fx::FxBuildHasher;
use std::collections::HashMap;

mod fx;
mod refill;

/// A graph's passes lowered for the planner, with the objects its indices refer to.
pub(crate) struct Lowered {
    pub(crate) input: PlanInput,
    /// Planner queue index -> queue: the passes' queues, then queues seen only in the
    /// resources' states.
    pub(crate) queues: Vec<Queue>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
    /// Each resource's state version when snapshot.
    pub(crate) versions: Vec<u64>,
}

/// Asks each pass for its declarations and lowers them, with the resources' current states,
/// into a [`PlanInput`]. Fails on a queue or resource of another device than `device`, and on
/// two `Queue` objects for one `VkQueue`.
pub(crate) fn lower(
    device: vk::Device,
    passes: &[PassEntry<'_>],
    spare: Option<PlanInput>,
) -> Result<Lowered> {
    // The last plan's declarations are refilled in place: their strings and vectors keep
    // their capacity, so a frame like the last one allocates none of them again.
    let PlanInput {
        queues: mut queue_decls,
        resources: mut res_decls,
        passes: mut pass_decls,
    } = spare.unwrap_or_default();

    let mut queues: Vec<Queue> = Vec::new();
    let queue_index = |q: &Queue, queues: &mut Vec<Queue>| -> usize {
        match queues.iter().position(|x| x == q) {
            Some(i) => i,
            None => {
                queues.push(q.clone());
                queues.len() - 1
            }
        }
    };
    let mut resources: Vec<Resource> = Vec::new();
    let mut by_id: HashMap<u64, usize, FxBuildHasher> = HashMap::default();
    let mut res_index =
        |r: &Resource, pass: &str, resources: &mut Vec<Resource>| -> Result<usize> {
            if let Some(&i) = by_id.get(&r.id()) {
                return Ok(i);
            }
            if r.device_handle() != device {
                return Err(Error::ForeignDevice {
                    what: format!("resource `{}` (pass `{pass}`)", r.name()),
                });
            }
            resources.push(r.clone());
            by_id.insert(r.id(), resources.len() - 1);
            Ok(resources.len() - 1)
        };

    // One `Declared` for every pass in turn: its vectors are reused from pass to pass.
    let mut d = Declared::default();
    for (pi, p) in passes.iter().enumerate() {
        d.uses.clear();
        d.waits.clear();
        d.signals.clear();
        p.pass.declare(&mut Declare { out: &mut d });
        let qi = queue_index(&p.queue, &mut queues);
        let pd = refill::pass(&mut pass_decls, pi, &p.name, qi);
        for u in &d.uses {
            let ri = res_index(&u.resource, &p.name, &mut resources)?;
            pd.uses.push(UseDecl {
                resource: ri,
                access: u.access,
                range: u.range,
                discard: u.discard,
            });
        }
        for w in &d.waits {
            let mut guards = Vec::new();
            for g in &w.guards {
                guards.push(res_index(
                    &Resource::Image(g.clone()),
                    &p.name,
                    &mut resources,
                )?);
            }
            pd.waits.push(BinaryWaitDecl {
                semaphore: w.semaphore,
                guards,
                stages: w.stages,
            });
        }
        for &(semaphore, stages) in &d.signals {
            pd.signals.push(BinarySignalDecl { semaphore, stages });
        }
    }
    pass_decls.truncate(passes.len());
    drop(d);

    // Snapshot each resource's state; queues seen only in earlier records join the list.
    let mut versions = Vec::with_capacity(resources.len());
    for (ri, r) in resources.iter().enumerate() {
        let (segments, version) = {
            let t = r.tracked().lock();
            (t.segments.clone(), t.version)
        };
        versions.push(version);
        let initial: Vec<_> = segments
            .into_iter()
            .map(|(cells, s)| (cells, to_indices(&s, |q| queue_index(q, &mut queues))))
            .collect();
        let (kind, concurrent) = match r {
            Resource::Image(i) => {
                let d = i.desc();
                (
                    ResourceKind::Image {
                        mips: d.mip_levels,
                        layers: d.array_layers,
                        aspect: d.aspect(),
                        usage: d.usage,
                    },
                    d.sharing.is_concurrent(),
                )
            }
            Resource::Buffer(b) => (
                ResourceKind::Buffer {
                    size: b.size(),
                    usage: b.desc().usage,
                },
                b.desc().sharing.is_concurrent(),
            ),
        };
        refill::resource(&mut res_decls, ri, r.name(), kind, concurrent, initial);
    }
    res_decls.truncate(resources.len());
    for q in &queues {
        if q.device_handle() != device {
            return Err(Error::ForeignDevice {
                what: format!("queue `{}` (recorded in a resource's state)", q.name()),
            });
        }
    }
    // Two `Queue` objects for one VkQueue would have two submit locks and two timelines.
    for p in passes {
        if let Some(q) = queues
            .iter()
            .find(|q| **q == p.queue && !q.same_object(&p.queue))
        {
            return Err(Error::InvalidInput(format!(
                "queues `{}` and `{}` are two Queue objects for one VkQueue: create one Queue per VkQueue and clone it",
                q.name(),
                p.queue.name()
            )));
        }
    }
    for (qi, q) in queues.iter().enumerate() {
        refill::queue(&mut queue_decls, qi, q.name(), q.family(), q.caps());
    }
    queue_decls.truncate(queues.len());
    let input = PlanInput {
        queues: queue_decls,
        resources: res_decls,
        passes: pass_decls,
    };
    Ok(Lowered {
        input,
        queues,
        resources,
        versions,
    })
}

/// A queue-typed segment as an index-typed one, for the planner.
fn to_indices(s: &SegmentState<Queue>, mut f: impl FnMut(&Queue) -> usize) -> SegmentState<usize> {
    let mut m = |r: &Recorded<Queue>| Recorded {
        queue: f(&r.queue),
        value: r.value,
        stages: r.stages,
        access: r.access,
    };
    SegmentState {
        layout: s.layout,
        defined: s.defined,
        owner: s.owner,
        write: s.write.as_ref().map(&mut m),
        reads: s.reads.iter().map(m).collect(),
    }
}
