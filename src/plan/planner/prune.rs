//! Synchronization a batched plan already has: first the timeline waits, then the barrier
//! entries.
//!
//! A timeline wait is dropped when every dependency it was placed for is already ordered, with
//! its writes made visible, by the other waits of its queue up to its batch, through other
//! queues' signals and waits (see [`reach`] for the rules). The batches are decided in an order
//! where each comes after every batch it waits on, so that the reach of each signal is worked
//! out from waits already decided. A wait of a batch is dropped only if the waits left order
//! its dependencies and those of the batch's waits dropped before it. A dependency of a later
//! batch of the same submission is checked against the waits up to the wait's own batch only,
//! which are all decided then.
//!
//! A barrier entry is dropped when:
//!
//! 1. every access it orders its pass after is already ordered before the pass, with its
//!    writes made visible, by the semaphore waits of the pass's queue ([`reach`]);
//!    or
//! 2. it only orders (the pass reads no write that this entry alone makes visible), and each
//!    (source stage, destination stage) pair it needs is already given by those waits, by
//!    another entry of its command, or by an entry of a barrier command recorded between the
//!    prior access and the pass.
//!
//! Rule 2 holds because a barrier entry's *execution* dependency is not limited to its
//! resource: `VkBufferMemoryBarrier2` / `VkImageMemoryBarrier2` limit only the *access* scopes
//! to their range, while the synchronization scopes are every operation earlier (later) in
//! submission order in the source (destination) stages. The prior access is then in the other
//! entry's first scope and the pass in its second scope. Only single dependencies are followed,
//! never a chain through two barriers.
//!
//! Layout transitions and queue family ownership transfers are never dropped, nor used for rule
//! 2: they change the image or its owner, and a transfer's barrier is read without one of its
//! scopes. Host accesses keep their barrier: semaphores make writes available in the device
//! domain only.

use super::reach::{each_bit, expand, first_timeline_wait, Point, Reaches, Role};
use super::*;

/// Why the planner put a use's needs into a barrier entry: what dropping the entry must prove.
#[derive(Clone, Debug)]
pub(super) struct Why {
    pub(super) entry: EntryRef,
    /// Accesses of the entry's own queue that the use must come after (the others are ordered
    /// by semaphore waits the planner adds anyway): a range of the planner's `reason_priors`.
    pub(super) priors: std::ops::Range<usize>,
    /// The stages of the use.
    pub(super) dst: vk::PipelineStageFlags2,
    /// The last write, when no earlier barrier made it visible to the use: the entry's own
    /// visibility operation may be what makes it visible.
    pub(super) unseen: Option<Rec>,
    /// A layout transition, an ownership transfer, a host access or a binary wait's guard:
    /// never dropped.
    pub(super) keep: bool,
}

/// The reasons of one barrier command of the batched plan.
#[derive(Debug)]
pub(super) struct CommandWhy {
    pub(super) queue: usize,
    pub(super) batch: usize,
    pub(super) command: usize,
    /// Its reasons: a range of the planner's `reasons`.
    pub(super) whys: std::ops::Range<usize>,
}

/// One barrier command being decided.
struct Cmd<'a> {
    why: &'a CommandWhy,
    /// The command's reasons.
    whys: &'a [Why],
    barrier: &'a BarrierCmd,
    /// Per entry, images first: its scopes as single-stage bits, `None` for an ownership
    /// transfer (never relied on).
    pairs: SmallVec<[Option<(u64, u64)>; 8]>,
    /// Per entry: dropped.
    gone: SmallVec<[bool; 8]>,
    /// Per entry: another entry was dropped because of it, so it stays.
    pinned: SmallVec<[bool; 8]>,
}

impl<'a> Cmd<'a> {
    fn new(why: &'a CommandWhy, whys: &'a [Why], barrier: &'a BarrierCmd) -> Self {
        let pair = |s: &Scopes| {
            s.families.is_none_or(|(a, b)| a == b).then(|| {
                (
                    expand(s.src_stages, Role::First),
                    expand(s.dst_stages, Role::Second),
                )
            })
        };
        // Pushed one by one: collecting through the chained iterators costs more.
        let mut cmd = Cmd {
            why,
            whys,
            barrier,
            pairs: SmallVec::new(),
            gone: SmallVec::new(),
            pinned: SmallVec::new(),
        };
        for b in &barrier.images {
            cmd.pairs.push(pair(&b.scopes));
        }
        for b in &barrier.buffers {
            cmd.pairs.push(pair(&b.scopes));
        }
        for _ in 0..cmd.pairs.len() {
            cmd.gone.push(false);
            cmd.pinned.push(false);
        }
        cmd
    }

    /// Where the command is: (queue, batch, command).
    fn place(&self) -> (usize, usize, usize) {
        (self.why.queue, self.why.batch, self.why.command)
    }

