//! Lowering: the passes inserted into a graph, with their declarations and the resources'
//! tracked states, become a [`PlanInput`] of plain indices for the pure planner.
//!
//! This is where the runtime's objects meet the planner's data: every distinct [`Queue`] and
//! [`Resource`] gets an index, and each resource's state is snapshot (with its version, so
//! the executor can tell whether the plan went stale). Nothing here calls Vulkan.

use crate::error::{Error, Result};
use crate::exec::Spares;
use crate::pass::{Declare, Declared, PassEntry, ResourceIndex};
use crate::plan::{
    refill_segments, BinarySignalDecl, BinaryWaitDecl, PassDecl, PlanInput, Recorded, ResourceDecl,
    ResourceKind,
};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;

mod refill;

/// Scratch space of lowering, kept by the graph between frames.
#[derive(Default)]
pub(crate) struct LowerScratch {
    /// One pass's waits and signals at a time.
    declared: Declared,
    /// Resource id -> planner index, and the resources.
    index: ResourceIndex,
    /// Declarations a longer frame had, for the next longer one (frame loops alternate
    /// between shapes): plain data, no resource.
    spare_passes: Vec<PassDecl>,
    spare_resources: Vec<ResourceDecl>,
}

/// Empties the scratch's lists when dropped.
struct EmptiedOnDrop<'s>(&'s mut LowerScratch);

impl Drop for EmptiedOnDrop<'_> {
    fn drop(&mut self) {
        self.0.declared.waits.clear();
        self.0.declared.signals.clear();
        drop(self.0.index.finish());
    }
}

/// Emptied vectors for [`Lowered`]'s lists.
#[derive(Default)]
pub(crate) struct Lists {
    pub(crate) queues: Vec<Queue>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) versions: Vec<u64>,
}

impl Lists {
    /// Vectors an earlier execution gave back to the graph.
    pub(crate) fn from_spares(spares: &mut Spares) -> Self {
        let (queues, resources, versions) = spares.lowering_lists();
        Lists {
            queues,
            resources,
            versions,
        }
    }
}

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
///
/// `spare` (the declarations of an earlier plan), `scratch` and `lists` (emptied vectors) are
/// refilled rather than allocated again.
pub(crate) fn lower(
    device: vk::Device,
    passes: &[PassEntry<'_>],
    spare: Option<PlanInput>,
    scratch: &mut LowerScratch,
    lists: Lists,
) -> Result<Lowered> {
    // An earlier plan's declarations are refilled in place: their strings and vectors keep
    // their capacity, so a frame like an earlier one allocates none of them again.
    let PlanInput {
        queues: mut queue_decls,
        resources: mut res_decls,
        passes: mut pass_decls,
    } = spare.unwrap_or_default();
    let Lists {
        mut queues,
        resources,
        mut versions,
    } = lists;
    queues.clear();
    versions.clear();
    // Emptied when lowering ends, also if a pass's `declare` panics: the scratch outlives the
    // frame and must keep no resource alive.
    let scratch = EmptiedOnDrop(scratch);
    let LowerScratch {
        declared: d,
        index,
        spare_passes,
        spare_resources,
    } = &mut *scratch.0;
    index.start(resources);
    let declared = declare_passes(
        device,
        passes,
        d,
        index,
        (&mut pass_decls, spare_passes),
        &mut queues,
    );
    // Emptied (keeping their capacity), so that the scratch keeps no resource alive.
    d.waits.clear();
    d.signals.clear();
    let resources = index.finish();
    declared?;
    refill::truncate(&mut pass_decls, passes.len(), spare_passes);
    let decls = (&mut res_decls, &mut *spare_resources);
    snapshot_states(&resources, decls, &mut queues, &mut versions);
    refill::truncate(&mut res_decls, resources.len(), spare_resources);
    check_queues(device, passes, &queues)?;
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

/// `x`'s planner index in `list`, which it joins if it is not there yet: queues (and, in the
/// simulation, resources) are numbered in first-use order.
pub(crate) fn first_use_index<T: PartialEq + Clone>(x: &T, list: &mut Vec<T>) -> usize {
    match list.iter().position(|y| y == x) {
        Some(i) => i,
        None => {
            list.push(x.clone());
            list.len() - 1
        }
    }
}

/// Asks each pass for its declarations, into its refilled `PassDecl`. One `Declared` serves
/// every pass in turn: its vectors are reused from pass to pass, and uses go straight into
/// the pass's declaration. Fails on a resource of another device.
fn declare_passes(
    device: vk::Device,
    passes: &[PassEntry<'_>],
    d: &mut Declared,
    index: &mut ResourceIndex,
    (pass_decls, spare_passes): (&mut Vec<PassDecl>, &mut Vec<PassDecl>),
    queues: &mut Vec<Queue>,
) -> Result<()> {
    for (pi, p) in passes.iter().enumerate() {
        d.waits.clear();
        d.signals.clear();
        let qi = first_use_index(&p.queue, queues);
        let pd = refill::pass(pass_decls, spare_passes, pi, &p.name, qi);
        let seen = index.resources.len();
        p.pass.declare(&mut Declare {
            out: d,
            uses: &mut pd.uses,
            index,
        });
        for w in &d.waits {
            let mut guards = Vec::new();
            for g in &w.guards {
                guards.push(index.index_of(g.id(), || Resource::Image(g.clone())));
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
        if let Some(r) = (index.resources[seen..].iter()).find(|r| r.device_handle() != device) {
            return Err(Error::ForeignDevice {
                what: format!("resource `{}` (pass `{}`)", r.name(), p.name),
            });
        }
    }
    Ok(())
}

/// Snapshots each resource's description and tracked state (with its version) into its
/// refilled `ResourceDecl`; queues seen only in the states join `queues`.
fn snapshot_states(
    resources: &[Resource],
    (res_decls, spare_resources): (&mut Vec<ResourceDecl>, &mut Vec<ResourceDecl>),
    queues: &mut Vec<Queue>,
    versions: &mut Vec<u64>,
) {
    for (ri, r) in resources.iter().enumerate() {
        let (kind, concurrent) = match r {
            Resource::Image(i) => {
                let d = i.desc();
                let kind = ResourceKind::Image {
                    mips: d.mip_levels,
                    layers: d.array_layers,
                    aspect: d.aspect(),
                    usage: d.usage,
                };
                (kind, d.sharing.is_concurrent())
            }
            Resource::Buffer(b) => {
                let kind = ResourceKind::Buffer {
                    size: b.size(),
                    usage: b.desc().usage,
                };
                (kind, b.desc().sharing.is_concurrent())
            }
        };
        let rd = refill::resource(res_decls, spare_resources, ri, r.name(), kind, concurrent);
        rd.transient = r.transient().map(|(memory, _graph)| memory);
        let t = r.tracked().lock();
        versions.push(t.version);
        refill_segments(&mut rd.initial, &t.segments, |rec| Recorded {
            queue: first_use_index(&rec.queue, queues),
            value: rec.value,
            stages: rec.stages,
            access: rec.access,
        });
    }
}

/// Fails on a queue of another device (one a resource's state names), and on two `Queue`
/// objects for one `VkQueue`, which would have two submit locks and two timelines.
fn check_queues(device: vk::Device, passes: &[PassEntry<'_>], queues: &[Queue]) -> Result<()> {
    if let Some(q) = queues.iter().find(|q| q.device_handle() != device) {
        return Err(Error::ForeignDevice {
            what: format!("queue `{}` (recorded in a resource's state)", q.name()),
        });
    }
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
    Ok(())
}
