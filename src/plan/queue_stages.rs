//! Stage masks that fit the queue: every access is narrowed to the stages its queue's family
//! supports before planning, so that no barrier, ownership transfer or semaphore the planner
//! derives from it names a stage the family lacks (`VUID-vkCmdPipelineBarrier2-srcStageMask-03849`
//! and friends). The rule itself is [`crate::access::supported_stages`].

use super::{PlanInput, Recorded};
use crate::access::narrow_stages;
use ash::vk;

/// `stages` as a mask recorded on a queue with `caps`: narrowed to what the queue supports, or
/// `ALL_COMMANDS` where nothing is left. That happens for stages another queue ran (a scope
/// on this queue that chains from a semaphore wait cannot name them) and for state an app
/// declared with stages its queue cannot run: all commands covers whatever ran.
pub(super) fn on_queue(
    stages: vk::PipelineStageFlags2,
    caps: vk::QueueFlags,
) -> vk::PipelineStageFlags2 {
    let s = narrow_stages(stages, caps);
    if s.is_empty() {
        vk::PipelineStageFlags2::ALL_COMMANDS
    } else {
        s
    }
}

/// Narrows every stage mask of a validated input to its queue: the uses' stages, the binary
/// waits' and signals' stages an app gave, and the stages recorded in the resources' initial
/// states. The plan keeps the narrowed declarations, so the verifier and the display see the
/// stages the queue really runs.
pub(super) fn narrow_input(input: &mut PlanInput) {
    let caps: Vec<vk::QueueFlags> = input.queues.iter().map(|q| q.caps).collect();
    for pass in &mut input.passes {
        let c = caps[pass.queue];
        for u in &mut pass.uses {
            // `check_use` refused uses that lose every stage; Present has none to lose.
            u.access.stages = narrow_stages(u.access.stages, c);
        }
        for w in &mut pass.waits {
            w.stages = w.stages.map(|s| on_queue(s, c));
        }
        for s in &mut pass.signals {
            s.stages = s.stages.map(|st| on_queue(st, c));
        }
    }
    let fix = |r: &mut Recorded<usize>| {
        if !r.stages.is_empty() {
            r.stages = on_queue(r.stages, caps[r.queue]);
        }
    };
    for res in &mut input.resources {
        for (_, st) in &mut res.initial {
            st.write.iter_mut().for_each(fix);
            st.reads.iter_mut().for_each(fix);
        }
    }
}
