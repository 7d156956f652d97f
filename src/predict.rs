//! Will async compute pay? From a plan and each pass's GPU time, the best a GPU could do with
//! the plan's dependencies: the frame's span, its critical path, and what moving one pass to
//! another queue would allow at best.
//!
//! The model is the plan's own structure:
//! - each queue runs its batches in order, and a batch's passes one after another (barriers
//!   take no time);
//! - a batch starts once the batch before it on its queue and every batch of this plan it
//!   waits for have ended (a wait is taken as a whole-batch wait, even where its stage mask
//!   would let earlier stages run);
//! - waits for earlier executions and binary semaphores are met at the start.
//!
//! So the span is what the plan allows with perfect queues, and `serial / span` the overlap it
//! allows at best. A measured span well above it points at the GPU (queues that do not run
//! side by side, passes that slow each other); a predicted span near `serial` says the plan
//! itself leaves nothing to overlap. [`best_moves`] answers the other question users ask by
//! trial: it plans the frame again with one pass on another queue and predicts that.
//!
//! ```
//! use vk_baton::{ash::vk, plan::*, predict::best_moves, Access};
//! let q = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("graphics", 0, q), QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE)],
//!     resources: vec![ResourceDecl::buffer("a", 64, vk::BufferUsageFlags::STORAGE_BUFFER).concurrent(),
//!                     ResourceDecl::buffer("b", 64, vk::BufferUsageFlags::STORAGE_BUFFER).concurrent()],
//!     passes: vec![
//!         PassDecl::new("shadows", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
//!         PassDecl::new("ssao", 0).with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
//!     ],
//! };
//! let p = plan(&input).unwrap();
//! let times = [3_000_000, 2_000_000]; // ns per pass
//! let now = p.predict(&times);
//! assert_eq!((now.serial_ns, now.span_ns), (5_000_000, 5_000_000)); // one queue: no overlap
//! // Either pass on the compute queue runs beside the other: 3 ms instead of 5.
//! let moves = best_moves(&p, &times);
//! assert_eq!(moves.len(), 2);
//! assert!(moves.iter().all(|m| m.to_queue == 1 && m.span_ns == 3_000_000));
//! ```

use crate::plan::{plan_scheduled, Command, Plan, WaitTarget};
use std::fmt;

/// The best a plan allows, given each pass's GPU time: see the [module](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// Per pass (by index into the plan's passes): when it starts and ends at best, in ns
    /// from the frame's start; `None` for a pass the plan does not record (culled).
    pub passes: Vec<Option<(u64, u64)>>,
    /// The frame's span at best: the latest end.
    pub span_ns: u64,
    /// The passes one after another: the sum of their times.
    pub serial_ns: u64,
    /// The passes whose chain decides the span, first to last.
    pub critical_path: Vec<usize>,
}

impl Prediction {
    /// `serial / span`: how much the plan lets the queues overlap at best (1.0: not at all).
    pub fn overlap(&self) -> f64 {
        if self.span_ns == 0 {
            1.0
        } else {
            self.serial_ns as f64 / self.span_ns as f64
        }
    }
}

impl fmt::Display for Prediction {
    /// `span 3.000 ms at best (serial 5.000 ms, overlap 1.67x); critical path: 0 -> 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |ns: u64| ns as f64 / 1e6;
        write!(
            f,
            "span {:.3} ms at best (serial {:.3} ms, overlap {:.2}x); critical path: ",
            ms(self.span_ns),
            ms(self.serial_ns),
            self.overlap()
        )?;
        let path: Vec<String> = self.critical_path.iter().map(|p| p.to_string()).collect();
        write!(f, "{}", path.join(" -> "))
    }
}

/// One pass moved to another queue, and the span the frame would then allow at best.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The pass, by index.
    pub pass: usize,
    /// The queue it would run on, by index.
    pub to_queue: usize,
    /// The frame's span at best with the pass there.
    pub span_ns: u64,
}

/// A batch's place in the schedule: when it starts and ends, and which batch (queue, batch)
/// decided its start.
#[derive(Clone, Copy)]
struct Timed {
    start: u64,
    end: u64,
    after: Option<(usize, usize)>,
}

