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
/// `busy.comp` whose repeats are calibrated on the device when it is made. Inserted into a
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
    /// How many times the dispatch repeats `BUSY_ROUNDS` over `BUSY_INVOCATIONS`.
    repeats: u32,
}

/// Invocations of one repeat of the busy dispatch.
const BUSY_INVOCATIONS: u32 = 64 * 64;
/// Rounds of each invocation. Fixed, and below 65535: llvmpipe (lavapipe) ends an invocation's
/// loops after 65535 iterations, so calibrating rounds past that timed the same short dispatch
/// again and again. Longer dispatches repeat the invocations instead.
const BUSY_ROUNDS: u32 = 1 << 14;
/// Workgroups along y (and z) that every device supports (`maxComputeWorkGroupCount`).
const MAX_GROUPS: u32 = 65535;
/// Repeats past which a dispatch that is still too short means the calibration is not
/// measuring the dispatch.
const MAX_REPEATS: u32 = 1 << 30;

impl Busy {
    /// A busy pass whose dispatch takes at least `at_least` on `queue`'s device: timed on
    /// `queue` from submit to fence, growing the repeats until one execution takes that long.
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
            repeats: 1,
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
                busy.repeats < MAX_REPEATS,
                "a dispatch of {} repeats took only {took:?}",
                busy.repeats
            );
            // Aim a fifth past the target, at most 16 times the repeats per step.
            let scale = (at_least.as_secs_f64() * 1.2 / took.as_secs_f64().max(1e-6)).min(16.0);
            busy.repeats = (f64::from(busy.repeats) * scale)
                .ceil()
                .min(f64::from(MAX_REPEATS)) as u32;
        }
    }

    /// The workgroups of the dispatch: `BUSY_INVOCATIONS` along x, at least `repeats` times
    /// over along y and z.
    fn groups(&self) -> [u32; 3] {
        let along_y = self.repeats.min(MAX_GROUPS);
        [
            BUSY_INVOCATIONS / 64,
            along_y,
            self.repeats.div_ceil(along_y),
        ]
    }
}

impl Pass for Busy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.scratch, Access::COMPUTE_SHADER_WRITE)
            .discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let push = [BUSY_INVOCATIONS, BUSY_ROUNDS];
        self.kit.dispatch(r, self.set, push, self.groups());
        Ok(())
    }
}
