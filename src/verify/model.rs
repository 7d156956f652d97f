//! The operations and the submission stream of one or more executions, built from the plans.
//!
//! This is a 1:1 reading of what the executor submits: per queue, batches in submission order
//! (one `VkSubmitInfo2` each), each with its semaphore waits, then its commands
//! (`vkCmdPipelineBarrier2` or a pass), then its semaphore signals. The streams of all queues
//! are put in one linear order that respects submission order and every semaphore wait; the
//! happens-before analysis (`check.rs`) walks that order once.
//!
//! This file holds the model's types and the reading of what all executions share (segments,
//! initial state, timeline signals); `execution.rs` reads one execution's batch graph and order,
//! and `events.rs` emits its events.

use super::flags::{Scope, Universe, OWNERSHIP_STAGE, WRITES};
use super::{Actor, HazardKind, Violation, OWNERSHIP_TRANSFER_USES_ALL_STAGES};
use crate::plan::{Command, Plan, ResourceKind, TimelineValues, WaitTarget};
use crate::range::{CellGrid, SubRange};
use ash::vk;
use std::collections::BTreeSet;
use std::ops::Range;

mod aliasing;
mod events;
mod execution;

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
    pub universe: Universe,
    pub families: Vec<u32>,
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
    pub fn build(execs: &[(&Plan, &TimelineValues)]) -> Model {
        let first = &execs[0].0.input;
        let nq = first.queues.len();
        let nr = first.resources.len();
        let mut m = Model {
            ops: vec![],
            events: vec![],
            segs: vec![],
            initial: vec![],
            universe: Universe::new(),
            families: first.queues.iter().map(|q| q.family).collect(),
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
        };
        for (k, (p, v)) in execs.iter().enumerate() {
            if p.input.queues.len() != nq
                || p.input.resources.len() != nr
                || p.queues.len() != nq
                || v.per_batch.len() != nq
                || v.start.len() != nq
            {
                m.violations.push(structure(format!(
                    "execution {k} does not have the same queues and resources as execution 0"
                )));
                return m;
            }
            for (q, qp) in p.queues.iter().enumerate() {
                if v.per_batch[q].len() != qp.batches.len() {
                    m.violations.push(structure(format!(
                        "execution {k}: timeline values do not match the batches of queue {q}"
                    )));
                    return m;
                }
            }
            m.violations.extend(host_in_semaphore_masks(k, p));
        }

        // 1. Universe of named bits, and segment boundaries per resource.
        let mut bounds: Vec<BTreeSet<u64>> = m
            .res_kinds
            .iter()
            .map(|k| [0, k.cells()].into_iter().collect())
            .collect();
        let add = |bounds: &mut Vec<BTreeSet<u64>>, r: usize, cells: &[Range<u64>]| {
            for c in cells {
                bounds[r].insert(c.start);
                bounds[r].insert(c.end);
            }
        };
        let u = &mut m.universe;
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                add(&mut bounds, r, std::slice::from_ref(c));
                for rec in s.write.iter().chain(&s.reads) {
                    u.note_stages(rec.stages);
                    u.note_access(rec.access);
                }
            }
        }
        for (p, _) in execs {
            for pass in &p.input.passes {
                for us in &pass.uses {
                    u.note_stages(us.access.stages);
                    u.note_access(us.access.access);
                    if let Some(c) = m
                        .res_kinds
                        .get(us.resource)
                        .and_then(|k| use_cells(k, us.range, us.aspect))
                    {
                        add(&mut bounds, us.resource, &c);
                    }
                }
            }
            for b in p.queues.iter().flat_map(|q| &q.batches) {
                for w in &b.waits {
                    u.note_stages(w.stages);
                }
                if let Some(s) = b.signal {
                    u.note_stages(s);
                }
                for (_, s) in &b.binary_signals {
                    u.note_stages(*s);
                }
                for c in &b.commands {
                    if let Command::Barrier(bc) = c {
                        let scopes = bc
                            .images
                            .iter()
                            .map(|i| (i.resource, &i.scopes))
                            .chain(bc.buffers.iter().map(|b| (b.resource, &b.scopes)));
                        for (_, s) in scopes {
                            u.note_stages(s.src_stages | s.dst_stages);
                            u.note_access(s.src_access | s.dst_access);
                        }
                        for i in &bc.images {
                            let kind = m.res_kinds.get(i.resource);
                            let range = Some(SubRange::Image(i.range));
                            if let Some(c) = kind.and_then(|k| use_cells(k, range, i.aspect)) {
                                add(&mut bounds, i.resource, &c);
                            }
                        }
                        for b in &bc.buffers {
                            if b.resource < nr {
                                add(&mut bounds, b.resource, &[b.range.bytes()]);
                            }
                        }
                    }
                }
            }
        }
        let mut res_segs: Vec<Vec<usize>> = vec![];
        for (r, b) in bounds.iter().enumerate() {
            let pts: Vec<u64> = b
                .iter()
                .copied()
                .filter(|&x| x <= m.res_kinds[r].cells())
                .collect();
            let mut ids = vec![];
            for w in pts.windows(2) {
                ids.push(m.segs.len());
                m.segs.push(Seg { cells: w[0]..w[1] });
            }
            res_segs.push(ids);
        }
        let segs_of = |r: usize, cells: &[Range<u64>], segs: &[Seg]| -> Vec<usize> {
            res_segs[r]
                .iter()
                .copied()
                .filter(|&g| {
                    cells
                        .iter()
                        .any(|c| c.start <= segs[g].cells.start && segs[g].cells.end <= c.end)
                })
                .collect()
        };

        // 2. The initial state of the first execution: per-segment layout/contents/owner, and
        //    the earlier accesses as operations.
        m.initial = m
            .segs
            .iter()
            .map(|_| InitialCell {
                layout: vk::ImageLayout::UNDEFINED,
                defined: false,
                owner: None,
            })
            .collect();
        let uni = m.universe;
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                let segs = segs_of(r, std::slice::from_ref(c), &m.segs);
                for &g in &segs {
                    m.initial[g] = InitialCell {
                        layout: s.layout,
                        defined: s.defined,
                        owner: s.owner,
                    };
                }
                let recs = s
                    .write
                    .iter()
                    .map(|w| (w, true))
                    .chain(s.reads.iter().map(|w| (w, false)));
                for (rec, write) in recs {
                    let value = rec.value.unwrap_or(0);
                    let queue = (rec.queue < nq).then_some(rec.queue);
                    let app = value == 0 || queue.is_none();
                    m.ops.push(Op {
                        kind: OpKind::Initial { app, value },
                        exec: 0,
                        queue,
                        resource: r,
                        segs: segs.clone(),
                        stages: uni.stages(rec.stages, Scope::Op),
                        access: uni.access(rec.access),
                        write,
                        layout: vk::ImageLayout::UNDEFINED,
                        actor: if app { Actor::App } else { Actor::EarlierGraph },
                    });
                }
            }
        }

        // 3. Signals of every execution, to resolve timeline waits.
        // signals[q] = (value, exec, batch), ascending.
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

        // 4. Per execution: which transients share memory, then ops, events, in a linear
        //    order that respects every dependency.
        m.res_segs = res_segs.clone();
        for (k, (p, values)) in execs.iter().enumerate() {
            m.read_transients(k, p);
            m.build_execution(k, p, values, &signals, &segs_of_owned(&res_segs, &m.segs));
        }
        m
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

/// Maps a resource and cell intervals to the segments they cover.
type SegsOf = dyn Fn(usize, &[Range<u64>], &[Seg]) -> Vec<usize>;

fn segs_of_owned(res_segs: &[Vec<usize>], _segs: &[Seg]) -> Box<SegsOf> {
    let res_segs = res_segs.to_vec();
    Box::new(move |r: usize, cells: &[Range<u64>], segs: &[Seg]| {
        res_segs[r]
            .iter()
            .copied()
            .filter(|&g| {
                cells
                    .iter()
                    .any(|c| c.start <= segs[g].cells.start && segs[g].cells.end <= c.end)
            })
            .collect()
    })
}
