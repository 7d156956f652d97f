//! The pure planner: declarations in, batches, barriers and semaphores out.
//!
//! It runs in two phases.
//!
//! 1. **Dependencies**, in program order. Each pass's uses are folded per segment of tracked
//!    state. A conflict with an earlier access on the same queue becomes a barrier in the
//!    pass's one pre-barrier command; one on another queue becomes a dependency that phase 2
//!    turns into a semaphore wait. An ownership transfer inserts a release node on the queue
//!    of the most recent access, right after it, and an acquire barrier before the pass.
//! 2. **Batches**, per queue. A node that needs a wait not yet covered starts a batch (wait
//!    as late as possible); a node another queue waits on, or that signals a binary
//!    semaphore, ends one (signal as early as possible).
//!
//! Node positions interleave passes and releases: pass `i` is at `2i + 2`, a release after
//! pass `i` at `2i + 3`, and a release of state left by an earlier graph at `1`.

use super::queue_stages::{self, on_queue};
use super::*;
use crate::error::{Error, Result};
use crate::range::RangeMap;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};

type Pos = u64;

const PRE_GRAPH_RELEASE: Pos = 1;

fn pass_pos(i: usize) -> Pos {
    2 * i as u64 + 2
}

/// Where a remembered access happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum At {
    /// In an earlier execution, done once the queue's timeline reaches the value.
    Value(u64),
    /// In this graph, at a node position.
    Node(Pos),
}

/// A remembered access inside the planner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rec {
    queue: usize,
    at: At,
    stages: vk::PipelineStageFlags2,
    access: vk::AccessFlags2,
    /// Set when this "write" is a binary semaphore wait (pass, wait index): the stages are
    /// those of the first use, resolved as uses arrive.
    binary_wait: Option<(usize, usize)>,
}

/// Working state of one segment.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct WState {
    layout: vk::ImageLayout,
    defined: bool,
    owner: Option<u32>,
    write: Option<Rec>,
    reads: SmallVec<[Rec; 2]>,
    /// Per queue: stages and accesses the last write has been made visible to.
    visible: SmallVec<[(usize, vk::PipelineStageFlags2, vk::AccessFlags2); 2]>,
}

/// A dependency on work on another queue: becomes a semaphore wait.
#[derive(Clone, Copy, Debug)]
struct Dep {
    queue: usize,
    at: At,
    /// Stages of the waiting node that need it (the wait's stage mask).
    wait_stages: vk::PipelineStageFlags2,
    /// Stages of the awaited work (the signal's stage mask).
    src_stages: vk::PipelineStageFlags2,
}

#[derive(Debug)]
enum NodeKind {
    Pass(usize),
    Release,
}

/// A batch before signals split it: its waits and its nodes.
#[derive(Debug, Default)]
struct Proto {
    waits: Vec<ProtoWait>,
    /// Indices into the queue's node list.
    nodes: Vec<usize>,
}

#[derive(Debug)]
struct ProtoWait {
    target: ProtoTarget,
    stages: vk::PipelineStageFlags2,
    /// What the awaited node's signal must cover.
    src_stages: vk::PipelineStageFlags2,
}

#[derive(Clone, Copy, Debug)]
enum ProtoTarget {
    Node(usize, Pos),
    Value(usize, u64),
    Binary(vk::Semaphore),
}

impl ProtoTarget {
    fn queue(&self) -> Option<usize> {
        match *self {
            Self::Node(q, _) | Self::Value(q, _) => Some(q),
            Self::Binary(_) => None,
        }
    }
}

#[derive(Debug)]
struct Node {
    kind: NodeKind,
    barrier: BarrierCmd,
    deps: Vec<Dep>,
}

struct Planner<'a> {
    input: &'a PlanInput,
    states: Vec<RangeMap<WState>>,
    /// Per queue, its nodes by position.
    /// Per queue, its nodes sorted by position.
    nodes: Vec<Vec<(Pos, Node)>>,
    /// Resolved stage masks of binary waits, by (pass, wait index).
    binary_wait_stages: HashMap<(usize, usize), vk::PipelineStageFlags2>,
    /// Effective stages per pass (what its uses ran at), for binary signal masks.
    pass_stages: Vec<vk::PipelineStageFlags2>,
    /// Waits of each first batch of a proto, resolved after all queues are batched.
    proto_waits: Vec<(usize, usize, Vec<ProtoWait>)>,
}

/// Plans `input`: see the module docs for the algorithm and [`Plan`] for the result.
///
/// Every access is narrowed to the stages its queue's family supports
/// ([`crate::access::narrow_stages`]); the plan keeps the narrowed declarations.
///
/// Errors: [`Error::InvalidInput`] for an index out of range or a use of an image after a
/// pass presented it, [`Error::RangeOutOfBounds`], [`Error::ConflictingUses`],
/// [`Error::QueueCapability`] (also for an access none of whose stages the queue supports),
/// [`Error::UsageNotAllowed`], and
/// [`Error::NoQueueForRelease`] when an ownership transfer needs a queue of a family the
/// graph has none of.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access, Error};
/// // A compute write on a transfer-only queue is refused before anything is planned.
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER)],
///     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE)],
///     passes: vec![PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))],
/// };
/// let err = plan(&input).unwrap_err();
/// assert!(matches!(err, Error::QueueCapability { needs: vk::QueueFlags::COMPUTE, .. }));
/// ```
pub fn plan(input: &PlanInput) -> Result<Plan> {
    plan_owned(input.clone())
}

