//! The operations and the submission stream of one or more executions, built from the plans.
//!
//! This is a 1:1 reading of what the executor submits: per queue, batches in submission order
//! (one `VkSubmitInfo2` each), each with its semaphore waits, then its commands
//! (`vkCmdPipelineBarrier2` or a pass), then its semaphore signals. The streams of all queues
//! are put in one linear order that respects submission order and every semaphore wait; the
//! happens-before analysis (`check.rs`) walks that order once.
//!
//! This file holds the model's types and the reading of what all executions share (initial
//! state, timeline signals); `segments.rs` cuts the resources into segments, `aliasing.rs` reads
//! each execution's transient memory, `execution.rs` reads one execution's batch graph and
//! order, and `events.rs` emits its events.

use super::flags::{Scope, Universe, OWNERSHIP_STAGE, WRITES};
use super::{Actor, HazardKind, Violation};
use crate::plan::{
    Command, Plan, PlanInput, Recorded, ResourceKind, TimelineValues, Unordered, WaitTarget,
};
use crate::range::{CellGrid, SubRange};
use ash::vk;
use std::collections::BTreeSet;
use std::ops::Range;

mod aliasing;
mod events;
mod execution;
mod segments;

use segments::{segs_of_owned, Bounds, SegsOf};

/// What an operation is.
#[derive(Clone, Debug)]
pub(super) enum OpKind {
    /// Work recorded before the first verified execution (its initial state).
    Initial {
        /// `Some(0)` (or an unknown queue): the app's own, already synchronized work.
        app: bool,
        /// The timeline value that covers it (`0`: none).
        value: u64,
    },
    /// Pass `pass` performing one declared use.
    Access {
        /// Index into the execution's passes.
        pass: usize,
        /// The use promises to overwrite the whole range.
        discard: bool,
        /// No pipeline stage: the presentation engine reads it after the pass's binary signal.
        present: bool,
        /// An attachment of the app's `VkRenderPass`: the `finalLayout` it leaves it in.
        leaves: Option<vk::ImageLayout>,
        /// The render pass ends by moving the attachment to `finalLayout`. That transition
        /// happens-before the second scope of the subpass dependency to `VK_SUBPASS_EXTERNAL`:
        /// later commands at the use's stages (the dependency `crate::render_pass::outgoing`
        /// makes), so later barriers chain from it. A semaphore signal is no command: only an
        /// all-stages signal takes it into its first scope, or one that a barrier after the
        /// render pass chains to.
        ends_in_transition: bool,
        /// A write that needs no ordering against other unordered writes of its kind.
        unordered: Option<Unordered>,
    },
    /// An image layout transition of an image memory barrier.
    Transition {
        old: vk::ImageLayout,
        new: vk::ImageLayout,
    },
    /// A queue family ownership release (source family side).
    Release {
        src: u32,
        dst: u32,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        range: SubRange,
        /// The image aspects it names (empty for a buffer).
        aspect: vk::ImageAspectFlags,
    },
    /// A queue family ownership acquire (destination family side).
    Acquire {
        src: u32,
        dst: u32,
        old: vk::ImageLayout,
        new: vk::ImageLayout,
        range: SubRange,
        /// The image aspects it names (empty for a buffer).
        aspect: vk::ImageAspectFlags,
    },
    /// The presentation engine handing a swapchain image back (a binary wait with guards).
    External,
}

/// One operation on one resource.
#[derive(Clone, Debug)]
pub(super) struct Op {
    pub kind: OpKind,
    pub exec: usize,
    /// The queue it runs on (`None`: outside any verified queue).
    pub queue: Option<usize>,
    pub resource: usize,
    /// Global segment ids it touches.
    pub segs: Vec<usize>,
    /// Atomic stages it runs in (0: no stage, e.g. transitions and, with
    /// `USE_ALL_STAGES`, ownership transfers: those run within their barrier's scopes;
    /// [`OWNERSHIP_STAGE`]: a release or acquire without it).
    pub stages: u64,
    /// Atomic access types it performs.
    pub access: u64,
    /// Whether it writes (layout transitions and ownership transfers count as writes).
    pub write: bool,
    /// The layout an image access expects.
    pub layout: vk::ImageLayout,
    pub actor: Actor,
}

