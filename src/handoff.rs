//! [`Handoff`]: hand resources to code that records and submits Vulkan by hand, in one call.
//!
//! An app adopting vk-baton one piece at a time keeps recording its own command buffers. To
//! touch a resource that a graph used, it calls [`Graph::hand_off`](crate::Graph::hand_off) with the accesses it is
//! about to make (the same [`Declare`](crate::Declare) vocabulary as a pass) and the queue it will submit to:
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, graph: &vk_baton::Graph, cmd: vk_baton::ash::vk::CommandBuffer,
//! #      data: std::sync::Arc<vk_baton::StBuffer>, image: std::sync::Arc<vk_baton::StImage>,
//! #      record_my_dispatch: impl Fn(vk_baton::ash::vk::CommandBuffer)) -> vk_baton::Result<()> {
//! use vk_baton::{ash::vk, Access};
//! let handoff = graph.hand_off("my compute", ctx.graphics(), |d| {
//!     d.uses(&data, Access::COMPUTE_SHADER_READ);
//!     d.uses(&image, Access::COMPUTE_SHADER_WRITE).discard();
//! })?;
//! // SAFETY: `cmd` is recording, from a pool of the graphics family; it is submitted below
//! // with the handoff's waits and signal, to the handoff's queue.
//! unsafe {
//!     handoff.record_barriers(cmd);  // layout changes, the acquire of an ownership transfer
//!     record_my_dispatch(cmd);       // the app's own commands, as before
//!     ctx.device().end_command_buffer(cmd).unwrap();
//!     handoff.submit(&[cmd], vk::Fence::null())?; // its waits and its timeline signal
//! }
//! // The next graph starts from the app's work: GENERAL, written by a compute shader.
//! # Ok(()) }
//! ```
//!
//! # What a handoff is
//!
//! A plan of one pass, the app's, made by the same lowering and planner as a graph and
//! verified like one in debug builds. The library submits what the app cannot: where a graph
//! left a resource on another queue family and its contents are needed, the release-only batch
//! on that family's queue. Everything else is the pass's batch, which goes to the app:
//!
//! - [`Handoff::record_barriers`] records its one `vkCmdPipelineBarrier2` (the layout
//!   transitions, the memory dependencies on earlier work, the acquire half of an ownership
//!   transfer); [`Handoff::barriers`] are the same barriers, all three kinds in one value, for
//!   an app that merges them with its own (buffer barriers that transfer no ownership become
//!   memory barriers, as in a graph's own batches);
//! - [`Handoff::waits`]: the semaphore waits for the app's `VkSubmitInfo2`, one per queue
//!   timeline at the highest value needed, with stage masks that fit the app's queue;
//! - [`Handoff::signals`]: the signal of the app queue's timeline with the value reserved for
//!   this submit ([`Handoff::signal_value`]), so the next graph can wait for the app's work.
//!
//! The app's commands name the layouts the handoff chose ([`Handoff::layout`]): the access
//! table's, or `GENERAL` under [`LayoutPolicy::General`](crate::access::LayoutPolicy).
//!
//! [`Handoff::submit`] makes the `vkQueueSubmit2` with all of that; an app that submits by
//! itself (to [`Handoff::queue`]) calls [`Handoff::submitted`] afterwards.
//!
//! # State and locking
//!
//! The handoff commits the resources' new states (layout, owner, the app's stages and
//! accesses, the reserved timeline value) when it is made, under the same locks a graph's
//! execution takes, and holds the app queue's submit lock until it is submitted or dropped:
//! timeline values on one queue must be signalled in increasing order, so nothing else may
//! submit there in between. A graph planned meanwhile on another thread sees the new states
//! and waits for the app's value. Until the handoff is submitted or dropped, do not, on the
//! same thread, execute a graph that submits to the handoff's queue, take that queue's
//! [`Queue::lock`] or read its [`Queue::last_value`]: each waits for that lock.
//!
//! Dropping a handoff without submitting puts the old states back if the library submitted
//! nothing and no one committed to those resources since; otherwise (a release went to another
//! queue, or a graph already planned after the app's work) it submits the pass's batch itself
//! with nothing in the pass, so that the states it committed hold.

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::exec::{self, Begun, GraphPools};
use crate::pass::PassEntry;
use crate::plan::{Plan, WaitTarget};
use crate::prepared::barriers::{dependency_info, raw, BarrierStructs};
use crate::prepared::PreparedFrame;
use crate::queue::Queue;
use ash::vk;
use std::fmt;
use std::sync::Arc;