/// [`plan`], taking the declarations by value so the plan keeps them without a copy.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER)],
///     resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::TRANSFER_DST)],
///     passes: vec![PassDecl::new("clear", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE))],
/// };
/// let plan = plan_owned(input).unwrap();
/// // The plan keeps the declarations it was made from.
/// assert_eq!(plan.input.passes[0].name, "clear");
/// assert_eq!(plan.batch_count(), 1);
/// ```
pub fn plan_owned(mut input: PlanInput) -> Result<Plan> {
    validate(&input)?;
    queue_stages::narrow_input(&mut input);
    let (queues, final_states) = plan_parts(&input)?;
    Ok(Plan {
        input,
        queues,
        final_states,
    })
}

type FinalStates = Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>>;

/// Plans a validated input whose stages fit its queues.
fn plan_parts(input: &PlanInput) -> Result<(Vec<QueuePlan>, FinalStates)> {
    let mut p = Planner {
        input,
        states: input
            .resources
            .iter()
            .map(|r| {
                let mut m = RangeMap::new(r.kind.cells(), WState::default());
                for (range, s) in &r.initial {
                    let w = WState::from_recorded(s);
                    m.update(range.clone(), |_| w.clone());
                }
                m
            })
            .collect(),
        nodes: (0..input.queues.len()).map(|_| Vec::new()).collect(),
        binary_wait_stages: HashMap::new(),
        pass_stages: vec![vk::PipelineStageFlags2::NONE; input.passes.len()],
        proto_waits: Vec::new(),
    };
    for i in 0..input.passes.len() {
        p.add_pass(i)?;
    }
    let queues = p.batch_all();
    Ok((queues, p.final_states()))
}

impl WState {
    fn from_recorded(s: &SegmentState<usize>) -> Self {
        let rec = |r: &Recorded<usize>| Rec {
            queue: r.queue,
            // `None` cannot come from an executed graph; treat it as already complete.
            at: At::Value(r.value.unwrap_or(0)),
            stages: r.stages,
            access: r.access,
            binary_wait: None,
        };
        Self {
            layout: s.layout,
            defined: s.defined,
            owner: s.owner,
            write: s.write.as_ref().map(rec),
            reads: s.reads.iter().map(rec).collect(),
            visible: SmallVec::new(),
        }
    }
}

fn cell_ranges(
    kind: &ResourceKind,
    range: Option<SubRange>,
) -> SmallVec<[std::ops::Range<u64>; 1]> {
    match (kind, range.unwrap_or(kind.whole())) {
        (ResourceKind::Image { layers, .. }, SubRange::Image(r))
            if r.base_layer == 0 && r.layer_count == *layers =>
        {
            let l = *layers as u64;
            smallvec::smallvec![r.base_mip as u64 * l..(r.base_mip + r.mip_count) as u64 * l]
        }
        (ResourceKind::Image { layers, .. }, SubRange::Image(r)) => r.cells(*layers).into(),
        (ResourceKind::Buffer { .. }, SubRange::Buffer(b)) => smallvec::smallvec![b.bytes()],
        // Mismatched kinds are rejected by `validate`.
        _ => SmallVec::new(),
    }
}

