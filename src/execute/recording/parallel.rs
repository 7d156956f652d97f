//! Recording one execution on several threads ([`crate::Graph::set_recording_threads`]).
//!
//! [`cut_batch`] decides, per batch, which commands go into which primary command buffer and
//! which thread records it: a pure function of the batch's commands, which passes are `Send`,
//! the thread count and the fewest passes a thread gets. [`record`] then takes every command
//! buffer on the calling thread (each recording thread has its own command pool per family:
//! pools are externally synchronized, buffers of one pool cannot be recorded side by side),
//! hands out the timestamp queries in the order one thread would, and records the pieces on
//! the graph's recording threads ([`crate::pools::RecordingWorkers`], started once and kept);
//! the calling thread records thread 0's pieces meanwhile.
//!
//! Why separate primary command buffers rather than secondaries: a secondary must inherit the
//! render pass or dynamic rendering state it runs in, which a pass that begins its own
//! rendering cannot give, and a primary per piece needs nothing from its neighbours. A batch
//! submits its pieces' command buffers in order in one `VkSubmitInfo2`, and submission order
//! carries each barrier's scopes across command buffer boundaries, so the queue sees the same
//! dependencies as from one command buffer. A piece ends right after a pass, so barrier
//! commands stay with the pass they come before and no label straddles two pieces.

use super::{instrument, name_the_pass, record_barrier, BarrierScratch, Recording};
use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::execute::Execution;
use crate::pass::{Pass, PassEntry, Recorder};
use crate::plan::{Batch, Command, Plan};
use crate::pools::{give, take, PoolKey, Reusable, Task};
use crate::queue::Queue;
use crate::resource::Resource;
use crate::timing::PassTiming;
use ash::vk;
use std::any::Any;
use std::ops::Range;
use std::panic;
use std::sync::atomic::Ordering;

/// Consecutive commands of one batch, recorded by one thread into one primary command buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Indices into the batch's commands.
    pub(crate) commands: Range<usize>,
    /// The thread that records it: 0 is the thread that calls `execute()`.
    pub(crate) thread: usize,
}

/// Cuts a batch's `commands` into pieces, appended to `out` in order; together they cover
/// every command once. `sendable(p)`: whether pass `p` may be recorded on another thread.
///
/// Each pass takes the barrier commands right before it (trailing barriers go with the last
/// piece). A maximal run of consecutive sendable passes with `P` passes is cut into
/// `k = min(threads, P / min_passes)` chunks of `P / k` passes give or take one, chunk `j`
/// on thread `j`, if `k >= 2`; otherwise, and for every pass that is not sendable, the
/// commands stay on thread 0. Neighbouring pieces of thread 0 merge, so a batch with nothing
/// to spread is one piece, as without threads.
pub(crate) fn cut_batch(
    commands: &[Command],
    sendable: impl Fn(usize) -> bool,
    threads: usize,
    min_passes: usize,
    out: &mut Vec<Piece>,
) {
    let first = out.len();
    let min_passes = min_passes.max(1);
    // Where the commands of the next pass start, and the current sendable run.
    let mut unit_start = 0;
    let mut run_start = 0;
    let mut run_ends = Vec::new();
    for (c, command) in commands.iter().enumerate() {
        let Command::Pass(p) = command else { continue };
        let end = c + 1;
        if sendable(*p) {
            if run_ends.is_empty() {
                run_start = unit_start;
            }
            run_ends.push(end);
        } else {
            spread_run(out, first, run_start, &run_ends, threads, min_passes);
            run_ends.clear();
            push_piece(out, first, unit_start..end, 0);
        }
        unit_start = end;
    }
    spread_run(out, first, run_start, &run_ends, threads, min_passes);
    if unit_start < commands.len() {
        match out[first..].last_mut() {
            Some(last) => last.commands.end = commands.len(),
            None => out.push(Piece {
                commands: 0..commands.len(),
                thread: 0,
            }),
        }
    }
}

/// Pieces for a run of sendable passes starting at command `start`, whose passes' commands
/// end at `ends`.
fn spread_run(
    out: &mut Vec<Piece>,
    first: usize,
    start: usize,
    ends: &[usize],
    threads: usize,
    min_passes: usize,
) {
    let Some(&last) = ends.last() else { return };
    let passes = ends.len();
    let chunks = threads.min(passes / min_passes);
    if chunks < 2 {
        return push_piece(out, first, start..last, 0);
    }
    let mut from = start;
    for j in 0..chunks {
        let to = ends[(j + 1) * passes / chunks - 1];
        push_piece(out, first, from..to, j);
        from = to;
    }
}

