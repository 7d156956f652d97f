//! What the semaphores of a batched plan already order: for each batch that signals, the work of
//! every queue that happens-before its signal, and for a point of a queue, what that queue's
//! waits so far order before it and make visible to it.
//!
//! The rules, from the synchronization chapter of the specification (*Semaphore Signaling* and
//! *Semaphore Waiting*, with `vkQueueSubmit2`):
//!
//! - A signal's first synchronization scope is every command of its batch and every command
//!   earlier in submission order, limited to its stage mask, plus every semaphore signal
//!   operation earlier in signal operation order. Its first access scope is all memory access
//!   performed by the device.
//! - A wait's second synchronization scope is every command of its batch and every command later
//!   in submission order, limited to its stage mask. Its second access scope is all memory
//!   access performed by the device.
//! - An execution dependency chain continues from a wait into a later signal of the same queue
//!   only where the wait's second scope and the signal's first scope share operations. This
//!   module asks for more than a shared stage: a pass between the two (from the wait's batch to
//!   the signal's) must run in a stage both masks hold. Barriers are not followed at all. Both
//!   can only make it find less than there is.
//!
//! So a write in a chain's first scope is made available by the first signal and visible to
//! every access type in the last wait's stages: a barrier entry whose every prior access is in
//! such a chain, ending at stages that hold the entry's second scope, orders nothing new.

use super::*;
use std::rc::Rc;
use vk::PipelineStageFlags2 as S;

/// Group stage bits, replaced by their members.
const GROUPS: u64 = S::TOP_OF_PIPE.as_raw()
    | S::BOTTOM_OF_PIPE.as_raw()
    | S::ALL_COMMANDS.as_raw()
    | S::ALL_GRAPHICS.as_raw()
    | S::ALL_TRANSFER.as_raw()
    | S::VERTEX_INPUT.as_raw()
    | S::PRE_RASTERIZATION_SHADERS.as_raw();

/// `ALL_COMMANDS`: every stage of every command. Not `HOST`, which no queue command runs in.
const EVERY: u64 = !(GROUPS | S::HOST.as_raw());

/// The members the specification lists for `ALL_TRANSFER`, `VERTEX_INPUT`,
/// `PRE_RASTERIZATION_SHADERS` and `ALL_GRAPHICS`.
const TRANSFER: u64 = S::COPY.as_raw()
    | S::BLIT.as_raw()
    | S::RESOLVE.as_raw()
    | S::CLEAR.as_raw()
    | S::ACCELERATION_STRUCTURE_COPY_KHR.as_raw();
const VERTEX_INPUT: u64 = S::INDEX_INPUT.as_raw() | S::VERTEX_ATTRIBUTE_INPUT.as_raw();
const PRE_RASTER: u64 = S::VERTEX_SHADER.as_raw()
    | S::TESSELLATION_CONTROL_SHADER.as_raw()
    | S::TESSELLATION_EVALUATION_SHADER.as_raw()
    | S::GEOMETRY_SHADER.as_raw()
    | S::TASK_SHADER_EXT.as_raw()
    | S::MESH_SHADER_EXT.as_raw();
const GRAPHICS: u64 = S::DRAW_INDIRECT.as_raw()
    | VERTEX_INPUT
    | PRE_RASTER
    | S::FRAGMENT_SHADER.as_raw()
    | S::EARLY_FRAGMENT_TESTS.as_raw()
    | S::LATE_FRAGMENT_TESTS.as_raw()
    | S::COLOR_ATTACHMENT_OUTPUT.as_raw()
    | S::CONDITIONAL_RENDERING_EXT.as_raw()
    | S::TRANSFORM_FEEDBACK_EXT.as_raw()
    | S::FRAGMENT_SHADING_RATE_ATTACHMENT_KHR.as_raw()
    | S::FRAGMENT_DENSITY_PROCESS_EXT.as_raw();

/// Which role a stage mask plays: sync2 `TOP_OF_PIPE` means no stage in a first scope and all
/// in a second; `BOTTOM_OF_PIPE` the reverse; an operation runs in neither.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Op,
    First,
    Second,
}

