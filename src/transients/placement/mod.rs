//! The placement planner: where each transient of a plan goes, as pure functions of the plan.
//! The planner calls it through [`Place`] (see [`crate::plan::transient`] for what it decides
//! and the example):
//!
//! - `validate.rs` refuses transients that cannot be planned (memory that makes no sense, a
//!   first use that reads, a hand-off to the host or a binary semaphore);
//! - `lifetime.rs` reads, from a plan made without aliasing, where each transient is used and
//!   which transients that plan already orders one after the other;
//! - `fit.rs` gives each transient a heap and an offset, sharing memory only between ordered
//!   transients;
//! - `bound.rs` computes the live-set lower bound the placement is measured against.
//!
//! `check_placements` checks what the executor relies on of every plan: it places exactly
//! the transients its recorded passes use.
//!
//! From the placement, [`Placement`] tells the planner which transients each transient's
//! first use must follow ([`Aliasing`]); the planner plans again with those dependencies and
//! then asks for the use sites of the final plan.

mod bound;
mod fit;
mod lifetime;
#[cfg(test)]
pub(crate) mod tests;
mod validate;

use crate::error::{Error, Result};
use crate::plan::transient::{self, Aliasing, Place};
use crate::plan::{Plan, PlanInput, QueuePlan, TransientPlacement, TransientPlan, UseSite};

/// The crate's placement of transients, which the planner is given ([`Place`]).
pub(crate) struct Placement;

/// The placement the planner is given.
pub(crate) fn placement() -> Option<&'static dyn Place> {
    Some(&Placement)
}

impl Place for Placement {
    fn validate(&self, input: &PlanInput) -> Result<()> {
        validate::validate(input)
    }

    fn place(&self, input: &PlanInput, queues: &[QueuePlan]) -> (TransientPlan, Aliasing) {
        place(input, queues)
    }

    fn sites(&self, plan: &mut TransientPlan, input: &PlanInput, queues: &[QueuePlan]) {
        sites(plan, input, queues)
    }

    fn check(&self, plan: &Plan) -> Result<()> {
        // A plan without transients places none: nothing to check (most graphs have none).
        if !transient::any(&plan.input) && plan.transients.placements.is_empty() {
            return Ok(());
        }
        check_placements(plan)
    }
}

/// Places the transients of `input` from a plan made without aliasing (`queues`): the heaps
/// and offsets, and what the planner must order because of them.
fn place(input: &PlanInput, queues: &[QueuePlan]) -> (TransientPlan, Aliasing) {
    let lifetimes = lifetime::Lifetimes::new(input, queues);
    let requests: Vec<fit::Request> = lifetimes
        .transients
        .iter()
        .map(|&r| fit::Request::of(input.resources[r].transient.expect("a transient")))
        .collect();
    let granularity = requests
        .iter()
        .map(|r| r.granularity)
        .max()
        .unwrap_or(1)
        .max(1);
    let n = requests.len();
    let starts: Vec<usize> = lifetimes.uses.iter().map(|u| u[0].pass).collect();
    let (heaps, slots) = fit::place(
        &requests,
        |a, b| lifetimes.ordered(a, b) || lifetimes.ordered(b, a),
        granularity,
        &starts,
    );
    let closure = bound::closure(n, |a, b| lifetimes.ordered(a, b));
    let sizes: Vec<u64> = requests.iter().map(|r| r.size).collect();
    let lower_bound = bound::max_weight_antichain(&sizes, &closure);
    let overlap = |a: usize, b: usize| fit::overlap(&requests, &slots, a, b, granularity);
    let mut aliasing = Aliasing {
        after: vec![Vec::new(); input.resources.len()],
        first_pass: lifetime::first_passes(input),
    };
    let mut placements = Vec::with_capacity(n);
    for b in 0..n {
        // The earlier transients under `b`'s memory, less those a later one among them covers
        // (same tiling, so overlap is plain byte overlap): `b` follows that one, which
        // followed them.
        let under: Vec<usize> = (0..n)
            .filter(|&a| a != b && overlap(a, b) && lifetimes.ordered(a, b))
            .collect();
        let covered = |a: usize| {
            under.iter().any(|&c| {
                c != a && lifetimes.ordered(a, c) && fit::covers(&requests, &slots, c, a, b)
            })
        };
        let after: Vec<usize> = under
            .iter()
            .copied()
            .filter(|&a| !covered(a))
            .map(|a| lifetimes.transients[a])
            .collect();
        let r = lifetimes.transients[b];
        aliasing.after[r] = after.clone();
        placements.push(TransientPlacement {
            resource: r,
            heap: slots[b].heap,
            offset: slots[b].offset,
            size: requests[b].size,
            // Filled from the final plan by `sites`.
            first_use: lifetimes.uses[b][0],
            last_uses: Vec::new(),
            after,
        });
    }
    let plan = TransientPlan {
        heaps,
        placements,
        unaliased_size: sizes.iter().sum(),
        lower_bound,
    };
    (plan, aliasing)
}

/// Fills the use sites of `plan`'s placements from the final plan's batches.
fn sites(plan: &mut TransientPlan, input: &PlanInput, queues: &[QueuePlan]) {
    let (transients, uses) = lifetime::uses(input, queues);
    for p in &mut plan.placements {
        let Some(t) = transients.iter().position(|&r| r == p.resource) else {
            continue;
        };
        let uses = &uses[t];
        p.first_use = uses[0];
        let mut last: Vec<UseSite> = Vec::new();
        for u in uses {
            match last.iter_mut().find(|l| l.queue == u.queue) {
                Some(l) => *l = (*l).max(*u),
                None => last.push(*u),
            }
        }
        last.sort_by_key(|u| u.queue);
        p.last_uses = last;
    }
}

/// Checks that the plan's [`TransientPlan::placements`] are exactly the transients that the
/// plan records a use of, each placed once: the executor binds those and nothing else. A pass
/// missing from [`Plan::order`] (culled) is never recorded, so a transient that only culled
/// passes use has no place and needs no memory.
///
/// The planner runs this on every plan it makes ([`Place::check`]): in `finish()` and in the
/// simulation alike, a plan the executor could not bind is refused.
///
/// [`TransientPlan::placements`]: crate::plan::TransientPlan::placements
pub(super) fn check_placements(plan: &Plan) -> Result<()> {
    let resources = &plan.input.resources;
    let bad = |what: String| Err(Error::InvalidInput(what));
    let mut used = vec![false; resources.len()];
    let recorded = plan.order.iter().filter_map(|&i| plan.input.passes.get(i));
    for u in recorded.flat_map(|p| &p.uses) {
        match used.get_mut(u.resource) {
            Some(x) => *x = true,
            None => return bad(format!("a use of resource {} out of range", u.resource)),
        }
    }
    let mut placed = vec![false; resources.len()];
    for p in &plan.transients.placements {
        let Some(r) = resources.get(p.resource) else {
            return bad(format!("placement of resource {} out of range", p.resource));
        };
        if r.transient.is_none() {
            return bad(format!(
                "`{}` is placed as a transient but is not one",
                r.name
            ));
        }
        if !used[p.resource] || placed[p.resource] {
            let why = if placed[p.resource] {
                "twice"
            } else {
                "but no recorded pass uses it"
            };
            return bad(format!("transient `{}` is placed {why}", r.name));
        }
        placed[p.resource] = true;
    }
    match (0..resources.len()).find(|&r| used[r] && !placed[r] && resources[r].transient.is_some())
    {
        Some(r) => bad(format!(
            "transient `{}` has no place in the plan",
            resources[r].name
        )),
        None => Ok(()),
    }
}