impl Model {
    /// Whether, with `maintenance9` enabled in execution `exec`, the contents of `resource`
    /// owned by family `owner` stay defined when family `family` implicitly acquires them. The
    /// specification (`VkSharingMode`): always for buffers (and linear images, which the
    /// model does not tell apart and so never grants); for optimal images created without
    /// attachment usage, when `family`'s bit is in `owner`'s
    /// `optimalImageTransferToQueueFamilies`.
    pub fn kept_without_transfer(
        &self,
        exec: usize,
        resource: usize,
        owner: u32,
        family: u32,
    ) -> bool {
        let Some(Some(masks)) = self.maintenance9.get(exec) else {
            return false;
        };
        match self.res_kinds[resource] {
            ResourceKind::Buffer { .. } => true,
            ResourceKind::Image { usage, .. } => {
                let attachment = vk::ImageUsageFlags::COLOR_ATTACHMENT
                    | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
                    | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT
                    | vk::ImageUsageFlags::INPUT_ATTACHMENT
                    | vk::ImageUsageFlags::ATTACHMENT_FEEDBACK_LOOP_EXT;
                let mask = masks.iter().find(|(f, _)| *f == owner).map_or(0, |m| m.1);
                !usage.intersects(attachment) && family < 32 && mask >> family & 1 == 1
            }
        }
    }
}

impl Op {
    pub fn is_pass(&self) -> Option<(usize, usize)> {
        match self.kind {
            OpKind::Access { pass, .. } => Some((self.exec, pass)),
            _ => None,
        }
    }
}

/// Whether a barrier entry is an ownership release or acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Plain,
    Release,
    Acquire,
}

/// One image or buffer memory barrier of a `vkCmdPipelineBarrier2`.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub segs: Vec<usize>,
    /// First synchronization scope (atomic stages).
    pub src: u64,
    /// Second synchronization scope (atomic stages).
    pub dst: u64,
    /// First access scope (ignored for an acquire).
    pub src_access: u64,
    /// Second access scope (ignored for a release).
    pub dst_access: u64,
    pub role: Role,
    /// The transition / release / acquire it performs, if any.
    pub op: Option<usize>,
    /// Segments of other transients whose memory the entry's scope holds: it covers all of its
    /// transient, which shares memory with them (`aliasing.rs`).
    pub alias_segs: Vec<usize>,
}

/// One timeline semaphore wait of a batch.
#[derive(Clone, Copy, Debug)]
pub(super) struct TimelineWait {
    pub queue: usize,
    pub value: u64,
    /// `Some(start)`: the waiting execution began with the queue's timeline given values up
    /// to `start >= value`, so only signals at or below `start` (earlier executions, or work
    /// outside the verified sequence) can satisfy the wait.
    pub reached_before: Option<u64>,
    /// The wait's second synchronization scope (atomic stages).
    pub stages: u64,
}

/// One step of the linear order.
#[derive(Clone, Debug)]
pub(super) enum Event {
    /// A batch begins: its semaphore waits.
    Start {
        q: usize,
        exec: usize,
        /// Timeline waits.
        waits: Vec<TimelineWait>,
        /// Guarded binary waits: the external op and the wait's second scope.
        externals: Vec<(usize, u64)>,
    },
    /// One `vkCmdPipelineBarrier2`.
    Barrier { q: usize, entries: Vec<Entry> },
    /// A pass performs one of its uses.
    Op { q: usize, op: usize },
    /// A batch ends: its signals.
    End {
        q: usize,
        exec: usize,
        /// Timeline signal: (value, first scope).
        timeline: Option<(u64, u64)>,
        /// Present ops, each with the first scope of its binary signal.
        presents: Vec<(usize, u64)>,
    },
}

/// A state-tracking segment: a run of cells of one resource that every op and barrier covers
/// whole or not at all.
#[derive(Clone, Debug)]
pub(super) struct Seg {
    pub cells: Range<u64>,
}

/// Initial per-segment state of the first execution.
#[derive(Clone, Debug)]
pub(super) struct InitialCell {
    pub layout: vk::ImageLayout,
    pub defined: bool,
    pub owner: Option<u32>,
}

