//! [`Busy`]: a pass that keeps an execution in flight for a while with a long compute
//! dispatch, for tests that need executions in flight but not certainly incomplete at a given
//! point (that is the gate's job, `gate.rs`, which explains why a host-signalled gate is not
//! used where it is not needed). Include it beside `mod common;` with
//! `#[path = "common/busy.rs"] mod busy;`.

use crate::common::Compute;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::Context;

/// A pass that keeps its queue busy for at least a given time: one compute dispatch of
/// `busy.comp` whose rounds are calibrated on the device when it is made. Inserted into a
/// graph's execution, it keeps that execution (and its fence) in flight for that long, with
/// nothing for a validation layer to misread: unlike the gate, no host signal is involved.
///
/// Only the execution's completion is held back: the graph may run the execution's other
/// passes beside the dispatch. A test that relies on the execution being in flight must check
/// it (`!fence.is_complete()`, or a count that only holds then), so that a device faster than
/// the calibration fails it rather than passing it falsely.
pub struct Busy {
    kit: Compute,
    /// What the dispatch writes; the graph orders the dispatches of successive executions.
    scratch: Arc<StBuffer>,
    set: vk::DescriptorSet,
    rounds: u32,
}

/// Invocations of one busy dispatch.
const BUSY_INVOCATIONS: u32 = 64 * 64;

impl Busy {
    /// A busy pass whose dispatch takes at least `at_least` on `queue`'s device: timed on
    /// `queue` from submit to fence, growing the rounds until one execution takes that long.
    pub fn new(ctx: &Context, queue: &Queue, at_least: Duration) -> Busy {
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let kit = Compute::new(ctx, vk_baton_shaders::BUSY_COMP, storage);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let size = u64::from(BUSY_INVOCATIONS) * 4;
        let scratch = ctx.buffer(BufferDesc::new(size, usage), "busy").unwrap();
        let set = kit.buffer_set(&scratch);
        let mut busy = Busy {
            kit,
            scratch,
            set,
            rounds: 1 << 10,
        };
        let graph = ctx.graph().unwrap();
        loop {
            let planned = graph
                .record()
                .insert_pass("calibrate busy", &mut busy, queue)
                .finish()
                .unwrap();
            // Timed from the submit: planning and recording are no part of the dispatch.
            let fence = planned.execute().unwrap();
            let start = Instant::now();
            fence.wait().unwrap();
            let took = start.elapsed();
            if took >= at_least {
                return busy;
            }
            assert!(
                busy.rounds < 1 << 30,
                "a dispatch of {} rounds took only {took:?}",
                busy.rounds
            );
            // Aim a fifth past the target, at most 16 times the rounds per step.
            let scale = (at_least.as_secs_f64() * 1.2 / took.as_secs_f64().max(1e-6)).min(16.0);
            busy.rounds = (f64::from(busy.rounds) * scale)
                .ceil()
                .min(f64::from(1u32 << 30)) as u32;
        }
    }
}

impl Pass for Busy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.scratch, Access::COMPUTE_SHADER_WRITE)
            .discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let groups = BUSY_INVOCATIONS / 64;
        self.kit
            .dispatch(r, self.set, [BUSY_INVOCATIONS, self.rounds], [groups, 1, 1]);
        Ok(())
    }
}
