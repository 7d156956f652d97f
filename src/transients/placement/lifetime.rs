//! Lifetimes: where each transient is used in a plan, and which transients the plan already
//! orders one after the other.
//!
//! Happens-before is read from the plan as the executor submits it, and only directly: a use
//! happens-before another on the same queue when it is recorded earlier; on another queue when
//! the later use's batch, or an earlier batch of its queue, waits on the earlier use's batch or
//! a later batch of that queue. Chains through a third queue are left out, so that ordering a
//! transient after another never needs a semaphore wait the plan lacks.

use crate::plan::UseSite;
use crate::plan::{Command, PlanInput, QueuePlan, WaitTarget};

/// Where each pass is recorded: `None` for a pass the plan does not record.
pub(super) fn pass_sites(queues: &[QueuePlan], passes: usize) -> Vec<Option<UseSite>> {
    let mut sites = vec![None; passes];
    for (queue, qp) in queues.iter().enumerate() {
        for (batch, b) in qp.batches.iter().enumerate() {
            for (command, c) in b.commands.iter().enumerate() {
                if let Command::Pass(pass) = *c {
                    if let Some(s) = sites.get_mut(pass) {
                        *s = Some(UseSite {
                            pass,
                            queue,
                            batch,
                            command,
                        });
                    }
                }
            }
        }
    }
    sites
}

/// Per resource, the first pass (in program order) that uses it.
pub(super) fn first_passes(input: &PlanInput) -> Vec<Option<usize>> {
    let mut first = vec![None; input.resources.len()];
    for (i, p) in input.passes.iter().enumerate() {
        for u in &p.uses {
            if let Some(f @ None) = first.get_mut(u.resource) {
                *f = Some(i);
            }
        }
    }
    first
}

/// Happens-before between use sites, from submission order and the plan's own waits.
struct Order {
    /// `reach[q][b][o]`: the highest batch of queue `o` that batch `b` of queue `q`, or an
    /// earlier batch of `q`, waits on.
    reach: Vec<Vec<Vec<Option<usize>>>>,
}

impl Order {
    fn new(queues: &[QueuePlan]) -> Self {
        let nq = queues.len();
        let reach = queues
            .iter()
            .map(|qp| {
                let mut so_far: Vec<Option<usize>> = vec![None; nq];
                qp.batches
                    .iter()
                    .map(|b| {
                        for w in &b.waits {
                            if let WaitTarget::Batch { queue, batch } = w.target {
                                if let Some(r) = so_far.get_mut(queue) {
                                    *r = (*r).max(Some(batch));
                                }
                            }
                        }
                        so_far.clone()
                    })
                    .collect()
            })
            .collect();
        Order { reach }
    }

    /// Whether `x` happens-before `y`.
    fn before(&self, x: &UseSite, y: &UseSite) -> bool {
        if x.queue == y.queue {
            (x.batch, x.command) < (y.batch, y.command)
        } else {
            self.reach[y.queue][y.batch][x.queue].is_some_and(|b| b >= x.batch)
        }
    }
}

/// The transients a plan uses, their use sites, and which are ordered.
pub(super) struct Lifetimes {
    /// The used transients (resource indices), ascending.
    pub(super) transients: Vec<usize>,
    /// Per transient (same order): its use sites in program order, the first being its first
    /// use.
    pub(super) uses: Vec<Vec<UseSite>>,
    /// `ordered[a][b]`: every use of transient `a` happens-before the first use of `b`.
    ordered: Vec<Vec<bool>>,
}

/// The transients a plan uses (resource indices, ascending) and, for each, its use sites in
/// program order.
pub(super) fn uses(input: &PlanInput, queues: &[QueuePlan]) -> (Vec<usize>, Vec<Vec<UseSite>>) {
    let sites = pass_sites(queues, input.passes.len());
    let mut uses: Vec<Vec<UseSite>> = vec![Vec::new(); input.resources.len()];
    for (i, p) in input.passes.iter().enumerate() {
        let Some(site) = sites[i] else { continue };
        for u in &p.uses {
            let list = &mut uses[u.resource];
            if input.resources[u.resource].transient.is_some() && list.last() != Some(&site) {
                list.push(site);
            }
        }
    }
    let transients: Vec<usize> = (0..uses.len()).filter(|&r| !uses[r].is_empty()).collect();
    let uses = transients
        .iter()
        .map(|&r| std::mem::take(&mut uses[r]))
        .collect();
    (transients, uses)
}

impl Lifetimes {
    pub(super) fn new(input: &PlanInput, queues: &[QueuePlan]) -> Self {
        let (transients, uses) = uses(input, queues);
        let order = Order::new(queues);
        // The first use writes all of the transient and every later use is ordered after it
        // (validation and the plan's own dependencies), so following the first use is
        // following them all.
        let ordered = (0..uses.len())
            .map(|a| {
                (0..uses.len())
                    .map(|b| a != b && uses[a].iter().all(|x| order.before(x, &uses[b][0])))
                    .collect()
            })
            .collect();
        Lifetimes {
            transients,
            uses,
            ordered,
        }
    }

    /// Whether every use of transient `a` happens-before every use of `b` (indices into
    /// [`Lifetimes::transients`]).
    pub(super) fn ordered(&self, a: usize, b: usize) -> bool {
        self.ordered[a][b]
    }
}
