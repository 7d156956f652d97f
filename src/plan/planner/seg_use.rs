//! What one use of one segment needs, shared by the steps that plan it: the use after its
//! pass's uses of the segment are folded (`SegUse`), what the segment's state asks of it
//! (`SegNeeds`), and both with the use's place and priors (`SegAccess`).

use super::*;

/// What one pass does to one segment, after folding all its uses of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct SegUse {
    pub(super) access: Access,
    pub(super) discard: bool,
    /// The layout the image must be in before the pass, and the one it is in after: the
    /// access's, or a `VkRenderPass`'s `initialLayout` and `finalLayout`.
    pub(super) before: vk::ImageLayout,
    pub(super) after: vk::ImageLayout,
    /// The pass changes the layout itself (a render pass's own transitions): a write.
    pub(super) transitions: bool,
    /// A render pass whose `initialLayout` is UNDEFINED: it takes the image in any layout
    /// and moves it itself, so the graph moves it nowhere first.
    pub(super) any_layout_before: bool,
    /// A write that needs no ordering against the unordered writes just before it.
    pub(super) unordered: Option<Unordered>,
}

impl SegUse {
    /// What `u` does to a resource of `kind`: a use narrowed to one plane of a depth/stencil
    /// image takes that aspect's layout ([`UseDecl::on_plane`]).
    pub(super) fn of(u: &UseDecl, kind: &ResourceKind) -> Self {
        // Most uses name no single plane: read in place rather than copied.
        let on_plane;
        let u = if kind.grid().and_then(|g| g.narrowed(u.aspect)).is_some() {
            on_plane = u.on_plane(kind);
            &on_plane
        } else {
            u
        };
        SegUse {
            access: u.access,
            discard: u.discards(),
            before: u.layout_before(),
            after: u.layout_after(),
            transitions: u.render_pass_transitions(),
            any_layout_before: u
                .render_pass
                .is_some_and(|rp| rp.initial_layout == vk::ImageLayout::UNDEFINED),
            unordered: u.unordered,
        }
    }
}

/// What one use needs of one segment, decided from the segment's state before it.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegNeeds {
    /// The layout the image is in, as far as the use cares: `UNDEFINED` where it needs no
    /// contents and the layout changes anyway (`UNDEFINED` for a buffer, as the next two).
    pub(super) old_layout: vk::ImageLayout,
    /// The layout the use needs.
    pub(super) new_layout: vk::ImageLayout,
    /// Where the pass leaves an image: its render pass's `finalLayout`, or where it was.
    pub(super) after_layout: vk::ImageLayout,
    pub(super) layout_change: bool,
    /// The family to take ownership from.
    pub(super) transfer_from: Option<u32>,
    /// The use changes the segment as a write does: it writes, changes the layout or the
    /// owner, or its render pass transitions the image.
    pub(super) write_like: bool,
}

