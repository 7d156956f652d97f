//! `--held`: the frame's passes in a plan the sample holds (`Planned::hold`) and executes frame
//! after frame (`HeldPlan::execute`), instead of building the frame every frame.
//!
//! A held plan keeps its passes borrowed, so the loop cannot set the frame number in the compute
//! passes before each frame as the builder loop does ([`super::plan_frame_with`]). Each pass is
//! wrapped in a [`Numbered`] that sets it as the pass records (or, with `--replay`, as its
//! recording is submitted again), from a cell the loop sets; what the passes declare and
//! record does not depend on it (the number is in memory).
//!
//! One held plan serves every frame in flight: each execution binds the transients in a free
//! heap set of the graph's (and their handles and views to that set's objects while it records),
//! and each compute pass writes the next of its descriptor sets with those views as it records,
//! as it does in the builder loop.

use super::{Passes, Step};
use std::cell::Cell;
use vk_baton::pass::ReplayKey;
use vk_baton::{CompletionToken, Declare, Graph, GraphBuilder, Pass, Planned, Queue, Recorder};

/// One of the frame's passes, which writes the frame number `frame` holds when it records or
/// is replayed (a compute pass; a draw has none).
pub struct Numbered<'a> {
    step: &'a mut Step,
    frame: &'a Cell<u32>,
}

impl Pass for Numbered<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        self.step.declare(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        if let Step::Compute(p) = self.step {
            p.frame = self.frame.get();
        }
        self.step.record(r)
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        // The frame number is not in the commands: the step's key stands for them.
        self.step.replay_key()
    }

    fn replayed(&mut self, completion: &CompletionToken) -> vk_baton::Result<()> {
        if let Step::Compute(p) = self.step {
            p.frame = self.frame.get();
        }
        self.step.replayed(completion)
    }
}

/// The frame's passes in program order, each reading the frame number from `frame`.
pub type NumberedPasses<'a> = Vec<(&'static str, Numbered<'a>, Queue)>;

/// `passes`, each wrapped in a [`Numbered`] reading `frame`.
pub fn numbered<'a>(passes: &'a mut Passes, frame: &'a Cell<u32>) -> NumberedPasses<'a> {
    passes
        .iter_mut()
        .map(|(name, step, queue)| (*name, Numbered { step, frame }, queue.clone()))
        .collect()
}

/// Plans the frame of `passes` (to hold), with the passes `before` inserts first and those
/// `after` inserts last, as [`super::plan_frame_with`] does.
pub fn plan_to_hold<'a>(
    graph: &'a Graph,
    passes: &'a mut NumberedPasses<'_>,
    before: impl FnOnce(GraphBuilder<'a>) -> GraphBuilder<'a>,
    after: impl FnOnce(GraphBuilder<'a>) -> GraphBuilder<'a>,
) -> vk_baton::Result<Planned<'a>> {
    let mut b = before(graph.record());
    for (name, pass, queue) in passes.iter_mut() {
        b = b.insert_pass(*name, pass, queue);
    }
    after(b).finish()
}
