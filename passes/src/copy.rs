//! Copies between buffers and images, each with regions: [`CopyBuffer`], [`CopyImage`],
//! [`CopyBufferToImage`] and [`CopyImageToBuffer`].
//!
//! Each pass declares exactly what its regions touch: the byte ranges of buffers, and the mip
//! levels and array layers of images. A destination range is declared as discarded (old
//! contents not needed) only where a region overwrites it completely: whole byte ranges of
//! buffers, and whole subresources of images. Copies work on any queue, the transfer queue
//! included.
//!
//! ```no_run
//! # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, a: std::sync::Arc<vk_baton::StBuffer>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
//! use vk_baton::ash::vk;
//! use vk_baton_passes::CopyBuffer;
//! let mut copy = CopyBuffer::regions(a, b, &[vk::BufferCopy { src_offset: 0, dst_offset: 256, size: 64 }])?;
//! graph.record().insert_pass("copy", &mut copy, q).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::util::{check_bytes, check_image_region, merge_bytes, CellSet};
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferRange, Declare, ImageRange, Pass, Recorder, StBuffer, StImage};

mod buffer_image;

pub(crate) use buffer_image::{copy_offset_alignment, packed_levels};
pub use buffer_image::{CopyBufferToImage, CopyImageToBuffer};

/// The declarations of an image's touched cells: (range, whole subresources overwritten).
pub(crate) type ImageUses = Vec<(ImageRange, bool)>;

pub(crate) fn declare_image_read(
    d: &mut Declare<'_>,
    img: &Arc<StImage>,
    uses: &ImageUses,
    a: Access,
) {
    for (r, _) in uses {
        d.uses(img, a).range(*r);
    }
}

pub(crate) fn declare_image_write(
    d: &mut Declare<'_>,
    img: &Arc<StImage>,
    uses: &ImageUses,
    a: Access,
) {
    for (r, full) in uses {
        if *full {
            d.uses(img, a).range(*r).discard();
        } else {
            d.uses(img, a).range(*r);
        }
    }
}

fn check_usage_buffer(b: &StBuffer, usage: vk::BufferUsageFlags) -> Result<()> {
    if b.desc().usage.contains(usage) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "buffer `{}` lacks usage {usage:?}",
            b.name()
        )))
    }
}

fn check_usage_image(i: &StImage, usage: vk::ImageUsageFlags) -> Result<()> {
    if i.desc().usage.contains(usage) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "image `{}` lacks usage {usage:?}",
            i.name()
        )))
    }
}

/// `vkCmdCopyBuffer` with regions.
///
/// Declares [`Access::COPY_READ`] on the source bytes read, and [`Access::COPY_WRITE`] on
/// the destination bytes written, as discarded ranges.
///
/// ```no_run
/// # fn f(a: std::sync::Arc<vk_baton::StBuffer>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let copy = vk_baton_passes::CopyBuffer::whole(a, b)?; // min of both sizes, from offset 0
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct CopyBuffer {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    regions: Vec<vk::BufferCopy>,
    reads: Vec<BufferRange>,
    writes: Vec<BufferRange>,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl CopyBuffer {
    /// Copies `min(src.size(), dst.size())` bytes from offset 0 to offset 0.
    ///
    /// ```no_run
    /// # fn f(a: std::sync::Arc<vk_baton::StBuffer>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let copy = vk_baton_passes::CopyBuffer::whole(a, b)?;
    /// # Ok(()) }
    /// ```
    pub fn whole(src: Arc<StBuffer>, dst: Arc<StBuffer>) -> Result<Self> {
        let size = src.size().min(dst.size());
        Self::regions(
            src,
            dst,
            &[vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size,
            }],
        )
    }

    /// Copies the given regions. Fails on an empty list, a region outside either buffer,
    /// overlapping destination regions, or missing TRANSFER_SRC/TRANSFER_DST usage.
    ///
    /// ```no_run
    /// # fn f(a: std::sync::Arc<vk_baton::StBuffer>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let copy = vk_baton_passes::CopyBuffer::regions(a, b, &[
    ///     vk::BufferCopy { src_offset: 0, dst_offset: 64, size: 16 },
    ///     vk::BufferCopy { src_offset: 32, dst_offset: 0, size: 16 },
    /// ])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        src: Arc<StBuffer>,
        dst: Arc<StBuffer>,
        regions: &[vk::BufferCopy],
    ) -> Result<Self> {
        if regions.is_empty() {
            return Err(Error::InvalidRegion("CopyBuffer: no regions".into()));
        }
        check_usage_buffer(&src, vk::BufferUsageFlags::TRANSFER_SRC)?;
        check_usage_buffer(&dst, vk::BufferUsageFlags::TRANSFER_DST)?;
        let mut reads = Vec::new();
        let mut writes: Vec<std::ops::Range<u64>> = Vec::new();
        for r in regions {
            reads.push(check_bytes(
                "CopyBuffer source",
                r.src_offset,
                r.size,
                src.size(),
            )?);
            let w = check_bytes("CopyBuffer destination", r.dst_offset, r.size, dst.size())?;
            if writes.iter().any(|o| o.start < w.end && w.start < o.end) {
                return Err(Error::InvalidRegion(format!(
                    "CopyBuffer: destination regions overlap at bytes {w:?}"
                )));
            }
            writes.push(w);
        }
        let reads = merge_bytes(reads);
        let writes = merge_bytes(writes);
        if Arc::ptr_eq(&src, &dst) && reads.iter().any(|r| writes.iter().any(|w| r.overlaps(w))) {
            return Err(Error::InvalidRegion(
                "CopyBuffer: source and destination bytes overlap in the same buffer".into(),
            ));
        }
        Ok(Self {
            generation: Generation::new(),
            src,
            dst,
            regions: regions.to_vec(),
            reads,
            writes,
        })
    }
}

