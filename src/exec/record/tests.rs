//! A failed recording gives every object back.

use super::*;
use crate::plan::{Batch, Plan, QueuePlan};
use crate::{Context, Declare, Pass, Recorder};

/// Records nothing, then does what it is told.
struct Step(Option<&'static str>);

impl Pass for Step {
    fn declare(&self, _d: &mut Declare<'_>) {}
    fn record(&mut self, _r: &mut Recorder<'_>) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some("panic") => panic!("planted"),
            Some(why) => Err(Error::PassFailed(why.into())),
        }
    }
}

/// A plan of two queues, one pass each: queue 0's fence is taken before queue 1's pass
/// records. Lavapipe has one `VkQueue`, so both planner queues use it.
fn two_queue_plan() -> Plan {
    let batch = |pass| Batch {
        commands: vec![Command::Pass(pass)],
        ..Batch::default()
    };
    Plan {
        input: Default::default(),
        queues: vec![
            QueuePlan {
                batches: vec![batch(0)],
            },
            QueuePlan {
                batches: vec![batch(1)],
            },
        ],
        final_states: vec![],
        schedule: Default::default(),
        reordered: false,
        transients: Default::default(),
        order: vec![0, 1],
    }
}

/// (spare fences, spare command buffers of `family`)
fn spares(pools: &GraphPools, family: u32) -> (usize, usize) {
    let reusable = pools.reusable.lock();
    let key = PoolKey { family, thread: 0 };
    let free = (reusable.families.get(&key)).map_or(0, |f| f.free.len());
    (reusable.fences.len(), free)
}

/// The fence that once leaked on a two-queue graph: taken for queue 0, then queue 1's pass
/// fails or panics. Every fence must go back to the spares, with both command buffers.
#[test]
fn a_failed_recording_returns_every_fence_and_command_buffer() {
    let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
    let log = ctx.message_log();
    let graph = ctx.graph().unwrap();
    let shared = graph.pools().clone();
    let q = ctx.graphics().clone();
    let family = q.family();
    let run = |second: Option<&'static str>| {
        let (mut first, mut second) = (Step(None), Step(second));
        let passes = vec![
            PassEntry {
                name: "first".into(),
                pass: (&mut first).into(),
                queue: &q,
            },
            PassEntry {
                name: "second".into(),
                pass: (&mut second).into(),
                queue: &q,
            },
        ];
        let mut passes = passes;
        let mut frame =
            crate::prepared::PreparedFrame::of_plan(two_queue_plan(), vec![q.clone(), q.clone()]);
        let (mut execution, scratch) = Execution::of(&shared, &mut passes, &mut frame);
        panic::catch_unwind(AssertUnwindSafe(|| execution.record(scratch)))
    };
    // The token of a failed recording: back in the spares.
    let last_token = || -> CompletionToken {
        let reusable = shared.reusable.lock();
        reusable
            .spares
            .tokens
            .last()
            .expect("a spent token")
            .clone()
    };

    let r = run(Some("panic"));
    assert!(r.is_err(), "the panic goes on to the caller");
    assert!(last_token().has_failed());
    // Every command buffer and fence is taken before any pass records: queue 1's pass
    // fails with both queues' fences and both buffers out, and all of them come back.
    assert_eq!(
        spares(&shared, family),
        (2, 2),
        "both fences and both buffers"
    );

    let r = run(Some("no"));
    let e = r.unwrap().err().expect("an error");
    assert_eq!(e.to_string(), "pass `second` failed to record: no");
    assert!(last_token().has_failed());
    assert_eq!(spares(&shared, family), (2, 2), "reused, and back again");

    // A good recording reuses them all; handing it back unsubmitted returns all of them.
    let recording = run(None).unwrap().unwrap();
    assert_eq!(recording.lists.fences.len(), 2);
    assert_eq!(spares(&shared, family), (0, 0));
    recording.token.set_submitted(&[]);
    shared.recycle(recording.into_in_flight(&mut FrameScratch::default(), &[], &[]));
    assert_eq!(spares(&shared, family), (2, 2));

    drop(shared);
    drop(graph);
    drop(q);
    drop(ctx);
    assert!(log.validation() == 0, "{}", log.validation());
}
