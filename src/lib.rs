//! # vk-baton
//!
//! Hand Vulkan images and buffers from pass to pass and from queue to queue, with the exact
//! sync2 barriers, queue-family ownership transfers and semaphores worked out for you.
//!
//! See the README for the shape of the library; the modules each hold one job.

#![warn(missing_docs)]

pub mod access;
pub mod error;
pub mod plan;
pub mod range;

pub use access::{Access, AccessKind};
pub use ash;
pub use error::{Error, Result};
pub use range::{BufferRange, ImageRange, SubRange};
