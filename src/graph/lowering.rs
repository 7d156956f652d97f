//! Lowering: the passes inserted into a graph declare into the frame's flat declarations
//! ([`FrameDecls`]), every distinct [`Queue`] and [`Resource`] under an index, and each
//! resource's version is read (so the executor can tell whether the plan went stale). That is
//! all a frame like a kept one needs. Only a frame that must be planned, or whose states must
//! be compared, becomes a [`PlanInput`] for the pure planner ([`Lowered::build_input`]), with
//! its resources' states ([`Lowered::snapshot_states`]). Nothing here calls Vulkan.

use crate::access::LayoutPolicy;
use crate::error::{Error, Result};
use crate::pass::{Declare, FrameDecls, PassEntry, ResourceIndex};
use crate::plan::{refill_segments, PassDecl, PlanInput, QueueDecl, ResourceDecl, ResourceKind};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;

/// Scratch space of lowering, kept by the graph between frames.
#[derive(Default)]
pub(crate) struct LowerScratch {
    /// Resource id -> planner index, and the resources.
    index: ResourceIndex,
    /// Declarations a longer frame had, for the next longer one (frame loops alternate
    /// between shapes): plain data, no resource.
    spare_passes: Vec<PassDecl>,
    spare_resources: Vec<ResourceDecl>,
}

/// Empties the resource index when dropped.
struct EmptiedOnDrop<'s>(&'s mut ResourceIndex);

impl Drop for EmptiedOnDrop<'_> {
    fn drop(&mut self) {
        drop(self.0.finish());
    }
}

/// Emptied vectors for [`Lowered`]'s lists: those of the frame a reused one replaced.
#[derive(Default)]
pub(crate) struct Lists {
    pub(crate) decls: FrameDecls,
    pub(crate) queues: Vec<Queue>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) versions: Vec<u64>,
}

