//! Recording a plan into command buffers, and putting everything back when a pass fails.
//!
//! A pass's `record()` may return an error or panic. Either way the execution ends before
//! anything is submitted, and it must leave the graph as it found it: the command buffers
//! reset and back in their pool, the fences back in the spare list, the completion token
//! marked failed (so nothing waits on it forever), and the pass's error naming the pass.

use super::Execution;
use crate::completion::CompletionToken;
use crate::error::{Error, Result};
use crate::pass::{PassEntry, Recorder};
use crate::plan::{BarrierCmd, Command};
use crate::pools::{
    dependency_info, give, take, ExecutionTimer, GraphPools, InFlight, PoolKey, Reusable, Spares,
};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use barrier_scratch::BarrierScratch;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;

mod barrier_scratch;
mod instrument;
mod labels;
mod parallel;

/// What recording an execution produced, all of it to hand back to the graph once done.
/// Its vectors come from the graph's spares and go back there.
pub(crate) struct Recording {
    /// Objects the passes asked to keep alive until the GPU is done.
    pub(crate) keep: Vec<Box<dyn Any + Send + Sync>>,
    /// Every command buffer taken from the pools, with its pool.
    pub(crate) cmds: Vec<(PoolKey, vk::CommandBuffer)>,
    /// Every fence taken, in queue order.
    pub(crate) fences: Vec<vk::Fence>,
    /// Per queue, the fence its last submit signals (None for a queue with no batch).
    queue_fences: Vec<Option<vk::Fence>>,
    /// Per queue, where its batches start in `batch_ends`.
    batch_start: Vec<usize>,
    /// Per batch of every queue, in queue order: where its command buffers end in
    /// `batch_cmds` (they start where the previous batch's end).
    batch_ends: Vec<usize>,
    /// The command buffers of every batch, in submission order: none for a batch without
    /// commands, one for a batch recorded on one thread, one per piece otherwise
    /// ([`parallel`]).
    batch_cmds: Vec<vk::CommandBuffer>,
    /// The timestamp queries, when the graph is timed.
    timer: Option<ExecutionTimer>,
}

impl Recording {
    /// Empty, with vectors from the graph's spares.
    fn new(spares: &mut Spares) -> Self {
        Recording {
            keep: take(&mut spares.keep),
            cmds: take(&mut spares.cmds),
            fences: take(&mut spares.fences),
            queue_fences: take(&mut spares.queue_fences),
            batch_start: take(&mut spares.batch_start),
            batch_ends: take(&mut spares.batch_ends),
            batch_cmds: take(&mut spares.batch_cmds),
            timer: None,
        }
    }

    /// The fence of queue `q`'s last submit.
    pub(crate) fn queue_fence(&self, q: usize) -> Option<vk::Fence> {
        self.queue_fences.get(q).copied().flatten()
    }

    /// The command buffers of batch `b` of queue `q`, in submission order (none if it has
    /// no commands).
    pub(crate) fn batch_cmds(&self, q: usize, b: usize) -> &[vk::CommandBuffer] {
        let Some(i) = self.batch_start.get(q).map(|s| s + b) else {
            return &[];
        };
        let start = i.checked_sub(1).map_or(0, |p| self.batch_ends[p]);
        let end = self.batch_ends.get(i).copied().unwrap_or(start);
        &self.batch_cmds[start..end]
    }

    /// What to hand to an execution fence (or back to the pools), with the execution's
    /// resources and queues. The per-batch tables go back to `pools`' spares.
    pub(crate) fn into_in_flight(
        self,
        pools: &GraphPools,
        token: CompletionToken,
        resources: Vec<Resource>,
        queues: Vec<Queue>,
    ) -> InFlight {
        let Recording {
            keep,
            cmds,
            fences,
            queue_fences,
            batch_start,
            batch_ends,
            batch_cmds,
            timer,
        } = self;
        let mut spares = pools.spares.lock();
        give(&mut spares.queue_fences, queue_fences);
        give(&mut spares.batch_start, batch_start);
        give(&mut spares.batch_ends, batch_ends);
        give(&mut spares.batch_cmds, batch_cmds);
        InFlight {
            token,
            fences,
            cmds,
            resources,
            queues,
            reached: Vec::new(),
            keep,
            timer,
        }
    }
}

