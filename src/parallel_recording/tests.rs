//! On a device: the threads' command buffers come from pools of their own, go back there,
//! and come out again for the next execution, also after a pass failed on another thread.

use crate::error::{Error, Result};
use crate::{Context, Declare, Pass, Recorder};

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

#[test]
fn each_thread_records_from_its_own_pool_and_its_buffers_are_reused() {
    let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
    let log = ctx.message_log();
    let graph = ctx.graph().unwrap();
    graph.set_recording_threads(3);
    graph.set_min_passes_per_recording_thread(2);
    let q = ctx.graphics().clone();
    let family = q.family();
    // Executes 6 `Send` passes in one batch (pass `fail` failing, if any) and waits.
    let run = |fail: Option<usize>| -> Result<()> {
        let mut steps: Vec<Step> = (0..6).map(|i| Step(Some(i) == fail)).collect();
        let mut b = graph.record();
        for s in steps.iter_mut() {
            b = b.insert_send_pass("step", s, &q);
        }
        let fence = b.finish()?.execute()?;
        fence.wait()
    };
    let free = || graph.pools().free_command_buffers();

    run(None).unwrap();
    let first = free();
    let counts: Vec<_> = first.iter().map(|(f, t, c)| (*f, *t, c.len())).collect();
    assert_eq!(
        counts,
        [(family, 0, 1), (family, 1, 1), (family, 2, 1)],
        "one piece per thread, 2 passes each, each from its thread's pool"
    );
    run(None).unwrap();
    assert_eq!(free(), first, "the same command buffers again");

    // Pass 5 fails on thread 2: the error comes back and every buffer goes back.
    let e = run(Some(5)).expect_err("an error");
    assert_eq!(e.to_string(), "pass `step` failed to record: planted");
    assert_eq!(free(), first);
    run(None).unwrap();
    assert_eq!(free(), first, "reset, and reused");

    drop(graph);
    drop(q);
    drop(ctx);
    assert!(log.validation() == 0, "{}", log.validation());
}
