//! Copies between buffers and images (`vkCmdCopyBufferToImage`, `vkCmdCopyImageToBuffer`), and
//! the tightly packed layout of every mip level in one buffer that uploads and downloads use.

use super::{
    check_usage_buffer, check_usage_image, declare_image_read, declare_image_write, ImageUses,
};
use crate::error::{Error, Result};
use crate::util::{buffer_image_bytes, check_bytes, check_image_region, merge_bytes, CellSet};
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferRange, Declare, Pass, Recorder, StBuffer, StImage};

/// A region covering all of mip `level` (every layer) of `img`, tightly packed at `offset`.
pub(crate) fn whole_level_region(img: &StImage, level: u32, offset: u64) -> vk::BufferImageCopy {
    let d = img.desc();
    vk::BufferImageCopy {
        buffer_offset: offset,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: d.aspect(),
            mip_level: level,
            base_array_layer: 0,
            layer_count: d.array_layers,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: crate::util::mip_extent(d.extent, level),
    }
}

/// The alignment of a buffer offset in a buffer↔image copy: a multiple of the texel size
/// (every format) and of 4 (depth/stencil formats, and any copy on a queue without graphics
/// or compute), so `lcm(texel, 4)`.
pub(crate) fn copy_offset_alignment(texel: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let t = texel.max(1);
    t / gcd(t, 4) * 4
}

/// The buffer offset of every mip level of an image of `extent` with `layers` layers and
/// `texel`-byte texels, levels one after the other (layers packed within a level), each
/// level starting at a multiple of [`copy_offset_alignment`]; and the total size. `None` on
/// overflow.
pub(crate) fn packed_offsets(
    extent: vk::Extent3D,
    mips: u32,
    layers: u32,
    texel: u64,
) -> Option<(Vec<u64>, u64)> {
    let align = copy_offset_alignment(texel);
    let mut offset = 0u64;
    let mut offsets = Vec::with_capacity(mips as usize);
    for level in 0..mips {
        offset = offset.checked_next_multiple_of(align)?;
        offsets.push(offset);
        let e = crate::util::mip_extent(extent, level);
        offset = (e.width as u64)
            .checked_mul(e.height as u64)?
            .checked_mul(e.depth as u64)?
            .checked_mul(layers as u64)?
            .checked_mul(texel)?
            .checked_add(offset)?;
    }
    Some((offsets, offset))
}

/// Regions for every mip level (all layers) of `img`, each tightly packed, one after the
/// other with each level's offset rounded up to [`copy_offset_alignment`]; and the total size
/// in bytes. Fails for depth+stencil formats (copy one aspect at a time) and formats of
/// unknown texel size.
pub(crate) fn packed_levels(img: &StImage) -> Result<(Vec<vk::BufferImageCopy>, u64)> {
    let d = img.desc();
    let aspect = d.aspect();
    if aspect == (vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL) {
        return Err(Error::UnsupportedFormat {
            format: d.format,
            detail: "depth+stencil images are copied one aspect at a time: give explicit regions"
                .into(),
        });
    }
    let texel = crate::util::texel_size_or_err(d.format, aspect)?;
    let (offsets, size) = packed_offsets(d.extent, d.mip_levels, d.array_layers, texel)
        .ok_or_else(|| {
            Error::InvalidRegion(format!(
                "the packed size of `{}` ({:?}, {} layers) overflows",
                img.name(),
                d.extent,
                d.array_layers
            ))
        })?;
    let regions = offsets
        .into_iter()
        .zip(0..)
        .map(|(offset, level)| whole_level_region(img, level, offset))
        .collect();
    Ok((regions, size))
}

/// The image access of a buffer↔image copy: the graphics-queue rows for depth/stencil images
/// (copies of their aspects to or from buffers are graphics-queue only).
fn buffer_image_access(img: &StImage, write: bool) -> Access {
    let depth_stencil = img
        .desc()
        .aspect()
        .intersects(vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL);
    match (depth_stencil, write) {
        (false, false) => Access::COPY_READ,
        (false, true) => Access::COPY_WRITE,
        (true, false) => Access::DEPTH_STENCIL_COPY_READ,
        (true, true) => Access::DEPTH_STENCIL_COPY_WRITE,
    }
}

