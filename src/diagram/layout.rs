//! Where everything goes: lanes stacked top to bottom, batches along them left to right, and
//! the arrows between them.
//!
//! A batch starts after the previous batch of its lane and after every batch it waits on has
//! ended (plus room for the arrow): the longest path through the waits, so time runs left to
//! right and every wait arrow points rightwards. Inside a batch, the marks sit in slots of
//! fixed width, in order: binary waits, then the commands, then binary signals.

use super::text;
use crate::plan::{Batch, Command, Plan, WaitTarget};

/// Outer margin.
pub(super) const MARGIN: f32 = 20.0;
/// The title row.
pub(super) const TITLE_H: f32 = 44.0;
/// The column of lane labels.
pub(super) const LABEL_W: f32 = 216.0;
/// One lane.
pub(super) const LANE_H: f32 = 124.0;
/// Between lanes.
pub(super) const LANE_GAP: f32 = 14.0;
/// The column of "earlier graphs" markers, when some wait needs one.
pub(super) const EARLIER_W: f32 = 96.0;
/// A batch frame: from this far below the lane's top to as far above its bottom.
pub(super) const FRAME_INSET: f32 = 10.0;
/// The header of a batch frame, which holds "batch N".
pub(super) const FRAME_HEADER: f32 = 20.0;
/// Left and right padding inside a batch frame.
const BATCH_PAD: f32 = 14.0;
/// Between two slots of a batch.
const SLOT_GAP: f32 = 10.0;
/// A pass box.
pub(super) const PASS_W: f32 = 140.0;
/// A pass box.
pub(super) const PASS_H: f32 = 36.0;
/// A barrier marker's slot (the marker and the two lines of words below it).
pub(super) const BARRIER_W: f32 = 76.0;
/// A binary semaphore marker's slot.
const BINARY_W: f32 = 52.0;
/// Between two batches of a lane.
const BATCH_GAP: f32 = 28.0;
/// Between a batch and one that waits on it: room for the arrow to turn.
const WAIT_GAP: f32 = 64.0;
/// The narrowest batch frame: room for its "batch N" label.
const MIN_BATCH_W: f32 = 84.0;
/// The legend: rows of this height.
pub(super) const LEGEND_ROW: f32 = 26.0;
/// The legend: rows.
pub(super) const LEGEND_ROWS: usize = 2;
/// The legend: items per row and the width of each.
pub(super) const LEGEND_COLS: usize = 3;
/// The legend: width of one item.
pub(super) const LEGEND_ITEM_W: f32 = 290.0;

/// The whole picture.
#[derive(Debug)]
pub(super) struct Layout {
    pub width: f32,
    pub height: f32,
    pub lanes: Vec<Lane>,
    /// The left edge of the "earlier graphs" column, if some wait needs it.
    pub earlier_x: Option<f32>,
    /// For each lane, whether it shows an "earlier graphs" marker.
    pub earlier_marks: Vec<bool>,
    pub arrows: Vec<Arrow>,
    /// The top of the legend.
    pub legend_y: f32,
    /// Predicted and measured times, drawn when given ([`super::Plan::to_svg_timed`]).
    pub timing: Option<Timing>,
}

/// What [`super::Plan::to_svg_timed`] adds: each pass's predicted time and whether it is on
/// the critical path, and a caption line below the legend.
#[derive(Debug)]
pub(super) struct Timing {
    /// Per pass: (start, end) at best, ns.
    pub passes: Vec<Option<(u64, u64)>>,
    /// Per pass: on the critical path.
    pub critical: Vec<bool>,
    pub caption: String,
}

/// One queue's lane.
#[derive(Debug)]
pub(super) struct Lane {
    pub queue: usize,
    pub y: f32,
    pub batches: Vec<BatchBox>,
}

impl Lane {
    /// The vertical middle of the lane's row of marks.
    pub fn row_y(&self) -> f32 {
        row_y(self.y)
    }
}

/// One batch's frame and its slots.
#[derive(Debug)]
pub(super) struct BatchBox {
    /// The batch's index on its queue.
    pub index: usize,
    pub x: f32,
    pub w: f32,
    pub slots: Vec<Slot>,
}

/// One mark inside a batch: `x` is the slot's left edge.
#[derive(Debug)]
pub(super) struct Slot {
    pub x: f32,
    pub w: f32,
    pub mark: Mark,
}

/// What a slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// Index into [`Batch::waits`] of a binary wait.
    BinaryWait(usize),
    /// Index into [`Batch::commands`].
    Command(usize),
    /// Index into [`Batch::binary_signals`].
    BinarySignal(usize),
}