/// `mask` as single-stage bits.
pub(super) fn expand(mask: vk::PipelineStageFlags2, role: Role) -> u64 {
    let m = mask.as_raw();
    let all = m & S::ALL_COMMANDS.as_raw() != 0
        || (role == Role::First && m & S::BOTTOM_OF_PIPE.as_raw() != 0)
        || (role == Role::Second && m & S::TOP_OF_PIPE.as_raw() != 0);
    if all {
        return EVERY | (m & S::HOST.as_raw());
    }
    let mut out = m & !GROUPS;
    for (group, members) in [
        (S::ALL_TRANSFER, TRANSFER),
        (S::VERTEX_INPUT, VERTEX_INPUT),
        (S::PRE_RASTERIZATION_SHADERS, PRE_RASTER),
        (S::ALL_GRAPHICS, GRAPHICS),
    ] {
        if m & group.as_raw() != 0 {
            out |= members;
        }
    }
    out
}

/// Work known to happen-before some point, with its writes available there.
#[derive(Clone, Debug, Default)]
pub(super) struct Reach {
    /// (queue, earlier-execution timeline value): everything that queue did up to that value.
    values: SmallVec<[(usize, u64); 4]>,
    /// (queue, batch, stages): the work of that queue's batches up to this one, in those
    /// stages. No term holds another.
    batches: SmallVec<[(usize, usize, u64); 4]>,
}

impl Reach {
    fn add_value(&mut self, queue: usize, value: u64) {
        match self.values.iter_mut().find(|v| v.0 == queue) {
            Some(v) => v.1 = v.1.max(value),
            None => self.values.push((queue, value)),
        }
    }

    /// Adds the work of `queue`'s batches up to `batch` in `stages`.
    fn add_batches(&mut self, queue: usize, batch: usize, stages: u64) {
        if self
            .batches
            .iter()
            .any(|&(q, b, s)| q == queue && b >= batch && s & stages == stages)
        {
            return;
        }
        self.batches
            .retain(|&mut (q, b, s)| !(q == queue && b <= batch && s & stages == s));
        self.batches.push((queue, batch, stages));
    }

    fn add(&mut self, other: &Reach) {
        for &(q, v) in &other.values {
            self.add_value(q, v);
        }
        for &(q, b, s) in &other.batches {
            self.add_batches(q, b, s);
        }
    }

    /// The stages (of `stages`) at which the work of `queue` at `at` (a batch of this execution,
    /// or an earlier execution's timeline value) is reached.
    fn stages_of(&self, queue: usize, at: Point, stages: u64) -> u64 {
        match at {
            Point::Value(v) => {
                let done = self.values.iter().any(|&(q, r)| q == queue && r >= v);
                // A host access is no work of the queue: no signal holds it.
                if done {
                    stages & !S::HOST.as_raw()
                } else {
                    0
                }
            }
            Point::Batch(k) => self
                .batches
                .iter()
                .filter(|&&(q, b, _)| q == queue && b >= k)
                .fold(0, |acc, &(_, _, s)| acc | (s & stages)),
        }
    }
}

/// Where an access happened, as the batched plan sees it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Point {
    /// In an earlier execution, done once the queue's timeline reaches the value.
    Value(u64),
    /// In this execution's batch of that index.
    Batch(usize),
}

/// The waits and signal of one batch, and the stages its passes run in.
#[derive(Debug)]
struct BatchSync {
    waits: SmallVec<[Wait; 2]>,
    /// Per wait on an earlier execution's value or on a binary semaphore: what it orders.
    fixed: SmallVec<[Option<Rc<Reach>>; 2]>,
    /// Per wait: still in the plan.
    live: SmallVec<[bool; 2]>,
    signal: Option<vk::PipelineStageFlags2>,
    ops: u64,
}

/// The reach of every signal of a batched plan, worked out as asked.
pub(super) struct Reaches {
    /// Per queue, per batch.
    batches: Vec<Vec<BatchSync>>,
    /// Per queue, per batch that signals: what happens-before the signal.
    signals: Vec<Vec<Option<Rc<Reach>>>>,
    /// Per queue: batches before this index are worked out.
    done: Vec<usize>,
    /// Per queue: the running reach of its signals, and its waits not yet in it (batch, index,
    /// stages their passes since ran in).
    running: Vec<(Reach, Pending)>,
    /// Per queue, per batch `b`: what the waits of batches before `b` order, by their stage
    /// masks (single-stage bits).
    waited: Vec<Vec<Option<Waited>>>,
    /// Per queue: its first batch with a timeline wait.
    first_wait: Vec<usize>,
}

