//! Recording a plan into command buffers, and putting everything back when a pass fails.
//!
//! There is one recording loop, [`record_jobs`]. A batch is recorded as *pieces*: runs of its
//! commands, each into a primary command buffer of its own. Without recording threads every
//! non-empty batch is one piece; with them ([`crate::Graph::set_recording_threads`]), the
//! [extensions](crate::extensions) cut long runs of `Send` passes into pieces for other
//! threads, each of which runs the loop for its own pieces. Either way the calling thread
//! first takes every command buffer, fence and timestamp query in recording order, then the
//! pieces are recorded by [`record_piece`], which turns [`Command::Barrier`] into one
//! `vkCmdPipelineBarrier2` from the plan's baked barriers and [`Command::Pass`] into the
//! pass's own recording inside its debug label and the extensions' hooks (timestamps).
//!
//! A pass's `record()` may return an error or panic. Either way the execution ends before
//! anything is submitted, and it must leave the graph as it found it: the command buffers
//! reset and back in their pool, the fences back in the spare list, the completion token
//! marked failed (so nothing waits on it forever), and the pass's error naming the pass.

use super::pools::{Reusable, Spares};
use super::shared::GraphPools;
use super::Execution;
use crate::access::LayoutPolicy;
use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::extensions::{
    bind_transients, ExecutionExtensions, Extensions, PassSource, Piece, SpreadWork,
};
use crate::fence::{InFlight, Lists, PoolKey};
use crate::pass::{PassEntry, Recorder};
use crate::plan::{Command, Plan};
use crate::prepared::labels::{self, pass_color, PlanLabels};
use crate::prepared::replays::Choice;
use crate::prepared::scratch::{BatchTables, FrameScratch, Job, RecordingLists};
use crate::prepared::PlanBarriers;
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// An object a pass asked to keep alive ([`crate::Recorder::keep_alive`]).
type Kept = Box<dyn Any + Send + Sync>;

/// What recording an execution produced, all of it to hand back to the graph once done:
/// its vectors come from the graph's spares, taken under the lock recording holds, and go
/// back there with its [`InFlight`].
pub(crate) struct Recording {
    /// The execution's completion token.
    pub(crate) token: CompletionToken,
    /// Its objects, the objects the passes keep alive, and what the submit reached; the
    /// fence keeps the execution's resources and queues alive in them.
    pub(crate) lists: Lists,
    /// Where each queue's batches and command buffers are, lent by the frame scratch.
    tables: BatchTables,
    /// The optional parts' objects (timestamp queries).
    ext: ExecutionExtensions,
    /// It submits a kept recording again: it recorded nothing.
    pub(crate) replayed: bool,
}

impl Recording {
    /// Empty, with `token`, lists from the graph's spares and the tables of `frame`.
    fn new(token: CompletionToken, spares: &mut Spares, frame: &mut FrameScratch) -> Self {
        let mut tables = std::mem::take(&mut frame.recording.tables);
        tables.clear();
        Recording {
            token,
            lists: spares.lists.pop().unwrap_or_default(),
            tables,
            ext: ExecutionExtensions::default(),
            replayed: false,
        }
    }

    /// The fence of queue `q`'s last submit.
    pub(crate) fn queue_fence(&self, q: usize) -> Option<vk::Fence> {
        self.tables.queue_fences.get(q).copied().flatten()
    }

    /// The command buffers of batch `b` of queue `q`, in submission order (none if it has
    /// no commands).
    pub(crate) fn batch_cmds(&self, q: usize, b: usize) -> &[vk::CommandBuffer] {
        let t = &self.tables;
        let Some(i) = t.batch_start.get(q).map(|s| s + b) else {
            return &[];
        };
        let start = i.checked_sub(1).map_or(0, |p| t.batch_ends[p]);
        let end = t.batch_ends.get(i).copied().unwrap_or(start);
        &t.batch_cmds[start..end]
    }

    /// What to hand to an execution fence (or back to the pools), keeping `resources` and
    /// `queues` alive until then. The tables go back to `frame`, which goes with it.
    pub(crate) fn into_in_flight(
        self,
        frame: &mut FrameScratch,
        resources: &[Resource],
        queues: &[Queue],
    ) -> InFlight {
        let Recording {
            token,
            mut lists,
            tables,
            ext,
            ..
        } = self;
        frame.recording.tables = tables;
        lists.resources.extend(resources.iter().cloned());
        lists.queues.extend(queues.iter().cloned());
        InFlight { token, lists, ext }
    }
}

