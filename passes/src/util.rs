//! Small helpers shared by the passes: texel sizes, region → declared-range folding, mip
//! extents. Pure functions, unit-tested without a GPU.

use crate::error::{Error, Result};
use ash::vk;
use std::collections::BTreeMap;
use std::ops::Range;
use vk_baton::{BufferRange, ImageRange};

/// Bytes per texel of `format` when copied to or from a buffer through `aspect`
/// (`vkCmdCopyBufferToImage` packing rules: the depth aspect of D24 formats takes 4 bytes,
/// stencil 1). `None` for block-compressed, planar and other formats this crate does not size.
pub(crate) fn texel_size(format: vk::Format, aspect: vk::ImageAspectFlags) -> Option<u64> {
    let raw = format.as_raw();
    let stencil = aspect == vk::ImageAspectFlags::STENCIL;
    Some(match raw {
        1 => 1,          // R4G4_UNORM_PACK8
        2..=8 => 2,      // 16-bit packed
        9..=15 => 1,     // R8
        16..=22 => 2,    // R8G8
        23..=36 => 3,    // R8G8B8, B8G8R8
        37..=69 => 4,    // RGBA8, BGRA8, ABGR8, A2R10G10B10, A2B10G10R10
        70..=76 => 2,    // R16
        77..=83 => 4,    // R16G16
        84..=90 => 6,    // R16G16B16
        91..=97 => 8,    // R16G16B16A16
        98..=100 => 4,   // R32
        101..=103 => 8,  // R32G32
        104..=106 => 12, // R32G32B32
        107..=109 => 16, // R32G32B32A32
        110..=112 => 8,  // R64
        113..=115 => 16, // R64G64
        116..=118 => 24, // R64G64B64
        119..=121 => 32, // R64G64B64A64
        122 | 123 => 4,  // B10G11R11_UFLOAT, E5B9G9R9_UFLOAT
        124 => 2,        // D16_UNORM
        125 | 126 => 4,  // X8_D24_UNORM_PACK32, D32_SFLOAT
        127 => 1,        // S8_UINT
        128 => {
            if stencil {
                1
            } else {
                2
            }
        } // D16_UNORM_S8_UINT
        129 | 130 => {
            if stencil {
                1
            } else {
                4
            }
        } // D24_UNORM_S8_UINT, D32_SFLOAT_S8_UINT
        _ => return None,
    })
}

/// Like [`texel_size`], as an error naming the format.
pub(crate) fn texel_size_or_err(format: vk::Format, aspect: vk::ImageAspectFlags) -> Result<u64> {
    texel_size(format, aspect).ok_or_else(|| Error::UnsupportedFormat {
        format,
        detail:
            "buffer copies of this format are not supported by vk-baton-passes (unknown texel size)"
                .into(),
    })
}

/// The extent of mip level `level` of an image of `extent`.
pub(crate) fn mip_extent(extent: vk::Extent3D, level: u32) -> vk::Extent3D {
    let f = |v: u32| (v >> level.min(31)).max(1);
    vk::Extent3D {
        width: f(extent.width),
        height: f(extent.height),
        depth: f(extent.depth),
    }
}

/// Cells of an image touched by a set of copies: `(mip, layer) -> fully overwritten?`.
#[derive(Default, Debug, Clone)]
pub(crate) struct CellSet {
    cells: BTreeMap<(u32, u32), bool>,
}

impl CellSet {
    /// Marks `layers` of `mip` as touched; `full` when this one region overwrites the whole
    /// subresource (every texel, every aspect the image has).
    pub(crate) fn add(&mut self, mip: u32, layers: Range<u32>, full: bool) {
        for l in layers {
            let e = self.cells.entry((mip, l)).or_insert(false);
            *e |= full;
        }
    }