/// Everything the analysis needs.
pub(super) struct Model {
    pub ops: Vec<Op>,
    pub events: Vec<Event>,
    pub segs: Vec<Seg>,
    pub initial: Vec<InitialCell>,
    /// Where an earlier graph's barriers made an initial write visible: (the write's op, the
    /// queue, stages of the barrier's second scope, accesses), as the first execution's input
    /// states it.
    pub initial_visible: Vec<(usize, usize, u64, u64)>,
    pub universe: Universe,
    pub families: Vec<u32>,
    /// Per execution, per queue: whether its ownership transfers carry
    /// `QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES` (`QueueDecl::transfers_use_all_stages`
    /// of that execution's plan: a graph told of `maintenance8` later records it from then on).
    pub all_stages_transfers: Vec<Vec<bool>>,
    /// Per execution: each queue family's `optimalImageTransferToQueueFamilies` where that
    /// execution's plan says the device has `maintenance9` (`QueueDecl::maintenance9`).
    pub maintenance9: Vec<Option<Vec<(u32, u32)>>>,
    pub queue_names: Vec<String>,
    pub res_names: Vec<String>,
    pub res_kinds: Vec<ResourceKind>,
    pub concurrent: Vec<bool>,
    /// Per resource: whether it is transient (its memory and contents belong to one
    /// execution).
    pub transient: Vec<bool>,
    /// Per resource: its segments.
    pub res_segs: Vec<Vec<usize>>,
    /// (execution, segment of a transient) -> the segments of other transients that share
    /// memory with it in that execution.
    pub aliases: std::collections::BTreeMap<(usize, usize), Vec<usize>>,
    /// Structural problems found while reading the plans.
    pub violations: Vec<Violation>,
}

/// The cells a use or a barrier names: `range` (`None`: all of it) on `aspect` (empty: every
/// aspect). `None` where they do not fit the resource.
fn use_cells(
    kind: &ResourceKind,
    range: Option<SubRange>,
    aspect: vk::ImageAspectFlags,
) -> Option<Vec<Range<u64>>> {
    if let ResourceKind::Image {
        mips,
        layers,
        aspect: all,
        ..
    } = *kind
    {
        let r = match range.unwrap_or(kind.whole()) {
            SubRange::Image(r) => r,
            SubRange::Buffer(_) => return None,
        };
        let fits = r.fits(mips, layers) && all.contains(aspect);
        return fits.then(|| CellGrid::new(layers, all).cells(&r, aspect).to_vec());
    }
    match (kind, range) {
        (_, None) if aspect.is_empty() => Some(std::iter::once(0..kind.cells()).collect()),
        (ResourceKind::Buffer { size, .. }, Some(SubRange::Buffer(b))) => (b.size > 0
            && b.offset.checked_add(b.size).is_some_and(|e| e <= *size))
        .then(|| vec![b.bytes()]),
        _ => None,
    }
}

fn structure(msg: String) -> Violation {
    Violation {
        kind: HazardKind::Structure,
        first: None,
        second: None,
        resource: None,
        range: None,
        missing: msg,
    }
}

/// `VkSemaphoreSubmitInfo`'s valid usage: a semaphore wait or signal is a queue operation, and
/// its stage mask must not include `HOST` (the host is no stage of a queue).
fn host_in_semaphore_masks(k: usize, p: &Plan) -> Vec<Violation> {
    let host = |s: vk::PipelineStageFlags2| s.intersects(vk::PipelineStageFlags2::HOST);
    let mut found = vec![];
    for (q, qp) in p.queues.iter().enumerate() {
        for (b, batch) in qp.batches.iter().enumerate() {
            let waits = batch.waits.iter().map(|w| ("wait", w.stages));
            let signals = batch.signal.iter().map(|s| ("timeline signal", *s));
            let binary = batch
                .binary_signals
                .iter()
                .map(|(_, s)| ("binary signal", *s));
            for (what, stages) in waits.chain(signals).chain(binary) {
                if host(stages) {
                    found.push(structure(format!(
                        "execution {k}, queue {q}, batch {b}: a semaphore {what} with HOST in its \
                         stage mask ({stages:?}); HOST is no stage of a queue"
                    )));
                }
            }
        }
    }
    found
}

