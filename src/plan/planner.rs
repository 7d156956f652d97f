//! The pure planner: declarations in, batches, barriers and semaphores out.
//!
//! It runs in three phases.
//!
//! 1. **Dependencies**, in program order. Each pass's uses are folded per segment of tracked
//!    state. A conflict with an earlier access on the same queue becomes a barrier in the
//!    pass's one pre-barrier command; one on another queue becomes a dependency that phase 2
//!    turns into a semaphore wait. An ownership transfer inserts a release node on the queue
//!    of the most recent access, right after it, and an acquire barrier before the pass. In
//!    program order, a pass's command may join an earlier one of its queue over passes that
//!    do not need it ([`Planner::hoist_barrier`], in [`barrier`]).
//! 2. **Batches**, per queue. A node that needs a wait not yet covered starts a batch (wait
//!    as late as possible; passes with no uses before it may share it); a node another queue
//!    waits on, or that signals a binary semaphore, ends one (signal as early as possible).
//! 3. **Redundancy**, on the batched plan. Phases 1 and 2 decide each dependency on its own;
//!    a timeline wait that other waits already imply through other queues, and a barrier entry
//!    whose prior accesses the semaphore waits or other barriers already order before its pass,
//!    are dropped. Layout transitions and ownership transfers always stay. Batches that only
//!    dropped waits kept apart are then joined ([`batches::coalesce_batches`]).
//!
//! Under a reordering [`Schedule`], the schedule's [`Scheduler`] (the `schedule` feature's
//! leaf) then groups each queue's batches by the levels it gave and joins barrier commands
//! within them. The schedule only hands the planner orders; it does not call back into it.
//!
//! Node positions interleave passes and releases: the `k`-th pass taken (in program order, or
//! in a [`Schedule`]'s order) is at `2k + 2`, a release after it at `2k + 3`, and a release of
//! state left by an earlier graph at `1`.
//!
//! This file holds the planner's working types and its entry points;
//! [`validate`](mod@validate) refuses impossible input and narrows the rest to the stages its
//! queues run, [`dependencies`] is phase 1 (with [`release`], the release half of an ownership
//! transfer), [`batches`] phase 2 (with [`device_stages`], the only masks a semaphore takes),
//! [`prune`] phase 3 (with [`reach`], what a plan's semaphores order),
//! [`segment`] moves one segment's state past an access and [`barrier`] merges barriers into
//! a command.

use super::order::{Scheduled, Scheduler};
use super::*;
use crate::error::{Error, Result};
use crate::range::{CellGrid, RangeMap};
use smallvec::SmallVec;
use std::collections::HashMap;

mod barrier;
mod batches;
mod dependencies;
mod device_stages;
mod prune;
mod reach;
mod release;
mod seg_use;
mod segment;
mod unordered;
mod validate;

use barrier::SpareBarriers;
use barrier::{push_barrier, EntryRef};
use batches::ProtoWait;
use device_stages::DeviceStages;
use prune::{CommandWhy, Why};
use segment::{apply_access, covered, is_host_only, write_priors, write_priors_into};
use transient::{Aliasing, Place};
use validate::{narrow_input, on_queue, validate};

type Pos = u64;

const PRE_GRAPH_RELEASE: Pos = 1;

fn pass_pos(k: usize) -> Pos {
    2 * k as u64 + 2
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
    visible: SmallVec<[Visible<usize>; 2]>,
    /// The unordered writes since the last ordinary write ([`unordered`]).
    group: Option<Box<unordered::Group>>,
}

/// The dependencies a semaphore wait orders: usually one or two.
type Serves = SmallVec<[Dep; 2]>;

/// A dependency on work on another queue: becomes a semaphore wait.
#[derive(Clone, Copy, Debug)]
struct Dep {
    queue: usize,
    at: At,
    /// Stages of the waiting node that need it (the wait's stage mask).
    wait_stages: DeviceStages,
    /// Stages of the awaited work (the signal's stage mask).
    src_stages: DeviceStages,
}

#[derive(Debug)]
enum NodeKind {
    Pass(usize),
    Release,
}

