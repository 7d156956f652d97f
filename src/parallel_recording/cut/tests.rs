//! Which commands go to which thread: [`cut_batch`] on hand-made batches, no planner.

use super::cut_batch;
use crate::extensions::Piece;
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
