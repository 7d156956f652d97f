//! Subresource and byte ranges, and the interval map the planner tracks state in.
//!
//! An image's state is tracked per (mip level, array layer, plane) cell, where a format with
//! both depth and stencil has two planes (depth, then stencil) and every other format one; a
//! buffer's per byte. Both become half-open intervals of `u64` keys so one [`RangeMap`] serves
//! both. [`CellGrid`] is the one place that numbers an image's cells.

use ash::vk;
use std::ops::Range;

mod cells;
pub(crate) use cells::CellGrid;

/// Mip levels and array layers of an image (all aspects of its format).
///
/// ```
/// use vk_baton::ImageRange;
/// // Mip 2 of a cube map (6 layers).
/// let r = ImageRange::mip(2, 6);
/// assert_eq!(r, ImageRange { base_mip: 2, mip_count: 1, base_layer: 0, layer_count: 6 });
/// assert!(r.fits(3, 6));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageRange {
    /// First mip level.
    pub base_mip: u32,
    /// Number of mip levels.
    pub mip_count: u32,
    /// First array layer.
    pub base_layer: u32,
    /// Number of array layers.
    pub layer_count: u32,
}

impl ImageRange {
    /// One mip level, all given layers.
    pub const fn mip(level: u32, layers: u32) -> Self {
        Self {
            base_mip: level,
            mip_count: 1,
            base_layer: 0,
            layer_count: layers,
        }
    }

    /// One mip level of one array layer: a single subresource (a render target, a face of a
    /// cube map).
    ///
    /// ```
    /// use vk_baton::ImageRange;
    /// let face = ImageRange::subresource(0, 3); // mip 0 of layer 3
    /// assert_eq!(face, ImageRange { base_mip: 0, mip_count: 1, base_layer: 3, layer_count: 1 });
    /// assert!(face.fits(1, 6) && !face.fits(1, 3));
    /// ```
    pub const fn subresource(mip: u32, layer: u32) -> Self {
        Self {
            base_mip: mip,
            mip_count: 1,
            base_layer: layer,
            layer_count: 1,
        }
    }

    /// Whether two ranges share a cell.
    ///
    /// ```
    /// use vk_baton::ImageRange;
    /// let layers_0_1 = ImageRange { base_mip: 0, mip_count: 1, base_layer: 0, layer_count: 2 };
    /// let layers_1_2 = ImageRange { base_layer: 1, ..layers_0_1 };
    /// let layer_2_mip_1 = ImageRange { base_mip: 1, base_layer: 2, layer_count: 1, ..layers_0_1 };
    /// assert!(layers_0_1.overlaps(&layers_1_2)); // layer 1 of mip 0
    /// assert!(!layers_0_1.overlaps(&layer_2_mip_1));
    /// ```
    pub fn overlaps(&self, o: &Self) -> bool {
        self.base_mip < o.base_mip + o.mip_count
            && o.base_mip < self.base_mip + self.mip_count
            && self.base_layer < o.base_layer + o.layer_count
            && o.base_layer < self.base_layer + self.layer_count
    }

    /// Whether the range fits an image of `mips` levels and `layers` layers, and is not empty.
    ///
    /// ```
    /// use vk_baton::ImageRange;
    /// let r = ImageRange { base_mip: 1, mip_count: 2, base_layer: 0, layer_count: 1 };
    /// assert!(r.fits(3, 1));
    /// assert!(!r.fits(2, 1)); // mip 2 does not exist
    /// assert!(!ImageRange { layer_count: 0, ..r }.fits(3, 1)); // empty
    /// ```
    pub fn fits(&self, mips: u32, layers: u32) -> bool {
        self.mip_count > 0
            && self.layer_count > 0
            && self
                .base_mip
                .checked_add(self.mip_count)
                .is_some_and(|e| e <= mips)
            && self
                .base_layer
                .checked_add(self.layer_count)
                .is_some_and(|e| e <= layers)
    }

    /// The (mip, layer) intervals (`mip * layers + layer`) this range covers, in an image of
    /// `layers` array layers. [`CellGrid::cells`] adds the planes.
    fn cells(&self, layers: u32) -> Vec<Range<u64>> {
        let l = layers as u64;
        if self.base_layer == 0 && self.layer_count == layers {
            let s = self.base_mip as u64 * l;
            #[allow(clippy::single_range_in_vec_init)] // one interval, not a list of indices
            return vec![s..s + self.mip_count as u64 * l];
        }
        (self.base_mip..self.base_mip + self.mip_count)
            .map(|m| {
                let s = m as u64 * l + self.base_layer as u64;
                s..s + self.layer_count as u64
            })
            .collect()
    }

