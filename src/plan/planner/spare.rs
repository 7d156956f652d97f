//! Barrier vectors of an earlier plan, emptied for this one to fill: a frame planned like the
//! last one allocates no barrier list again.

use super::*;

/// Emptied barrier lists, each keeping its capacity.
#[derive(Default)]
pub(super) struct SpareBarriers {
    images: Vec<Vec<ImageBarrier>>,
    buffers: Vec<Vec<BufferBarrier>>,
}

impl SpareBarriers {
    /// Empties every barrier command of `queues`' batches and keeps their lists.
    pub(super) fn from_queues(queues: Vec<QueuePlan>) -> Self {
        let mut spare = SpareBarriers::default();
        for c in queues
            .into_iter()
            .flat_map(|q| q.batches)
            .flat_map(|b| b.commands)
        {
            if let Command::Barrier(BarrierCmd {
                mut images,
                mut buffers,
            }) = c
            {
                if images.capacity() > 0 {
                    images.clear();
                    spare.images.push(images);
                }
                if buffers.capacity() > 0 {
                    buffers.clear();
                    spare.buffers.push(buffers);
                }
            }
        }
        spare
    }

    /// Gives `cmd` a spare list where it has none yet, before a barrier is pushed.
    pub(super) fn prepare(&mut self, cmd: &mut BarrierCmd, kind: &ResourceKind) {
        if matches!(kind, ResourceKind::Image { .. }) {
            if cmd.images.capacity() == 0 {
                cmd.images = self.images.pop().unwrap_or_default();
            }
        } else if cmd.buffers.capacity() == 0 {
            cmd.buffers = self.buffers.pop().unwrap_or_default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Access;

    /// Reusing an earlier plan's lists, of another shape, gives exactly the plan made
    /// without them, and fills those lists rather than new ones.
    #[test]
    fn a_plan_made_from_spare_lists_equals_one_made_without() {
        let input = |n: usize| PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
            resources: (0..3)
                .map(|i| {
                    ResourceDecl::buffer(
                        &format!("b{i}"),
                        64,
                        vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                    )
                })
                .collect(),
            passes: (0..n)
                .map(|i| {
                    PassDecl::new("copy", 0)
                        .with_use(UseDecl::new(i % 3, Access::COPY_READ))
                        .with_use(UseDecl::new((i + 1) % 3, Access::COPY_WRITE))
                })
                .collect(),
        };
        let earlier = plan_owned(input(7)).unwrap();
        let spare = SpareBarriers::from_queues(earlier.queues.clone());
        assert_eq!(spare.buffers.len(), earlier.barrier_commands());
        let reused = plan_reusing(input(5), earlier.queues).unwrap();
        let fresh = plan_owned(input(5)).unwrap();
        assert_eq!(reused.queues, fresh.queues);
        assert_eq!(reused.final_states, fresh.final_states);
        assert_eq!(fresh.barrier_commands(), 4);
    }
}
