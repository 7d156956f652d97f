//! [`Graph`] (command pools, buffers and fences reused across executions), [`GraphBuilder`]
//! (passes in program order) and [`Planned`] (a plan ready to execute).
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
//! let graph = ctx.graph()?;
//! let planned = graph.record().insert_pass("work", pass, q).finish()?;
//! println!("{planned}");
//! planned.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::access::{DeviceFeatures, LayoutPolicy};
use crate::debug::DebugUtils;
use crate::error::Result;
use crate::exec::GraphPools;
use crate::pass::{Declare, FnPass, Pass, PassEntry, PassSlot, Recorder};
use crate::plan::Schedule;
use crate::prepared::PreparedFrame;
use crate::queue::Queue;
use crate::spare::{words, Spare};
use crate::sync::{Mutex, Slot};
use cache::PlanCache;
use lowering::LowerScratch;
use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::Arc;

pub(crate) mod cache;
mod hand_off;
mod held;
pub(crate) mod lowering;
mod planned;
mod prepare;
mod replay;
#[cfg(test)]
mod tests;

pub use held::HeldPlan;
pub use planned::Planned;
use prepare::{verify_in_debug, RecordedBy};

/// Owns the command pools, command buffers and fences that executions reuse.
///
/// # Dropping blocks
///
/// Dropping the graph waits, without a timeout, for its executions whose fences were dropped
/// early: that takes as long as their GPU work does. An
/// [`ExecutionFence`](crate::ExecutionFence) still alive keeps the graph's pools alive, and
/// then the last fence to drop does that wait instead. Never drop the last of them on a
/// thread that the pending work needs: one that would later signal a timeline value, event
/// or external semaphore that work waits on. The drop would never return. Wait for the
/// fences first (or drop them on another thread) where that can happen.
///
/// ```no_run
/// # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice, device: &ash::Device,
/// #      debug: Option<vk_baton::DebugUtils>) -> vk_baton::Result<()> {
/// // SAFETY: `device` was created from `physical_device` of `instance` with the
/// // synchronization2 and timelineSemaphore features, outlives the graph, and `debug` was
/// // loaded for it.
/// let graph = unsafe { vk_baton::Graph::new(instance, physical_device, device, debug)? };
/// # Ok(()) }
/// ```
pub struct Graph {
    pools: Arc<GraphPools>,
    /// The device, and its debug utils, as the pools have them.
    device: Arc<ash::Device>,
    debug: Option<DebugUtils>,
    /// Whether each pass is recorded inside a debug label with its name (with `debug`):
    /// [`Graph::set_labels`].
    labels: AtomicBool,
    /// Whether executions keep their command buffers to submit again: [`Graph::set_replay`].
    replay: AtomicBool,
    /// What the graph keeps from one frame to the next, under one lock.
    kept: Arc<Mutex<Kept>>,
    /// What the last builder frame handed the next one: taken by `record()`, put back by
    /// `execute()`, without a lock.
    returned: Slot<Returned>,
    /// The device features the app enabled, as far as accesses need them
    /// ([`Graph::set_device_features`]), as [`DeviceFeatures::bits`].
    device_features: AtomicU32,
    /// The layout policy the app chose ([`Graph::set_layout_policy`]), or none yet: 0 none,
    /// 1 [`LayoutPolicy::Optimal`], 2 [`LayoutPolicy::General`].
    layout_policy: AtomicU8,
}

/// What a graph keeps from one frame to the next, locked once per frame, by `finish()`.
#[derive(Default)]
struct Kept {
    /// The last few executed frames, kept so that the next `finish()` reuses or refills one:
    /// the graph's one plan cache.
    cache: PlanCache,
    /// Lowering's scratch space.
    lowering: LowerScratch,
}

/// What an executed builder frame hands the next builder, through the graph's [`Slot`]: the
/// next `record()` takes it, its `finish()` puts the frame in the cache (under the lock it
/// takes anyway), and its `execute()` puts it back, refilled. A builder or `Planned` dropped
/// unexecuted drops it, and the next `record()` starts a new one.
#[derive(Default)]
pub(crate) struct Returned {
    /// The last executed frame, on its way to the cache.
    frame: Option<Box<PreparedFrame>>,
    /// What the next builder reuses.
    builder: BuilderLists,
}

