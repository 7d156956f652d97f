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

    /// Pass `i` of `n` over `buffers` buffers copies one into the next; every third pass writes
    /// only the first half, so the final states have one or two segments per buffer.
    fn input(n: usize, buffers: usize) -> PlanInput {
        let half = SubRange::Buffer(BufferRange {
            offset: 0,
            size: 32,
        });
        PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
            resources: (0..buffers)
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
                    let mut write = UseDecl::new((i + 1) % buffers, Access::COPY_WRITE);
                    write.range = (i % 3 == 2).then_some(half);
                    PassDecl::new("copy", 0)
                        .with_use(UseDecl::new(i % buffers, Access::COPY_READ))
                        .with_use(write)
                })
                .collect(),
        }
    }

    /// Reusing an earlier plan's vectors, of another shape, gives exactly the plan made
    /// without them, and fills those vectors rather than new ones.
    #[test]
    fn a_plan_made_from_a_spare_plan_equals_one_made_without() {
        let earlier = plan_owned(input(7, 4)).unwrap();
        let spare = SpareBarriers::from_queues(earlier.queues.clone());
        assert_eq!(spare.buffers.len(), earlier.barrier_commands());
        let finals = earlier.final_states.as_ptr();
        let reads = &earlier.final_states[1][0].1.reads;
        assert!(!reads.is_empty(), "a read of the last write, to keep");
        let reads = reads.as_ptr();
        // Fewer resources and passes, then more of both.
        let (_, spare) = SparePlan::of(earlier);
        let fewer = plan_reusing(input(5, 3), spare).unwrap();
        let fresh = plan_owned(input(5, 3)).unwrap();
        assert_eq!(fewer.queues, fresh.queues);
        assert_eq!(fewer.final_states, fresh.final_states);
        assert_eq!(fresh.barrier_commands(), 4);
        assert_eq!(fewer.final_states.as_ptr(), finals);
        assert_eq!(fewer.final_states[1][0].1.reads.as_ptr(), reads);
        let (_, spare) = SparePlan::of(fewer);
        let more = plan_reusing(input(9, 5), spare).unwrap();
        let fresh = plan_owned(input(9, 5)).unwrap();
        assert_eq!(more.queues, fresh.queues);
        assert_eq!(more.final_states, fresh.final_states);
        // Buffers of one segment and of two.
        let counts: Vec<usize> = fresh.final_states.iter().map(Vec::len).collect();
        assert!(counts.contains(&1) && counts.contains(&2), "{counts:?}");
    }
}
