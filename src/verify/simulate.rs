//! Plan any graph for a set of queues this machine does not have, frame after frame, and verify
//! it the way a debug build's `finish()` would on that device.
//!
//! A [`Topology`] names the distinct `VkQueue`s (family, capabilities) and the roles that map
//! onto them (`graphics`, `async_compute`, `transfer`), as `vk_baton_context::Context` picks
//! them. A [`Simulation`] keeps the resources' tracked states and each queue's timeline between
//! frames. [`Simulation::frame`] does what `finish()` and `execute()` do (or `hand_off`, for a
//! [`Frame::HandOff`]), minus Vulkan:
//!
//! 1. lowers the passes the way `finish()` does: queues and resources in first-use order, then
//!    the queues that the resources' recorded states name (a release-only batch may go there);
//! 2. plans with the frame's [`Schedule`](crate::plan::Schedule) (reordering, culling) through
//!    the planner's entry point that `finish()` uses, places the
//!    [transient](crate::plan::ResourceDecl::transient) resources as it does, and checks that
//!    every kept plan `finish()` could reuse instead is that same answer;
//! 3. verifies the plan **alone** from the queues' current timeline values
//!    ([`Plan::verify_from`], what `finish()` runs in debug builds);
//! 4. checks what the executor checks before it submits: the transients it binds (a culled
//!    pass is not recorded, and a transient only culled passes use needs no memory), and for a
//!    handoff, the batch the app submits ([`Plan::app_batch`]). A plan the executor would
//!    refuse is [`SimError::Refused`];
//! 5. assigns the values the executor would ([`Plan::assign_values`], one timeline per
//!    `VkQueue`: two roles on one queue share it), and verifies the **chain** of the frames
//!    so far (up to [`Simulation::with_window`] frames) as one sequence of executions;
//! 6. commits the final states, as the executor does at submit time.
//!
//! Frames in flight need nothing more on the GPU's side (the host's accesses are another
//! matter: see the host's wait, below): the executor commits states when it submits, and
//! completion changes no state. The verifier assumes no frame has completed (every frame's
//! work may overlap every earlier frame's), which is the case of unbounded frames in flight.
//! Work the app records itself ([`Simulation::declare_state`]) is invisible to the verifier,
//! so it starts a new chain.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::verify::simulate::*;
//! use vk_baton::{ash::vk, Access};
//! // An app computes on async compute and samples on graphics. Does its frame hold up on an
//! // NVIDIA-like device, with a compute-only family, even when it only has one family?
//! let topo = Topology::nvidia();
//! let (gfx, compute) = (topo.queue("graphics").unwrap(), topo.queue("async_compute").unwrap());
//! let mut sim = Simulation::new(topo);
//! let img = sim.add_resource(ResourceDecl::image(
//!     "particles", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED));
//! for n in 0..8 {
//!     let frame = [
//!         PassDecl::new("simulate", compute)
//!             .with_use(UseDecl::new(img, Access::COMPUTE_SHADER_WRITE).discard()),
//!         PassDecl::new("draw", gfx).with_use(UseDecl::new(img, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ];
//!     let report = match sim.frame(&frame) {
//!         Ok(report) => report,
//!         // The verifier's findings, one per broken rule, as a debug `finish()` reports them.
//!         Err(SimError::Verification { violations, .. }) => panic!("{violations:#?}"),
//!         Err(e) => panic!("{e}"),
//!     };
//!     // Family 2 -> family 0: one release and one acquire.
//!     assert_eq!(report.ownership_transfers(), 2);
//!     // Graphics waits for this frame's simulation; from the second frame on, the simulation
//!     // also waits for the previous draw to stop reading the image it overwrites.
//!     assert_eq!(report.plan.semaphore_waits(), if n == 0 { 1 } else { 2 });
//! }
//! assert_eq!(sim.last_values(), &[8, 0, 8]); // graphics, transfer, async_compute
//! ```
//!
//! # The host's wait
//!
//! A `HOST_READ` or `HOST_WRITE` pass stands for the app's own access once it has waited for
//! the frame's fence (`ExecutionFence::wait`), and only that wait orders the host's access
//! before the GPU work of later frames. Say where the app waits with
//! [`Simulation::host_waited`]: the frames so far are then complete. Without it, the chain
//! finds a later frame's use of the resource on another queue unordered with the host's
//! access, which is what happens on a device when the app submits the next frame before it
//! waits.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::verify::simulate::*;
//! use vk_baton::verify::{Actor, HazardKind};
//! use vk_baton::{ash::vk, Access};
//! let topo = Topology::nvidia();
//! let (gfx, compute) = (topo.queue("graphics").unwrap(), topo.queue("async_compute").unwrap());
//! let mut sim = Simulation::new(topo);
//! let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
//! let stats = sim.add_resource(ResourceDecl::buffer("stats", 256, usage).concurrent());
//! // Async compute writes statistics, which the app reads on the host after the fence.
//! let frame = [
//!     PassDecl::new("count", compute)
//!         .with_use(UseDecl::new(stats, Access::COMPUTE_SHADER_WRITE).discard()),
//!     PassDecl::new("read on the host", gfx).with_use(UseDecl::new(stats, Access::HOST_READ)),
//! ];
//! sim.frame(&frame).unwrap();
//! // Submitted before the app waited: the next frame's write races the host's read.
//! let mut racing = sim.clone();
//! let Err(SimError::Verification { chained: true, violations, .. }) = racing.frame(&frame) else {
//!     panic!("the race goes unnoticed");
//! };
//! let host_read = |a: &Option<Actor>| matches!(a, Some(Actor::Pass { execution: 0, name, .. })
//!     if name == "read on the host");
//! assert!(violations.iter().any(|v| v.kind == HazardKind::War && host_read(&v.first)));
//! // The app waits for the fence (`ExecutionFence::wait`), reads, then records the next frame.
//! sim.host_waited();
//! sim.frame(&frame).unwrap();
//! ```

