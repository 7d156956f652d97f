//! Barrier merging: a barrier joins an existing one of the same resource, range, layouts
//! and ownership transfer, so each command names each range once; the two planes of a
//! depth/stencil image in the same state become one barrier of both aspects, and one plane of
//! neighbouring layers one barrier over them.

use super::*;

/// Adds a barrier for `cells` of resource `r` to `cmd`, merging with an existing one of the
/// same resource, range, layouts and ownership transfer. Returns the entries it went into.
pub(super) fn push_barrier(
    cmd: &mut BarrierCmd,
    r: usize,
    kind: &ResourceKind,
    cells: std::ops::Range<u64>,
    s: Scopes,
    old_layout: vk::ImageLayout,
    new_layout: vk::ImageLayout,
) -> SmallVec<[EntryRef; 1]> {
    let mut into = SmallVec::new();
    let merge = |a: &mut Scopes| {
        a.src_stages |= s.src_stages;
        a.src_access |= s.src_access;
        a.dst_stages |= s.dst_stages;
        a.dst_access |= s.dst_access;
    };
    match *kind {
        ResourceKind::Image {
            layers,
            aspect: all,
            ..
        } => {
            for (range, aspect) in CellGrid::new(layers, all).ranges(cells) {
                let same = |b: &ImageBarrier| {
                    b.resource == r
                        && b.range == range
                        && b.old_layout == old_layout
                        && b.new_layout == new_layout
                        && b.scopes.families == s.families
                };
                // The other plane of the same range, in the same layouts: one barrier of
                // both aspects, which needs no separate depth/stencil layouts. Never for an
                // ownership transfer, whose acquire must name exactly what one release names.
                let other_plane = |b: &ImageBarrier| {
                    s.families.is_none() && aspect != all && b.aspect | aspect == all
                };
                // One plane of the next layers of a mip, with equal scopes: one barrier over
                // the layers (a plane's cells are apart, so each layer comes on its own).
                let next_layers = |b: &ImageBarrier| {
                    s.families.is_none()
                        && aspect != all
                        && b.resource == r
                        && b.aspect == aspect
                        && (b.old_layout, b.new_layout) == (old_layout, new_layout)
                        && b.scopes == s
                        && (b.range.base_mip, b.range.mip_count) == (range.base_mip, 1)
                        && range.mip_count == 1
                        && b.range.base_layer + b.range.layer_count == range.base_layer
                };
                let joined = cmd
                    .images
                    .iter()
                    .position(|b| same(b) && (b.aspect == aspect || other_plane(b)));
                let extended = || cmd.images.iter().position(next_layers);
                let at = match (joined, joined.is_none().then(extended).flatten()) {
                    (Some(i), _) => {
                        merge(&mut cmd.images[i].scopes);
                        cmd.images[i].aspect |= aspect;
                        i
                    }
                    (None, Some(i)) => {
                        cmd.images[i].range.layer_count += range.layer_count;
                        i
                    }
                    (None, None) => {
                        cmd.images.push(ImageBarrier {
                            resource: r,
                            range,
                            aspect,
                            scopes: s,
                            old_layout,
                            new_layout,
                        });
                        cmd.images.len() - 1
                    }
                };
                into.push(EntryRef::Image(at));
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
            let at = match cmd.buffers.iter().position(|b| {
                s.families.is_none()
                    && b.resource == r
                    && b.scopes == s
                    && b.range.offset + b.range.size == range.offset
            }) {
                Some(i) => {
                    cmd.buffers[i].range.size += range.size;
                    i
                }
                None => match cmd.buffers.iter().position(|b| {
                    b.resource == r && b.range == range && b.scopes.families == s.families
                }) {
                    Some(i) => {
                        merge(&mut cmd.buffers[i].scopes);
                        i
                    }
                    None => {
                        cmd.buffers.push(BufferBarrier {
                            resource: r,
                            range,
                            scopes: s,
                        });
                        cmd.buffers.len() - 1
                    }
                },
            };
            into.push(EntryRef::Buffer(at));
        }
    }
    into
}

/// One entry of a [`BarrierCmd`]: an index into its images or its buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryRef {
    Image(usize),
    Buffer(usize),
}