impl Execution<'_> {
    /// Records every batch of the plan. On an error or a panic in a pass, puts everything
    /// taken back (command buffers reset and returned to their pools, fences returned), marks
    /// `token` failed, and then returns the error or resumes the panic.
    ///
    /// Why resume the panic rather than turn it into an `Err`: a panic is a bug in the pass,
    /// and the pass (owned by the caller) may be left half-updated. Returning `Err` would
    /// invite the caller to carry on with it, and would change what `panic = "abort"` builds,
    /// `#[should_panic]` tests and panic hooks see. So the panic goes on as if vk-baton were
    /// not there; only the graph's own state is repaired first, which is all
    /// `AssertUnwindSafe` vouches for: the recording state below is only ever pushed to, so it
    /// is consistent at any unwind point.
    pub(super) fn record(&mut self, token: &CompletionToken) -> Result<Recording> {
        let pools = self.pools.clone();
        // The transients' objects for this execution, kept bound until the recording ends.
        let _transients =
            match (pools.transients).bind(&self.plan, &self.resources, token, pools.debug.as_ref())
            {
                Ok(guard) => guard,
                Err(e) => {
                    token.set_submitted(&[]);
                    token.set_failed();
                    return Err(e);
                }
            };
        let mut out = Recording::new(&mut pools.spares.lock());
        out.queue_fences.resize(self.queues.len(), None);
        let outcome = {
            let mut reusable = pools.reusable.lock();
            let mut barriers = BarrierScratch::from_spares(&mut pools.spares.lock().barriers);
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                self.record_all(&mut reusable, token, &mut out, &mut barriers)
            }));
            barriers.into_spares(&mut pools.spares.lock().barriers);
            if !matches!(outcome, Ok(Ok(()))) {
                reset_unsubmitted(&pools.device, &out.cmds);
            }
            outcome
        };
        let failed = match outcome {
            Ok(Ok(())) => return Ok(out),
            Ok(Err(e)) => Err(e),
            Err(payload) => Ok(payload),
        };
        // Nothing was submitted: the token completes as failed, and every command buffer and
        // fence goes back to the pools for the next execution.
        token.set_submitted(&[]);
        token.set_failed();
        pools.recycle(out.into_in_flight(&pools, token.clone(), Vec::new(), Vec::new()));
        match failed {
            Err(e) => Err(e),
            Ok(payload) => panic::resume_unwind(payload),
        }
    }

    /// Records every batch into `out`. On error, `out` holds what was taken so far.
    fn record_all(
        &mut self,
        reusable: &mut Reusable,
        token: &CompletionToken,
        out: &mut Recording,
        barriers: &mut BarrierScratch,
    ) -> Result<()> {
        let threads = self.pools.recording.threads.load(Ordering::Relaxed);
        if threads > 1 && parallel::record(self, reusable, token, out, barriers, threads)? {
            return Ok(());
        }
        let Recording {
            keep,
            cmds,
            fences,
            queue_fences,
            batch_start,
            batch_ends,
            batch_cmds,
            timer,
        } = out;
        let Execution {
            pools,
            passes,
            queues,
            resources,
            plan,
            barriers: plan_barriers,
            ..
        } = self;
        let device: &ash::Device = &pools.device;
        let kept_barriers = barrier_scratch::prepare(plan_barriers, plan, resources);
        // Barrier commands so far, in the order `prepare` built them.
        let mut barrier_k = 0;
        // Whether a kept label named a pass that is named otherwise now: then they are built
        // again next time.
        let mut labels_missed = false;
        // Pass and barrier labels, unless the graph turned them off.
        let debug = pools
            .debug
            .as_ref()
            .filter(|_| pools.labels.load(Ordering::Relaxed));
        // Pass and barrier labels are kept with the plan like its barriers (not on its first
        // recording).
        if debug.is_some() && kept_barriers && !plan_barriers.labels.built() {
            labels::keep(
                &mut plan_barriers.labels,
                plan,
                |q| queues[q].family(),
                |p| passes[p].name.as_str(),
            );
        }
        // The kept labels to look up: with labels on, once built for this plan.
        let kept_labels = Some(&plan_barriers.labels).filter(|l| debug.is_some() && l.built());
        *timer = reusable.instrument.timer(device, passes.len())?;
        for (qi, qp) in plan.queues.iter().enumerate() {
            let family = queues[qi].family();
            let support = reusable.instrument.support.as_ref();
            let mask = support.and_then(|s| s.mask(family, queues[qi].caps()));
            batch_start.push(batch_ends.len());
            for (bi, batch) in qp.batches.iter().enumerate() {
                if batch.commands.is_empty() {
                    batch_ends.push(batch_cmds.len());
                    continue;
                }
                let cmd = pools.command_buffer(reusable, PoolKey::main(family))?;
                instrument::name_command_buffer(
                    &mut reusable.instrument,
                    debug,
                    cmd,
                    &queues[qi],
                    bi,
                );
                cmds.push((PoolKey::main(family), cmd));
                batch_cmds.push(cmd);
                let begin = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                // SAFETY: `cmd` is not pending (fresh, or recycled after its fence signalled),
                // and its pool is locked by the caller.
                unsafe { device.begin_command_buffer(cmd, &begin) }
                    .map_err(|e| Error::vk("vkBeginCommandBuffer", e))?;
                instrument::reset_batch_queries(device, cmd, timer.as_ref(), mask, batch);
                for (ci, c) in batch.commands.iter().enumerate() {
                    match c {
                        Command::Barrier(b) => {
                            let built =
                                (plan_barriers.dependency(barrier_k)).filter(|_| kept_barriers);
                            let label = kept_labels.and_then(|labels| {
                                labels.barrier(barrier_k, |p| passes[p].name.as_str())
                            });
                            labels_missed |= kept_labels.is_some() && label.is_none();
                            barrier_k += 1;
                            instrument::labelled_barrier(
                                debug,
                                cmd,
                                family,
                                (batch, ci, b),
                                label,
                                |p| passes[p].name.as_str(),
                                || match built {
                                    // SAFETY: `cmd` is recording; every handle is alive (the
                                    // resources are held by this execution) and the barriers
                                    // come from a validated plan.
                                    Some(dep) => unsafe { device.cmd_pipeline_barrier2(cmd, dep) },
                                    // The plan's first recording (or, never, a command
                                    // missing from the plan's): built here.
                                    None => record_barrier(device, cmd, b, resources, barriers),
                                },
                            )
                        }
                        Command::Pass(i) => {
                            let PassEntry { name, pass, queue } = &mut passes[*i];
                            let label = kept_labels.and_then(|labels| labels.pass(*i, name));
                            labels_missed |= kept_labels.is_some() && label.is_none();
                            let end = instrument::begin_pass(
                                device,
                                debug,
                                cmd,
                                timer.as_mut(),
                                mask,
                                (qi, &queues[qi]),
                                *i,
                                (name, label),
                            );
                            let mut r = Recorder {
                                device,
                                cmd,
                                queue,
                                keep,
                                completion: token,
                                debug: pools.debug.as_ref(),
                                pass_name: name,
                            };
                            pass.record(&mut r).map_err(|e| name_the_pass(name, e))?;
                            instrument::end_pass(device, debug, cmd, timer.as_ref(), end);
                        }
                    }
                }
                // SAFETY: `cmd` is recording.
                unsafe { device.end_command_buffer(cmd) }
                    .map_err(|e| Error::vk("vkEndCommandBuffer", e))?;
                batch_ends.push(batch_cmds.len());
            }
            if !qp.batches.is_empty() {
                let fence = pools.fence(reusable)?;
                fences.push(fence);
                queue_fences[qi] = Some(fence);
            }
        }
        if labels_missed {
            plan_barriers.labels.forget();
        }
        Ok(())
    }
}