impl Model {
    /// Reads consecutive executions `execs` (each plan with its timeline values): the segments
    /// and initial state they share, then each execution's ops and events.
    pub fn build(execs: &[(&Plan, &TimelineValues)]) -> Model {
        let first = &execs[0].0.input;
        let mut m = Model::new(first);
        if !m.check_shapes(execs) {
            return m;
        }
        // 1. Universe of named bits, and segment boundaries per resource.
        let mut bounds = Bounds::new(&m.res_kinds);
        m.read_initial_bounds(first, &mut bounds);
        for (p, _) in execs {
            m.read_plan_bounds(p, &mut bounds);
        }
        m.cut_segments(&bounds);
        // 2. The initial state of the first execution: per-segment layout/contents/owner, and
        //    the earlier accesses as operations.
        m.read_initial_state(first);
        // 3. Signals of every execution, to resolve timeline waits.
        let signals = timeline_signals(execs, m.families.len());
        // 4. Per execution: which transients share memory, then ops, events, in a linear
        //    order that respects every dependency.
        let segs_of = segs_of_owned(&m.res_segs);
        for (k, (p, values)) in execs.iter().enumerate() {
            m.read_transients(k, p);
            m.build_execution(k, p, values, &signals, &segs_of);
        }
        m
    }

    /// A model of no operations yet, of the queues and resources of `first`.
    fn new(first: &PlanInput) -> Model {
        Model {
            ops: vec![],
            events: vec![],
            segs: vec![],
            initial: vec![],
            initial_visible: vec![],
            universe: Universe::new(),
            families: first.queues.iter().map(|q| q.family).collect(),
            all_stages_transfers: Vec::new(),
            maintenance9: Vec::new(),
            queue_names: first.queues.iter().map(|q| q.name.clone()).collect(),
            res_names: first.resources.iter().map(|r| r.name.clone()).collect(),
            res_kinds: first.resources.iter().map(|r| r.kind).collect(),
            concurrent: first.resources.iter().map(|r| r.concurrent).collect(),
            transient: first
                .resources
                .iter()
                .map(|r| r.transient.is_some())
                .collect(),
            res_segs: vec![],
            aliases: Default::default(),
            violations: vec![],
        }
    }

    /// Whether every execution has the first one's queues and resources, and timeline values
    /// for its batches; structural violations for those that do not (the model then stops
    /// there), and for semaphore stage masks that name `HOST`.
    fn check_shapes(&mut self, execs: &[(&Plan, &TimelineValues)]) -> bool {
        let (nq, nr) = (self.families.len(), self.res_kinds.len());
        self.all_stages_transfers = (execs.iter())
            .map(|(p, _)| {
                (p.input.queues.iter())
                    .map(|q| q.transfers_use_all_stages)
                    .collect()
            })
            .collect();
        self.maintenance9 = (execs.iter())
            .map(|(p, _)| {
                let qs = &p.input.queues;
                qs.iter().any(|q| q.maintenance9.is_some()).then(|| {
                    qs.iter()
                        .map(|q| (q.family, q.maintenance9.unwrap_or(0)))
                        .collect()
                })
            })
            .collect();
        for (k, (p, v)) in execs.iter().enumerate() {
            if p.input.queues.len() != nq
                || p.input.resources.len() != nr
                || p.queues.len() != nq
                || v.per_batch.len() != nq
                || v.start.len() != nq
            {
                self.violations.push(structure(format!(
                    "execution {k} does not have the same queues and resources as execution 0"
                )));
                return false;
            }
            for (q, qp) in p.queues.iter().enumerate() {
                if v.per_batch[q].len() != qp.batches.len() {
                    self.violations.push(structure(format!(
                        "execution {k}: timeline values do not match the batches of queue {q}"
                    )));
                    return false;
                }
            }
            self.violations.extend(host_in_semaphore_masks(k, p));
        }
        true
    }

