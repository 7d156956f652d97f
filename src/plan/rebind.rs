//! Reusing a plan for a frame that declares the same thing again: [`Rebinder`].

use super::{Plan, PlanInput, Recorded, Schedule, SegmentState, WaitTarget};
use ash::vk;
use ash::vk::Handle;

/// How many executed plans a graph keeps for `finish()` to match a frame against with a
/// [`Rebinder`], the most recent first: a frame loop that cycles through at most this many
/// shapes reuses each one's plan; a shape not executed in the last `KEPT_PLANS` executions is
/// planned anew. The simulation and the random suite model the same cache.
pub const KEPT_PLANS: usize = 4;

/// Matches a new input against the one a plan was made from, and rewrites the plan for it.
///
/// The planner treats timeline values and binary semaphores as labels: it compares values of
/// one queue with each other (which is later, which is the same, and whether one is 0, "no
/// work yet"), keeps the highest value per queue in a wait, and copies values and semaphores
/// into its output. It never computes a new value. So when a new input differs from the one a
/// plan was made from only in
///
/// - names (of queues, resources and passes: they appear in labels and reports only),
/// - timeline values, through a map per queue that keeps their order and keeps 0 at 0, and
/// - binary semaphores, through a one-to-one map,
///
/// the planner's answer for the new input is the old plan with its values and semaphores
/// mapped the same way. [`Rebinder::rebind`] checks exactly that and rewrites the plan in place.
/// Everything else (queues, families, resource shapes, layouts, owners, stages, accesses,
/// ranges, uses, guards) must be equal, and the plan must have been made in program order
/// ([`Plan::schedule`], [`Plan::reordered`]): a reordered plan (even one whose order came out
/// unchanged, with its barriers regrouped) is never reused for program order.
///
/// The same holds for a [`Schedule`]: the scheduler's choices depend on the declarations only
/// (which passes conflict, which queue waits on which), never on values or semaphores, and
/// regrouping compares values of one queue only. [`Rebinder::rebind_scheduled`] reuses a plan
/// for a frame asked to be planned the way the plan was. The check walks both inputs once and allocates nothing
/// once its scratch lists have grown.
///
/// `tests/random_graphs.rs` checks the claim: across random graphs run frame after frame, a
/// rebound plan equals the planner's own answer every time.
///
/// Keep one and reuse it: its scratch space makes matching allocate nothing.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// // A buffer an earlier frame wrote on queue 0 at value 5; this frame reads it on queue 1.
/// let frame = |value: u64| {
///     let written = SegmentState {
///         defined: true,
///         write: Some(Recorded { queue: 0, value: Some(value),
///             stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
///             access: vk::AccessFlags2::SHADER_STORAGE_WRITE }),
///         ..SegmentState::default()
///     };
///     PlanInput {
///         queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
///                      QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
///         resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::STORAGE_BUFFER)
///             .concurrent().with_state(written)],
///         passes: vec![PassDecl::new("read", 1).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))],
///     }
/// };
/// let mut plan = plan_owned(frame(5)).unwrap();
/// let mut rebinder = Rebinder::default();
/// // The next frame: the same declarations, the write now at value 9.
/// let old_input = rebinder.rebind(&mut plan, frame(9)).unwrap();
/// assert_eq!(plan.queues, plan_owned(frame(9)).unwrap().queues);
/// assert_eq!(plan.queues[1].batches[0].waits[0].target, WaitTarget::Value { queue: 0, value: 9 });
/// assert_eq!(old_input.resources[0].initial, frame(5).resources[0].initial);
///
/// // Reading it on queue 0 instead is another plan: the input comes back unused.
/// let mut other = frame(10);
/// other.passes[0].queue = 0;
/// assert!(rebinder.rebind(&mut plan, other).is_err());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Rebinder {
    /// Per queue: (value in the plan's input, value in the new input).
    values: Vec<Vec<(u64, u64)>>,
    /// (semaphore in the plan's input, semaphore in the new input).
    semaphores: Vec<(u64, u64)>,
    /// The passes are the plan's own ([`Rebinder::rebind_states`]): every binary semaphore
    /// stands for itself, and `semaphores` is not filled.
    same_semaphores: bool,
    /// Per queue, the one value a rebind at rest moves and where to ((0, 0) for none).
    moves: Vec<(u64, u64)>,
}