    fn count(&self) -> usize {
        self.pairs.len()
    }

    fn entry(&self, i: usize) -> EntryRef {
        let n = self.barrier.images.len();
        if i < n {
            EntryRef::Image(i)
        } else {
            EntryRef::Buffer(i - n)
        }
    }

    /// Whether entry `j` is kept and orders source stage bit `s` before destination bit `t`.
    fn gives(&self, j: usize, s: usize, t: usize) -> bool {
        !self.gone[j] && self.pairs[j].is_some_and(|(a, b)| a >> s & 1 == 1 && b >> t & 1 == 1)
    }

    /// Whether entry `j` stays whatever rule 2 finds: pinned, or with no reason to drop it.
    fn stays(&self, j: usize) -> bool {
        self.pinned[j] || whys_of(self.whys, self.entry(j)).all(|w| w.keep)
    }

    /// How many (source, destination) stage pairs entry `j` orders.
    fn weight(&self, j: usize) -> u32 {
        self.pairs[j].map_or(u32::MAX, |(s, d)| s.count_ones() * d.count_ones())
    }
}

/// Whether no entry of a command with reasons `whys` can go, where `waits` tells whether its
/// queue has a timeline wait by its batch: without one, only rule 2 for an entry that makes
/// no write visible can hold.
fn hopeless(whys: &[Why], waits: bool) -> bool {
    (whys.iter()).all(|w| w.keep || w.priors.is_empty() || (!waits && w.unseen.is_some()))
}

/// The reasons of entry `e` of a command.
fn whys_of(whys: &[Why], e: EntryRef) -> std::iter::Peekable<impl Iterator<Item = &Why>> {
    whys.iter().filter(move |w| w.entry == e).peekable()
}

/// Per single-stage source bit, the destination stages that the kept entries of `bc` order
/// after it. Ownership transfers are left out.
fn pairs(bc: &BarrierCmd, gone: Option<&[bool]>, into: &mut [u64; 64]) {
    let scopes = bc
        .images
        .iter()
        .map(|b| b.scopes)
        .chain(bc.buffers.iter().map(|b| b.scopes));
    for (i, s) in scopes.enumerate() {
        let kept = !gone.is_some_and(|g| g[i]);
        if kept && s.families.is_none_or(|(a, b)| a == b) {
            let dst = expand(s.dst_stages, Role::Second);
            for b in each_bit(expand(s.src_stages, Role::First)) {
                into[b] |= dst;
            }
        }
    }
}

