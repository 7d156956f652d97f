//! [`AtRest`]: where a plan's last execution left its resources, so that the plan's next
//! frame can tell that nothing changed by comparing versions.
//!
//! An execution commits each resource's state as the plan's final state, with "this
//! execution" read as each queue's last value of it. While a resource's version is still the
//! one that commit gave it, its state is exactly that: nothing needs to be copied or compared
//! to know it. When every resource of a plan is at rest, and the plan's input was itself the
//! state its previous execution left, the new input differs from the plan's only in those
//! last values, and [`Rebinder::rebind_at_rest`](crate::plan::Rebinder::rebind_at_rest)
//! moves the plan to the new ones.

pub(crate) use crate::resource::MERGED;

/// Where the last execution of a plan left its resources. Empty until the plan is executed.
#[derive(Debug, Default)]
pub(crate) struct AtRest {
    /// Per plan resource: its id, and the version the commit gave it ([`MERGED`] where the
    /// commit merged reads of other executions).
    ids: Vec<u64>,
    versions: Vec<u64>,
    /// Per plan queue: which queue it was (`Queue::id`; the simulation's queue index).
    /// The final states name queues by plan index, so they mean the same only on the same
    /// queues in the same order (the frame's own queues, which it keeps).
    queue_ids: Vec<u64>,
    /// Per plan queue: the execution's last value there, which its final states' records of
    /// "this execution" became.
    pub(crate) last: Vec<Option<u64>>,
    /// When `input_is_rest`, the plan's input is the state an earlier execution left: its
    /// final states with "this execution" read as these values.
    pub(crate) input_values: Vec<Option<u64>>,
    pub(crate) input_is_rest: bool,
    /// Whether the plan was executed since it came.
    executed: bool,
}

impl AtRest {
    /// Notes what an execution left: each plan resource's id, the version the commit gave it
    /// (`committed`, or [`MERGED`]; swapped in, so `committed` comes back with the versions
    /// of the execution before), each plan queue's identity, and each queue's last value.
    pub(crate) fn record(
        &mut self,
        ids: impl IntoIterator<Item = u64>,
        committed: &mut Vec<u64>,
        queues: impl IntoIterator<Item = u64>,
        last: &[Option<u64>],
    ) {
        self.ids.clear();
        self.ids.extend(ids);
        std::mem::swap(&mut self.versions, committed);
        self.queue_ids.clear();
        self.queue_ids.extend(queues);
        self.last.clear();
        self.last.extend_from_slice(last);
        self.executed = true;
    }

    /// Notes whether the plan's input is now the state the last execution left.
    pub(crate) fn set_input_is_rest(&mut self, is_rest: bool) {
        self.input_is_rest = is_rest;
        if is_rest {
            self.input_values.clear();
            self.input_values.extend_from_slice(&self.last);
        }
    }

    /// Forgets everything: the plan it travels with is another one.
    pub(crate) fn forget(&mut self) {
        self.ids.clear();
        self.versions.clear();
        self.queue_ids.clear();
        self.last.clear();
        self.input_is_rest = false;
        self.executed = false;
    }

    /// Whether `resources` (id and current version, by plan index) are the resources of the
    /// last execution, each still at the version that execution's commit gave it, and
    /// `queues` (identities, by plan index) its queues.
    pub(crate) fn holds(
        &self,
        resources: impl ExactSizeIterator<Item = (u64, u64)>,
        queues: impl ExactSizeIterator<Item = u64>,
    ) -> bool {
        self.holds_resources(resources) && self.same_queues(queues)
    }

    /// [`AtRest::holds`] for the resources alone.
    pub(crate) fn holds_resources(
        &self,
        resources: impl ExactSizeIterator<Item = (u64, u64)>,
    ) -> bool {
        self.executed
            && self.ids.len() == resources.len()
            && (self.ids.iter().zip(&self.versions).zip(resources))
                .all(|((&id, &v), (id_now, v_now))| v != MERGED && id == id_now && v == v_now)
    }

    /// Whether the last execution ran on resources with these ids (by plan index), wherever
    /// they are now.
    pub(crate) fn ran_on(&self, ids: impl Iterator<Item = u64>) -> bool {
        self.executed && self.ids.iter().copied().eq(ids)
    }

    /// Whether `queues` (identities, by plan index) are the last execution's queues.
    pub(crate) fn same_queues(&self, queues: impl ExactSizeIterator<Item = u64>) -> bool {
        self.executed
            && self.queue_ids.len() == queues.len()
            && self.queue_ids.iter().copied().eq(queues)
    }

    /// Whether plan resource `r`, with this id, is still at `version`, the one the last
    /// execution's commit gave it. The caller checks the queues ([`AtRest::same_queues`]).
    /// (Unexecuted, the record holds no resource.)
    pub(crate) fn left(&self, r: usize, id: u64, version: u64) -> bool {
        version != MERGED && self.ids.get(r) == Some(&id) && self.versions.get(r) == Some(&version)
    }

    /// The versions the last execution's commit gave the resources, by plan index (only
    /// meaningful when [`AtRest::holds`]).
    pub(crate) fn versions(&self) -> &[u64] {
        &self.versions
    }
}
