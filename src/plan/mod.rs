//! The plan: what the planner decides, as plain data.
//!
//! [`PlanInput`] is the declarations (queues, resources with their tracked state, passes with
//! their uses). [`plan`] turns it into a [`Plan`]: per queue, batches of semaphore waits,
//! barrier commands and passes, and semaphore signals. No Vulkan call is made, so plans are
//! built, printed and checked without a GPU; the executor translates a plan one to one into
//! `vkCmdPipelineBarrier2` and `vkQueueSubmit2`.
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
//! // The image moves from family 1 to family 0: a release on compute, an acquire on graphics.
//! assert_eq!(plan.queues[0].batches.len(), 1);
//! assert_eq!(plan.queues[1].batches[0].waits.len(), 1);
//! println!("{plan}");
//! ```

mod display;
mod input;
mod output;
mod planner;
mod presented;
mod queue_stages;
mod state;
mod timeline;

pub use input::{
    BinarySignalDecl, BinaryWaitDecl, PassDecl, PlanInput, QueueDecl, ResourceDecl, ResourceKind,
    UseDecl,
};
pub use output::{
    BarrierCmd, Batch, BufferBarrier, Command, ImageBarrier, Plan, QueuePlan, Scopes, Wait,
    WaitTarget,
};
pub use planner::{plan, plan_owned};
pub use state::{Recorded, SegmentState};
pub use timeline::TimelineValues;

use crate::access::Access;
use crate::range::{BufferRange, ImageRange, SubRange};
use ash::vk;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_host_present;
#[cfg(test)]
mod tests_queues;
