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
//! The modules form layers, and each imports only the layers below it; no two modules import
//! each other, at the top or inside a folder (`.ci/import-cycles.py` checks every folder).
//! `ARCHITECTURE.md` follows one frame through them. From the bottom up:
//!
//! 1. **Vocabulary**: [`error`], [`access`] (the one table of named accesses), `range`
//!    (re-exported: [`ImageRange`], [`BufferRange`], [`SubRange`]), [`render_pass`], [`debug`],
//!    `fx` (a fast hasher), `requirements` (the device check of [`Graph::new`] and
//!    [`Queue::new`]), `completion` ([`CompletionToken`]).
//! 2. **Planning**: [`plan`] turns declarations into barriers, ownership transfers, semaphores
//!    and the submission order: pure functions of plain data, no Vulkan call. [`verify`] and
//!    [`simulate`] check plans independently, above it.
//! 3. **Vulkan objects with state**: [`queue`] (a `VkQueue`, its timeline and submit lock) and
//!    [`resource`] (images and buffers with their tracked state).
//! 4. **Passes**: [`pass`] ([`Pass`], [`Declare`], [`Recorder`]): what user code implements.
//! 5. **Execution**: `exec` records a decided plan (one recording loop, one barrier builder
//!    whose baked form is kept with the plan), submits it, commits the new states, and hands
//!    back what the GPU is done with through [`fence`] ([`ExecutionFence`]). It decides
//!    nothing the plan does not say. [`handoff`] gives the app its own batch of a plan.
//! 6. **Graph**: [`graph`] ([`Graph`], [`GraphBuilder`], [`Planned`], [`HeldPlan`]): lowering
//!    the passes and the resources' states into the planner's input, the one plan cache, and
//!    `finish()` and `execute()`.
//!
//! # Features
//!
//! The core (`--no-default-features`) plans, records and submits frames. Each optional part is
//! a leaf that the core names in one place, its `#[cfg(feature = ...)]` items:
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `verify` | on | [`verify`]: the independent checker; debug builds check every plan in `finish()`; [`simulate`]: topologies you do not have |
//! | `schedule` | on | [`plan::Schedule::REORDER`] and culling: passes planned out of insertion order |
//! | `transients` | on | [`Graph::transient_image`], [`Graph::transient_buffer`]: per-execution resources in aliased memory |
//! | `timing` | on | [`Graph::set_gpu_timings`], [`timing`]: per-pass GPU times |
//! | `parallel-recording` | on | [`Graph::set_recording_threads`]: long runs of `Send` passes recorded on threads the graph keeps (a `rayon-core` pool) |
//! | `diagram` | on | [`plan::Plan::to_svg`], [`plan::Plan::to_dot`] |
//! | `serde` | off | `Plan::to_json` |
//!
//! Without a feature its entry points are gone, and input that needs it (a schedule that
//! reorders, a transient declared through [`plan`]) is refused with a clear error.
//!
//! # Allocation
//!
//! A frame that reuses a kept plan, and a held plan's frame, make no heap allocation once the
//! graph has seen them (`tests/allocations.rs`, run in release builds). A newly planned frame
//! may allocate.
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
