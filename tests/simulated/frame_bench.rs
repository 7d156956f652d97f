//! Scenario restating `benches/frame.rs`'s "3 queues" workload: `n` chained copies over `b`
//! buffers (pass 0 fills `buf[1]`, pass `i` copies `buf[i % b]` into `buf[(i + 1) % b]`, writes
//! discard), cut into three runs on the transfer, async-compute and graphics queues.

use super::*;

/// Runs the workload frame after frame; returns the frames run. With more buffers than passes
/// per run, each pass of a later run overwrites what an earlier run's pass read, and phase 2
/// gives each such pair a signal and a wait of its own; the chain through the middle queue
/// implies them all, phase 3 drops them, and the batches they split are joined again. So no
/// queue ever has more than two batches (one for a wait on the previous frame's work of one
/// queue, one for another's), whatever the number of passes: before the joining, 100 passes
/// over 64 buffers made 30 batches on two of the queues, each a submit of its own.
pub(crate) fn chained_copies_on_three_queues(topo: Topo, buffers: usize, n: usize) -> usize {
    let mut s = S::new(topo);
    let bufs: Vec<usize> = (0..buffers)
        .map(|i| s.buf(&format!("buf{i}"), 4096, XFER))
        .collect();
    let runs = [s.t, s.c, s.g];
    for f in 0..FRAMES {
        let passes = (0..n)
            .map(|i| {
                let q = runs[(i * runs.len() / n).min(runs.len() - 1)];
                let dst = ud(bufs[(i + 1) % buffers], Access::COPY_WRITE);
                if i == 0 {
                    pass("fill", q, [ud(bufs[1], Access::TRANSFER_WRITE)])
                } else {
                    pass("copy", q, [u(bufs[i % buffers], Access::COPY_READ), dst])
                }
            })
            .collect();
        let r = s.run(passes);
        let batches: Vec<usize> = r.plan.queues.iter().map(|q| q.batches.len()).collect();
        assert!(
            batches.iter().all(|&b| b <= 2),
            "{topo:?}, {buffers} buffers, {n} passes, frame {f}: batches per queue {batches:?}\n{}",
            r.plan
        );
    }
    // The first two frames are planned (the second finds written buffers, not fresh ones); the
    // third reuses the second's plan after comparing the states it left, and makes that plan's
    // input a state it left. From the fourth on, the versions alone tell that nothing else
    // touched the buffers, and the plan is rebound by its values.
    let want = format!("...{}", "a".repeat(FRAMES - 3));
    assert_eq!(
        s.rest_pattern(),
        want,
        "{topo:?}, {buffers} buffers, {n} passes"
    );
    FRAMES
}