    /// The initial state of the first execution (`first`): each segment's layout, contents
    /// and owner, and the earlier accesses as operations.
    fn read_initial_state(&mut self, first: &PlanInput) {
        self.initial = self
            .segs
            .iter()
            .map(|_| InitialCell {
                layout: vk::ImageLayout::UNDEFINED,
                defined: false,
                owner: None,
            })
            .collect();
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                let segs = self.segs_of(r, std::slice::from_ref(c));
                for &g in &segs {
                    self.initial[g] = InitialCell {
                        layout: s.layout,
                        defined: s.defined,
                        owner: s.owner,
                    };
                }
                if let Some(w) = &s.write {
                    let op = self.ops.len();
                    self.push_initial_op(r, &segs, w, true);
                    let uni = self.universe;
                    let known = |q: usize| q < self.families.len();
                    let visible = s.visible.iter().filter(|v| known(v.queue)).map(|v| {
                        let stages = uni.stages(v.stages, Scope::Second);
                        (op, v.queue, stages, uni.access(v.access))
                    });
                    self.initial_visible.extend(visible);
                }
                for rec in &s.reads {
                    self.push_initial_op(r, &segs, rec, false);
                }
            }
        }
    }

    /// Access `rec` (a write, if `write`) to segments `segs` of resource `r` before the first
    /// execution, as an operation: the app's own, or an earlier graph's whose timeline value
    /// covers it.
    fn push_initial_op(&mut self, r: usize, segs: &[usize], rec: &Recorded<usize>, write: bool) {
        let uni = self.universe;
        let value = rec.value.unwrap_or(0);
        let queue = (rec.queue < self.families.len()).then_some(rec.queue);
        let app = value == 0 || queue.is_none();
        self.ops.push(Op {
            kind: OpKind::Initial { app, value },
            exec: 0,
            queue,
            resource: r,
            segs: segs.to_vec(),
            stages: uni.stages(rec.stages, Scope::Op),
            access: uni.access(rec.access),
            write,
            layout: vk::ImageLayout::UNDEFINED,
            actor: if app { Actor::App } else { Actor::EarlierGraph },
        });
    }

    /// Cell intervals of a segment set, merged, for reports.
    pub fn describe_range(&self, r: usize, segs: &[usize]) -> String {
        let mut cells: Vec<Range<u64>> = segs.iter().map(|&g| self.segs[g].cells.clone()).collect();
        cells.sort_by_key(|c| c.start);
        let mut merged: Vec<Range<u64>> = vec![];
        for c in cells {
            match merged.last_mut() {
                Some(l) if l.end == c.start => l.end = c.end,
                _ => merged.push(c),
            }
        }
        let parts: Vec<String> = match self.res_kinds[r] {
            ResourceKind::Image { layers, aspect, .. } => merged
                .iter()
                .flat_map(|c| CellGrid::new(layers, aspect).ranges(c.clone()))
                .map(|(i, a)| {
                    format!(
                        "mips {}..{} layers {}..{}{}",
                        i.base_mip,
                        i.base_mip + i.mip_count,
                        i.base_layer,
                        i.base_layer + i.layer_count,
                        if a == aspect {
                            String::new()
                        } else {
                            format!(" {a:?}")
                        }
                    )
                })
                .collect(),
            ResourceKind::Buffer { .. } => merged
                .iter()
                .map(|c| format!("bytes {}..{}", c.start, c.end))
                .collect(),
        };
        parts.join(", ")
    }
}

/// Every timeline signal of `execs`, per queue (of `nq`), ascending: (value, execution, batch).
/// Timeline waits resolve against them.
fn timeline_signals(
    execs: &[(&Plan, &TimelineValues)],
    nq: usize,
) -> Vec<Vec<(u64, usize, usize)>> {
    let mut signals: Vec<Vec<(u64, usize, usize)>> = vec![vec![]; nq];
    for (k, (_, v)) in execs.iter().enumerate() {
        for (q, sig) in signals.iter_mut().enumerate() {
            for (b, val) in v.per_batch[q].iter().enumerate() {
                if let Some(val) = val {
                    sig.push((*val, k, b));
                }
            }
        }
    }
    for s in &mut signals {
        s.sort();
    }
    signals
}
