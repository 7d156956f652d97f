//! Lowering: the passes inserted into a graph, with their declarations and the resources'
//! tracked states, become a [`PlanInput`] of plain indices for the pure planner.
//!
//! This is where the runtime's objects meet the planner's data: every distinct [`Queue`] and
//! [`Resource`] gets an index, and each resource's version is read (so the executor can tell
//! whether the plan went stale). The states themselves are snapshot only when the frame is not
//! one a kept plan left at rest ([`Lowered::snapshot_states`]). Nothing here calls Vulkan.

use crate::access::LayoutPolicy;
use crate::error::{Error, Result};
use crate::pass::{Declare, Declared, PassEntry, ResourceIndex};
use crate::plan::{
    refill_segments, BinarySignalDecl, BinaryWaitDecl, PassDecl, PlanInput, QueueDecl,
    ResourceDecl, ResourceKind,
};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;

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

/// Emptied vectors for [`Lowered`]'s lists: those of the frame a reused one replaced.
#[derive(Default)]
pub(crate) struct Lists {
    pub(crate) queues: Vec<Queue>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) versions: Vec<u64>,
}

/// A graph's passes lowered for the planner, with the objects its indices refer to. The
/// resources' states are in `input` only once [`Lowered::snapshot_states`] ran.
pub(crate) struct Lowered {
    pub(crate) input: PlanInput,
    /// Planner queue index -> queue: the passes' queues, then queues seen only in the
    /// resources' states.
    pub(crate) queues: Vec<Queue>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
    /// Each resource's state version when lowered (when snapshot, once it is).
    pub(crate) versions: Vec<u64>,
    /// How many of `queues` the passes use (the rest are named only in states).
    pass_queues: usize,
    /// What the device's extensions let every queue's plan rely on.
    ext: QueueExtensions,
}

/// What the device's enabled extensions let the planner rely on, for every queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueueExtensions {
    /// `maintenance8`: ownership transfers use all stages
    /// ([`crate::plan::QueueDecl::transfers_use_all_stages`]).
    pub(crate) all_stages: bool,
    /// `maintenance9`: buffers move between families without ownership transfers
    /// ([`crate::plan::QueueDecl::maintenance9`]; a graph does not know the families'
    /// `optimalImageTransferToQueueFamilies`, so its images still transfer).
    pub(crate) maintenance9: bool,
}

/// Asks each pass for its declarations and lowers them into a [`PlanInput`], with each
/// resource's version but not its state, and each image use in the layout `layouts` gives its
/// access. Fails on a queue or resource of another device than `device`, and on two `Queue`
/// objects for one `VkQueue`.
///
/// `spare` (the declarations of an earlier plan), `scratch` and `lists` (emptied vectors) are
/// refilled rather than allocated again.
pub(crate) fn lower(
    (device, ext, layouts): (vk::Device, QueueExtensions, LayoutPolicy),
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
        (device, layouts),
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
    truncate_keeping_spares(&mut pass_decls, passes.len(), spare_passes);
    let decls = (&mut res_decls, &mut *spare_resources);
    describe_resources(&resources, decls, &mut versions);
    truncate_keeping_spares(&mut res_decls, resources.len(), spare_resources);
    check_queues(device, passes, &queues)?;
    refill_queues(&mut queue_decls, &queues, ext);
    let input = PlanInput {
        queues: queue_decls,
        resources: res_decls,
        passes: pass_decls,
    };
    Ok(Lowered {
        input,
        pass_queues: queues.len(),
        queues,
        resources,
        versions,
        ext,
    })
}

