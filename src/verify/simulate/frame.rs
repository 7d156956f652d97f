//! What a simulated frame is given ([`Frame`]) and what it produced ([`FrameReport`]).

use crate::plan::{BarrierCmd, Command, PassDecl, Plan, Schedule, TimelineValues};

/// One frame for [`Simulation::frame`](super::Simulation::frame): the passes, and which call of
/// the library plans and runs them.
///
/// A slice, array or `Vec` of passes is a [`Frame::Graph`] in program order, so
/// `sim.frame(&passes)` is what `graph.record()…finish()?.execute()` does.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::verify::simulate::{Frame, Simulation, Topology};
/// use vk_baton::{ash::vk, Access};
/// let topo = Topology::single_family();
/// let gfx = topo.queue("graphics").unwrap();
/// let mut sim = Simulation::new(topo);
/// let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
/// let scratch = sim.add_resource(ResourceDecl::buffer("scratch", 64, usage)
///     .transient(TransientMemory::buffer(64, 16, 0b1)));
/// let out = sim.add_resource(ResourceDecl::buffer("out", 64, usage));
/// let passes = [
///     PassDecl::new("fill scratch", gfx).with_use(UseDecl::new(scratch, Access::TRANSFER_WRITE)),
///     PassDecl::new("fill out", gfx).with_use(UseDecl::new(out, Access::TRANSFER_WRITE)),
/// ];
/// // `GraphBuilder::schedule(Schedule::PROGRAM_ORDER.with_culling())`: nobody reads `scratch`.
/// let culled = sim.frame(Frame::Graph(&passes, Schedule::PROGRAM_ORDER.with_culling())).unwrap();
/// assert_eq!(culled.plan.culled(), [0]);
/// // `Graph::hand_off`: the app records and submits the pass itself.
/// let read = PassDecl::new("app copy", gfx).with_use(UseDecl::new(out, Access::COPY_READ));
/// let handoff = sim.frame(Frame::HandOff(&read)).unwrap();
/// assert!(handoff.plan.app_batch().is_ok());
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Frame<'a> {
    /// A graph's passes, planned as `finish()` plans them under the schedule
    /// ([`GraphBuilder::schedule`](crate::GraphBuilder::schedule);
    /// [`Schedule::PROGRAM_ORDER`] when none is set), then executed. `finish()` may execute a
    /// kept plan of an earlier frame instead: the simulation checks that it is the planner's
    /// answer.
    Graph(&'a [PassDecl], Schedule),
    /// One pass the app records and submits itself ([`Graph::hand_off`](crate::Graph::hand_off)):
    /// planned anew in program order (a handoff never reuses a kept plan, nor keeps its own),
    /// and refused where `hand_off` refuses it ([`Plan::app_batch`]).
    HandOff(&'a PassDecl),
}

impl<'a> Frame<'a> {
    /// The frame's passes.
    pub fn passes(&self) -> &'a [PassDecl] {
        match *self {
            Frame::Graph(passes, _) => passes,
            Frame::HandOff(pass) => std::slice::from_ref(pass),
        }
    }

    /// The schedule the frame is planned with: program order for a handoff.
    pub fn schedule(&self) -> Schedule {
        match *self {
            Frame::Graph(_, schedule) => schedule,
            Frame::HandOff(_) => Schedule::PROGRAM_ORDER,
        }
    }
}

impl<'a> From<&'a [PassDecl]> for Frame<'a> {
    fn from(passes: &'a [PassDecl]) -> Self {
        Frame::Graph(passes, Schedule::PROGRAM_ORDER)
    }
}

impl<'a, const N: usize> From<&'a [PassDecl; N]> for Frame<'a> {
    fn from(passes: &'a [PassDecl; N]) -> Self {
        Frame::Graph(passes, Schedule::PROGRAM_ORDER)
    }
}

impl<'a> From<&'a Vec<PassDecl>> for Frame<'a> {
    fn from(passes: &'a Vec<PassDecl>) -> Self {
        Frame::Graph(passes, Schedule::PROGRAM_ORDER)
    }
}

/// What one simulated frame produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FrameReport {
    /// The frame's number, from 0.
    pub frame: usize,
    /// The plan exactly as `finish()` (or `hand_off`) makes it: its queue and resource indices
    /// are this frame's own (see [`FrameReport::queues`] and [`FrameReport::resources`]).
    pub plan: Plan,
    /// For each plan queue, the topology queue it is.
    pub queues: Vec<usize>,
    /// For each plan resource, the simulation's resource it is.
    pub resources: Vec<usize>,
    /// The timeline values the executor assigns this frame.
    pub values: TimelineValues,
    /// How many frames the chained verification covered (this one included).
    pub chained: usize,
    /// Whether `finish()` (or `hand_off`) would reuse a kept plan of an earlier frame (the
    /// simulation checked that every kept plan that rebinds equals the planner's answer).
    pub reused: bool,
    /// Whether `finish()` would reuse the last frame's plan without reading the states
    /// ([`Planned::at_rest`](crate::Planned::at_rest)): every resource still where that
    /// frame left it. The simulation checked that plan, rebound by values alone, against the
    /// planner's answer and its input against the states.
    pub at_rest: bool,
}

impl FrameReport {
    /// Ownership-transfer barriers (releases plus acquires).
    pub fn ownership_transfers(&self) -> usize {
        self.barriers()
            .map(|b| {
                b.images
                    .iter()
                    .filter(|i| i.scopes.families.is_some())
                    .count()
                    + b.buffers
                        .iter()
                        .filter(|x| x.scopes.families.is_some())
                        .count()
            })
            .sum()
    }

    /// The plan's queue that is topology queue `queue`, if this frame uses it.
    pub fn plan_queue(&self, queue: usize) -> Option<usize> {
        self.queues.iter().position(|&q| q == queue)
    }

    fn barriers(&self) -> impl Iterator<Item = &BarrierCmd> {
        let cmds = self.plan.queues.iter().flat_map(|q| &q.batches);
        cmds.flat_map(|b| &b.commands).filter_map(|c| match c {
            Command::Barrier(b) => Some(b),
            Command::Pass(_) => None,
        })
    }
}