/// Checks everything that makes a plan impossible, before any state changes.
fn validate(input: &PlanInput) -> Result<()> {
    for res in &input.resources {
        let cells = res.kind.cells();
        for (range, st) in &res.initial {
            let bad_queue = st
                .write
                .iter()
                .chain(&st.reads)
                .any(|r| r.queue >= input.queues.len());
            if bad_queue || range.start >= range.end || range.end > cells {
                return Err(Error::InvalidInput(format!(
                    "the initial state of `{}` names a queue or a range that does not exist",
                    res.name
                )));
            }
        }
    }
    for (pi, pass) in input.passes.iter().enumerate() {
        let queue = input.queues.get(pass.queue).ok_or_else(|| {
            Error::InvalidInput(format!(
                "pass `{}` names queue {} of {}",
                pass.name,
                pass.queue,
                input.queues.len()
            ))
        })?;
        for w in &pass.waits {
            if let Some(&g) = w.guards.iter().find(|&&g| g >= input.resources.len()) {
                return Err(Error::InvalidInput(format!(
                    "pass `{}` guards resource {g} that does not exist",
                    pass.name
                )));
            }
        }
        for (ui, u) in pass.uses.iter().enumerate() {
            let res = input.resources.get(u.resource).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "pass `{}` uses resource {} of {}",
                    pass.name,
                    u.resource,
                    input.resources.len()
                ))
            })?;
            let a = &u.access;
            if !a.runs_on(queue.caps) {
                return Err(Error::QueueCapability {
                    pass: pass.name.clone(),
                    resource: res.name.clone(),
                    queue: queue.name.clone(),
                    needs: a.queue_capabilities(),
                    has: queue.caps,
                });
            }
            queue_stages::check_use(input, pi, a, &res.name)?;
            match (res.kind, u.range.unwrap_or(res.kind.whole())) {
                (
                    ResourceKind::Image {
                        mips,
                        layers,
                        usage,
                        ..
                    },
                    SubRange::Image(r),
                ) => {
                    if !r.fits(mips, layers) {
                        return Err(Error::RangeOutOfBounds {
                            pass: pass.name.clone(),
                            resource: res.name.clone(),
                            detail: format!("{r:?} in an image of {mips} mips and {layers} layers"),
                        });
                    }
                    if !usage.contains(a.image_usage) {
                        return Err(Error::UsageNotAllowed {
                            pass: pass.name.clone(),
                            resource: res.name.clone(),
                            detail: format!("needs {:?}, created with {usage:?}", a.image_usage),
                        });
                    }
                }
                (ResourceKind::Buffer { size, usage }, SubRange::Buffer(b)) => {
                    if b.size == 0 || b.offset.checked_add(b.size).is_none_or(|e| e > size) {
                        return Err(Error::RangeOutOfBounds {
                            pass: pass.name.clone(),
                            resource: res.name.clone(),
                            detail: format!("{b:?} in a buffer of {size} bytes"),
                        });
                    }
                    if !usage.contains(a.buffer_usage) {
                        return Err(Error::UsageNotAllowed {
                            pass: pass.name.clone(),
                            resource: res.name.clone(),
                            detail: format!("needs {:?}, created with {usage:?}", a.buffer_usage),
                        });
                    }
                }
                _ => {
                    return Err(Error::RangeOutOfBounds {
                        pass: pass.name.clone(),
                        resource: res.name.clone(),
                        detail: "an image range for a buffer, or a byte range for an image".into(),
                    });
                }
            }
            // Two uses of one resource in one pass: overlapping writes, or two layouts.
            for v in &pass.uses[..ui] {
                if v.resource != u.resource {
                    continue;
                }
                let overlap = match (
                    u.range.unwrap_or(res.kind.whole()),
                    v.range.unwrap_or(res.kind.whole()),
                ) {
                    (SubRange::Image(x), SubRange::Image(y)) => x.overlaps(&y),
                    (SubRange::Buffer(x), SubRange::Buffer(y)) => x.overlaps(&y),
                    _ => false,
                };
                let is_image = matches!(res.kind, ResourceKind::Image { .. });
                if overlap
                    && (a.is_write()
                        || v.access.is_write()
                        || (is_image && a.layout != v.access.layout))
                {
                    return Err(Error::ConflictingUses {
                        pass: pass.name.clone(),
                        resource: res.name.clone(),
                    });
                }
            }
        }
    }
    super::presented::check(input)
}

/// What one pass does to one segment, after folding all its uses of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SegUse {
    access: Access,
    discard: bool,
}