/// Whether `plan` is the planner's answer to its own input under `schedule`: made with that
/// schedule, or a program-order plan (not reordered, nothing culled) for program order.
fn answers(plan: &Plan, schedule: Schedule) -> bool {
    plan.schedule == schedule
        || (schedule == Schedule::PROGRAM_ORDER && !plan.reordered && !plan.schedule.cull)
}

/// Maps the timeline value of every record in `states` by `value` (queue, value).
fn rewrite_values<'s>(
    states: impl Iterator<Item = &'s mut (std::ops::Range<u64>, SegmentState<usize>)>,
    value: impl Fn(usize, u64) -> u64,
) {
    let map = |r: &mut Recorded<usize>| {
        if let Some(v) = r.value {
            r.value = Some(value(r.queue, v));
        }
    };
    for (_, s) in states {
        if let Some(w) = &mut s.write {
            map(w);
        }
        s.reads.iter_mut().for_each(map);
    }
}

impl Rebinder {
    /// If the planner's answer for `input` is `plan` with values and semaphores mapped (see
    /// [`Rebinder`]), rewrites `plan` into that answer, moves `input` into it and
    /// returns the input the plan was made from (to refill next time). Otherwise leaves `plan`
    /// as it is and gives `input` back.
    pub fn rebind(&mut self, plan: &mut Plan, input: PlanInput) -> Result<PlanInput, PlanInput> {
        self.rebind_scheduled(plan, input, Schedule::PROGRAM_ORDER)
    }

    /// [`Rebinder::rebind`] for a frame planned with `schedule` ([`plan_scheduled`](super::plan_scheduled)): `plan`
    /// must be the answer to its own input under `schedule`, or a program-order plan when
    /// `schedule` is program order.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// // Two chains (a fill, then a copy of it), inserted chain after chain.
    /// let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
    ///     resources: ["a", "a'", "b", "b'"].iter().map(|n| ResourceDecl::buffer(n, 64, usage)).collect(),
    ///     passes: [0, 2].iter().flat_map(|&k| [
    ///         PassDecl::new("fill", 0).with_use(UseDecl::new(k, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("copy", 0).with_use(UseDecl::new(k, Access::COPY_READ))
    ///             .with_use(UseDecl::new(k + 1, Access::COPY_WRITE)),
    ///     ]).collect(),
    /// };
    /// let mut reordered = plan_scheduled(&input, Schedule::REORDER).unwrap();
    /// assert_eq!(reordered.order, [0, 2, 1, 3]);
    /// let mut rebinder = Rebinder::default();
    /// // Not the program-order answer:
    /// assert!(rebinder.rebind(&mut reordered, input.clone()).is_err());
    /// // The reordered answer, again:
    /// assert!(rebinder.rebind_scheduled(&mut reordered, input, Schedule::REORDER).is_ok());
    /// ```
    pub fn rebind_scheduled(
        &mut self,
        plan: &mut Plan,
        input: PlanInput,
        schedule: Schedule,
    ) -> Result<PlanInput, PlanInput> {
        self.rebind_answering(plan, input, schedule, true)
    }

    /// [`Rebinder::rebind`] for an input whose queues and passes are known to equal the
    /// plan's (a held plan, whose declarations are fixed): only the resources are compared.
    pub(crate) fn rebind_states(
        &mut self,
        plan: &mut Plan,
        input: PlanInput,
        schedule: Schedule,
    ) -> Result<PlanInput, PlanInput> {
        self.rebind_answering(plan, input, schedule, false)
    }

    /// Rebinds `plan` if it is the answer `schedule` gives (see [`answers`]); `declarations`:
    /// whether the queues and passes are compared too, or only the resources.
    fn rebind_answering(
        &mut self,
        plan: &mut Plan,
        input: PlanInput,
        schedule: Schedule,
        declarations: bool,
    ) -> Result<PlanInput, PlanInput> {
        if !self.answers_input(plan, &input, schedule, declarations) {
            return Err(input);
        }
        self.rewrite(plan);
        Ok(std::mem::replace(&mut plan.input, input))
    }

