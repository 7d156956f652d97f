//! The executor's one extension point: the optional parts of an execution, one field per
//! feature, and the hooks the executor calls at fixed points of every execution.
//!
//! Two features plug in here, each a leaf in a folder of its own: `timing` (`src/timing/`:
//! per-pass GPU times from timestamp queries) and `parallel-recording`
//! (`src/parallel_recording/`: long runs of `Send` passes recorded on threads the graph
//! keeps). The executor names neither. It holds an [`Extensions`] per graph (with its command
//! pools), an [`ExecutionExtensions`] per execution (from recording until its objects go
//! back) and a [`CompletedExtensions`] per fence, and calls their hooks unconditionally:
//!
//! | when | hook | `timing` | `parallel-recording` |
//! | --- | --- | --- | --- |
//! | recording starts | [`Extensions::start`] | takes a query pool | |
//! | batches are cut into pieces | [`Extensions::cut`] | | cuts runs of `Send` passes |
//! | a batch's command buffers are taken | [`Extensions::time_batch`] | hands out queries | |
//! | a piece begins | [`ExecutionExtensions::begin_piece`] | resets the batch's queries | |
//! | around each pass | [`ExecutionExtensions::before_pass`], `after_pass` | timestamps | |
//! | the pieces are recorded | [`Extensions::record_spread`] | | records on threads |
//! | a fence sees it complete | [`ExecutionExtensions::complete`] | reads the times | |
//! | it completes unwatched | [`ExecutionExtensions::complete_unseen`] | logs the times | |
//! | its objects go back | [`Extensions::recycle`] | the query pool back | |
//! | the graph drops | [`Extensions::destroy`] | destroys the query pools | |
//!
//! Each field's type is the feature's own when the feature is on, and [`Off`] otherwise,
//! whose hooks do nothing: the two `use` lines below are the only place the runtime names
//! the features. (They name the leaves' types; when a feature is off, the glob import of
//! `off` gives the same names, which a named import would otherwise shadow.) What a leaf
//! implements is [`TimingHooks`] or [`ThreadHooks`], whose provided methods are what the
//! `Off` kind does.

use crate::error::Result;
use crate::pass::{Pass, PassEntry};
use crate::plan::{Batch, Plan};
use crate::queue::Queue;
use ash::vk;
use std::any::Any;
use std::ops::Range;

#[cfg(feature = "parallel-recording")]
pub(crate) use crate::parallel_recording::{RecordingThreads, SendPass};
#[cfg(feature = "timing")]
use crate::timing::GraphTiming;
#[allow(
    unused_imports,
    reason = "what the features that are on name is shadowed"
)]
pub(crate) use off::*;

/// The graph's part of each feature, kept with its command pools (locked while recording).
#[derive(Default)]
pub(crate) struct Extensions {
    /// Per-pass GPU times (`timing`; [`crate::Graph::set_gpu_timings`]).
    pub(crate) timing: GraphTiming,
    /// Recording threads (`parallel-recording`; `Graph::set_recording_threads`).
    pub(crate) threads: RecordingThreads,
}

/// One execution's part of each feature, from recording until its objects go back.
#[derive(Default)]
pub(crate) struct ExecutionExtensions {
    timing: <GraphTiming as TimingHooks>::Execution,
}

/// What an execution's fence hands over once the execution completed.
#[derive(Default)]
pub(crate) struct CompletedExtensions {
    /// What [`TimingHooks::complete`] read.
    pub(crate) timing: <GraphTiming as TimingHooks>::Completed,
}

/// How [`Extensions::cut`] cut an execution's batches for [`Extensions::record_spread`].
pub(crate) type Cut = <RecordingThreads as ThreadHooks>::Cut;

impl Extensions {
    /// Recording starts for an execution of `passes` passes: its part of each feature.
    pub(crate) fn start(
        &mut self,
        device: &ash::Device,
        passes: usize,
    ) -> Result<ExecutionExtensions> {
        Ok(ExecutionExtensions {
            timing: self.timing.start(device, passes)?,
        })
    }