#[derive(Debug)]
struct Node {
    kind: NodeKind,
    barrier: BarrierCmd,
    deps: Vec<Dep>,
    /// Why each entry of `barrier` is there: a range of the planner's `reasons` (kept out of
    /// the node, which is moved around, and in one list reserved once per plan).
    whys: std::ops::Range<usize>,
}

struct Planner<'a> {
    input: &'a PlanInput,
    /// The transients each transient's first use must be ordered after.
    aliasing: &'a Aliasing,
    states: Vec<RangeMap<WState>>,
    /// Per queue, its nodes sorted by position.
    nodes: Vec<Vec<(Pos, Node)>>,
    /// Resolved stage masks of binary waits, by (pass, wait index).
    binary_wait_stages: HashMap<(usize, usize), vk::PipelineStageFlags2, crate::fx::FxBuildHasher>,
    /// Effective stages per pass (what its uses ran at), for binary signal masks.
    pass_stages: Vec<vk::PipelineStageFlags2>,
    /// Waits of each first batch of a proto, resolved after all queues are batched.
    proto_waits: Vec<(usize, usize, Vec<ProtoWait>)>,
    /// Barrier lists of the last plan, to fill before allocating new ones.
    spare: SpareBarriers,
    /// Whether a pass's barrier command may join an earlier one ([`Planner::hoist_barrier`]).
    hoist: bool,
    /// Per pass (by index), its node position: where it comes in the order taken.
    pos: Vec<Pos>,
    /// The passes in the order taken: the `k`-th, at node position `2k + 2`, is `order[k]`
    /// (not pass `k` once a pass was culled).
    order: &'a [usize],
    /// Per pass (by index), whether its render pass ends in a transition: empty if none does.
    render_pass_ends: Vec<bool>,
    /// Why each barrier entry is there: each node's reasons are one consecutive range.
    reasons: Vec<Why>,
    /// The prior accesses of the reasons, each reason's one consecutive range.
    reason_priors: Vec<Rec>,
    /// The list of a use's prior accesses, lent to each use in turn ([`seg_use::SegAccess`]).
    use_priors: Vec<Rec>,
    /// The reasons of each barrier command once batched.
    whys: Vec<CommandWhy>,
    /// Per queue: its nodes' positions, and the batch each went into.
    batched: Vec<(Vec<Pos>, Vec<usize>)>,
    /// Per timeline wait (queue, batch, index): the dependencies it orders.
    wait_serves: Vec<(usize, usize, usize, Serves)>,
}

/// Plans `input`: see the module docs for the algorithm and [`Plan`] for the result.
///
/// Every access is narrowed to the stages its queue's family supports
/// ([`crate::access::narrow_stages`]); the plan keeps the narrowed declarations.
///
/// Errors: [`Error::InvalidInput`] for an index out of range, a present of a buffer, a use
/// of a resource after a pass presented it or declared a host access to it (both end its use
/// in the graph), or a host access of an image that must change layout on a family that does
/// not own it (the transfer cannot name the host's stage), [`Error::RangeOutOfBounds`], [`Error::ConflictingUses`],
/// [`Error::QueueCapability`] (also for an access none of whose stages the queue supports),
/// [`Error::UsageNotAllowed`],
/// [`Error::NoQueueForRelease`] when an ownership transfer needs a queue of a family the
/// graph has none of, and [`Error::InvalidInput`] for a transient that cannot be planned (see
/// [`ResourceDecl::transient`]).
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
pub fn plan_owned(input: PlanInput) -> Result<Plan> {
    plan_reusing(input, SparePlan::default())
}

/// An earlier plan's vectors for a new plan to refill before allocating: its batches' barrier
/// lists and its final states. A plan made with them is the same as one made without.
#[derive(Default)]
pub(crate) struct SparePlan {
    pub(crate) queues: Vec<QueuePlan>,
    pub(crate) final_states: FinalStates,
}

impl SparePlan {
    /// The vectors of `plan`, which is given up.
    pub(crate) fn of(plan: Plan) -> (PlanInput, Self) {
        let Plan {
            input,
            queues,
            final_states,
            ..
        } = plan;
        (
            input,
            SparePlan {
                queues,
                final_states,
            },
        )
    }
}

