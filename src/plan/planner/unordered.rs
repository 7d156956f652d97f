//! Groups of unordered writes ([`Unordered`]): whether a write joins the group before it on a
//! segment, what a member must still be ordered after, and the group's state after it.
//!
//! A group's members are not ordered among themselves. Each is ordered after what the first
//! member was ordered after (the group's priors), which a member on the same queue at stages
//! and accesses the first member's synchronization already reached needs nothing more for:
//! that barrier's or semaphore wait's second scope holds every later command of the queue at
//! those stages. The segment's last write becomes the members' writes merged, one record on
//! the group's queue at the last member, so later uses wait for every member.

use super::seg_use::SegAccess;
use super::*;

/// The unordered writes of one segment since its last ordinary write, on one queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Group {
    queue: usize,
    /// What the first member was ordered after; every member comes after them.
    priors: SmallVec<[Rec; 2]>,
    /// The first member's barrier moved the image's layout or owner. A transition is ordered
    /// only before that barrier's second scope, so a member at other stages waits for the
    /// members before it.
    moved: bool,
    /// (stages, accesses) of `queue` already ordered after `priors` (and the move), one pair
    /// per barrier or wait that did it: visibility holds per pair, so pairs are not merged
    /// into the union of their stages and of their accesses.
    ordered: SmallVec<[(vk::PipelineStageFlags2, vk::AccessFlags2); 2]>,
    /// Each member's pass and declaration.
    members: SmallVec<[(usize, Unordered); 4]>,
    /// The first pass that read the segment after the group began, as an ordinary use (even
    /// one that moved the layout or owner to read).
    read_by: Option<usize>,
}

impl Planner<'_> {
    /// Whether the unordered use `s` joins the group of `st`, with `s.priors` set to what it
    /// must still be ordered after. Refuses an ordinary read between two unordered writes that
    /// would be one group, and disjoint regions that overlap.
    pub(super) fn join_group(&self, st: &WState, s: &mut SegAccess) -> Result<bool> {
        let (Some(kind), Some(group)) = (s.u.unordered, st.group.as_deref()) else {
            return Ok(false);
        };
        let Some(&(last, last_kind)) = group.members.last() else {
            return Ok(false);
        };
        if !kind.same_kind(&last_kind) {
            return Ok(false);
        }
        // A write on another queue, or one that must move the layout or owner, starts a
        // group of its own, ordered after everything before it.
        let moves = s.needs.layout_change || s.needs.transfer_from.is_some() || s.u.transitions;
        if group.queue != s.queue || moves {
            return Ok(false);
        }
        if let Some(read) = group.read_by {
            return Err(Error::UnorderedWriteInterrupted {
                resource: self.input.resources[s.r].name.clone(),
                first: self.input.passes[last].name.clone(),
                between: self.input.passes[read].name.clone(),
                then: self.input.passes[s.pass].name.clone(),
            });
        }
        if let Some(&(other, other_kind)) = group.members.iter().find(|m| m.1.overlaps(&kind)) {
            return Err(Error::UnorderedWriteOverlap {
                resource: self.input.resources[s.r].name.clone(),
                first: self.input.passes[other].name.clone(),
                second: self.input.passes[s.pass].name.clone(),
                detail: format!("{other_kind:?} and {kind:?}"),
            });
        }
        let (stages, access) = (s.u.access.stages, s.u.access.access);
        let covered =
            (group.ordered.iter()).any(|&(st, ac)| st.contains(stages) && ac.contains(access));
        if covered {
            // The first member's synchronization already reaches this member.
        } else if group.moved {
            write_priors_into(st, &mut s.priors);
        } else {
            s.priors.extend_from_slice(&group.priors);
        }
        Ok(true)
    }

    /// Moves the segment's group past use `s`, after `apply_access`: `before` is the
    /// segment's last write before the use. A member merges its write with the group's; an
    /// unordered write that did not join starts a group; an ordinary write ends it.
    pub(super) fn follow_group(&self, st: &mut WState, s: &SegAccess, before: Option<Rec>) {
        let Some(kind) = s.u.unordered else {
            if s.u.access.is_write() {
                st.group = None;
            } else if let Some(group) = st.group.as_deref_mut() {
                group.read_by.get_or_insert(s.pass);
            }
            return;
        };
        match (s.joins, st.group.as_deref_mut(), before, st.write.as_mut()) {
            (true, Some(group), Some(before), Some(write)) => {
                write.at = write.at.max(before.at);
                write.stages |= before.stages;
                write.access |= before.access;
                group.members.push((s.pass, kind));
                let pair = (s.eff, s.u.access.access);
                if !group.ordered.contains(&pair) {
                    group.ordered.push(pair);
                }
            }
            _ => {
                st.group = Some(Box::new(Group {
                    queue: s.queue,
                    priors: SmallVec::from_slice(&s.priors),
                    moved: s.needs.layout_change || s.needs.transfer_from.is_some(),
                    ordered: smallvec::smallvec![(s.eff, s.u.access.access)],
                    members: smallvec::smallvec![(s.pass, kind)],
                    read_by: None,
                }))
            }
        }
    }
}
