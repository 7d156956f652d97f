//! Timeline values: what one execution of a plan signals and waits for, and the state the
//! next graph starts from.

use super::{Plan, SegmentState, WaitTarget};

/// The timeline values one execution of a plan signals, per queue and batch.
///
/// ```
/// # use vk_baton::plan::*;
/// # use vk_baton::{ash::vk, Access};
/// # let input = PlanInput {
/// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
/// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
/// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
/// #     passes: vec![
/// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
/// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
/// #     ],
/// # };
/// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
/// let plan = plan(&input).unwrap();
/// let values = plan.assign_values(&mut [0, 0]);
/// assert_eq!(values, TimelineValues {
///     start: vec![0, 0],
///     per_batch: vec![vec![Some(1)], vec![Some(1)]],
///     last: vec![Some(1), Some(1)],
/// });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineValues {
    /// Per queue: the highest value its timeline had been given before this execution. A wait
    /// for a value at or below it is satisfied by work submitted before this execution (an
    /// earlier graph, or the app's own submit).
    pub start: Vec<u64>,
    /// `per_batch[q][b]`: the value batch `b` of queue `q` signals, if it signals.
    pub per_batch: Vec<Vec<Option<u64>>>,
    /// Per queue: the last value this execution signals there (`None`: no work there).
    pub last: Vec<Option<u64>>,
}

impl Plan {
    /// Gives every signalling batch the next value of its queue's timeline. `last_signalled[q]`
    /// is the highest value queue `q`'s timeline has been given so far; it is advanced.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // The compute timeline is at 10 and the graphics one at 20 from earlier executions.
    /// let mut last = [10, 20];
    /// let values = plan.assign_values(&mut last);
    /// assert_eq!(values.per_batch, vec![vec![Some(11)], vec![Some(21)]]);
    /// assert_eq!(last, [11, 21]);
    /// ```
    pub fn assign_values(&self, last_signalled: &mut [u64]) -> TimelineValues {
        let start = last_signalled.to_vec();
        let mut per_batch = Vec::with_capacity(self.queues.len());
        let mut last = Vec::with_capacity(self.queues.len());
        for (q, qp) in self.queues.iter().enumerate() {
            let mut vals = Vec::with_capacity(qp.batches.len());
            let mut l = None;
            for b in &qp.batches {
                if b.signal.is_some() {
                    last_signalled[q] += 1;
                    l = Some(last_signalled[q]);
                    vals.push(l);
                } else {
                    vals.push(None);
                }
            }
            per_batch.push(vals);
            last.push(l);
        }
        TimelineValues {
            start,
            per_batch,
            last,
        }
    }

    /// The value a wait waits for, given this execution's values.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// let values = plan.assign_values(&mut [10, 20]);
    /// let wait = plan.queues[1].batches[0].waits[0];
    /// // Graphics waits for the compute batch's value.
    /// assert_eq!(plan.wait_value(wait.target, &values), Some(11));
    /// ```
    pub fn wait_value(&self, target: WaitTarget, values: &TimelineValues) -> Option<u64> {
        match target {
            WaitTarget::Batch { queue, batch } => values.per_batch[queue][batch],
            WaitTarget::Value { value, .. } => Some(value),
            WaitTarget::Binary(_) => None,
        }
    }

    /// The final states with "this execution" filled in with each queue's last value: the
    /// state to plan the next graph from.
    ///
    /// ```
    /// # use vk_baton::plan::*;
    /// # use vk_baton::{ash::vk, Access};
    /// # let input = PlanInput {
    /// #     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    /// #                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    /// #     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    /// #     passes: vec![
    /// #         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    /// #         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    /// #     ],
    /// # };
    /// // Compute (family 1) writes an image, graphics (family 0) samples it, as in the `Plan` example.
    /// let plan = plan(&input).unwrap();
    /// // Left open in the plan: "this execution's last value on graphics".
    /// assert_eq!(plan.final_states[0][0].1.write.unwrap().value, None);
    /// let values = plan.assign_values(&mut [10, 20]);
    /// let next = plan.resolved_final_states(&values);
    /// assert_eq!(next[0][0].1.write.unwrap().value, Some(21));
    /// ```
    pub fn resolved_final_states(
        &self,
        values: &TimelineValues,
    ) -> Vec<Vec<(std::ops::Range<u64>, SegmentState<usize>)>> {
        self.final_states
            .iter()
            .map(|segs| {
                segs.iter()
                    .map(|(c, s)| {
                        let mut s = s.clone();
                        for r in s.write.iter_mut().chain(s.reads.iter_mut()) {
                            if r.value.is_none() {
                                r.value = Some(values.last[r.queue].unwrap_or(0));
                            }
                        }
                        (c.clone(), s)
                    })
                    .collect()
            })
            .collect()
    }
}
