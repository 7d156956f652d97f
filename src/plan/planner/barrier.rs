//! Barrier merging: a barrier joins an existing one of the same resource, range, layouts
//! and ownership transfer, so each command names each range once.

use super::*;

/// Adds a barrier for `cells` of resource `r` to `cmd`, merging with an existing one of the
/// same resource, range, layouts and ownership transfer.
pub(super) fn push_barrier(
    cmd: &mut BarrierCmd,
    r: usize,
    kind: &ResourceKind,
    cells: std::ops::Range<u64>,
    s: Scopes,
    old_layout: vk::ImageLayout,
    new_layout: vk::ImageLayout,
) {
    let merge = |a: &mut Scopes| {
        a.src_stages |= s.src_stages;
        a.src_access |= s.src_access;
        a.dst_stages |= s.dst_stages;
        a.dst_access |= s.dst_access;
    };
    match *kind {
        ResourceKind::Image { layers, .. } => {
            for range in ImageRange::from_cells(cells, layers) {
                match cmd.images.iter_mut().find(|b| {
                    b.resource == r
                        && b.range == range
                        && b.old_layout == old_layout
                        && b.new_layout == new_layout
                        && b.scopes.families == s.families
                }) {
                    Some(b) => merge(&mut b.scopes),
                    None => cmd.images.push(ImageBarrier {
                        resource: r,
                        range,
                        scopes: s,
                        old_layout,
                        new_layout,
                    }),
                }
            }
        }
        ResourceKind::Buffer { .. } => {
            let range = BufferRange {
                offset: cells.start,
                size: cells.end - cells.start,
            };
            // Extend a barrier with equal scopes that ends where this one starts. Never for an
            // ownership transfer: an acquire must name exactly the range of one release, and
            // the releases of neighbouring segments may sit in different places.
            match cmd.buffers.iter_mut().find(|b| {
                s.families.is_none()
                    && b.resource == r
                    && b.scopes == s
                    && b.range.offset + b.range.size == range.offset
            }) {
                Some(b) => b.range.size += range.size,
                None => match cmd.buffers.iter_mut().find(|b| {
                    b.resource == r && b.range == range && b.scopes.families == s.families
                }) {
                    Some(b) => merge(&mut b.scopes),
                    None => cmd.buffers.push(BufferBarrier {
                        resource: r,
                        range,
                        scopes: s,
                    }),
                },
            }
        }
    }
}
