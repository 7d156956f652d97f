//! Timeline values: what one execution of a plan signals and waits for, and the state the
//! next graph starts from.

use super::{Plan, SegmentState, WaitTarget};

/// The timeline values one execution of a plan signals, per queue and batch.
///
/// See the [module example](crate::plan).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    pub fn assign_values(&self, last_signalled: &mut [u64]) -> TimelineValues {
        let mut values = TimelineValues::default();
        self.assign_values_into(last_signalled, &mut values);
        values
    }

    /// [`Plan::assign_values`] into `values`, reusing its vectors.
    pub(crate) fn assign_values_into(
        &self,
        last_signalled: &mut [u64],
        values: &mut TimelineValues,
    ) {
        values.start.clear();
        values.start.extend_from_slice(last_signalled);
        values.per_batch.truncate(self.queues.len());
        values.per_batch.resize_with(self.queues.len(), Vec::new);
        values.last.clear();
        for (q, qp) in self.queues.iter().enumerate() {
            let vals = &mut values.per_batch[q];
            vals.clear();
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
            values.last.push(l);
        }
    }

    /// The value a wait waits for, given this execution's values.
    pub fn wait_value(&self, target: WaitTarget, values: &TimelineValues) -> Option<u64> {
        match target {
            WaitTarget::Batch { queue, batch } => values.per_batch[queue][batch],
            WaitTarget::Value { value, .. } => Some(value),
            WaitTarget::Binary(_) => None,
        }
    }

    /// The final states with "this execution" filled in with each queue's last value: the
    /// state to plan the next graph from.
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
