//! The executor's one extension point: the optional parts of an execution, one field per
//! feature, and the hooks the executor calls at fixed points of every execution.
//!
//! Three features plug in here, each a leaf in a folder of its own: `timing` (`src/timing/`:
//! per-pass GPU times from timestamp queries), `parallel-recording`
//! (`src/parallel_recording/`: long runs of `Send` passes recorded on threads the graph
//! keeps) and `report` (`src/report/`: the next executions captured into an HTML report). The
//! executor names none of them, and neither does this file: a leaf installs its part here when
//! the app first turns it on ([`crate::Graph::set_gpu_timings`],
//! `Graph::set_recording_threads`, `Graph::capture_report`), as a [`TimingHooks`], a
//! [`ThreadHooks`] or a [`ReportHooks`]. Until then the field is `None` and its hooks do
//! nothing; without the feature, nothing ever installs it.
//!
//! The executor holds an [`Extensions`] per graph (with its command pools, locked while
//! recording), an [`ExecutionExtensions`] per execution (from recording until its objects go
//! back) and a [`CompletedExtensions`] per fence, and calls their hooks unconditionally:
//!
//! | when | hook | `timing` | `parallel-recording` | `report` |
//! | --- | --- | --- | --- | --- |
//! | recording starts | [`Extensions::start`] | takes a query pool | | keeps the plan |
//! | batches are cut into pieces | [`Extensions::cut`] | | cuts runs of `Send` passes | |
//! | a batch's command buffers are taken | [`Extensions::time_batch`] | hands out queries | | |
//! | a piece begins | [`ExecutionExtensions::begin_piece`] | resets the batch's queries | | |
//! | around each pass | [`ExecutionExtensions::before_pass`], `after_pass` | timestamps | | |
//! | pieces cut for threads are recorded | [`Extensions::record_spread`] | | on threads | |
//! | a fence sees it complete | [`ExecutionExtensions::complete`] | reads the times | | adds the frame |
//! | it completes unwatched | [`ExecutionExtensions::complete_unseen`] | logs the times (reads them for a report) | | adds the frame |
//! | its objects go back | [`ExecutionExtensions::release`] | the objects back | | |
//! | a recording is kept to replay | [`ExecutionExtensions::keep_into`] | keeps its queries | | |
//! | a kept recording replays | [`Extensions::replay`] | reads the kept queries | | keeps the plan |
//! | the graph drops | [`Extensions::destroy`] | destroys the query pools | | |
//!
//! The `transients` feature (`src/transients/`) plugs in the same way, but beside the command
//! pools rather than under their lock, since planning asks it too: the graph's pools keep a
//! [`TransientHooks`] that the leaf installs when the app first asks for a transient or gives
//! the allocator for them (`Graph::set_transient_allocator`). Planning checks the budget with
//! it ([`TransientHooks::check_budget`]) and recording binds each execution's transients
//! ([`bind_transients`]).

use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::pass::{Pass, PassEntry};
use crate::plan::{Batch, Plan};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use parking_lot::MappedMutexGuard;
use std::any::Any;
use std::ops::Range;
use std::sync::OnceLock;

/// The graph's part of each feature, once the app turned it on.
#[derive(Default)]
pub(crate) struct Extensions {
    /// Per-pass GPU times (`timing`; [`crate::Graph::set_gpu_timings`]).
    pub(crate) timing: Option<Box<dyn TimingHooks>>,
    /// Recording threads (`parallel-recording`; `Graph::set_recording_threads`).
    pub(crate) threads: Option<Box<dyn ThreadHooks>>,
    /// A report of the next executions (`report`; `Graph::capture_report`).
    pub(crate) report: Option<Box<dyn ReportHooks>>,
}

/// One execution's part of each feature, from recording until its objects go back.
#[derive(Default)]
pub(crate) struct ExecutionExtensions {
    timing: Option<Box<dyn TimingRun>>,
    report: Option<Box<dyn ReportRun>>,
}

/// What a kept recording (`src/prepared/replays.rs`) keeps of each feature: the objects its
/// commands name, for its replays. Dropped once no execution of it is in flight.
#[derive(Default)]
pub(crate) struct KeptExtensions {
    /// The timestamp queries it writes, and the passes they time.
    timing: Option<Box<dyn KeptTiming>>,
}

/// What an execution's fence keeps of each feature once the execution completed.
#[derive(Default)]
pub(crate) struct CompletedExtensions {
    /// The execution's timing part, with the times it read.
    pub(crate) timing: Option<Box<dyn TimingRun>>,
}