impl Lowered {
    /// Snapshots each resource's tracked state (and its version again) into its declaration;
    /// queues seen only in the states join the queues. Fails as [`lower`] does on those queues.
    pub(crate) fn snapshot_states(
        &mut self,
        device: vk::Device,
        passes: &[PassEntry<'_>],
    ) -> Result<()> {
        self.queues.truncate(self.pass_queues);
        let decls = self.input.resources.iter_mut().zip(&self.resources);
        for ((rd, r), version) in decls.zip(&mut self.versions) {
            let t = r.tracked().lock();
            *version = t.version;
            refill_segments(&mut rd.initial, &t.segments, |queue, value| {
                (first_use_index(queue, &mut self.queues), value)
            });
        }
        check_queues(device, passes, &self.queues)?;
        refill_queues(&mut self.input.queues, &self.queues, self.ext);
        Ok(())
    }

    /// Takes the queues of a kept plan's last execution, whose states this frame's are, if
    /// the passes' queues are its first ones: the queues the states name come after them.
    pub(crate) fn adopt_queues(&mut self, queues: &[Queue]) -> bool {
        let n = self.pass_queues;
        let prefix = queues.len() >= n
            && (self.queues[..n].iter().zip(queues)).all(|(a, b)| a.same_object(b));
        if prefix {
            self.queues.truncate(n);
            self.queues.extend_from_slice(&queues[n..]);
            refill_queues(&mut self.input.queues, &self.queues, self.ext);
        }
        prefix
    }
}

/// Debug builds check what a rebind at rest took on trust: each resource still at the version
/// `versions` says has the state `plan`'s input says, in the plan's queue indices (`queues`).
#[cfg(debug_assertions)]
pub(crate) fn debug_check_at_rest(
    plan: &crate::plan::Plan,
    queues: &[Queue],
    resources: &[Resource],
    versions: &[u64],
) {
    for (r, resource) in resources.iter().enumerate() {
        let t = resource.tracked().lock();
        if t.version != versions[r] {
            continue;
        }
        let mut now = Vec::new();
        refill_segments(&mut now, &t.segments, |queue, value| {
            let index = queues.iter().position(|q| q == queue);
            (
                index.expect("a state at rest names the plan's queues"),
                value,
            )
        });
        assert_eq!(
            now, plan.input.resources[r].initial,
            "a plan rebound at rest has the states its last execution left"
        );
    }
}

/// The declarations of `queues`, refilled in place, with what `ext` lets them rely on.
fn refill_queues(decls: &mut Vec<QueueDecl>, queues: &[Queue], ext: QueueExtensions) {
    for (qi, q) in queues.iter().enumerate() {
        refill_queue(decls, qi, q.name(), (q.family(), q.caps(), ext));
    }
    decls.truncate(queues.len());
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
    (device, layouts): (vk::Device, LayoutPolicy),
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
        let pd = refill_pass(pass_decls, spare_passes, pi, &p.name, qi);
        let seen = index.resources.len();
        p.pass.declare(&mut Declare {
            out: d,
            uses: &mut pd.uses,
            index,
            layouts,
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

/// Writes each resource's description into its refilled `ResourceDecl` (its state is left
/// for [`Lowered::snapshot_states`]), and its version into `versions`.
fn describe_resources(
    resources: &[Resource],
    (res_decls, spare_resources): (&mut Vec<ResourceDecl>, &mut Vec<ResourceDecl>),
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
        let rd = refill_resource(res_decls, spare_resources, ri, r.name(), kind, concurrent);
        rd.transient = r.transient().map(|(memory, _graph)| memory);
        versions.push(r.tracked().lock().version);
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

// Refilling an earlier plan's declarations in place.
//
// Each function sets entry `i` of a list to new contents, reusing the entry's strings and
// vectors when there is one (clear, then push: no allocation while the capacity suffices),
// and appending a spare or fresh entry otherwise. The caller cuts the list to its new length
// with `truncate_keeping_spares`, which keeps the entries cut as spares.

/// Frame after frame the names repeat: comparing is cheaper than copying.
fn set_name(dst: &mut String, name: &str) {
    if dst != name {
        dst.clear();
        dst.push_str(name);
    }
}

/// Entry `i` of `list` (at most one past its end) as pass `name` on queue `queue`, with no
/// uses, waits or signals yet. Past the end, an entry from `spare` (what a longer frame had)
/// is taken before a new one. Inlined: it runs once per pass per frame.
#[inline]
fn refill_pass<'l>(
    list: &'l mut Vec<PassDecl>,
    spare: &mut Vec<PassDecl>,
    i: usize,
    name: &str,
    queue: usize,
) -> &'l mut PassDecl {
    debug_assert!(i <= list.len(), "passes are refilled in order");
    if i == list.len() {
        list.push(spare.pop().unwrap_or_else(|| PassDecl::new(name, queue)));
    }
    // Destructured in full, so that a field added to the declaration fails to compile here
    // until it is reset too: a spare entry may come from any earlier frame.
    let PassDecl {
        name: old_name,
        queue: old_queue,
        uses,
        waits,
        signals,
    } = &mut list[i];
    set_name(old_name, name);
    *old_queue = queue;
    uses.clear();
    waits.clear();
    signals.clear();
    &mut list[i]
}

/// Entry `i` of `list` (at most one past its end) as this resource, its initial state left for
/// the caller to refill. Past the end, an entry from `spare` is taken before a new one.
#[inline]
fn refill_resource<'l>(
    list: &'l mut Vec<ResourceDecl>,
    spare: &mut Vec<ResourceDecl>,
    i: usize,
    name: &str,
    kind: ResourceKind,
    concurrent: bool,
) -> &'l mut ResourceDecl {
    debug_assert!(i <= list.len(), "resources are refilled in order");
    if i == list.len() {
        list.push(spare.pop().unwrap_or_else(|| ResourceDecl {
            name: name.to_owned(),
            kind,
            concurrent,
            initial: Vec::new(),
            transient: None,
        }));
    }
    // In full, as in `pass`; `initial` is the caller's to refill (`refill_segments` cuts and
    // overwrites every segment).
    let ResourceDecl {
        name: old_name,
        kind: old_kind,
        concurrent: old_concurrent,
        initial: _,
        transient,
    } = &mut list[i];
    set_name(old_name, name);
    *old_kind = kind;
    *old_concurrent = concurrent;
    *transient = None;
    &mut list[i]
}

/// Cuts `list` to `len` entries; the ones cut go to `spare` for a later, longer frame.
fn truncate_keeping_spares<T>(list: &mut Vec<T>, len: usize, spare: &mut Vec<T>) {
    if list.len() > len {
        spare.extend(list.drain(len..));
    }
}

/// Entry `i` of `list` as this queue: (family, capabilities, what the device's extensions let
/// it rely on).
fn refill_queue(
    list: &mut Vec<QueueDecl>,
    i: usize,
    name: &str,
    (family, caps, ext): (u32, vk::QueueFlags, QueueExtensions),
) {
    if i == list.len() {
        list.push(QueueDecl::new(name, family, caps));
    }
    let QueueDecl {
        name: old_name,
        family: old_family,
        caps: old_caps,
        transfers_use_all_stages,
        maintenance9,
    } = &mut list[i];
    set_name(old_name, name);
    *old_family = family;
    *old_caps = caps;
    *transfers_use_all_stages = ext.all_stages;
    // No family's mask is known: buffers only.
    *maintenance9 = ext.maintenance9.then_some(0);
}

#[cfg(test)]
mod refill_tests {
    use super::*;
    use crate::plan::UseDecl;
    use crate::Access;