mod frame;
mod reuse;
mod topology;

#[cfg(all(test, feature = "diagram"))]
mod diagram_tests;

pub use frame::{Frame, FrameReport};
pub use topology::Topology;

use crate::graph::cache::PlanCache;
use crate::graph::lowering::first_use_index;
use crate::plan::{refill_segments, PassDecl, Rebinder, TimelineValues, WaitTarget};
use crate::plan::{Command, Plan, PlanInput, QueuePlan, ResourceDecl, SegmentState};
use crate::verify::{verify, Violation};
use std::collections::VecDeque;
use std::ops::Range;

/// Why a simulated frame (or a topology) was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The topology description is inconsistent (unknown family, too many queues, a name
    /// used twice, an alias of an unknown queue).
    #[error("topology: {0}")]
    Topology(String),
    /// A pass names a queue or resource the simulation does not have.
    #[error("frame {frame}: {what}")]
    UnknownIndex {
        /// The frame's number.
        frame: usize,
        /// Which pass and which index.
        what: String,
    },
    /// The planner refused the frame (the error `finish()` would return).
    #[error("frame {frame}: {error}")]
    Plan {
        /// The frame's number.
        frame: usize,
        /// The planner's error.
        error: crate::Error,
    },
    /// The verifier rejected the frame: `chained == false` for the plan alone (what a debug
    /// `finish()` reports), `true` for the chain of frames ending with it.
    #[error("frame {frame} ({}): {} violation(s), first: {}", if *chained { "chained" } else { "alone" }, violations.len(), violations.first().map_or(String::new(), |v| v.to_string()))]
    Verification {
        /// The frame's number.
        frame: usize,
        /// Whether the chain (rather than the plan alone) failed.
        chained: bool,
        /// What the verifier found.
        violations: Vec<Violation>,
    },
    /// The executor would refuse the plan that was made and verified: `execute()` (or
    /// [`Graph::hand_off`](crate::Graph::hand_off)) returns this error before submitting
    /// anything.
    #[error("frame {frame}: the executor refuses the plan: {error}")]
    Refused {
        /// The frame's number.
        frame: usize,
        /// The executor's error.
        error: crate::Error,
    },
    /// `finish()` would have reused a kept plan of an earlier frame ([`Rebinder`]), but the
    /// planner answers this frame with another plan: a bug in the library. Both plans are
    /// given.
    #[error("frame {frame}: the reused plan differs from a new plan\nreused:\n{reused}\nplanned:\n{planned}")]
    Reuse {
        /// The frame's number.
        frame: usize,
        /// The earlier frame's plan, rebound to this frame.
        reused: Box<Plan>,
        /// The planner's own answer.
        planned: Box<Plan>,
    },
}

type Segments = Vec<(Range<u64>, SegmentState<usize>)>;