impl Planner<'_> {
    /// Drops the barrier entries the plan already has (see the module docs), and the barrier
    /// commands left empty.
    pub(super) fn drop_redundant(&mut self, queues: &mut [QueuePlan]) {
        // Found before the reach of every batch is worked out: in most plans of one queue,
        // no wait and no barrier entry could go.
        if self.wait_serves.is_empty() && self.no_entry_can_go(queues) {
            return;
        }
        let mut reaches = Reaches::new(queues, &self.pass_stages);
        self.drop_redundant_waits(queues, &mut reaches);
        let whys = std::mem::take(&mut self.whys);
        let reasons = std::mem::take(&mut self.reasons);
        if whys.is_empty() {
            return;
        }
        let drops = self.decide_entries(queues, &mut reaches, &whys, &reasons);
        remove_entries(queues, drops);
    }

    /// Decides which entries of each barrier command of `whys` go, with its `reasons`.
    /// Returns (queue, batch, command, per entry: dropped) for the commands that lose some.
    fn decide_entries(
        &self,
        queues: &[QueuePlan],
        reaches: &mut Reaches,
        whys: &[CommandWhy],
        reasons: &[Why],
    ) -> Vec<(usize, usize, usize, SmallVec<[bool; 8]>)> {
        // In submission order per queue, so that rule 2 sees earlier commands decided (and
        // finds them by their place: `whys` is in that order).
        let mut decided: Vec<Cmd> = Vec::with_capacity(whys.len());
        for cw in whys {
            let Command::Barrier(barrier) =
                &queues[cw.queue].batches[cw.batch].commands[cw.command]
            else {
                continue;
            };
            let cw_whys = &reasons[cw.whys.clone()];
            if hopeless(cw_whys, reaches.waits_by(cw.queue, cw.batch)) {
                continue;
            }
            let mut cmd = Cmd::new(cw, cw_whys, barrier);
            self.drop_by_waits(reaches, &mut cmd);
            self.drop_by_barriers(queues, reaches, &decided, &mut cmd);
            decided.push(cmd);
        }
        decided
            .into_iter()
            .filter(|c| c.gone.contains(&true))
            .map(|c| (c.why.queue, c.why.batch, c.why.command, c.gone))
            .collect()
    }

    /// Whether every barrier command is [`hopeless`]: then no entry can go.
    fn no_entry_can_go(&self, queues: &[QueuePlan]) -> bool {
        let first_wait: SmallVec<[usize; 4]> = queues.iter().map(first_timeline_wait).collect();
        (self.whys.iter()).all(|cw| {
            let waits = cw.batch >= first_wait[cw.queue];
            hopeless(&self.reasons[cw.whys.clone()], waits)
        })
    }

    /// Rule 1: drops each entry of `cmd` whose reasons' prior accesses the semaphore waits
    /// already order before the pass, with their writes made visible.
    fn drop_by_waits(&self, reaches: &mut Reaches, cmd: &mut Cmd) {
        let (q, b, cw_whys) = (cmd.why.queue, cmd.why.batch, cmd.whys);
        for i in 0..cmd.count() {
            let mut whys = whys_of(cw_whys, cmd.entry(i));
            cmd.gone[i] = whys.peek().is_some()
                && whys.all(|w| {
                    !w.keep
                        && !w.priors.is_empty()
                        && w.unseen.is_none_or(|x| x.binary_wait.is_none())
                        && self.priors_of(w).iter().all(|x| {
                            self.point(x).is_some_and(|at| {
                                reaches.orders(q, b, x.queue, at, x.stages, w.dst)
                            })
                        })
                });
        }
    }

    /// Rule 2: drops each entry of `cmd` that only orders what the waits, its command's other
    /// entries (which then stay) and the `earlier` commands between already order.
    fn drop_by_barriers(
        &self,
        queues: &[QueuePlan],
        reaches: &mut Reaches,
        earlier: &[Cmd],
        cmd: &mut Cmd,
    ) {
        let cw_whys = cmd.whys;
        // Narrow entries first, so that they are the ones dropped and wide ones stay.
        let mut order: SmallVec<[usize; 8]> = SmallVec::new();
        for i in 0..cmd.count() {
            order.push(i);
        }
        order.sort_by_key(|&i| cmd.weight(i));
        for i in order {
            let mut whys = whys_of(cw_whys, cmd.entry(i));
            if cmd.gone[i] || cmd.pinned[i] || whys.peek().is_none() {
                continue;
            }
            // The entries of this command it relies on, which must then stay.
            let mut used: SmallVec<[bool; 8]> = smallvec::smallvec![false; cmd.count()];
            let drop =
                whys.all(|w| self.only_orders(queues, reaches, earlier, cmd, i, w, &mut used));
            if drop {
                cmd.gone[i] = true;
                for (p, u) in cmd.pinned.iter_mut().zip(used) {
                    *p |= u;
                }
            }
        }
    }

    /// Rule 2 for one reason of entry `i` of `cmd`. The entries of the command it relies on
    /// are marked in `used`.
    #[allow(clippy::too_many_arguments)]
    fn only_orders(
        &self,
        queues: &[QueuePlan],
        reaches: &mut Reaches,
        decided: &[Cmd],
        cmd: &Cmd,
        i: usize,
        w: &Why,
        used: &mut [bool],
    ) -> bool {
        let (q, b) = (cmd.why.queue, cmd.why.batch);
        let dst = expand(w.dst, Role::Second);
        if w.keep || w.priors.is_empty() || dst == 0 {
            return false;
        }
        // A write the pass must see that this entry may be the one to make visible: only a
        // semaphore chain (whose wait makes every write visible to its stages) replaces it.
        if let Some(x) = &w.unseen {
            let seen = self
                .point(x)
                .is_some_and(|at| reaches.orders(q, b, x.queue, at, x.stages, w.dst));
            if !seen {
                return false;
            }
        }
        // What the other entries of the command could give at most.
        let mut same = [0u64; 64];
        for (j, p) in cmd.pairs.iter().enumerate() {
            if let Some((src, d)) = p.filter(|_| j != i && !cmd.gone[j]) {
                for s in each_bit(src) {
                    same[s] |= d;
                }
            }
        }
        self.priors_of(w).iter().all(|x| {
            let stages = expand(x.stages, Role::Op);
            let Some(at) = self.point(x).filter(|_| stages != 0) else {
                return false;
            };
            let by_waits = reaches.ordered(q, b, x.queue, at, stages);
            let mut between = [0u64; 64];
            let enough = |between: &[u64; 64]| {
                each_bit(stages).all(|s| (by_waits[s] | same[s] | between[s]) & dst == dst)
            };
            // Barrier commands between the prior access and this one, latest first.
            // The pass taken at (or just before the release at) that position.
            let prior_pass = match x.at {
                At::Node(p) => Some(self.order[((p - 2) / 2) as usize]),
                At::Value(_) => None,
            };
            let batches = &queues[q].batches;
            'scan: for d in (0..=b).rev() {
                let end = if d == b {
                    cmd.why.command
                } else {
                    batches[d].commands.len()
                };
                for k in (0..end).rev() {
                    if enough(&between) {
                        break 'scan;
                    }
                    match &batches[d].commands[k] {
                        Command::Pass(p) if Some(*p) == prior_pass => break 'scan,
                        Command::Pass(_) => {}
                        Command::Barrier(bc) => {
                            let gone = decided
                                .binary_search_by_key(&(q, d, k), Cmd::place)
                                .ok()
                                .map(|c| &decided[c].gone[..]);
                            pairs(bc, gone, &mut between);
                        }
                    }
                }
            }
            if !enough(&between) {
                return false;
            }
            // Each pair the waits and the barriers between leave: one entry of this command
            // gives it (one that stays anyway if there is one) and must stay.
            each_bit(stages).all(|s| {
                each_bit(dst & !(by_waits[s] | between[s])).all(|t| {
                    let givers = (0..cmd.count()).filter(|&j| j != i && cmd.gives(j, s, t));
                    let pick = givers
                        .clone()
                        .find(|&j| used[j] || cmd.stays(j))
                        .or_else(|| givers.max_by_key(|&j| cmd.weight(j)));
                    pick.map(|j| used[j] = true).is_some()
                })
            })
        })
    }

    /// The prior accesses of reason `w`.
    fn priors_of(&self, w: &Why) -> &[Rec] {
        &self.reason_priors[w.priors.clone()]
    }

    /// Where a remembered access lies in the batched plan.
    fn point(&self, x: &Rec) -> Option<Point> {
        self.point_at(x.queue, x.at)
    }

    /// Where work of `queue` at `at` lies in the batched plan.
    pub(super) fn point_at(&self, queue: usize, at: At) -> Option<Point> {
        match at {
            At::Value(v) => Some(Point::Value(v)),
            At::Node(p) => {
                let (positions, batches) = &self.batched[queue];
                let i = positions.binary_search(&p).ok()?;
                Some(Point::Batch(batches[i]))
            }
        }
    }
}

