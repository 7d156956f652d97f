//! [`ImageBlit`]: `vkCmdBlitImage`, whole image or regions, with a choice of filter.
//!
//! Format support is checked at construction through [`FormatSupport`]: a format without
//! BLIT_SRC/BLIT_DST (or SAMPLED_IMAGE_FILTER_LINEAR for a linear filter) gives
//! [`Error::FormatNotSupported`]. Blits need a graphics queue; the pass's accesses say so and
//! the planner refuses it on other queues.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, src: std::sync::Arc<vk_baton::StImage>, dst: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
//! use vk_baton::ash::vk;
//! use vk_baton_passes::{FormatSupport, ImageBlit};
//! let support = FormatSupport::new(ctx.instance(), ctx.physical_device());
//! let mut blit = ImageBlit::new(&support, src, dst, vk::Filter::LINEAR)?; // stretches mip 0
//! let graph = ctx.graph()?;
//! graph.record().insert_pass("blit", &mut blit, ctx.graphics()).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::copy::{declare_image_read, declare_image_write, ImageUses};
use crate::error::{Error, Result};
use crate::format::FormatSupport;
use crate::util::{mip_extent, CellSet};
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, Declare, ImageDesc, Pass, Recorder, StImage};

/// Checks one side of a blit region; returns (mip, layers, covers the whole subresource).
fn check_side(
    what: &str,
    desc: &ImageDesc,
    sub: &vk::ImageSubresourceLayers,
    offsets: &[vk::Offset3D; 2],
) -> Result<(u32, std::ops::Range<u32>, bool)> {
    let lo = vk::Offset3D {
        x: offsets[0].x.min(offsets[1].x),
        y: offsets[0].y.min(offsets[1].y),
        z: offsets[0].z.min(offsets[1].z),
    };
    let hi = vk::Offset3D {
        x: offsets[0].x.max(offsets[1].x),
        y: offsets[0].y.max(offsets[1].y),
        z: offsets[0].z.max(offsets[1].z),
    };
    // In i64: the difference of two i32 offsets may not fit an i32 (or a u32).
    let span = |lo: i32, hi: i32| {
        u32::try_from(i64::from(hi) - i64::from(lo)).map_err(|_| {
            Error::InvalidRegion(format!(
                "{what}: offsets {offsets:?} span more than {} texels",
                u32::MAX
            ))
        })
    };
    let extent = vk::Extent3D {
        width: span(lo.x, hi.x)?,
        height: span(lo.y, hi.y)?,
        depth: span(lo.z, hi.z)?,
    };
    crate::util::check_image_region(what, desc, sub, lo, extent)
}

/// `vkCmdBlitImage` from one image to another (or between subresources of one image).
///
/// Declares [`Access::BLIT_READ`] on the source mips/layers and [`Access::BLIT_WRITE`] on
/// the destination's (the BLIT stage, graphics queues only); destination subresources a region covers entirely are declared discarded.
///
/// ```no_run
/// # fn f(s: &vk_baton_passes::FormatSupport, a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// let blit = vk_baton_passes::ImageBlit::new(s, a, b, ash::vk::Filter::NEAREST)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ImageBlit {
    src: Arc<StImage>,
    dst: Arc<StImage>,
    regions: Vec<vk::ImageBlit>,
    filter: vk::Filter,
    reads: ImageUses,
    writes: ImageUses,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl ImageBlit {
    /// Stretches all of mip 0 of `src` over all of mip 0 of `dst`, every layer (both must
    /// have the same number of layers).
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport, a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let blit = vk_baton_passes::ImageBlit::new(s, a, b, ash::vk::Filter::LINEAR)?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        support: &FormatSupport,
        src: Arc<StImage>,
        dst: Arc<StImage>,
        filter: vk::Filter,
    ) -> Result<Self> {
        let (s, d) = (src.desc(), dst.desc());
        if s.array_layers != d.array_layers {
            return Err(Error::InvalidInput(format!(
                "ImageBlit::new: `{}` has {} layers, `{}` {}",
                src.name(),
                s.array_layers,
                dst.name(),
                d.array_layers
            )));
        }
        let corner = |e: vk::Extent3D| vk::Offset3D {
            x: e.width as i32,
            y: e.height as i32,
            z: e.depth as i32,
        };
        let region = vk::ImageBlit {
            src_subresource: vk::ImageSubresourceLayers {
                aspect_mask: s.aspect(),
                mip_level: 0,
                base_array_layer: 0,
                layer_count: s.array_layers,
            },
            src_offsets: [vk::Offset3D::default(), corner(s.extent)],
            dst_subresource: vk::ImageSubresourceLayers {
                aspect_mask: d.aspect(),
                mip_level: 0,
                base_array_layer: 0,
                layer_count: d.array_layers,
            },
            dst_offsets: [vk::Offset3D::default(), corner(d.extent)],
        };
        Self::regions(support, src, dst, &[region], filter)
    }

    /// Blits the given regions (offsets may be swapped to mirror). Fails on unsupported
    /// formats or filters, regions outside either image, or missing TRANSFER usage.
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport, a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let layers = vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 };
    /// // The top-left 8x8 texels, doubled into the bottom-right 16x16 of the destination.
    /// let blit = vk_baton_passes::ImageBlit::regions(s, a, b, &[vk::ImageBlit {
    ///     src_subresource: layers,
    ///     src_offsets: [vk::Offset3D { x: 0, y: 0, z: 0 }, vk::Offset3D { x: 8, y: 8, z: 1 }],
    ///     dst_subresource: layers,
    ///     dst_offsets: [vk::Offset3D { x: 16, y: 16, z: 0 }, vk::Offset3D { x: 32, y: 32, z: 1 }],
    /// }], vk::Filter::NEAREST)?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        support: &FormatSupport,
        src: Arc<StImage>,
        dst: Arc<StImage>,
        regions: &[vk::ImageBlit],
        filter: vk::Filter,
    ) -> Result<Self> {
        if regions.is_empty() {
            return Err(Error::InvalidRegion("ImageBlit: no regions".into()));
        }
        support.check_blit(src.desc(), dst.desc(), filter)?;
        if !src.desc().usage.contains(vk::ImageUsageFlags::TRANSFER_SRC) {
            return Err(Error::InvalidInput(format!(
                "image `{}` lacks usage TRANSFER_SRC",
                src.name()
            )));
        }
        if !dst.desc().usage.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            return Err(Error::InvalidInput(format!(
                "image `{}` lacks usage TRANSFER_DST",
                dst.name()
            )));
        }
        let mut reads = CellSet::default();
        let mut writes = CellSet::default();
        for r in regions {
            if r.src_subresource.layer_count != r.dst_subresource.layer_count {
                return Err(Error::InvalidRegion(
                    "ImageBlit: source and destination layer counts differ".into(),
                ));
            }
            let (m, l, _) = check_side(
                "ImageBlit source",
                src.desc(),
                &r.src_subresource,
                &r.src_offsets,
            )?;
            reads.add(m, l, false);
            let (m, l, full) = check_side(
                "ImageBlit destination",
                dst.desc(),
                &r.dst_subresource,
                &r.dst_offsets,
            )?;
            writes.add(m, l, full);
        }
        let (reads, writes) = (reads.ranges(), writes.ranges());
        if Arc::ptr_eq(&src, &dst)
            && reads
                .iter()
                .any(|(r, _)| writes.iter().any(|(w, _)| r.overlaps(w)))
        {
            return Err(Error::InvalidRegion(
                "ImageBlit: a blit within one image must read and write different subresources"
                    .into(),
            ));
        }
        log::debug!(
            "blit `{}` -> `{}`: {} region(s), {filter:?}",
            src.name(),
            dst.name(),
            regions.len()
        );
        Ok(Self {
            generation: Generation::new(),
            src,
            dst,
            regions: regions.to_vec(),
            filter,
            reads,
            writes,
        })
    }
}

