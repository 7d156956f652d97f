//! # vk-baton
//!
//! Vulkan synchronization for people who write Vulkan by hand with [`ash`](https://docs.rs/ash).
//!
//! Your app keeps owning its images and buffers (as `Arc<StImage>` and `Arc<StBuffer>`). Each
//! pass says which state it needs each resource in. vk-baton works out every image layout
//! transition, sync2 pipeline barrier, queue-family ownership release and acquire, and timeline
//! or binary semaphore. It submits once per queue and hands back an [`ExecutionFence`], which
//! keeps everything the GPU uses alive until the GPU is done.
//!
//! ## Quick start
//!
//! The crate needs a Vulkan 1.3 device. On a machine without a GPU, Mesa's software driver
//! (lavapipe) is enough. On Debian or Ubuntu, install the loader, lavapipe, the Khronos
//! validation layer, the GLSL compiler the samples' shaders are built with, Xvfb for the
//! window samples' tests, and Chromium and html5lib for the frame report's tests:
//!
//! ```sh
//! sudo apt-get install libvulkan1 mesa-vulkan-drivers vulkan-validationlayers glslang-tools xvfb xauth \
//!     chromium python3-html5lib
//! ```
//!
//! Then, from the repository root, run the main demo and the tests:
//!
//! ```sh
//! cargo run --release --example headless   # the main demo: writes headless.png and plan.svg, prints the plan
//! cargo test --workspace                   # planner, verifier and GPU tests, validation on
//! ```
//!
//! The GPU tests run under `VK_LAYER_KHRONOS_validation` with synchronization validation; any
//! validation message the specification does not allow fails them, and so does a machine with
//! no Vulkan device. On stock distributions (tried on Debian 12) the tests pass, and those
//! that need what the machine lacks (a layer that validates at submit time, 1.4.309 or newer;
//! Mesa 25's ray tracing, mesh shaders and present fences; Xvfb, Chromium, html5lib) skip with
//! a `SKIPPED` line naming it;
//! CI runs them all in strict mode, under Debian forky's layer 1.4.363 and Mesa 26, where a skip
//! fails ([docs/testing.md](docs/testing.md) shows how). Tests that need several queue families
//! are ignored on single-queue devices such as lavapipe; on a real GPU, append
//! `-- --include-ignored`.
//!
//! ## A minimal example
//!
//! ```rust
//! use std::sync::Arc;
//! use vk_baton::{ash::vk, Access, BufferDesc, Declare, Pass, Recorder, StBuffer};
//! use vk_baton_context::Context; // the bootstrap crate: instance, device, queues, allocator
//!
//! /// Copies one buffer into another: a pass with a type of its own.
//! struct Copy { src: Arc<StBuffer>, dst: Arc<StBuffer> }
//!
//! impl Pass for Copy {
//!     fn declare(&self, d: &mut Declare<'_>) {
//!         d.uses(&self.src, Access::COPY_READ);
//!         d.uses(&self.dst, Access::COPY_WRITE).discard(); // overwrites every byte
//!     }
//!     fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
//!         let region = vk::BufferCopy::default().size(self.src.size());
//!         // SAFETY: both buffers are alive and large enough.
//!         unsafe { r.device().cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region]) };
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> vk_baton::Result<()> {
//!     let ctx = Context::new()?; // or bring your own device: unsafe Graph::new, Queue::new; StBuffer::new
//!     let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
//!     let gpu = ctx.buffer(BufferDesc::new(1024, usage), "gpu")?;
//!     let host = ctx.buffer(BufferDesc::readback(1024, usage), "host")?;
//!     let graph = ctx.graph()?;
//!
//!     let mut copy = Copy { src: gpu.clone(), dst: host.clone() };
//!     let planned = graph
//!         .record()
//!         // A small pass as two closures: what it touches, then its commands.
//!         .insert_fn("fill", ctx.transfer(), |d| {  // dedicated transfer family if any
//!             d.uses(&gpu, Access::TRANSFER_WRITE).discard(); // vkCmdFillBuffer: a transfer write
//!         }, |r| {
//!             // SAFETY: the buffer is alive; the graph ordered this after earlier uses.
//!             unsafe { r.device().cmd_fill_buffer(r.cmd(), gpu.handle(), 0, vk::WHOLE_SIZE, 0xABCD) };
//!             Ok(())
//!         })
//!         .insert_pass("read back", &mut copy, ctx.graphics())  // ownership moves if families differ
//!         .finish()?;
//!     println!("{planned}"); // queues, batches, barriers, semaphores
//!     planned.execute()?.wait()?;
//!     let mut out = [0u8; 4];
//!     host.read(0, &mut out)?;
//!     assert_eq!(u32::from_le_bytes(out), 0xABCD);
//!     Ok(())
//! }
//! ```
//!
//! [`GraphBuilder::finish`] reads the resources' tracked states, lowers the declarations, and
//! reuses a plan kept from an earlier frame or calls the planner ([`vk_baton::plan`](plan)),
//! which is pure: no Vulkan call, so plans can be printed, tested and verified without a GPU.
//! [`Planned::execute`] records the plan, submits it and commits the resources' new states.
//!
//! ## What it does
//!
//! - **Tracks state per range.** Layout, owning queue family, last write and the reads since, per
//!   mip level and array layer of an image (depth and stencil apart) and per byte range of a
//!   buffer, across graphs.
//! - **Exact barriers.** Source scopes are the earlier conflicting accesses' stages and writes,
//!   with no `ALL_COMMANDS` placeholders. Reads in the same layout get no barrier. Each pass
//!   boundary gets at most one `vkCmdPipelineBarrier2`.
//! - **Queues.** A semaphore between queues of one family. A release and an acquire between
//!   families, for EXCLUSIVE resources whose contents are needed; none for CONCURRENT resources
//!   or discarded contents. One `vkQueueSubmit2` per queue and one timeline semaphore per
//!   `VkQueue`, shared by every graph.
//! - **Swapchains.** Binary semaphore waits and signals, the acquire wait at the image's first use.
//! - **Writes that need no order.** A use declared [`Unordered`](plan::Unordered) (tiles of
//!   one image, atomic adds) gets no barrier against the unordered writes of its kind just
//!   before it; the group is still ordered against everything else, and overlapping tiles or
//!   a read in the middle of a group are refused.
//! - **Stages fit the queue.** A stage the queue's family cannot run never reaches a mask; an
//!   access the family cannot perform at all is an error.
//! - **A 2026 renderer's vocabulary.** Named accesses for acceleration-structure builds and
//!   copies, ray tracing and ray queries, shader binding tables, mesh and task shaders, and
//!   video decode and encode ([`access`]), each refused until the graph knows its device
//!   feature is enabled ([`Graph::set_device_features`]). With `VK_KHR_maintenance8`, the
//!   waits around ownership transfers are at the stages that use the resource; with
//!   `VK_KHR_maintenance9`, contents the feature keeps change families with no transfer; with
//!   `VK_KHR_unified_image_layouts`, every image use is planned in `GENERAL`
//!   ([`LayoutPolicy`](access::LayoutPolicy)), its barriers kept.
//! - **Says whether async compute pays.** [`Plan::predict`](plan::Plan::predict) gives the span
//!   a plan allows at best from the passes' GPU times, and its critical path;
//!   [`predict::best_moves`] what moving one pass to another queue would allow.
//! - **Checks itself.** [`Plan::verify`](plan::Plan::verify) is an independent checker
//!   written from the specification's definitions. Debug builds run it on every plan.
//! - **Reuses plans.** A frame that declares what a recent frame declared, on resources in the
//!   same states, reuses that frame's plan; [`Planned::hold`] keeps a plan to execute again and
//!   again. Once the graph has seen them, such frames make no heap allocation
//!   (`tests/allocations.rs`, run in release builds); a newly planned frame may allocate.
//!   When nothing else touched a frame's resources since its last execution, no state is read
//!   at all: a version compare per resource ([`Planned::at_rest`]).
//! - **Replays recordings.** With [`Graph::set_replay`], a frame whose plan, passes and
//!   resources are those of an earlier one submits the command buffers recorded then again,
//!   recording nothing; its passes say when their commands changed
//!   ([`Pass::replay_key`]).
//! - **Shows the plan.** A plan prints as text (`println!("{planned}")`): queues, batches,
//!   waits, barriers, passes and signals. [`Plan::to_svg`](plan::Plan::to_svg) draws it, one
//!   lane per queue ([an example on three queue families](docs/plan-3-family.svg)), and
//!   [`Plan::to_dot`](plan::Plan::to_dot) writes it as Graphviz DOT. With `VK_EXT_debug_utils`,
//!   passes and barriers are label regions in RenderDoc and Nsight.
//! - **Incremental adoption.** It works with your own device, queues and allocator. It wraps
//!   handles you own ([`StImage::from_raw`], [`StBuffer::from_raw`]), and [`Graph::hand_off`]
//!   hands resources to your own command buffer and submit, then takes them back.
//!
//! ## When to replay
//!
//! Turn replay on when most frames run the same passes on the same resources and what changes
//! lives in memory the host writes (uniforms, instance data, indirect arguments), not in push
//! constants or descriptor writes. Every pass must give a key; one moved key records the whole
//! frame. A held plan replays cheapest; keys that follow the frame-in-flight slot need
//! [`HeldPlan::refresh_replay_keys`]. `deferred --replay [--held]` shows both.
//!
//! ## What it does not do
//!
//! - It is not an engine or a renderer: no pipelines, descriptors, materials or frame scheduling
//!   beyond what the stock passes need.
//! - It keeps insertion order, which is program order, unless you ask for [`Schedule::REORDER`](plan::Schedule::REORDER).
//! - It cannot see work you submit yourself outside a handoff: declare it afterwards
//!   ([`StImage::declare_access`], or `declare_state` for anything else; buffers have both).
//! - It does not plan `VK_KHR_dynamic_rendering_local_read`: input attachments work only inside an
//!   app's own `VkRenderPass`.
//!
//! ## What the device must enable
//!
//! `Context` (the `vk-baton-context` crate) sets all of this up. An app that brings its own
//! instance and device (through the unsafe [`Graph::new`] and [`Queue::new`]) must provide:
//!
//! | What | Checked? |
//! | --- | --- |
//! | Vulkan 1.3: the physical device's and the instance's `apiVersion` | yes: [`Error::Environment`] names what is missing (an instance below 1.3 shows as missing entry points) |
//! | the `synchronization2` feature (`VkPhysicalDeviceVulkan13Features`) | no: the caller vouches for it (`# Safety`) |
//! | the `timelineSemaphore` feature (`VkPhysicalDeviceVulkan12Features`) | no: the caller vouches for it |
//! | the queues you make `Queue`s for | partly: a family or index the physical device lacks is [`Error::InvalidArgument`] |
//!
//! Optional, each used only where present: `hostQueryReset` (GPU timings reset their queries from
//! the host; without it, passes on a transfer-only queue go untimed), `separateDepthStencilLayouts`
//! (needed once a pass uses one aspect of a depth/stencil image alone), `VK_EXT_debug_utils` (pass
//! labels and object names for RenderDoc and Nsight), and `VK_KHR_swapchain` (only for the stock
//! swapchain passes). The stock `Render` pass needs `dynamicRendering` (core in 1.3); the blit and
//! mipmap passes check their format features when they are made. Nothing else is needed: no
//! `bufferDeviceAddress`, no descriptor indexing. The features of mesh shaders, ray tracing and
//! `VK_KHR_maintenance8` are used only once [`Graph::set_device_features`] names them.
//!
//! What destroys the device can ride along with the objects made on it
//! ([`Queue::keep_alive_with`], [`StImage::keep_alive_with`], [`StBuffer::keep_alive_with`],
//! [`Graph::with_device_owner`]; [`SharedAllocator::downgrade`] tells whether the allocator is
//! still held): that is how `Context` destroys its device only once the last of them is gone,
//! in whatever order they drop.
//!
//! ## Cargo features
//!
//! The core (`default-features = false`) plans, records and submits frames; each optional part
//! is a leaf that the core names in one place, its `#[cfg(feature = ...)]` items:
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `verify` | on | [`verify`]: the independent checker; debug builds check every plan in `finish()`; [`verify::simulate`]: topologies you do not have |
//! | `schedule` | on | [`Schedule::REORDER`](plan::Schedule::REORDER) and culling: passes planned out of insertion order |
//! | `transients` | on | [`Graph::transient_image`], [`Graph::transient_buffer`]: images and buffers that live for one execution, sharing memory where their uses never overlap in time |
//! | `timing` | on | [`Graph::set_gpu_timings`], [`timing`]: per-pass GPU times, handed over by the execution's fence |
//! | `parallel-recording` | on | [`Graph::set_recording_threads`]: long runs of `Send` passes recorded on threads the graph keeps (a `rayon-core` pool) |
//! | `diagram` | on | [`Plan::to_svg`](plan::Plan::to_svg), [`Plan::to_dot`](plan::Plan::to_dot): the plan drawn, queue by queue |
//! | `serde` | off | `Plan::to_json()`: the plan as JSON for tools and logs |
//! | `report` | off | `Plan::to_html`, `report::Report`, `Graph::capture_report`: frames in one self-contained HTML file (below) |
//!
//! Without a feature its entry points are gone, and input that needs it (a schedule that
//! reorders, a transient declared through [`plan`]) is refused with a clear error.
//!
//! ## See a frame
//!
//! With the `report` feature, a frame becomes one HTML file that any browser opens offline:
//! a timeline per queue on measured GPU time, each pass's uses, and each barrier with its
//! stages, layouts, families and **why it is there** (the earlier use it orders the next one
//! after), each resource's states, the transients' heaps over time, the predicted and measured
//! spans with the critical path, and what the verifier finds. `Plan::to_html` writes one plan;
//! `Graph::capture_report(title, n)` captures a graph's next `n` executions. The deferred
//! sample writes one with `--report FILE.html`:
//! [docs/deferred-report.html](docs/deferred-report.html), from an NVIDIA H200 (graphics,
//! async compute and transfer families, images `EXCLUSIVE`).
//!
//! ![The deferred frame's report: a barrier on the async compute queue, clicked](docs/deferred-report.png)
//!
//! ## Checking a frame on a topology you do not have
//!
//! Lavapipe, and many CI machines, have one queue family. NVIDIA and AMD GPUs have graphics,
//! compute-only and transfer-only families. [`Simulation`](verify::simulate::Simulation) runs the
//! planner and the verifier for such a device without one:
//!
//! ```rust
//! use vk_baton::plan::{PassDecl, ResourceDecl, UseDecl};
//! use vk_baton::verify::simulate::{Simulation, Topology};
//! use vk_baton::{ash::vk, Access};
//!
//! let topo = Topology::nvidia(); // graphics (family 0), transfer (1), async_compute (2)
//! let (gfx, compute) = (topo.queue("graphics").unwrap(), topo.queue("async_compute").unwrap());
//! let mut sim = Simulation::new(topo);
//! let img = sim.add_resource(ResourceDecl::image(
//!     "particles", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED));
//! for _frame in 0..8 {
//!     // Planned, verified alone (as a debug `finish()` does) and chained with earlier frames.
//!     let report = sim.frame(&[
//!         PassDecl::new("simulate", compute)
//!             .with_use(UseDecl::new(img, Access::COMPUTE_SHADER_WRITE).discard()),
//!         PassDecl::new("draw", gfx).with_use(UseDecl::new(img, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ]).unwrap();
//!     assert_eq!(report.ownership_transfers(), 2); // a release on compute, an acquire on graphics
//! }
//! ```
//!
//! ## Samples
//!
//! [docs/samples.md](docs/samples.md) describes each in detail. Each prints
//! `validation: N message(s)` last and exits non-zero if N is above 0 or one of its own checks
//! failed; `-- --help` lists its options. Validation, with synchronization validation, is on when
//! `VK_BATON_VALIDATION=1` (headless: unless `VK_BATON_VALIDATION=0`).
//!
//! | Sample | What it shows | Run it |
//! | --- | --- | --- |
//! | Headless (`examples/headless.rs`) | a compute shader draws into an image on the async compute queue; the graphics queue copies it to the host; writes `headless.png` and `plan.svg` | `cargo run --release --example headless` |
//! | Async compute (`examples/async_compute.rs`) | rendering on the graphics queue overlaps a simulation step on the async compute queue, with double-buffered state | `cargo run --release --example async_compute` |
//! | Streaming upload (`examples/streaming_upload.rs`) | the stock `Uploader` streams buffers and mip-mapped textures through the transfer queue, beside the same stream written by hand | `cargo run --release --example streaming_upload -- --all-sizes` |
//! | Incremental adoption (`examples/incremental.rs`) | the migration guide: a raw-ash app hands its upload and download to vk-baton and keeps its own compute pass through a handoff | `cargo run --example incremental -- --frames 2` |
//! | Deferred frame (`examples/deferred.rs`) | a deferred renderer on two queues with 19 aliased transient resources; `--compare` runs a hand-written version beside it | `cargo run --release --example deferred` |
//! | Window (`examples/window.rs`) | winit and a swapchain, built from the stock passes (needs a display: Xvfb will do) | `cargo run --example window` |
//! | Bring your own Vulkan (`examples/byo.rs`) | an app that made its instance, device, allocator, swapchain and render pass itself adopts vk-baton without `Context` | `cargo run -p vk-baton-window-example --example byo -- --frames 10` |
//!
//! ## Workspace
//!
//! - `vk-baton` (this directory): the core crate, in the layers below.
//! - `vk-baton-context` ([`context/`](context/)): `Context`, the samples' and tests' bootstrap
//!   (instance, device, queues, allocator, validation message counting), built on the core's
//!   public API; the core does not know it exists, and apps with their own device skip it.
//! - `vk-baton-passes` ([`passes/`](passes/)): stock passes: blit, copy, upload (one-off and
//!   streamed), download, clear, mipmaps, rendering, swapchain acquire and present, compute
//!   dispatch, external semaphores.
//! - `vk-baton-examples` and `vk-baton-window-example` ([`examples/`](examples/)): the samples.
//!
//! The core's modules form layers, from the bottom up, each importing only the layers below it;
//! no two modules import each other, at any folder level (`.ci/import-cycles.py` checks):
//!
//! 1. **Vocabulary**: [`error`], [`access`] (the one table of named accesses), `range`
//!    ([`ImageRange`], [`BufferRange`], [`SubRange`]), [`render_pass`], [`debug`], `fx` (a fast
//!    hasher), `requirements` (the device check of [`Graph::new`] and [`Queue::new`]),
//!    `completion` ([`CompletionToken`]).
//! 2. **Planning**: [`plan`] turns declarations into barriers, ownership transfers, semaphores
//!    and the submission order, with no Vulkan call; [`verify`] and [`verify::simulate`] check it.
//! 3. **Vulkan objects with state**: [`queue`] (a `VkQueue`, its timeline and submit lock) and
//!    [`resource`] (images and buffers with their tracked state).
//! 4. **Passes**: [`pass`] ([`Pass`], [`Declare`], [`Recorder`]): what user code implements;
//!    and `prepared`, the unit of reuse: a plan with the objects its indices name, the barrier
//!    structs and labels built for it once, and where its last execution left the resources.
//! 5. **Execution**: `exec` records a prepared frame (one recording loop, one barrier builder whose
//!    baked form is kept with the frame), submits it, commits the new states, and hands back what
//!    the GPU is done with through [`fence`] ([`ExecutionFence`]), deciding nothing the plan does
//!    not say; [`handoff`] gives the app its own batch of a plan. `extensions` is the
//!    executor's one extension point: a field per optional runtime part, and the hooks the
//!    executor calls.
//! 6. **Graph**: [`graph`] ([`Graph`], [`GraphBuilder`], [`Planned`], [`HeldPlan`]): the passes'
//!    and resources' lowering into the planner's input, the one plan cache of prepared frames,
//!    `finish`, `execute`.
//! 7. **Optional runtime parts**: `timing` and `parallel_recording` (features `timing` and
//!    `parallel-recording`) add their methods to the graph, its builder and its fences, and
//!    install their part into `extensions` when the app turns them on.
//!
//! ## More documentation
//!
//! - [ARCHITECTURE.md](ARCHITECTURE.md): the path of a frame through the layers above, the
//!   synchronization contract, and the optional parts.
//! - [docs/rendering.md](docs/rendering.md): declaring attachments, for dynamic rendering and for
//!   an app's own `VkRenderPass`.
//! - [docs/samples.md](docs/samples.md), [docs/performance.md](docs/performance.md) (benchmarks
//!   and how they were taken), [docs/testing.md](docs/testing.md) (how the library is tested),
//!   [CHANGELOG.md](CHANGELOG.md) (what changed for an app), and `cargo doc --open`.
//!
//! ## License
//!
//! MIT OR Apache-2.0.

// README.md is generated from the crate doc above by `.ci/readme.py` (`.ci/run` checks that it
// is current): edit the doc here, then run `python3 .ci/readme.py`. The doc's code blocks are
// the README's, compiled as doctests.

#![warn(missing_docs)]

pub mod access;
mod completion;
pub mod debug;
#[cfg(feature = "diagram")]
mod diagram;
pub mod error;
mod exec;
mod extensions;
pub mod fence;
mod fx;
pub mod graph;
pub mod handoff;
#[cfg(feature = "parallel-recording")]
mod parallel_recording;
pub mod pass;
pub mod plan;
pub mod predict;
mod prepared;
pub mod queue;
mod range;
pub mod render_pass;
#[cfg(feature = "report")]
pub mod report;
mod requirements;
pub mod resource;
#[cfg(feature = "schedule")]
mod schedule;
#[cfg(feature = "serde")]
mod serde;
mod signals;
mod spare;
mod sync;
#[cfg(feature = "timing")]
pub mod timing;
mod transients;
#[cfg(feature = "verify")]
pub mod verify;
mod violation;

pub use access::Access;
pub use ash;
pub use debug::DebugUtils;
pub use error::{Error, Result};
#[doc(inline)]
pub use fence::{CompletionToken, ExecutionFence};
/// The allocator crate whose types appear in this crate's signatures ([`SharedAllocator`],
/// [`BufferDesc::location`], [`Error::Allocator`]).
pub use gpu_allocator;
pub use graph::{Graph, GraphBuilder, HeldPlan, Planned};
#[doc(inline)]
pub use handoff::{Handoff, HandoffBarriers};
/// The lock crate of [`SharedAllocator::lock`]'s guard.
pub use parking_lot;
pub use pass::{Declare, Pass, Recorder};
pub use queue::{Queue, QueueLock};
pub use range::{BufferRange, ImageRange, SubRange};
pub use resource::{
    BufferDesc, Destroy, HostMapping, HostMemory, ImageDesc, Resource, ResourceState,
    SharedAllocator, Sharing, StBuffer, StImage, StateSnapshot,
};
pub use signals::AppSignals;
// The `transients` leaf's public types: `TransientStats`, with that feature.
#[allow(unused_imports)]
pub use transients::public::*;

/// Where the planner places transients ([`plan::transient::Place`]): the `transients` leaf's
/// placement, or none in a build without that feature. The crate root hands it to whoever
/// plans (the `plan()` functions, the graph, the simulation), since none of them may name the
/// leaf, which builds on the planner's types and adds methods to the graph.
pub(crate) fn transient_placement() -> Option<&'static dyn plan::transient::Place> {
    transients::placement()
}

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