/// Wraps a pass's error in [`Error::Record`] naming the pass, unless it already does.
fn name_the_pass(pass: &str, e: Error) -> Error {
    match e {
        Error::Record { pass: p, source } if p == pass => Error::Record { pass: p, source },
        e => Error::Record {
            pass: pass.to_owned(),
            source: Box::new(e),
        },
    }
}

/// Puts command buffers that were begun but never submitted back in the initial state, so the
/// pool can hand them out again. The caller holds the pools lock.
fn reset_unsubmitted(device: &ash::Device, cmds: &[(PoolKey, vk::CommandBuffer)]) {
    for &(_, cmd) in cmds {
        // SAFETY: none of these was submitted; their pool is locked by the caller.
        if let Err(e) =
            unsafe { device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()) }
        {
            log::error!("vkResetCommandBuffer failed after a recording error: {e}");
        }
    }
}

/// Records one `vkCmdPipelineBarrier2` holding every barrier of `b`, through `scratch`.
fn record_barrier(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    b: &BarrierCmd,
    resources: &[Resource],
    scratch: &mut BarrierScratch,
) {
    scratch.fill(b, resources);
    let dep = dependency_info(&scratch.memory, &scratch.buffers, &scratch.images);
    // SAFETY: `cmd` is recording; every handle is alive (the resources are held by this
    // execution) and the barriers come from a validated plan.
    unsafe { device.cmd_pipeline_barrier2(cmd, &dep) };
}