/// The identities of a frame's queues, for `AtRest` (`crate::prepared`): their topology indices.
fn queue_ids(qmap: &[usize]) -> impl ExactSizeIterator<Item = u64> + '_ {
    qmap.iter().map(|&q| q as u64)
}

/// Resources and queue timelines carried from frame to frame on a [`Topology`]; see the
/// module documentation.
#[derive(Clone, Debug)]
pub struct Simulation {
    topology: Topology,
    /// The resources, `initial` holding the current state (queues: topology indices).
    resources: Vec<ResourceDecl>,
    /// Per resource, bumped whenever its state changes, as a tracked state's version is.
    versions: Vec<u64>,
    last: Vec<u64>,
    /// The latest frames, re-indexed onto all topology queues and all resources.
    chain: VecDeque<(Plan, TimelineValues)>,
    window: usize,
    frames: usize,
    /// The plans of the last frames that `finish()` would try to reuse: a graph's own cache.
    cache: PlanCache,
    /// Checks every kept plan that rebinds, not only the one the cache takes.
    rebinder: Rebinder,
}

impl Simulation {
    /// A simulation with no resources, every timeline at 0, chaining up to 16 frames.
    pub fn new(topology: Topology) -> Self {
        let n = topology.queues().len();
        Self {
            topology,
            resources: Vec::new(),
            versions: Vec::new(),
            last: vec![0; n],
            chain: VecDeque::new(),
            window: 16,
            frames: 0,
            cache: PlanCache::default(),
            rebinder: Rebinder::default(),
        }
    }