    /// The smallest set of rectangular ranges covering a (mip, layer) interval.
    fn from_cells(cells: Range<u64>, layers: u32) -> smallvec::SmallVec<[ImageRange; 1]> {
        let l = layers as u64;
        let mut out = smallvec::SmallVec::new();
        let mut c = cells.start;
        while c < cells.end {
            let mip = (c / l) as u32;
            let layer = (c % l) as u32;
            if layer == 0 && cells.end - c >= l {
                // Whole mips at once.
                let mips = ((cells.end - c) / l) as u32;
                out.push(ImageRange {
                    base_mip: mip,
                    mip_count: mips,
                    base_layer: 0,
                    layer_count: layers,
                });
                c += mips as u64 * l;
            } else {
                let end_layer = (l.min(layer as u64 + (cells.end - c))) as u32;
                out.push(ImageRange {
                    base_mip: mip,
                    mip_count: 1,
                    base_layer: layer,
                    layer_count: end_layer - layer,
                });
                c += (end_layer - layer) as u64;
            }
        }
        out
    }

    /// As a Vulkan subresource range with the given aspect.
    ///
    /// ```
    /// use vk_baton::{ash::vk, ImageRange};
    /// let sub = ImageRange::mip(3, 6).to_vk(vk::ImageAspectFlags::COLOR);
    /// assert_eq!((sub.base_mip_level, sub.level_count), (3, 1));
    /// assert_eq!((sub.base_array_layer, sub.layer_count), (0, 6));
    /// assert_eq!(sub.aspect_mask, vk::ImageAspectFlags::COLOR);
    /// ```
    pub fn to_vk(&self, aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
        vk::ImageSubresourceRange {
            aspect_mask: aspect,
            base_mip_level: self.base_mip,
            level_count: self.mip_count,
            base_array_layer: self.base_layer,
            layer_count: self.layer_count,
        }
    }
}

/// A byte range of a buffer.
///
/// ```
/// use vk_baton::BufferRange;
/// let header = BufferRange { offset: 0, size: 16 };
/// let body = BufferRange { offset: 16, size: 240 };
/// assert!(!header.overlaps(&body));
/// assert_eq!(body.bytes(), 16..256);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferRange {
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub size: u64,
}

impl BufferRange {
    /// The half-open interval of bytes.
    ///
    /// ```
    /// use vk_baton::BufferRange;
    /// assert_eq!(BufferRange { offset: 64, size: 32 }.bytes(), 64..96);
    /// ```
    pub fn bytes(&self) -> Range<u64> {
        self.offset..self.offset + self.size
    }

    /// Whether two ranges share a byte.
    ///
    /// ```
    /// use vk_baton::BufferRange;
    /// let a = BufferRange { offset: 0, size: 64 };
    /// assert!(a.overlaps(&BufferRange { offset: 63, size: 8 }));
    /// assert!(!a.overlaps(&BufferRange { offset: 64, size: 8 })); // touching is not sharing
    /// ```
    pub fn overlaps(&self, o: &Self) -> bool {
        self.offset < o.offset + o.size && o.offset < self.offset + self.size
    }
}

/// A range of either kind; `None` in a use means the whole resource.
///
/// ```
/// use vk_baton::{plan::UseDecl, Access, ImageRange, SubRange};
/// // Read mip 0 of a 6-layer image, as a mipmap pass does before writing mip 1.
/// let u = UseDecl::new(0, Access::TRANSFER_READ).range(SubRange::Image(ImageRange::mip(0, 6)));
/// assert!(matches!(u.range, Some(SubRange::Image(r)) if r.mip_count == 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubRange {
    /// Image mip levels and layers.
    Image(ImageRange),
    /// Buffer bytes.
    Buffer(BufferRange),
}

/// An interval map over `u64` keys: every key in `0..len` has exactly one value, and equal
/// neighbours are merged so a resource used whole stays one segment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RangeMap<T> {
    // Sorted, contiguous, covering 0..len. Usually one segment, the whole resource: kept in
    // place, so that a map of it allocates nothing.
    segs: smallvec::SmallVec<[(Range<u64>, T); 1]>,
}