impl Pass for CopyBuffer {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        for r in &self.reads {
            d.uses(&self.src, Access::COPY_READ).range(*r);
        }
        for w in &self.writes {
            d.uses(&self.dst, Access::COPY_WRITE).range(*w).discard();
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: copy {} region(s) `{}` -> `{}`",
            r.pass_name(),
            self.regions.len(),
            self.src.name(),
            self.dst.name()
        );
        // SAFETY: both buffers are alive (the graph holds them), the regions were checked to
        // lie inside them, and the graph ordered the declared ranges before this pass.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &self.regions)
        };
        Ok(())
    }
}

/// `vkCmdCopyImage` with regions.
///
/// Declares [`Access::COPY_READ`] (TRANSFER_SRC_OPTIMAL) on the source mips/layers and
/// [`Access::COPY_WRITE`] (TRANSFER_DST_OPTIMAL) on the destination mips/layers, the
/// latter discarded where a region covers a whole subresource.
///
/// ```no_run
/// # fn f(a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// let copy = vk_baton_passes::CopyImage::whole(a, b)?; // every mip and layer
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct CopyImage {
    src: Arc<StImage>,
    dst: Arc<StImage>,
    regions: Vec<vk::ImageCopy>,
    reads: ImageUses,
    writes: ImageUses,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl CopyImage {
    /// Copies every mip level and layer; both images must have the same extent, mip and
    /// layer counts, and compatible formats.
    ///
    /// ```no_run
    /// # fn f(a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let copy = vk_baton_passes::CopyImage::whole(a, b)?;
    /// # Ok(()) }
    /// ```
    pub fn whole(src: Arc<StImage>, dst: Arc<StImage>) -> Result<Self> {
        let (s, d) = (src.desc(), dst.desc());
        if s.extent != d.extent || s.mip_levels != d.mip_levels || s.array_layers != d.array_layers
        {
            return Err(Error::InvalidInput(format!(
                "CopyImage::whole: `{}` and `{}` differ in extent, mips or layers",
                src.name(),
                dst.name()
            )));
        }
        let regions: Vec<vk::ImageCopy> = (0..s.mip_levels)
            .map(|m| {
                let sub = |aspect| vk::ImageSubresourceLayers {
                    aspect_mask: aspect,
                    mip_level: m,
                    base_array_layer: 0,
                    layer_count: s.array_layers,
                };
                vk::ImageCopy {
                    src_subresource: sub(s.aspect()),
                    src_offset: vk::Offset3D::default(),
                    dst_subresource: sub(d.aspect()),
                    dst_offset: vk::Offset3D::default(),
                    extent: crate::util::mip_extent(s.extent, m),
                }
            })
            .collect();
        Self::regions(src, dst, &regions)
    }

    /// Copies the given regions. Fails on an empty list, a region outside either image, or
    /// missing TRANSFER_SRC/TRANSFER_DST usage.
    ///
    /// ```no_run
    /// # fn f(a: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let layers = vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 };
    /// let copy = vk_baton_passes::CopyImage::regions(a, b, &[vk::ImageCopy {
    ///     src_subresource: layers, src_offset: vk::Offset3D { x: 4, y: 4, z: 0 },
    ///     dst_subresource: layers, dst_offset: vk::Offset3D::default(),
    ///     extent: vk::Extent3D { width: 8, height: 8, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        src: Arc<StImage>,
        dst: Arc<StImage>,
        regions: &[vk::ImageCopy],
    ) -> Result<Self> {
        if regions.is_empty() {
            return Err(Error::InvalidRegion("CopyImage: no regions".into()));
        }
        check_usage_image(&src, vk::ImageUsageFlags::TRANSFER_SRC)?;
        check_usage_image(&dst, vk::ImageUsageFlags::TRANSFER_DST)?;
        let mut reads = CellSet::default();
        let mut writes = CellSet::default();
        for r in regions {
            let (m, l, _) = check_image_region(
                "CopyImage source",
                src.desc(),
                &r.src_subresource,
                r.src_offset,
                r.extent,
            )?;
            reads.add(m, l, false);
            let (m, l, full) = check_image_region(
                "CopyImage destination",
                dst.desc(),
                &r.dst_subresource,
                r.dst_offset,
                r.extent,
            )?;
            writes.add(m, l, full);
        }
        let reads = reads.ranges();
        let writes = writes.ranges();
        if Arc::ptr_eq(&src, &dst)
            && reads
                .iter()
                .any(|(r, _)| writes.iter().any(|(w, _)| r.overlaps(w)))
        {
            return Err(Error::InvalidRegion(
                "CopyImage: a copy within one image must read and write different subresources"
                    .into(),
            ));
        }
        Ok(Self {
            generation: Generation::new(),
            src,
            dst,
            regions: regions.to_vec(),
            reads,
            writes,
        })
    }
}

impl Pass for CopyImage {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        declare_image_read(d, &self.src, &self.reads, Access::COPY_READ);
        declare_image_write(d, &self.dst, &self.writes, Access::COPY_WRITE);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: copy {} image region(s) `{}` -> `{}`",
            r.pass_name(),
            self.regions.len(),
            self.src.name(),
            self.dst.name()
        );
        let (src, dst) = (r.layout(Access::COPY_READ), r.layout(Access::COPY_WRITE));
        // SAFETY: both images are alive, the regions lie inside them, and the graph put the
        // declared subresources in `src` and `dst` before this pass.
        unsafe {
            r.device().cmd_copy_image(
                r.cmd(),
                self.src.handle(),
                src,
                self.dst.handle(),
                dst,
                &self.regions,
            )
        };
        Ok(())
    }
}