/// The lists a builder reuses from one frame to the next.
#[derive(Default)]
struct BuilderLists {
    /// The last builder's pass list, emptied (its passes borrow; see [`Spare`]).
    passes: Spare<{ words::<PassEntry<'static>>() }>,
    /// How many passes the last builder had: the next one reserves that many up front.
    count_hint: usize,
}

impl Graph {
    /// The pools, where the optional leaves install their parts.
    #[allow(
        dead_code,
        reason = "only the optional leaves call it: unused in the core alone"
    )]
    pub(crate) fn pools(&self) -> &Arc<GraphPools> {
        &self.pools
    }

    /// A graph for an app-owned `device`; with `debug`, command buffers get pass labels. (The
    /// `vk-baton-context` crate's `Context::graph` makes one for its device safely.)
    ///
    /// `instance` and `physical_device` are only used to check the device first: a device
    /// whose physical device is below Vulkan 1.3, or that lacks an entry point the graph
    /// records with (`vkCmdPipelineBarrier2`, `vkQueueSubmit2`, ...; an instance created with
    /// `apiVersion` 1.0 hides them), gets [`Error::Environment`](crate::Error::Environment)
    /// saying what is missing,
    /// rather than a crash at the first execution. The README's "What the device must
    /// enable" lists everything.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice, device: &ash::Device) -> vk_baton::Result<()> {
    /// // SAFETY: `device` was created from `physical_device` of `instance` with the features
    /// // below, and outlives the graph.
    /// match unsafe { vk_baton::Graph::new(instance, physical_device, device, None) } {
    ///     Ok(graph) => { /* record frames */ }
    ///     Err(vk_baton::Error::Environment(why)) => eprintln!("cannot use this device: {why}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// The library checks the API version and the entry points; it cannot check these, and
    /// each is undefined behaviour in a later Vulkan call:
    ///
    /// - `instance` is alive, `physical_device` is one of its physical devices, and `device`
    ///   was created from `physical_device` (its function table loaded for it, as
    ///   `ash::Instance::create_device` does).
    /// - `device` was created with the `synchronization2` (Vulkan 1.3) and
    ///   `timelineSemaphore` (Vulkan 1.2) features enabled: Vulkan has no query for the
    ///   features a device was created with.
    /// - `device` stays alive until the graph and every [`crate::ExecutionFence`] from it are
    ///   dropped; `debug`, if any, was loaded for `device`.
    pub unsafe fn new(
        instance: &ash::Instance,
        physical_device: ash::vk::PhysicalDevice,
        device: &ash::Device,
        debug: Option<DebugUtils>,
    ) -> Result<Graph> {
        // SAFETY: the three belong together and are alive (this function's contract).
        unsafe { crate::requirements::check_device(instance, physical_device, device, "graph") }?;
        Ok(Graph::with_pools(device, debug, None))
    }

    /// As [`Graph::new`], and the graph keeps `device_owner` alive until it and every
    /// [`ExecutionFence`](crate::ExecutionFence) from it have dropped, dropping it after destroying its own Vulkan
    /// objects (command pools, fences, query pools, transient memory). For a bootstrap whose
    /// device is destroyed when the last object made on it drops (the `vk-baton-context`
    /// crate's `Context::graph`): `device_owner` is what destroys the device, in its `Drop`.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, physical_device: ash::vk::PhysicalDevice, device: &ash::Device,
    /// #      owner: std::sync::Arc<dyn std::any::Any + Send + Sync>) -> vk_baton::Result<()> {
    /// // SAFETY: `device` was created from `physical_device` of `instance` with the features
    /// // below, and `owner` destroys it only when dropped.
    /// let graph = unsafe { vk_baton::Graph::with_device_owner(instance, physical_device, device, None, owner)? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`Graph::new`], except that `device` need only stay alive until `device_owner`
    /// drops (the graph holds it until it and its fences are gone):
    ///
    /// - `instance` is alive, `physical_device` is one of its physical devices, and `device`
    ///   was created from `physical_device` (its function table loaded for it).
    /// - `device` was created with the `synchronization2` and `timelineSemaphore` features
    ///   enabled.
    /// - `device` is not destroyed before `device_owner` drops; `debug`, if any, was loaded
    ///   for `device`.
    pub unsafe fn with_device_owner(
        instance: &ash::Instance,
        physical_device: ash::vk::PhysicalDevice,
        device: &ash::Device,
        debug: Option<DebugUtils>,
        device_owner: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Result<Graph> {
        // SAFETY: the three belong together and are alive (this function's contract).
        unsafe { crate::requirements::check_device(instance, physical_device, device, "graph") }?;
        Ok(Graph::with_pools(device, debug, Some(device_owner)))
    }

    fn with_pools(
        device: &ash::Device,
        debug: Option<DebugUtils>,
        device_owner: Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Graph {
        let device = Arc::new(device.clone());
        let pools = GraphPools::new(device.clone(), debug.clone(), device_owner);
        Graph {
            pools: Arc::new(pools),
            device,
            debug,
            labels: AtomicBool::new(true),
            replay: AtomicBool::new(false),
            kept: Default::default(),
            returned: Slot::default(),
            device_features: AtomicU32::new(0),
            layout_policy: AtomicU8::new(0),
        }
    }

    /// Takes back an executed builder frame and the passes it ran, for the next builder
    /// (which gives the frame to the cache). Nothing is dropped and no lock is taken, so a
    /// frame like the last allocates nothing.
    pub(crate) fn executed(
        &self,
        mut frame: Box<PreparedFrame>,
        mut passes: Vec<PassEntry<'_>>,
        mut returned: Box<Returned>,
    ) {
        // Kept frames keep no resource alive (`PlanCache::put_back`), nor does this one.
        frame.resources.clear();
        returned.frame = Some(frame);
        passes.clear();
        returned.builder.passes = Spare::keep(passes);
        self.hand_back(returned);
    }

    /// Puts `returned` in the graph's slot; what it displaced (a builder that ran beside
    /// this one) gives its frame to the cache.
    pub(crate) fn hand_back(&self, returned: Box<Returned>) {
        if let Some(frame) = self.returned.put(returned).and_then(|r| r.frame) {
            self.keep_frame(frame);
        }
    }

    /// Gives a frame back to the cache (a held plan's, which it re-planned away from).
    pub(crate) fn keep_frame(&self, frame: Box<PreparedFrame>) {
        self.kept.lock().cache.put_back(frame);
    }

    /// Starts recording passes. Also releases finished executions whose fences were dropped.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, a: &mut dyn vk_baton::Pass, b: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let planned = graph.record().insert_pass("a", a, q).insert_pass("b", b, q).finish()?;
    /// # Ok(()) }
    /// ```
    pub fn record(&self) -> GraphBuilder<'_> {
        self.pools.collect();
        let mut returned = self.returned.take().unwrap_or_default();
        let builder = &mut returned.builder;
        // The last builder's list, emptied: its allocation is reused for this frame's passes.
        let mut passes: Vec<PassEntry<'_>> = builder.passes.take();
        passes.reserve(builder.count_hint);
        GraphBuilder {
            graph: self,
            passes,
            returned,
            schedule: Schedule::PROGRAM_ORDER,
        }
    }

    /// Whether `finish()` may reuse an executed plan (on by default): a frame that declares
    /// what one of the last [`crate::plan::KEPT_PLANS`] executions did, with resources in the
    /// same states up to timeline values and binary semaphores, executes that plan again
    /// instead of planning anew ([`Planned::reused`]). Several are kept so that loops
    /// alternating between a few frame shapes (a pass every other frame) reuse each shape's
    /// plan. Off, every frame is planned; for measurements and for ruling reuse out when
    /// chasing a bug. Reuse never changes what is executed: the reused plan is the one the
    /// planner would make (`tests/random_graphs.rs` and the simulation, `vk_baton::verify::simulate`,
    /// check this), and debug builds verify it like a new one.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// graph.set_plan_reuse(false);
    /// # }
    /// ```
    pub fn set_plan_reuse(&self, on: bool) {
        self.kept.lock().cache.disabled = !on;
    }

    /// Tells the graph that the device was created with `features` enabled, so that passes
    /// may declare the accesses that need them (mesh and task shaders, acceleration
    /// structures, ray tracing, ray queries: [`Access::device_features`](crate::Access::device_features)).
    /// A graph refuses any other such access with
    /// [`Error::FeatureNotEnabled`](crate::Error::FeatureNotEnabled) when it plans
    /// the frame: a barrier naming its stages would be invalid. The set only grows, as a
    /// device's features cannot be turned off.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// use vk_baton::access::DeviceFeatures as F;
    /// // SAFETY: the device was created with accelerationStructure and rayQuery enabled.
    /// unsafe { graph.set_device_features(F::ACCELERATION_STRUCTURE | F::RAY_QUERY) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The graph's device was created with every feature of `features` enabled (Vulkan has no
    /// query for that): barriers that name a stage of a feature not enabled are invalid.
    pub unsafe fn set_device_features(&self, features: DeviceFeatures) {
        self.device_features
            .fetch_or(features.bits(), Ordering::Relaxed);
        log::debug!(
            "graph: device features {:?}",
            self.device_features().names().collect::<Vec<_>>()
        );
    }

    /// The device features the app said are enabled ([`Graph::set_device_features`]).
    pub fn device_features(&self) -> DeviceFeatures {
        DeviceFeatures::from_bits(self.device_features.load(Ordering::Relaxed))
    }

    /// Plans every image use of the frames planned from now on in the layouts of `policy` (a
    /// [`HeldPlan`] keeps the layouts it was planned in until it plans again): the access table's
    /// ([`LayoutPolicy::Optimal`]), or `GENERAL` wherever it may stand in
    /// ([`LayoutPolicy::General`], for devices with `VK_KHR_unified_image_layouts`). Without a
    /// call, a graph told of [`DeviceFeatures::UNIFIED_IMAGE_LAYOUTS`] plans in `GENERAL` and
    /// any other in the table's layouts.
    ///
    /// Passes record with the layouts the policy gives
    /// ([`Recorder::layout`](crate::Recorder::layout)); the stock passes do. `GENERAL` is valid
    /// for every such use in core Vulkan, so any device runs either policy correctly. A
    /// resource left in one policy's layout is moved to the other's by the next frame's
    /// barriers, like any other layout change.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// use vk_baton::access::LayoutPolicy;
    /// graph.set_layout_policy(LayoutPolicy::General);
    /// assert_eq!(graph.layout_policy(), LayoutPolicy::General);
    /// # }
    /// ```
    pub fn set_layout_policy(&self, policy: LayoutPolicy) {
        let code = match policy {
            LayoutPolicy::Optimal => 1,
            LayoutPolicy::General => 2,
        };
        self.layout_policy.store(code, Ordering::Relaxed);
        log::debug!("graph: image layouts {policy:?}");
    }

    /// The layout policy the graph plans with: the one set by [`Graph::set_layout_policy`],
    /// else [`LayoutPolicy::General`] where the app told the graph of
    /// [`DeviceFeatures::UNIFIED_IMAGE_LAYOUTS`], else [`LayoutPolicy::Optimal`].
    pub fn layout_policy(&self) -> LayoutPolicy {
        match self.layout_policy.load(Ordering::Relaxed) {
            1 => LayoutPolicy::Optimal,
            2 => LayoutPolicy::General,
            _ => LayoutPolicy::for_features(self.device_features()),
        }
    }

    /// Whether each pass and each barrier command is recorded inside a debug label (the pass's
    /// name in its queue's colour; "barriers before `pass`"), which RenderDoc and Nsight show,
    /// and command buffers get names (on by default, when the graph has debug-utils
    /// functions). Off saves a `vkCmdBeginDebugUtilsLabelEXT` / `vkCmdEndDebugUtilsLabelEXT`
    /// pair per pass and per barrier command; what a hand-written renderer without labels pays
    /// is measured that way (`benches/frame.rs --no-labels`).
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// graph.set_labels(false);
    /// # }
    /// ```
    pub fn set_labels(&self, on: bool) {
        self.labels.store(on, Ordering::Relaxed);
    }

    /// The device, shared with the pools (for what the leaves install there).
    #[allow(
        dead_code,
        reason = "only the optional leaves call it: unused in the core alone"
    )]
    pub(crate) fn device_arc(&self) -> &Arc<ash::Device> {
        &self.device
    }

    /// Whether passes are recorded inside debug labels ([`Graph::set_labels`]).
    pub(crate) fn labels_on(&self) -> bool {
        self.labels.load(Ordering::Relaxed)
    }

    /// The device the graph records for.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let raw = graph.device().handle();
    /// # }
    /// ```
    pub fn device(&self) -> &ash::Device {
        &self.device
    }

    /// The debug-utils functions, if the graph has them.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let has_labels = graph.debug().is_some();
    /// # }
    /// ```
    pub fn debug(&self) -> Option<&DebugUtils> {
        self.debug.as_ref()
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({:?})", self.device.handle())
    }
}

