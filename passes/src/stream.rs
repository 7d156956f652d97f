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
//! # fn f(ctx: &vk_baton_context::Context, mesh: std::sync::Arc<vk_baton::StBuffer>, tex: std::sync::Arc<vk_baton::StImage>,
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
mod images;
mod ring;
mod written;

pub use batch::{UploadBatch, UploadTicket};

use crate::copy::CopyBufferToImage;
use crate::error::{Error, Result};
use crate::util::{check_bytes, merge_bytes};
use ash::vk;
use batch::BufferCopies;
use ring::{BatchLease, Staged, StagingRing};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use vk_baton::{SharedAllocator, StBuffer};
use written::WrittenRanges;

/// The alignment of a buffer upload's staging bytes (copies of aligned data run faster).
pub(crate) const BUFFER_ALIGN: u64 = 16;

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
/// # fn f(ctx: &vk_baton_context::Context, dst: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
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
    /// Per destination buffer, the byte ranges written in this batch.
    written: WrittenRanges,
    images_written: HashSet<u64>,
    chunks_used: BTreeSet<usize>,
    /// The chunk inserted into `chunks_used` last (most uploads of a batch share one).
    last_chunk: Option<usize>,
    bytes: u64,
}

impl Uploader {
    /// An uploader whose staging ring starts with `initial_capacity` bytes and grows without
    /// limit (but for allocation failures, which are errors). Fails if the capacity is 0 or
    /// the staging buffer cannot be allocated.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton_passes::Result<()> {
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
    /// # fn f(ctx: &vk_baton_context::Context) -> vk_baton_passes::Result<()> {
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
            written: WrittenRanges::default(),
            images_written: HashSet::new(),
            chunks_used: BTreeSet::new(),
            last_chunk: None,
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
        // Built only on error: this path runs for every small upload.
        let what = || format!("Uploader: upload to `{}`", dst.name());
        if size == 0 {
            return Err(Error::InvalidInput(format!(
                "{}: no data to upload",
                what()
            )));
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
        let range = match offset.checked_add(size) {
            Some(end) if end <= dst.size() => offset..end,
            _ => check_bytes(&what(), offset, size, dst.size())?,
        };
        if self.written.overlaps(dst.id(), &range) {
            return Err(Error::InvalidRegion(format!(
                "{}: bytes {range:?} overlap an earlier upload to it in this batch (flush first)",
                what()
            )));
        }
        let staged = self.ring.alloc(size, BUFFER_ALIGN, &self.lease)?;
        self.ring.write_with(staged, fill)?;
        self.written.record(range);
        self.use_chunk(staged.chunk);
        self.bytes += size;
        self.buffers.push(PendingBuffer {
            staged,
            dst: dst.clone(),
            dst_offset: offset,
        });
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

    /// Notes that the batch stages bytes in chunk `chunk`.
    fn use_chunk(&mut self, chunk: usize) {
        if self.last_chunk != Some(chunk) {
            self.chunks_used.insert(chunk);
            self.last_chunk = Some(chunk);
        }
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
        self.last_chunk = None;
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