    /// A refilled entry has exactly the new contents, and keeps its allocations.
    #[test]
    fn a_refilled_pass_has_only_its_new_contents_and_keeps_its_buffers() {
        let mut list = vec![PassDecl::new("a long old name", 3)
            .with_use(UseDecl::new(0, Access::TRANSFER_WRITE))
            .with_use(UseDecl::new(1, Access::TRANSFER_READ))];
        let (name_ptr, uses_ptr) = (list[0].name.as_ptr(), list[0].uses.as_ptr());
        let mut spare = Vec::new();
        let pd = refill_pass(&mut list, &mut spare, 0, "new", 1);
        pd.uses.push(UseDecl::new(2, Access::COPY_READ));
        let expected = PassDecl::new("new", 1).with_use(UseDecl::new(2, Access::COPY_READ));
        assert_eq!(format!("{:?}", list[0]), format!("{expected:?}"));
        assert_eq!(
            (list[0].name.as_ptr(), list[0].uses.as_ptr()),
            (name_ptr, uses_ptr)
        );

        // Past the end: appended.
        refill_pass(&mut list, &mut spare, 1, "second", 0);
        assert_eq!(list.len(), 2);
        assert_eq!(
            format!("{:?}", list[1]),
            format!("{:?}", PassDecl::new("second", 0))
        );

        // A shorter frame leaves its last entry spare; a longer one takes it back, refilled.
        list[1].uses.push(UseDecl::new(0, Access::COPY_WRITE));
        let uses_ptr = list[1].uses.as_ptr();
        truncate_keeping_spares(&mut list, 1, &mut spare);
        assert_eq!((list.len(), spare.len()), (1, 1));
        refill_pass(&mut list, &mut spare, 1, "third", 2);
        assert_eq!((list.len(), spare.len()), (2, 0));
        assert_eq!(
            format!("{:?}", list[1]),
            format!("{:?}", PassDecl::new("third", 2))
        );
        assert_eq!(list[1].uses.as_ptr(), uses_ptr);

        let mut queues = vec![QueueDecl::new("old", 5, vk::QueueFlags::TRANSFER)];
        let ext = QueueExtensions::default();
        refill_queue(&mut queues, 0, "gfx", (0, vk::QueueFlags::GRAPHICS, ext));
        assert_eq!(
            format!("{:?}", queues[0]),
            format!("{:?}", QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS))
        );
    }
}