/// Passes in program order; from [`Graph::record`].
///
/// What `insert_pass` cannot accept (a queue or resource of another device) is refused by
/// [`GraphBuilder::finish`].
///
/// ```no_run
/// # fn f(graph: &vk_baton::Graph, compute: &vk_baton::Queue, gfx: &vk_baton::Queue,
/// #      sim: &mut dyn vk_baton::Pass, shade: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
/// let fence = graph.record()
///     .insert_pass("simulate", sim, compute)
///     .insert_pass("shade", shade, gfx)
///     .finish()?
///     .execute()?;
/// # Ok(()) }
/// ```
pub struct GraphBuilder<'a> {
    /// The graph it records for (read by the leaves' builder methods too).
    pub(crate) graph: &'a Graph,
    passes: Vec<PassEntry<'a>>,
    /// What the last builder frame handed this one.
    returned: Box<Returned>,
    schedule: Schedule,
}

impl<'a> GraphBuilder<'a> {
    /// Appends a pass on `queue`. Insertion order is program order. `name` is borrowed (a
    /// literal, or a string that outlives the builder: a frame copies no name) or owned (a
    /// `String`, such as one made with `format!`).
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) {
    /// let b = graph.record().insert_pass("p", p, q);
    /// # }
    /// ```
    #[inline]
    pub fn insert_pass(
        self,
        name: impl Into<Cow<'a, str>>,
        pass: &'a mut (dyn Pass + 'a),
        queue: &'a Queue,
    ) -> Self {
        self.insert_slot(name.into(), PassSlot::Borrowed(pass), queue)
    }

    #[inline]
    pub(crate) fn insert_slot(
        mut self,
        name: Cow<'a, str>,
        pass: PassSlot<'a>,
        queue: &'a Queue,
    ) -> Self {
        // A queue of another device is refused by `finish()`, which checks each queue once.
        self.passes.push(PassEntry { name, pass, queue });
        self
    }

    /// Appends a pass made of two closures on `queue`: `declare` says what it touches,
    /// `record` records its commands (see [`Pass`]). For small passes that need no type of
    /// their own; the builder keeps the closures until the graph is done with them.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, src: std::sync::Arc<vk_baton::StBuffer>,
    /// #      dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, Access};
    /// let region = vk::BufferCopy::default().size(src.size());
    /// graph.record()
    ///     .insert_fn("copy", q, |d| {
    ///         d.uses(&src, Access::COPY_READ);
    ///         d.uses(&dst, Access::COPY_WRITE).discard();
    ///     }, |r| {
    ///         // SAFETY: both buffers are alive, large enough, and in the declared states.
    ///         unsafe { r.device().cmd_copy_buffer(r.cmd(), src.handle(), dst.handle(), &[region]) };
    ///         Ok(())
    ///     })
    ///     .finish()?.execute()?.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn insert_fn<D, R>(
        self,
        name: impl Into<Cow<'a, str>>,
        queue: &'a Queue,
        declare: D,
        record: R,
    ) -> Self
    where
        D: Fn(&mut Declare<'_>) + 'a,
        R: FnMut(&mut Recorder<'_>) -> Result<()> + 'a,
    {
        let pass: Box<dyn Pass + 'a> = Box::new(FnPass::new(declare, record));
        self.insert_slot(name.into(), PassSlot::Owned(pass), queue)
    }

    /// Plans the passes in the order `schedule` gives rather than in insertion order, with the
    /// same results: see [`plan::schedule`](crate::plan::schedule). The plan's printout says which pass moved.
    ///
    /// With [`Schedule::cull`], a pass that uses only the graph's transients
    /// ([`Graph::transient_image`], [`Graph::transient_buffer`]) is dropped when nothing later
    /// uses what it writes: it is never recorded, and a transient that only dropped passes use
    /// gets no memory. Resources the app made are never culled for: the app may read them
    /// after the graph.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, a: &mut dyn vk_baton::Pass,
    /// #      b: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// use vk_baton::plan::Schedule;
    /// let planned = graph.record()
    ///     .insert_pass("a", a, q)
    ///     .insert_pass("b", b, q)
    ///     .schedule(Schedule::REORDER)
    ///     .finish()?;
    /// println!("{planned}");
    /// # Ok(()) }
    /// ```
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedule = schedule;
        self
    }

    /// Plans the passes: declarations, resource states, then the pure planner. Makes no
    /// Vulkan call and changes no state.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let planned = graph.record().insert_pass("p", p, q).finish()?;
    /// println!("{}", planned.plan());
    /// # Ok(()) }
    /// ```
    pub fn finish(self) -> Result<Planned<'a>> {
        let mut returned = self.returned;
        returned.builder.count_hint = self.passes.len();
        let last = returned.frame.take();
        let (frame, tier) =
            (self.graph).prepare(&self.passes, self.schedule, RecordedBy::Graph, last)?;
        Ok(Planned {
            graph: self.graph,
            frame,
            passes: self.passes,
            returned,
            tier,
            schedule: self.schedule,
        })
    }
}