impl Extensions {
    /// Recording starts for an execution of `passes` passes, planned as `plan`: its part of
    /// each feature.
    pub(crate) fn start(
        &mut self,
        device: &ash::Device,
        passes: usize,
        plan: &Plan,
    ) -> Result<ExecutionExtensions> {
        let timing = match &mut self.timing {
            Some(t) => t.start(device, passes)?,
            None => None,
        };
        let report = self.report.as_mut().and_then(|r| r.start(plan));
        Ok(ExecutionExtensions { timing, report })
    }

    /// How executions are timed now: 0 not, 1 with queries reset in the command buffers, 2
    /// with queries reset on the host. Recordings made in one mode are not another's.
    pub(crate) fn timing_mode(&self) -> u8 {
        self.timing.as_ref().map_or(0, |t| t.mode())
    }

    /// An execution that submits a recording kept with `kept` again: its part of each
    /// feature, reading what the recording writes (the kept queries, reset again on the host
    /// where the device resets them there).
    pub(crate) fn replay(
        &mut self,
        device: &ash::Device,
        kept: &KeptExtensions,
        plan: &Plan,
    ) -> Result<ExecutionExtensions> {
        let timing = match (&mut self.timing, &kept.timing) {
            (Some(t), Some(k)) => t.replay(device, &**k)?,
            _ => None,
        };
        let report = self.report.as_mut().and_then(|r| r.start(plan));
        Ok(ExecutionExtensions { timing, report })
    }

