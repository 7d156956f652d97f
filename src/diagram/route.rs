//! Routing the wait arrows: each runs right along its source lane, turns, runs up or down
//! between the lanes, turns again and runs right into the waiting batch.
//!
//! The only choice is where the vertical run goes. Candidates are the channels where it
//! crosses no batch frame of the lanes it passes, its horizontal runs cross no frame of their
//! own lanes, and it keeps clear of the vertical runs already placed beside it. Among them it
//! takes the one that crosses the fewest other arrows (counting, for arrows not routed yet,
//! the short runs out of their source and into their batch), the leftmost on a tie. Arrows
//! that start further right go first, so that the inner ones turn early and the outer ones
//! around them. Where there is no candidate, it goes halfway and crosses what it must (it is
//! drawn on top, over a white halo).

use super::layout::{frame_y_h, Arrow, Lane};

/// Clearance between a vertical run and a frame.
const CLEAR: f32 = 6.0;
/// Between two vertical runs that overlap in height.
const SPACING: f32 = 8.0;
/// Candidate channels are this far apart.
const STEP: f32 = 2.0;
/// The shortest horizontal run out of a source and into a batch.
const STUB: f32 = 12.0;

/// A horizontal run: y, and x from..to.
type HRun = (f32, f32, f32);
/// A vertical run: x, and y from..to.
type VRun = (f32, f32, f32);

fn crosses(v: VRun, h: HRun) -> bool {
    let (x, ya, yb) = v;
    let (y, xa, xb) = h;
    xa < x && x < xb && ya.min(yb) < y && y < ya.max(yb)
}

/// The runs of an arrow turning at `t`: (out of the source, vertical, into the batch).
fn runs(a: &Arrow, t: f32) -> (HRun, VRun, HRun) {
    let ((x1, y1), (x2, y2)) = (a.from, a.to);
    ((y1, x1, t), (t, y1, y2), (y2, t, x2))
}

/// Sets every arrow's `turn`.
pub(super) fn route(lanes: &[Lane], arrows: &mut [Arrow]) {
    let mut order: Vec<usize> = (0..arrows.len()).collect();
    order.sort_by(|&a, &b| arrows[b].from.0.total_cmp(&arrows[a].from.0));
    let mut routed = vec![false; arrows.len()];
    for &i in &order {
        let a = &arrows[i];
        let (x1, y1) = a.from;
        let (x2, y2) = a.to;
        let (top, bottom) = (y1.min(y2), y1.max(y2));
        let lo = x1 + CLEAR + 4.0;
        let hi = x2 - CLEAR - 8.0; // room for the arrowhead
        let clear_of_frames = |t: f32| {
            lanes
                .iter()
                .filter(|l| {
                    let (fy, fh) = frame_y_h(l.y);
                    fy < bottom && fy + fh > top
                })
                .flat_map(|l| l.batches.iter().map(move |b| (l.queue, b)))
                .all(|(q, b)| {
                    let (left, right) = (b.x, b.x + b.w);
                    // The run itself, in any lane it passes through.
                    let run = left - CLEAR < t && t < right + CLEAR;
                    // The horizontal runs, along the source and the waiting lane.
                    let out = q == a.from_lane && left < t && right > x1 + 0.5;
                    let into = q == a.queue && left < x2 - 0.5 && right > t;
                    !(run || out || into)
                })
        };
        let clear_of_runs = |t: f32| {
            (0..arrows.len()).filter(|&j| routed[j]).all(|j| {
                let (x, (_, ya, yb)) = (arrows[j].turn, runs(&arrows[j], arrows[j].turn).1);
                (x - t).abs() >= SPACING || ya.max(yb) < top || ya.min(yb) > bottom
            })
        };
        let crossings = |t: f32| {
            let (h1, v, h2) = runs(a, t);
            let mut n = 0;
            for (j, other) in arrows.iter().enumerate().filter(|&(j, _)| j != i) {
                if routed[j] {
                    let (oh1, ov, oh2) = runs(other, other.turn);
                    n += [
                        crosses(v, oh1),
                        crosses(v, oh2),
                        crosses(ov, h1),
                        crosses(ov, h2),
                    ]
                    .iter()
                    .filter(|c| **c)
                    .count();
                } else {
                    let ((ox1, oy1), (ox2, oy2)) = (other.from, other.to);
                    let stubs = [(oy1, ox1, ox1 + STUB), (oy2, ox2 - STUB, ox2)];
                    n += stubs.iter().filter(|h| crosses(v, **h)).count();
                }
            }
            n
        };
        let steps = ((hi - lo) / STEP).floor().max(0.0) as usize;
        let best = (0..=steps)
            .map(|k| lo + k as f32 * STEP)
            .filter(|&t| t <= hi && clear_of_frames(t) && clear_of_runs(t))
            .map(|t| (crossings(t), t))
            .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        arrows[i].turn = best.map_or((x1 + x2) / 2.0, |(_, t)| t);
        routed[i] = true;
    }
}

/// The SVG path of an arrow: right, a rounded turn, up or down, a rounded turn, right. Every
/// command is absolute, and it ends with `L x,y` at the arrowhead's tip.
pub(super) fn path(a: &Arrow) -> String {
    let ((x1, y1), (x2, y2), t) = (a.from, a.to, a.turn);
    let dy = y2 - y1;
    if dy.abs() < 0.5 {
        return format!("M{x1:.1},{y1:.1} L{x2:.1},{y2:.1}");
    }
    let s = dy.signum();
    let r = 8f32.min(dy.abs() / 2.0).min(t - x1).min(x2 - t).max(0.0);
    format!(
        "M{x1:.1},{y1:.1} H{:.1} Q{t:.1},{y1:.1} {t:.1},{:.1} V{:.1} Q{t:.1},{y2:.1} {:.1},{y2:.1} L{x2:.1},{y2:.1}",
        t - r,
        y1 + s * r,
        y2 - s * r,
        t + r
    )
}