impl Plan {
    /// The best this plan allows when pass `i` takes `pass_ns[i]` nanoseconds on the GPU (a
    /// pass past the end of `pass_ns` takes none): see the [module](crate::predict).
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// let p = plan(&PlanInput::default()).unwrap();
    /// assert_eq!(p.predict(&[]).span_ns, 0);
    /// ```
    pub fn predict(&self, pass_ns: &[u64]) -> Prediction {
        let time = |i: usize| pass_ns.get(i).copied().unwrap_or(0);
        let mut timed: Vec<Vec<Option<Timed>>> = (self.queues.iter())
            .map(|q| vec![None; q.batches.len()])
            .collect();
        for q in 0..self.queues.len() {
            for b in 0..self.queues[q].batches.len() {
                self.time_batch(q, b, &time, &mut timed);
            }
        }
        let mut passes = vec![None; self.input.passes.len()];
        let mut last: Option<(usize, usize, u64)> = None;
        for (q, qp) in self.queues.iter().enumerate() {
            for (b, batch) in qp.batches.iter().enumerate() {
                let t = timed[q][b].expect("every batch timed");
                let mut at = t.start;
                for i in passes_in(&batch.commands) {
                    passes[i] = Some((at, at + time(i)));
                    at += time(i);
                }
                if last.is_none_or(|(_, _, end)| t.end > end) {
                    last = Some((q, b, t.end));
                }
            }
        }
        let mut critical_path = Vec::new();
        let mut at = last.map(|(q, b, _)| (q, b));
        while let Some((q, b)) = at {
            let batch = &self.queues[q].batches[b];
            let mut these: Vec<usize> = passes_in(&batch.commands).collect();
            these.reverse();
            critical_path.extend(these);
            at = timed[q][b].and_then(|t| t.after);
        }
        critical_path.reverse();
        Prediction {
            span_ns: last.map_or(0, |(_, _, end)| end),
            serial_ns: self.order.iter().map(|&i| time(i)).sum(),
            passes,
            critical_path,
        }
    }

    /// Times batch `b` of queue `q` (and, first, what it waits for).
    fn time_batch(
        &self,
        q: usize,
        b: usize,
        time: &impl Fn(usize) -> u64,
        timed: &mut [Vec<Option<Timed>>],
    ) -> Timed {
        if let Some(t) = timed[q][b] {
            return t;
        }
        let mut start = 0;
        let mut after = None;
        let mut consider = |t: Timed, from: (usize, usize)| {
            if after.is_none() || t.end > start {
                start = t.end;
                after = Some(from);
            }
        };
        if b > 0 {
            let prev = self.time_batch(q, b - 1, time, timed);
            consider(prev, (q, b - 1));
        }
        for w in &self.queues[q].batches[b].waits {
            if let WaitTarget::Batch { queue, batch } = w.target {
                let t = self.time_batch(queue, batch, time, timed);
                consider(t, (queue, batch));
            }
        }
        let busy: u64 = passes_in(&self.queues[q].batches[b].commands)
            .map(time)
            .sum();
        let t = Timed {
            start,
            end: start + busy,
            after,
        };
        timed[q][b] = Some(t);
        t
    }
}

/// The passes among `commands` (a batch's, or part of them), in recording order.
pub(crate) fn passes_in(commands: &[Command]) -> impl DoubleEndedIterator<Item = usize> + '_ {
    commands.iter().filter_map(|c| match c {
        Command::Pass(i) => Some(*i),
        Command::Barrier(_) => None,
    })
}

/// For each pass that some other queue could run, the best such queue and the span it would
/// allow, where that beats the plan's own span; best first. Each candidate is planned again
/// (under the plan's schedule) with that one pass moved, and predicted with the same times.
pub fn best_moves(plan: &Plan, pass_ns: &[u64]) -> Vec<Move> {
    let now = plan.predict(pass_ns).span_ns;
    let mut moves = Vec::new();
    for pass in 0..plan.input.passes.len() {
        let from = plan.input.passes[pass].queue;
        let mut best: Option<Move> = None;
        for to_queue in (0..plan.input.queues.len()).filter(|&q| q != from) {
            let mut input = plan.input.clone();
            input.passes[pass].queue = to_queue;
            // A queue that cannot run the pass is refused by the planner: no candidate.
            let Ok(moved) = plan_scheduled(&input, plan.schedule) else {
                continue;
            };
            let span_ns = moved.predict(pass_ns).span_ns;
            if span_ns < now && best.is_none_or(|b| span_ns < b.span_ns) {
                best = Some(Move {
                    pass,
                    to_queue,
                    span_ns,
                });
            }
        }
        moves.extend(best);
    }
    moves.sort_by_key(|m| (m.span_ns, m.pass));
    moves
}