    /// Cuts every batch of `plan` into pieces, appended to `pieces` with each batch's end in
    /// `ends`, if the recording is spread over threads; `None`, with both left empty, if it
    /// stays on the calling thread.
    pub(crate) fn cut(
        &self,
        plan: &Plan,
        passes: &[PassEntry<'_>],
        pieces: &mut Vec<Piece>,
        ends: &mut Vec<usize>,
    ) -> Option<Cut> {
        self.threads.cut(plan, passes, pieces, ends)
    }

    /// The command buffers of `batch` on `queue` are being taken, in recording order: the
    /// range of queries its first piece resets (timing).
    pub(crate) fn time_batch(
        &self,
        run: &mut ExecutionExtensions,
        batch: &Batch,
        passes: &[PassEntry<'_>],
        queue: &Queue,
    ) -> Option<Range<u32>> {
        self.timing
            .time_batch(&mut run.timing, batch, passes, queue)
    }

    /// Records the pieces [`Extensions::cut`] cut, on threads.
    pub(crate) fn record_spread(
        &mut self,
        cut: Cut,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()> {
        self.threads.record(cut, passes, work, keep)
    }

    /// Takes back an execution's part once it is done with (or was never submitted).
    pub(crate) fn recycle(&mut self, run: ExecutionExtensions) {
        self.timing.recycle(run.timing);
    }

    /// Destroys what the features keep. Call only when no execution is in flight.
    pub(crate) fn destroy(&mut self, device: &ash::Device) {
        self.timing.destroy(device);
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
        GraphTiming::begin_piece(&self.timing, device, cmd, reset);
    }

    /// Pass `pass` is about to record into `cmd`.
    #[inline]
    pub(crate) fn before_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        GraphTiming::before_pass(&self.timing, device, cmd, pass);
    }

    /// Pass `pass` has recorded into `cmd`.
    #[inline]
    pub(crate) fn after_pass(&self, device: &ash::Device, cmd: vk::CommandBuffer, pass: usize) {
        GraphTiming::after_pass(&self.timing, device, cmd, pass);
    }

    /// The execution completed and a fence saw it: what the fence hands over.
    pub(crate) fn complete(&mut self, device: &ash::Device) -> CompletedExtensions {
        CompletedExtensions {
            timing: GraphTiming::complete(&mut self.timing, device),
        }
    }

    /// The execution completed after its fence was dropped: nobody takes its results.
    pub(crate) fn complete_unseen(&mut self, device: &ash::Device) {
        GraphTiming::complete_unseen(&mut self.timing, device);
    }
}

/// What the `timing` feature does in an execution; see the table in the [module](self).
/// `Self` is the graph's part.
pub(crate) trait TimingHooks: Default + Send {
    /// One execution's part.
    type Execution: Default + Send + Sync;
    /// What a fence hands over.
    type Completed: Default + Send;

    /// See [`Extensions::start`].
    fn start(&mut self, _device: &ash::Device, _passes: usize) -> Result<Self::Execution> {
        Ok(Self::Execution::default())
    }
    /// See [`Extensions::time_batch`].
    fn time_batch(
        &self,
        _run: &mut Self::Execution,
        _batch: &Batch,
        _passes: &[PassEntry<'_>],
        _queue: &Queue,
    ) -> Option<Range<u32>> {
        None
    }
    /// See [`ExecutionExtensions::begin_piece`].
    fn begin_piece(
        _run: &Self::Execution,
        _device: &ash::Device,
        _cmd: vk::CommandBuffer,
        _reset: &Range<u32>,
    ) {
    }
    /// See [`ExecutionExtensions::before_pass`].
    fn before_pass(
        _run: &Self::Execution,
        _device: &ash::Device,
        _cmd: vk::CommandBuffer,
        _pass: usize,
    ) {
    }
    /// See [`ExecutionExtensions::after_pass`].
    fn after_pass(
        _run: &Self::Execution,
        _device: &ash::Device,
        _cmd: vk::CommandBuffer,
        _pass: usize,
    ) {
    }
    /// See [`ExecutionExtensions::complete`].
    fn complete(_run: &mut Self::Execution, _device: &ash::Device) -> Self::Completed {
        Self::Completed::default()
    }
    /// See [`ExecutionExtensions::complete_unseen`].
    fn complete_unseen(_run: &mut Self::Execution, _device: &ash::Device) {}
    /// See [`Extensions::recycle`].
    fn recycle(&mut self, _run: Self::Execution) {}
    /// See [`Extensions::destroy`].
    fn destroy(&mut self, _device: &ash::Device) {}
}

/// What the `parallel-recording` feature does in an execution; see the table in the
/// [module](self). `Self` is the graph's part.
pub(crate) trait ThreadHooks: Default + Send {
    /// What [`ThreadHooks::cut`] decided, handed back to [`ThreadHooks::record`].
    type Cut;

    /// See [`Extensions::cut`].
    fn cut(
        &self,
        _plan: &Plan,
        _passes: &[PassEntry<'_>],
        _pieces: &mut Vec<Piece>,
        _ends: &mut Vec<usize>,
    ) -> Option<Self::Cut> {
        None
    }
    /// See [`Extensions::record_spread`].
    fn record(
        &mut self,
        cut: Self::Cut,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()>;
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
    fn each_pass(&self, f: &mut dyn FnMut(usize, usize));
    /// Records the pieces of `thread`, in recording order, with passes from `passes`, keeping
    /// what they ask to keep alive in `keep`. On an error, the index of the piece it came
    /// from in recording order (so the first failure across threads wins), with the error.
    fn record(
        &self,
        thread: usize,
        passes: &mut dyn PassSource,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> std::result::Result<(), (usize, crate::Error)>;
}

/// Where the recording loop takes its passes from: the execution's own list, or the passes
/// handed to a recording thread.
pub(crate) trait PassSource {
    /// Pass `p`'s name (also of passes recorded elsewhere: barrier labels name neighbours).
    fn name(&self, p: usize) -> &str;
    /// Pass `p`, to record now, with its name and queue.
    fn pass(&mut self, p: usize) -> Result<(&mut dyn Pass, &str, &Queue)>;
}

/// A feature that is off: nothing kept, and hooks that do nothing.
#[derive(Default)]
pub(crate) struct Off;

impl TimingHooks for Off {
    type Execution = ();
    type Completed = ();
}

impl ThreadHooks for Off {
    /// Never cut: recording stays on the calling thread.
    type Cut = std::convert::Infallible;

    fn record(
        &mut self,
        cut: Self::Cut,
        _: &mut [PassEntry<'_>],
        _: &dyn SpreadWork,
        _: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> Result<()> {
        match cut {}
    }
}

/// What the features' names are when the features are off.
#[allow(dead_code, reason = "with every feature on, nothing here is used")]
mod off {
    use crate::pass::Pass;

    pub(crate) type GraphTiming = super::Off;
    pub(crate) type RecordingThreads = super::Off;
    /// No pass slot is of this kind: without recording threads no pass is inserted as `Send`.
    pub(crate) type SendPass<'a> = NoSendPass;

    /// The pass-slot kind that cannot be made.
    pub(crate) enum NoSendPass {}

    impl std::ops::Deref for NoSendPass {
        type Target = dyn Pass;
        fn deref(&self) -> &Self::Target {
            match *self {}
        }
    }

    impl std::ops::DerefMut for NoSendPass {
        fn deref_mut(&mut self) -> &mut Self::Target {
            match *self {}
        }
    }
}