/// [`plan_owned`], filling the vectors of `spare` before allocating new ones. The plan is the
/// same as without them.
pub(crate) fn plan_reusing(input: PlanInput, spare: SparePlan) -> Result<Plan> {
    let place = crate::transient_placement();
    plan_scheduled_reusing(input, spare, Schedule::PROGRAM_ORDER, place)
}

/// [`plan`], taking the passes in the order `schedule` gives (see [`super::schedule`]). The
/// plan has the results of program order: every pair of conflicting passes keeps its order,
/// and a culled pass writes nothing that anything reads. [`Plan::order`] is the order taken.
///
/// Errors: those of [`plan`]. See the [schedule module's example](super::schedule).
pub fn plan_scheduled(input: &PlanInput, schedule: Schedule) -> Result<Plan> {
    let place = crate::transient_placement();
    plan_scheduled_reusing(input.clone(), Default::default(), schedule, place)
}

/// [`plan_reusing`], taking the passes in the order `schedule` gives (see [`super::schedule`]).
///
/// The schedule gives the orders first ([`super::order::orders`]); the planner then plans
/// each. With [`Schedule::fallback`], a reordered plan is kept only when it is better than the
/// program-order plan of the same passes (fewer barrier commands, or as many and fewer
/// batches or waits).
///
/// So one call runs the planner's phases ([`plan_parts`]) up to four times: once per order
/// (two with the fallback, whose choice compares finished plans), and for each a second time
/// when transients share memory, because placement reads the first plan's batches (which
/// transients are ordered) and the aliasing dependencies it adds change barriers and waits.
///
/// `place` places the transients ([`crate::transient_placement`]) and checks the plan's
/// placements; without one, a transient is refused.
pub(crate) fn plan_scheduled_reusing(
    mut input: PlanInput,
    spare: SparePlan,
    schedule: Schedule,
    place: Option<&dyn Place>,
) -> Result<Plan> {
    validate(&input)?;
    transient::validate(&input, place)?;
    narrow_input(&mut input);
    let (scheduled, fallback) = super::order::orders(&input, schedule)?;
    let reorders = scheduled.reorders();
    let mut chosen = (
        plan_in_scheduled_order(&input, scheduled, spare, place)?,
        reorders,
    );
    if let Some(in_order) = fallback {
        let other = plan_in_scheduled_order(&input, in_order, SparePlan::default(), place)?;
        let (kept, reordered) = (figures(&other.0), figures(&chosen.0 .0));
        if kept <= reordered {
            log::debug!(
                "reordering saves nothing ({reordered:?} barrier commands, batches, waits): \
                 kept program order ({kept:?})"
            );
            chosen = (other, false);
        }
    }
    let ((queues, final_states, transients, order), reordered) = chosen;
    debug_assert!(
        device_stages::no_host_on_semaphores(&queues),
        "a semaphore's stage mask names HOST"
    );
    let plan = Plan {
        input,
        queues,
        final_states,
        transients,
        order,
        schedule,
        reordered,
    };
    if let Some(place) = place {
        place.check(&plan)?;
    }
    Ok(plan)
}

/// (barrier commands, batches, waits) of a plan's queues, compared in that order: fewer
/// barrier commands is what reordering is for, so a reordered plan with fewer of them is kept
/// even if it had more batches or waits (regrouping joins batches and drops covered waits, so
/// it rarely has).
fn figures(queues: &[QueuePlan]) -> (usize, usize, usize) {
    let batches = || queues.iter().flat_map(|q| &q.batches);
    (
        batches()
            .flat_map(|b| &b.commands)
            .filter(|c| matches!(c, Command::Barrier(_)))
            .count(),
        batches().count(),
        batches().map(|b| b.waits.len()).sum(),
    )
}

/// A plan's parts for a validated, narrowed input, taking the passes as `scheduled` says.
type PlanParts = (Vec<QueuePlan>, FinalStates, TransientPlan, Vec<usize>);