    /// Cuts every batch of `plan` into pieces, appended to `pieces` with each batch's end in
    /// `ends`, if the recording is spread over threads: then `Some(threads)`. `None`, with
    /// both left empty, if it stays on the calling thread.
    pub(crate) fn cut(
        &self,
        plan: &Plan,
        passes: &[PassEntry<'_>],
        pieces: &mut Vec<Piece>,
        ends: &mut Vec<usize>,
    ) -> Option<usize> {
        self.threads.as_ref()?.cut(plan, passes, pieces, ends)
    }

    /// The command buffers of `batch` on `queue` are being taken, in recording order: the
    /// range of queries its first piece resets.
    pub(crate) fn time_batch(
        &self,
        run: &mut ExecutionExtensions,
        batch: &Batch,
        passes: &[PassEntry<'_>],
        queue: &Queue,
    ) -> Option<Range<u32>> {
        let run = run.timing.as_deref_mut()?;
        self.timing.as_ref()?.time_batch(run, batch, passes, queue)
    }

    /// Records the pieces [`Extensions::cut`] cut for `threads` threads.
    pub(crate) fn record_spread(
        &mut self,
        threads: usize,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()> {
        match &mut self.threads {
            Some(t) => t.record(threads, passes, work, keep),
            // Only the threads' part cuts for threads; recording each thread's pieces in turn
            // here would do the same.
            None => (0..threads).try_for_each(|t| {
                (work.record(t, &mut &mut passes[..], keep)).map_err(|(_, e): (usize, Error)| e)
            }),
        }
    }

    /// Destroys what the features keep. Call only when no execution is in flight.
    pub(crate) fn destroy(&mut self, device: &ash::Device) {
        if let Some(t) = &mut self.timing {
            t.destroy(device);
        }
    }
}

impl ExecutionExtensions {
    /// A piece begins in `cmd`; `reset`: what [`Extensions::time_batch`] gave its batch, for
    /// the batch's first piece.
    #[inline]
    pub(crate) fn begin_piece(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        reset: &Range<u32>,
    ) {
        if let Some(t) = &self.timing {
            t.begin_piece(device, cmd, reset);
        }
    }

    /// The execution's recording is kept to be replayed: what it names goes into `kept`
    /// (whose earlier contents, of a recording no execution uses any more, are refilled),
    /// and the execution keeps reading it.
    pub(crate) fn keep_into(&mut self, kept: &mut KeptExtensions) {
        match &mut self.timing {
            Some(t) => t.keep_into(&mut kept.timing),
            None => kept.timing = None,
        }
    }

    /// Whether any hook around the passes does something: if not, the executor skips them.
    pub(crate) fn hooks(&self) -> bool {
        self.timing.is_some()
    }

    /// Pass `pass` is about to record into `cmd`.
    #[inline]
    pub(crate) fn before_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        if let Some(t) = &self.timing {
            t.before_pass(device, cmd, pass);
        }
    }

    /// Pass `pass` has recorded into `cmd`.
    #[inline]
    pub(crate) fn after_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        if let Some(t) = &self.timing {
            t.after_pass(device, cmd, pass);
        }
    }

    /// The execution completed and a fence saw it: what the fence keeps. Call before
    /// [`ExecutionExtensions::release`].
    pub(crate) fn complete(&mut self, device: &ash::Device) -> CompletedExtensions {
        let mut timing = self.timing.take().map(|mut t| {
            t.complete(device);
            t
        });
        if let Some(r) = self.report.take() {
            r.complete(timing.as_deref_mut().map(|t| t.as_any_mut()));
        }
        CompletedExtensions { timing }
    }

    /// The execution completed after its fence was dropped: nobody takes its results but a
    /// report, for which the times are read.
    pub(crate) fn complete_unseen(&mut self, device: &ash::Device) {
        let report = self.report.take();
        if let Some(t) = &mut self.timing {
            match report {
                Some(_) => t.complete(device),
                None => t.complete_unseen(device),
            }
        }
        if let Some(r) = report {
            r.complete(self.timing.as_deref_mut().map(|t| t.as_any_mut()));
        }
    }

    /// The execution is done with (or was never submitted): its objects go back.
    pub(crate) fn release(self) {
        if let Some(t) = self.timing {
            t.release();
        }
    }
}

impl Drop for CompletedExtensions {
    fn drop(&mut self) {
        if let Some(t) = self.timing.take() {
            t.release();
        }
    }
}

/// The graph's part of `report`, installed by `Graph::capture_report`.
pub(crate) trait ReportHooks: Send {
    /// See [`Extensions::start`]: the execution's part while the capture wants more frames.
    fn start(&mut self, plan: &Plan) -> Option<Box<dyn ReportRun>>;
}

/// One execution's part of `report`: its plan, until it completes.
pub(crate) trait ReportRun: Send + Sync {
    /// The execution completed; `timing` is its timing part, with the times read, if timed.
    fn complete(self: Box<Self>, timing: Option<&mut dyn Any>);
}

/// The graph's part of `timing`, installed by [`crate::Graph::set_gpu_timings`].
pub(crate) trait TimingHooks: Send {
    /// See [`Extensions::start`]: `None` when the graph is untimed now.
    fn start(&mut self, device: &ash::Device, passes: usize) -> Result<Option<Box<dyn TimingRun>>>;
    /// See [`Extensions::time_batch`].
    fn time_batch(
        &self,
        run: &mut dyn TimingRun,
        batch: &Batch,
        passes: &[PassEntry<'_>],
        queue: &Queue,
    ) -> Option<Range<u32>>;
    /// See [`Extensions::destroy`].
    fn destroy(&mut self, device: &ash::Device);
    /// See [`Extensions::timing_mode`].
    fn mode(&self) -> u8;
    /// See [`Extensions::replay`].
    fn replay(
        &mut self,
        device: &ash::Device,
        kept: &dyn KeptTiming,
    ) -> Result<Option<Box<dyn TimingRun>>>;
    /// The leaf's own type, for its settings.
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// One execution's part of `timing`, from [`TimingHooks::start`] until it is released.
pub(crate) trait TimingRun: Send + Sync {
    /// See [`ExecutionExtensions::begin_piece`].
    fn begin_piece(&self, device: &ash::Device, cmd: vk::CommandBuffer, reset: &Range<u32>);
    /// See [`ExecutionExtensions::before_pass`].
    fn before_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize);
    /// See [`ExecutionExtensions::after_pass`].
    fn after_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize);
    /// See [`ExecutionExtensions::complete`].
    fn complete(&mut self, device: &ash::Device);
    /// See [`ExecutionExtensions::complete_unseen`].
    fn complete_unseen(&mut self, device: &ash::Device);
    /// Gives its objects back to the graph's part for the next executions.
    fn release(self: Box<Self>);
    /// See [`ExecutionExtensions::keep_into`].
    fn keep_into(&mut self, kept: &mut Option<Box<dyn KeptTiming>>);
    /// The leaf's own type, for what it hands over.
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl KeptExtensions {
    /// Whether an execution of the kept recording still has to read what it wrote (a fence
    /// that has not read its timestamps yet): it is not replayed or recorded again until then.
    pub(crate) fn in_use(&self) -> bool {
        self.timing.as_ref().is_some_and(|t| t.in_use())
    }
}

/// A kept recording's part of `timing`: its queries and the passes they time.
pub(crate) trait KeptTiming: Send + Sync {
    /// See [`KeptExtensions::in_use`].
    fn in_use(&self) -> bool;
    /// The leaf's own type.
    #[allow(
        dead_code,
        reason = "only the leaf calls it: unused without its feature"
    )]
    fn as_any(&self) -> &dyn Any;
    /// The leaf's own type, to refill.
    #[allow(
        dead_code,
        reason = "only the leaf calls it: unused without its feature"
    )]
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// The graph's transients (`transients`): their handles, and the memory and objects each
/// execution binds them to. Installed by the leaf in the graph's pools, once.
pub(crate) trait TransientHooks: Send + Sync {
    /// Refuses `plan` when its transients take more memory than the graph's budget: checked
    /// when a frame is planned or a held plan executes, before anything is allocated.
    fn check_budget(&self, plan: &Plan) -> Result<()>;
    /// Binds the transients of `plan` (whose resource indices refer to `resources`) for the
    /// execution of `token`, about to be recorded: `None` for a plan that places none. Keep
    /// the guard until the recording ends: another execution cannot rebind them meanwhile.
    fn bind<'a>(
        &'a self,
        plan: &Plan,
        resources: &[Resource],
        token: &CompletionToken,
        debug: Option<&DebugUtils>,
    ) -> Result<Option<TransientsBound<'a>>>;
    /// The leaf's own type, for the graph's methods.
    #[allow(
        dead_code,
        reason = "only the leaf calls it: unused without its feature"
    )]
    fn as_any(&self) -> &dyn Any;
}

