//! # vk-baton
//!
//! Hand Vulkan images and buffers from pass to pass and from queue to queue, with the exact
//! sync2 barriers, queue-family ownership transfers and semaphores worked out for you.
//!
//! See the README for the shape of the library; the modules each hold one job.

#![warn(missing_docs)]

pub mod access;
pub mod context;
pub mod debug;
pub mod error;
mod execute;
pub mod fence;
pub mod graph;
pub mod messages;
pub mod pass;
pub mod plan;
pub mod queue;
mod range;
mod recording;
pub mod resource;
#[cfg(feature = "verify")]
pub mod simulate;
#[cfg(feature = "verify")]
pub mod verify;

pub use access::{Access, AccessKind};
pub use ash;
pub use context::{Context, ContextOptions};
pub use debug::DebugUtils;
pub use error::{Error, Result};
pub use fence::{CompletionToken, ExecutionFence};
/// The allocator crate whose types appear in this crate's signatures ([`SharedAllocator`],
/// [`BufferDesc::location`], [`Error::Allocator`]).
pub use gpu_allocator;
pub use graph::{Graph, GraphBuilder, Planned};
pub use messages::{MessageLog, ValidationMessages};
/// The lock crate of [`SharedAllocator::lock`]'s guard.
pub use parking_lot;
pub use pass::{Declare, Pass, Recorder};
pub use queue::{Queue, QueueLock};
pub use range::{BufferRange, ImageRange, SubRange};
pub use resource::{
    BufferDesc, Destroy, HostMapping, HostMemory, ImageDesc, Resource, ResourceState,
    SharedAllocator, Sharing, StBuffer, StImage, StateSnapshot,
};

// The README's code compiles as a doctest, so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
