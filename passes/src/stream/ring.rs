//! The staging ring behind [`Uploader`](super::Uploader): a few large host-visible,
//! persistently mapped buffers ("chunks"), each used as a ring of spans.
//!
//! Every span belongs to one upload batch and is tagged with a [`Weak`] reference to the
//! batch's [`BatchLease`]. The lease is held by the batch's pass and, through
//! [`Recorder::keep_alive`](vk_baton::Recorder::keep_alive), by every execution that recorded
//! the pass, so its strong count drops to zero exactly when the pass is gone and the GPU has
//! finished every copy out of the span (the execution fence releases what it keeps only after
//! its `VkFence`s signal). Spans are freed in order from the tail of each chunk; a chunk whose
//! spans are all free starts over at byte 0. When no chunk has room, the ring grows by a new
//! chunk, up to a maximum total capacity.

use crate::error::{Error, Result};
use ash::vk;
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};
use vk_baton::{BufferDesc, SharedAllocator, StBuffer};

/// The flush granularity for non-coherent memory: a multiple of every device's
/// `nonCoherentAtomSize` (the spec caps it at 256, and it is a power of two).
const ATOM: u64 = 256;

/// Alive while a batch's staging bytes may still be read: held by the batch's pass and by every
/// execution that recorded it.
#[derive(Debug, Default)]
pub(crate) struct BatchLease;

/// Bytes `start..end` of a chunk, in use until `lease` dies.
#[derive(Debug)]
struct Span {
    start: u64,
    end: u64,
    lease: Weak<BatchLease>,
}

/// One persistently mapped staging buffer, used as a ring.
#[derive(Debug)]
struct Chunk {
    buffer: Arc<StBuffer>,
    /// The first byte of `buffer`'s mapping.
    ptr: NonNull<u8>,
    size: u64,
    /// One past the newest span (0 when there is none).
    head: u64,
    /// Live spans, oldest first.
    spans: VecDeque<Span>,
}

// SAFETY: `ptr` points into the mapping that `buffer` owns and keeps alive; the ring writes
// through it only with `&mut self`, and only into spans it has just handed out, which no other
// host code touches (the buffer never leaves the ring except to be kept alive for the GPU).
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`: nothing is reachable through `&Chunk` that writes through `ptr`.
unsafe impl Sync for Chunk {}

fn align_up(v: u64, align: u64) -> Option<u64> {
    v.checked_next_multiple_of(align.max(1))
}

impl Chunk {
    /// A new, empty chunk of `size` bytes.
    fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        size: u64,
        name: &str,
    ) -> Result<Self> {
        let mut buffer = StBuffer::new(
            device,
            allocator,
            BufferDesc::upload(size, vk::BufferUsageFlags::TRANSFER_SRC),
            name,
        )?;
        // The mapping is persistent: gpu-allocator maps host-visible blocks for their lifetime.
        let ptr = NonNull::new(buffer.mapped_slice_mut()?.as_mut_ptr()).ok_or_else(|| {
            Error::InvalidInput(format!("`{name}`: the allocator returned a null mapping"))
        })?;
        log::debug!("{name}: {size} bytes of staging memory");
        Ok(Self {
            buffer: Arc::new(buffer),
            ptr,
            size,
            head: 0,
            spans: VecDeque::new(),
        })
    }

    /// Drops the spans at the tail whose batches are done.
    fn reclaim(&mut self) {
        reclaim_spans(&mut self.spans, &mut self.head);
    }

    /// Room for `size` bytes at a multiple of `align`, taken for `lease`; `None` if it does not
    /// fit now.
    fn alloc(&mut self, size: u64, align: u64, lease: &Arc<BatchLease>) -> Option<u64> {
        ring_alloc(
            &mut self.spans,
            &mut self.head,
            self.size,
            size,
            align,
            lease,
        )
    }

    fn in_use(&self) -> u64 {
        self.spans.iter().map(|s| s.end - s.start).sum()
    }
}

/// Where a staged upload lies: chunk `chunk`, bytes `offset..offset + size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Staged {
    pub(crate) chunk: usize,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

/// Host-visible staging memory, reused across executions and grown on demand.
pub(crate) struct StagingRing {
    device: ash::Device,
    allocator: SharedAllocator,
    chunks: Vec<Chunk>,
    initial: u64,
    max_capacity: u64,
}

impl std::fmt::Debug for StagingRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingRing")
            .field("chunks", &self.chunks)
            .field("max_capacity", &self.max_capacity)
            .finish_non_exhaustive()
    }
}