    /// Moves `plan` to the state its last execution left, when its input is the state an
    /// earlier execution of it left. Both are the plan's final states, with "this execution"
    /// read as each queue's last value of that execution: `from` for the input, `to` for the
    /// new state. So the new input is the plan's with each `from[q]` replaced by `to[q]`, a
    /// later value than every other of queue `q` in it: a map that keeps order and keeps 0 at
    /// 0, under which the planner's answer is the plan rewritten the same way (see
    /// [`Rebinder`]). Nothing is compared; `false` (the plan left as it is) if the two lists
    /// do not pair up.
    ///
    /// `declared`: for a frame with declarations of its own (a builder's), the schedule it
    /// asks for, and each binary semaphore of the plan's input with the frame's in its place;
    /// `None` for the plan's own declarations. The caller vouches that the frame declares
    /// what the plan's input does, semaphores aside, that every resource is in the state the
    /// last execution committed (the executor's `AtRest`), and that the plan's input is
    /// `from`'s state. The input's semaphores are the caller's to rewrite.
    pub(crate) fn rebind_at_rest(
        &mut self,
        plan: &mut Plan,
        (from, to): (&[Option<u64>], &[Option<u64>]),
        declared: Option<(
            Schedule,
            impl Iterator<Item = (vk::Semaphore, vk::Semaphore)>,
        )>,
    ) -> bool {
        self.semaphores.clear();
        self.same_semaphores = declared.is_none();
        if let Some((schedule, semaphores)) = declared {
            if !answers(plan, schedule) {
                return false;
            }
            let raw = semaphores.map(|(old, new)| (old.as_raw(), new.as_raw()));
            self.semaphores.extend(raw);
        }
        if from.len() != plan.input.queues.len() || to.len() != from.len() {
            return false;
        }
        let pairs_up = (from.iter().zip(to)).all(|pair| match pair {
            (Some(a), Some(b)) => a < b,
            (a, b) => a.is_none() && b.is_none(),
        });
        if !pairs_up || !self.settle_semaphores() {
            return false;
        }
        // `from[q]` is the one value of queue `q` that moves; the final states' own values
        // are earlier ones, carried from before, and stay. Looked up once per queue, not per
        // value.
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        moves.extend(
            from.iter()
                .zip(to)
                .map(|(a, b)| a.zip(*b).unwrap_or((0, 0))),
        );
        let value = |q: usize, v: u64| match moves.get(q) {
            Some(&(a, b)) if a == v => b,
            _ => v,
        };
        self.rewrite_waits(plan, value);
        for rd in &mut plan.input.resources {
            rewrite_values(rd.initial.iter_mut(), value);
        }
        self.moves = moves;
        true
    }