/// `place` places the transients (none: `input` has none, validation made sure).
fn plan_in_scheduled_order(
    input: &PlanInput,
    scheduled: Scheduled,
    spare: SparePlan,
    place: Option<&dyn Place>,
) -> Result<PlanParts> {
    // Regrouping a reordered plan moves barriers and drops waits by its own rules, which
    // assume every dependency is still emitted: redundant entries are pruned in program order.
    // Pruning does not know aliasing dependencies either: a plan with them keeps every entry.
    let prune = !scheduled.reorders();
    let no_aliasing = Aliasing::default();
    let SparePlan {
        queues: spare_queues,
        final_states: spare_finals,
    } = spare;
    let spare = SpareBarriers::from_queues(spare_queues);
    // Joining barrier commands is for program order without aliasing (see `hoist`).
    let hoist = prune;
    let parts = plan_parts(
        input,
        &scheduled.order,
        spare,
        spare_finals,
        &no_aliasing,
        prune,
        hoist,
    )?;
    let Placed {
        parts: (mut queues, final_states),
        transients,
        aliased,
    } = place_transients(input, &scheduled.order, parts, place)?;
    // Regrouping moves barrier commands by the passes' own uses; it does not know aliasing
    // dependencies, so a plan with them keeps its barriers where the planner put them.
    if let (Some(level), false) = (&scheduled.level, aliased) {
        Schedule::regroup(input, level, &mut queues);
    }
    let mut transients = transients;
    if let (Some(place), true) = (place, transient::any(input)) {
        place.sites(&mut transients, input, &queues);
    }
    Ok((queues, final_states, transients, scheduled.order))
}

/// A plan's queues and final states once its transients are placed.
struct Placed {
    parts: (Vec<QueuePlan>, FinalStates),
    transients: TransientPlan,
    /// Whether the plan was made again with aliasing dependencies.
    aliased: bool,
}

/// Places the transients from the plan's order and, where one takes another's memory, plans
/// again with each one's first use ordered after the transients whose memory it takes.
fn place_transients(
    input: &PlanInput,
    order: &[usize],
    (queues, final_states): (Vec<QueuePlan>, FinalStates),
    place: Option<&dyn Place>,
) -> Result<Placed> {
    let (transients, aliasing) = match place.filter(|_| transient::any(input)) {
        Some(place) => place.place(input, &queues),
        None => Default::default(),
    };
    let aliased = aliasing.after.iter().any(|a| !a.is_empty());
    let parts = if aliased {
        let spare = SpareBarriers::from_queues(queues);
        plan_parts(input, order, spare, final_states, &aliasing, false, false)?
    } else {
        (queues, final_states)
    };
    Ok(Placed {
        parts,
        transients,
        aliased,
    })
}

/// Per resource, the state of each segment after the plan ([`Plan::final_states`]).
pub(crate) type FinalStates = Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>>;

/// Plans a validated input whose stages fit its queues, taking the passes in `order`, with
/// transients ordered as `aliasing` says. The final states refill `finals`.
fn plan_parts(
    input: &PlanInput,
    order: &[usize],
    spare: SpareBarriers,
    finals: FinalStates,
    aliasing: &Aliasing,
    prune: bool,
    hoist: bool,
) -> Result<(Vec<QueuePlan>, FinalStates)> {
    let uses = input.passes.iter().map(|p| p.uses.len()).sum::<usize>();
    let mut pos = vec![0; input.passes.len()];
    for (k, &i) in order.iter().enumerate() {
        pos[i] = pass_pos(k);
    }
    let mut p = Planner {
        input,
        aliasing,
        states: input
            .resources
            .iter()
            .map(|r| {
                let cells = r.kind.cells();
                // Usually one segment over the whole resource: made directly, without a
                // default to overwrite and a copy of the state.
                if let [(range, s)] = r.initial.as_slice() {
                    if *range == (0..cells) {
                        return RangeMap::new(cells, WState::from_recorded(s));
                    }
                }
                let mut m = RangeMap::new(cells, WState::default());
                for (range, s) in &r.initial {
                    let w = WState::from_recorded(s);
                    m.update(range.clone(), |_| w.clone());
                }
                m
            })
            .collect(),
        // Each queue's passes, plus room for a few releases, reserved rather than grown.
        nodes: (0..input.queues.len())
            .map(|q| Vec::with_capacity(input.passes.iter().filter(|p| p.queue == q).count() + 4))
            .collect(),
        binary_wait_stages: HashMap::default(),
        pass_stages: vec![vk::PipelineStageFlags2::NONE; input.passes.len()],
        proto_waits: Vec::new(),
        spare,
        hoist,
        pos,
        order,
        render_pass_ends: dependencies::render_pass_ends(input),
        // Usually at most one entry per use, with one or two priors: reserved, not grown.
        reasons: Vec::with_capacity(uses),
        reason_priors: Vec::with_capacity(2 * uses),
        use_priors: Vec::with_capacity(4),
        whys: Vec::new(),
        batched: Vec::new(),
        wait_serves: Vec::new(),
    };
    // Lent to the passes for the first phase: each use changes one resource's segments in
    // place while it reads the planner (and a transient's first use reads other resources').
    let mut states = std::mem::take(&mut p.states);
    for &i in order {
        p.add_pass(i, &mut states)?;
    }
    p.states = states;
    let mut queues = p.batch_all();
    if prune {
        p.drop_redundant(&mut queues);
        batches::coalesce_batches(&mut queues);
    }
    Ok((queues, p.final_states_into(finals)))
}

