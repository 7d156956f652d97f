//! Host data → device resources: [`UploadBuffer`] and [`UploadImage`].
//!
//! The data is copied at construction into a host-visible staging buffer allocated through
//! gpu-allocator; the pass records a copy from it into the destination. The staging buffer is
//! private to the pass (the host wrote it before the submit, which makes the writes visible to
//! the GPU) and is handed to the execution fence with [`Recorder::keep_alive`], so it lives
//! until the GPU is done even when the pass is dropped at once. Only the destination is
//! declared, as a TRANSFER_WRITE at the COPY stage, discarded where the upload overwrites it
//! whole. The uploads run on any queue, the transfer queue included; moving the destination
//! to the state and queue family of its next user is the graph's job.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
//! let mut up = vk_baton_passes::UploadBuffer::new(ctx.device(), ctx.allocator(), dst, 0, &[1, 2, 3, 4])?;
//! let graph = ctx.graph()?;
//! graph.record().insert_pass("upload", &mut up, ctx.transfer()).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::copy::{packed_levels, CopyBufferToImage};
use crate::error::{Error, Result};
use crate::util::check_bytes;
use ash::vk;
use std::sync::Arc;
use vk_baton::{
    Access, BufferDesc, BufferRange, Declare, Pass, Recorder, SharedAllocator, StBuffer, StImage,
};

fn staging(
    device: &ash::Device,
    allocator: &SharedAllocator,
    data: &[u8],
    name: &str,
) -> Result<Arc<StBuffer>> {
    if data.is_empty() {
        return Err(Error::InvalidInput(format!("{name}: no data to upload")));
    }
    let buf = StBuffer::new(
        device,
        allocator,
        BufferDesc::upload(data.len() as u64, vk::BufferUsageFlags::TRANSFER_SRC),
        name,
    )?;
    buf.write(0, data)?;
    log::debug!("{name}: {} bytes staged", data.len());
    Ok(Arc::new(buf))
}

/// Uploads bytes into a byte range of a buffer.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let up = vk_baton_passes::UploadBuffer::new(device, alloc, dst, 256, &42u32.to_le_bytes())?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct UploadBuffer {
    staging: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    range: BufferRange,
}

impl UploadBuffer {
    /// Stages `data` for `dst` at byte `offset`. Fails when the data is empty, does not fit,
    /// `dst` lacks TRANSFER_DST usage, or the staging allocation fails.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let up = vk_baton_passes::UploadBuffer::new(device, alloc, dst, 0, &[0u8; 64])?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        dst: Arc<StBuffer>,
        offset: u64,
        data: &[u8],
    ) -> Result<Self> {
        if !dst
            .desc()
            .usage
            .contains(vk::BufferUsageFlags::TRANSFER_DST)
        {
            return Err(Error::InvalidInput(format!(
                "buffer `{}` lacks usage TRANSFER_DST",
                dst.name()
            )));
        }
        check_bytes("UploadBuffer", offset, data.len() as u64, dst.size())?;
        let staging = staging(
            device,
            allocator,
            data,
            &format!("upload to `{}`", dst.name()),
        )?;
        Ok(Self {
            staging,
            dst,
            range: BufferRange {
                offset,
                size: data.len() as u64,
            },
        })
    }
}

impl Pass for UploadBuffer {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.dst, Access::COPY_WRITE)
            .range(self.range)
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: upload {} bytes to `{}`",
            r.pass_name(),
            self.range.size,
            self.dst.name()
        );
        let region = vk::BufferCopy {
            src_offset: 0,
            dst_offset: self.range.offset,
            size: self.range.size,
        };
        // SAFETY: the staging buffer is alive (kept alive below until the GPU is done) and
        // was written by the host before the submit; the destination range was checked and
        // ordered by the graph.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.staging.handle(), self.dst.handle(), &[region])
        };
        r.keep_alive(self.staging.clone());
        Ok(())
    }
}

/// Uploads texels into mip levels and layers of an image.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>, texels: &[u8]) -> vk_baton_passes::Result<()> {
/// // `texels` holds every level, tightly packed: level 0 layer by layer, then level 1, ...
/// let up = vk_baton_passes::UploadImage::new(device, alloc, img, texels)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct UploadImage {
    staging: Arc<StBuffer>,
    copy: CopyBufferToImage,
}

impl UploadImage {
    /// Bytes [`UploadImage::new`] expects for `img`: every mip level and layer, each level
    /// tightly packed and starting at a multiple of `lcm(texel size, 4)` bytes (see
    /// [`UploadImage::new`]).
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) -> vk_baton_passes::Result<()> {
    /// let n = vk_baton_passes::UploadImage::packed_size(img)?;
    /// # Ok(()) }
    /// ```
    pub fn packed_size(img: &StImage) -> Result<u64> {
        Ok(packed_levels(img)?.1)
    }

    /// Stages `data` for every mip level and layer of `img`: level 0 (layer after layer, rows
    /// tightly packed), then level 1, and so on, each level starting at the next multiple of
    /// `lcm(texel size, 4)` bytes (Vulkan's buffer-offset alignment for copies; the padding
    /// bytes between levels are ignored, and formats of 4, 8 or 16 bytes per texel have
    /// none). `data.len()` must equal [`UploadImage::packed_size`].
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let n = vk_baton_passes::UploadImage::packed_size(&img)? as usize;
    /// let up = vk_baton_passes::UploadImage::new(device, alloc, img, &vec![0u8; n])?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        dst: Arc<StImage>,
        data: &[u8],
    ) -> Result<Self> {
        let (regions, size) = packed_levels(&dst)?;
        if data.len() as u64 != size {
            return Err(Error::InvalidInput(format!(
                "UploadImage: `{}` needs {size} bytes for all its levels and layers, got {}",
                dst.name(),
                data.len()
            )));
        }
        Self::regions(device, allocator, dst, data, &regions)
    }

    /// Stages `data` and copies the given regions from it; each region's `buffer_offset`
    /// (with its row length and image height) addresses bytes of `data`.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// // 4x4 RGBA8 texels into mip 1, layer 2.
    /// let up = vk_baton_passes::UploadImage::regions(device, alloc, img, &[0u8; 64], &[vk::BufferImageCopy {
    ///     buffer_offset: 0, buffer_row_length: 0, buffer_image_height: 0,
    ///     image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 1, base_array_layer: 2, layer_count: 1 },
    ///     image_offset: vk::Offset3D::default(),
    ///     image_extent: vk::Extent3D { width: 4, height: 4, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        device: &ash::Device,
        allocator: &SharedAllocator,
        dst: Arc<StImage>,
        data: &[u8],
        regions: &[vk::BufferImageCopy],
    ) -> Result<Self> {
        let name = format!("upload to `{}`", dst.name());
        if data.is_empty() {
            return Err(Error::InvalidInput(format!("{name}: no data to upload")));
        }
        // The regions are checked against the staging buffer, which holds exactly `data`.
        let staging = staging(device, allocator, data, &name)?;
        let copy = CopyBufferToImage::regions(staging.clone(), dst, regions)?;
        Ok(Self { staging, copy })
    }
}

impl Pass for UploadImage {
    fn declare(&self, d: &mut Declare<'_>) {
        self.copy.declare_image(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: upload {} bytes to `{}`",
            r.pass_name(),
            self.staging.size(),
            self.copy.image().name()
        );
        self.copy.record(r)?;
        r.keep_alive(self.staging.clone());
        Ok(())
    }
}
