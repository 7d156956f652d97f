//! [`Unordered`]: a write that needs no ordering against other writes that say the same.

use crate::range::BufferRange;

/// Why a write needs no barrier between it and the other unordered writes of its group.
///
/// Writes to one part of a resource are ordered one after another: each waits for the last,
/// and its writes are made available before the next. Some writes do not need that:
/// tiles of an atlas drawn or computed by separate passes, histogram bins or counters that
/// every pass adds to with atomics. A use that says so with [`UseDecl::unordered`](crate::plan::UseDecl::unordered) joins the
/// **group** of the unordered writes just before it, and the planner puts no barrier between
/// the members of a group. The group as a whole is still ordered against everything else:
/// every member comes after what the group's first member waits for, and every later use
/// waits for all of them.
///
/// A group is a run of uses of one part of a resource, one after another in program order,
/// that:
///
/// - are all unordered writes of the same kind (both [`Unordered::Disjoint`], or both
///   [`Unordered::Atomic`]);
/// - run on one queue (a write on another queue is ordered after the group, and starts a new
///   one);
/// - keep the image's layout and owner (a member that must move either is ordered as any
///   write is).
///
/// An ordinary write ends a group: it overwrites what the group made. An ordinary **read**
/// between two unordered writes that would otherwise be one group (the same kind, on one
/// queue, neither moving the layout or owner) is refused with
/// [`Error::UnorderedWriteInterrupted`](crate::Error::UnorderedWriteInterrupted): it would
/// see the group half done, which is the very order the group declared irrelevant.
///
/// What is checked: the regions of one group's [`Unordered::Disjoint`] writes must not
/// overlap. The planner refuses overlapping regions with
/// [`Error::UnorderedWriteOverlap`](crate::Error::UnorderedWriteOverlap), and the verifier
/// exempts from ordering only unordered writes of one kind, one execution and one queue whose
/// regions do not overlap: it checks every other pair as the ordinary writes they are. What is not
/// checked: that [`Unordered::Atomic`] writes are atomics. No declaration can show it; the
/// shader must only write with atomic operations, and reads within a group see any subset of
/// the other members' writes.
///
/// What the validation layer (1.4.309) sees: it tracks copies per texel box, so it checks that
/// disjoint copies are disjoint; it does not check one rendering's attachment accesses
/// against another's, nor, within one command buffer, dispatches that write through one bound
/// descriptor (`tests/gpu/unordered.rs`, `passes/tests/render/tiles.rs`).
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{ash::vk, Access};
/// // Four passes add to one histogram with atomics, then one pass reads it.
/// let mut passes: Vec<PassDecl> = (0..4)
///     .map(|i| PassDecl::new(&format!("bin {i}"), 0)
///         .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ_WRITE).unordered(Unordered::Atomic)))
///     .collect();
/// passes.push(PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)));
/// let input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
///     resources: vec![ResourceDecl::buffer("histogram", 1024, vk::BufferUsageFlags::STORAGE_BUFFER)],
///     passes,
/// };
/// let plan = plan(&input).unwrap();
/// // One barrier, before `read`; none between the four bins.
/// let commands = &plan.queues[0].batches[0].commands;
/// assert!(matches!(commands[..4], [Command::Pass(0), Command::Pass(1), Command::Pass(2), Command::Pass(3)]));
/// assert!(matches!(commands[4], Command::Barrier(_)));
/// assert_eq!(plan.barrier_commands(), 1);
/// assert!(plan.verify().is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unordered {
    /// The pass writes only `region` of what it declares, and the other members of its group
    /// write elsewhere: tiles of an atlas, slices of a buffer picked in the shader.
    Disjoint(Region),
    /// The pass writes only with atomic operations (and may read what it wrote). Nothing can
    /// check this.
    Atomic,
}

impl Unordered {
    /// Whether `self` and `other` may be members of one group.
    pub(crate) fn same_kind(&self, other: &Unordered) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// Whether two writes of one group touch a common place: never for atomics, where their
    /// regions overlap for disjoint writes.
    pub(crate) fn overlaps(&self, other: &Unordered) -> bool {
        match (self, other) {
            (Unordered::Disjoint(a), Unordered::Disjoint(b)) => a.overlaps(b),
            _ => false,
        }
    }
}

/// The part of a resource that an [`Unordered::Disjoint`] write writes.
///
/// ```
/// use vk_baton::{plan::Region, BufferRange};
/// let left = Region::texels([0, 0, 0], [64, 64, 1]);
/// let right = Region::texels([64, 0, 0], [64, 64, 1]);
/// assert!(!left.overlaps(&right));
/// assert!(left.overlaps(&Region::texels([32, 32, 0], [64, 64, 1])));
/// let head = Region::Bytes(BufferRange { offset: 0, size: 256 });
/// assert!(!head.overlaps(&Region::Bytes(BufferRange { offset: 256, size: 256 })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// A box of texels, `offset` (x, y, z) and `extent` (width, height, depth), in every
    /// subresource the use covers. Only for images.
    Texels {
        /// The first texel.
        offset: [u32; 3],
        /// The box's size in texels.
        extent: [u32; 3],
    },
    /// Bytes of a buffer, inside the use's range. Only for buffers.
    Bytes(BufferRange),
}

impl Region {
    /// A box of texels from `offset` of size `extent`.
    pub const fn texels(offset: [u32; 3], extent: [u32; 3]) -> Self {
        Region::Texels { offset, extent }
    }

    /// Whether the two regions share a texel or a byte. Regions of different kinds never do.
    pub fn overlaps(&self, other: &Region) -> bool {
        let meet =
            |a: u64, n: u64, b: u64, m: u64| a < b.saturating_add(m) && b < a.saturating_add(n);
        match (self, other) {
            (
                Region::Texels { offset, extent },
                Region::Texels {
                    offset: o2,
                    extent: e2,
                },
            ) => (0..3).all(|i| {
                meet(
                    offset[i].into(),
                    extent[i].into(),
                    o2[i].into(),
                    e2[i].into(),
                )
            }),
            (Region::Bytes(a), Region::Bytes(b)) => meet(a.offset, a.size, b.offset, b.size),
            _ => false,
        }
    }

    /// Whether the region holds nothing.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Region::Texels { extent, .. } => extent.contains(&0),
            Region::Bytes(b) => b.size == 0,
        }
    }
}
