//! The library side's GPU time in `--compare`: passes with no uses at either end of each
//! queue's program order write timestamps (so the plan is otherwise the same), in a query
//! pool with four queries per frame in flight, as the hand-written side's.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::Duration;
use support::vkerr;
use vk_baton::ash::vk;
use vk_baton::pass::ReplayKey;
use vk_baton::{Declare, GraphBuilder, Pass, Queue, Recorder};
use vk_baton_context::Context;

/// The library side's timestamps: four per frame in flight (graphics start and end, compute
/// start and end), like the hand side's.
pub struct Stamps {
    pub pool: vk::QueryPool,
    pub period_ns: f64,
    pub masks: [u64; 2],
    pub two: bool,
}

/// Resets queue `q`'s two queries of slot `s` and writes the first (`end`: writes the second).
fn stamp(r: &mut Recorder<'_>, pool: vk::QueryPool, s: usize, q: usize, end: bool) {
    let first = 4 * s as u32 + 2 * q as u32;
    let (dev, cmd) = (r.device(), r.cmd());
    // SAFETY: `cmd` is recording outside a rendering on a graphics or compute queue; the
    // queries of slot `s` were read once the frame that wrote them completed; the reset comes
    // before the writes on the same queue (query commands run in submission order). The end is
    // a timestamp when all earlier commands are done (ALL_COMMANDS), not a barrier.
    unsafe {
        if end {
            dev.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::ALL_COMMANDS, pool, first + 1);
        } else {
            dev.cmd_reset_query_pool(cmd, pool, first, 2);
            dev.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::TOP_OF_PIPE, pool, first);
        }
    }
}

/// Which query slot a timestamp pass writes: a frame in flight's, fixed when the pass is made
/// (the builder loop makes them per frame), or whatever the loop set when it records (the
/// passes of a held plan are made once).
#[derive(Clone, Copy)]
pub enum SlotOf<'a> {
    Fixed(usize),
    Set(&'a Cell<usize>),
}

/// A pass with no uses that writes one of a frame's timestamps (`stamp`): the first or last
/// command of queue `queue` (0: graphics, 1: compute) in the frame.
pub struct Stamp<'a> {
    pool: vk::QueryPool,
    slot: SlotOf<'a>,
    queue: usize,
    end: bool,
}

impl Pass for Stamp<'_> {
    fn declare(&self, _d: &mut Declare<'_>) {}

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let slot = match self.slot {
            SlotOf::Fixed(s) => s,
            SlotOf::Set(cell) => cell.get(),
        };
        stamp(r, self.pool, slot, self.queue, self.end);
        Ok(())
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        let slot = match self.slot {
            SlotOf::Fixed(s) => s,
            SlotOf::Set(cell) => cell.get(),
        };
        // SAFETY: the commands (a reset and a timestamp in the slot's queries of one pool,
        // which outlives every frame) depend only on the slot, which is the key. A slot in a
        // cell is a held plan's, whose loop refreshes its keys after each change
        // (`HeldPlan::refresh_replay_keys`, in `compare.rs`).
        Some(unsafe { ReplayKey::new(slot as u64) })
    }
}

/// The timestamp passes of a frame, writing the queries of `slot`: those that come first
/// (graphics, compute) and those that come last (compute, graphics).
pub type StampPasses<'a> = ([Stamp<'a>; 2], [Stamp<'a>; 2]);

/// [`StampPasses`] for `slot`.
pub fn stamp_passes<'a>(st: &Stamps, slot: SlotOf<'a>) -> StampPasses<'a> {
    let pass = |queue, end| Stamp {
        pool: st.pool,
        slot,
        queue,
        end,
    };
    (
        [pass(0, false), pass(1, false)],
        [pass(1, true), pass(0, true)],
    )
}

/// Inserts a pair of [`StampPasses`] (those that come first, or those that come last): passes
/// with no uses, so the plan is otherwise the same. The compute queue's only where it is a
/// queue of its own (`two`); `queues`: graphics, compute.
pub fn stamps<'a>(
    b: GraphBuilder<'a>,
    pair: &'a mut [Stamp<'_>; 2],
    two: bool,
    queues: [&'a Queue; 2],
) -> GraphBuilder<'a> {
    pair.iter_mut()
        .filter(|p| two || p.queue == 0)
        .fold(b, |b, p| {
            let name = match (p.queue, p.end) {
                (0, false) => "gpu start",
                (_, false) => "gpu start (compute)",
                (0, true) => "gpu end",
                (_, true) => "gpu end (compute)",
            };
            let queue = queues[p.queue];
            b.insert_pass(name, p, queue)
        })
}

/// The library side's frames in flight: fence, query slot, whether the frame is timed.
pub type InFlight = VecDeque<(vk_baton::ExecutionFence, usize, bool)>;

/// Waits for the library frame at the front; its GPU time if it is timed.
pub fn wait_front(
    ctx: &Context,
    in_flight: &mut InFlight,
    st: &Stamps,
    gpu: &mut Vec<Duration>,
) -> vk_baton::Result<()> {
    let Some((fence, s, timed)) = in_flight.pop_front() else {
        return Ok(());
    };
    fence.wait()?;
    let n = if st.two { 4 } else { 2 };
    let mut ts = [0u64; 4];
    // SAFETY: the frame that wrote these queries has completed (its fence).
    unsafe {
        ctx.device().get_query_pool_results(
            st.pool,
            4 * s as u32,
            &mut ts[..n],
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
    }
    .map_err(vkerr("vkGetQueryPoolResults"))?;
    if timed {
        gpu.push(super::hand::span(&ts[..n], st.masks, st.period_ns));
    }
    Ok(())
}
