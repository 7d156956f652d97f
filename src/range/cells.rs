//! [`CellGrid`]: how an image's tracking cells are numbered, and the conversions between
//! (range, aspects) and cell intervals that the planner, the verifier, the executor and the
//! state snapshots share.

use super::ImageRange;
use ash::vk;
use smallvec::SmallVec;
use std::ops::Range;

/// The aspects of a format with both depth and stencil.
const DEPTH_STENCIL: vk::ImageAspectFlags = vk::ImageAspectFlags::from_raw(
    vk::ImageAspectFlags::DEPTH.as_raw() | vk::ImageAspectFlags::STENCIL.as_raw(),
);

/// The cells of one image: cell `(mip * layers + layer) * planes + plane`. A format with both
/// depth and stencil has two planes, depth (0) then stencil (1), each with its own layout and
/// last accesses; every other format has one plane, all its aspects together.
///
/// The plane is innermost, so a use of both aspects stays one run of cells, and a barrier
/// that treats both planes alike comes out as one barrier naming both aspects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellGrid {
    /// Array layers of the image.
    pub(crate) layers: u32,
    /// Every aspect of its format (COLOR, DEPTH, STENCIL, or DEPTH|STENCIL).
    pub(crate) aspect: vk::ImageAspectFlags,
}

impl CellGrid {
    pub(crate) fn new(layers: u32, aspect: vk::ImageAspectFlags) -> Self {
        Self { layers, aspect }
    }

    /// Planes per (mip, layer): 2 for a depth+stencil format, else 1.
    pub(crate) fn planes(&self) -> u64 {
        if self.aspect == DEPTH_STENCIL {
            2
        } else {
            1
        }
    }

    /// Cells of an image of `mips` levels.
    pub(crate) fn count(&self, mips: u32) -> u64 {
        mips as u64 * self.layers as u64 * self.planes()
    }

    /// The one plane a use narrowed to `aspect` touches, as its aspect (DEPTH or STENCIL);
    /// `None` where the use covers every plane (an empty mask, all aspects of the format, or
    /// an image of one plane).
    pub(crate) fn narrowed(&self, aspect: vk::ImageAspectFlags) -> Option<vk::ImageAspectFlags> {
        (self.planes() == 2
            && (aspect == vk::ImageAspectFlags::DEPTH || aspect == vk::ImageAspectFlags::STENCIL))
            .then_some(aspect)
    }

    /// The cell intervals of `range` on `aspect` (empty: every aspect of the format). An
    /// aspect the format lacks is refused before this is asked (`validate`).
    pub(crate) fn cells(
        &self,
        range: &ImageRange,
        aspect: vk::ImageAspectFlags,
    ) -> SmallVec<[Range<u64>; 1]> {
        let planes = self.planes();
        // The common case: every (mip, layer) of whole mips, every plane.
        let whole_mips = range.base_layer == 0 && range.layer_count == self.layers;
        let (plane, per_cell) = match self.narrowed(aspect) {
            Some(a) => (u64::from(a == vk::ImageAspectFlags::STENCIL), true),
            None => (0, false),
        };
        if whole_mips && !per_cell {
            let l = self.layers as u64 * planes;
            let s = range.base_mip as u64 * l;
            return smallvec::smallvec![s..s + range.mip_count as u64 * l];
        }
        let mut out = SmallVec::new();
        for c in range.cells(self.layers) {
            if per_cell {
                out.extend(c.map(|cell| {
                    let at = cell * planes + plane;
                    at..at + 1
                }));
            } else {
                out.push(c.start * planes..c.end * planes);
            }
        }
        out
    }