impl Execution<'_, '_> {
    /// Records every batch of the plan, under the one lock an execution takes: everything it
    /// needs from the graph (a token, the spare lists, the frame scratch, command buffers,
    /// fences) is taken there. Returns the recording, which carries the token, and the
    /// scratch to submit with. On an error or a panic in a pass, puts everything taken back
    /// (command buffers reset and returned to their pools, fences returned), marks the token
    /// failed, and then returns the error or resumes the panic.
    ///
    /// Why resume the panic rather than turn it into an `Err`: a panic is a bug in the pass,
    /// and the pass (owned by the caller) may be left half-updated. Returning `Err` would
    /// invite the caller to carry on with it, and would change what `panic = "abort"` builds,
    /// `#[should_panic]` tests and panic hooks see. So the panic goes on as if vk-baton were
    /// not there; only the graph's own state is repaired first, which is all
    /// `AssertUnwindSafe` vouches for: the recording state below is only ever pushed to, so it
    /// is consistent at any unwind point.
    pub(super) fn record(&mut self, frame: &mut FrameScratch) -> Result<Recording> {
        let pools = self.pools.clone();
        // The one lock of the execution: the spares and the command pools together.
        let mut reusable = pools.reusable.lock();
        reusable.take_returned();
        let token = reusable.spares.token(&pools.device);
        // The transients' objects for this execution, kept bound until the recording ends.
        let debug = pools.debug.as_ref();
        let transients =
            bind_transients(pools.transients(), self.plan, self.resources, &token, debug);
        let transients = match transients {
            Ok(guard) => guard,
            Err(e) => {
                token.set_submitted(&[]);
                token.set_failed();
                return Err(e);
            }
        };
        let mut out = Recording::new(token.clone(), &mut reusable.spares, frame);
        out.tables.queue_fences.resize(self.queues.len(), None);
        let lists = &mut frame.recording;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            self.record_all(&mut reusable, &token, &mut out, lists)
        }));
        lists.jobs.clear();
        if !matches!(outcome, Ok(Ok(()))) {
            reset_unsubmitted(&pools.device, &out.lists.cmds);
        }
        drop((transients, reusable));
        let failed = match outcome {
            Ok(Ok(())) => return Ok(out),
            Ok(Err(e)) => Err(e),
            Err(payload) => Ok(payload),
        };
        // Nothing was submitted: the token completes as failed, and every command buffer and
        // fence goes back to the pools for the next execution.
        token.set_submitted(&[]);
        token.set_failed();
        pools.recycle(out.into_in_flight(frame, &[], &[]));
        match failed {
            Err(e) => Err(e),
            Ok(payload) => panic::resume_unwind(payload),
        }
    }

    /// Records every batch into `out`. On error, `out` holds what was taken so far.
    fn record_all(
        &mut self,
        reusable: &mut Reusable,
        token: &CompletionToken,
        out: &mut Recording,
        lists: &mut RecordingLists,
    ) -> Result<()> {
        let labels = (self.pools.debug.as_ref()).filter(|_| self.record_labels);
        let choice = self.choose(&reusable.extensions, labels.is_some());
        match choice {
            Choice::Replay(set) => return self.replay(set, reusable, token, out),
            Choice::Keep(set) => self.give_back_kept(set, reusable, &mut out.lists.keep),
            Choice::Record => {}
        }
        let cut = self.cut_into_pieces(&reusable.extensions, lists);
        // What the passes ask to keep alive from here on is the recording's.
        let kept_before = out.lists.keep.len();
        let Execution {
            pools,
            passes,
            queues,
            resources,
            plan,
            barriers,
            labels: kept_labels,
            recorded,
            layouts,
            ..
        } = self;
        let device: &ash::Device = &pools.device;
        barriers.prepare(plan, resources);
        // Pass and barrier labels, unless the graph turned them off; kept with a plan that
        // comes back.
        if labels.is_some() && **recorded && !kept_labels.built() {
            let (passes, queues) = (&*passes, &*queues);
            labels::keep(
                kept_labels,
                plan,
                |q| queues[q].family(),
                |p| &*passes[p].name,
            );
        }
        out.ext = reusable.extensions.start(device, passes.len(), plan)?;
        take_objects(pools, reusable, (plan, queues, passes), out, lists, labels)?;
        let shared = Shared {
            device,
            labels,
            debug: pools.debug.as_ref(),
            plan,
            queues,
            barriers,
            kept_labels,
            token,
            layouts: *layouts,
            ext: &out.ext,
            labels_missed: AtomicBool::new(false),
            dressed: labels.is_some() || out.ext.hooks(),
            one_time: choice == Choice::Record,
        };
        let (jobs, keep) = (&lists.jobs[..], &mut out.lists.keep);
        // Marked before the passes record, so that it holds even if one of them fails.
        self.replays.keys_lent();
        match cut {
            Some(cut) => {
                let work = Work { s: &shared, jobs };
                reusable
                    .extensions
                    .record_spread(cut, passes, &work, keep)?;
            }
            None => record_jobs(&shared, jobs, 0, &mut &mut passes[..], keep).map_err(|e| e.1)?,
        }
        if shared.labels_missed.load(Ordering::Relaxed) {
            kept_labels.forget();
        }
        **recorded = true;
        if let Choice::Keep(set) = choice {
            let lists = (&mut out.lists.cmds, &mut out.lists.keep, kept_before);
            let recorded_for = (&*self.plan, self.resources);
            (self.replays).kept(set, lists, &out.tables, token, recorded_for);
            out.ext.keep_into(self.replays.ext_mut(set));
        }
        Ok(())
    }

    /// Cuts every batch into pieces: for recording threads, when the extensions spread the
    /// recording (then `Some(threads)`), or every non-empty batch one piece for the calling
    /// thread.
    fn cut_into_pieces(
        &self,
        extensions: &Extensions,
        lists: &mut RecordingLists,
    ) -> Option<usize> {
        let (pieces, ends) = (&mut lists.pieces, &mut lists.piece_ends);
        pieces.clear();
        ends.clear();
        if let Some(cut) = extensions.cut(self.plan, self.passes, pieces, ends) {
            return Some(cut);
        }
        for batch in self.plan.queues.iter().flat_map(|q| &q.batches) {
            if !batch.commands.is_empty() {
                pieces.push(Piece {
                    commands: 0..batch.commands.len(),
                    thread: 0,
                });
            }
            ends.push(pieces.len());
        }
        None
    }
}