fn check_buffer_image_regions(
    what: &str,
    buf: &StBuffer,
    img: &StImage,
    regions: &[vk::BufferImageCopy],
    image_written: bool,
) -> Result<(Vec<BufferRange>, ImageUses)> {
    if regions.is_empty() {
        return Err(Error::InvalidRegion(format!("{what}: no regions")));
    }
    let mut bytes = Vec::new();
    let mut cells = CellSet::default();
    for r in regions {
        // One aspect per region (the buffer holds one aspect's texels).
        if r.image_subresource.aspect_mask.as_raw().count_ones() != 1 {
            return Err(Error::InvalidRegion(format!(
                "{what}: aspect mask {:?} must name exactly one aspect",
                r.image_subresource.aspect_mask
            )));
        }
        let (m, l, full) = check_image_region(
            what,
            img.desc(),
            &r.image_subresource,
            r.image_offset,
            r.image_extent,
        )?;
        cells.add(m, l, full && image_written);
        let b = buffer_image_bytes(img.desc().format, r)?;
        check_bytes(what, b.start, b.end - b.start, buf.size())?;
        if !image_written
            && bytes
                .iter()
                .any(|o: &std::ops::Range<u64>| o.start < b.end && b.start < o.end)
        {
            return Err(Error::InvalidRegion(format!(
                "{what}: buffer regions overlap at bytes {b:?}"
            )));
        }
        bytes.push(b);
    }
    Ok((merge_bytes(bytes), cells.ranges()))
}

/// `vkCmdCopyBufferToImage` with regions.
///
/// Declares [`Access::COPY_READ`] on exactly the buffer bytes the regions read (row
/// length and image height included) and [`Access::COPY_WRITE`] on the image's mips and
/// layers, discarded where a region covers a whole subresource
/// ([`Access::DEPTH_STENCIL_COPY_WRITE`], graphics queues only, for a depth/stencil image).
///
/// ```no_run
/// # fn f(b: std::sync::Arc<vk_baton::StBuffer>, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// let copy = vk_baton_passes::CopyBufferToImage::all_levels(b, img)?; // tightly packed, level by level
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct CopyBufferToImage {
    src: Arc<StBuffer>,
    dst: Arc<StImage>,
    regions: Vec<vk::BufferImageCopy>,
    reads: Vec<BufferRange>,
    writes: ImageUses,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl CopyBufferToImage {
    /// Fills every mip level and layer from tightly packed data: level 0 (layer by layer),
    /// then level 1, and so on.
    ///
    /// ```no_run
    /// # fn f(b: std::sync::Arc<vk_baton::StBuffer>, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let copy = vk_baton_passes::CopyBufferToImage::all_levels(b, img)?;
    /// # Ok(()) }
    /// ```
    pub fn all_levels(src: Arc<StBuffer>, dst: Arc<StImage>) -> Result<Self> {
        let (regions, _) = packed_levels(&dst)?;
        Self::regions(src, dst, &regions)
    }

    /// Copies the given regions.
    ///
    /// ```no_run
    /// # fn f(b: std::sync::Arc<vk_baton::StBuffer>, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let copy = vk_baton_passes::CopyBufferToImage::regions(b, img, &[vk::BufferImageCopy {
    ///     buffer_offset: 0, buffer_row_length: 0, buffer_image_height: 0,
    ///     image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 },
    ///     image_offset: vk::Offset3D { x: 2, y: 2, z: 0 },
    ///     image_extent: vk::Extent3D { width: 4, height: 4, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        src: Arc<StBuffer>,
        dst: Arc<StImage>,
        regions: &[vk::BufferImageCopy],
    ) -> Result<Self> {
        check_usage_buffer(&src, vk::BufferUsageFlags::TRANSFER_SRC)?;
        check_usage_image(&dst, vk::ImageUsageFlags::TRANSFER_DST)?;
        let (reads, writes) =
            check_buffer_image_regions("CopyBufferToImage", &src, &dst, regions, true)?;
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

impl CopyBufferToImage {
    /// Declares only the image (for uploads, whose staging buffer is private).
    pub(crate) fn declare_image(&self, d: &mut Declare<'_>) {
        declare_image_write(
            d,
            &self.dst,
            &self.writes,
            buffer_image_access(&self.dst, true),
        );
    }

    /// The image written.
    pub(crate) fn image(&self) -> &Arc<StImage> {
        &self.dst
    }
}

impl Pass for CopyBufferToImage {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        for r in &self.reads {
            d.uses(&self.src, Access::COPY_READ).range(*r);
        }
        self.declare_image(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: buffer `{}` -> image `{}`",
            r.pass_name(),
            self.src.name(),
            self.dst.name()
        );
        // The depth/stencil copy's row has the same layout.
        let layout = r.layout(Access::COPY_WRITE);
        // SAFETY: both resources are alive, the regions lie inside them, and the graph put the
        // declared subresources in `layout` before this pass.
        unsafe {
            r.device().cmd_copy_buffer_to_image(
                r.cmd(),
                self.src.handle(),
                self.dst.handle(),
                layout,
                &self.regions,
            )
        };
        Ok(())
    }
}

/// `vkCmdCopyImageToBuffer` with regions.
///
/// Declares [`Access::COPY_READ`] on the image's mips and layers
/// ([`Access::DEPTH_STENCIL_COPY_READ`], graphics queues only, for a depth/stencil image) and
/// [`Access::COPY_WRITE`] on exactly the buffer bytes written. Destination bytes are
/// declared discarded only when no row padding (a row length or image height larger than the
/// extent) leaves gaps in them.
///
/// ```no_run
/// # fn f(img: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let copy = vk_baton_passes::CopyImageToBuffer::all_levels(img, b)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct CopyImageToBuffer {
    src: Arc<StImage>,
    dst: Arc<StBuffer>,
    regions: Vec<vk::BufferImageCopy>,
    reads: ImageUses,
    writes: Vec<BufferRange>,
    gaps: bool,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl CopyImageToBuffer {
    /// Reads every mip level and layer into tightly packed data: level 0 (layer by layer),
    /// then level 1, and so on.
    ///
    /// ```no_run
    /// # fn f(img: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let copy = vk_baton_passes::CopyImageToBuffer::all_levels(img, b)?;
    /// # Ok(()) }
    /// ```
    pub fn all_levels(src: Arc<StImage>, dst: Arc<StBuffer>) -> Result<Self> {
        let (regions, _) = packed_levels(&src)?;
        Self::regions(src, dst, &regions)
    }

    /// Copies the given regions. Destination byte ranges of different regions must not
    /// overlap.
    ///
    /// ```no_run
    /// # fn f(img: std::sync::Arc<vk_baton::StImage>, b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let copy = vk_baton_passes::CopyImageToBuffer::regions(img, b, &[vk::BufferImageCopy {
    ///     buffer_offset: 256, buffer_row_length: 0, buffer_image_height: 0,
    ///     image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 1, base_array_layer: 0, layer_count: 1 },
    ///     image_offset: vk::Offset3D::default(),
    ///     image_extent: vk::Extent3D { width: 8, height: 8, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        src: Arc<StImage>,
        dst: Arc<StBuffer>,
        regions: &[vk::BufferImageCopy],
    ) -> Result<Self> {
        check_usage_image(&src, vk::ImageUsageFlags::TRANSFER_SRC)?;
        check_usage_buffer(&dst, vk::BufferUsageFlags::TRANSFER_DST)?;
        let (writes, reads) =
            check_buffer_image_regions("CopyImageToBuffer", &dst, &src, regions, false)?;
        let gaps = regions.iter().any(|r| {
            (r.buffer_row_length != 0 && r.buffer_row_length != r.image_extent.width)
                || (r.buffer_image_height != 0 && r.buffer_image_height != r.image_extent.height)
        });
        Ok(Self {
            generation: Generation::new(),
            src,
            dst,
            regions: regions.to_vec(),
            reads,
            writes,
            gaps,
        })
    }
}

