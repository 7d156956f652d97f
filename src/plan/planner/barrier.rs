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
    match *kind {
        ResourceKind::Image {
            layers,
            aspect: all,
            ..
        } => {
            for (range, aspect) in CellGrid::new(layers, all).ranges(cells) {
                let b = ImageBarrier {
                    resource: r,
                    range,
                    aspect,
                    scopes: s,
                    old_layout,
                    new_layout,
                };
                into.push(EntryRef::Image(push_image_barrier(&mut cmd.images, b, all)));
            }
        }
        ResourceKind::Buffer { .. } => {
            let range = BufferRange {
                offset: cells.start,
                size: cells.end - cells.start,
            };
            let b = BufferBarrier {
                resource: r,
                range,
                scopes: s,
            };
            into.push(EntryRef::Buffer(push_buffer_barrier(&mut cmd.buffers, b)));
        }
    }
    into
}

/// Adds image barrier `new` (one plane, of an image whose format has the aspects `all`, or
/// all of them) to `images`, joining or extending one there where it can. Returns its index.
fn push_image_barrier(
    images: &mut Vec<ImageBarrier>,
    new: ImageBarrier,
    all: vk::ImageAspectFlags,
) -> usize {
    let s = &new.scopes;
    let same = |b: &ImageBarrier| {
        b.resource == new.resource
            && b.range == new.range
            && (b.old_layout, b.new_layout) == (new.old_layout, new.new_layout)
            && b.scopes.families == s.families
    };
    // The other plane of the same range, in the same layouts: one barrier of both aspects,
    // which needs no separate depth/stencil layouts. Never for an ownership transfer, whose
    // acquire must name exactly what one release names.
    let other_plane = |b: &ImageBarrier| {
        s.families.is_none() && new.aspect != all && b.aspect | new.aspect == all
    };
    let joined = images
        .iter()
        .position(|b| same(b) && (b.aspect == new.aspect || other_plane(b)));
    let extended = || images.iter().position(|b| next_layers(b, &new, all));
    match (joined, joined.is_none().then(extended).flatten()) {
        (Some(i), _) => {
            merge_scopes(&mut images[i].scopes, s);
            images[i].aspect |= new.aspect;
            i
        }
        (None, Some(i)) => {
            images[i].range.layer_count += new.range.layer_count;
            i
        }
        (None, None) => {
            images.push(new);
            images.len() - 1
        }
    }
}

/// Whether `new` is one plane of the layers of a mip just after those of `b`, with equal
/// scopes: then `b` extends over them (a plane's cells are apart, so each layer comes on its
/// own). Never for an ownership transfer.
fn next_layers(b: &ImageBarrier, new: &ImageBarrier, all: vk::ImageAspectFlags) -> bool {
    let range = &new.range;
    new.scopes.families.is_none()
        && new.aspect != all
        && b.resource == new.resource
        && b.aspect == new.aspect
        && (b.old_layout, b.new_layout) == (new.old_layout, new.new_layout)
        && b.scopes == new.scopes
        && (b.range.base_mip, b.range.mip_count) == (range.base_mip, 1)
        && range.mip_count == 1
        && b.range.base_layer + b.range.layer_count == range.base_layer
}

/// Adds buffer barrier `new` to `buffers`, extending or joining one there where it can.
/// Returns its index.
fn push_buffer_barrier(buffers: &mut Vec<BufferBarrier>, new: BufferBarrier) -> usize {
    let (r, range, s) = (new.resource, new.range, &new.scopes);
    // Extend a barrier with equal scopes that ends where this one starts. Never for an
    // ownership transfer: an acquire must name exactly the range of one release, and the
    // releases of neighbouring segments may sit in different places.
    let extended = buffers.iter().position(|b| {
        s.families.is_none()
            && b.resource == r
            && b.scopes == *s
            && b.range.offset + b.range.size == range.offset
    });
    if let Some(i) = extended {
        buffers[i].range.size += range.size;
        return i;
    }
    let joined = buffers
        .iter()
        .position(|b| b.resource == r && b.range == range && b.scopes.families == s.families);
    match joined {
        Some(i) => {
            merge_scopes(&mut buffers[i].scopes, s);
            i
        }
        None => {
            buffers.push(new);
            buffers.len() - 1
        }
    }
}

/// Widens scopes `a` by `s`: their stages and accesses (the transfer is the same).
fn merge_scopes(a: &mut Scopes, s: &Scopes) {
    a.src_stages |= s.src_stages;
    a.src_access |= s.src_access;
    a.dst_stages |= s.dst_stages;
    a.dst_access |= s.dst_access;
}

/// One entry of a [`BarrierCmd`]: an index into its images or its buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryRef {
    Image(usize),
    Buffer(usize),
}
