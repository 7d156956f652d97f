//! The plan: what the planner decides, as plain data.
//!
//! [`PlanInput`] is the declarations (queues, resources with their tracked state, passes with
//! their uses). [`plan`] turns it into a [`Plan`]: per queue, batches of semaphore waits,
//! barrier commands and passes, and semaphore signals. No Vulkan call is made, so plans are
//! built, printed and checked without a GPU; the executor translates a plan one to one into
//! `vkCmdPipelineBarrier2` and `vkQueueSubmit2`.
//!
//! The example below follows one plan from declarations to the state the next graph starts
//! from; the items' docs refer to it. Compute (family 1) writes an image, graphics (family 0)
//! samples it:
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{Access, ash::vk};
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
//!                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
//!     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
//!     passes: vec![
//!         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
//!         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ],
//! };
//! let plan = plan(&input).unwrap();
//! println!("{plan}");
//! assert_eq!(plan.input.passes.len(), 2);
//! // One batch per queue; compute's UNDEFINED -> GENERAL and release, graphics' acquire.
//! assert_eq!(plan.batch_count(), 2);
//! assert_eq!(plan.barrier_commands(), 3);
//! assert_eq!(plan.semaphore_waits(), 1);
//!
//! // Compute: transition, `simulate`, then release the image to family 0.
//! let simulate = &plan.queues[0].batches[0];
//! assert!(simulate.waits.is_empty());
//! let [Command::Barrier(_), Command::Pass(0), Command::Barrier(release)] = &simulate.commands[..]
//! else { panic!("{plan}") };
//! let release = release.images[0];
//! assert_eq!(release.resource, 0);
//! assert_eq!(release.scopes.families, Some((1, 0)));
//! assert_eq!(release.old_layout, vk::ImageLayout::GENERAL);
//! assert_eq!(release.new_layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
//! assert!(plan.to_string().contains("family 1 -> 0"));
//!
//! // Graphics: wait for compute's batch, acquire the image, shade, signal its timeline.
//! let shade = &plan.queues[1].batches[0];
//! assert_eq!(shade.waits[0].target, WaitTarget::Batch { queue: 0, batch: 0 });
//! assert!(!shade.waits[0].stages.is_empty());
//! assert!(matches!(shade.commands[..], [Command::Barrier(_), Command::Pass(1)]));
//! assert!(shade.signal.is_some() && shade.binary_signals.is_empty());
//!
//! // Timeline values are given at execution. With compute's timeline at 10 and graphics' at
//! // 20 from earlier executions, each signalling batch takes its queue's next value.
//! let mut last = [10, 20];
//! let values = plan.assign_values(&mut last);
//! assert_eq!(values, TimelineValues {
//!     start: vec![10, 20],
//!     per_batch: vec![vec![Some(11)], vec![Some(21)]],
//!     last: vec![Some(11), Some(21)],
//! });
//! assert_eq!(last, [11, 21]);
//! assert_eq!(plan.wait_value(shade.waits[0].target, &values), Some(11));
//!
//! // The image ends sampled on family 0, last touched by "this execution's last value on
//! // graphics", which the values fill in for the next graph.
//! let (cells, state) = &plan.final_states[0][0];
//! assert_eq!(*cells, 0..1);
//! assert_eq!(state.owner, Some(0));
//! assert_eq!(state.layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
//! assert_eq!(state.write.unwrap().value, None);
//! let next = plan.resolved_final_states(&values);
//! assert_eq!(next[0][0].1.write.unwrap().value, Some(21));
//! ```

pub(crate) mod colours;
pub(crate) mod display;
pub mod handoff;
mod input;
pub(crate) mod order;
mod output;
mod planner;
mod rebind;
pub mod schedule;
mod state;
mod submission;
pub mod transient;

pub(crate) use colours::{barrier_rgb, queue_rgb};
pub use handoff::AppBatch;
pub use input::{
    BinarySignalDecl, BinaryWaitDecl, PassDecl, PlanInput, QueueDecl, Region, RenderPassLayouts,
    ResourceDecl, ResourceKind, Unordered, UseDecl,
};
pub use output::{
    BarrierCmd, Batch, BufferBarrier, Cause, Command, ImageBarrier, Plan, Prior, QueuePlan, Scopes,
    Wait, WaitTarget,
};
pub use planner::{plan, plan_owned, plan_scheduled};
pub(crate) use planner::{plan_scheduled_reusing, SparePlan};
pub use rebind::{Rebinder, KEPT_PLANS};
pub use schedule::Schedule;
pub(crate) use state::refill_segments;
pub use state::{Recorded, SegmentState, Visible};
pub use submission::TimelineValues;
pub(crate) use submission::{submission_runs, submission_runs_into, SubmissionRun};
pub use transient::{TransientHeap, TransientMemory, TransientPlacement, TransientPlan, UseSite};

use crate::access::Access;
#[cfg(test)]
use crate::range::ImageRange;
use crate::range::{BufferRange, SubRange};
use ash::vk;
