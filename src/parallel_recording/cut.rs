//! Which thread records what: every batch cut into pieces, a pure function of its commands,
//! which passes are `Send`, the thread count and the fewest passes a thread gets.

use crate::extensions::Piece;
use crate::pass::PassEntry;
use crate::plan::{Batch, Command, Plan};
use std::ops::Range;

/// Cuts every batch into pieces for the graph's recording threads, if any batch has a run of
/// `Send` passes long enough to spread: then `Some(threads)`. `None`, having allocated
/// nothing and left `pieces` and `ends` empty, if recording stays on the calling thread.
pub(super) fn cut(
    (threads, min_passes): (usize, usize),
    plan: &Plan,
    passes: &[PassEntry<'_>],
    pieces: &mut Vec<Piece>,
    ends: &mut Vec<usize>,
) -> Option<usize> {
    if threads < 2 {
        return None;
    }
    let min_passes = min_passes.max(1);
    let sendable = |p: usize| passes[p].pass.is_send();
    let send = |c: &Command| matches!(c, Command::Pass(p) if sendable(*p));
    // A batch with fewer `Send` passes than two threads' minimum has no run to spread.
    let spreadable = |b: &Batch| b.commands.iter().filter(|c| send(c)).count() >= 2 * min_passes;
    let batches = || plan.queues.iter().flat_map(|q| &q.batches);
    if !batches().any(spreadable) {
        return None;
    }
    for batch in batches() {
        cut_batch(&batch.commands, sendable, threads, min_passes, pieces);
        ends.push(pieces.len());
    }
    if pieces.iter().all(|p| p.thread == 0) {
        pieces.clear();
        ends.clear();
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
fn cut_batch(
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

#[cfg(test)]
mod tests;
