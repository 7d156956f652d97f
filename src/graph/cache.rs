//! The graph's one plan cache: the [`PreparedFrame`]s of the last few executions, kept so that
//! a frame like one of them executes that frame again instead of planning anew.
//!
//! [`PlanCache::lookup`] is the one lookup. It tries the tiers of reuse in order: the frame
//! executed last, if every resource is still where it left them (at rest: versions compared,
//! no state read); then every kept frame whose plan the planner would answer the new
//! declarations and states with (values and semaphores mapped, [`crate::plan::Rebinder`]).
//! It hands out the frame found, or one to fill with a new plan (the oldest, evicted once the
//! cache is full, lending its vectors to the planner). A held plan re-checks its pinned frame
//! with the same tiers ([`recheck_held`]), the states tier standing in for the declarations
//! its passes cannot change. Whoever took a frame puts it back in front once executed, so no
//! frame is dropped and a frame like a kept one allocates nothing.
//!
//! More than one frame is kept because frame loops alternate: a pass every other frame, a
//! readback every few frames. With only the last frame kept, every frame of such a loop is
//! planned anew although nothing changed since the same frame a few executions ago.

use super::lowering::{rename, Lists, Lowered};
use crate::error::Result;
use crate::pass::PassEntry;
use crate::plan::{PlanInput, Schedule, SparePlan, KEPT_PLANS};
use crate::prepared::{PreparedFrame, Tier};
use crate::queue::Queue;
use crate::resource::Resource;
use smallvec::SmallVec;

/// Kept frames, and the vectors the next lowering refills.
#[derive(Default)]
pub(crate) struct PlanCache {
    /// Executed frames, the most recent first.
    #[allow(
        clippy::vec_box,
        reason = "a frame is large: taking one out or putting one back moves a pointer"
    )]
    frames: Vec<Box<PreparedFrame>>,
    /// Declarations to refill: the input a reused plan was matched against, or an evicted
    /// plan's.
    pub(crate) spare_input: Option<PlanInput>,
    /// The lists of the frame a reused one replaced, for the next lowering.
    pub(crate) spare_lists: Lists,
    /// Frames planned and frames reused, for the log.
    planned: u64,
    reused: u64,
    /// Off: every frame is planned anew ([`crate::Graph::set_plan_reuse`]).
    pub(crate) disabled: bool,
    /// With replay on ([`crate::Graph::set_replay`]): each set of resources keeps frames of
    /// its own, whose recordings name them (see [`PlanCache::take_declared`]).
    pub(crate) own_frames: bool,
    /// [`crate::resource::dropped_so_far`] when the kept frames last let go of the
    /// recordings of dropped resources.
    drops_seen: u64,
}

/// What [`PlanCache::lookup`] hands out for a frame.
pub(crate) enum Found {
    /// A kept frame, rebound to the frame's values and semaphores, at that tier.
    Reused(Box<PreparedFrame>, Tier),
    /// None: a frame to fill with a new plan (forgotten, with the frame's lists), the frame's
    /// input, and the vectors of an evicted plan for the planner to refill.
    New {
        frame: Box<PreparedFrame>,
        input: PlanInput,
        spare: SparePlan,
    },
}