impl StagingRing {
    /// A ring with one chunk of `initial` bytes that may grow to `max_capacity` bytes in all.
    pub(crate) fn new(
        device: &ash::Device,
        allocator: &SharedAllocator,
        initial: u64,
        max_capacity: u64,
    ) -> Result<Self> {
        if initial == 0 {
            return Err(Error::InvalidInput(
                "Uploader: the initial staging capacity must be at least 1 byte".into(),
            ));
        }
        if max_capacity < initial {
            return Err(Error::InvalidInput(format!(
                "Uploader: the maximum staging capacity ({max_capacity} bytes) is below the initial one ({initial} bytes)"
            )));
        }
        let mut ring = Self {
            device: device.clone(),
            allocator: allocator.clone(),
            chunks: Vec::new(),
            initial,
            max_capacity,
        };
        ring.add_chunk(initial)?;
        Ok(ring)
    }

    fn add_chunk(&mut self, size: u64) -> Result<()> {
        let name = format!("staging ring chunk {}", self.chunks.len());
        let chunk = Chunk::new(&self.device, &self.allocator, size, &name)?;
        self.chunks.push(chunk);
        Ok(())
    }

    /// Takes `size` bytes at a multiple of `align` for the batch of `lease`, growing the ring if
    /// no chunk has room. Fails with [`Error::StagingFull`] when growing would pass the maximum
    /// capacity.
    pub(crate) fn alloc(
        &mut self,
        size: u64,
        align: u64,
        lease: &Arc<BatchLease>,
    ) -> Result<Staged> {
        for (i, chunk) in self.chunks.iter_mut().enumerate() {
            chunk.reclaim();
            if let Some(offset) = chunk.alloc(size, align, lease) {
                return Ok(Staged {
                    chunk: i,
                    offset,
                    size,
                });
            }
        }
        let capacity = self.capacity();
        let room = self.max_capacity.saturating_sub(capacity);
        // Grow geometrically (double the total) so a stream settles after a few chunks.
        let want = size.max(capacity).max(self.initial);
        let i = if room >= size {
            self.add_chunk(want.min(room))?;
            self.chunks.len() - 1
        } else {
            // No room to grow: an idle chunk may give its share to a larger one, in place (so
            // the pending batch's chunk indices stay valid). Executions that recorded the old
            // one keep its buffer alive themselves.
            let idle = self
                .chunks
                .iter()
                .enumerate()
                .filter(|(_, c)| c.spans.is_empty() && c.size + room >= size)
                .max_by_key(|(_, c)| c.size)
                .map(|(i, c)| (i, c.size));
            let Some((i, old)) = idle else {
                return Err(Error::StagingFull {
                    requested: size,
                    in_use: self.in_use(),
                    capacity,
                    max_capacity: self.max_capacity,
                });
            };
            // Free the idle chunk first, so the replacement never needs both in memory.
            self.chunks[i].spans.clear();
            let name = format!("staging ring chunk {i}");
            self.chunks[i] = Chunk::new(&self.device, &self.allocator, old + room, &name)?;
            i
        };
        let offset = self.chunks[i]
            .alloc(size, align, lease)
            .ok_or_else(|| Error::InvalidInput("a new staging chunk has no room".into()))?;
        Ok(Staged {
            chunk: i,
            offset,
            size,
        })
    }