/// Resources handed to the app's own recording and submit; from [`Graph::hand_off`](crate::Graph::hand_off).
///
/// See the [module docs](crate::handoff) for the whole sequence.
#[must_use = "submit the app's work with the handoff's barriers, waits and signal, then call submit() or submitted()"]
pub struct Handoff<'q> {
    name: String,
    queue: &'q Queue,
    /// The plan's index of `queue`.
    app: usize,
    /// The handoff's frame, with the one pass it was prepared from and the pools.
    frame: PreparedFrame,
    passes: Vec<PassEntry<'q>>,
    pools: Arc<GraphPools>,
    /// The graph's device, and its debug utils for the barriers' label.
    device: Arc<ash::Device>,
    debug: Option<DebugUtils>,
    /// `None` once submitted or dropped.
    begun: Option<Begun<'q>>,
    barriers: BarrierStructs,
    /// Where the frame goes when the handoff ends: the graph's kept frames, so that a
    /// handoff that comes back each frame reuses it.
    keep: Keep<'q>,
    /// Whether the plan came from there.
    reused: bool,
    waits: Vec<vk::SemaphoreSubmitInfo<'static>>,
    signals: Vec<vk::SemaphoreSubmitInfo<'static>>,
    signal_value: u64,
}

/// Takes a handoff's frame when the handoff ends.
pub(crate) type Keep<'q> = Option<Box<dyn FnOnce(PreparedFrame) + 'q>>;

impl<'q> Handoff<'q> {
    /// Submits what the library submits for a planned handoff (the release-only batches)
    /// and fills what the app submits. `graph` is the graph's device and debug utils.
    pub(crate) fn begin(
        (name, queue, app): (&str, &'q Queue, usize),
        (pools, mut passes, mut frame): (Arc<GraphPools>, Vec<PassEntry<'q>>, PreparedFrame),
        (device, debug): (Arc<ash::Device>, Option<DebugUtils>),
        (keep, reused): (Keep<'q>, bool),
    ) -> Result<Self> {
        let begun = exec::begin_handoff(&pools, &mut passes, &mut frame, app, queue)?;
        let mut handoff = Handoff {
            name: name.to_owned(),
            queue,
            app,
            frame,
            passes,
            pools,
            device,
            debug,
            begun: None,
            barriers: BarrierStructs::default(),
            keep,
            reused,
            waits: Vec::new(),
            signals: Vec::new(),
            signal_value: 0,
        };
        handoff.fill_submit_info(&begun);
        handoff.begun = Some(begun);
        log::debug!(
            "handoff `{name}` on `{}`: {} memory, {} image and {} buffer barrier(s), {} wait(s), signals value {}{}",
            queue.name(),
            handoff.barriers.memory.len(),
            handoff.barriers.images.len(),
            handoff.barriers.buffers.len(),
            handoff.waits.len(),
            handoff.signal_value,
            if handoff.begun.as_ref().is_some_and(Begun::released) {
                " (after a release on another family's queue)"
            } else {
                ""
            }
        );
        Ok(handoff)
    }
}

impl<'q> Handoff<'q> {
    /// Fills the barriers, waits and signals from the plan's app batch and the values.
    fn fill_submit_info(&mut self, begun: &Begun<'_>) {
        let plan = &self.frame.plan;
        let Ok(app) = plan.app_batch() else {
            return; // checked in `hand_off`
        };
        if let Some(b) = app.barrier {
            let resources = &self.frame.resources;
            let handles: Vec<u64> = resources.iter().map(raw).collect();
            self.barriers.push(b, &handles);
        }
        let queues = &self.frame.queues;
        self.waits = app
            .batch
            .waits
            .iter()
            .map(|w| {
                let (semaphore, value) = match w.target {
                    WaitTarget::Batch { queue, .. } | WaitTarget::Value { queue, .. } => (
                        queues[queue].timeline(),
                        plan.wait_value(w.target, begun.values()).unwrap_or(0),
                    ),
                    WaitTarget::Binary(s) => (s, 0),
                };
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(semaphore)
                    .value(value)
                    .stage_mask(w.stages)
            })
            .collect();
        self.signal_value = begun.values().per_batch[self.app][0].unwrap_or(0);
        self.signals = app
            .batch
            .signal
            .map(|stages| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.queue.timeline())
                    .value(self.signal_value)
                    .stage_mask(stages)
            })
            .into_iter()
            .chain(app.batch.binary_signals.iter().map(|&(s, stages)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .stage_mask(stages)
            }))
            .collect();
    }