/// Takes, in recording order, a command buffer per piece (named for its batch), a fence per
/// queue with batches, and two timestamp queries per timed pass; fills `lists.jobs`.
fn take_objects(
    pools: &GraphPools,
    reusable: &mut Reusable,
    (plan, queues, passes): (&Plan, &[Queue], &[PassEntry<'_>]),
    out: &mut Recording,
    lists: &mut RecordingLists,
    labels: Option<&DebugUtils>,
) -> Result<()> {
    let RecordingLists {
        pieces,
        piece_ends,
        jobs,
        ..
    } = lists;
    let (mut flat, mut from) = (0, 0);
    for (qi, qp) in plan.queues.iter().enumerate() {
        let family = queues[qi].family();
        out.tables.batch_start.push(out.tables.batch_ends.len());
        for (bi, batch) in qp.batches.iter().enumerate() {
            let reset = (reusable.extensions).time_batch(&mut out.ext, batch, passes, &queues[qi]);
            let mut reset = reset.filter(|r| !r.is_empty());
            for piece in &pieces[from..piece_ends[flat]] {
                let key = PoolKey {
                    family,
                    thread: piece.thread,
                };
                let cmd = pools.command_buffer(reusable, key)?;
                labels::name_command_buffer(&mut reusable.names, labels, cmd, &queues[qi], bi);
                out.lists.cmds.push((key, cmd));
                out.tables.batch_cmds.push(cmd);
                jobs.push(Job {
                    queue: qi,
                    batch: bi,
                    commands: piece.commands.clone(),
                    thread: piece.thread,
                    cmd,
                    reset: reset.take(),
                });
            }
            (from, flat) = (piece_ends[flat], flat + 1);
            out.tables.batch_ends.push(out.tables.batch_cmds.len());
        }
        if !qp.batches.is_empty() {
            let fence = pools.fence(reusable)?;
            out.lists.fences.push(fence);
            out.tables.queue_fences[qi] = Some(fence);
        }
    }
    Ok(())
}

/// What every piece's recording reads.
struct Shared<'e> {
    device: &'e ash::Device,
    /// For labels: `None` when the graph has no debug utils or labels are off.
    labels: Option<&'e DebugUtils>,
    /// For the passes' recorders.
    debug: Option<&'e DebugUtils>,
    plan: &'e Plan,
    queues: &'e [Queue],
    barriers: &'e PlanBarriers,
    /// The labels kept with the plan, if built.
    kept_labels: &'e PlanLabels,
    token: &'e CompletionToken,
    /// The layouts the passes declared their image uses in, which they record with.
    layouts: LayoutPolicy,
    /// The optional parts' hooks around pieces and passes (timestamps).
    ext: &'e ExecutionExtensions,
    /// Whether a kept label named a pass that is named otherwise now: then the labels are
    /// built again next time.
    labels_missed: AtomicBool,
    /// Whether anything goes around the barriers and passes: labels, or the extensions'
    /// hooks. Decided once per execution, so that a frame with neither records nothing else.
    dressed: bool,
    /// The command buffers are submitted once (`ONE_TIME_SUBMIT`), not kept to submit again.
    one_time: bool,
}

/// The one recording loop: records the pieces of `thread` among `jobs`, in order, with passes
/// from `passes` (the calling thread records every piece when recording is not spread). On
/// an error, the index of the job it came from, with the error.
fn record_jobs<P: PassSource + ?Sized>(
    s: &Shared<'_>,
    jobs: &[Job],
    thread: usize,
    passes: &mut P,
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
) -> std::result::Result<(), (usize, Error)> {
    // The plan's barrier commands before the next piece, in recording order: the index of its
    // first in the baked barriers.
    let mut barriers_before = 0;
    for (j, job) in jobs.iter().enumerate() {
        barriers_before = if job.thread == thread {
            record_piece(s, job, barriers_before, passes, keep).map_err(|e| (j, e))?
        } else {
            let commands = &s.plan.queues[job.queue].batches[job.batch].commands;
            let barrier = |c: &&Command| matches!(c, Command::Barrier(_));
            barriers_before
                + commands[job.commands.clone()]
                    .iter()
                    .filter(barrier)
                    .count()
        };
    }
    Ok(())
}

/// The executor's side of a recording spread over threads: the jobs, and the loop.
struct Work<'s, 'e> {
    s: &'s Shared<'e>,
    jobs: &'s [Job],
}

impl SpreadWork for Work<'_, '_> {
    fn each_pass(&self, f: &mut dyn FnMut(usize, usize)) {
        for job in self.jobs {
            let batch = &self.s.plan.queues[job.queue].batches[job.batch];
            for c in &batch.commands[job.commands.clone()] {
                if let Command::Pass(p) = c {
                    f(job.thread, *p);
                }
            }
        }
    }

    fn record(
        &self,
        thread: usize,
        passes: &mut dyn PassSource,
        keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    ) -> std::result::Result<(), (usize, Error)> {
        record_jobs(self.s, self.jobs, thread, passes, keep)
    }
}

/// Records one piece into its command buffer, from begin to end. `barriers_before`: the
/// plan's barrier commands before the piece, in recording order; returns those up to its end.
fn record_piece<P: PassSource + ?Sized>(
    s: &Shared<'_>,
    job: &Job,
    barriers_before: usize,
    passes: &mut P,
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
) -> Result<usize> {
    let (device, cmd) = (s.device, job.cmd);
    let flags = match s.one_time {
        true => vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        false => vk::CommandBufferUsageFlags::empty(),
    };
    let begin = vk::CommandBufferBeginInfo::default().flags(flags);
    // SAFETY: `cmd` is not pending (fresh, or recycled after its fence signalled), and no
    // other thread uses its pool: each thread records from its own (`PoolKey::thread`), and
    // the calling thread holds the pools' lock until every thread has stopped.
    unsafe { device.begin_command_buffer(cmd, &begin) }
        .map_err(|e| Error::vk("vkBeginCommandBuffer", e))?;
    if let Some(reset) = &job.reset {
        s.ext.begin_piece(device, cmd, reset);
    }
    let recorded = if s.dressed {
        record_commands::<true, P>(s, job, barriers_before, passes, keep)?
    } else {
        record_commands::<false, P>(s, job, barriers_before, passes, keep)?
    };
    // SAFETY: `cmd` is recording.
    unsafe { device.end_command_buffer(cmd) }.map_err(|e| Error::vk("vkEndCommandBuffer", e))?;
    Ok(recorded)
}

/// Records the commands of `job`'s piece into its begun command buffer; returns the plan's
/// barrier commands up to its end. `DRESSED`: with the labels and the extensions' hooks
/// around barriers and passes ([`Shared::dressed`]); without, each barrier command is one
/// `vkCmdPipelineBarrier2` and each pass its own recording, nothing else.
#[inline(always)]
fn record_commands<const DRESSED: bool, P: PassSource + ?Sized>(
    s: &Shared<'_>,
    job: &Job,
    mut barrier_k: usize,
    passes: &mut P,
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
) -> Result<usize> {
    let (device, cmd) = (s.device, job.cmd);
    let batch = &s.plan.queues[job.queue].batches[job.batch];
    let kept_labels = Some(s.kept_labels).filter(|l| DRESSED && s.labels.is_some() && l.built());
    let first = job.commands.start;
    for (ci, command) in (first..).zip(&batch.commands[job.commands.clone()]) {
        match command {
            Command::Barrier(b) => {
                let dep = s.barriers.dependency(barrier_k);
                let record = || {
                    if let Some(dep) = dep {
                        // SAFETY: `cmd` is recording; every handle is alive (the resources
                        // are held by this execution) and the barriers come from a
                        // validated plan, baked for these resources.
                        unsafe { device.cmd_pipeline_barrier2(cmd, dep) }
                    }
                };
                match s.labels.filter(|_| DRESSED) {
                    Some(d) => {
                        let label =
                            kept_labels.and_then(|l| l.barrier(barrier_k, |p| passes.name(p)));
                        note_missed(s, kept_labels, label.is_some());
                        let family = s.queues[job.queue].family();
                        let at = (batch, ci, b);
                        labels::labelled_barrier(
                            d,
                            cmd,
                            family,
                            at,
                            label,
                            |p| passes.name(p),
                            record,
                        );
                    }
                    None => record(),
                }
                barrier_k += 1;
            }
            Command::Pass(i) => {
                if DRESSED {
                    let label = kept_labels.and_then(|l| l.pass(*i, passes.name(*i)));
                    note_missed(s, kept_labels, label.is_some());
                    open_pass(s, cmd, job.queue, (passes.name(*i), label), *i);
                }
                let (pass, pass_name, queue) = passes.pass(*i)?;
                let mut r = Recorder {
                    device,
                    cmd,
                    queue,
                    keep: &mut *keep,
                    completion: s.token,
                    debug: s.debug,
                    pass_name,
                    layouts: s.layouts,
                };
                pass.record(&mut r)
                    .map_err(|e| name_the_pass(pass_name, e))?;
                if DRESSED {
                    close_pass(s, cmd, *i);
                }
            }
        }
    }
    Ok(barrier_k)
}

/// Notes a kept label that could not be used (its pass is named otherwise now).
fn note_missed(s: &Shared<'_>, kept: Option<&PlanLabels>, found: bool) {
    if kept.is_some() && !found {
        s.labels_missed.store(true, Ordering::Relaxed);
    }
}

/// Before pass `pass`: its label (the kept one if any), then the extensions' hook.
#[inline]
fn open_pass(
    s: &Shared<'_>,
    cmd: vk::CommandBuffer,
    qi: usize,
    (name, kept): (&str, Option<&std::ffi::CStr>),
    pass: usize,
) {
    if let Some(d) = s.labels {
        // SAFETY: `cmd` is recording on this thread only; the debug functions belong to the
        // graph's device (`Graph::new`'s contract).
        unsafe {
            match kept {
                Some(label) => d.begin_label_c(cmd, label, pass_color(qi)),
                None => d.begin_label_with_color(cmd, name, pass_color(qi)),
            }
        };
    }
    s.ext.before_pass(s.device, cmd, pass);
}

/// After pass `pass`: the extensions' hook, then the end of its label.
#[inline]
fn close_pass(s: &Shared<'_>, cmd: vk::CommandBuffer, pass: usize) {
    s.ext.after_pass(s.device, cmd, pass);
    if let Some(d) = s.labels {
        // SAFETY: closes the label `open_pass` opened (a pass closes only labels it opened).
        unsafe { d.end_label(cmd) };
    }
}

/// Wraps a pass's error in [`Error::Record`] naming the pass, unless it already does.
#[cold]
fn name_the_pass(pass: &str, e: Error) -> Error {
    match e {
        Error::Record { pass: p, source } if p == pass => Error::Record { pass: p, source },
        e => Error::Record {
            pass: pass.to_owned(),
            source: Box::new(e),
        },
    }
}

/// Puts command buffers that were begun but never submitted back in the initial state, so the
/// pool can hand them out again. The caller holds the pools lock.
fn reset_unsubmitted(device: &ash::Device, cmds: &[(PoolKey, vk::CommandBuffer)]) {
    for &(_, cmd) in cmds {
        // SAFETY: none of these was submitted; their pool is locked by the caller.
        if let Err(e) =
            unsafe { device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()) }
        {
            log::error!("vkResetCommandBuffer failed after a recording error: {e}");
        }
    }
}

mod replay;
#[cfg(test)]
mod tests;