/// Waits not yet in a queue's running reach: (batch, index, stages its passes since ran in).
type Pending = Vec<(usize, usize, u64)>;

/// Reaches of waits, merged per second-scope mask.
type Waited = Rc<Vec<(u64, Rc<Reach>)>>;

impl Reaches {
    pub(super) fn new(queues: &[QueuePlan], pass_stages: &[vk::PipelineStageFlags2]) -> Self {
        let batches: Vec<Vec<BatchSync>> = queues
            .iter()
            .map(|q| {
                q.batches
                    .iter()
                    .map(|b| BatchSync {
                        waits: b.waits.iter().copied().collect(),
                        fixed: b
                            .waits
                            .iter()
                            .map(|w| match w.target {
                                WaitTarget::Batch { .. } => None,
                                WaitTarget::Value { queue, value } => {
                                    let mut r = Reach::default();
                                    r.add_value(queue, value);
                                    Some(Rc::new(r))
                                }
                                // An external semaphore: nothing the plan knows of.
                                WaitTarget::Binary(_) => Some(Rc::default()),
                            })
                            .collect(),
                        live: b.waits.iter().map(|_| true).collect(),
                        signal: b.signal,
                        ops: b.commands.iter().fold(0, |acc, c| match c {
                            Command::Pass(i) => acc | expand(pass_stages[*i], Role::Op),
                            Command::Barrier(_) => acc,
                        }),
                    })
                    .collect()
            })
            .collect();
        let n = queues.len();
        Reaches {
            signals: batches.iter().map(|b| vec![None; b.len()]).collect(),
            waited: batches.iter().map(|b| vec![None; b.len() + 1]).collect(),
            first_wait: queues.iter().map(first_timeline_wait).collect(),
            batches,
            done: vec![0; n],
            running: (0..n)
                .map(|q| {
                    let mut r = Reach::default();
                    // A signal of this execution follows every earlier signal of its queue.
                    r.add_value(q, u64::MAX);
                    // `Recorded::value == Some(0)`: work the app synchronized with every other
                    // queue itself.
                    for other in (0..n).filter(|&o| o != q) {
                        r.add_value(other, 0);
                    }
                    (r, Vec::new())
                })
                .collect(),
        }
    }

    /// Takes wait `wait` of batch `batch` of `queue` out of the plan (`false`) or puts it back.
    /// Only for a batch whose signals no reach worked out so far has followed.
    pub(super) fn set_live(&mut self, queue: usize, batch: usize, wait: usize, live: bool) {
        debug_assert!(self.done[queue] <= batch);
        self.batches[queue][batch].live[wait] = live;
    }

    /// The batches in an order where each comes after the batches its waits wait on and after
    /// the earlier batches of its queue; `None` if there is none (a plan that would deadlock).
    pub(super) fn topological(&self) -> Option<Vec<(usize, usize)>> {
        let mut next: Vec<usize> = vec![0; self.batches.len()];
        let total: usize = self.batches.iter().map(Vec::len).sum();
        let mut order = Vec::with_capacity(total);
        while order.len() < total {
            let before = order.len();
            for q in 0..self.batches.len() {
                while let Some(b) = self.batches[q].get(next[q]) {
                    let ready = b.waits.iter().all(|w| match w.target {
                        WaitTarget::Batch { queue, batch } => next[queue] > batch,
                        _ => true,
                    });
                    if !ready {
                        break;
                    }
                    order.push((q, next[q]));
                    next[q] += 1;
                }
            }
            if order.len() == before {
                return None;
            }
        }
        Some(order)
    }

