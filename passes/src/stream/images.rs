//! The image half of [`Uploader`]: every mip level and layer of an image, or given regions,
//! staged in the ring and copied with one `vkCmdCopyBufferToImage` each.

use super::Uploader;
use crate::copy::{copy_offset_alignment, packed_levels, CopyBufferToImage};
use crate::error::{Error, Result};
use crate::util::{buffer_image_bytes, check_bytes, check_image_region};
use ash::vk;
use std::sync::Arc;
use vk_baton::StImage;

impl Uploader {
    /// Bytes [`Uploader::image`] expects for `img`: every mip level and layer, tightly packed
    /// level after level (layers within a level), each level starting at a multiple of
    /// `lcm(texel size, 4)` bytes. Fails for depth+stencil images and formats of unknown texel
    /// size.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) -> vk_baton_passes::Result<()> {
    /// let n = vk_baton_passes::Uploader::packed_image_size(img)?;
    /// # Ok(()) }
    /// ```
    pub fn packed_image_size(img: &StImage) -> Result<u64> {
        Ok(packed_levels(img)?.1)
    }

    /// Stages every mip level and layer of `dst` from `data`, laid out as
    /// [`Uploader::packed_image_size`] describes (`data.len()` must equal it).
    ///
    /// Fails (staging nothing) on a size mismatch, when `dst` lacks TRANSFER_DST usage, when
    /// `dst` already has an upload in this batch, or when the ring is full.
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader, tex: &std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let n = vk_baton_passes::Uploader::packed_image_size(tex)? as usize;
    /// up.image(tex, &vec![255u8; n])?;
    /// # Ok(()) }
    /// ```
    pub fn image(&mut self, dst: &Arc<StImage>, data: &[u8]) -> Result<()> {
        let size = Self::packed_image_size(dst)?;
        if data.len() as u64 != size {
            return Err(Error::InvalidInput(format!(
                "Uploader: `{}` needs {size} bytes for all its levels and layers, got {}",
                dst.name(),
                data.len()
            )));
        }
        self.image_with(dst, |bytes| bytes.copy_from_slice(data))
    }

    /// Like [`Uploader::image`], but `fill` writes the packed levels straight into staging
    /// memory; it must write every byte of the slice it gets
    /// ([`Uploader::packed_image_size`] bytes).
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader, tex: &std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// up.image_with(tex, |bytes| bytes.fill(128))?;
    /// # Ok(()) }
    /// ```
    pub fn image_with(&mut self, dst: &Arc<StImage>, fill: impl FnOnce(&mut [u8])) -> Result<()> {
        let (regions, size) = packed_levels(dst)?;
        self.stage_image(dst, size, &regions, fill)
    }

    /// Stages `data` and copies the given regions of it into `dst`: each region's
    /// `buffer_offset` (with its row length and image height) addresses bytes of `data`, and
    /// must be a multiple of `lcm(texel size, 4)`.
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader, img: &std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// // 4x4 RGBA8 texels into mip 1, layer 2.
    /// up.image_regions(img, &[0u8; 64], &[vk::BufferImageCopy {
    ///     buffer_offset: 0, buffer_row_length: 0, buffer_image_height: 0,
    ///     image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 1, base_array_layer: 2, layer_count: 1 },
    ///     image_offset: vk::Offset3D::default(),
    ///     image_extent: vk::Extent3D { width: 4, height: 4, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn image_regions(
        &mut self,
        dst: &Arc<StImage>,
        data: &[u8],
        regions: &[vk::BufferImageCopy],
    ) -> Result<()> {
        let what = format!("Uploader: upload to `{}`", dst.name());
        if regions.is_empty() {
            return Err(Error::InvalidRegion(format!("{what}: no regions")));
        }
        // Check every region against `data` (and the image) before staging anything: the
        // staging chunk is larger than `data`, so the copy's own checks would not catch a
        // region reading past it.
        for r in regions {
            check_image_region(
                &what,
                dst.desc(),
                &r.image_subresource,
                r.image_offset,
                r.image_extent,
            )?;
            let b = buffer_image_bytes(dst.desc().format, r)?;
            check_bytes(&what, b.start, b.end - b.start, data.len() as u64)?;
        }
        self.stage_image(dst, data.len() as u64, regions, |bytes| {
            bytes.copy_from_slice(data)
        })
    }

    fn stage_image(
        &mut self,
        dst: &Arc<StImage>,
        size: u64,
        regions: &[vk::BufferImageCopy],
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<()> {
        let what = format!("Uploader: upload to `{}`", dst.name());
        if size == 0 {
            return Err(Error::InvalidInput(format!("{what}: no data to upload")));
        }
        if !dst.desc().usage.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            return Err(Error::InvalidInput(format!(
                "image `{}` lacks usage TRANSFER_DST",
                dst.name()
            )));
        }
        if self.images_written.contains(&dst.id()) {
            return Err(Error::InvalidRegion(format!(
                "{what}: the image already has an upload in this batch (flush first)"
            )));
        }
        let texel = crate::util::texel_size_or_err(dst.desc().format, dst.desc().aspect())?;
        let align = lcm(copy_offset_alignment(texel), super::BUFFER_ALIGN);
        let staged = self.ring.alloc(size, align, &self.lease)?;
        let src = self
            .ring
            .buffer(staged.chunk)
            .ok_or_else(|| Error::InvalidInput("no such staging chunk".into()))?
            .clone();
        let shifted: Vec<vk::BufferImageCopy> = regions
            .iter()
            .map(|r| vk::BufferImageCopy {
                buffer_offset: r.buffer_offset + staged.offset,
                ..*r
            })
            .collect();
        // The region checks run here, on the shifted regions; the bytes staged for a batch
        // that fails here are freed with the batch.
        let copy = CopyBufferToImage::regions(src, dst.clone(), &shifted)?;
        self.ring.write_with(staged, fill)?;
        self.images_written.insert(dst.id());
        self.use_chunk(staged.chunk);
        self.bytes += size;
        self.images.push(copy);
        Ok(())
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let (a, b) = (a.max(1), b.max(1));
    a / gcd(a, b) * b
}