    /// Verifies chains of up to `frames` frames (at least 1). Longer is slower: each frame
    /// re-verifies the whole window.
    pub fn with_window(mut self, frames: usize) -> Self {
        self.window = frames.max(1);
        self
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Declares a resource; returns the index [`UseDecl::resource`](crate::plan::UseDecl) takes.
    /// Queue indices in its initial state are topology queues. A
    /// [transient](ResourceDecl::transient) one stands for
    /// [`Graph::transient_image`](crate::Graph::transient_image) or
    /// [`Graph::transient_buffer`](crate::Graph::transient_buffer): each frame places it as
    /// `finish()` does (sharing memory with the transients the plan orders it after), and the
    /// executor binds it only in frames whose recorded passes use it.
    pub fn add_resource(&mut self, decl: ResourceDecl) -> usize {
        // Earlier frames never used it: it stays in its declared state through them.
        for (p, _) in &mut self.chain {
            p.input.resources.push(decl.clone());
            p.final_states.push(decl.initial.clone());
        }
        self.resources.push(decl);
        self.versions.push(0);
        self.resources.len() - 1
    }

    /// The current state of `resource`, as the next frame will find it.
    pub fn state(&self, resource: usize) -> Option<&[(Range<u64>, SegmentState<usize>)]> {
        self.resources.get(resource).map(|r| r.initial.as_slice())
    }

    /// The app declares the state of all of `resource` after its own work
    /// (`StImage::declare_state`). Starts a new verification chain. Out of range: `false`.
    pub fn declare_state(&mut self, resource: usize, state: SegmentState<usize>) -> bool {
        let Some(r) = self.resources.get_mut(resource) else {
            return false;
        };
        r.initial = vec![(0..r.kind.cells(), state)];
        self.versions[resource] += 1;
        self.chain.clear();
        true
    }

    /// The host waited for every frame so far (`ExecutionFence::wait`): their work is
    /// complete before any later submit, so later frames are verified without them (the chain
    /// restarts), as `finish()` verifies. Call it where the app waits before a host access
    /// (a `HOST_READ` or `HOST_WRITE` pass) and only then records the next frame: see the
    /// [module docs](self#the-hosts-wait). Work handed to the presentation engine is not
    /// covered by a fence; a present followed by a use in a later frame without a guarded
    /// binary wait is only caught by the chain.
    pub fn host_waited(&mut self) {
        self.chain.clear();
    }

    /// The app submits to `queue` itself and signals its timeline's next value
    /// (`QueueLock::next_value`); returns it.
    pub fn app_submit(&mut self, queue: usize) -> Option<u64> {
        let v = self.last.get_mut(queue)?;
        *v += 1;
        Some(*v)
    }

    /// Per topology queue, the last timeline value handed out.
    pub fn last_values(&self) -> &[u64] {
        &self.last
    }

    /// Plans, verifies and commits one frame (queues: topology indices; resources:
    /// [`Simulation::add_resource`] indices), as [`Frame`] says the app hands it to the
    /// library: a graph's passes (`&passes` plans them in program order) or a handoff. On
    /// error nothing changes.
    pub fn frame<'a>(&mut self, frame: impl Into<Frame<'a>>) -> Result<FrameReport, SimError> {
        let how = frame.into();
        let frame = self.frames;
        let (mut input, qmap, rmap) = self.lower(how.passes())?;
        if let Frame::HandOff(_) = how {
            // As `Graph::prepare` for a handoff: the app records its barriers, perhaps merged
            // into its own without maintenance8's flag, so the plan does not rely on it.
            for q in &mut input.queues {
                q.transfers_use_all_stages = false;
            }
        }
        // Each resource as lowering sees it: its id (here its index) and version.
        let now: Vec<(u64, u64)> = (rmap.iter())
            .map(|&r| (r as u64, self.versions[r]))
            .collect();
        let (plan, at_rest) = self.plan(&input, how, (&now, &qmap))?;
        let mut last: Vec<u64> = qmap.iter().map(|&q| self.last[q]).collect();
        plan.verify_from(&last)
            .map_err(|violations| SimError::Verification {
                frame,
                chained: false,
                violations,
            })?;
        executable(&plan, how).map_err(|error| SimError::Refused { frame, error })?;
        let values = plan.assign_values(&mut last);
        let global = self.chained(&plan, &values, &qmap, &rmap)?;
        for (r, segs) in global
            .0
            .resolved_final_states(&global.1)
            .into_iter()
            .enumerate()
        {
            self.resources[r].initial = segs;
        }
        let mut committed: Vec<u64> = (rmap.iter())
            .map(|&r| {
                self.versions[r] += 1;
                self.versions[r]
            })
            .collect();
        for (l, &q) in qmap.iter().enumerate() {
            self.last[q] = last[l];
        }
        self.chain.push_back(global);
        while self.chain.len() > self.window {
            self.chain.pop_front();
        }
        self.frames += 1;
        // As `finish()` (or `hand_off`) and the submit path (or the handoff's end) do: a kept
        // plan taken out or the new one, put back in front.
        let ids = (|| now.iter().copied(), || queue_ids(&qmap));
        let (mut kept, reused) = match self.cache.take_declared(input, how.schedule(), ids) {
            Ok(kept) => (kept, true),
            Err(_) => {
                let (mut kept, _) = self.cache.evict();
                kept.plan = plan.clone();
                (kept, false)
            }
        };
        // The submit path notes where the execution left the resources; a handoff's frame
        // goes back without it.
        match how {
            Frame::Graph(..) => {
                let ids = rmap.iter().map(|&r| r as u64);
                (kept.rest).record(ids, &mut committed, queue_ids(&qmap), &values.last)
            }
            Frame::HandOff(_) => kept.forget(),
        }
        self.cache.put_back(kept);
        Ok(FrameReport {
            frame,
            reused,
            at_rest,
            plan,
            chained: self.chain.len(),
            queues: qmap,
            resources: rmap,
            values,
        })
    }

    /// `plan` and its values re-indexed onto every topology queue and resource, once the
    /// chain of the last frames ending with it verifies as one sequence of executions.
    fn chained(
        &self,
        plan: &Plan,
        values: &TimelineValues,
        qmap: &[usize],
        rmap: &[usize],
    ) -> Result<(Plan, TimelineValues), SimError> {
        let global = self.to_global(plan, values, qmap, rmap);
        let earlier = self.chain.len().min(self.window - 1);
        let execs: Vec<(&Plan, &TimelineValues)> = self
            .chain
            .iter()
            .skip(self.chain.len() - earlier)
            .map(|(p, v)| (p, v))
            .chain([(&global.0, &global.1)])
            .collect();
        verify(&execs).map_err(|violations| SimError::Verification {
            frame: self.frames,
            chained: true,
            violations,
        })?;
        Ok(global)
    }

