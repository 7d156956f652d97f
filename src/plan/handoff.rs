//! The batch of a handoff that the app submits itself.
//!
//! A handoff (`Graph::hand_off`) is a plan of one pass: the app's own work on its queue. The
//! planner treats it like any pass, so the barriers, ownership transfers and semaphores come out
//! as they would in a graph, and the verifier checks them the same way. The only difference is
//! who does the work: the library submits the other queues' batches (release-only batches, for
//! resources a graph left on another family), and the app records the barrier command before
//! its pass into its own command buffer and submits the pass's batch itself.
//! [`Plan::app_batch`] finds that batch and checks that the plan has the shape this needs.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{ash::vk, Access};
//! // A transfer queue (family 1) uploaded the buffer in an earlier graph, value 5.
//! let uploaded = SegmentState {
//!     defined: true,
//!     owner: Some(1),
//!     write: Some(Recorded {
//!         queue: 1,
//!         value: Some(5),
//!         stages: vk::PipelineStageFlags2::COPY,
//!         access: vk::AccessFlags2::TRANSFER_WRITE,
//!     }),
//!     ..SegmentState::default()
//! };
//! let input = PlanInput {
//!     queues: vec![
//!         QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
//!         QueueDecl::new("transfer", 1, vk::QueueFlags::TRANSFER),
//!     ],
//!     resources: vec![ResourceDecl::buffer("data", 256, vk::BufferUsageFlags::STORAGE_BUFFER)
//!         .with_state(uploaded)],
//!     // The app's compute shader will read it on graphics.
//!     passes: vec![PassDecl::new("app", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))],
//! };
//! let plan = plan(&input).unwrap();
//! let app = plan.app_batch().unwrap();
//! assert_eq!(app.queue, 0);
//! // The app waits for the library's release on the transfer queue ...
//! assert_eq!(app.batch.waits[0].target, WaitTarget::Batch { queue: 1, batch: 0 });
//! // ... and records the acquire first, in its own command buffer.
//! let acquire = app.barrier.unwrap().buffers[0];
//! assert_eq!(acquire.scopes.families, Some((1, 0)));
//! assert_eq!(acquire.scopes.dst_access, vk::AccessFlags2::SHADER_STORAGE_READ);
//! // Its submit signals the graphics timeline, as a graph's batch would.
//! assert!(app.batch.signal.is_some());
//! ```

use super::{BarrierCmd, Batch, Command, Plan, WaitTarget};
use crate::error::{Error, Result};

/// The batch of a one-pass plan that holds the pass, as the app submits it.
///
/// See the [module example](crate::plan::handoff).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppBatch<'p> {
    /// The queue index of the pass (and of the batch).
    pub queue: usize,
    /// The batch: its waits go into the app's `VkSubmitInfo2`, its signal and binary signals
    /// too. Its commands are `[barrier?, the pass]`.
    pub batch: &'p Batch,
    /// The barrier command the app records before its own commands, if any.
    pub barrier: Option<&'p BarrierCmd>,
}

