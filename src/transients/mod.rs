//! Transient resources, the `transients` feature: images and buffers whose contents live only
//! inside one execution, placed in memory that transients whose uses never overlap share.
//!
//! The feature has two halves, and this folder holds both:
//!
//! - **Placement** (`placement/`), pure functions of a plan: which transients the plan orders
//!   one after the other, heaps and offsets that let only those share memory, and the aliasing
//!   dependencies that the planner then plans (see [`crate::plan::transient`] for what it
//!   decides, with an example). The planner takes it as an argument, a
//!   [`Place`](crate::plan::transient::Place), which also checks each finished plan: the
//!   crate root hands it over ([`crate::transient_placement`]), since neither the planner nor
//!   the graph may name this leaf, which builds on both.
//! - **Runtime** (`runtime/`): the graph's transient handles, and for each execution the heaps,
//!   images, buffers and views they are bound to. `graph.rs` is its public face
//!   (`Graph::transient_image` and the rest), which installs the graph's `Transients` in its
//!   pools the first time; planning checks the budget and the executor binds each execution
//!   through the executor's extension point
//!   ([`TransientHooks`](crate::extensions::TransientHooks)), which names no feature.
//!
//! What the rest of the crate keeps is plain data: a declaration is transient when it carries
//! [`TransientMemory`](crate::plan::TransientMemory), a plan says where its transients go in
//! [`TransientPlan`](crate::plan::TransientPlan), and a transient [`StImage`] or [`StBuffer`]
//! carries its memory requirements and the handle of the execution being recorded
//! (`resource/transient.rs`).
//!
//! This module is compiled in every build, and it is the one place that reads the feature.
//! Without it there is no placement (the planner refuses transients with a clear error), no
//! method makes a transient, and nothing is installed to bind (`absent.rs`).
//!
//! [`StImage`]: crate::StImage
//! [`StBuffer`]: crate::StBuffer

#[cfg(not(feature = "transients"))]
mod absent;
#[cfg(feature = "transients")]
mod graph;
#[cfg(feature = "transients")]
mod placement;
#[cfg(feature = "transients")]
mod runtime;

// The leaf's face, the same in both builds: `placement()`, the planner's `Place` (or none).
#[cfg(not(feature = "transients"))]
pub(crate) use absent::placement;
#[cfg(feature = "transients")]
pub(crate) use placement::placement;

/// The leaf's public types, which the crate root re-exports (none without the feature).
pub(crate) mod public {
    #[cfg(feature = "transients")]
    pub use super::runtime::TransientStats;
}

/// The tests' plan inputs with transients, for the verifier's tests across executions.
#[cfg(all(test, feature = "transients"))]
pub(crate) use placement::tests;