impl Planner<'_> {
    fn add_pass(&mut self, i: usize) -> Result<()> {
        let pass = &self.input.passes[i];
        let q = pass.queue;
        let p = pass_pos(i);
        // A binary wait makes the guarded resources "undefined, ready once the wait is done".
        for (wi, w) in pass.waits.iter().enumerate() {
            for &r in &w.guards {
                let cells = self.input.resources[r].kind.cells();
                let rec = Rec {
                    queue: q,
                    at: At::Node(p),
                    stages: vk::PipelineStageFlags2::NONE,
                    access: vk::AccessFlags2::NONE,
                    binary_wait: Some((i, wi)),
                };
                self.states[r].update(0..cells, |_| WState {
                    write: Some(rec),
                    ..WState::default()
                });
            }
        }
        let mut node = Node {
            kind: NodeKind::Pass(i),
            barrier: BarrierCmd::default(),
            deps: Vec::new(),
        };
        // Fold the pass's uses per resource, so overlapping reads are handled once. Most
        // passes name each resource once and skip the fold.
        let uses = &pass.uses;
        let repeated = uses
            .iter()
            .enumerate()
            .any(|(k, u)| uses[..k].iter().any(|v| v.resource == u.resource));
        let folded: SmallVec<[(usize, std::ops::Range<u64>, SegUse); 4]> = if !repeated {
            uses.iter()
                .flat_map(|u| {
                    cell_ranges(&self.input.resources[u.resource].kind, u.range)
                        .into_iter()
                        .map(move |c| {
                            (
                                u.resource,
                                c,
                                SegUse {
                                    access: u.access,
                                    discard: u.discard,
                                },
                            )
                        })
                })
                .collect()
        } else {
            let mut by_resource: BTreeMap<usize, RangeMap<Option<SegUse>>> = BTreeMap::new();
            for u in uses {
                let kind = &self.input.resources[u.resource].kind;
                let m = by_resource
                    .entry(u.resource)
                    .or_insert_with(|| RangeMap::new(kind.cells(), None));
                for cells in cell_ranges(kind, u.range) {
                    m.update(cells, |old| {
                        Some(match old {
                            None => SegUse {
                                access: u.access,
                                discard: u.discard,
                            },
                            Some(o) => SegUse {
                                access: Access {
                                    stages: o.access.stages | u.access.stages,
                                    access: o.access.access | u.access.access,
                                    ..o.access
                                },
                                discard: o.discard && u.discard,
                            },
                        })
                    });
                }
            }
            by_resource
                .into_iter()
                .flat_map(|(r, m)| {
                    m.iter()
                        .filter_map(|(c, u)| u.map(|u| (r, c.clone(), u)))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        for (r, cells, u) in folded {
            // Taken out so each segment can be changed in place while `self` plans.
            let mut map = std::mem::take(&mut self.states[r]);
            let res = map.try_update(cells, |c, st| {
                self.access_segment(i, r, c, st, u, &mut node)
            });
            self.states[r] = map;
            res?;
        }
        // Passes arrive in program order, so they always go last.
        self.nodes[q].push((p, node));
        Ok(())
    }

    /// Synchronizes one use of one segment with what came before, and moves the segment's
    /// state past it.
    fn access_segment(
        &mut self,
        pass: usize,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &mut WState,
        u: SegUse,
        node: &mut Node,
    ) -> Result<()> {
        let res = &self.input.resources[r];
        let q = self.input.passes[pass].queue;
        let family = self.input.queues[q].family;
        let p = pass_pos(pass);
        let a = u.access;
        let is_image = matches!(res.kind, ResourceKind::Image { .. });

        let contents_needed = st.defined && !u.discard;
        let new_layout = if is_image {
            a.layout
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let old_layout = if !is_image {
            vk::ImageLayout::UNDEFINED
        } else if contents_needed || st.layout == new_layout {
            st.layout
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let layout_change = is_image && old_layout != new_layout;
        // The host is no queue family: queue family ownership governs "read accesses performed
        // by the second queue family", and mapped memory is read and written by the host after
        // a memory dependency whose second scope is HOST. A host access therefore takes no
        // ownership, unless an image must first change layout on this queue.
        let host_only = is_host_only(&a);
        let transfer_from = match st.owner {
            Some(o)
                if !res.concurrent
                    && contents_needed
                    && o != family
                    && (!host_only || layout_change) =>
            {
                Some(o)
            }
            _ => None,
        };
        let write_like = a.is_write() || layout_change || transfer_from.is_some();

        // The prior accesses this one must be ordered after.
        let priors: SmallVec<[Rec; 2]> = if write_like {
            write_priors(st)
        } else {
            match st.write {
                Some(w) if !covered(&st.visible, q, a.stages, a.access) => smallvec::smallvec![w],
                _ => SmallVec::new(),
            }
        };

        // Present has no stages of its own: chain from whatever came before on this queue.
        let same_queue_stages = priors
            .iter()
            .filter(|x| x.queue == q)
            .fold(vk::PipelineStageFlags2::NONE, |s, x| {
                s | self.rec_stages(x, a.stages)
            });
        let eff = if !a.stages.is_empty() {
            a.stages
        } else if !same_queue_stages.is_empty() {
            same_queue_stages
        } else {
            // Nothing on this queue to chain from (e.g. presenting straight after another
            // queue's work): the only work here is the barrier itself, so waiting for
            // everything costs nothing.
            vk::PipelineStageFlags2::ALL_COMMANDS
        };
        self.pass_stages[pass] |= eff;

        let mut scopes = Scopes {
            src_stages: vk::PipelineStageFlags2::NONE,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: eff,
            dst_access: a.access,
            families: None,
        };

        if let Some(from) = transfer_from {
            // Ownership transfer: release on the queue of the most recent access, acquire here.
            let (rq, rpos) = self.add_release(
                r,
                cells.clone(),
                st,
                from,
                family,
                old_layout,
                new_layout,
                pass,
            )?;
            // Without VK_KHR_maintenance8's USE_ALL_STAGES dependency flag (which the executor
            // does not rely on), a release's second scope and an acquire's first scope do not
            // apply: only an ALL_COMMANDS semaphore signal orders the release before the
            // signal, and only an ALL_COMMANDS wait orders the acquire after the wait. The
            // barriers' own stage masks still chain, for implementations that read them.
            node.deps.push(Dep {
                queue: rq,
                at: At::Node(rpos),
                wait_stages: vk::PipelineStageFlags2::ALL_COMMANDS,
                src_stages: vk::PipelineStageFlags2::ALL_COMMANDS,
            });
            scopes.src_stages = eff;
            scopes.families = Some((from, family));
        } else {
            let caps = self.input.queues[q].caps;
            // The stages of this queue that semaphore waits guard, and that a barrier after
            // them chains from.
            let mut chain = vk::PipelineStageFlags2::NONE;
            for x in &priors {
                let stages = self.rec_stages(x, eff);
                if x.queue == q {
                    scopes.src_stages |= stages;
                    scopes.src_access |= crate::access::write_bits_of(x.access);
                } else {
                    self.note_cross_queue_binary_wait(x);
                    // HOST is no stage a semaphore wait can guard: the host access comes after
                    // a barrier (HOST in its second scope) that chains from the wait, and the
                    // wait guards the awaited work's stages as far as this queue has them.
                    let device = eff & !vk::PipelineStageFlags2::HOST;
                    let wait_stages = if device.is_empty() {
                        on_queue(stages, caps)
                    } else {
                        device
                    };
                    if x.at != At::Value(0) {
                        node.deps.push(Dep {
                            queue: x.queue,
                            at: x.at,
                            wait_stages,
                            src_stages: stages,
                        });
                    }
                    chain |= wait_stages;
                }
            }
            let cross = !chain.is_empty();
            let same_queue = priors.iter().any(|x| x.queue == q);
            // A host access needs the barrier even after a semaphore: the semaphore makes
            // writes available in the device domain only; a HOST second scope and access make
            // them available to the host.
            let host_after_cross = cross && eff.contains(vk::PipelineStageFlags2::HOST);
            if !same_queue && !layout_change && !host_after_cross {
                // Semaphores (or nothing at all) order it; no barrier.
                apply_access(
                    st,
                    q,
                    p,
                    a,
                    eff,
                    write_like,
                    u.discard,
                    res.concurrent,
                    family,
                    new_layout,
                );
                return Ok(());
            }
            if cross {
                // Chain the transition (or the host barrier) from the semaphore wait's stages.
                scopes.src_stages |= chain;
            }
        }
        push_barrier(
            &mut node.barrier,
            r,
            &res.kind,
            cells,
            scopes,
            old_layout,
            new_layout,
        );
        apply_access(
            st,
            q,
            p,
            a,
            eff,
            write_like,
            u.discard,
            res.concurrent,
            family,
            new_layout,
        );
        Ok(())
    }

    /// The stages to chain from for a prior access. A binary wait's stages are those of its
    /// first use, so they are resolved (and grown) here.
    fn rec_stages(
        &mut self,
        x: &Rec,
        use_stages: vk::PipelineStageFlags2,
    ) -> vk::PipelineStageFlags2 {
        match x.binary_wait {
            Some(key) if !use_stages.is_empty() => {
                // The wait is on the binary wait's queue, which may be another than the use's.
                let s = on_queue(use_stages, self.input.queues[x.queue].caps);
                *self.binary_wait_stages.entry(key).or_default() |= s;
                s
            }
            _ => x.stages,
        }
    }

    /// A binary wait whose guarded resource is first used on another queue: the timeline
    /// signal after it must chain from it, so it stalls everything after it.
    fn note_cross_queue_binary_wait(&mut self, x: &Rec) {
        if let Some(key) = x.binary_wait {
            *self.binary_wait_stages.entry(key).or_default() |=
                vk::PipelineStageFlags2::ALL_COMMANDS;
        }
    }

    /// Adds (or extends) the release node for an ownership transfer of `cells` of resource
    /// `r`, on the queue of its most recent access. Returns (queue, position).
    #[allow(clippy::too_many_arguments)]
    fn add_release(
        &mut self,
        r: usize,
        cells: std::ops::Range<u64>,
        st: &WState,
        from: u32,
        to: u32,
        old_layout: vk::ImageLayout,
        new_layout: vk::ImageLayout,
        pass: usize,
    ) -> Result<(usize, Pos)> {
        let recs: Vec<Rec> = st.write.iter().chain(st.reads.iter()).copied().collect();
        // The latest access by the owning family (a host access keeps the owner, and may be
        // later, on another family's queue).
        let latest = recs
            .iter()
            .filter(|x| self.input.queues[x.queue].family == from)
            .max_by_key(|x| x.at)
            .copied();
        let (rq, pos) = match latest {
            Some(Rec {
                queue,
                at: At::Node(p),
                ..
            }) => (queue, p + 1),
            Some(Rec {
                queue,
                at: At::Value(_),
                ..
            }) => (queue, PRE_GRAPH_RELEASE),
            _ => {
                // The app handed it over with an owner but no queue: release on any queue
                // of that family.
                let q = self
                    .input
                    .queues
                    .iter()
                    .position(|qd| qd.family == from)
                    .ok_or_else(|| Error::NoQueueForRelease {
                        resource: self.input.resources[r].name.clone(),
                        family: from,
                        pass: self.input.passes[pass].name.clone(),
                    })?;
                (q, PRE_GRAPH_RELEASE)
            }
        };
        // The release is a write on `rq`: ordered after the reads since the last write, or
        // after the write itself.
        let priors = write_priors(st);
        let mut src_stages = vk::PipelineStageFlags2::NONE;
        let mut src_access = vk::AccessFlags2::NONE;
        let mut deps = Vec::new();
        for x in &priors {
            if x.queue == rq {
                src_stages |= x.stages;
                src_access |= crate::access::write_bits_of(x.access);
            } else if x.at != At::Value(0) {
                deps.push(*x);
            }
        }
        if src_stages.is_empty() {
            // Only other queues (or the app) touched it: chain from the semaphore wait, at
            // the awaited stages that this queue also has (or all commands).
            let mut other = deps
                .iter()
                .fold(vk::PipelineStageFlags2::NONE, |s, x| s | x.stages);
            if other.is_empty() {
                other = recs
                    .iter()
                    .fold(vk::PipelineStageFlags2::NONE, |s, x| s | x.stages);
            }
            src_stages = on_queue(other, self.input.queues[rq].caps);
        }
        let scopes = Scopes {
            src_stages,
            src_access,
            dst_stages: src_stages,
            dst_access: vk::AccessFlags2::NONE,
            families: Some((from, to)),
        };
        let kind = self.input.resources[r].kind;
        let qn = &mut self.nodes[rq];
        let at = qn.partition_point(|(p, _)| *p < pos);
        if qn.get(at).is_none_or(|(p, _)| *p != pos) {
            qn.insert(
                at,
                (
                    pos,
                    Node {
                        kind: NodeKind::Release,
                        barrier: BarrierCmd::default(),
                        deps: Vec::new(),
                    },
                ),
            );
        }
        let node = &mut qn[at].1;
        for x in deps {
            node.deps.push(Dep {
                queue: x.queue,
                at: x.at,
                wait_stages: src_stages,
                src_stages: x.stages,
            });
        }
        push_barrier(
            &mut node.barrier,
            r,
            &kind,
            cells,
            scopes,
            old_layout,
            new_layout,
        );
        Ok((rq, pos))
    }

    // -----------------------------------------------------------------------------------------
    // Phase 2: batches
    // -----------------------------------------------------------------------------------------

    fn batch_all(&mut self) -> Vec<QueuePlan> {
        let nodes = std::mem::take(&mut self.nodes);
        // A: where each queue's batches must start, and their waits. A node whose dependency
        // is not covered by an earlier wait starts a batch (wait as late as possible).
        let protos: Vec<Vec<Proto>> = nodes.iter().map(|q| self.place_waits(q)).collect();
        // B: the nodes other queues actually wait on (after merging to the highest value).
        let index_of = |queue: usize, pos: Pos| nodes[queue].partition_point(|(p, _)| *p < pos);
        let mut signal_src: Vec<Vec<Option<vk::PipelineStageFlags2>>> =
            nodes.iter().map(|q| vec![None; q.len()]).collect();
        for w in protos.iter().flatten().flat_map(|p| &p.waits) {
            if let ProtoTarget::Node(queue, pos) = w.target {
                let s = &mut signal_src[queue][index_of(queue, pos)];
                *s = Some(s.unwrap_or_default() | w.src_stages);
            }
        }
        let node_index: Vec<Vec<Pos>> = nodes
            .iter()
            .map(|q| q.iter().map(|(p, _)| *p).collect())
            .collect();
        // C: end a batch after each awaited node and each binary signal (signal as early as
        // possible), then resolve waits to batch indices.
        let mut batch_of: Vec<Vec<usize>> =
            nodes.iter().map(|q| vec![usize::MAX; q.len()]).collect();
        let mut plans: Vec<QueuePlan> = Vec::with_capacity(nodes.len());
        for (q, (qnodes, qprotos)) in nodes.into_iter().zip(protos).enumerate() {
            let mut batches: Vec<Batch> = Vec::new();
            let mut by_index: Vec<Option<Node>> =
                qnodes.into_iter().map(|(_, n)| Some(n)).collect();
            for proto in qprotos {
                let mut cur = Batch {
                    waits: proto
                        .waits
                        .iter()
                        .map(|w| Wait {
                            target: WaitTarget::Binary(vk::Semaphore::null()),
                            stages: w.stages,
                        })
                        .collect(),
                    ..Batch::default()
                };
                // Placeholders: targets are resolved below once every queue is batched.
                let first = batches.len();
                let mut pending_waits = Some(proto.waits);
                for ni in proto.nodes {
                    let node = by_index[ni].take().expect("node placed once");
                    let mut ends = false;
                    match node.kind {
                        NodeKind::Pass(i) => {
                            if !node.barrier.is_empty() {
                                cur.commands.push(Command::Barrier(node.barrier));
                            }
                            cur.commands.push(Command::Pass(i));
                            for sig in &self.input.passes[i].signals {
                                let stages = sig.stages.unwrap_or(self.pass_stages[i]);
                                let stages = if stages.is_empty() {
                                    vk::PipelineStageFlags2::ALL_COMMANDS
                                } else {
                                    stages
                                };
                                cur.binary_signals.push((sig.semaphore, stages));
                                ends = true;
                            }
                        }
                        NodeKind::Release => cur.commands.push(Command::Barrier(node.barrier)),
                    }
                    if let Some(stages) = signal_src[q][ni] {
                        cur.signal = Some(cur.signal.unwrap_or_default() | stages);
                        batch_of[q][ni] = batches.len();
                        ends = true;
                    }
                    if ends {
                        batches.push(std::mem::take(&mut cur));
                    }
                }
                if !cur.commands.is_empty() || !cur.waits.is_empty() {
                    batches.push(cur);
                }
                // Keep the proto's waits beside its first batch for resolution.
                if let Some(w) = pending_waits.take() {
                    if first < batches.len() {
                        self.proto_waits.push((q, first, w));
                    }
                }
            }
            // The last batch signals for the host, later graphs and resource lifetimes.
            if let Some(last) = batches.last_mut() {
                last.signal = Some(vk::PipelineStageFlags2::ALL_COMMANDS);
            }
            plans.push(QueuePlan { batches });
        }
        for (q, b, waits) in std::mem::take(&mut self.proto_waits) {
            for (wi, w) in waits.into_iter().enumerate() {
                plans[q].batches[b].waits[wi].target = match w.target {
                    ProtoTarget::Node(queue, pos) => {
                        let ni = node_index[queue].partition_point(|p| *p < pos);
                        WaitTarget::Batch {
                            queue,
                            batch: batch_of[queue][ni],
                        }
                    }
                    ProtoTarget::Value(queue, value) => WaitTarget::Value { queue, value },
                    ProtoTarget::Binary(s) => WaitTarget::Binary(s),
                };
            }
        }
        plans
    }

    /// Step A of batching for one queue: batch starts and their waits.
    fn place_waits(&self, nodes: &[(Pos, Node)]) -> Vec<Proto> {
        let mut protos: Vec<Proto> = Vec::new();
        // Per other queue: the highest point waited on so far, and where (proto, wait).
        let mut waited: Vec<Option<(At, usize, usize)>> = vec![None; self.input.queues.len()];
        for (ni, (_, node)) in nodes.iter().enumerate() {
            let binary: Vec<ProtoWait> = match node.kind {
                NodeKind::Pass(i) => self.input.passes[i]
                    .waits
                    .iter()
                    .enumerate()
                    .map(|(wi, w)| ProtoWait {
                        target: ProtoTarget::Binary(w.semaphore),
                        stages: w
                            .stages
                            .or_else(|| self.binary_wait_stages.get(&(i, wi)).copied())
                            .unwrap_or(vk::PipelineStageFlags2::ALL_COMMANDS),
                        src_stages: vk::PipelineStageFlags2::NONE,
                    })
                    .collect(),
                NodeKind::Release => Vec::new(),
            };
            let uncovered = |d: &Dep| waited[d.queue].is_none_or(|(at, _, _)| at < d.at);
            let needs_batch =
                protos.is_empty() || !binary.is_empty() || node.deps.iter().any(uncovered);
            if needs_batch && protos.last().is_none_or(|p| !p.nodes.is_empty()) {
                protos.push(Proto::default());
            }
            let pi = protos.len() - 1;
            protos[pi].waits.extend(binary);
            for d in &node.deps {
                match waited[d.queue] {
                    Some((at, wp, wi)) if at >= d.at => {
                        // Already waited (in this batch or an earlier one): widen it.
                        let w = &mut protos[wp].waits[wi];
                        w.stages |= d.wait_stages;
                        w.src_stages |= d.src_stages;
                    }
                    _ => {
                        let target = match d.at {
                            At::Value(v) => ProtoTarget::Value(d.queue, v),
                            At::Node(p) => ProtoTarget::Node(d.queue, p),
                        };
                        // One wait per other queue per batch, on the highest value.
                        let proto = &mut protos[pi];
                        let wi = match proto
                            .waits
                            .iter()
                            .position(|w| w.target.queue() == Some(d.queue))
                        {
                            Some(wi) => {
                                let w = &mut proto.waits[wi];
                                w.target = target;
                                w.stages |= d.wait_stages;
                                w.src_stages |= d.src_stages;
                                wi
                            }
                            None => {
                                proto.waits.push(ProtoWait {
                                    target,
                                    stages: d.wait_stages,
                                    src_stages: d.src_stages,
                                });
                                proto.waits.len() - 1
                            }
                        };
                        waited[d.queue] = Some((d.at, pi, wi));
                    }
                }
            }
            protos[pi].nodes.push(ni);
        }
        protos
    }

    fn final_states(&self) -> FinalStates {
        self.states
            .iter()
            .map(|m| {
                m.iter()
                    .map(|(c, s)| {
                        let rec = |x: &Rec| Recorded {
                            queue: x.queue,
                            value: match x.at {
                                At::Value(v) => Some(v),
                                At::Node(_) => None,
                            },
                            stages: match x.binary_wait {
                                Some(k) => self
                                    .binary_wait_stages
                                    .get(&k)
                                    .copied()
                                    .unwrap_or(vk::PipelineStageFlags2::ALL_COMMANDS),
                                None => x.stages,
                            },
                            access: x.access,
                        };
                        let state = SegmentState {
                            layout: s.layout,
                            defined: s.defined,
                            owner: s.owner,
                            write: s.write.as_ref().map(rec),
                            reads: s.reads.iter().map(rec).collect(),
                        };
                        (c.clone(), state)
                    })
                    .collect()
            })
            .collect()
    }
}

/// What a write (or a transition, or a release) must be ordered after: the reads since the
/// last write, which this graph already ordered after that write, or the write itself. A write
/// left by an earlier graph is named as well, so that each plan is correct on its own terms,
/// without relying on the barriers of a plan it cannot see.
fn write_priors(st: &WState) -> SmallVec<[Rec; 2]> {
    let mut priors = st.reads.clone();
    match st.write {
        Some(w) if priors.is_empty() || matches!(w.at, At::Value(_)) => priors.push(w),
        _ => {}
    }
    priors
}

/// Moves a segment's state past one access.
#[allow(clippy::too_many_arguments)]
fn apply_access(
    st: &mut WState,
    q: usize,
    p: Pos,
    a: Access,
    eff: vk::PipelineStageFlags2,
    write_like: bool,
    discard: bool,
    concurrent: bool,
    family: u32,
    layout: vk::ImageLayout,
) {
    let me = Rec {
        queue: q,
        at: At::Node(p),
        stages: eff,
        access: a.access,
        binary_wait: None,
    };
    let was_defined = st.defined;
    if write_like {
        st.write = Some(Rec {
            access: a.write_bits(),
            ..me
        });
        st.reads.clear();
        st.visible.clear();
        if !a.is_write() {
            // A transition or transfer: a write that this read already sees.
            st.reads.push(me);
            st.visible.push((q, eff, a.access));
        }
    } else {
        match st.reads.iter_mut().find(|x| x.queue == q) {
            Some(x) => {
                x.at = x.at.max(me.at);
                x.stages |= eff;
                x.access |= a.access;
            }
            None => st.reads.push(me),
        }
        // Visibility holds per (stage, access) pair: merging two entries into the union of
        // their stages and of their accesses would claim pairs no barrier made visible. Merge
        // only entries that share their stages or their accesses.
        match st
            .visible
            .iter_mut()
            .find(|v| v.0 == q && (v.1 == eff || v.2 == a.access))
        {
            Some(v) => {
                v.1 |= eff;
                v.2 |= a.access;
            }
            None => st.visible.push((q, eff, a.access)),
        }
    }
    st.layout = layout;
    st.defined = a.is_write() || (was_defined && !discard);
    st.owner = if concurrent {
        None
    } else if is_host_only(&a) {
        st.owner
    } else {
        Some(family)
    };
}

/// Whether only the host performs the access (mapped memory read or written by the app).
fn is_host_only(a: &Access) -> bool {
    a.stages == vk::PipelineStageFlags2::HOST
}

fn covered(
    visible: &[(usize, vk::PipelineStageFlags2, vk::AccessFlags2)],
    q: usize,
    stages: vk::PipelineStageFlags2,
    access: vk::AccessFlags2,
) -> bool {
    visible
        .iter()
        .any(|&(vq, s, a)| vq == q && s.contains(stages) && a.contains(access))
}

/// Adds a barrier for `cells` of resource `r` to `cmd`, merging with an existing one of the
/// same resource, range, layouts and ownership transfer.
fn push_barrier(
    cmd: &mut BarrierCmd,
    r: usize,
    kind: &ResourceKind,
    cells: std::ops::Range<u64>,
    s: Scopes,
    old_layout: vk::ImageLayout,
    new_layout: vk::ImageLayout,
) {
    let merge = |a: &mut Scopes| {
        a.src_stages |= s.src_stages;
        a.src_access |= s.src_access;
        a.dst_stages |= s.dst_stages;
        a.dst_access |= s.dst_access;
    };
    match *kind {
        ResourceKind::Image { layers, .. } => {
            for range in ImageRange::from_cells(cells, layers) {
                match cmd.images.iter_mut().find(|b| {
                    b.resource == r
                        && b.range == range
                        && b.old_layout == old_layout
                        && b.new_layout == new_layout
                        && b.scopes.families == s.families
                }) {
                    Some(b) => merge(&mut b.scopes),
                    None => cmd.images.push(ImageBarrier {
                        resource: r,
                        range,
                        scopes: s,
                        old_layout,
                        new_layout,
                    }),
                }
            }
        }
        ResourceKind::Buffer { .. } => {
            let range = BufferRange {
                offset: cells.start,
                size: cells.end - cells.start,
            };
            // Extend a barrier with equal scopes that ends where this one starts. Never for an
            // ownership transfer: an acquire must name exactly the range of one release, and
            // the releases of neighbouring segments may sit in different places.
            match cmd.buffers.iter_mut().find(|b| {
                s.families.is_none()
                    && b.resource == r
                    && b.scopes == s
                    && b.range.offset + b.range.size == range.offset
            }) {
                Some(b) => b.range.size += range.size,
                None => match cmd.buffers.iter_mut().find(|b| {
                    b.resource == r && b.range == range && b.scopes.families == s.families
                }) {
                    Some(b) => merge(&mut b.scopes),
                    None => cmd.buffers.push(BufferBarrier {
                        resource: r,
                        range,
                        scopes: s,
                    }),
                },
            }
        }
    }
}