    /// Whether `new` declares what `old` does: the same queues (families, capabilities,
    /// extensions) and passes, binary semaphores aside. The runtime compares its flat
    /// declarations instead; the simulation models the at-rest tier with this.
    #[allow(
        dead_code,
        reason = "only the simulation calls it: unused in the core alone"
    )]
    pub(crate) fn same_declarations(&mut self, old: &PlanInput, new: &PlanInput) -> bool {
        let queues = (old.queues.len() == new.queues.len())
            && (old.queues.iter().zip(&new.queues)).all(|(a, b)| {
                a.family == b.family
                    && a.caps == b.caps
                    && a.transfers_use_all_stages == b.transfers_use_all_stages
                    && a.maintenance9 == b.maintenance9
            });
        self.semaphores.clear();
        queues
            && old.passes.len() == new.passes.len()
            && self.match_passes(&old.passes, &new.passes)
    }

    /// Whether `plan`, with values and semaphores mapped, is the answer to `input` under
    /// `schedule` (see [`Rebinder::rebind_answering`]). With `declarations`, whether
    /// [`Rebinder::rebind_scheduled`] would rebind `plan` to `input`, leaving `plan` as it is
    /// (the simulation asks so of each kept plan).
    pub(crate) fn answers_input(
        &mut self,
        plan: &Plan,
        input: &PlanInput,
        schedule: Schedule,
        declarations: bool,
    ) -> bool {
        answers(plan, schedule)
            && self.match_inputs(&plan.input, input, declarations)
            && self.settle()
            && self.maps_plan(plan)
    }

    /// Compares the inputs field by field (queues and passes only with `declarations`),
    /// collecting the value and semaphore pairs.
    fn match_inputs(&mut self, old: &PlanInput, new: &PlanInput, declarations: bool) -> bool {
        for v in &mut self.values {
            v.clear();
        }
        if self.values.len() < old.queues.len() {
            self.values.resize_with(old.queues.len(), Vec::new);
        }
        self.semaphores.clear();
        self.same_semaphores = !declarations;
        // Destructured in full, so that a field added to the input fails to compile here
        // until this check knows whether it matters.
        let PlanInput {
            queues,
            resources,
            passes,
        } = old;
        if queues.len() != new.queues.len()
            || resources.len() != new.resources.len()
            || passes.len() != new.passes.len()
        {
            return false;
        }
        let queues_match = queues.iter().zip(&new.queues).all(|(a, b)| {
            let super::QueueDecl {
                name: _,
                family,
                caps,
                transfers_use_all_stages,
                maintenance9,
            } = a;
            *family == b.family
                && *caps == b.caps
                && *transfers_use_all_stages == b.transfers_use_all_stages
                && *maintenance9 == b.maintenance9
        });
        if !queues_match {
            return false;
        }
        // The passes first: a frame of another shape (a graph keeps several plans) usually
        // differs there, before every resource's state is compared. Without `declarations`
        // the passes are the same, and each binary semaphore stands for itself
        // (`same_semaphores`).
        if declarations && !self.match_passes(passes, &new.passes) {
            return false;
        }
        self.match_resources(resources, &new.resources)
    }

    fn match_resources(
        &mut self,
        old: &[super::ResourceDecl],
        new: &[super::ResourceDecl],
    ) -> bool {
        for (a, b) in old.iter().zip(new) {
            let super::ResourceDecl {
                name: _,
                kind,
                concurrent,
                initial,
                transient,
            } = a;
            if *kind != b.kind
                || *concurrent != b.concurrent
                || *transient != b.transient
                || initial.len() != b.initial.len()
            {
                return false;
            }
            for ((ca, sa), (cb, sb)) in initial.iter().zip(&b.initial) {
                if ca != cb || !self.match_segment(sa, sb) {
                    return false;
                }
            }
        }
        true
    }

    fn match_passes(&mut self, old: &[super::PassDecl], new: &[super::PassDecl]) -> bool {
        for (a, b) in old.iter().zip(new) {
            let super::PassDecl {
                name: _,
                queue,
                uses,
                waits,
                signals,
            } = a;
            if *queue != b.queue
                || *uses != b.uses
                || waits.len() != b.waits.len()
                || signals.len() != b.signals.len()
            {
                return false;
            }
            for (wa, wb) in waits.iter().zip(&b.waits) {
                if wa.guards != wb.guards || wa.stages != wb.stages {
                    return false;
                }
                self.semaphores
                    .push((wa.semaphore.as_raw(), wb.semaphore.as_raw()));
            }
            for (sa, sb) in signals.iter().zip(&b.signals) {
                if sa.stages != sb.stages {
                    return false;
                }
                self.semaphores
                    .push((sa.semaphore.as_raw(), sb.semaphore.as_raw()));
            }
        }
        true
    }

    fn match_segment(&mut self, a: &SegmentState<usize>, b: &SegmentState<usize>) -> bool {
        let SegmentState {
            layout,
            defined,
            owner,
            write,
            reads,
            visible,
        } = a;
        if *layout != b.layout || *defined != b.defined || *owner != b.owner {
            return false;
        }
        let write_matches = match (write, &b.write) {
            (None, None) => true,
            (Some(x), Some(y)) => self.match_recorded(x, y),
            _ => false,
        };
        write_matches
            && *visible == b.visible
            && reads.len() == b.reads.len()
            && reads
                .iter()
                .zip(&b.reads)
                .all(|(x, y)| self.match_recorded(x, y))
    }

    fn match_recorded(&mut self, a: &Recorded<usize>, b: &Recorded<usize>) -> bool {
        if a.queue != b.queue || a.stages != b.stages || a.access != b.access {
            return false;
        }
        match (a.value, b.value) {
            (None, None) => true,
            (Some(x), Some(y)) if a.queue < self.values.len() => {
                // Most records of a frame name the same value of their queue (the last
                // frame's): a pair equal to the last one is not pushed again for `settle`.
                let pairs = &mut self.values[a.queue];
                if pairs.last() != Some(&(x, y)) {
                    pairs.push((x, y));
                }
                true
            }
            _ => false,
        }
    }

    /// Sorts the pairs and checks that they form order-keeping maps (0 to 0) for values and
    /// one-to-one maps for semaphores.
    fn settle(&mut self) -> bool {
        for pairs in &mut self.values {
            pairs.sort_unstable();
            pairs.dedup();
            // Sorted by old value, then new: a map keeps order when each next pair is strictly
            // later on both sides (an old value paired with two new ones fails too).
            let ordered = pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1);
            let zero_kept = pairs.iter().all(|&(x, y)| (x == 0) == (y == 0));
            if !ordered || !zero_kept {
                return false;
            }
        }
        self.settle_semaphores()
    }

    /// Sorts the semaphore pairs and checks that they form a one-to-one map.
    fn settle_semaphores(&mut self) -> bool {
        let s = &mut self.semaphores;
        s.sort_unstable();
        s.dedup();
        if s.windows(2).any(|w| w[0].0 == w[1].0) {
            return false;
        }
        // One-to-one: no new semaphore stands for two old ones.
        s.sort_unstable_by_key(|&(_, new)| new);
        let injective = s.windows(2).all(|w| w[0].1 != w[1].1);
        s.sort_unstable();
        injective
    }

    fn value(&self, queue: usize, old: u64) -> Option<u64> {
        let pairs = self.values.get(queue)?;
        let i = pairs.binary_search_by_key(&old, |&(x, _)| x).ok()?;
        Some(pairs[i].1)
    }

    fn semaphore(&self, old: vk::Semaphore) -> Option<vk::Semaphore> {
        if self.same_semaphores {
            return Some(old);
        }
        let i = self
            .semaphores
            .binary_search_by_key(&old.as_raw(), |&(x, _)| x)
            .ok()?;
        Some(vk::Semaphore::from_raw(self.semaphores[i].1))
    }

    /// Whether every value and semaphore in the plan's output came from its input (so the maps
    /// cover them). The planner never makes new ones; if it ever did, the plan is not reused.
    fn maps_plan(&self, plan: &Plan) -> bool {
        let batches = plan.queues.iter().flat_map(|q| &q.batches);
        for b in batches {
            for w in &b.waits {
                let mapped = match w.target {
                    WaitTarget::Value { queue, value } => self.value(queue, value).is_some(),
                    WaitTarget::Binary(s) => self.semaphore(s).is_some(),
                    WaitTarget::Batch { .. } => true,
                };
                if !mapped {
                    return false;
                }
            }
            if b.binary_signals
                .iter()
                .any(|&(s, _)| self.semaphore(s).is_none())
            {
                return false;
            }
        }
        plan.final_states.iter().flatten().all(|(_, s)| {
            s.write
                .iter()
                .chain(&s.reads)
                .all(|r| r.value.is_none_or(|v| self.value(r.queue, v).is_some()))
        })
    }

    /// Maps every value and semaphore of the plan's output; [`Self::maps_plan`] said they all map.
    fn rewrite(&self, plan: &mut Plan) {
        let value = |queue, v| self.value(queue, v).unwrap_or(v);
        self.rewrite_waits(plan, value);
        rewrite_values(plan.final_states.iter_mut().flatten(), value);
    }

    /// Maps the values (by `value`) and semaphores of the plan's waits and signals.
    fn rewrite_waits(&self, plan: &mut Plan, value: impl Fn(usize, u64) -> u64) {
        for b in plan.queues.iter_mut().flat_map(|q| &mut q.batches) {
            for w in &mut b.waits {
                match &mut w.target {
                    WaitTarget::Value { queue, value: v } => *v = value(*queue, *v),
                    WaitTarget::Binary(s) => *s = self.semaphore(*s).unwrap_or(*s),
                    WaitTarget::Batch { .. } => {}
                }
            }
            if !self.same_semaphores {
                for (s, _) in &mut b.binary_signals {
                    *s = self.semaphore(*s).unwrap_or(*s);
                }
            }
        }
    }
}
