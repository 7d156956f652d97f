//! Recording one execution on several threads ([`crate::Graph::set_recording_threads`]),
//! behind the `parallel-recording` feature.
//!
//! [`cut_batch`] decides, per batch, which commands go into which piece and which thread
//! records it: a pure function of the batch's commands, which passes are `Send`, the thread
//! count and the fewest passes a thread gets. The recording loop then takes every command
//! buffer on the calling thread (each recording thread has its own command pool per family:
//! pools are externally synchronized) and [`record`] records the pieces on the graph's
//! recording threads (a `rayon_core` pool, kept from one execution to the next, whose scope
//! lends them the execution's passes safely), the calling thread recording thread 0's pieces
//! meanwhile.
//!
//! Why separate primary command buffers rather than secondaries: a secondary must inherit the
//! render pass or dynamic rendering state it runs in, which a pass that begins its own
//! rendering cannot give, and a primary per piece needs nothing from its neighbours. A batch
//! submits its pieces' command buffers in order in one `VkSubmitInfo2`, and submission order
//! carries each barrier's scopes across command buffer boundaries, so the queue sees the same
//! dependencies as from one command buffer. A piece ends right after a pass, so barrier
//! commands stay with the pass they come before and no label straddles two pieces.

use super::{record_piece, PassSource, RecorderParts, Shared};
use crate::error::{Error, Result};
use crate::exec::scratch::{Job, Piece, RecordingLists};
use crate::exec::Execution;
use crate::exec::{give, take, GraphPools};
use crate::pass::{Pass, PassEntry};
use crate::plan::{Batch, Command};
use crate::queue::Queue;
use parking_lot::Mutex;
use std::any::Any;
use std::ops::Range;
use std::sync::atomic::Ordering;

/// Cuts every batch into pieces for the graph's recording threads, if any batch has a run of
/// `Send` passes long enough to spread: then `Some(threads)`. `None`, having allocated
/// nothing and left `lists` empty, if recording stays on the calling thread.
pub(super) fn cut(exec: &Execution<'_, '_>, lists: &mut RecordingLists) -> Option<usize> {
    let threads = exec.pools.recording.threads.load(Ordering::Relaxed);
    if threads < 2 {
        return None;
    }
    let passes = &exec.passes;
    let min_passes = exec
        .pools
        .recording
        .min_passes
        .load(Ordering::Relaxed)
        .max(1);
    let send = |c: &Command| matches!(c, Command::Pass(p) if passes[*p].pass.is_send());
    // A batch with fewer `Send` passes than two threads' minimum has no run to spread.
    let spreadable = |b: &Batch| b.commands.iter().filter(|c| send(c)).count() >= 2 * min_passes;
    let batches = || exec.plan.queues.iter().flat_map(|q| &q.batches);
    if !batches().any(spreadable) {
        return None;
    }
    for batch in batches() {
        let sendable = |p: usize| passes[p].pass.is_send();
        cut_batch(
            &batch.commands,
            sendable,
            threads,
            min_passes,
            &mut lists.pieces,
        );
        lists.piece_ends.push(lists.pieces.len());
    }
    if lists.pieces.iter().all(|p| p.thread == 0) {
        lists.pieces.clear();
        lists.piece_ends.clear();
        return None;
    }
    Some(threads)
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

/// The passes handed to one thread, in the order it records them, with every pass's name and
/// queue (barrier labels name neighbours recorded elsewhere).
struct Handed<'l, 'p, P: ?Sized> {
    list: std::slice::IterMut<'l, (usize, &'p mut P)>,
    names: &'l [&'l str],
    queues: &'l [&'l Queue],
}

impl<P: Pass + ?Sized> PassSource for Handed<'_, '_, P> {
    fn name(&self, p: usize) -> &str {
        self.names[p]
    }

    fn record(&mut self, p: usize, r: RecorderParts<'_>) -> Result<()> {
        let Some((_, pass)) = self.list.next().filter(|(i, _)| *i == p) else {
            return Err(Error::InvalidInput(format!(
                "pass `{}` was not handed to its recording thread",
                self.names[p]
            )));
        };
        r.record(&mut **pass, self.names[p], self.queues[p])
    }
}

/// How a thread's recording ended: on an error, the index of the job it failed in.
type ThreadOutcome = std::result::Result<(), (usize, Error)>;

/// Records the jobs of `thread`, in order, with its passes.
fn record_thread(
    s: &Shared<'_>,
    (jobs, barriers_before): (&[Job], &[usize]),
    thread: usize,
    passes: &mut impl PassSource,
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
) -> ThreadOutcome {
    for (j, job) in jobs.iter().enumerate() {
        if job.thread == thread {
            record_piece(s, job, barriers_before[j], passes, keep).map_err(|e| (j, e))?;
        }
    }
    Ok(())
}

/// Per job, the plan's barrier commands before it in recording order: where its barriers
/// start in the baked barriers.
fn barriers_before(s: &Shared<'_>, jobs: &[Job]) -> Vec<usize> {
    let mut before = 0;
    (jobs.iter())
        .map(|job| {
            let at = before;
            let batch = &s.plan.queues[job.queue].batches[job.batch];
            let commands = &batch.commands[job.commands.clone()];
            before += (commands.iter())
                .filter(|c| matches!(c, Command::Barrier(_)))
                .count();
            at
        })
        .collect()
}