impl Planner<'_> {
    /// Drops the timeline waits the plan already has, and records them as gone in `reaches`.
    fn drop_redundant_waits(&mut self, queues: &mut [QueuePlan], reaches: &mut Reaches) {
        let serves = std::mem::take(&mut self.wait_serves);
        if serves.is_empty() {
            return;
        }
        let Some(order) = reaches.topological() else {
            return;
        };
        // Each batch's waits (by index) and their dependencies: `serves` is in batch order
        // per queue, each batch's waits in order.
        debug_assert!(serves
            .windows(2)
            .all(|p| (p[0].0, p[0].1, p[0].2) < (p[1].0, p[1].1, p[1].2)));
        let mut gone: Vec<(usize, usize, usize)> = Vec::new();
        for (q, b) in order {
            let first = serves.partition_point(|x| (x.0, x.1) < (q, b));
            let waits = serves[first..].iter().take_while(|x| (x.0, x.1) == (q, b));
            // The dependencies of the waits of this batch dropped so far: the waits left must
            // still order them.
            let mut dropped: Vec<&Dep> = Vec::new();
            for (_, _, w, deps) in waits {
                if !reaches.other_waits(q, b, *w) {
                    continue;
                }
                reaches.set_live(q, b, *w, false);
                let implied = deps.iter().chain(dropped.iter().copied()).all(|d| {
                    self.point_at(d.queue, d.at).is_some_and(|at| {
                        reaches.orders(q, b, d.queue, at, d.src_stages.get(), d.wait_stages.get())
                    })
                });
                if implied {
                    gone.push((q, b, *w));
                    dropped.extend(deps);
                } else {
                    reaches.set_live(q, b, *w, true);
                }
            }
        }
        // Highest index first, so that removing one keeps the others' indices.
        gone.sort_unstable();
        for (q, b, w) in gone.into_iter().rev() {
            queues[q].batches[b].waits.remove(w);
        }
    }
}

/// Removes the dropped entries of each command in `drops` (queue, batch, command, per entry:
/// dropped), and the commands left empty.
fn remove_entries(
    queues: &mut [QueuePlan],
    drops: Vec<(usize, usize, usize, SmallVec<[bool; 8]>)>,
) {
    // Commands in descending order, so that removing one keeps the others' indices.
    for (q, b, c, gone) in drops.into_iter().rev() {
        let commands = &mut queues[q].batches[b].commands;
        let Command::Barrier(bc) = &mut commands[c] else {
            continue;
        };
        let n = bc.images.len();
        let mut i = 0;
        bc.images.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
        let mut i = n;
        bc.buffers.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
        if bc.is_empty() {
            commands.remove(c);
        }
    }
}