/// Appends a piece, merging it into the last one of this batch (from `first`) if that one
/// has the same thread and ends where it starts.
fn push_piece(out: &mut Vec<Piece>, first: usize, commands: Range<usize>, thread: usize) {
    if let Some(last) = out[first..].last_mut() {
        if last.thread == thread && last.commands.end == commands.start {
            last.commands.end = commands.end;
            return;
        }
    }
    out.push(Piece { commands, thread });
}

/// A piece with its command buffer, ready to record.
struct Job {
    queue: usize,
    batch: usize,
    commands: Range<usize>,
    thread: usize,
    cmd: vk::CommandBuffer,
    /// The batch's timestamp queries, reset at the start of its first piece (without host
    /// reset).
    reset: Option<Range<u32>>,
}

/// What every recording thread reads.
struct Shared<'e> {
    device: &'e ash::Device,
    /// For labels: `None` when the graph has no debug utils or labels are off.
    labels: Option<&'e DebugUtils>,
    /// For the passes' recorders.
    debug: Option<&'e DebugUtils>,
    plan: &'e Plan,
    queues: &'e [Queue],
    resources: &'e [Resource],
    token: &'e CompletionToken,
    /// Per pass: its name, its queue, and its first timestamp query if timed.
    names: Vec<&'e str>,
    pass_queues: Vec<&'e Queue>,
    queries: Vec<Option<u32>>,
    query_pool: vk::QueryPool,
}