/// The passes of an execution, each handed by reference to the thread that records it, in
/// the order that thread records them; with every pass's name and queue, which all threads
/// read.
struct HandedOut<'l, 'p> {
    names: Vec<&'l str>,
    queues: Vec<&'l Queue>,
    main: Vec<(usize, &'l mut (dyn Pass + 'p))>,
    /// Per recording thread but the calling one.
    workers: Vec<Vec<(usize, &'l mut (dyn Pass + Send + 'p))>>,
}

/// Hands each pass of `passes` to the thread whose job records it. Only `Send` passes go to
/// other threads; the plan records each pass once.
fn hand_out<'l, 'p>(
    s: &Shared<'_>,
    jobs: &[Job],
    passes: &'l mut [PassEntry<'p>],
    threads: usize,
) -> Result<HandedOut<'l, 'p>> {
    let mut out = HandedOut {
        names: Vec::with_capacity(passes.len()),
        queues: Vec::with_capacity(passes.len()),
        main: Vec::new(),
        workers: (1..threads).map(|_| Vec::new()).collect(),
    };
    let mut local: Vec<Option<&'l mut (dyn Pass + 'p)>> = Vec::with_capacity(passes.len());
    let mut sendable: Vec<Option<&'l mut (dyn Pass + Send + 'p)>> =
        Vec::with_capacity(passes.len());
    for PassEntry { name, pass, queue } in passes.iter_mut() {
        let (name, queue): (&String, &Queue) = (name, queue);
        out.names.push(name.as_str());
        out.queues.push(queue);
        if pass.is_send() {
            local.push(None);
            sendable.push(pass.as_send());
        } else {
            local.push(Some(&mut **pass));
            sendable.push(None);
        }
    }
    let twice = || Error::InvalidInput("a plan records a pass twice".into());
    for job in jobs {
        let batch = &s.plan.queues[job.queue].batches[job.batch];
        for c in &batch.commands[job.commands.clone()] {
            let Command::Pass(i) = *c else { continue };
            if job.thread == 0 {
                let pass = match local[i].take() {
                    Some(p) => p,
                    None => sendable[i].take().ok_or_else(twice)?,
                };
                out.main.push((i, pass));
            } else {
                let pass = sendable[i].take().ok_or_else(twice)?;
                out.workers[job.thread - 1].push((i, pass));
            }
        }
    }
    Ok(out)
}

/// Records `jobs` on the graph's recording threads, each pass by the thread its piece names. On
/// an error, the first in recording order, as one thread would have met it; a thread's panic
/// goes on once every thread has stopped.
pub(super) fn record(
    s: &Shared<'_>,
    jobs: &[Job],
    passes: &mut [PassEntry<'_>],
    keep: &mut Vec<Box<dyn Any + Send + Sync>>,
    threads: usize,
    pools: &GraphPools,
) -> Result<()> {
    let HandedOut {
        names,
        queues,
        mut main,
        workers,
    } = hand_out(s, jobs, passes, threads)?;
    let mut keeps: Vec<Vec<Box<dyn Any + Send + Sync>>> = {
        let mut spares = pools.spares.lock();
        (1..threads).map(|_| take(&mut spares.keep)).collect()
    };
    let (names, queues) = (&names[..], &queues[..]);
    let before = barriers_before(s, jobs);
    let jobs = (jobs, &before[..]);
    let pool = (pools.recording.pool(threads))
        .map_err(|e| Error::InvalidInput(format!("no recording threads: {e}")))?;
    // Per recording thread but the calling one: its outcome, once it has run.
    let mut outcomes: Vec<Option<ThreadOutcome>> = (1..threads).map(|_| None).collect();
    // What each of the pool's threads takes: its passes, its list of objects to keep alive,
    // and where its outcome goes.
    let slots: Vec<_> = (workers.into_iter().zip(keeps.iter_mut()))
        .zip(outcomes.iter_mut())
        .map(|((list, keep), outcome)| Mutex::new(Some((list, keep, outcome))))
        .collect();
    // The calling thread records its own pieces (its passes need not be `Send`) while each of
    // the pool's threads records those of one recording thread; the scope returns once all
    // have, and a panic in any goes on from here after that.
    let main = pool.in_place_scope(|scope| {
        scope.spawn_broadcast(|_, thread| {
            let w = thread.index();
            let Some((mut list, keep, outcome)) = slots.get(w).and_then(|s| s.lock().take()) else {
                return;
            };
            let list = list.iter_mut();
            let mut handed = Handed {
                list,
                names,
                queues,
            };
            *outcome = Some(record_thread(s, jobs, w + 1, &mut handed, keep));
        });
        let list = main.iter_mut();
        record_thread(
            s,
            jobs,
            0,
            &mut Handed {
                list,
                names,
                queues,
            },
            keep,
        )
    });
    drop(slots);
    {
        let mut spares = pools.spares.lock();
        for mut kept in keeps {
            keep.append(&mut kept);
            give(&mut spares.keep, kept);
        }
    }
    first_failure(main, outcomes.into_iter().flatten())
}

/// The outcome of a spread recording: the first error in recording order, as one thread
/// would have met it.
fn first_failure(main: ThreadOutcome, outcomes: impl Iterator<Item = ThreadOutcome>) -> Result<()> {
    let mut failed = main.err();
    for e in outcomes.filter_map(|o| o.err()) {
        if failed.as_ref().is_none_or(|f| e.0 < f.0) {
            failed = Some(e);
        }
    }
    match failed {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
