//! Device resources → host: [`DownloadBuffer`] and [`DownloadImage`], read through a
//! [`Download`] handle.
//!
//! The pass copies into a host-visible staging buffer (gpu-allocator, `GpuToCpu`) that it
//! declares to the graph as a discarded TRANSFER_WRITE, so the graph orders repeated
//! executions; after the copy it records its own barrier making the copy's writes available
//! to the host. The handle's [`Download::read`] returns the bytes only once the execution
//! that recorded the pass has completed: before the graph executes it gives
//! [`Error::NotExecuted`], before the GPU finishes [`Error::NotReady`]; never stale data.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, src: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
//! let mut down = vk_baton_passes::DownloadBuffer::whole(ctx.device(), ctx.allocator(), src)?;
//! let handle = down.handle();
//! let graph = ctx.graph()?;
//! let fence = graph.record().insert_pass("download", &mut down, ctx.transfer()).finish()?.execute()?;
//! fence.wait()?;
//! let bytes: Vec<u8> = handle.read()?;
//! # Ok(()) }
//! ```

use crate::copy::{packed_levels, CopyBuffer, CopyImageToBuffer};
use crate::error::{Error, Result};
use ash::vk;
use parking_lot::Mutex;
use std::sync::Arc;
use vk_baton::{
    BufferDesc, CompletionToken, Declare, Pass, Recorder, SharedAllocator, StBuffer, StImage,
};

struct Inner {
    name: String,
    staging: Arc<StBuffer>,
    latest: Mutex<Latest>,
}

/// The latest execution that recorded the pass.
#[derive(Debug, Default)]
struct Latest {
    /// Bumped each time an execution records the pass (before it can reach the GPU), so a
    /// read can tell that another execution started writing the staging buffer meanwhile.
    generation: u64,
    token: Option<CompletionToken>,
}

/// Runs `copy` between two `snapshot`s (the generation of the latest execution, once it
/// completed): the bytes are from one completed execution only if both snapshots succeed and
/// agree. A re-execution recorded in between (it may have overwritten part of the bytes)
/// gives [`Error::NotReady`]: its own bytes are not ready yet.
fn read_consistent(
    snapshot: impl Fn() -> Result<u64>,
    copy: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let before = snapshot()?;
    copy()?;
    if snapshot()? != before {
        return Err(Error::NotReady);
    }
    Ok(())
}

/// Reads a download's bytes once its execution has completed. Cheap to clone; outlives the
/// pass and the fence.
///
/// ```no_run
/// # fn f(h: &vk_baton_passes::Download) {
/// match h.read() {
///     Ok(bytes) => println!("{} bytes", bytes.len()),
///     Err(vk_baton_passes::Error::NotReady) => println!("GPU still busy"),
///     Err(e) => println!("{e}"),
/// }
/// # }
/// ```
#[derive(Clone)]
pub struct Download(Arc<Inner>);

impl Download {
    fn new(name: String, staging: Arc<StBuffer>) -> Self {
        Self(Arc::new(Inner {
            name,
            staging,
            latest: Mutex::new(Latest::default()),
        }))
    }

