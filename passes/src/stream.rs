//! Streaming uploads: [`Uploader`] gathers many uploads (buffer byte ranges, images with every
//! mip level and layer) into one pass, staged in a reusable ring of host-visible memory.
//!
//! The shape is that of `wgpu::util::StagingBelt` and of Granite's and vuk's upload paths:
//! write the data now (it is copied into persistently mapped staging memory at once), then
//! [`Uploader::flush_pass`] hands back one [`UploadBatch`] pass carrying every upload since the
//! last flush. Insert it on the transfer queue and the consumers after it, in the same graph:
//! one transfer submission carries all the copies, and the graph emits one release batch for
//! everything that moves to another queue family, the acquires and the semaphore.
//!
//! The staging memory is reused: the bytes of a batch are free again once its pass is dropped
//! and every execution that recorded it has completed (the execution fence releases them; so
//! do the graph's next `record()` and `execute()`). In a steady stream the ring stops growing
//! after the first few batches; [`Uploader::capacity`] tells.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton::Context, mesh: std::sync::Arc<vk_baton::StBuffer>, tex: std::sync::Arc<vk_baton::StImage>,
//! #      vertices: &[u8], texels: &[u8], consumer: &mut dyn vk_baton::Pass) -> vk_baton_passes::Result<()> {
//! use vk_baton_passes::Uploader;
//! let mut up = Uploader::new(ctx.device(), ctx.allocator(), 64 << 20)?;
//! up.buffer(&mesh, 0, vertices)?;
//! up.image(&tex, texels)?; // every mip level and layer, tightly packed
//! let mut batch = up.flush_pass();
//! let graph = ctx.graph()?;
//! let fence = graph.record()
//!     .insert_pass("uploads", &mut batch, ctx.transfer())
//!     .insert_pass("draw", consumer, ctx.graphics()) // sees `mesh` and `tex` written
//!     .finish()?.execute()?;
//! fence.wait()?;
//! # Ok(()) }
//! ```

mod batch;
mod ring;

pub use batch::{UploadBatch, UploadTicket};

use crate::copy::{copy_offset_alignment, packed_levels, CopyBufferToImage};
use crate::error::{Error, Result};
use crate::util::{buffer_image_bytes, check_bytes, check_image_region, merge_bytes};
use ash::vk;
use batch::BufferCopies;
use ring::{BatchLease, Staged, StagingRing};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use vk_baton::{SharedAllocator, StBuffer, StImage};

/// The alignment of a buffer upload's staging bytes (copies of aligned data run faster).
const BUFFER_ALIGN: u64 = 16;

/// One buffer upload waiting for the next flush.
#[derive(Debug)]
struct PendingBuffer {
    staged: Staged,
    dst: Arc<StBuffer>,
    dst_offset: u64,
}

/// A streaming uploader: a staging ring plus the batch being gathered. See the
/// [module documentation](self).
///
/// ```no_run
/// # fn f(ctx: &vk_baton::Context, dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let mut up = vk_baton_passes::Uploader::new(ctx.device(), ctx.allocator(), 16 << 20)?;
/// for i in 0..64u64 {
///     up.buffer(&dst, i * 256, &[i as u8; 256])?;
/// }
/// let mut batch = up.flush_pass(); // 64 uploads, one pass
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Uploader {
    ring: StagingRing,
    lease: Arc<BatchLease>,
    buffers: Vec<PendingBuffer>,
    images: Vec<CopyBufferToImage>,
    /// Per destination buffer (by id), the byte ranges written in this batch: start -> end.
    written: HashMap<u64, BTreeMap<u64, u64>>,
    images_written: HashSet<u64>,
    chunks_used: BTreeSet<usize>,
    bytes: u64,
}