    /// The handoff's name (its pass's name in the plan and in log lines).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The queue the app must submit to.
    pub fn queue(&self) -> &Queue {
        self.queue
    }

    /// The layout the handoff puts an image in for the app's use of it with `access`, under
    /// the graph's [`LayoutPolicy`](crate::access::LayoutPolicy) when the handoff was planned:
    /// what the app's commands name (a copy's `dstImageLayout`, an attachment's
    /// `imageLayout`), as a pass names [`Recorder::layout`](crate::Recorder::layout).
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, img: &std::sync::Arc<vk_baton::StImage>) -> vk_baton::Result<()> {
    /// use vk_baton::Access;
    /// let handoff = graph.hand_off("app copy", q, |d| {
    ///     d.uses(img, Access::COPY_WRITE).discard();
    /// })?;
    /// // TRANSFER_DST_OPTIMAL, or GENERAL in a graph under `LayoutPolicy::General`.
    /// let layout = handoff.layout(Access::COPY_WRITE);
    /// # Ok(()) }
    /// ```
    pub fn layout(&self, access: crate::Access) -> vk::ImageLayout {
        self.frame.layouts.layout(access)
    }

    /// The plan of the handoff: the app's pass, its barriers and semaphores, and any
    /// release-only batch on another queue. Printing a handoff prints it.
    pub fn plan(&self) -> &Plan {
        &self.frame.plan
    }

    /// Whether the plan is one the graph kept from an earlier handoff (or frame) with the same
    /// declarations and states, rebound to this one's values, rather than planned anew. A
    /// handoff that comes back frame after frame plans once.
    ///
    /// ```no_run
    /// # use vk_baton::{ash::vk, Graph, Handoff, Queue, StImage};
    /// # fn f(graph: &Graph, q: &Queue, img: &std::sync::Arc<StImage>,
    /// #      record_draw: impl Fn(&Handoff<'_>) -> vk::CommandBuffer) -> vk_baton::Result<()> {
    /// for frame in 0..3 {
    ///     let handoff = graph.hand_off("app draw", q, |d| {
    ///         d.uses(img, vk_baton::Access::COLOR_ATTACHMENT_WRITE).discard();
    ///     })?;
    ///     // Frame 0 plans; frame 1 meets a written image, a new shape; frame 2 reuses.
    ///     println!("frame {frame}: reused {}", handoff.reused());
    ///     // The app's command buffer: the handoff's barriers, then its draw.
    ///     let cmd = record_draw(&handoff);
    ///     // SAFETY: `cmd` holds the handoff's barriers before the draw, and `img` outlives
    ///     // the work (the app waits for the queue before dropping it).
    ///     unsafe { handoff.submit(&[cmd], vk::Fence::null())? };
    /// }
    /// # Ok(()) }
    /// ```
    pub fn reused(&self) -> bool {
        self.reused
    }

    /// The handoff's barriers as one `VkDependencyInfo`, for an app that records them itself
    /// (one `vkCmdPipelineBarrier2`); [`Handoff::record_barriers`] does the same.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, handoff: &vk_baton::Handoff<'_>, cmd: ash::vk::CommandBuffer) {
    /// // SAFETY: `cmd` is recording on the handoff's queue family and goes in the submit
    /// // that carries the handoff's waits and signals.
    /// unsafe { device.cmd_pipeline_barrier2(cmd, &handoff.dependency_info()) };
    /// # }
    /// ```
    pub fn dependency_info(&self) -> vk::DependencyInfo<'_> {
        // A handoff's plan never relies on maintenance8's flag (`RecordedBy::App`): the app
        // may merge these barriers into its own.
        self.barriers().dependency_info()
    }

    /// The handoff's barriers as one value, for an app that merges them with its own:
    /// [`HandoffBarriers::append_to`] adds all three kinds at once, so that none is left out.
    /// Buffer dependencies that transfer no ownership are memory barriers, one per pair of
    /// stage masks, as in a graph's own batches.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, handoff: &vk_baton::Handoff<'_>, cmd: ash::vk::CommandBuffer,
    /// #      my_images: Vec<ash::vk::ImageMemoryBarrier2<'static>>) {
    /// use ash::vk;
    /// let (mut memory, mut buffers, mut images) = (vec![], vec![], my_images);
    /// handoff.barriers().append_to(&mut memory, &mut buffers, &mut images);
    /// let dep = vk::DependencyInfo::default()
    ///     .memory_barriers(&memory)
    ///     .buffer_memory_barriers(&buffers)
    ///     .image_memory_barriers(&images);
    /// // SAFETY: `cmd` is recording on the handoff's queue family and goes in the submit
    /// // that carries the handoff's waits and signals.
    /// unsafe { device.cmd_pipeline_barrier2(cmd, &dep) };
    /// # }
    /// ```
    pub fn barriers(&self) -> HandoffBarriers<'_> {
        HandoffBarriers(&self.barriers)
    }

    /// The semaphore waits for the app's `VkSubmitInfo2`: at most one per queue timeline (the
    /// highest value needed), plus any binary semaphore the declarations waited on.
    pub fn waits(&self) -> &[vk::SemaphoreSubmitInfo<'static>] {
        &self.waits
    }

    /// The semaphore signals for the app's `VkSubmitInfo2`: the queue's timeline at
    /// [`Handoff::signal_value`], plus any binary semaphore the declarations signalled.
    pub fn signals(&self) -> &[vk::SemaphoreSubmitInfo<'static>] {
        &self.signals
    }

    /// The timeline value reserved for the app's submit on [`Handoff::queue`].
    pub fn signal_value(&self) -> u64 {
        self.signal_value
    }

    /// Records the handoff's barriers into `cmd` as one `vkCmdPipelineBarrier2` (nothing if
    /// there is none), inside a debug label naming the handoff when the graph has debug utils.
    ///
    /// # Safety
    ///
    /// `cmd` is in the recording state, was allocated from a pool of [`Handoff::queue`]'s
    /// family on the graph's device, and is submitted to that queue in the submit that carries
    /// [`Handoff::waits`] and [`Handoff::signals`], before the app's first use of the handed
    /// resources in it. The resources stay alive until that submit has completed.
    pub unsafe fn record_barriers(&self, cmd: vk::CommandBuffer) {
        if self.barriers().is_empty() {
            return;
        }
        if let Some(d) = &self.debug {
            d.begin_label(cmd, &format!("handoff `{}`: barriers", self.name));
        }
        let dep = self.dependency_info();
        // SAFETY: the caller guarantees `cmd` is recording on this device and family; the
        // barriers name live resources (held by the handoff) and come from a verified plan.
        unsafe { self.device.cmd_pipeline_barrier2(cmd, &dep) };
        if let Some(d) = &self.debug {
            d.end_label(cmd);
        }
    }

    /// Submits `cmds` to [`Handoff::queue`] in one `vkQueueSubmit2` with the handoff's waits
    /// and signals (and `fence`, which may be null), then does what [`Handoff::submitted`]
    /// does. If the submit fails, the handoff is dropped (see the [module docs](crate::handoff)).
    ///
    /// # Safety
    ///
    /// `cmds` are executable command buffers of the queue's family whose first commands
    /// touching the handed resources come after [`Handoff::record_barriers`] (or the same
    /// barriers, recorded by the app); they use the resources only as declared; everything
    /// they reference stays alive until they complete; `fence` is null or unsignalled and not
    /// in use.
    pub unsafe fn submit(self, cmds: &[vk::CommandBuffer], fence: vk::Fence) -> Result<()> {
        let cbs: Vec<vk::CommandBufferSubmitInfo<'_>> = cmds
            .iter()
            .map(|&c| vk::CommandBufferSubmitInfo::default().command_buffer(c))
            .collect();
        let submit = vk::SubmitInfo2::default()
            .wait_semaphore_infos(&self.waits)
            .command_buffer_infos(&cbs)
            .signal_semaphore_infos(&self.signals);
        let Some(begun) = &self.begun else {
            return Err(Error::InvalidInput("handoff already submitted".into()));
        };
        // SAFETY: the queue's submit lock is held (`begun.lock`); the caller guarantees the
        // command buffers and fence; the semaphores are the queues' live timelines (the
        // handoff holds the queues) and the binary semaphores the declarations named.
        unsafe {
            self.device
                .queue_submit2(begun.lock().handle(), std::slice::from_ref(&submit), fence)
        }
        .map_err(|e| Error::vk("vkQueueSubmit2", e))?;
        // SAFETY: the submit above was made to `queue()` with the waits, the signal and the
        // app's command buffers, whose barriers `submit`'s own contract covers.
        unsafe { self.submitted() };
        Ok(())
    }

    /// Records and submits the app's work in one call: begins `cmd` (one-time submit),
    /// records the handoff's barriers, calls `record` for the app's own commands, ends `cmd`
    /// and submits it as [`Handoff::submit`] does, with the waits, the signals and `fence`.
    ///
    /// If `record` or a Vulkan call fails, the handoff is dropped (see the
    /// [module docs](crate::handoff)) and the error returned; `cmd` may then be left
    /// recording, to be reset before its next use.
    ///
    /// `record` runs while the handoff holds its queue's lock ([`Queue::lock`]), so that
    /// nothing is submitted to the queue between the handoff's plan and its submit. It must
    /// not take that lock itself: executing a graph on the same queue, or
    /// `Context::device_wait_idle`, inside `record` deadlocks. Record commands only.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, graph: &vk_baton::Graph, cmd: vk_baton::ash::vk::CommandBuffer,
    /// #      image: std::sync::Arc<vk_baton::StImage>,
    /// #      record_my_dispatch: impl Fn(vk_baton::ash::vk::CommandBuffer)) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, Access};
    /// let handoff = graph.hand_off("my compute", ctx.graphics(), |d| {
    ///     d.uses(&image, Access::COMPUTE_SHADER_WRITE).discard();
    /// })?;
    /// // SAFETY: `cmd` is idle, resettable, of the graphics family; the dispatch uses the image
    /// // as declared, which outlives the work (the app waits for the queue before dropping it).
    /// unsafe {
    ///     handoff.record_and_submit(cmd, vk::Fence::null(), |cmd| {
    ///         record_my_dispatch(cmd);
    ///         Ok(())
    ///     })?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// `cmd` was allocated from a pool of [`Handoff::queue`]'s family on the graph's device,
    /// is not pending, and is in the initial state (or its pool was made with
    /// `RESET_COMMAND_BUFFER`, so that beginning resets it); nothing else records into it
    /// meanwhile. The commands `record` records use the handed resources only as declared,
    /// in the layouts [`Handoff::layout`] names. Everything they reference stays alive until
    /// they complete; `fence` is null or unsignalled and not in use.
    pub unsafe fn record_and_submit(
        self,
        cmd: vk::CommandBuffer,
        fence: vk::Fence,
        record: impl FnOnce(vk::CommandBuffer) -> Result<()>,
    ) -> Result<()> {
        let device = self.device.clone();
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the caller guarantees `cmd` is of this device, not pending, and resettable
        // or in the initial state.
        unsafe { device.begin_command_buffer(cmd, &begin) }
            .map_err(|e| Error::vk("vkBeginCommandBuffer", e))?;
        // SAFETY: `cmd` is recording, of the queue's family, and is submitted below with the
        // waits and signals, before the app's commands.
        unsafe { self.record_barriers(cmd) };
        record(cmd)?;
        // SAFETY: `cmd` is recording (begun above; `record` records commands only).
        unsafe { device.end_command_buffer(cmd) }
            .map_err(|e| Error::vk("vkEndCommandBuffer", e))?;
        // SAFETY: `cmd` holds the barriers before the app's commands; the caller guarantees
        // the uses, the lifetimes and the fence.
        unsafe { self.submit(&[cmd], fence) }
    }

    /// Says that the app's submit went through: made while this handoff was alive, to
    /// [`Handoff::queue`], with the barriers recorded before the app's commands and with
    /// [`Handoff::waits`] and [`Handoff::signals`]. Keeps the states the handoff committed and
    /// releases the queue's submit lock. (Call [`Handoff::submit`] instead to have the
    /// library make the `vkQueueSubmit2`.)
    ///
    /// # Safety
    ///
    /// The handoff already committed the resources' new states (layouts, owners, a write at
    /// [`Handoff::signal_value`]); this keeps them. The app's `vkQueueSubmit2` really was made,
    /// and succeeded, as described above: otherwise later graphs record barriers from layouts
    /// the resources are not in, leave an ownership release without its acquire, and wait for
    /// a timeline value that is never signalled. Drop the handoff instead when the submit did
    /// not happen.
    pub unsafe fn submitted(mut self) {
        if let Some(begun) = self.begun.take() {
            log::debug!(
                "handoff `{}`: the app submitted value {} on `{}`",
                self.name,
                self.signal_value,
                self.queue.name()
            );
            // Releases the queue lock; the release batches' fence goes to the graph's pools.
            drop(begun);
        }
    }
}