    /// Number of bytes the download returns.
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) {
    /// let n = h.len();
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.0.staging.size() as usize
    }

    /// Whether the download returns no bytes (never true: downloads are not empty).
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) {
    /// assert!(!h.is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Ok(())` when the latest execution of the pass has completed; otherwise
    /// [`Error::NotExecuted`] or [`Error::NotReady`].
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) {
    /// let ready = h.check().is_ok();
    /// # }
    /// ```
    pub fn check(&self) -> Result<()> {
        self.completed_generation().map(drop)
    }

    /// The generation of the latest execution, once it has completed.
    fn completed_generation(&self) -> Result<u64> {
        let (generation, token) = {
            let l = self.0.latest.lock();
            (l.generation, l.token.clone())
        };
        match token {
            None => Err(Error::NotExecuted(self.0.name.clone())),
            Some(t) => match t.check() {
                Ok(()) => Ok(generation),
                Err(vk_baton::Error::NotReady) => Err(Error::NotReady),
                Err(e) => Err(e.into()),
            },
        }
    }

    /// Whether [`Download::read`] would succeed now.
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) {
    /// while !h.is_ready() { std::thread::yield_now(); }
    /// # }
    /// ```
    pub fn is_ready(&self) -> bool {
        self.check().is_ok()
    }

    /// Copies the downloaded bytes into `out` (of exactly [`Download::len`] bytes).
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) -> vk_baton_passes::Result<()> {
    /// let mut v = vec![0u8; h.len()];
    /// h.read_into(&mut v)?;
    /// # Ok(()) }
    /// ```
    pub fn read_into(&self, out: &mut [u8]) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::InvalidInput(format!(
                "download `{}` holds {} bytes, the output {}",
                self.0.name,
                self.len(),
                out.len()
            )));
        }
        // An execution recorded while we copy (even one complete by the second look) may
        // have overwritten part of the bytes: compare generations, not just completion.
        read_consistent(
            || self.completed_generation(),
            || Ok(self.0.staging.read(0, out)?),
        )
    }

    /// The downloaded bytes, once the execution has completed.
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) -> vk_baton_passes::Result<()> {
    /// let bytes = h.read()?;
    /// # Ok(()) }
    /// ```
    pub fn read(&self) -> Result<Vec<u8>> {
        let mut v = vec![0u8; self.len()];
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Same as [`Download::read`].
    ///
    /// ```no_run
    /// # fn f(h: &vk_baton_passes::Download) -> vk_baton_passes::Result<()> {
    /// let bytes = h.bytes()?;
    /// # Ok(()) }
    /// ```
    pub fn bytes(&self) -> Result<Vec<u8>> {
        self.read()
    }

    fn recorded(&self, r: &Recorder<'_>) {
        let mut l = self.0.latest.lock();
        l.generation = l.generation.wrapping_add(1);
        l.token = Some(r.completion());
    }

    fn host_barrier(&self, r: &Recorder<'_>) {
        let b = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::HOST)
            .dst_access_mask(vk::AccessFlags2::HOST_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.0.staging.handle())
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        // SAFETY: the staging buffer is alive (declared to the graph, which keeps it); the
        // barrier only orders this pass's own copy before host reads.
        unsafe {
            r.device().cmd_pipeline_barrier2(
                r.cmd(),
                &vk::DependencyInfo::default().buffer_memory_barriers(&b),
            )
        };
    }
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Download(`{}`, {} bytes, {:?})",
            self.0.name,
            self.len(),
            self.0.latest.lock().token
        )
    }
}

fn readback(
    device: &ash::Device,
    allocator: &SharedAllocator,
    size: u64,
    name: &str,
) -> Result<Arc<StBuffer>> {
    Ok(Arc::new(StBuffer::new(
        device,
        allocator,
        BufferDesc::readback(size, vk::BufferUsageFlags::TRANSFER_DST),
        name,
    )?))
}

/// Downloads a byte range of a buffer.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, src: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let down = vk_baton_passes::DownloadBuffer::range(device, alloc, src, 64, 16)?;
/// let handle = down.handle();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DownloadBuffer {
    copy: CopyBuffer,
    handle: Download,
}

impl DownloadBuffer {
    /// Downloads the whole buffer.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, src: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let down = vk_baton_passes::DownloadBuffer::whole(device, alloc, src)?;
    /// # Ok(()) }
    /// ```
    pub fn whole(
        device: &ash::Device,
        allocator: &SharedAllocator,
        src: Arc<StBuffer>,
    ) -> Result<Self> {
        let size = src.size();
        Self::range(device, allocator, src, 0, size)
    }

    /// Downloads `size` bytes from `offset`. Fails when the range is empty or outside the
    /// buffer, or the buffer lacks TRANSFER_SRC usage.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, src: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let down = vk_baton_passes::DownloadBuffer::range(device, alloc, src, 0, 4)?;
    /// # Ok(()) }
    /// ```
    pub fn range(
        device: &ash::Device,
        allocator: &SharedAllocator,
        src: Arc<StBuffer>,
        offset: u64,
        size: u64,
    ) -> Result<Self> {
        crate::util::check_bytes("DownloadBuffer", offset, size, src.size())?;
        let name = format!("download of `{}`", src.name());
        let staging = readback(device, allocator, size, &name)?;
        let copy = CopyBuffer::regions(
            src,
            staging.clone(),
            &[vk::BufferCopy {
                src_offset: offset,
                dst_offset: 0,
                size,
            }],
        )?;
        Ok(Self {
            copy,
            handle: Download::new(name, staging),
        })
    }

    /// The handle to read the bytes through.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton_passes::DownloadBuffer) {
    /// let h = d.handle();
    /// # }
    /// ```
    pub fn handle(&self) -> Download {
        self.handle.clone()
    }
}

