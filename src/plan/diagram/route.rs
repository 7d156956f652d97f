//! Routing the wait arrows: each runs right along its source lane, turns, runs up or down
//! between the lanes, turns again and runs right into the waiting batch.
//!
//! The only choice is where the vertical run goes. It goes at the leftmost channel where it
//! crosses no batch frame of the lanes it passes, its horizontal runs cross no frame of their
//! own lanes, and it keeps clear of the vertical runs already placed beside it. Where there is
//! no such channel, it goes halfway and crosses what it must (it is drawn on top, over a white
//! halo).

use super::layout::{frame_y_h, Arrow, Lane};

/// Clearance between a vertical run and a frame.
const CLEAR: f32 = 6.0;
/// Between two vertical runs that overlap in height.
const SPACING: f32 = 8.0;
/// Candidate channels are this far apart.
const STEP: f32 = 2.0;

/// Sets every arrow's `turn`.
pub(super) fn route(lanes: &[Lane], arrows: &mut [Arrow]) {
    let mut placed: Vec<(f32, f32, f32)> = Vec::new(); // (x, y top, y bottom)
    for a in arrows.iter_mut() {
        let (x1, y1) = a.from;
        let (x2, y2) = a.to;
        let (top, bottom) = (y1.min(y2), y1.max(y2));
        let lo = x1 + CLEAR + 4.0;
        let hi = x2 - CLEAR - 8.0; // room for the arrowhead
        let dst_lane = a.queue;
        let free = |t: f32| {
            let lanes_between = lanes
                .iter()
                .filter(|l| {
                    let (fy, fh) = frame_y_h(l.y);
                    fy < bottom && fy + fh > top
                })
                .flat_map(|l| l.batches.iter().map(move |b| (l.queue, b)));
            for (q, b) in lanes_between {
                let (left, right) = (b.x, b.x + b.w);
                // The run itself, in any lane it passes through.
                if left - CLEAR < t && t < right + CLEAR {
                    return false;
                }
                // The horizontal runs, along the source and the waiting lane.
                if q == a.from_lane && left < t && right > x1 + 0.5 {
                    return false;
                }
                if q == dst_lane && left < x2 - 0.5 && right > t {
                    return false;
                }
            }
            placed
                .iter()
                .all(|&(x, t0, b0)| (x - t).abs() >= SPACING || b0 < top || t0 > bottom)
        };
        let steps = ((hi - lo) / STEP).floor().max(0.0) as usize;
        a.turn = (0..=steps)
            .map(|i| lo + i as f32 * STEP)
            .find(|&t| t <= hi && free(t))
            .unwrap_or((x1 + x2) / 2.0);
        placed.push((a.turn, top, bottom));
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
