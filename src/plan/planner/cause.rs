//! Why a barrier entry is there ([`Cause`]): of the prior accesses the planner orders a use
//! after, the one a person would name. That is the latest access in this plan, on the use's own
//! queue where there is one (the barrier orders it; semaphores order the others); else an
//! earlier execution's; else nothing (contents that start here).

use super::*;

impl Planner<'_> {
    /// The cause of an entry that orders pass `pass` (on `queue`) after `priors`, of which
    /// those in `alias` are another transient's accesses to the same memory. An acquire with
    /// no prior of its own (the release orders it) names the latest access by the releasing
    /// family `from`, in state `st`.
    pub(super) fn cause(
        &self,
        (pass, queue): (usize, usize),
        priors: &[Rec],
        alias: &[Rec],
        acquire: Option<(u32, &WState)>,
    ) -> Cause {
        let mut pick = self.latest(queue, priors.iter());
        if let (None, Some((from, st))) = (pick, acquire) {
            let by_from = (st.write.iter().chain(&st.reads))
                .filter(|x| self.input.queues[x.queue].family == from);
            pick = self.latest(queue, by_from);
        }
        let after = match pick {
            None => Prior::Nothing,
            Some(x) => match self.prior(&x) {
                Prior::Pass(p) if alias.contains(&x) => Prior::SharedMemory(p),
                prior => prior,
            },
        };
        Cause { pass, after }
    }

    /// The access of `priors` to name: in this plan before earlier executions, on `queue`
    /// before other queues, then the latest.
    fn latest<'r>(&self, queue: usize, priors: impl Iterator<Item = &'r Rec>) -> Option<Rec> {
        (priors.copied()).max_by_key(|x| match x.at {
            At::Node(p) => (true, x.queue == queue, p),
            At::Value(_) => (false, x.queue == queue, 0),
        })
    }

    /// What access `x` was, for a person.
    fn prior(&self, x: &Rec) -> Prior {
        if let Some((pass, _)) = x.binary_wait {
            return Prior::BinaryWait(pass);
        }
        match x.at {
            // A pass's node is at `2k + 2`; a release's (never an access) after it.
            At::Node(p) if p >= 2 => match self.order.get((p as usize - 2) / 2) {
                Some(&pass) => Prior::Pass(pass),
                None => Prior::Nothing,
            },
            At::Node(_) | At::Value(_) => Prior::EarlierExecution { queue: x.queue },
        }
    }
}