impl<T: Clone + PartialEq> RangeMap<T> {
    /// One value over `0..len`.
    pub(crate) fn new(len: u64, value: T) -> Self {
        Self {
            segs: smallvec::smallvec![(0..len, value)],
        }
    }

    /// Every segment.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(Range<u64>, T)> {
        self.segs.iter()
    }

    /// Replace the values over `r` with `f(old)`, splitting segments at its edges.
    pub(crate) fn update(&mut self, r: Range<u64>, mut f: impl FnMut(&T) -> T) {
        let _ = self.try_update(r, |_, v| -> Result<(), ()> {
            *v = f(v);
            Ok(())
        });
    }

    /// Calls `f` on each segment within `r` (split at its edges) to change it in place, then
    /// merges equal neighbours. Stops at the first error; segments already visited keep
    /// their changes.
    ///
    /// The common case, a whole resource in one segment, is inlined into the caller: nothing
    /// to split or merge, one call of `f`.
    #[inline]
    pub(crate) fn try_update<E>(
        &mut self,
        r: Range<u64>,
        mut f: impl FnMut(Range<u64>, &mut T) -> Result<(), E>,
    ) -> Result<(), E> {
        if r.start >= r.end {
            return Ok(());
        }
        if let [(whole, v)] = self.segs.as_mut_slice() {
            if *whole == r {
                return f(r, v);
            }
        }
        self.try_update_split(r, f)
    }

    /// [`RangeMap::try_update`] over several segments, or part of one.
    fn try_update_split<E>(
        &mut self,
        r: Range<u64>,
        mut f: impl FnMut(Range<u64>, &mut T) -> Result<(), E>,
    ) -> Result<(), E> {
        // Split so that `r.start` and `r.end` fall on segment edges; the common case (a whole
        // resource in one segment) needs no allocation at all.
        let mut i = self.segs.partition_point(|(s, _)| s.end <= r.start);
        if i < self.segs.len() && self.segs[i].0.start < r.start {
            let (s, v) = self.segs[i].clone();
            self.segs[i].0.end = r.start;
            self.segs.insert(i + 1, (r.start..s.end, v));
            i += 1;
        }
        let first = i;
        let mut result = Ok(());
        while i < self.segs.len() && self.segs[i].0.start < r.end {
            if self.segs[i].0.end > r.end {
                let (s, v) = self.segs[i].clone();
                self.segs[i].0.end = r.end;
                self.segs.insert(i + 1, (r.end..s.end, v));
            }
            let (c, v) = &mut self.segs[i];
            if let Err(e) = f(c.clone(), v) {
                result = Err(e);
                i += 1;
                break;
            }
            i += 1;
        }
        // Merge equal neighbours from just before the range to just after it.
        let mut j = first.saturating_sub(1);
        let mut end = (i + 1).min(self.segs.len());
        while j + 1 < end {
            if self.segs[j].0.end == self.segs[j + 1].0.start
                && self.segs[j].1 == self.segs[j + 1].1
            {
                let e = self.segs[j + 1].0.end;
                self.segs[j].0.end = e;
                self.segs.remove(j + 1);
                end -= 1;
            } else {
                j += 1;
            }
        }
        result
    }
}