/// Records the execution on up to `threads` threads, if any batch has a run of `Send` passes
/// long enough to spread ([`cut_batch`]); `Ok(false)`, having touched nothing, if none has.
/// On an error or a panic, `out.cmds` holds every command buffer taken, for the caller to
/// reset; every thread has stopped by then.
pub(super) fn record(
    exec: &mut Execution<'_>,
    reusable: &mut Reusable,
    token: &CompletionToken,
    out: &mut Recording,
    barriers: &mut BarrierScratch,
    threads: usize,
) -> Result<bool> {
    let Execution {
        pools,
        passes,
        queues,
        resources,
        plan,
        ..
    } = exec;
    let min_passes = pools.recording.min_passes.load(Ordering::Relaxed).max(1);
    // A batch with fewer `Send` passes than two threads' minimum has no run to spread: such a
    // frame is told apart without allocating, and records as with one thread.
    let spreadable = |b: &Batch| {
        let send = |c: &Command| matches!(c, Command::Pass(p) if passes[*p].pass.is_send());
        b.commands.iter().filter(|c| send(c)).count() >= 2 * min_passes
    };
    if !plan.queues.iter().flat_map(|q| &q.batches).any(spreadable) {
        return Ok(false);
    }
    let mut pieces = Vec::new();
    // Per batch of every queue, in queue order: where its pieces end.
    let mut piece_ends = Vec::new();
    for batch in plan.queues.iter().flat_map(|q| &q.batches) {
        let sendable = |p: usize| passes[p].pass.is_send();
        cut_batch(&batch.commands, sendable, threads, min_passes, &mut pieces);
        piece_ends.push(pieces.len());
    }
    if pieces.iter().all(|p| p.thread == 0) {
        return Ok(false);
    }

    let device: &ash::Device = &pools.device;
    let labels = (pools.debug.as_ref()).filter(|_| pools.labels.load(Ordering::Relaxed));
    out.timer = reusable.instrument.timer(device, passes.len())?;
    let mut queries = vec![None; passes.len()];
    // Every command buffer is taken here, so that the threads only record.
    let mut jobs = Vec::with_capacity(pieces.len());
    let (mut flat, mut from) = (0, 0);
    for (qi, qp) in plan.queues.iter().enumerate() {
        let family = queues[qi].family();
        let support = reusable.instrument.support.as_ref();
        let mask = support.and_then(|s| s.mask(family, queues[qi].caps()));
        out.batch_start.push(out.batch_ends.len());
        for (bi, batch) in qp.batches.iter().enumerate() {
            // The batch's queries, handed out in recording order as one thread would.
            let mut reset = None;
            if let (Some(t), Some(mask)) = (out.timer.as_mut(), mask) {
                let first = t.next_query();
                for c in &batch.commands {
                    if let Command::Pass(i) = c {
                        let (query, spare) = (t.next_query(), t.spares.name());
                        let name = &passes[*i].name;
                        let timing = PassTiming::new(spare, name, &queues[qi], *i, query, mask);
                        t.passes.push(timing);
                        queries[*i] = Some(query);
                    }
                }
                reset = (!t.host_reset && t.next_query() > first).then(|| first..t.next_query());
            }
            for piece in &pieces[from..piece_ends[flat]] {
                let key = PoolKey {
                    family,
                    thread: piece.thread,
                };
                let cmd = pools.command_buffer(reusable, key)?;
                let instrument = &mut reusable.instrument;
                instrument::name_command_buffer(instrument, labels, cmd, &queues[qi], bi);
                out.cmds.push((key, cmd));
                out.batch_cmds.push(cmd);
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
            out.batch_ends.push(out.batch_cmds.len());
        }
        if !qp.batches.is_empty() {
            let fence = pools.fence(reusable)?;
            out.fences.push(fence);
            out.queue_fences[qi] = Some(fence);
        }
    }

    // Each pass goes, by reference, to the thread that records it, in recording order.
    let mut local: Vec<Option<&mut dyn Pass>> = Vec::with_capacity(passes.len());
    let mut sendable: Vec<Option<&mut (dyn Pass + Send)>> = Vec::with_capacity(passes.len());
    let mut names = Vec::with_capacity(passes.len());
    let mut pass_queues = Vec::with_capacity(passes.len());
    for PassEntry { name, pass, queue } in passes.iter_mut() {
        let (name, queue): (&String, &Queue) = (name, queue);
        names.push(name.as_str());
        pass_queues.push(queue);
        if pass.is_send() {
            local.push(None);
            sendable.push(pass.as_send());
        } else {
            local.push(Some(&mut **pass));
            sendable.push(None);
        }
    }
    let mut main_list: Vec<(usize, &mut dyn Pass)> = Vec::new();
    let mut worker_lists: Vec<Vec<(usize, &mut (dyn Pass + Send))>> =
        (1..threads).map(|_| Vec::new()).collect();
    let twice = || Error::InvalidInput("a plan records a pass twice".into());
    for job in &jobs {
        let batch = &plan.queues[job.queue].batches[job.batch];
        for c in &batch.commands[job.commands.clone()] {
            let Command::Pass(i) = *c else { continue };
            if job.thread == 0 {
                let pass = match local[i].take() {
                    Some(p) => p,
                    None => sendable[i].take().ok_or_else(twice)?,
                };
                main_list.push((i, pass));
            } else {
                let pass = sendable[i].take().ok_or_else(twice)?;
                worker_lists[job.thread - 1].push((i, pass));
            }
        }
    }

    let shared = Shared {
        device,
        labels,
        debug: pools.debug.as_ref(),
        plan,
        queues,
        resources,
        token,
        names,
        pass_queues,
        queries,
        query_pool: out
            .timer
            .as_ref()
            .map_or(vk::QueryPool::null(), |t| t.slot.pool),
    };
    let mut keeps: Vec<Vec<Box<dyn Any + Send + Sync>>> = {
        let mut spares = pools.spares.lock();
        (1..threads).map(|_| take(&mut spares.keep)).collect()
    };
    let (shared, jobs) = (&shared, &jobs[..]);
    // Per recording thread but the calling one: its outcome, once it has run.
    let mut outcomes: Vec<Option<ThreadOutcome>> = (1..threads).map(|_| None).collect();
    let tasks: Vec<Task<'_>> = (worker_lists.into_iter().zip(keeps.iter_mut()))
        .zip(outcomes.iter_mut())
        .enumerate()
        .filter(|&(w, _)| jobs.iter().any(|j| j.thread == w + 1))
        .map(|(w, ((mut list, keep), outcome))| -> Task<'_> {
            Box::new(move || {
                let mut scratch = BarrierScratch::default();
                let recorded = record_thread(shared, jobs, w + 1, &mut list, keep, &mut scratch);
                *outcome = Some(recorded);
            })
        })
        .collect();
    let (main, panicked) = reusable.workers.run(tasks, || {
        record_thread(shared, jobs, 0, &mut main_list, &mut out.keep, barriers)
    });

    let mut failed = main.err();
    for e in outcomes.into_iter().flatten().filter_map(|o| o.err()) {
        if failed.as_ref().is_none_or(|f| e.0 < f.0) {
            failed = Some(e);
        }
    }
    {
        let mut spares = pools.spares.lock();
        for mut keep in keeps {
            out.keep.append(&mut keep);
            give(&mut spares.keep, keep);
        }
    }
    if let Some(payload) = panicked {
        panic::resume_unwind(payload);
    }
    match failed {
        // The first failure in recording order, as one thread would have met it.
        Some((_, e)) => Err(e),
        None => Ok(true),
    }
}

/// How a thread's recording ended: on an error, the index of the job it failed in.
type ThreadOutcome = std::result::Result<(), (usize, Error)>;