/// A graph's passes lowered: their declarations, with the objects their indices refer to.
/// `input` is built only by [`Lowered::build_input`], and holds the resources' states only
/// once [`Lowered::snapshot_states`] ran.
pub(crate) struct Lowered {
    pub(crate) decls: FrameDecls,
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
    pub(crate) ext: QueueExtensions,
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

impl QueueExtensions {
    /// Whether every queue of `queues` (a plan's) was declared with these.
    pub(crate) fn declared_in(self, queues: &[QueueDecl]) -> bool {
        let maintenance9 = self.maintenance9.then_some(0);
        (queues.iter()).all(|q| {
            q.transfers_use_all_stages == self.all_stages && q.maintenance9 == maintenance9
        })
    }
}

/// Asks each pass for its declarations, into the flat [`FrameDecls`] (each image use in the
/// layout `layouts` gives its access), and reads each resource's version. Fails on a resource
/// of another device than `device`, and on two `Queue` objects for one `VkQueue`.
///
/// `scratch` and `lists` (emptied vectors) are refilled rather than allocated again.
pub(crate) fn lower(
    (device, ext, layouts): (vk::Device, QueueExtensions, LayoutPolicy),
    passes: &[PassEntry<'_>],
    scratch: &mut LowerScratch,
    lists: Lists,
) -> Result<Lowered> {
    let Lists {
        mut decls,
        mut queues,
        resources,
        mut versions,
    } = lists;
    decls.clear();
    queues.clear();
    versions.clear();
    // Emptied when lowering ends, also if a pass's `declare` panics: the scratch outlives the
    // frame and must keep no resource alive.
    let index = EmptiedOnDrop(&mut scratch.index);
    index.0.start(resources);
    let declared = declare_passes((device, layouts), passes, &mut decls, index.0, &mut queues);
    let resources = index.0.finish();
    declared?;
    versions.extend(resources.iter().map(|r| r.tracked().version()));
    Ok(Lowered {
        decls,
        input: PlanInput::default(),
        pass_queues: queues.len(),
        queues,
        resources,
        versions,
        ext,
    })
}

impl Lowered {
    /// Builds the planner's input from the declarations, refilling `spare` (an earlier
    /// plan's, whose strings and vectors keep their capacity), each resource's state left for
    /// [`Lowered::snapshot_states`].
    pub(crate) fn build_input(
        &mut self,
        passes: &[PassEntry<'_>],
        spare: Option<PlanInput>,
        scratch: &mut LowerScratch,
    ) {
        let mut input = spare.unwrap_or_default();
        let spare_passes = &mut scratch.spare_passes;
        for (pi, p) in passes.iter().enumerate() {
            let view = self.decls.pass(pi);
            let pd = refill_pass(&mut input.passes, spare_passes, pi, &p.name, view.queue);
            pd.uses.extend(view.use_decls());
            pd.waits.extend(view.wait_decls());
            pd.signals.extend_from_slice(view.signals);
        }
        truncate_keeping_spares(&mut input.passes, passes.len(), spare_passes);
        let spare_resources = &mut scratch.spare_resources;
        describe_resources(&self.resources, (&mut input.resources, spare_resources));
        truncate_keeping_spares(&mut input.resources, self.resources.len(), spare_resources);
        self.input = input;
    }

    /// Snapshots each resource's tracked state (and its version again) into its declaration;
    /// queues seen only in the states join the queues. Fails on a queue of another device.
    pub(crate) fn snapshot_states(&mut self, device: vk::Device) -> Result<()> {
        self.queues.truncate(self.pass_queues);
        let decls = self.input.resources.iter_mut().zip(&self.resources);
        for ((rd, r), version) in decls.zip(&mut self.versions) {
            let t = r.tracked().lock();
            *version = t.version;
            refill_segments(&mut rd.initial, &t.segments, |queue, value| {
                (first_use_index(queue, &mut self.queues), value)
            });
        }
        if let Some(q) = self.queues.iter().find(|q| q.device_handle() != device) {
            return Err(Error::ForeignDevice {
                what: format!("queue `{}` (recorded in a resource's state)", q.name()),
            });
        }
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
        }
        prefix
    }
}

/// Gives a reused plan's declarations the names of this frame's `passes`, where they differ
/// (they show in reports and errors), and its binary semaphores (`decls`).
pub(crate) fn rename(input: &mut PlanInput, passes: &[PassEntry<'_>], decls: &FrameDecls) {
    for (pd, p) in input.passes.iter_mut().zip(passes) {
        set_name(&mut pd.name, &p.name);
    }
    decls.write_semaphores(&mut input.passes);
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

/// Asks each pass for its declarations, appended to `decls`. Fails on a queue or resource of
/// another device, and on a queue that is another `Queue` object for a `VkQueue` already seen (it
/// would have a second submit lock and timeline).
fn declare_passes(
    (device, layouts): (vk::Device, LayoutPolicy),
    passes: &[PassEntry<'_>],
    decls: &mut FrameDecls,
    index: &mut ResourceIndex,
    queues: &mut Vec<Queue>,
) -> Result<()> {
    let mut qi = 0;
    for p in passes {
        // Runs of passes share a queue: the last one's is checked first.
        if queues.get(qi).is_none_or(|q| !q.same_object(p.queue)) {
            qi = first_use_index(p.queue, queues);
            if p.queue.device_handle() != device {
                return Err(Error::ForeignDevice {
                    what: format!("queue `{}` (pass `{}`)", p.queue.name(), p.name),
                });
            }
            if !queues[qi].same_object(p.queue) {
                return Err(Error::InvalidInput(format!(
                    "queues `{}` and `{}` are two Queue objects for one VkQueue: create one Queue per VkQueue and clone it",
                    queues[qi].name(),
                    p.queue.name()
                )));
            }
        }
        let seen = index.resources.len();
        p.pass.declare(&mut Declare {
            decls,
            index,
            layouts,
        });
        decls.end_pass(qi);
        if let Some(r) = (index.resources[seen..].iter()).find(|r| r.device_handle() != device) {
            return Err(Error::ForeignDevice {
                what: format!("resource `{}` (pass `{}`)", r.name(), p.name),
            });
        }
    }
    Ok(())
}

/// Writes each resource's description into its refilled `ResourceDecl` (its state is left
/// for [`Lowered::snapshot_states`]).
fn describe_resources(
    resources: &[Resource],
    (res_decls, spare_resources): (&mut Vec<ResourceDecl>, &mut Vec<ResourceDecl>),
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
    }
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
