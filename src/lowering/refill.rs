//! Refilling the last plan's declarations in place.
//!
//! Each function sets entry `i` of a list to new contents, reusing the entry's strings and
//! vectors when there is one (clear, then push: no allocation while the capacity suffices),
//! and appending a fresh entry otherwise. The caller truncates the list to its new length.

use crate::plan::{PassDecl, QueueDecl, ResourceDecl, ResourceKind};
use ash::vk;

/// Frame after frame the names repeat: comparing is cheaper than copying.
fn set_name(dst: &mut String, name: &str) {
    if dst != name {
        dst.clear();
        dst.push_str(name);
    }
}

/// Entry `i` of `list` as pass `name` on queue `queue`, with no uses, waits or signals yet.
pub(super) fn pass<'l>(
    list: &'l mut Vec<PassDecl>,
    i: usize,
    name: &str,
    queue: usize,
) -> &'l mut PassDecl {
    if i < list.len() {
        let pd = &mut list[i];
        set_name(&mut pd.name, name);
        pd.queue = queue;
        pd.uses.clear();
        pd.waits.clear();
        pd.signals.clear();
    } else {
        list.push(PassDecl::new(name, queue));
    }
    &mut list[i]
}

/// Entry `i` of `list` as this resource, its initial state left for the caller to refill.
pub(super) fn resource<'l>(
    list: &'l mut Vec<ResourceDecl>,
    i: usize,
    name: &str,
    kind: ResourceKind,
    concurrent: bool,
) -> &'l mut ResourceDecl {
    if i < list.len() {
        let rd = &mut list[i];
        set_name(&mut rd.name, name);
        rd.kind = kind;
        rd.concurrent = concurrent;
        rd.transient = None;
    } else {
        list.push(ResourceDecl {
            name: name.to_owned(),
            kind,
            concurrent,
            initial: Vec::new(),
            transient: None,
        });
    }
    &mut list[i]
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
        let pd = pass(&mut list, 0, "new", 1);
        pd.uses.push(UseDecl::new(2, Access::COPY_READ));
        let expected = PassDecl::new("new", 1).with_use(UseDecl::new(2, Access::COPY_READ));
        assert_eq!(format!("{:?}", list[0]), format!("{expected:?}"));
        assert_eq!(
            (list[0].name.as_ptr(), list[0].uses.as_ptr()),
            (name_ptr, uses_ptr)
        );

        // Past the end: appended.
        pass(&mut list, 1, "second", 0);
        assert_eq!(list.len(), 2);
        assert_eq!(
            format!("{:?}", list[1]),
            format!("{:?}", PassDecl::new("second", 0))
        );

        let mut queues = vec![QueueDecl::new("old", 5, vk::QueueFlags::TRANSFER)];
        queue(&mut queues, 0, "gfx", 0, vk::QueueFlags::GRAPHICS);
        assert_eq!(
            format!("{:?}", queues[0]),
            format!("{:?}", QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS))
        );
    }
}