    /// What happens-before the signal of batch `batch` of `queue` (which must signal).
    fn signal(&mut self, queue: usize, batch: usize) -> Rc<Reach> {
        while self.done[queue] <= batch {
            let c = self.done[queue];
            self.done[queue] += 1;
            let ops = self.batches[queue][c].ops;
            let mut pending = std::mem::take(&mut self.running[queue].1);
            let live = &self.batches[queue][c].live;
            pending.extend((0..live.len()).filter(|&w| live[w]).map(|w| (c, w, 0)));
            for p in &mut pending {
                p.2 |= ops;
            }
            if let Some(mask) = self.batches[queue][c].signal {
                // A host access is no work of the queue: no signal holds it.
                let first = expand(mask, Role::First) & !S::HOST.as_raw();
                self.running[queue].0.add_batches(queue, c, first);
                let mut kept = Vec::with_capacity(pending.len());
                for (d, w, ran) in pending {
                    let wait = self.batches[queue][d].waits[w];
                    if expand(wait.stages, Role::Second) & first & ran == 0 {
                        kept.push((d, w, ran));
                        continue;
                    }
                    let reach = self.of_wait(queue, d, w);
                    self.running[queue].0.add(&reach);
                }
                pending = kept;
                self.signals[queue][c] = Some(Rc::new(self.running[queue].0.clone()));
            }
            self.running[queue].1 = pending;
        }
        self.signals[queue][batch].clone().unwrap_or_default()
    }

    /// What wait `wait` of batch `batch` of `queue` orders after it.
    fn of_wait(&mut self, queue: usize, batch: usize, wait: usize) -> Rc<Reach> {
        let b = &self.batches[queue][batch];
        match (&b.fixed[wait], b.waits[wait].target) {
            (Some(r), _) => r.clone(),
            (None, WaitTarget::Batch { queue, batch }) => self.signal(queue, batch),
            (None, _) => Rc::default(),
        }
    }

    /// Per single-stage bit `s` of `stages` (bit position), the stages of batch `batch` of
    /// `queue` (and later work) that the queue's waits so far order the work of `prior_queue`
    /// at `at` in `s` before, with its writes visible to every access there.
    pub(super) fn ordered(
        &mut self,
        queue: usize,
        batch: usize,
        prior_queue: usize,
        at: Point,
        stages: u64,
    ) -> [u64; 64] {
        let mut before = [0u64; 64];
        for (second, reached) in self.reached(queue, batch, prior_queue, at, stages) {
            for s in each_bit(reached) {
                before[s] |= second;
            }
        }
        before
    }

    /// Per wait of `queue` up to batch `batch` (the waits of earlier batches merged per stage
    /// mask): its second scope (single-stage bits), and the stages of `stages` at which it
    /// reaches the work of `prior_queue` at `at`. Waits that reach none of it are left out.
    fn reached(
        &mut self,
        queue: usize,
        batch: usize,
        prior_queue: usize,
        at: Point,
        stages: u64,
    ) -> SmallVec<[(u64, u64); 8]> {
        let mut out = SmallVec::new();
        if batch < self.first_wait[queue]
            || (prior_queue == queue && matches!(at, Point::Batch(k) if k >= batch))
        {
            // No timeline wait yet, or work of this batch (or later), which no wait of this
            // queue comes after.
            return out;
        }
        let mut note = |second: u64, reach: &Reach| {
            let reached = reach.stages_of(prior_queue, at, stages);
            if reached != 0 {
                out.push((second, reached));
            }
        };
        for (second, reach) in self.waited(queue, batch).iter() {
            note(*second, reach);
        }
        // This batch's own waits, which may still be being decided.
        for w in 0..self.batches[queue][batch].waits.len() {
            if self.batches[queue][batch].live[w] {
                let wait = self.batches[queue][batch].waits[w];
                note(
                    expand(wait.stages, Role::Second),
                    &self.of_wait(queue, batch, w),
                );
            }
        }
        out
    }

    /// Whether batch `batch` of `queue` has a live wait other than `wait`, or a batch before it
    /// has one: whether anything but `wait` could order work before the batch.
    pub(super) fn other_waits(&self, queue: usize, batch: usize, wait: usize) -> bool {
        batch > self.first_wait[queue]
            || self.batches[queue][batch]
                .live
                .iter()
                .enumerate()
                .any(|(w, &l)| l && w != wait)
    }