impl Plan {
    /// The batch of the plan's one pass, which the app submits itself.
    ///
    /// Fails unless the plan has the shape of a handoff: exactly one pass; on its queue one
    /// batch made of at most one barrier command and then the pass, which signals the queue's
    /// timeline; on every other queue only
    /// barrier commands (release-only batches, which the library submits first), none of them
    /// waiting on the pass's batch. The planner makes every plan of one pass that way; the
    /// check keeps the executor from submitting a plan it could not split. It also fails for a
    /// plan that places a transient: the app records its pass outside the graph's executions,
    /// which alone bind transient memory. [`Graph::hand_off`](crate::Graph::hand_off) and the
    /// simulation refuse what this refuses.
    ///
    /// See the [module example](crate::plan::handoff).
    pub fn app_batch(&self) -> Result<AppBatch<'_>> {
        let bad = |why: String| Error::InvalidInput(format!("not a handoff plan: {why}"));
        let [pass] = &self.input.passes[..] else {
            return Err(bad(format!(
                "{} passes, a handoff has one",
                self.input.passes.len()
            )));
        };
        let queue = pass.queue;
        let batches = &self
            .queues
            .get(queue)
            .ok_or_else(|| bad(format!("no queue {queue}")))?
            .batches;
        let [batch] = &batches[..] else {
            return Err(bad(format!(
                "{} batches on the pass's queue",
                batches.len()
            )));
        };
        let barrier = match &batch.commands[..] {
            [Command::Pass(0)] => None,
            [Command::Barrier(b), Command::Pass(0)] => Some(b),
            other => return Err(bad(format!("the pass's batch holds {other:?}"))),
        };
        if !self.transients.placements.is_empty() {
            return Err(Error::InvalidInput(
                "a handoff cannot use transients: the app records its pass after the graph \
                 has bound their memory for other executions"
                    .into(),
            ));
        }
        if batch.signal.is_none() {
            return Err(bad("the pass's batch signals no timeline value".into()));
        }
        for (q, qp) in self.queues.iter().enumerate().filter(|(q, _)| *q != queue) {
            for b in &qp.batches {
                if b.commands.iter().any(|c| !matches!(c, Command::Barrier(_))) {
                    return Err(bad(format!("queue {q} has a batch with a pass")));
                }
                if b.waits
                    .iter()
                    .any(|w| matches!(w.target, WaitTarget::Batch { queue: wq, .. } if wq == queue))
                {
                    return Err(bad(format!("queue {q} waits on the pass's batch")));
                }
            }
        }
        Ok(AppBatch {
            queue,
            batch,
            barrier,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::*;
    use crate::Access;
    use ash::vk;

    fn queues() -> Vec<QueueDecl> {
        vec![
            QueueDecl::new(
                "graphics",
                0,
                vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            ),
            QueueDecl::new("transfer", 1, vk::QueueFlags::TRANSFER),
        ]
    }

    fn written_on(queue: usize, owner: u32, layout: vk::ImageLayout) -> SegmentState<usize> {
        SegmentState {
            layout,
            defined: true,
            owner: Some(owner),
            write: Some(Recorded {
                queue,
                value: Some(7),
                stages: vk::PipelineStageFlags2::COPY,
                access: vk::AccessFlags2::TRANSFER_WRITE,
            }),
            reads: vec![],
            visible: vec![],
        }
    }

    /// An image the transfer family wrote, handed to a compute read on graphics: the library's
    /// release on the transfer queue, the app's acquire (the layout change in both) and wait.
    #[test]
    fn cross_family_handoff_splits_into_release_and_app_batch() {
        let input = PlanInput {
            queues: queues(),
            resources: vec![ResourceDecl::image(
                "img",
                1,
                1,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_DST,
            )
            .with_state(written_on(1, 1, vk::ImageLayout::TRANSFER_DST_OPTIMAL))],
            passes: vec![
                PassDecl::new("app", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
            ],
        };
        let plan = plan(&input).unwrap();
        let image = |scopes| ImageBarrier {
            resource: 0,
            range: ImageRange::mip(0, 1),
            aspect: vk::ImageAspectFlags::COLOR,
            scopes,
            old_layout: vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            new_layout: vk::ImageLayout::GENERAL,
            // Both halves serve the app's pass, after the earlier graph's write on queue 1.
            cause: Some(Cause {
                pass: 0,
                after: Prior::EarlierExecution { queue: 1 },
            }),
        };
        // The release's second scope chains to its own first (no access: it is ignored).
        let release = image(Scopes {
            src_stages: vk::PipelineStageFlags2::COPY,
            src_access: vk::AccessFlags2::TRANSFER_WRITE,
            dst_stages: vk::PipelineStageFlags2::COPY,
            dst_access: vk::AccessFlags2::NONE,
            families: Some((1, 0)),
        });
        // The acquire chains from the semaphore wait's stage.
        let acquire = image(Scopes {
            src_stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
            dst_access: vk::AccessFlags2::SHADER_STORAGE_READ,
            families: Some((1, 0)),
        });
        let app = plan.app_batch().unwrap();
        assert_eq!(app.queue, 0);
        assert_eq!(
            app.barrier,
            Some(&BarrierCmd {
                images: vec![acquire],
                buffers: vec![]
            })
        );
        // Only an ALL_COMMANDS wait orders an acquire after it (planner/dependencies.rs).
        assert_eq!(
            app.batch.waits,
            vec![Wait {
                target: WaitTarget::Batch { queue: 1, batch: 0 },
                stages: vk::PipelineStageFlags2::ALL_COMMANDS,
            }]
        );
        assert_eq!(
            plan.queues[1].batches,
            vec![Batch {
                waits: vec![],
                commands: vec![Command::Barrier(BarrierCmd {
                    images: vec![release],
                    buffers: vec![]
                })],
                signal: Some(vk::PipelineStageFlags2::ALL_COMMANDS),
                binary_signals: vec![],
            }]
        );
    }

    /// Same family: no release, no acquire; the barrier waits on the earlier write, and the
    /// submit on the earlier graph's value.
    #[test]
    fn same_family_handoff_is_one_barrier_and_a_value_wait() {
        let input = PlanInput {
            queues: queues(),
            resources: vec![
                ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::STORAGE_BUFFER)
                    .with_state(written_on(0, 0, vk::ImageLayout::UNDEFINED)),
            ],
            passes: vec![
                PassDecl::new("app", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))
            ],
        };
        let plan = plan(&input).unwrap();
        let app = plan.app_batch().unwrap();
        assert_eq!(
            app.barrier,
            Some(&BarrierCmd {
                images: vec![],
                buffers: vec![BufferBarrier {
                    resource: 0,
                    range: BufferRange {
                        offset: 0,
                        size: 64
                    },
                    scopes: Scopes {
                        src_stages: vk::PipelineStageFlags2::COPY,
                        src_access: vk::AccessFlags2::TRANSFER_WRITE,
                        dst_stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
                        dst_access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
                        families: None,
                    },
                    cause: Some(Cause {
                        pass: 0,
                        after: Prior::EarlierExecution { queue: 0 },
                    }),
                }],
            })
        );
        // Written on this very queue: submission order orders it, no semaphore.
        assert_eq!(app.batch.waits, vec![]);
        assert!(plan.queues[1].batches.is_empty());
    }

    /// The app records its pass outside the graph's executions, which alone bind transient
    /// memory: a handoff that uses a transient is refused.
    #[test]
    fn a_handoff_with_a_transient_is_refused() {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let input = PlanInput {
            queues: queues(),
            resources: vec![ResourceDecl::buffer("scratch", 64, usage)
                .transient(TransientMemory::buffer(64, 16, 0b1))],
            passes: vec![PassDecl::new("app", 0)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).discard())],
        };
        let e = plan(&input).unwrap().app_batch().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid plan input: a handoff cannot use transients: the app records its pass \
             after the graph has bound their memory for other executions"
        );
    }

    #[test]
    fn plans_of_other_shapes_are_refused() {
        let two = PlanInput {
            queues: queues(),
            resources: vec![ResourceDecl::buffer(
                "buf",
                64,
                vk::BufferUsageFlags::STORAGE_BUFFER,
            )],
            passes: vec![
                PassDecl::new("a", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
                PassDecl::new("b", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)),
            ],
        };
        let e = plan(&two).unwrap().app_batch().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid plan input: not a handoff plan: 2 passes, a handoff has one"
        );
    }
}