    /// Lets `fill` write the bytes of `staged`, then makes them visible to the device.
    pub(crate) fn write_with(
        &mut self,
        staged: Staged,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<()> {
        let chunk = self
            .chunks
            .get_mut(staged.chunk)
            .ok_or_else(|| Error::InvalidInput("no such staging chunk".into()))?;
        let in_span = staged
            .offset
            .checked_add(staged.size)
            .is_some_and(|end| end <= chunk.size)
            && chunk
                .spans
                .iter()
                .any(|s| s.start <= staged.offset && staged.offset + staged.size <= s.end);
        if !in_span {
            return Err(Error::InvalidInput(format!(
                "staging bytes {}..+{} are not a live span of chunk {}",
                staged.offset, staged.size, staged.chunk
            )));
        }
        // SAFETY: the bytes lie inside the chunk's mapping (checked above) and inside a span
        // handed out for the current batch, which neither the GPU (no execution has recorded
        // it yet) nor other host code uses; `&mut self` makes the slice unique.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                chunk.ptr.as_ptr().add(staged.offset as usize),
                staged.size as usize,
            )
        };
        fill(bytes);
        let Some(mem) = chunk.buffer.host_memory() else {
            return Ok(());
        };
        if mem.coherent {
            return Ok(());
        }
        let start = (mem.offset + staged.offset) / ATOM * ATOM;
        let end = (mem.offset + staged.offset + staged.size)
            .div_ceil(ATOM)
            .saturating_mul(ATOM)
            .min(mem.atom_range.end);
        let range = vk::MappedMemoryRange::default()
            .memory(mem.memory)
            .offset(start.max(mem.atom_range.start))
            .size(end - start.max(mem.atom_range.start));
        // SAFETY: the range lies inside the buffer's atom range of its mapped memory, starts
        // at a multiple of the atom size and ends at one or at the memory's end.
        unsafe { self.device.flush_mapped_memory_ranges(&[range]) }
            .map_err(|e| Error::vk("vkFlushMappedMemoryRanges", e))
    }

    /// The buffer of chunk `i`.
    pub(crate) fn buffer(&self, i: usize) -> Option<&Arc<StBuffer>> {
        self.chunks.get(i).map(|c| &c.buffer)
    }

    /// Frees the spans of finished batches now (allocation does this too).
    pub(crate) fn reclaim(&mut self) {
        self.chunks.iter_mut().for_each(Chunk::reclaim);
    }

    /// Total bytes of staging memory.
    pub(crate) fn capacity(&self) -> u64 {
        self.chunks.iter().map(|c| c.size).sum()
    }

    /// Bytes held by batches not yet finished (as of the last reclaim).
    pub(crate) fn in_use(&self) -> u64 {
        self.chunks.iter().map(Chunk::in_use).sum()
    }

    /// How many chunks (staging buffers) the ring has.
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.len()
    }
}

/// Drops the spans at the tail of a ring whose batches are done; an empty ring starts over at 0.
fn reclaim_spans(spans: &mut VecDeque<Span>, head: &mut u64) {
    while spans.front().is_some_and(|s| s.lease.strong_count() == 0) {
        spans.pop_front();
    }
    if spans.is_empty() {
        *head = 0;
    }
}

/// The ring rule of [`Chunk::alloc`] (a free function, so it is unit-tested without a GPU):
/// finds room for `size` bytes at a multiple of `align` in a ring of `chunk_size` bytes whose
/// live spans are `spans` (oldest first) and whose newest span ends at `head`, and takes it
/// for `lease`.
fn ring_alloc(
    spans: &mut VecDeque<Span>,
    head: &mut u64,
    chunk_size: u64,
    size: u64,
    align: u64,
    lease: &Arc<BatchLease>,
) -> Option<u64> {
    let start = match spans.front() {
        None => 0,
        // Not wrapped: live bytes are tail..head; free space after head, then before tail.
        Some(first) if *head > first.start => {
            let after = align_up(*head, align)?;
            if after.checked_add(size)? <= chunk_size {
                after
            } else if size <= first.start {
                0
            } else {
                return None;
            }
        }
        // Wrapped: the free space is head..tail.
        Some(first) => {
            let at = align_up(*head, align)?;
            if at.checked_add(size)? <= first.start {
                at
            } else {
                return None;
            }
        }
    };
    if size == 0 || start > chunk_size || size > chunk_size - start {
        return None;
    }
    let end = start + size;
    // Consecutive spans of one batch merge, so a batch of many small uploads is one span.
    match spans.back_mut() {
        Some(last)
            if last.end == *head
                && last.end <= start
                && std::ptr::eq(last.lease.as_ptr(), Arc::as_ptr(lease)) =>
        {
            last.end = end
        }
        _ => spans.push_back(Span {
            start,
            end,
            lease: Arc::downgrade(lease),
        }),
    }
    *head = end;
    Some(start)
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