    /// Whether `queue` has a timeline wait in a batch up to `batch`.
    pub(super) fn waits_by(&self, queue: usize, batch: usize) -> bool {
        batch >= self.first_wait[queue]
    }

    /// What the waits of the batches of `queue` before `batch` order (all decided).
    fn waited(&mut self, queue: usize, batch: usize) -> Waited {
        if let Some(w) = &self.waited[queue][batch] {
            return w.clone();
        }
        let w = if batch == 0 {
            Waited::default()
        } else {
            let mut acc = self.waited(queue, batch - 1);
            for w in 0..self.batches[queue][batch - 1].waits.len() {
                if !self.batches[queue][batch - 1].live[w] {
                    continue;
                }
                let wait = self.batches[queue][batch - 1].waits[w];
                let second = expand(wait.stages, Role::Second);
                let reach = self.of_wait(queue, batch - 1, w);
                let list = Rc::make_mut(&mut acc);
                match list.iter_mut().find(|(m, _)| *m == second) {
                    Some((_, r)) => Rc::make_mut(r).add(&reach),
                    None => list.push((second, reach)),
                }
            }
            acc
        };
        self.waited[queue][batch] = Some(w.clone());
        w
    }

    /// Whether the waits of `queue` in batches up to `batch` order the work of `prior_queue` at
    /// `at`, in `stages`, before every stage of `dst`, and make its writes visible there.
    pub(super) fn orders(
        &mut self,
        queue: usize,
        batch: usize,
        prior_queue: usize,
        at: Point,
        stages: vk::PipelineStageFlags2,
        dst: vk::PipelineStageFlags2,
    ) -> bool {
        let stages = expand(stages, Role::Op);
        let dst = expand(dst, Role::Second);
        if stages == 0 || dst == 0 || dst & S::HOST.as_raw() != 0 {
            return false;
        }
        let reached = self.reached(queue, batch, prior_queue, at, stages);
        // Usually one wait alone orders each stage before all of `dst`.
        let alone = (reached.iter())
            .filter(|(second, _)| second & dst == dst)
            .fold(0, |acc, (_, r)| acc | r);
        each_bit(stages & !alone).all(|s| {
            let second = (reached.iter())
                .filter(|(_, r)| r >> s & 1 == 1)
                .fold(0, |acc, (second, _)| acc | second);
            second & dst == dst
        })
    }
}

/// The positions of the bits set in `mask`.
pub(super) fn each_bit(mask: u64) -> impl Iterator<Item = usize> {
    let mut bits = mask;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let s = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            s
        })
    })
}

/// The first batch of `queue` with a timeline wait (`usize::MAX`: none).
pub(super) fn first_timeline_wait(queue: &QueuePlan) -> usize {
    (queue.batches.iter())
        .position(|b| (b.waits.iter()).any(|w| !matches!(w.target, WaitTarget::Binary(_))))
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_masks_expand_as_the_specification_lists() {
        let all = expand(S::ALL_COMMANDS, Role::Op);
        assert_eq!(all & S::HOST.as_raw(), 0, "no command runs in HOST");
        assert_ne!(all & S::COMPUTE_SHADER.as_raw(), 0);
        assert_eq!(all & GROUPS, 0, "single stages only");
        assert_eq!(expand(S::TOP_OF_PIPE, Role::First), 0);
        assert_eq!(expand(S::TOP_OF_PIPE, Role::Second), all);
        assert_eq!(expand(S::BOTTOM_OF_PIPE, Role::First), all);
        assert_eq!(expand(S::BOTTOM_OF_PIPE, Role::Second), 0);
        assert_eq!(
            expand(S::ALL_TRANSFER, Role::Op),
            (S::COPY | S::BLIT | S::RESOLVE | S::CLEAR | S::ACCELERATION_STRUCTURE_COPY_KHR)
                .as_raw()
        );
        assert_ne!(
            expand(S::ALL_GRAPHICS, Role::Second) & S::INDEX_INPUT.as_raw(),
            0
        );
        assert_eq!(
            expand(S::ALL_GRAPHICS, Role::Second) & S::COMPUTE_SHADER.as_raw(),
            0
        );
    }
}