/// A timeline wait, drawn from where it is signalled to the batch that waits.
#[derive(Debug)]
pub(super) struct Arrow {
    /// The waiting queue, batch and index into its waits.
    pub queue: usize,
    pub batch: usize,
    pub wait: usize,
    /// Where it starts: the end of the signalling batch, or an "earlier graphs" marker.
    pub from: (f32, f32),
    /// The lane it starts in.
    pub from_lane: usize,
    /// Where it ends: the left edge of the waiting batch.
    pub to: (f32, f32),
    /// The x of its vertical run between the lanes, set by [`super::route`].
    pub turn: f32,
    /// The queue whose colour it takes (the signalling queue), if the plan declares it.
    pub source_queue: Option<usize>,
    /// It waits on an earlier graph's value (or a batch the plan lacks).
    pub earlier: bool,
}

/// The middle of the row of marks in a lane that starts at `lane_y`.
pub(super) fn row_y(lane_y: f32) -> f32 {
    let top = lane_y + FRAME_INSET + FRAME_HEADER;
    let bottom = lane_y + LANE_H - FRAME_INSET - 28.0; // room for two lines under markers
    (top + bottom) / 2.0
}

/// The top of a batch frame in a lane that starts at `lane_y`, and its height.
pub(super) fn frame_y_h(lane_y: f32) -> (f32, f32) {
    (lane_y + FRAME_INSET, LANE_H - 2.0 * FRAME_INSET)
}

/// The slots of one batch, from its left edge.
fn slots(batch: &Batch, x: f32) -> (Vec<Slot>, f32) {
    let marks = batch
        .waits
        .iter()
        .enumerate()
        .filter(|(_, w)| matches!(w.target, WaitTarget::Binary(_)))
        .map(|(i, _)| (Mark::BinaryWait(i), BINARY_W))
        .chain(batch.commands.iter().enumerate().map(|(i, c)| {
            let w = match c {
                Command::Pass(_) => PASS_W,
                Command::Barrier(_) => BARRIER_W,
            };
            (Mark::Command(i), w)
        }))
        .chain((0..batch.binary_signals.len()).map(|i| (Mark::BinarySignal(i), BINARY_W)));
    let mut out = Vec::new();
    let mut at = x + BATCH_PAD;
    for (mark, w) in marks {
        out.push(Slot { x: at, w, mark });
        at += w + SLOT_GAP;
    }
    let content = if out.is_empty() {
        0.0
    } else {
        at - SLOT_GAP - x
    };
    let width = (content + BATCH_PAD).max(MIN_BATCH_W);
    (out, width)
}

/// The batch a timeline wait targets, if the plan has it.
fn target_batch(plan: &Plan, target: WaitTarget) -> Option<(usize, usize)> {
    match target {
        WaitTarget::Batch { queue, batch }
            if plan
                .queues
                .get(queue)
                .is_some_and(|q| batch < q.batches.len()) =>
        {
            Some((queue, batch))
        }
        _ => None,
    }
}

/// Lays the plan out.
pub(super) fn layout(plan: &Plan) -> Layout {
    let queues = plan.queues.len();
    let earlier_marks = earlier_marks(plan);
    let label_right = MARGIN + LABEL_W;
    let earlier_x = earlier_marks.contains(&true).then_some(label_right);
    // With earlier markers, room for the arrows from them to turn before the first batch.
    let content_x = label_right + earlier_x.map_or(0.0, |_| EARLIER_W + 20.0) + 12.0;

    let lane_y = |q: usize| MARGIN + TITLE_H + q as f32 * (LANE_H + LANE_GAP);
    let lanes: Vec<Lane> = place_batches(plan, content_x)
        .into_iter()
        .enumerate()
        .map(|(queue, batches)| Lane {
            queue,
            y: lane_y(queue),
            batches: batches.into_iter().flatten().collect(),
        })
        .collect();

    // Each arrow's `turn` is left for `route`, which runs on the finished layout.
    let arrows = arrows(plan, &lanes, earlier_x);

    let content_right = lanes
        .iter()
        .filter_map(|l| l.batches.last())
        .map(|b| b.x + b.w)
        .fold(content_x, f32::max);
    let lanes_bottom = lane_y(queues) - LANE_GAP;
    let legend_y = lanes_bottom + 24.0;
    let title_w = text::width(&super::title(plan), 16.0 * text::BOLD);
    let width = (content_right + MARGIN)
        .max(MARGIN + LEGEND_COLS as f32 * LEGEND_ITEM_W + MARGIN)
        .max(MARGIN + title_w + MARGIN)
        .ceil();
    let height = (legend_y + LEGEND_ROWS as f32 * LEGEND_ROW + MARGIN).ceil();
    Layout {
        width,
        height,
        lanes,
        earlier_x,
        earlier_marks,
        arrows,
        legend_y,
        timing: None,
    }
}

/// Per queue, whether the "earlier graphs" column has a marker in its lane: for value waits,
/// and for batch waits the plan cannot place.
fn earlier_marks(plan: &Plan) -> Vec<bool> {
    let queues = plan.queues.len();
    let mut marks = vec![false; queues];
    for (q, qp) in plan.queues.iter().enumerate() {
        for w in qp.batches.iter().flat_map(|b| &b.waits) {
            match w.target {
                WaitTarget::Binary(_) => {}
                t if target_batch(plan, t).is_some() => {}
                WaitTarget::Value { queue, .. } | WaitTarget::Batch { queue, .. } => {
                    marks[if queue < queues { queue } else { q }] = true;
                }
            }
        }
    }
    marks
}

