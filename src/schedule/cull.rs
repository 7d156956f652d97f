//! Culling: passes whose work nobody can observe.

use super::conflict::overlap;
use crate::plan::PlanInput;

/// The passes of a validated input that culling keeps, in program order.
///
/// Walking back from the last pass, a pass is kept when it is
/// [pinned](super::conflict::pinned) (it declares no use, so what it does is unknown; waits on
/// or signals a binary semaphore; or presents), uses a resource that is not transient
/// (the app sees it after the graph), or writes a range that a later kept pass uses in any way
/// (a later write may be partial, and a read-write reads). Every other pass touches only
/// transient resources, whose contents end with the graph, and what it writes (or discards)
/// is never used: dropping it changes nothing anybody reads.
pub(super) fn kept(input: &PlanInput) -> Vec<usize> {
    let n = input.passes.len();
    let mut keep = vec![false; n];
    // Per resource, the later kept passes that use it.
    let mut later_users: Vec<Vec<usize>> = vec![Vec::new(); input.resources.len()];
    for i in (0..n).rev() {
        let pass = &input.passes[i];
        let pinned = super::conflict::pinned(pass);
        let user_owned = pass
            .uses
            .iter()
            .any(|u| input.resources[u.resource].transient.is_none());
        let used_later = || {
            pass.uses
                .iter()
                .filter(|u| u.writes() || u.discards())
                .any(|u| {
                    later_users[u.resource].iter().any(|&j| {
                        input.passes[j]
                            .uses
                            .iter()
                            .any(|v| v.resource == u.resource && overlap(input, u, v))
                    })
                })
        };
        if pinned || user_owned || used_later() {
            keep[i] = true;
            for u in &pass.uses {
                let list = &mut later_users[u.resource];
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
    }
    (0..n).filter(|&i| keep[i]).collect()
}