impl Uploader {
    /// An uploader whose staging ring starts with `initial_capacity` bytes and grows without
    /// limit (but for allocation failures, which are errors). Fails if the capacity is 0 or
    /// the staging buffer cannot be allocated.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) -> vk_baton_passes::Result<()> {
    /// let up = vk_baton_passes::Uploader::new(ctx.device(), ctx.allocator(), 32 << 20)?;
    /// # Ok(()) }
    /// ```
    pub fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        initial_capacity: u64,
    ) -> Result<Self> {
        Self::with_max_capacity(device, allocator, initial_capacity, u64::MAX)
    }

    /// Like [`Uploader::new`], but the ring never grows past `max_capacity` bytes: an upload
    /// that finds no room then fails with [`Error::StagingFull`].
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton::Context) -> vk_baton_passes::Result<()> {
    /// let up = vk_baton_passes::Uploader::with_max_capacity(ctx.device(), ctx.allocator(), 16 << 20, 256 << 20)?;
    /// # Ok(()) }
    /// ```
    pub fn with_max_capacity(
        device: &ash::Device,
        allocator: &SharedAllocator,
        initial_capacity: u64,
        max_capacity: u64,
    ) -> Result<Self> {
        Ok(Self {
            ring: StagingRing::new(device, allocator, initial_capacity, max_capacity)?,
            lease: Arc::new(BatchLease),
            buffers: Vec::new(),
            images: Vec::new(),
            written: HashMap::new(),
            images_written: HashSet::new(),
            chunks_used: BTreeSet::new(),
            bytes: 0,
        })
    }

    /// Stages `data` for bytes `offset..offset + data.len()` of `dst`.
    ///
    /// Fails (staging nothing) when the data is empty, the range does not fit `dst`, `dst`
    /// lacks TRANSFER_DST usage, the range overlaps another upload to `dst` in this batch,
    /// or the ring is full ([`Error::StagingFull`]).
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader, dst: &std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// up.buffer(dst, 1024, &[1, 2, 3, 4])?;
    /// # Ok(()) }
    /// ```
    pub fn buffer(&mut self, dst: &Arc<StBuffer>, offset: u64, data: &[u8]) -> Result<()> {
        self.buffer_with(dst, offset, data.len() as u64, |bytes| {
            bytes.copy_from_slice(data)
        })
    }

    /// Like [`Uploader::buffer`], but `fill` writes the `size` bytes straight into staging
    /// memory (no copy of the data on the host). The slice holds whatever the memory held
    /// before: `fill` must write all of it.
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader, dst: &std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// up.buffer_with(dst, 0, 4096, |bytes| {
    ///     for (i, b) in bytes.iter_mut().enumerate() { *b = i as u8; }
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn buffer_with(
        &mut self,
        dst: &Arc<StBuffer>,
        offset: u64,
        size: u64,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<()> {
        let what = format!("Uploader: upload to `{}`", dst.name());
        if size == 0 {
            return Err(Error::InvalidInput(format!("{what}: no data to upload")));
        }
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
        let range = check_bytes(&what, offset, size, dst.size())?;
        let written = self.written.get(&dst.id());
        // The nearest earlier start: if it ends past our start, the ranges overlap; so do we
        // if the next start lies before our end.
        let overlaps = written.is_some_and(|w| {
            w.range(..range.end)
                .next_back()
                .is_some_and(|(_, &end)| end > range.start)
        });
        if overlaps {
            return Err(Error::InvalidRegion(format!(
                "{what}: bytes {range:?} overlap an earlier upload to it in this batch (flush first)"
            )));
        }
        let staged = self.ring.alloc(size, BUFFER_ALIGN, &self.lease)?;
        self.ring.write_with(staged, fill)?;
        self.written
            .entry(dst.id())
            .or_default()
            .insert(range.start, range.end);
        self.chunks_used.insert(staged.chunk);
        self.bytes += size;
        self.buffers.push(PendingBuffer {
            staged,
            dst: dst.clone(),
            dst_offset: offset,
        });
        Ok(())
    }

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
        let align = lcm(copy_offset_alignment(texel), BUFFER_ALIGN);
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
        self.chunks_used.insert(staged.chunk);
        self.bytes += size;
        self.images.push(copy);
        Ok(())
    }

    /// Uploads gathered since the last flush.
    ///
    /// ```no_run
    /// # fn f(up: &vk_baton_passes::Uploader) {
    /// if up.pending() > 0 { /* flush */ }
    /// # }
    /// ```
    pub fn pending(&self) -> usize {
        self.buffers.len() + self.images.len()
    }

    /// Ends the current batch: every upload since the last flush, as one pass. The uploader
    /// starts a new batch at once, so it can stage the next uploads while this one runs.
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader) {
    /// let batch = up.flush_pass();
    /// assert_eq!(up.pending(), 0);
    /// # }
    /// ```
    pub fn flush_pass(&mut self) -> UploadBatch {
        let lease = std::mem::replace(&mut self.lease, Arc::new(BatchLease));
        let mut pending = std::mem::take(&mut self.buffers);
        let images = std::mem::take(&mut self.images);
        let chunks_used = std::mem::take(&mut self.chunks_used);
        self.written.clear();
        self.images_written.clear();
        let uploads = pending.len() + images.len();
        let bytes = std::mem::take(&mut self.bytes);

        // One vkCmdCopyBuffer per (staging chunk, destination), each with all its regions.
        pending.sort_by_key(|p| (p.staged.chunk, p.dst.id()));
        let mut buffers: Vec<BufferCopies> = Vec::new();
        let mut writes: BTreeMap<u64, (Arc<StBuffer>, Vec<std::ops::Range<u64>>)> = BTreeMap::new();
        for p in pending {
            let region = vk::BufferCopy {
                src_offset: p.staged.offset,
                dst_offset: p.dst_offset,
                size: p.staged.size,
            };
            writes
                .entry(p.dst.id())
                .or_insert_with(|| (p.dst.clone(), Vec::new()))
                .1
                .push(p.dst_offset..p.dst_offset + p.staged.size);
            let same = buffers.last().is_some_and(|c| {
                c.dst.id() == p.dst.id()
                    && self
                        .ring
                        .buffer(p.staged.chunk)
                        .is_some_and(|b| b.id() == c.src.id())
            });
            if same {
                if let Some(c) = buffers.last_mut() {
                    c.regions.push(region);
                }
            } else if let Some(src) = self.ring.buffer(p.staged.chunk) {
                buffers.push(BufferCopies {
                    src: src.clone(),
                    dst: p.dst,
                    regions: vec![region],
                });
            }
        }
        let chunks = chunks_used
            .into_iter()
            .filter_map(|i| self.ring.buffer(i).cloned())
            .collect();
        UploadBatch {
            lease,
            chunks,
            buffers,
            writes: writes
                .into_values()
                .map(|(dst, ranges)| (dst, merge_bytes(ranges)))
                .collect(),
            images,
            uploads,
            bytes,
            ticket: UploadTicket::default(),
        }
    }

    /// Frees the staging bytes of batches that are done (staging does this itself; call it
    /// before reading [`Uploader::in_use`]).
    ///
    /// ```no_run
    /// # fn f(up: &mut vk_baton_passes::Uploader) {
    /// up.reclaim();
    /// println!("{} of {} staging bytes in use", up.in_use(), up.capacity());
    /// # }
    /// ```
    pub fn reclaim(&mut self) {
        self.ring.reclaim();
    }

    /// Total bytes of staging memory the ring holds.
    ///
    /// ```no_run
    /// # fn f(up: &vk_baton_passes::Uploader) {
    /// let bytes = up.capacity();
    /// # }
    /// ```
    pub fn capacity(&self) -> u64 {
        self.ring.capacity()
    }

    /// Staging bytes held by batches not known to be done (as of the last reclaim), padding
    /// included.
    ///
    /// ```no_run
    /// # fn f(up: &vk_baton_passes::Uploader) {
    /// let bytes = up.in_use();
    /// # }
    /// ```
    pub fn in_use(&self) -> u64 {
        self.ring.in_use()
    }

    /// How many staging buffers the ring has (1 until it first grows).
    ///
    /// ```no_run
    /// # fn f(up: &vk_baton_passes::Uploader) {
    /// let n = up.staging_buffers();
    /// # }
    /// ```
    pub fn staging_buffers(&self) -> usize {
        self.ring.chunk_count()
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
