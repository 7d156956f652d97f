//! Refilling an earlier plan's declarations in place.
//!
//! Each function sets entry `i` of a list to new contents, reusing the entry's strings and
//! vectors when there is one (clear, then push: no allocation while the capacity suffices),
//! and appending a spare or fresh entry otherwise. The caller cuts the list to its new length
//! with [`truncate`], which keeps the entries cut as spares.

use crate::plan::{PassDecl, QueueDecl, ResourceDecl, ResourceKind};
use ash::vk;

/// Frame after frame the names repeat: comparing is cheaper than copying.
fn set_name(dst: &mut String, name: &str) {
    if dst != name {
        dst.clear();
        dst.push_str(name);
    }
}

/// Entry `i` of `list` (at most one past its end) as pass `name` on queue `queue`, with no
/// uses, waits or signals yet. Past the end, an entry from `spare` (what a longer frame had)
/// is taken before a new one. Inlined: it runs once per pass per frame.
#[inline]
pub(super) fn pass<'l>(
    list: &'l mut Vec<PassDecl>,
    spare: &mut Vec<PassDecl>,
    i: usize,
    name: &str,
    queue: usize,
) -> &'l mut PassDecl {
    debug_assert!(i <= list.len(), "passes are refilled in order");
    if i == list.len() {
        list.push(spare.pop().unwrap_or_else(|| PassDecl::new(name, queue)));
    }
    // Destructured in full, so that a field added to the declaration fails to compile here
    // until it is reset too: a spare entry may come from any earlier frame.
    let PassDecl {
        name: old_name,
        queue: old_queue,
        uses,
        waits,
        signals,
    } = &mut list[i];
    set_name(old_name, name);
    *old_queue = queue;
    uses.clear();
    waits.clear();
    signals.clear();
    &mut list[i]
}

/// Entry `i` of `list` (at most one past its end) as this resource, its initial state left for
/// the caller to refill. Past the end, an entry from `spare` is taken before a new one.
#[inline]
pub(super) fn resource<'l>(
    list: &'l mut Vec<ResourceDecl>,
    spare: &mut Vec<ResourceDecl>,
    i: usize,
    name: &str,
    kind: ResourceKind,
    concurrent: bool,
) -> &'l mut ResourceDecl {
    debug_assert!(i <= list.len(), "resources are refilled in order");
    if i == list.len() {
        list.push(spare.pop().unwrap_or_else(|| ResourceDecl {
            name: name.to_owned(),
            kind,
            concurrent,
            initial: Vec::new(),
            transient: None,
        }));
    }
    // In full, as in `pass`; `initial` is the caller's to refill (`refill_segments` cuts and
    // overwrites every segment).
    let ResourceDecl {
        name: old_name,
        kind: old_kind,
        concurrent: old_concurrent,
        initial: _,
        transient,
    } = &mut list[i];
    set_name(old_name, name);
    *old_kind = kind;
    *old_concurrent = concurrent;
    *transient = None;
    &mut list[i]
}

/// Cuts `list` to `len` entries; the ones cut go to `spare` for a later, longer frame.
pub(super) fn truncate<T>(list: &mut Vec<T>, len: usize, spare: &mut Vec<T>) {
    if list.len() > len {
        spare.extend(list.drain(len..));
    }
}

/// Entry `i` of `list` as this queue.
pub(super) fn queue(
    list: &mut Vec<QueueDecl>,
    i: usize,
    name: &str,
    family: u32,
    caps: vk::QueueFlags,
) {
    if i < list.len() {
        let qd = &mut list[i];
        set_name(&mut qd.name, name);
        qd.family = family;
        qd.caps = caps;
    } else {
        list.push(QueueDecl::new(name, family, caps));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::UseDecl;
    use crate::Access;

    /// A refilled entry has exactly the new contents, and keeps its allocations.
    #[test]
    fn a_refilled_pass_has_only_its_new_contents_and_keeps_its_buffers() {
        let mut list = vec![PassDecl::new("a long old name", 3)
            .with_use(UseDecl::new(0, Access::TRANSFER_WRITE))
            .with_use(UseDecl::new(1, Access::TRANSFER_READ))];
        let (name_ptr, uses_ptr) = (list[0].name.as_ptr(), list[0].uses.as_ptr());
        let mut spare = Vec::new();
        let pd = pass(&mut list, &mut spare, 0, "new", 1);
        pd.uses.push(UseDecl::new(2, Access::COPY_READ));
        let expected = PassDecl::new("new", 1).with_use(UseDecl::new(2, Access::COPY_READ));
        assert_eq!(format!("{:?}", list[0]), format!("{expected:?}"));
        assert_eq!(
            (list[0].name.as_ptr(), list[0].uses.as_ptr()),
            (name_ptr, uses_ptr)
        );

        // Past the end: appended.
        pass(&mut list, &mut spare, 1, "second", 0);
        assert_eq!(list.len(), 2);
        assert_eq!(
            format!("{:?}", list[1]),
            format!("{:?}", PassDecl::new("second", 0))
        );

        // A shorter frame leaves its last entry spare; a longer one takes it back, refilled.
        list[1].uses.push(UseDecl::new(0, Access::COPY_WRITE));
        let uses_ptr = list[1].uses.as_ptr();
        truncate(&mut list, 1, &mut spare);
        assert_eq!((list.len(), spare.len()), (1, 1));
        pass(&mut list, &mut spare, 1, "third", 2);
        assert_eq!((list.len(), spare.len()), (2, 0));
        assert_eq!(
            format!("{:?}", list[1]),
            format!("{:?}", PassDecl::new("third", 2))
        );
        assert_eq!(list[1].uses.as_ptr(), uses_ptr);

        let mut queues = vec![QueueDecl::new("old", 5, vk::QueueFlags::TRANSFER)];
        queue(&mut queues, 0, "gfx", 0, vk::QueueFlags::GRAPHICS);
        assert_eq!(
            format!("{:?}", queues[0]),
            format!("{:?}", QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS))
        );
    }
}