impl Planner<'_> {
    /// The segments' states after the last pass, as the plan reports them, refilling `out` (an
    /// earlier plan's final states: their vectors are kept, so a frame like an earlier one
    /// allocates none of them).
    fn final_states_into(&self, mut out: FinalStates) -> FinalStates {
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
        out.truncate(self.states.len());
        for (ri, (m, res)) in self.states.iter().zip(&self.input.resources).enumerate() {
            if ri == out.len() {
                out.push(Vec::new());
            }
            let segs = &mut out[ri];
            if res.transient.is_some() {
                // Its contents end with the execution.
                let fresh = (vk::ImageLayout::UNDEFINED, false, None);
                let none = (None, std::iter::empty(), std::iter::empty());
                set_segment(segs, 0, 0..res.kind.cells(), fresh, none);
                segs.truncate(1);
                continue;
            }
            let mut n = 0;
            for (i, (c, s)) in m.iter().enumerate() {
                let write = s.write.as_ref().map(rec);
                let facts = (s.layout, s.defined, s.owner);
                let records = (write, s.reads.iter().map(rec), carried_visibility(s));
                set_segment(segs, i, c.clone(), facts, records);
                n = i + 1;
            }
            segs.truncate(n);
        }
        out
    }
}

/// Where the segment's last write is visible, as the plan's final state carries it to later
/// graphs. The host's entries stay behind: a later host access is ordered by the wait for its
/// own execution's fence, and the barrier to the host domain belongs to that execution.
fn carried_visibility(s: &WState) -> impl Iterator<Item = Visible<usize>> + '_ {
    (s.visible.iter())
        .filter(|v| !v.stages.intersects(vk::PipelineStageFlags2::HOST))
        .copied()
}

/// Sets segment `i` of `segs` (at most one past its end) to `cells` with `facts` (layout,
/// whether defined, owner) and the given records (the write, the reads, where the write is
/// visible), keeping the vectors of its reads and visibility.
fn set_segment(
    segs: &mut Vec<(std::ops::Range<u64>, SegmentState<usize>)>,
    i: usize,
    cells: std::ops::Range<u64>,
    facts: (vk::ImageLayout, bool, Option<u32>),
    (new_write, new_reads, new_visible): (
        Option<Recorded<usize>>,
        impl Iterator<Item = Recorded<usize>>,
        impl Iterator<Item = Visible<usize>>,
    ),
) {
    debug_assert!(i <= segs.len(), "segments are set in order");
    if i == segs.len() {
        segs.push((0..0, SegmentState::default()));
    }
    // Destructured in full, so that a field added to the state fails to compile here.
    let (
        c,
        SegmentState {
            layout,
            defined,
            owner,
            write,
            reads,
            visible,
        },
    ) = &mut segs[i];
    *c = cells;
    (*layout, *defined, *owner) = facts;
    *write = new_write;
    reads.clear();
    reads.extend(new_reads);
    visible.clear();
    visible.extend(new_visible);
}