    /// Disjoint ranges covering the touched cells, each with whether all of its cells are fully
    /// overwritten. Consecutive layers of one mip with the same flag merge into one range.
    pub(crate) fn ranges(&self) -> Vec<(ImageRange, bool)> {
        let mut out: Vec<(ImageRange, bool)> = Vec::new();
        for (&(mip, layer), &full) in &self.cells {
            if let Some((r, f)) = out.last_mut() {
                if r.base_mip == mip && r.base_layer + r.layer_count == layer && *f == full {
                    r.layer_count += 1;
                    continue;
                }
            }
            out.push((
                ImageRange {
                    base_mip: mip,
                    mip_count: 1,
                    base_layer: layer,
                    layer_count: 1,
                },
                full,
            ));
        }
        out
    }
}

/// The union of byte intervals, sorted and merged (touching intervals merge too).
pub(crate) fn merge_bytes(mut v: Vec<Range<u64>>) -> Vec<BufferRange> {
    v.retain(|r| r.start < r.end);
    v.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in v {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out.into_iter()
        .map(|r| BufferRange {
            offset: r.start,
            size: r.end - r.start,
        })
        .collect()
}

/// Checks that `offset..offset+size` lies in a buffer of `len` bytes and is not empty.
pub(crate) fn check_bytes(what: &str, offset: u64, size: u64, len: u64) -> Result<Range<u64>> {
    match offset.checked_add(size) {
        Some(end) if size > 0 && end <= len => Ok(offset..end),
        _ => Err(Error::InvalidRegion(format!(
            "{what}: bytes {offset}..+{size} do not fit a buffer of {len} bytes (or are empty)"
        ))),
    }
}

/// Checks an image subresource-layers + offset + extent against an image, returning
/// (mip, layers, whether the region covers the whole subresource).
pub(crate) fn check_image_region(
    what: &str,
    desc: &vk_baton::ImageDesc,
    sub: &vk::ImageSubresourceLayers,
    offset: vk::Offset3D,
    extent: vk::Extent3D,
) -> Result<(u32, Range<u32>, bool)> {
    if sub.mip_level >= desc.mip_levels {
        return Err(Error::InvalidRegion(format!(
            "{what}: mip level {} of an image with {} levels",
            sub.mip_level, desc.mip_levels
        )));
    }
    let layers_ok = sub.layer_count > 0
        && sub
            .base_array_layer
            .checked_add(sub.layer_count)
            .is_some_and(|e| e <= desc.array_layers);
    if !layers_ok {
        return Err(Error::InvalidRegion(format!(
            "{what}: layers {}..+{} of an image with {} layers",
            sub.base_array_layer, sub.layer_count, desc.array_layers
        )));
    }
    if sub.aspect_mask.is_empty() || !desc.aspect().contains(sub.aspect_mask) {
        return Err(Error::InvalidRegion(format!(
            "{what}: aspect {:?} is not an aspect of {:?}",
            sub.aspect_mask, desc.format
        )));
    }
    let m = mip_extent(desc.extent, sub.mip_level);
    let fits = |o: i32, e: u32, max: u32| {
        o >= 0
            && e > 0
            && (o as u64)
                .checked_add(e as u64)
                .is_some_and(|end| end <= max as u64)
    };
    if !(fits(offset.x, extent.width, m.width)
        && fits(offset.y, extent.height, m.height)
        && fits(offset.z, extent.depth, m.depth))
    {
        return Err(Error::InvalidRegion(format!(
            "{what}: offset {offset:?} extent {extent:?} does not fit mip {} of {m:?}",
            sub.mip_level
        )));
    }
    let full = offset == vk::Offset3D::default() && extent == m && sub.aspect_mask == desc.aspect();
    Ok((
        sub.mip_level,
        sub.base_array_layer..sub.base_array_layer + sub.layer_count,
        full,
    ))
}

/// The bytes a buffer↔image copy region touches in the buffer. Every step is checked: a
/// region with an empty extent, a row length or image height smaller than the extent, or a
/// footprint past `u64::MAX` (hostile row lengths, heights, layer counts, offsets) is an
/// [`Error::InvalidRegion`], never a panic or a wrapped size.
pub(crate) fn buffer_image_bytes(
    format: vk::Format,
    region: &vk::BufferImageCopy,
) -> Result<Range<u64>> {
    let texel = texel_size_or_err(format, region.image_subresource.aspect_mask)?;
    let e = region.image_extent;
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Err(Error::InvalidRegion(format!(
            "buffer↔image copy with an empty extent {e:?}"
        )));
    }
    let row = if region.buffer_row_length == 0 {
        e.width
    } else {
        region.buffer_row_length
    } as u64;
    let height = if region.buffer_image_height == 0 {
        e.height
    } else {
        region.buffer_image_height
    } as u64;
    if row < e.width as u64 || height < e.height as u64 {
        return Err(Error::InvalidRegion(format!(
            "buffer row length {row} / image height {height} smaller than the extent {e:?}"
        )));
    }
    let layers = region.image_subresource.layer_count as u64;
    let end = (|| {
        let slices = (e.depth as u64).checked_mul(layers.max(1))?;
        let last_texel = (slices - 1)
            .checked_mul(height)?
            .checked_mul(row)?
            .checked_add((e.height as u64 - 1).checked_mul(row)?)?
            .checked_add(e.width as u64)?;
        region
            .buffer_offset
            .checked_add(last_texel.checked_mul(texel)?)
    })()
    .ok_or_else(|| {
        Error::InvalidRegion(format!(
            "the buffer footprint of a copy at offset {} (row length {row}, image height {height}, extent {e:?}, {layers} layers) overflows",
            region.buffer_offset
        ))
    })?;
    Ok(region.buffer_offset..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texel_sizes() {
        use vk::Format as F;
        use vk::ImageAspectFlags as A;
        assert_eq!(texel_size(F::R8G8B8A8_UNORM, A::COLOR), Some(4));
        assert_eq!(texel_size(F::B8G8R8A8_SRGB, A::COLOR), Some(4));
        assert_eq!(texel_size(F::R8_UINT, A::COLOR), Some(1));
        assert_eq!(texel_size(F::R16G16B16A16_SFLOAT, A::COLOR), Some(8));
        assert_eq!(texel_size(F::R32G32B32A32_SFLOAT, A::COLOR), Some(16));
        assert_eq!(texel_size(F::R32_UINT, A::COLOR), Some(4));
        assert_eq!(texel_size(F::D32_SFLOAT, A::DEPTH), Some(4));
        assert_eq!(texel_size(F::D24_UNORM_S8_UINT, A::DEPTH), Some(4));
        assert_eq!(texel_size(F::D24_UNORM_S8_UINT, A::STENCIL), Some(1));
        assert_eq!(texel_size(F::D16_UNORM, A::DEPTH), Some(2));
        assert_eq!(texel_size(F::BC1_RGB_UNORM_BLOCK, A::COLOR), None);
    }

    #[test]
    fn cells_fold_into_disjoint_ranges() {
        let mut c = CellSet::default();
        c.add(0, 0..2, true);
        c.add(0, 1..4, false); // layer 1 stays full (another region covered it whole)
        c.add(2, 0..1, false);
        let r = c.ranges();
        let ir = |m, l, n| ImageRange {
            base_mip: m,
            mip_count: 1,
            base_layer: l,
            layer_count: n,
        };
        assert_eq!(
            r,
            vec![
                (ir(0, 0, 2), true),
                (ir(0, 2, 2), false),
                (ir(2, 0, 1), false)
            ]
        );
    }

    #[test]
    fn byte_ranges_merge() {
        let r = merge_bytes(vec![10..20, 0..4, 15..30, 40..41, 30..32, 5..5]);
        let b = |offset, size| BufferRange { offset, size };
        assert_eq!(r, vec![b(0, 4), b(10, 22), b(40, 1)]);
    }

    #[test]
    fn buffer_image_footprint() {
        let region = vk::BufferImageCopy {
            buffer_offset: 100,
            buffer_row_length: 16,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 2,
            },
            image_offset: vk::Offset3D::default(),
            image_extent: vk::Extent3D {
                width: 8,
                height: 4,
                depth: 1,
            },
        };
        // Two layers of 4 rows of 16 texels, the last row only 8 texels long.
        let r = buffer_image_bytes(vk::Format::R8G8B8A8_UNORM, &region).unwrap();
        assert_eq!(r, 100..100 + (4 * 16 + 3 * 16 + 8) * 4);
    }

    #[test]
    fn hostile_buffer_image_regions_are_errors_not_panics() {
        let base = vk::BufferImageCopy {
            buffer_offset: 0,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            },
            image_offset: vk::Offset3D::default(),
            image_extent: vk::Extent3D {
                width: 4,
                height: 4,
                depth: 1,
            },
        };
        let f = vk::Format::R32G32B32A32_SFLOAT;
        assert!(buffer_image_bytes(f, &base).is_ok());
        let hostile = [
            vk::BufferImageCopy {
                buffer_offset: u64::MAX - 8,
                ..base
            },
            vk::BufferImageCopy {
                buffer_row_length: u32::MAX,
                buffer_image_height: u32::MAX,
                image_subresource: vk::ImageSubresourceLayers {
                    layer_count: u32::MAX,
                    ..base.image_subresource
                },
                image_extent: vk::Extent3D {
                    width: u32::MAX,
                    height: u32::MAX,
                    depth: u32::MAX,
                },
                ..base
            },
            vk::BufferImageCopy {
                image_extent: vk::Extent3D {
                    width: 4,
                    height: 0,
                    depth: 1,
                },
                ..base
            },
            vk::BufferImageCopy {
                image_extent: vk::Extent3D {
                    width: 0,
                    height: 4,
                    depth: 1,
                },
                ..base
            },
            vk::BufferImageCopy {
                buffer_row_length: 2,
                ..base
            },
        ];
        for r in &hostile {
            assert!(
                matches!(buffer_image_bytes(f, r), Err(Error::InvalidRegion(_))),
                "{r:?}"
            );
        }
    }

    #[test]
    fn mip_extents() {
        let e = vk::Extent3D {
            width: 16,
            height: 5,
            depth: 1,
        };
        assert_eq!(
            mip_extent(e, 2),
            vk::Extent3D {
                width: 4,
                height: 1,
                depth: 1
            }
        );
        assert_eq!(
            mip_extent(e, 10),
            vk::Extent3D {
                width: 1,
                height: 1,
                depth: 1
            }
        );
    }

    #[test]
    fn region_checks() {
        let desc = vk_baton::ImageDesc::new_2d(
            8,
            8,
            vk::Format::R8G8B8A8_UNORM,
            vk::ImageUsageFlags::TRANSFER_DST,
        )
        .mips(2);
        let sub = |mip| vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: mip,
            base_array_layer: 0,
            layer_count: 1,
        };
        let e = |w, h| vk::Extent3D {
            width: w,
            height: h,
            depth: 1,
        };
        let (m, l, full) =
            check_image_region("t", &desc, &sub(1), vk::Offset3D::default(), e(4, 4)).unwrap();
        assert_eq!((m, l, full), (1, 0..1, true));
        let (_, _, full) = check_image_region(
            "t",
            &desc,
            &sub(0),
            vk::Offset3D { x: 1, y: 0, z: 0 },
            e(7, 8),
        )
        .unwrap();
        assert!(!full);
        assert!(check_image_region("t", &desc, &sub(1), vk::Offset3D::default(), e(5, 4)).is_err());
        assert!(check_image_region("t", &desc, &sub(2), vk::Offset3D::default(), e(1, 1)).is_err());
        assert!(check_bytes("t", 4, 4, 8).is_ok());
        assert!(check_bytes("t", 5, 4, 8).is_err());
        assert!(check_bytes("t", 0, 0, 8).is_err());
    }
}
