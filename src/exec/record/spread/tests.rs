//! Which commands go to which thread: [`cut_batch`] on hand-made batches, no planner.

use super::{cut_batch, Piece};
use crate::plan::{BarrierCmd, Command};

/// `P`: pass of the given index; `B`: a barrier command.
fn pass(i: usize) -> Command {
    Command::Pass(i)
}

fn barrier() -> Command {
    Command::Barrier(BarrierCmd::default())
}

fn piece(commands: std::ops::Range<usize>, thread: usize) -> Piece {
    Piece { commands, thread }
}

/// Cuts `commands` with `send(p)` saying which passes are `Send`.
fn cut(
    commands: &[Command],
    send: impl Fn(usize) -> bool,
    threads: usize,
    min: usize,
) -> Vec<Piece> {
    let mut out = vec![piece(100..101, 5)];
    cut_batch(commands, send, threads, min, &mut out);
    assert_eq!(
        out[0],
        piece(100..101, 5),
        "earlier batches' pieces untouched"
    );
    out.remove(0);
    out
}

/// B P0 B P1 ... B P(n-1)
fn chain(n: usize) -> Vec<Command> {
    (0..n).flat_map(|i| [barrier(), pass(i)]).collect()
}

#[test]
fn one_thread_or_no_send_pass_keeps_the_batch_whole() {
    let c = chain(8);
    assert_eq!(cut(&c, |_| true, 1, 1), vec![piece(0..16, 0)]);
    assert_eq!(cut(&c, |_| false, 4, 1), vec![piece(0..16, 0)]);
}

#[test]
fn a_long_run_is_cut_into_equal_chunks_with_the_barriers_before_each_pass() {
    let mut c = chain(8);
    c.push(barrier()); // trailing barriers go with the last piece
    assert_eq!(
        cut(&c, |_| true, 4, 2),
        vec![
            piece(0..4, 0),
            piece(4..8, 1),
            piece(8..12, 2),
            piece(12..17, 3)
        ]
    );
}

#[test]
fn chunks_are_at_least_the_minimum_and_uneven_counts_spread() {
    let c: Vec<Command> = (0..7).map(pass).collect();
    // 7 / 2 = 3 chunks: 2, 2 and 3 passes.
    assert_eq!(
        cut(&c, |_| true, 3, 2),
        vec![piece(0..2, 0), piece(2..4, 1), piece(4..7, 2)]
    );
    // Up to 8 threads, but only 7 / 3 = 2 chunks of at least 3.
    assert_eq!(
        cut(&c, |_| true, 8, 3),
        vec![piece(0..3, 0), piece(3..7, 1)]
    );
    // Too short for two threads' minimum: stays whole.
    assert_eq!(cut(&c, |_| true, 4, 4), vec![piece(0..7, 0)]);
    // 0 counts as 1.
    assert_eq!(
        cut(&c[..2], |_| true, 4, 0),
        vec![piece(0..1, 0), piece(1..2, 1)]
    );
}

#[test]
fn passes_that_are_not_send_stay_on_the_calling_thread_and_split_runs() {
    // P0(local) B P1 P2 P3 P4 P5(local) P6
    let c = vec![
        pass(0),
        barrier(),
        pass(1),
        pass(2),
        pass(3),
        pass(4),
        pass(5),
        pass(6),
    ];
    let send = |p: usize| p != 0 && p != 5;
    assert_eq!(
        cut(&c, send, 2, 2),
        vec![piece(0..4, 0), piece(4..6, 1), piece(6..8, 0)],
        "chunk 0 of the run joins the local pass before it; P6 alone is too short"
    );
    // Reordered plans: pass indices out of order change nothing.
    let c = vec![pass(9), pass(3), pass(7), pass(1)];
    assert_eq!(
        cut(&c, |p| p != 7, 2, 1),
        vec![piece(0..1, 0), piece(1..2, 1), piece(2..4, 0)]
    );
}

#[test]
fn a_batch_of_barriers_only_is_one_piece() {
    assert_eq!(cut(&[barrier()], |_| true, 4, 1), vec![piece(0..1, 0)]);
    assert_eq!(cut(&[], |_| true, 4, 1), vec![]);
}