/// Records the jobs of `thread`, in order, with its passes (in the order it meets them).
/// Stops at the first error: the job's index and the error.
fn record_thread<P: Pass + ?Sized>(
    s: &Shared<'_>,
    jobs: &[Job],
    thread: usize,
    passes: &mut [(usize, &mut P)],
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    barriers: &mut BarrierScratch,
) -> ThreadOutcome {
    let mut passes = passes.iter_mut();
    for (j, job) in jobs.iter().enumerate() {
        if job.thread == thread {
            record_piece(s, job, &mut passes, keep, barriers).map_err(|e| (j, e))?;
        }
    }
    Ok(())
}

/// Records one piece into its command buffer, from `begin` to `end`.
fn record_piece<P: Pass + ?Sized>(
    s: &Shared<'_>,
    job: &Job,
    passes: &mut std::slice::IterMut<'_, (usize, &mut P)>,
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    barriers: &mut BarrierScratch,
) -> Result<()> {
    let (device, cmd) = (s.device, job.cmd);
    let queue = &s.queues[job.queue];
    let batch = &s.plan.queues[job.queue].batches[job.batch];
    let begin =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    // SAFETY: `cmd` is not pending (fresh, or recycled after its fence signalled), and no
    // other thread uses its pool: each thread records from its own (`PoolKey::thread`), and
    // the calling thread holds the pools' lock until every thread has stopped.
    unsafe { device.begin_command_buffer(cmd, &begin) }
        .map_err(|e| Error::vk("vkBeginCommandBuffer", e))?;
    if let Some(reset) = &job.reset {
        // SAFETY: `cmd` is recording, outside any render pass, on a timed queue; the queries
        // are the batch's, within the execution's pool, and written only after this reset in
        // submission order (later in this command buffer or in the batch's next ones).
        unsafe { device.cmd_reset_query_pool(cmd, s.query_pool, reset.start, reset.len() as u32) };
    }
    for ci in job.commands.clone() {
        match &batch.commands[ci] {
            Command::Barrier(b) => instrument::labelled_barrier(
                s.labels,
                cmd,
                queue.family(),
                (batch, ci, b),
                None,
                |p| s.names[p],
                || record_barrier(device, cmd, b, s.resources, barriers),
            ),
            Command::Pass(i) => {
                let i = *i;
                let Some((_, pass)) = passes.next().filter(|(p, _)| *p == i) else {
                    return Err(Error::InvalidInput(format!(
                        "pass `{}` was not handed to its recording thread",
                        s.names[i]
                    )));
                };
                let (name, query) = (s.names[i], s.queries[i]);
                open_pass(s, cmd, job.queue, name, query);
                let mut r = Recorder {
                    device,
                    cmd,
                    queue: s.pass_queues[i],
                    keep,
                    completion: s.token,
                    debug: s.debug,
                    pass_name: name,
                };
                pass.record(&mut r).map_err(|e| name_the_pass(name, e))?;
                close_pass(s, cmd, query);
            }
        }
    }
    // SAFETY: `cmd` is recording.
    unsafe { device.end_command_buffer(cmd) }.map_err(|e| Error::vk("vkEndCommandBuffer", e))
}

/// Before a pass: its label, and its start timestamp into `query` if timed.
fn open_pass(s: &Shared<'_>, cmd: vk::CommandBuffer, qi: usize, name: &str, query: Option<u32>) {
    if let Some(d) = s.labels {
        // SAFETY: `cmd` is recording on this thread only; the debug functions belong to the
        // graph's device (`Graph::new`'s contract).
        unsafe { d.begin_label_with_color(cmd, name, instrument::pass_color(qi)) };
    }
    if let Some(q) = query {
        let top = vk::PipelineStageFlags2::TOP_OF_PIPE;
        // SAFETY: `cmd` is recording on a queue with timestamps; the query was reset (on the
        // host, or at the start of the batch) and is written once.
        unsafe { s.device.cmd_write_timestamp2(cmd, top, s.query_pool, q) };
    }
}

/// After a pass: its end timestamp into `query + 1` if timed, and the end of its label.
fn close_pass(s: &Shared<'_>, cmd: vk::CommandBuffer, query: Option<u32>) {
    if let Some(q) = query {
        let all = vk::PipelineStageFlags2::ALL_COMMANDS;
        // SAFETY: as in `open_pass`, for the pass's second query.
        unsafe { s.device.cmd_write_timestamp2(cmd, all, s.query_pool, q + 1) };
    }
    if let Some(d) = s.labels {
        // SAFETY: closes the label `open_pass` opened (a pass closes only labels it opened).
        unsafe { d.end_label(cmd) };
    }
}

#[cfg(test)]
mod tests;