impl Drop for Handoff<'_> {
    fn drop(&mut self) {
        self.settle();
        if let Some(keep) = self.keep.take() {
            keep(std::mem::take(&mut self.frame));
        }
    }
}

impl Handoff<'_> {
    /// Dropped before the app submitted: restores the states, or makes them true by
    /// submitting the pass's batch itself.
    fn settle(&mut self) {
        let Some(begun) = self.begun.take() else {
            return;
        };
        let (pools, app) = (&self.pools, self.app);
        match exec::settle_handoff(pools, &mut self.passes, &mut self.frame, app, begun) {
            Ok(true) => log::debug!(
                "handoff `{}` dropped unsubmitted: states restored (timeline value {} on `{}` skipped)",
                self.name,
                self.signal_value,
                self.queue.name()
            ),
            Ok(false) => log::debug!(
                "handoff `{}` dropped unsubmitted: submitted its barriers and value {} itself",
                self.name,
                self.signal_value
            ),
            Err(e) => log::error!(
                "handoff `{}` dropped unsubmitted, and submitting its barriers failed ({e}): timeline value {} on `{}` will never be signalled",
                self.name,
                self.signal_value,
                self.queue.name()
            ),
        }
    }
}

/// A handoff's barriers, all three kinds together; from [`Handoff::barriers`].
///
/// There is no accessor per kind: an app that merged only some kinds into its own barrier
/// would compile and lose dependencies. [`HandoffBarriers::append_to`] takes all three.
#[derive(Clone, Copy)]
pub struct HandoffBarriers<'h>(&'h BarrierStructs);