impl PlanCache {
    /// The one lookup (see the module docs) for a builder's frame: `passes` lowered into
    /// `lowered`, with their declarations and their resources' versions. `build` makes its
    /// planner input from an earlier one (to refill) and reads the resources' states into
    /// it, only once the frame executed last turned out not to be at rest. The frame handed
    /// out holds the lowered lists.
    pub(crate) fn lookup(
        &mut self,
        (lowered, passes): (&mut Lowered, &[PassEntry<'_>]),
        schedule: Schedule,
        build: impl FnOnce(&mut Lowered, Option<PlanInput>) -> Result<()>,
    ) -> Result<Found> {
        if let Some(frame) = self.take_at_rest(lowered, passes, schedule) {
            return Ok(Found::Reused(self.hand_out(frame, lowered), Tier::AtRest));
        }
        build(lowered, self.spare_input.take())?;
        let input = std::mem::take(&mut lowered.input);
        let ids = lowered.resources.iter().map(Resource::id);
        let now = || ids.clone().zip(lowered.versions.iter().copied());
        let queues = || lowered.queues.iter().map(Queue::id);
        match self.take_declared(input, schedule, (now, queues)) {
            Ok(frame) => Ok(Found::Reused(
                self.hand_out(frame, lowered),
                Tier::Declarations,
            )),
            Err(input) => {
                let (frame, spare) = self.evict();
                let frame = self.hand_out(frame, lowered);
                Ok(Found::New {
                    frame,
                    input,
                    spare,
                })
            }
        }
    }

    /// The lists the next lowering refills.
    pub(crate) fn lowering_lists(&mut self) -> Lists {
        std::mem::take(&mut self.spare_lists)
    }

    /// Tier 1: the frame executed last, if the new one declares what it did (its flat
    /// declarations compared, binary semaphores mapped) and every resource is still where
    /// it left them. The plan's input takes the frame's pass names and semaphores.
    fn take_at_rest(
        &mut self,
        lowered: &mut Lowered,
        passes: &[PassEntry<'_>],
        schedule: Schedule,
    ) -> Option<Box<PreparedFrame>> {
        if self.disabled {
            return None;
        }
        let frame = self.frames.first_mut()?;
        let ids = lowered.resources.iter().map(Resource::id);
        let same = frame.at_rest(ids.zip(lowered.versions.iter().copied()))
            && lowered.ext.declared_in(&frame.plan.input.queues)
            && frame.decls.same_as(&lowered.decls)
            && lowered.adopt_queues(&frame.queues)
            && frame.rebind_at_rest(Some((&lowered.decls, schedule)));
        if !same {
            return None;
        }
        rename(&mut frame.plan.input, passes, &lowered.decls);
        self.reused += 1;
        log::trace!(
            "reused the last plan at rest ({} reused, {} planned)",
            self.reused,
            self.planned
        );
        Some(self.frames.remove(0))
    }

    /// Tier 3: the most recent kept frame whose plan the planner would answer `input` with,
    /// rebound to it, those on the same resources first (their baked barriers and kept
    /// recordings name them: a loop over swapchain images keeps a frame per image); or
    /// `input` back. `now` and `queues` give the frame's resources (id and
    /// version, by plan index) and queues (identities), to tell whether they are where the
    /// plan's last execution left them.
    pub(crate) fn take_declared<I, J>(
        &mut self,
        mut input: PlanInput,
        schedule: Schedule,
        (now, queues): (impl Fn() -> I, impl Fn() -> J),
    ) -> std::result::Result<Box<PreparedFrame>, PlanInput>
    where
        I: ExactSizeIterator<Item = (u64, u64)>,
        J: ExactSizeIterator<Item = u64>,
    {
        if !self.disabled {
            // A kept frame holds no resource: its last execution's ids say which it ran on.
            let same = |f: &PreparedFrame| f.rest.ran_on(now().map(|(id, _)| id));
            let first = (0..self.frames.len()).filter(|&i| same(&self.frames[i]));
            let first: SmallVec<[usize; KEPT_PLANS]> = first.collect();
            // With frames of their own, a frame on other resources is taken only when these
            // have none and the cache is full (more sets of resources than it keeps: then a
            // rebound frame is cheaper than a plan). Otherwise the new plan gets a frame of
            // its own, and the oldest goes: a frame for states that do not come back.
            let full = self.frames.len() >= KEPT_PLANS;
            let others = !self.own_frames || (first.is_empty() && full);
            let rest = (0..self.frames.len()).filter(|&i| others && !same(&self.frames[i]));
            let order: SmallVec<[usize; KEPT_PLANS]> = first.iter().copied().chain(rest).collect();
            for i in order {
                match self.frames[i].rebind_declared(input, schedule, (now(), queues())) {
                    Ok(old) => {
                        self.spare_input = Some(old);
                        self.reused += 1;
                        log::trace!(
                            "reused kept plan {} of {} ({} reused, {} planned)",
                            i + 1,
                            self.frames.len(),
                            self.reused,
                            self.planned
                        );
                        return Ok(self.frames.remove(i));
                    }
                    // A failed match leaves the plan as it was.
                    Err(back) => input = back,
                }
            }
        }
        Err(input)
    }

    /// A frame for a new plan: the oldest kept one once the cache is full (with reuse off,
    /// the last one, kept only for its vectors), forgotten, its plan's vectors for the
    /// planner to refill; or a new frame.
    pub(crate) fn evict(&mut self) -> (Box<PreparedFrame>, SparePlan) {
        self.planned += 1;
        let room = if self.disabled { 0 } else { KEPT_PLANS - 1 };
        let evicted = (self.frames.len() > room).then(|| self.frames.pop());
        let Some(mut frame) = evicted.flatten() else {
            return (Box::default(), SparePlan::default());
        };
        frame.forget();
        let (input, spare) = SparePlan::of(std::mem::take(&mut frame.plan));
        self.spare_input.get_or_insert(input);
        (frame, spare)
    }

    /// Gives `frame` the lowered lists, and keeps its own for the next lowering.
    fn hand_out(
        &mut self,
        mut frame: Box<PreparedFrame>,
        lowered: &mut Lowered,
    ) -> Box<PreparedFrame> {
        std::mem::swap(&mut frame.decls, &mut lowered.decls);
        std::mem::swap(&mut frame.queues, &mut lowered.queues);
        std::mem::swap(&mut frame.resources, &mut lowered.resources);
        std::mem::swap(&mut frame.versions, &mut lowered.versions);
        let spare = &mut self.spare_lists;
        spare.decls = std::mem::take(&mut lowered.decls);
        spare.queues = std::mem::take(&mut lowered.queues);
        spare.resources = std::mem::take(&mut lowered.resources);
        spare.versions = std::mem::take(&mut lowered.versions);
        spare.queues.clear();
        spare.resources.clear();
        spare.versions.clear();
        frame
    }

    /// Puts an executed frame back in front. Its resources are let go (their ids and
    /// versions in the at-rest record are what the lookup compares): the cache keeps no
    /// resource alive.
    pub(crate) fn put_back(&mut self, mut frame: Box<PreparedFrame>) {
        frame.resources.clear();
        // The kept frames hold no resource: recordings that name one the app dropped since
        // are given back now, not when their frame is evicted. The frame coming back looks
        // for itself (it may have been away when the others last looked); the others look
        // when the count moved since.
        let dropped = crate::resource::dropped_so_far();
        frame.replays.forget_dropped(dropped);
        self.frames.insert(0, frame);
        if dropped != self.drops_seen {
            self.drops_seen = dropped;
            let frames = self.frames.iter_mut();
            frames.for_each(|f| f.replays.forget_dropped(dropped));
        }
        // With reuse switched off meanwhile, fewer are kept: the extra ones are dropped.
        self.frames
            .truncate(if self.disabled { 1 } else { KEPT_PLANS });
    }

    /// The kept frames, the most recent first: what the tiers try, in that order (the
    /// simulation checks each against the planner).
    pub(crate) fn frames(&self) -> &[Box<PreparedFrame>] {
        if self.disabled {
            &[]
        } else {
            &self.frames
        }
    }

    /// How many frames are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }
}

/// A held plan's re-check of its pinned `frame`, by the tiers of [`PlanCache::lookup`]: at
/// rest (its own resources' versions), then its states snapshot and matched (its passes'
/// declarations cannot change, so they stand in for the declarations tier). `None`: a state
/// changed in a way that needs a new plan, to look up as a builder's frame.
pub(crate) fn recheck_held(frame: &mut PreparedFrame, schedule: Schedule) -> Option<Tier> {
    let now = (frame.resources.iter()).map(|r| (r.id(), r.tracked().version()));
    let at_rest =
        frame.at_rest(now) && (frame.rest).same_queues(frame.queues.iter().map(Queue::id));
    if at_rest && frame.rebind_at_rest(None) {
        #[cfg(debug_assertions)]
        super::lowering::debug_check_at_rest(
            &frame.plan,
            &frame.queues,
            &frame.resources,
            &frame.versions,
        );
        return Some(Tier::AtRest);
    }
    frame.rebind_states(schedule).then_some(Tier::States)
}

/// The plans and counts (a simulation's clone); everything built for a plan, and where its
/// last execution left the resources, is built or learnt again.
impl Clone for PlanCache {
    fn clone(&self) -> Self {
        PlanCache {
            frames: (self.frames.iter())
                .map(|frame| {
                    let mut copy = Box::<PreparedFrame>::default();
                    copy.plan.clone_from(&frame.plan);
                    copy
                })
                .collect(),
            spare_input: None,
            spare_lists: Lists::default(),
            planned: self.planned,
            reused: self.reused,
            disabled: self.disabled,
            own_frames: self.own_frames,
            drops_seen: self.drops_seen,
        }
    }
}

impl std::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanCache")
            .field("kept", &self.frames().len())
            .field("planned", &self.planned)
            .field("reused", &self.reused)
            .field("disabled", &self.disabled)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan_owned, PassDecl, QueueDecl, ResourceDecl, UseDecl};
    use crate::Access;
    use ash::vk;

    /// Frame shape `fills`: that many fills of one buffer, then a copy out of it. The
    /// resources start fresh every frame, so a shape's input repeats exactly.
    fn frame(fills: usize) -> PlanInput {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let mut passes: Vec<PassDecl> = (0..fills)
            .map(|_| PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)))
            .collect();
        passes.push(
            PassDecl::new("copy", 0)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(1, Access::COPY_WRITE)),
        );
        PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
            resources: vec![
                ResourceDecl::buffer("a", 64, usage),
                ResourceDecl::buffer("b", 64, usage),
            ],
            passes,
        }
    }

    /// Runs `frames` frames cycling through `shapes` shapes the way `finish()` and the submit
    /// path do; returns which were reused. Each plan's barriers are marked as built for its
    /// shape (the number of fills as the one "handle"), so that a plan that came back with
    /// barriers of another plan, or a new plan with barriers not forgotten, is caught.
    fn cycle(kept: &mut PlanCache, shapes: usize, frames: usize) -> Vec<bool> {
        let none = (std::iter::empty, std::iter::empty);
        (0..frames)
            .map(|f| {
                let fills = f % shapes + 1;
                let tag = || [fills as u64, 0].into_iter();
                let schedule = Schedule::PROGRAM_ORDER;
                let (mut frame, reused) = match kept.take_declared(frame(fills), schedule, none) {
                    Ok(frame) => {
                        assert!(
                            frame.barriers.is_built_for(tag()),
                            "frame {f}: its own barriers"
                        );
                        (frame, true)
                    }
                    Err(input) => {
                        let (mut frame, _) = kept.evict();
                        // Every shape's tag the tests use (at most KEPT_PLANS + 1 shapes).
                        let mut tags = (1..=KEPT_PLANS + 1).map(|t| t as u64);
                        assert!(
                            !tags.any(|t| frame.barriers.is_built_for([t, 0].into_iter())),
                            "frame {f}: a new plan's barriers are forgotten"
                        );
                        assert!(!frame.labels.built(), "frame {f}: and its labels");
                        frame.plan = plan_owned(input).unwrap();
                        (frame, false)
                    }
                };
                // Whatever was taken out, the plan executed is the one for this shape.
                assert_eq!(frame.plan.input.passes.len(), fills + 1, "frame {f}");
                frame.barriers.bake(&frame.plan, tag());
                frame.labels.rebuild(|_| {});
                kept.put_back(frame);
                reused
            })
            .collect()
    }

    #[test]
    fn a_cycle_of_up_to_four_shapes_reuses_every_plan_from_its_second_round() {
        let mut kept = PlanCache::default();
        let got = cycle(&mut kept, KEPT_PLANS, 3 * KEPT_PLANS);
        let want: Vec<bool> = (0..3 * KEPT_PLANS).map(|f| f >= KEPT_PLANS).collect();
        assert_eq!(got, want);
        assert_eq!((kept.len(), kept.reused, kept.planned), (4, 8, 4));
        // One fill again, three executions after the last one: still kept.
        assert_eq!(cycle(&mut kept, 1, 1), [true]);
    }

    #[test]
    fn a_cycle_of_five_shapes_outgrows_the_kept_plans() {
        let mut kept = PlanCache::default();
        let got = cycle(&mut kept, KEPT_PLANS + 1, 3 * (KEPT_PLANS + 1));
        assert_eq!(got, vec![false; 3 * (KEPT_PLANS + 1)]);
        assert_eq!(kept.len(), KEPT_PLANS);
        // An evicted plan's declarations are refilled by the next lowering.
        assert!(kept.spare_input.is_some());
    }

    #[test]
    fn with_reuse_off_every_frame_is_planned_and_one_plan_kept_for_its_vectors() {
        let mut kept = PlanCache {
            disabled: true,
            ..PlanCache::default()
        };
        assert_eq!(cycle(&mut kept, 1, 3), [false, false, false]);
        assert_eq!(kept.len(), 1);
    }
}