impl Pass for DownloadBuffer {
    fn declare(&self, d: &mut Declare<'_>) {
        self.copy.declare(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.copy.record(r)?;
        self.handle.host_barrier(r);
        self.handle.recorded(r);
        Ok(())
    }
}

/// Downloads mip levels and layers of an image, tightly packed.
///
/// ```no_run
/// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// let down = vk_baton_passes::DownloadImage::level(device, alloc, img, 0)?; // mip 0, every layer
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DownloadImage {
    copy: CopyImageToBuffer,
    handle: Download,
}

impl DownloadImage {
    /// Every mip level and layer: level 0 (layer after layer, rows tightly packed), then
    /// level 1, and so on, each level starting at a multiple of `lcm(texel size, 4)` bytes
    /// (the layout [`crate::UploadImage::new`] takes).
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let down = vk_baton_passes::DownloadImage::all_levels(device, alloc, img)?;
    /// # Ok(()) }
    /// ```
    pub fn all_levels(
        device: &ash::Device,
        allocator: &SharedAllocator,
        src: Arc<StImage>,
    ) -> Result<Self> {
        let (regions, _) = packed_levels(&src)?;
        Self::regions(device, allocator, src, &regions)
    }

    /// One mip level, every layer, tightly packed.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let down = vk_baton_passes::DownloadImage::level(device, alloc, img, 2)?;
    /// # Ok(()) }
    /// ```
    pub fn level(
        device: &ash::Device,
        allocator: &SharedAllocator,
        src: Arc<StImage>,
        level: u32,
    ) -> Result<Self> {
        let (regions, _) = packed_levels(&src)?;
        let mut r = *regions.get(level as usize).ok_or_else(|| {
            Error::InvalidRegion(format!(
                "mip level {level} of `{}` with {} levels",
                src.name(),
                src.desc().mip_levels
            ))
        })?;
        r.buffer_offset = 0;
        Self::regions(device, allocator, src, &[r])
    }

    /// The given regions; the staging buffer is sized to the furthest byte any region writes,
    /// and the regions' `buffer_offset`s address the bytes [`Download::read`] returns.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let down = vk_baton_passes::DownloadImage::regions(device, alloc, img, &[vk::BufferImageCopy {
    ///     buffer_offset: 0, buffer_row_length: 0, buffer_image_height: 0,
    ///     image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::DEPTH, mip_level: 0, base_array_layer: 0, layer_count: 1 },
    ///     image_offset: vk::Offset3D::default(),
    ///     image_extent: vk::Extent3D { width: 16, height: 16, depth: 1 },
    /// }])?;
    /// # Ok(()) }
    /// ```
    pub fn regions(
        device: &ash::Device,
        allocator: &SharedAllocator,
        src: Arc<StImage>,
        regions: &[vk::BufferImageCopy],
    ) -> Result<Self> {
        // Regions are checked against the image before they size the staging buffer: a
        // hostile region is an error, not a huge allocation or an overflow.
        let mut size = 0u64;
        for r in regions {
            crate::util::check_image_region(
                "DownloadImage",
                src.desc(),
                &r.image_subresource,
                r.image_offset,
                r.image_extent,
            )?;
            size = size.max(crate::util::buffer_image_bytes(src.desc().format, r)?.end);
        }
        if size == 0 {
            return Err(Error::InvalidRegion("DownloadImage: no regions".into()));
        }
        let name = format!("download of `{}`", src.name());
        let staging = readback(device, allocator, size, &name)?;
        let copy = CopyImageToBuffer::regions(src, staging.clone(), regions)?;
        Ok(Self {
            copy,
            handle: Download::new(name, staging),
        })
    }

    /// The handle to read the bytes through.
    ///
    /// ```no_run
    /// # fn f(d: &vk_baton_passes::DownloadImage) {
    /// let h = d.handle();
    /// # }
    /// ```
    pub fn handle(&self) -> Download {
        self.handle.clone()
    }
}

impl Pass for DownloadImage {
    fn declare(&self, d: &mut Declare<'_>) {
        self.copy.declare(d);
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.copy.record(r)?;
        self.handle.host_barrier(r);
        self.handle.recorded(r);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_read_racing_a_re_execution_is_refused() {
        // No execution recorded meanwhile: the bytes stand.
        let generation = Cell::new(3u64);
        assert!(read_consistent(|| Ok(generation.get()), || Ok(())).is_ok());
        // A new execution recorded (and even completed) during the copy: refused, although
        // both snapshots say "complete".
        let r = read_consistent(
            || Ok(generation.get()),
            || {
                generation.set(4);
                Ok(())
            },
        );
        assert!(matches!(r, Err(Error::NotReady)));
        // The new execution still running at the second look: refused as well.
        let running = Cell::new(false);
        let r = read_consistent(
            || {
                if running.get() {
                    Err(Error::NotReady)
                } else {
                    Ok(1)
                }
            },
            || {
                running.set(true);
                Ok(())
            },
        );
        assert!(matches!(r, Err(Error::NotReady)));
        // Not ready before: nothing is copied.
        let copied = Cell::new(false);
        let r = read_consistent(
            || Err(Error::NotReady),
            || {
                copied.set(true);
                Ok(())
            },
        );
        assert!(r.is_err() && !copied.get());
    }
}