impl<'h> HandoffBarriers<'h> {
    /// Appends every barrier to the app's own arrays, one per kind, to be recorded in one
    /// `VkDependencyInfo` before the app's commands.
    /// The barriers chain nothing (`pNext` is null), so they join arrays of any lifetime.
    pub fn append_to<'a>(
        self,
        memory: &mut Vec<vk::MemoryBarrier2<'a>>,
        buffers: &mut Vec<vk::BufferMemoryBarrier2<'a>>,
        images: &mut Vec<vk::ImageMemoryBarrier2<'a>>,
    ) {
        memory.extend_from_slice(&self.0.memory);
        buffers.extend_from_slice(&self.0.buffers);
        images.extend_from_slice(&self.0.images);
    }

    /// The barriers as one `VkDependencyInfo`, as [`Handoff::dependency_info`] gives them.
    pub fn dependency_info(self) -> vk::DependencyInfo<'h> {
        let b = self.0;
        dependency_info(&b.memory, &b.buffers, &b.images)
    }

    /// How many barriers there are, of all kinds.
    pub fn len(self) -> usize {
        self.0.memory.len() + self.0.buffers.len() + self.0.images.len()
    }

    /// Whether there is no barrier to record.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for HandoffBarriers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandoffBarriers")
            .field("memory", &self.0.memory)
            .field("buffers", &self.0.buffers)
            .field("images", &self.0.images)
            .finish()
    }
}

impl fmt::Display for Handoff<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.frame.plan, f)
    }
}

impl fmt::Debug for Handoff<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff")
            .field("name", &self.name)
            .field("queue", self.queue)
            .field("signal_value", &self.signal_value)
            .field("submitted", &self.begun.is_none())
            .finish_non_exhaustive()
    }
}