impl SegNeeds {
    /// What `u`, on a queue of `family`, needs of resource `res` in state `st`; `queues`
    /// tell whether `maintenance9` keeps contents across families without a transfer.
    #[inline]
    pub(super) fn of(
        res: &ResourceDecl,
        family: u32,
        st: &WState,
        u: &SegUse,
        queues: &[QueueDecl],
    ) -> Self {
        let a = &u.access;
        let is_image = matches!(res.kind, ResourceKind::Image { .. });
        let contents_needed = st.defined && !u.discard;
        let new_layout = if is_image {
            u.before
        } else {
            vk::ImageLayout::UNDEFINED
        };
        let old_layout = if !is_image {
            vk::ImageLayout::UNDEFINED
        } else if contents_needed || st.layout == new_layout {
            st.layout
        } else {
            vk::ImageLayout::UNDEFINED
        };
        // A render pass that starts from UNDEFINED moves the image itself; a barrier before it
        // only orders, in the layout the image is in. An image in no layout yet stays there
        // where nothing but a binary wait (which orders it alone) came before; otherwise the
        // barrier that orders it needs a layout to name, and takes the subpass's.
        let stays = is_image
            && u.any_layout_before
            && (st.layout != vk::ImageLayout::UNDEFINED
                || (st.reads.is_empty() && st.write.is_none_or(|w| w.binary_wait.is_some())));
        let (old_layout, new_layout) = if stays {
            (st.layout, st.layout)
        } else {
            (old_layout, new_layout)
        };
        let layout_change = is_image && old_layout != new_layout;
        // The host is no queue family: queue family ownership governs "read accesses performed
        // by the second queue family", and mapped memory is read and written by the host after
        // a memory dependency whose second scope is HOST. A host access therefore takes no
        // ownership, unless an image must first change layout on this queue.
        let host_only = is_host_only(a);
        let changes_owner = match st.owner {
            Some(o) => {
                !res.concurrent && contents_needed && o != family && (!host_only || layout_change)
            }
            None => false,
        };
        // With maintenance9 the new family may take kept contents over without a transfer;
        // it still takes ownership, which is exclusive: like an acquire, the use is ordered
        // after every use by the old owner, reads included, so it is planned as a write.
        let (transfer_from, taken_over) = match st.owner {
            Some(o) if changes_owner && kept_without_transfer(queues, res, o, family) => {
                (None, true)
            }
            Some(o) if changes_owner => (Some(o), false),
            _ => (None, false),
        };
        let write_like =
            a.is_write() || layout_change || transfer_from.is_some() || taken_over || u.transitions;
        let after_layout = if is_image {
            u.after
        } else {
            vk::ImageLayout::UNDEFINED
        };
        SegNeeds {
            old_layout,
            new_layout,
            after_layout,
            layout_change,
            transfer_from,
            write_like,
        }
    }
}

/// With `maintenance9` ([`QueueDecl::maintenance9`]), whether the contents of `res`, owned by
/// family `owner`, stay defined when family `family` takes them without an ownership transfer:
/// always for a buffer; for an image created without attachment usage, when `family` is in
/// `owner`'s `optimalImageTransferToQueueFamilies`.
fn kept_without_transfer(
    queues: &[QueueDecl],
    res: &ResourceDecl,
    owner: u32,
    family: u32,
) -> bool {
    if !queues.iter().any(|q| q.maintenance9.is_some()) {
        return false;
    }
    match res.kind {
        ResourceKind::Buffer { .. } => true,
        ResourceKind::Image { usage, .. } => {
            let mask = (queues.iter())
                .find(|q| q.family == owner)
                .and_then(|q| q.maintenance9)
                .unwrap_or(0);
            !usage.intersects(ATTACHMENT_USAGE) && family < 32 && mask & (1 << family) != 0
        }
    }
}

/// The image usages that keep `maintenance9` from keeping an optimal image's contents across
/// families without a transfer.
const ATTACHMENT_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::COLOR_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::INPUT_ATTACHMENT.as_raw()
        | vk::ImageUsageFlags::ATTACHMENT_FEEDBACK_LOOP_EXT.as_raw(),
);

/// One use of one segment being planned: what the steps of `access_segment` share.
pub(super) struct SegAccess<'u> {
    pub(super) pass: usize,
    /// The resource.
    pub(super) r: usize,
    /// The pass's queue, its family, and the pass's node position.
    pub(super) queue: usize,
    pub(super) family: u32,
    pub(super) pos: Pos,
    /// Whether the resource is shared by queue families without transfers.
    pub(super) concurrent: bool,
    /// The folded use, lent rather than copied: it is large, and read only.
    pub(super) u: &'u SegUse,
    /// The accesses a transient's first use follows in the memory it takes from others
    /// (`alias_priors`): empty for most uses.
    pub(super) alias: &'u [Rec],
    pub(super) needs: SegNeeds,
    /// The stages the use is synchronized at ([`Planner::effective_stages`]).
    pub(super) eff: vk::PipelineStageFlags2,
    /// The prior accesses the use must be ordered after: the planner's list for them, lent
    /// to each use in turn (`Planner::use_priors`).
    pub(super) priors: Vec<Rec>,
    /// The use joins the segment's group of unordered writes ([`unordered`]).
    pub(super) joins: bool,
    /// The segment's last write, where no earlier barrier made it visible to the use: found
    /// once, for the use's priors and for the reasons of its barrier entry.
    pub(super) unseen: Option<Rec>,
}
