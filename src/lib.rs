//! # vk-baton
//!
//! Hand Vulkan images and buffers from pass to pass and from queue to queue, with the exact
//! sync2 barriers, queue-family ownership transfers and semaphores worked out for you.
//!
//! See the README for the shape of the library; the modules each hold one job.
//!
//! The library takes an app's own instance, device, queues and allocator ([`Queue::new`],
//! [`SharedAllocator::new`], [`Graph::new`]). The `vk-baton-context` crate of this workspace
//! makes them for samples, tests and newcomers (its `Context`, with validation and the
//! counting of its messages): it builds on this crate's public API, and nothing here knows it
//! exists.
//!
//! # Layers
//!
//! The modules form layers, and each calls only into the layers below it: no two modules
//! import each other, directly or through others. From the bottom up:
//!
//! 1. **Vocabulary**: [`error`], [`access`], [`render_pass`] (the subpass dependencies an app's
//!    `VkRenderPass` needs), `range` (re-exported: [`ImageRange`], [`BufferRange`],
//!    [`SubRange`]), [`debug`], `fx` (a fast hasher), `requirements` (the device check of
//!    [`Graph::new`] and [`Queue::new`]): plain types and the debug-utils helpers, importing
//!    only each other (`render_pass` reads `access`; the rest import `error` at most).
//! 2. **Planning**: [`plan`] turns declarations into barriers, ownership transfers, semaphores
//!    and the submission order; pure functions, no Vulkan call. [`verify`] and [`simulate`]
//!    check plans independently, above it.
//! 3. **Vulkan objects with state**: [`queue`] (a `VkQueue`, its timeline and submit lock),
//!    then [`resource`] (images and buffers with their tracked state), and [`timing`]
//!    (per-pass GPU times, knowing only queues).
//! 4. **Completion**: `completion` ([`CompletionToken`]), knowing only an execution's fences.
//! 5. **Passes**: [`pass`] ([`Pass`], [`Declare`], [`Recorder`]), what user code implements.
//! 6. **Pools**: `transient`, the memory, images and views a graph binds its transient
//!    resources to for each execution; `pools`, the command pools, spare fences and in-flight
//!    executions a graph reuses; then [`fence`] ([`ExecutionFence`]), which hands an execution
//!    back to them.
//! 7. **Execution**: `execute` records a plan (`execute::recording`, which also repairs the
//!    pools after a pass's error or panic) and submits it (`execute::submit`, which checks
//!    staleness and commits the new states).
//! 8. **Lowering**: `lowering` turns inserted passes and the resources' states into the
//!    planner's `PlanInput`.
//! 9. **Graph**: [`graph`] ([`Graph`], [`GraphBuilder`], [`Planned`], [`HeldPlan`]): `finish()` lowers, then
//!    plans and verifies; `execute()` hands the plan to an execution.
//! 10. **Handoff**: [`handoff`] ([`Handoff`], [`Graph::hand_off`]): a plan of one pass that
//!     the app records and submits itself; the executor submits the rest.
//!
//! What destroys the device can ride along with the objects made on it
//! ([`Queue::keep_alive_with`], [`StImage::keep_alive_with`], [`StBuffer::keep_alive_with`],
//! [`Graph::with_device_owner`]; [`SharedAllocator::downgrade`] tells whether the allocator is
//! still held): how a bootstrap such as `vk-baton-context` destroys its device only once the
//! last of them is gone, in whatever order they drop.

#![warn(missing_docs)]

pub mod access;
mod completion;
pub mod debug;
pub mod error;
mod exec;
mod fx;
pub mod graph;
pub mod pass;
pub mod plan;
pub mod queue;
mod range;
pub mod render_pass;
mod requirements;
pub mod resource;
#[cfg(feature = "verify")]
pub mod simulate;
#[cfg(feature = "timing")]
pub mod timing;
#[cfg(feature = "transients")]
mod transient;
#[cfg(feature = "verify")]
pub mod verify;
#[cfg(feature = "verify")]
mod violation;

pub use access::Access;
pub use ash;
pub use debug::DebugUtils;
pub use error::{Error, Result};
pub use exec::AppSignals;
pub use exec::{fence, handoff};
pub use fence::{CompletionToken, ExecutionFence};
/// The allocator crate whose types appear in this crate's signatures ([`SharedAllocator`],
/// [`BufferDesc::location`], [`Error::Allocator`]).
pub use gpu_allocator;
pub use graph::{Graph, GraphBuilder, HeldPlan, Planned};
pub use handoff::Handoff;
/// The lock crate of [`SharedAllocator::lock`]'s guard.
pub use parking_lot;
pub use pass::{Declare, Pass, Recorder};
pub use queue::{Queue, QueueLock};
pub use range::{BufferRange, ImageRange, SubRange};
pub use resource::{
    BufferDesc, Destroy, HostMapping, HostMemory, ImageDesc, Resource, ResourceState,
    SharedAllocator, Sharing, StBuffer, StImage, StateSnapshot,
};
#[cfg(feature = "transients")]
pub use transient::TransientStats;

// The unit tests that need a device make it with the `vk-baton-context` crate's `Context`,
// compiled into them from its sources: as a dev-dependency it would link another build of
// this crate, whose types are not this one's. Its paths name this crate `vk_baton`.
#[cfg(test)]
extern crate self as vk_baton;
#[cfg(test)]
#[doc(hidden)]
#[path = "../context/src/lib.rs"]
pub mod test_context;
#[cfg(test)]
pub(crate) use test_context::Context;

// The README's code compiles as a doctest, so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