/// What keeps an execution's transients bound (the leaf's heap sets, locked).
pub(crate) type TransientsBound<'a> = MappedMutexGuard<'a, dyn Any + Send>;

/// Binds the transients of `plan` with the graph's `transients`, if installed (see
/// [`TransientHooks::bind`]).
pub(crate) fn bind_transients<'a>(
    transients: &'a OnceLock<Box<dyn TransientHooks>>,
    plan: &Plan,
    resources: &[Resource],
    token: &CompletionToken,
    debug: Option<&DebugUtils>,
) -> Result<Option<TransientsBound<'a>>> {
    match transients.get() {
        Some(t) => t.bind(plan, resources, token, debug),
        // Only the graph's own transients make transient handles: a graph that never made one
        // has a plan with transients only from another graph's.
        None if !plan.transients.placements.is_empty() => Err(Error::InvalidInput(
            "a transient belongs to another graph: a transient is bound by the graph that made it"
                .into(),
        )),
        None => Ok(None),
    }
}

/// The graph's part of `parallel-recording`, installed by `Graph::set_recording_threads`.
pub(crate) trait ThreadHooks: Send {
    /// See [`Extensions::cut`].
    fn cut(
        &self,
        plan: &Plan,
        passes: &[PassEntry<'_>],
        pieces: &mut Vec<Piece>,
        ends: &mut Vec<usize>,
    ) -> Option<usize>;
    /// See [`Extensions::record_spread`].
    fn record(
        &mut self,
        threads: usize,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()>;
    /// The leaf's own type, for its settings.
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// Consecutive commands of one batch, recorded by one thread into one primary command buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Indices into the batch's commands.
    pub(crate) commands: Range<usize>,
    /// The thread that records it: 0 is the thread that calls `execute()`.
    pub(crate) thread: usize,
}

/// The executor's side of a recording spread over threads: which thread records which pass,
/// and the one recording loop, run for one thread's pieces.
pub(crate) trait SpreadWork: Sync {
    /// Calls `f(thread, pass)` for every pass, in recording order.
    #[allow(
        dead_code,
        reason = "only the leaves call it: unused without their features"
    )]
    fn each_pass(&self, f: &mut dyn FnMut(usize, usize));
    /// Records the pieces of `thread`, in recording order, with passes from `passes`, keeping
    /// what they ask to keep alive in `keep`. On an error, the index of the piece it came
    /// from in recording order (so the first failure across threads wins), with the error.
    fn record(
        &self,
        thread: usize,
        passes: &mut dyn PassSource,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> std::result::Result<(), (usize, Error)>;
}

/// Where the recording loop takes its passes from: the execution's own list, or the passes
/// handed to a recording thread.
pub(crate) trait PassSource {
    /// Pass `p`'s name (also of passes recorded elsewhere: barrier labels name neighbours).
    fn name(&self, p: usize) -> &str;
    /// Pass `p`, to record now, with its name and queue.
    fn pass(&mut self, p: usize) -> Result<(&mut dyn Pass, &str, &Queue)>;
}

/// The execution's own passes, when the calling thread records them all.
impl PassSource for &mut [PassEntry<'_>] {
    fn name(&self, p: usize) -> &str {
        &self[p].name
    }

    fn pass(&mut self, p: usize) -> Result<(&mut dyn Pass, &str, &Queue)> {
        let PassEntry { name, pass, queue } = &mut self[p];
        Ok((&mut **pass, name, queue))
    }
}