    /// The `PlanInput` `finish()` would build, with its queue and resource maps: numbered in
    /// first-use order and snapshot as lowering does (`graph/lowering.rs`), from indices
    /// rather than Vulkan objects.
    fn lower(&self, passes: &[PassDecl]) -> Result<(PlanInput, Vec<usize>, Vec<usize>), SimError> {
        let frame = self.frames;
        let unknown = |what: String| SimError::UnknownIndex { frame, what };
        let (mut qmap, mut rmap) = (Vec::new(), Vec::new());
        let mut local = Vec::with_capacity(passes.len());
        for p in passes {
            if p.queue >= self.topology.queues().len() {
                return Err(unknown(format!("pass `{}`: no queue {}", p.name, p.queue)));
            }
            let mut lp = p.clone();
            lp.queue = first_use_index(&p.queue, &mut qmap);
            let guards = lp.waits.iter_mut().flat_map(|w| &mut w.guards);
            for r in lp.uses.iter_mut().map(|u| &mut u.resource).chain(guards) {
                if *r >= self.resources.len() {
                    return Err(unknown(format!("pass `{}`: no resource {r}", p.name)));
                }
                *r = first_use_index(r, &mut rmap);
            }
            local.push(lp);
        }
        let mut resources = Vec::with_capacity(rmap.len());
        for &r in &rmap {
            let mut decl = self.resources[r].clone();
            refill_segments(
                &mut decl.initial,
                &self.resources[r].initial,
                |&q, value| (first_use_index(&q, &mut qmap), value),
            );
            resources.push(decl);
        }
        let queues = qmap
            .iter()
            .map(|&q| self.topology.queues()[q].clone())
            .collect();
        let input = PlanInput {
            queues,
            resources,
            passes: local,
        };
        Ok((input, qmap, rmap))
    }

    /// `plan` and `values` re-indexed onto every topology queue and every resource, so that
    /// frames with different queue and resource lists chain.
    fn to_global(
        &self,
        plan: &Plan,
        values: &TimelineValues,
        qmap: &[usize],
        rmap: &[usize],
    ) -> (Plan, TimelineValues) {
        let n = self.topology.queues().len();
        let mut g = plan.clone();
        g.input.queues = self.topology.queues().to_vec();
        g.input.resources = self.resources.clone();
        for p in &mut g.input.passes {
            p.queue = qmap[p.queue];
            let guards = p.waits.iter_mut().flat_map(|w| &mut w.guards);
            for r in p.uses.iter_mut().map(|u| &mut u.resource).chain(guards) {
                *r = rmap[*r];
            }
        }
        g.queues = vec![QueuePlan::default(); n];
        let mut gv = TimelineValues {
            start: self.last.clone(),
            per_batch: vec![Vec::new(); n],
            last: vec![None; n],
        };
        for (l, qp) in plan.queues.iter().enumerate() {
            let mut qp = qp.clone();
            for b in &mut qp.batches {
                for w in &mut b.waits {
                    if let WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } =
                        &mut w.target
                    {
                        *queue = qmap[*queue];
                    }
                }
                for c in &mut b.commands {
                    if let Command::Barrier(bc) = c {
                        bc.images
                            .iter_mut()
                            .for_each(|i| i.resource = rmap[i.resource]);
                        bc.buffers
                            .iter_mut()
                            .for_each(|x| x.resource = rmap[x.resource]);
                    }
                }
            }
            g.queues[qmap[l]] = qp;
            gv.per_batch[qmap[l]] = values.per_batch[l].clone();
            gv.last[qmap[l]] = values.last[l];
        }
        let mut finals: Vec<Segments> = self.resources.iter().map(|r| r.initial.clone()).collect();
        for (l, segs) in plan.final_states.iter().enumerate() {
            finals[rmap[l]] = segs
                .iter()
                .map(|(c, s)| (c.clone(), s.map_queue(|q| qmap[q])))
                .collect();
        }
        g.final_states = finals;
        // The transients' placements name resources and queues too.
        for p in &mut g.transients.placements {
            p.resource = rmap[p.resource];
            p.after.iter_mut().for_each(|a| *a = rmap[*a]);
            for site in std::iter::once(&mut p.first_use).chain(&mut p.last_uses) {
                site.queue = qmap[site.queue];
            }
        }
        (g, gv)
    }
}

/// What the library checks of a verified plan before it submits anything, beyond what the
/// planner checked (that it places exactly the transients the recorded passes use): a handoff
/// has the shape `hand_off` splits between the library and the app ([`Plan::app_batch`]).
fn executable(plan: &Plan, how: Frame<'_>) -> crate::Result<()> {
    if let Frame::HandOff(_) = how {
        plan.app_batch()?;
    }
    Ok(())
}