impl<T> Default for RangeMap<T> {
    fn default() -> Self {
        Self {
            segs: smallvec::SmallVec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_numbered_mip_times_layers_plus_layer() {
        let r = ImageRange {
            base_mip: 1,
            mip_count: 2,
            base_layer: 1,
            layer_count: 2,
        };
        assert_eq!(r.cells(4), vec![5..7, 9..11]);
        // Whole mips are one interval.
        #[allow(clippy::single_range_in_vec_init)]
        let whole = vec![4..8];
        assert_eq!(ImageRange::mip(1, 4).cells(4), whole);
    }

    #[test]
    fn from_cells_covers_with_the_fewest_ranges() {
        // With 4 layers, cells 4..14 are mips 1 and 2 whole, then layers 0..2 of mip 3.
        let rs = ImageRange::from_cells(4..14, 4);
        assert_eq!(
            rs[..],
            [
                ImageRange {
                    base_mip: 1,
                    mip_count: 2,
                    base_layer: 0,
                    layer_count: 4
                },
                ImageRange {
                    base_mip: 3,
                    mip_count: 1,
                    base_layer: 0,
                    layer_count: 2
                },
            ]
        );
    }

    #[test]
    fn range_map_overview() {
        let mut m = RangeMap::new(10, 'a');
        m.update(2..5, |_| 'b');
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(segs, vec![(0..2, 'a'), (2..5, 'b'), (5..10, 'a')]);
        // Equal neighbours merge back into one segment.
        m.update(2..5, |_| 'a');
        assert_eq!(m.iter().count(), 1);
    }

    #[test]
    fn range_map_new() {
        let m = RangeMap::new(256, 0u32);
        assert_eq!(m.iter().cloned().collect::<Vec<_>>(), vec![(0..256, 0)]);
    }

    #[test]
    fn range_map_iter() {
        let mut m = RangeMap::new(8, false);
        m.update(0..4, |_| true);
        let lens: Vec<u64> = m.iter().map(|(r, _)| r.end - r.start).collect();
        assert_eq!(lens, vec![4, 4]);
    }

    #[test]
    fn range_map_update() {
        let mut m = RangeMap::new(10, 0);
        m.update(0..5, |v| v + 1);
        m.update(3..8, |v| v + 1);
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(segs, vec![(0..3, 1), (3..5, 2), (5..8, 1), (8..10, 0)]);
    }

    #[test]
    fn range_map_try_update() {
        let mut m = RangeMap::new(10, 0);
        m.update(5..10, |_| 9);
        // Bump values over 0..10, refusing any that would exceed 9.
        let r = m.try_update(0..10, |cells, v| {
            if *v < 9 {
                *v += 1;
                Ok(())
            } else {
                Err(cells)
            }
        });
        assert_eq!(r, Err(5..10));
        // The segment visited before the error keeps its change.
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(segs, vec![(0..5, 1), (5..10, 9)]);
    }

    #[test]
    fn range_map_splits_and_merges() {
        let mut m = RangeMap::new(10, 0);
        m.update(2..5, |_| 1);
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(segs, vec![(0..2, 0), (2..5, 1), (5..10, 0)]);
        m.update(0..10, |_| 1);
        assert_eq!(m.iter().count(), 1);
        m.update(9..10, |_| 2);
        m.update(0..1, |_| 2);
        m.update(4..6, |v| v + 1);
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(
            segs,
            vec![(0..1, 2), (1..4, 1), (4..6, 2), (6..9, 1), (9..10, 2)]
        );
        m.update(1..4, |_| 2);
        let segs: Vec<_> = m.iter().cloned().collect();
        assert_eq!(segs, vec![(0..6, 2), (6..9, 1), (9..10, 2)]);
        assert_eq!(m.iter().find(|(r, _)| r.contains(&3)), Some(&(0..6, 2)));
    }

    #[test]
    fn image_cells_round_trip() {
        let layers = 4;
        let r = ImageRange {
            base_mip: 1,
            mip_count: 2,
            base_layer: 1,
            layer_count: 2,
        };
        let cells = r.cells(layers);
        assert_eq!(cells, vec![5..7, 9..11]);
        assert_eq!(
            ImageRange::from_cells(5..7, layers).to_vec(),
            vec![ImageRange {
                base_mip: 1,
                mip_count: 1,
                base_layer: 1,
                layer_count: 2
            }]
        );
        // An interval spanning whole mips and a partial tail.
        let rs = ImageRange::from_cells(4..14, layers).to_vec();
        assert_eq!(
            rs,
            vec![
                ImageRange {
                    base_mip: 1,
                    mip_count: 2,
                    base_layer: 0,
                    layer_count: 4
                },
                ImageRange {
                    base_mip: 3,
                    mip_count: 1,
                    base_layer: 0,
                    layer_count: 2
                },
            ]
        );
        let whole = ImageRange {
            base_mip: 0,
            mip_count: 3,
            base_layer: 0,
            layer_count: 4,
        };
        assert_eq!(whole.cells(4), vec![0..12]);
    }

    #[test]
    fn fits_rejects_out_of_bounds_and_empty() {
        let r = ImageRange {
            base_mip: 0,
            mip_count: 2,
            base_layer: 0,
            layer_count: 1,
        };
        assert!(r.fits(2, 1));
        assert!(!r.fits(1, 1));
        assert!(!ImageRange { mip_count: 0, ..r }.fits(2, 1));
        assert!(!ImageRange {
            base_mip: u32::MAX,
            ..r
        }
        .fits(2, 1));
    }
}