/// On a device: the threads' command buffers come from pools of their own, go back there,
/// and come out again for the next execution, also after a pass failed on another thread.
mod on_a_device {
    use crate::completion::CompletionToken;
    use crate::error::{Error, Result};
    use crate::exec::Execution;
    use crate::exec::{GraphPools, PoolKey};
    use crate::pass::{PassEntry, PassSlot};
    use crate::plan::{Batch, Command, Plan, QueuePlan};
    use crate::{Context, Declare, Pass, Recorder};
    use std::sync::Arc;

    /// Records nothing, or fails.
    struct Step(bool);

    impl Pass for Step {
        fn declare(&self, _d: &mut Declare<'_>) {}
        fn record(&mut self, _r: &mut Recorder<'_>) -> Result<()> {
            match self.0 {
                true => Err(Error::PassFailed("planted".into())),
                false => Ok(()),
            }
        }
    }

    /// One batch of `n` passes on one queue.
    fn plan(n: usize) -> Plan {
        Plan {
            input: Default::default(),
            queues: vec![QueuePlan {
                batches: vec![Batch {
                    commands: (0..n).map(Command::Pass).collect(),
                    ..Batch::default()
                }],
            }],
            final_states: vec![],
            schedule: Default::default(),
            reordered: false,
            transients: Default::default(),
            order: (0..n).collect(),
        }
    }

    /// Spare command buffers per pool, sorted by pool.
    fn free(pools: &GraphPools) -> Vec<(PoolKey, usize)> {
        let reusable = pools.reusable.lock();
        let mut v: Vec<_> = (reusable.families.iter())
            .map(|(k, p)| (*k, p.free.len()))
            .collect();
        v.sort_by_key(|(k, _)| (k.family, k.thread));
        v
    }

    #[test]
    fn each_thread_records_from_its_own_pool_and_its_buffers_are_reused() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let log = ctx.message_log();
        let graph = ctx.graph().unwrap();
        graph.set_recording_threads(3);
        graph.set_min_passes_per_recording_thread(2);
        let pools: Arc<GraphPools> = graph.pools().clone();
        let q = ctx.graphics().clone();
        let family = q.family();
        // Records 6 passes (pass `fail` failing, if any); returns the command buffers of the
        // batch, or the error, with everything handed back to the pools.
        let run = |fail: Option<usize>| {
            let mut steps: Vec<Step> = (0..6).map(|i| Step(Some(i) == fail)).collect();
            let mut passes: Vec<_> = (steps.iter_mut())
                .map(|s| PassEntry {
                    name: "step".into(),
                    pass: PassSlot::BorrowedSend(s),
                    queue: q.clone(),
                })
                .collect();
            let mut frame = crate::prepared::PreparedFrame::of_plan(plan(6), vec![q.clone()]);
            let mut execution = Execution::of(&pools, &mut passes, &mut frame);
            let token = CompletionToken::new(pools.device.clone());
            let recording = execution.record(
                &token,
                &mut Default::default(),
                crate::exec::record::Recording::new(&mut Default::default()),
            )?;
            let keys: Vec<_> = recording.cmds.iter().map(|c| c.0).collect();
            let cmds = recording.batch_cmds(0, 0).to_vec();
            assert_eq!(
                recording.cmds.iter().map(|c| c.1).collect::<Vec<_>>(),
                cmds,
                "in order"
            );
            token.set_submitted(&[]);
            pools.recycle(recording.into_in_flight(&pools, token, Vec::new(), Vec::new()));
            Ok::<_, Error>((keys, cmds))
        };
        let key = |thread| PoolKey { family, thread };

        let (keys, first) = run(None).unwrap();
        assert_eq!(
            keys,
            [key(0), key(1), key(2)],
            "one piece per thread, 2 passes each"
        );
        let back = vec![(key(0), 1), (key(1), 1), (key(2), 1)];
        assert_eq!(free(&pools), back);
        let (_, again) = run(None).unwrap();
        assert_eq!(again, first, "the same command buffers, in the same order");
        assert_eq!(free(&pools), back);

        // Pass 5 fails on thread 2: the error comes back and every buffer goes back.
        let e = run(Some(5)).expect_err("an error");
        assert_eq!(e.to_string(), "pass `step` failed to record: planted");
        assert_eq!(free(&pools), back);
        let (_, after) = run(None).unwrap();
        assert_eq!(after, first, "reset, and reused");

        drop(pools);
        drop(graph);
        drop(q);
        drop(ctx);
        assert!(log.validation() == 0, "{}", log.validation());
    }
}