    /// The smallest set of (range, aspects) covering a cell interval: the planes of a run of
    /// whole cells together, a lone plane at either end on its own.
    pub(crate) fn ranges(
        &self,
        cells: Range<u64>,
    ) -> SmallVec<[(ImageRange, vk::ImageAspectFlags); 1]> {
        let mut out = SmallVec::new();
        if self.planes() == 1 {
            for r in ImageRange::from_cells(cells, self.layers) {
                out.push((r, self.aspect));
            }
            return out;
        }
        let lone = |cell: u64| {
            let c = cell / 2;
            let layers = self.layers as u64;
            let r = ImageRange::subresource((c / layers) as u32, (c % layers) as u32);
            let aspect = if cell % 2 == 0 {
                vk::ImageAspectFlags::DEPTH
            } else {
                vk::ImageAspectFlags::STENCIL
            };
            (r, aspect)
        };
        let (mut start, mut end) = (cells.start, cells.end);
        let head = (start % 2 == 1 && start < end).then(|| {
            start += 1;
            lone(start - 1)
        });
        let tail = (end % 2 == 1 && start < end).then(|| {
            end -= 1;
            lone(end)
        });
        out.extend(head);
        if start < end {
            for r in ImageRange::from_cells(start / 2..end / 2, self.layers) {
                out.push((r, self.aspect));
            }
        }
        out.extend(tail);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::ImageAspectFlags as A;

    fn grid(layers: u32) -> CellGrid {
        CellGrid::new(layers, A::DEPTH | A::STENCIL)
    }

    #[test]
    fn one_plane_formats_number_cells_as_mip_and_layer() {
        let color = CellGrid::new(4, A::COLOR);
        let r = ImageRange {
            base_mip: 1,
            mip_count: 2,
            base_layer: 1,
            layer_count: 2,
        };
        assert_eq!(color.planes(), 1);
        assert_eq!(color.count(3), 12);
        assert_eq!(color.cells(&r, A::empty())[..], [5..7, 9..11]);
        // Naming the only aspect changes nothing.
        let depth = CellGrid::new(4, A::DEPTH);
        assert_eq!(depth.cells(&r, A::DEPTH)[..], [5..7, 9..11]);
        assert_eq!(depth.narrowed(A::DEPTH), None);
        assert_eq!(
            color.ranges(5..7)[..],
            [(
                ImageRange {
                    layer_count: 2,
                    mip_count: 1,
                    ..r
                },
                A::COLOR
            )]
        );
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one interval, not a list of indices
    fn depth_stencil_cells_put_the_plane_innermost() {
        let g = grid(2);
        assert_eq!((g.planes(), g.count(3)), (2, 12));
        // Both aspects of mip 1: one run of 4 cells (2 layers x 2 planes).
        assert_eq!(g.cells(&ImageRange::mip(1, 2), A::empty())[..], [4..8]);
        assert_eq!(
            g.cells(&ImageRange::mip(1, 2), A::DEPTH | A::STENCIL)[..],
            [4..8]
        );
        // One aspect: one cell per (mip, layer).
        assert_eq!(g.cells(&ImageRange::mip(1, 2), A::DEPTH)[..], [4..5, 6..7]);
        assert_eq!(
            g.cells(&ImageRange::mip(1, 2), A::STENCIL)[..],
            [5..6, 7..8]
        );
        // Layer 1 of mips 0 and 1, both aspects.
        let r = ImageRange {
            base_mip: 0,
            mip_count: 2,
            base_layer: 1,
            layer_count: 1,
        };
        assert_eq!(g.cells(&r, A::empty())[..], [2..4, 6..8]);
    }

    #[test]
    fn ranges_name_both_aspects_where_whole_cells_allow() {
        let g = grid(2);
        let ds = A::DEPTH | A::STENCIL;
        assert_eq!(g.ranges(0..4)[..], [(ImageRange::mip(0, 2), ds)]);
        assert_eq!(
            g.ranges(6..7)[..],
            [(ImageRange::subresource(1, 1), A::DEPTH)]
        );
        assert_eq!(
            g.ranges(5..6)[..],
            [(ImageRange::subresource(1, 0), A::STENCIL)]
        );
        // The stencil of layer 1 of mip 0, both aspects of mip 1, the depth of layer 0 of mip 2.
        assert_eq!(
            g.ranges(3..9)[..],
            [
                (ImageRange::subresource(0, 1), A::STENCIL),
                (ImageRange::mip(1, 2), ds),
                (ImageRange::subresource(2, 0), A::DEPTH),
            ]
        );
    }

    /// Every range and aspect goes to cells and back to the same cells.
    #[test]
    fn cells_and_ranges_round_trip() {
        for g in [grid(1), grid(3), CellGrid::new(3, A::COLOR)] {
            for (base_mip, mip_count, base_layer, layer_count) in [
                (0, 1, 0, 1),
                (0, 2, 0, g.layers),
                (1, 2, 1, g.layers - 1),
                (2, 1, 0, 1),
            ] {
                if layer_count == 0 {
                    continue;
                }
                let r = ImageRange {
                    base_mip,
                    mip_count,
                    base_layer,
                    layer_count,
                };
                for aspect in [A::empty(), A::DEPTH, A::STENCIL] {
                    let cells = g.cells(&r, aspect);
                    let mut back: Vec<Range<u64>> = vec![];
                    for c in &cells {
                        for (rr, a) in g.ranges(c.clone()) {
                            let a = if a == g.aspect { A::empty() } else { a };
                            back.extend(g.cells(&rr, a));
                        }
                    }
                    let flat =
                        |v: &[Range<u64>]| v.iter().flat_map(|c| c.clone()).collect::<Vec<_>>();
                    assert_eq!(flat(&back), flat(&cells), "{g:?} {r:?} {aspect:?}");
                    // Nothing outside the image, and one plane only where one was named.
                    assert!(flat(&cells).iter().all(|&c| c < g.count(3)));
                    if g.narrowed(aspect).is_some() {
                        assert_eq!(flat(&cells).len() as u64, (mip_count * layer_count) as u64);
                    }
                }
            }
        }
    }
}