/// The Vulkan barriers of `b`, for `resources` (the plan's resource indices).
pub(crate) fn barrier_structs(
    b: &BarrierCmd,
    resources: &[Resource],
) -> (
    Vec<vk::ImageMemoryBarrier2<'static>>,
    Vec<vk::BufferMemoryBarrier2<'static>>,
) {
    let families =
        |f: Option<(u32, u32)>| f.unwrap_or((vk::QUEUE_FAMILY_IGNORED, vk::QUEUE_FAMILY_IGNORED));
    let images: Vec<vk::ImageMemoryBarrier2<'static>> = b
        .images
        .iter()
        .filter_map(|ib| {
            let Resource::Image(img) = &resources[ib.resource] else {
                return None;
            };
            let (src_family, dst_family) = families(ib.scopes.families);
            Some(
                vk::ImageMemoryBarrier2::default()
                    .src_stage_mask(ib.scopes.src_stages)
                    .src_access_mask(ib.scopes.src_access)
                    .dst_stage_mask(ib.scopes.dst_stages)
                    .dst_access_mask(ib.scopes.dst_access)
                    .old_layout(ib.old_layout)
                    .new_layout(ib.new_layout)
                    .src_queue_family_index(src_family)
                    .dst_queue_family_index(dst_family)
                    .image(img.handle())
                    .subresource_range(ib.range.to_vk(ib.aspect)),
            )
        })
        .collect();
    let buffers: Vec<vk::BufferMemoryBarrier2<'static>> = b
        .buffers
        .iter()
        .filter_map(|bb| {
            let Resource::Buffer(buf) = &resources[bb.resource] else {
                return None;
            };
            let (src_family, dst_family) = families(bb.scopes.families);
            Some(
                vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(bb.scopes.src_stages)
                    .src_access_mask(bb.scopes.src_access)
                    .dst_stage_mask(bb.scopes.dst_stages)
                    .dst_access_mask(bb.scopes.dst_access)
                    .src_queue_family_index(src_family)
                    .dst_queue_family_index(dst_family)
                    .buffer(buf.handle())
                    .offset(bb.range.offset)
                    .size(bb.range.size),
            )
        })
        .collect();
    (images, buffers)
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Batch, Plan, QueuePlan};
    use crate::pools::GraphPools;
    use crate::{Context, Declare, Pass};

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
        let free = (reusable.families.get(&PoolKey::main(family))).map_or(0, |f| f.free.len());
        (reusable.fences.len(), free)
    }

    /// The fence that leaked on a two-queue graph: taken for queue 0, then queue 1's pass
    /// fails or panics. It must go back to the spares, with both command buffers.
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
                    queue: q.clone(),
                },
                PassEntry {
                    name: "second".into(),
                    pass: (&mut second).into(),
                    queue: q.clone(),
                },
            ];
            let mut execution = Execution {
                pools: shared.clone(),
                passes,
                queues: vec![q.clone(), q.clone()],
                resources: Vec::new(),
                versions: Vec::new(),
                plan: two_queue_plan(),
                barriers: Default::default(),
            };
            let token = CompletionToken::new(shared.device.clone());
            let r = panic::catch_unwind(AssertUnwindSafe(|| execution.record(&token)));
            (r, token)
        };

        let (r, token) = run(Some("panic"));
        assert!(r.is_err(), "the panic goes on to the caller");
        assert!(token.has_failed());
        assert_eq!(
            spares(&shared, family),
            (1, 2),
            "queue 0's fence and both buffers"
        );

        let (r, token) = run(Some("no"));
        let e = r.unwrap().err().expect("an error");
        assert_eq!(e.to_string(), "pass `second` failed to record: no");
        assert!(token.has_failed());
        assert_eq!(spares(&shared, family), (1, 2), "reused, and back again");

        // A good recording reuses them (taking one new fence for queue 1); handing it back
        // unsubmitted returns all of them.
        let (r, token) = run(None);
        let recording = r.unwrap().unwrap();
        assert_eq!(recording.fences.len(), 2);
        assert_eq!(spares(&shared, family), (0, 0));
        token.set_submitted(&[]);
        shared.recycle(recording.into_in_flight(&shared, token, Vec::new(), Vec::new()));
        assert_eq!(spares(&shared, family), (2, 2));

        drop(shared);
        drop(graph);
        drop(q);
        drop(ctx);
        assert!(log.validation() == 0, "{}", log.validation());
    }
}
