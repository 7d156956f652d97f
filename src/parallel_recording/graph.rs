//! Recording on several threads: [`Graph::set_recording_threads`], and the passes that may
//! be recorded on another thread ([`GraphBuilder::insert_send_pass`],
//! [`GraphBuilder::insert_send_fn`]).

use super::RecordingThreads;
use crate::error::Result;
use crate::pass::{Declare, FnPass, Pass, PassSlot, Recorder};
use crate::queue::Queue;
use crate::{Graph, GraphBuilder};
use std::borrow::Cow;

impl Graph {
    /// How many threads record an execution's command buffers (1, the default: only the
    /// thread that calls `execute()`). With `threads` above 1, each batch's runs of
    /// consecutive passes inserted with [`GraphBuilder::insert_send_pass`] or
    /// [`GraphBuilder::insert_send_fn`] are cut into up to `threads` chunks of at least
    /// [`Graph::set_min_passes_per_recording_thread`] passes each (barrier commands go with
    /// the pass after them). The calling thread records the first chunk of every run and all
    /// other passes; `threads - 1` threads the graph keeps (started by the first execution
    /// that spreads its recording, stopped when the graph drops) record the rest, each from
    /// its own command pool per queue family, into its own primary command buffer. The batch
    /// submits its command buffers in order, so the GPU sees the same commands as with one
    /// thread, with the same labels and GPU timings per pass.
    ///
    /// When it pays off: handing a chunk to a kept thread and waiting for it costs a few
    /// microseconds, and each chunk adds a command buffer to begin, end and submit, so a chunk
    /// must record more than that: with the default minimum of
    /// [`Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD`] passes, passes that record one
    /// command each are spread only in frames of hundreds of passes, while passes that record
    /// tens of commands each gain from a few per thread (lower the minimum for those).
    /// `cargo bench --bench parallel` prints one thread against N for both kinds, at 10 to
    /// 1000 passes. The driver must record in parallel too: lavapipe does not (two threads
    /// record raw `vkCmdCopyBuffer` calls no faster than one), so it shows only the overhead.
    /// Nothing is spread when a run is too short to give two threads their minimum, so a small
    /// frame records exactly as with one thread.
    ///
    /// A pass's error on another thread comes back from `execute()` as it would on the
    /// calling thread (the first in recording order, when several fail), and its panic goes
    /// on on the calling thread once every thread has stopped, with the command buffers reset
    /// as for a panic on the calling thread.
    ///
    /// `0` counts as 1.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    /// graph.set_recording_threads(cores.min(8));
    /// # }
    /// ```
    pub fn set_recording_threads(&self, threads: usize) {
        self.with_recording_threads(|t| t.threads = threads.max(1));
    }

    /// The fewest passes a thread gets when [`Graph::set_recording_threads`] spreads a run of
    /// passes (default [`Graph::DEFAULT_MIN_PASSES_PER_RECORDING_THREAD`]); `0` counts as 1.
    /// Lower it for passes that record many commands each, raise it for passes that record
    /// one: `cargo bench --bench parallel` prints the times to choose from.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// graph.set_recording_threads(4);
    /// graph.set_min_passes_per_recording_thread(16);
    /// # }
    /// ```
    pub fn set_min_passes_per_recording_thread(&self, passes: usize) {
        self.with_recording_threads(|t| t.min_passes = passes.max(1));
    }

    /// The default of [`Graph::set_min_passes_per_recording_thread`]: enough passes that
    /// record one command each to pay for starting a thread (about 10 to 30 µs), so that
    /// turning threads on never slows a frame down much; passes that record more can take
    /// far fewer.
    pub const DEFAULT_MIN_PASSES_PER_RECORDING_THREAD: usize = 64;
}

impl Graph {
    /// Changes the graph's recording threads with `change`, installing them into its
    /// extensions the first time.
    fn with_recording_threads(&self, change: impl FnOnce(&mut RecordingThreads)) {
        let mut extensions = self.pools().extensions();
        let part = (extensions.threads).get_or_insert_with(|| Box::<RecordingThreads>::default());
        if let Some(threads) = part.as_any_mut().downcast_mut() {
            change(threads);
        }
    }
}

impl<'a> GraphBuilder<'a> {
    /// Appends a pass on `queue` that may be recorded on another thread: like
    /// [`GraphBuilder::insert_pass`], for a pass that is `Send`. With
    /// [`Graph::set_recording_threads`] above 1, a long run of such passes in one batch is
    /// cut into chunks recorded side by side; otherwise (and always for passes inserted with
    /// `insert_pass` or `insert_fn`) it records on the thread that calls `execute()`.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut (dyn vk_baton::Pass + Send)) {
    /// graph.set_recording_threads(4);
    /// let b = graph.record().insert_send_pass("p", p, q);
    /// # }
    /// ```
    pub fn insert_send_pass(
        self,
        name: impl Into<Cow<'a, str>>,
        pass: &'a mut (dyn Pass + Send + 'a),
        queue: &'a Queue,
    ) -> Self {
        self.insert_slot(name.into(), PassSlot::BorrowedSend(pass), queue)
    }

    /// Appends a pass made of two `Send` closures on `queue` that may be recorded on another
    /// thread: [`GraphBuilder::insert_fn`] as [`GraphBuilder::insert_send_pass`] is
    /// [`GraphBuilder::insert_pass`].
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, buf: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, Access};
    /// graph.set_recording_threads(4);
    /// let mut builder = graph.record();
    /// for i in 0..1000u32 {
    ///     let buf = buf.clone();
    ///     builder = builder.insert_send_fn("fill", q, {
    ///         let buf = buf.clone();
    ///         move |d| { d.uses(&buf, Access::TRANSFER_WRITE); }
    ///     }, move |r| {
    ///         // SAFETY: the buffer is alive and in the declared state; `r.cmd()` is recording
    ///         // on this thread only.
    ///         unsafe { r.device().cmd_fill_buffer(r.cmd(), buf.handle(), 0, 4, i) };
    ///         Ok(())
    ///     });
    /// }
    /// builder.finish()?.execute()?.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn insert_send_fn<D, R>(
        self,
        name: impl Into<Cow<'a, str>>,
        queue: &'a Queue,
        declare: D,
        record: R,
    ) -> Self
    where
        D: Fn(&mut Declare<'_>) + Send + 'a,
        R: FnMut(&mut Recorder<'_>) -> Result<()> + Send + 'a,
    {
        let pass: Box<dyn Pass + Send + 'a> = Box::new(FnPass::new(declare, record));
        self.insert_slot(name.into(), PassSlot::OwnedSend(pass), queue)
    }
}