/// Places the batches from `content_x` on: a batch starts when its lane is free and what it
/// waits on has ended. Waits form no cycle in a plan the planner made; if a hand-made one has
/// one, the lowest queue still waiting goes ahead and its unplaced waits are drawn from where
/// they are.
fn place_batches(plan: &Plan, content_x: f32) -> Vec<Vec<Option<BatchBox>>> {
    let queues = plan.queues.len();
    let mut placed: Vec<Vec<Option<BatchBox>>> = plan
        .queues
        .iter()
        .map(|q| q.batches.iter().map(|_| None).collect())
        .collect();
    let mut next = vec![0usize; queues];
    let mut lane_end = vec![content_x; queues];
    loop {
        let pending: Vec<usize> = (0..queues)
            .filter(|&q| next[q] < plan.queues[q].batches.len())
            .collect();
        let Some(&first) = pending.first() else {
            break;
        };
        let ready = |q: usize| {
            plan.queues[q].batches[next[q]].waits.iter().all(|w| {
                target_batch(plan, w.target)
                    .is_none_or(|(tq, tb)| tq == q || placed[tq][tb].is_some())
            })
        };
        let q = pending.iter().copied().find(|&q| ready(q)).unwrap_or(first);
        let b = next[q];
        let batch = &plan.queues[q].batches[b];
        let after_waits = batch
            .waits
            .iter()
            .filter_map(|w| target_batch(plan, w.target))
            .filter_map(|(tq, tb)| placed[tq][tb].as_ref())
            .map(|t| t.x + t.w + WAIT_GAP)
            .fold(lane_end[q], f32::max);
        let (slots, w) = slots(batch, after_waits);
        lane_end[q] = after_waits + w + BATCH_GAP;
        placed[q][b] = Some(BatchBox {
            index: b,
            x: after_waits,
            w,
            slots,
        });
        next[q] += 1;
    }
    placed
}

/// One arrow per timeline wait: from the right edge of the batch that signals (or the
/// "earlier graphs" marker) to the left edge of the batch that waits. The arrows into one
/// batch spread over its height in the order of their sources, top to bottom, so that they
/// need not cross on the way in.
fn arrows(plan: &Plan, lanes: &[Lane], earlier_x: Option<f32>) -> Vec<Arrow> {
    let find = |q: usize, b: usize| lanes.get(q)?.batches.iter().find(|x| x.index == b);
    let mut out = Vec::new();
    for lane in lanes {
        for bb in &lane.batches {
            let batch = &plan.queues[lane.queue].batches[bb.index];
            let timeline: Vec<usize> = (0..batch.waits.len())
                .filter(|&i| !matches!(batch.waits[i].target, WaitTarget::Binary(_)))
                .collect();
            let (frame_y, frame_h) = frame_y_h(lane.y);
            let top = frame_y + FRAME_HEADER;
            let span = frame_h - FRAME_HEADER - 6.0;
            let to = (bb.x, 0.0);
            let mut into = Vec::new();
            for &wi in &timeline {
                let target = batch.waits[wi].target;
                let source =
                    target_batch(plan, target).and_then(|(tq, tb)| Some((tq, find(tq, tb)?)));
                let arrow = match (source, earlier_x) {
                    (Some((tq, src)), _) => Some(Arrow {
                        queue: lane.queue,
                        batch: bb.index,
                        wait: wi,
                        from: (src.x + src.w, lanes[tq].row_y()),
                        from_lane: tq,
                        to,
                        turn: 0.0,
                        source_queue: Some(tq),
                        earlier: false,
                    }),
                    (None, Some(ex)) => {
                        let q = match target {
                            WaitTarget::Value { queue, .. } | WaitTarget::Batch { queue, .. }
                                if queue < lanes.len() =>
                            {
                                queue
                            }
                            _ => lane.queue,
                        };
                        Some(Arrow {
                            queue: lane.queue,
                            batch: bb.index,
                            wait: wi,
                            from: (ex + EARLIER_W - 8.0, lanes[q].row_y()),
                            from_lane: q,
                            to,
                            turn: 0.0,
                            source_queue: (q < plan.input.queues.len()).then_some(q),
                            earlier: true,
                        })
                    }
                    // Every unplaced target set `earlier_x`.
                    (None, None) => None,
                };
                into.extend(arrow);
            }
            into.sort_by(|a, b| a.from.1.total_cmp(&b.from.1));
            let n = into.len();
            for (k, a) in into.iter_mut().enumerate() {
                a.to.1 = top + span * (k + 1) as f32 / (n + 1) as f32;
            }
            out.extend(into);
        }
    }
    out
}
