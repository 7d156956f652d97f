//! What the executor relies on of a plan's placement: it places exactly the transients that
//! the recorded passes use.

use crate::error::{Error, Result};
use crate::plan::Plan;

/// Checks that the plan's [`TransientPlan::placements`] are exactly the transients that the
/// plan records a use of, each placed once: the executor binds those and nothing else. A pass
/// missing from [`Plan::order`] (culled) is never recorded, so a transient that only culled
/// passes use has no place and needs no memory.
///
/// `finish()` runs this on every plan it makes (a kept or held plan keeps its placements),
/// and the simulation (module `simulate`) on every frame, so that a plan the executor could
/// not bind is refused in simulation too.
///
/// [`TransientPlan::placements`]: crate::plan::TransientPlan::placements
pub(crate) fn check_placements(plan: &Plan) -> Result<()> {
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