impl Pass for ImageBlit {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        declare_image_read(d, &self.src, &self.reads, Access::BLIT_READ);
        declare_image_write(d, &self.dst, &self.writes, Access::BLIT_WRITE);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: blit `{}` -> `{}`",
            r.pass_name(),
            self.src.name(),
            self.dst.name()
        );
        let (src, dst) = (r.layout(Access::BLIT_READ), r.layout(Access::BLIT_WRITE));
        // SAFETY: both images are alive, the formats, filter and regions were checked at
        // construction, and the graph put the declared subresources in `src` and `dst`
        // before this pass.
        unsafe {
            r.device().cmd_blit_image(
                r.cmd(),
                self.src.handle(),
                src,
                self.dst.handle(),
                dst,
                &self.regions,
                self.filter,
            )
        };
        Ok(())
    }
}

/// The blit region from all of mip `level - 1` to all of mip `level`, every layer.
pub(crate) fn level_blit(desc: &ImageDesc, level: u32) -> vk::ImageBlit {
    let corner = |e: vk::Extent3D| vk::Offset3D {
        x: e.width as i32,
        y: e.height as i32,
        z: e.depth as i32,
    };
    let sub = |mip| vk::ImageSubresourceLayers {
        aspect_mask: desc.aspect(),
        mip_level: mip,
        base_array_layer: 0,
        layer_count: desc.array_layers,
    };
    vk::ImageBlit {
        src_subresource: sub(level - 1),
        src_offsets: [
            vk::Offset3D::default(),
            corner(mip_extent(desc.extent, level - 1)),
        ],
        dst_subresource: sub(level),
        dst_offsets: [
            vk::Offset3D::default(),
            corner(mip_extent(desc.extent, level)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_blit_offsets_are_errors_not_panics() {
        let desc = ImageDesc::new_2d(
            8,
            8,
            vk::Format::R8G8B8A8_UNORM,
            vk::ImageUsageFlags::TRANSFER_DST,
        );
        let sub = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let o = |x, y, z| vk::Offset3D { x, y, z };
        assert!(check_side("t", &desc, &sub, &[o(0, 0, 0), o(8, 8, 1)]).is_ok());
        // Mirrored offsets are fine.
        assert!(check_side("t", &desc, &sub, &[o(8, 8, 1), o(0, 0, 0)]).is_ok());
        for offsets in [
            [o(i32::MIN, 0, 0), o(i32::MAX, 8, 1)],
            [o(i32::MAX, 0, 0), o(i32::MIN, 8, 1)],
            [o(0, i32::MIN, 0), o(8, i32::MAX, 1)],
            [o(0, 0, i32::MIN), o(8, 8, i32::MAX)],
            [o(-1, 0, 0), o(8, 8, 1)],
            [o(0, 0, 0), o(i32::MAX, 8, 1)],
            [o(4, 0, 0), o(4, 8, 1)],
        ] {
            assert!(
                matches!(
                    check_side("t", &desc, &sub, &offsets),
                    Err(Error::InvalidRegion(_))
                ),
                "{offsets:?}"
            );
        }
    }
}