impl Pass for CopyImageToBuffer {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        declare_image_read(
            d,
            &self.src,
            &self.reads,
            buffer_image_access(&self.src, false),
        );
        for w in &self.writes {
            if self.gaps {
                d.uses(&self.dst, Access::COPY_WRITE).range(*w);
            } else {
                d.uses(&self.dst, Access::COPY_WRITE).range(*w).discard();
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: image `{}` -> buffer `{}`",
            r.pass_name(),
            self.src.name(),
            self.dst.name()
        );
        // The depth/stencil copy's row has the same layout.
        let layout = r.layout(Access::COPY_READ);
        // SAFETY: both resources are alive, the regions lie inside them, and the graph put the
        // declared subresources in `layout` before this pass.
        unsafe {
            r.device().cmd_copy_image_to_buffer(
                r.cmd(),
                self.src.handle(),
                layout,
                self.dst.handle(),
                &self.regions,
            )
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_offsets_align_to_lcm_of_texel_and_4() {
        assert_eq!(copy_offset_alignment(1), 4);
        assert_eq!(copy_offset_alignment(2), 4);
        assert_eq!(copy_offset_alignment(3), 12);
        assert_eq!(copy_offset_alignment(4), 4);
        assert_eq!(copy_offset_alignment(6), 12);
        assert_eq!(copy_offset_alignment(8), 8);
        assert_eq!(copy_offset_alignment(12), 12);
        assert_eq!(copy_offset_alignment(16), 16);
    }

    #[test]
    fn packed_levels_start_aligned() {
        let e = |w, h| vk::Extent3D {
            width: w,
            height: h,
            depth: 1,
        };
        // R8 5x3, 3 levels: 15 bytes, then 2x1 = 2 bytes at 16, then 1 byte at 20.
        assert_eq!(
            packed_offsets(e(5, 3), 3, 1, 1),
            Some((vec![0, 16, 20], 21))
        );
        // RGB8 (3 bytes) 3x3, 2 layers: 54 bytes, then 1x1x2 = 6 bytes at 60.
        assert_eq!(packed_offsets(e(3, 3), 2, 2, 3), Some((vec![0, 60], 66)));
        // RGBA8: already aligned, the layout is unchanged.
        assert_eq!(
            packed_offsets(e(4, 4), 3, 1, 4),
            Some((vec![0, 64, 80], 84))
        );
        // Overflow is None, not a panic.
        assert_eq!(packed_offsets(e(u32::MAX, u32::MAX), 1, u32::MAX, 16), None);
    }
}
