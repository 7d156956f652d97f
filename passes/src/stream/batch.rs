//! [`UploadBatch`]: the one pass that carries every upload an [`Uploader`](super::Uploader)
//! gathered, and [`UploadTicket`], which tells when they are done.

use super::ring::BatchLease;
use crate::copy::CopyBufferToImage;
use crate::error::{Error, Result};
use ash::vk;
use parking_lot::Mutex;
use std::sync::Arc;
use vk_baton::{Access, BufferRange, CompletionToken, Declare, Pass, Recorder, StBuffer};

/// Reports when an upload batch's copies have completed on the GPU: cheap to clone, and it
/// outlives the batch's pass. Before the batch has been recorded into an execution it knows
/// nothing yet ([`UploadTicket::check`] returns [`Error::NotExecuted`]).
///
/// A consumer in the same graph needs no ticket: the graph orders it after the batch, with
/// the barriers, ownership transfers and semaphores the destination's new queue needs. The
/// ticket is for the host and for work outside the graph; the execution's
/// [`ExecutionFence`](vk_baton::ExecutionFence) tells the same.
///
/// ```no_run
/// # fn f(t: vk_baton_passes::UploadTicket) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::Error;
/// match t.check() {
///     Ok(()) => println!("every upload of the batch landed"),
///     Err(Error::NotReady) => println!("still copying"),
///     Err(e) => return Err(e), // never recorded, or the execution failed
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct UploadTicket(Arc<Mutex<Option<CompletionToken>>>);

impl UploadTicket {
    /// The completion token of the last execution that recorded the batch, if any did.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton_passes::UploadTicket) {
    /// if let Some(token) = t.completion() { let _ = token.is_complete(); }
    /// # }
    /// ```
    pub fn completion(&self) -> Option<CompletionToken> {
        self.0.lock().clone()
    }

    /// Whether the batch was recorded and its execution has completed. Never blocks.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton_passes::UploadTicket) {
    /// while !t.is_complete() { std::thread::yield_now(); }
    /// # }
    /// ```
    pub fn is_complete(&self) -> bool {
        self.completion().is_some_and(|t| t.is_complete())
    }

    /// `Ok(())` once the copies have completed; [`Error::NotReady`] while they run;
    /// [`Error::NotExecuted`] before the batch is recorded or when its execution failed
    /// before reaching the GPU.
    ///
    /// ```no_run
    /// # fn f(t: &vk_baton_passes::UploadTicket) -> vk_baton_passes::Result<()> {
    /// t.check()?;
    /// # Ok(()) }
    /// ```
    pub fn check(&self) -> Result<()> {
        let token = self
            .completion()
            .ok_or_else(|| Error::NotExecuted("upload batch".into()))?;
        token.check().map_err(|e| match e {
            vk_baton::Error::NotReady => Error::NotReady,
            vk_baton::Error::NotExecuted => Error::NotExecuted("upload batch".into()),
            e => Error::Core(e),
        })
    }

    pub(crate) fn set(&self, token: CompletionToken) {
        *self.0.lock() = Some(token);
    }
}

/// `vkCmdCopyBuffer` regions from one staging chunk into one destination buffer.
#[derive(Debug)]
pub(crate) struct BufferCopies {
    pub(crate) src: Arc<StBuffer>,
    pub(crate) dst: Arc<StBuffer>,
    pub(crate) regions: Vec<vk::BufferCopy>,
}

/// The pass [`Uploader::flush_pass`](super::Uploader::flush_pass) returns: every upload
/// gathered since the last flush, as copies out of the staging ring, recorded into one command
/// buffer on the queue it is inserted on (normally `ctx.transfer()`).
///
/// It declares only the destinations: [`Access::COPY_WRITE`] on exactly the bytes, and the
/// mip levels and layers, it writes, each discarded (the upload overwrites it whole). The
/// graph moves every destination to its next user's state and queue family, so when the next
/// users run on another family, one release batch after this pass covers all of them. The
/// staging bytes are the ring's own and stay reserved until the pass is dropped and every
/// execution that recorded it has completed.
///
/// ```no_run
/// # fn f(ctx: &vk_baton_context::Context, up: &mut vk_baton_passes::Uploader) -> vk_baton_passes::Result<()> {
/// let mut batch = up.flush_pass();
/// let ticket = batch.ticket();
/// let graph = ctx.graph()?;
/// let fence = graph.record().insert_pass("uploads", &mut batch, ctx.transfer()).finish()?.execute()?;
/// fence.wait()?;
/// assert!(ticket.is_complete());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct UploadBatch {
    pub(crate) lease: Arc<BatchLease>,
    pub(crate) chunks: Vec<Arc<StBuffer>>,
    pub(crate) buffers: Vec<BufferCopies>,
    /// Per destination buffer, the merged byte ranges written.
    pub(crate) writes: Vec<(Arc<StBuffer>, Vec<BufferRange>)>,
    pub(crate) images: Vec<CopyBufferToImage>,
    pub(crate) uploads: usize,
    pub(crate) bytes: u64,
    pub(crate) ticket: UploadTicket,
}

impl UploadBatch {
    /// A ticket that reports when this batch's copies have completed.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton_passes::UploadBatch) {
    /// let t = b.ticket();
    /// # }
    /// ```
    pub fn ticket(&self) -> UploadTicket {
        self.ticket.clone()
    }

    /// How many uploads (buffer ranges and images) the batch carries.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton_passes::UploadBatch) {
    /// println!("{} uploads, {} bytes", b.len(), b.bytes());
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.uploads
    }

    /// Whether the batch carries no upload (its pass then records nothing).
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton_passes::UploadBatch) {
    /// if b.is_empty() { return; }
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.uploads == 0
    }

    /// Staged bytes in the batch (without alignment padding).
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton_passes::UploadBatch) {
    /// let n = b.bytes();
    /// # }
    /// ```
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Pass for UploadBatch {
    fn declare(&self, d: &mut Declare<'_>) {
        for (dst, ranges) in &self.writes {
            for r in ranges {
                d.uses(dst, Access::COPY_WRITE).range(*r).discard();
            }
        }
        for img in &self.images {
            img.declare_image(d);
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: {} uploads, {} bytes",
            r.pass_name(),
            self.uploads,
            self.bytes
        );
        for c in &self.buffers {
            // SAFETY: the staging chunk is kept alive below until the GPU is done, and the
            // host wrote its bytes before the submit; the destination ranges were checked to
            // lie inside the destination, not to overlap each other, and are ordered by the
            // graph through this pass's declarations.
            unsafe {
                r.device()
                    .cmd_copy_buffer(r.cmd(), c.src.handle(), c.dst.handle(), &c.regions)
            };
        }
        for img in &mut self.images {
            img.record(r)?;
        }
        // The ring frees these bytes only once every execution holding the lease is done.
        r.keep_alive(self.lease.clone());
        r.keep_alive(self.chunks.clone());
        self.ticket.set(r.completion());
        Ok(())
    }
}
