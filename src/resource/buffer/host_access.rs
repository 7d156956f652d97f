//! [`StBuffer`]'s host access: reading and writing its mapped bytes, and the flushes and
//! invalidates non-coherent memory needs (see [`host`](crate::resource::host) for the mapping
//! and its ranges).

use crate::error::{Error, Result};
use crate::queue::Queue;
use crate::resource::host::{mapped_memory_range, HostMapping, HostMemory, Mapped};
use crate::resource::{StBuffer, Tracked, TrackedGuard};
use ash::vk;
use std::ops::Range;
use std::ptr::NonNull;

impl StBuffer {
    /// Wraps a buffer the app created, bound to memory the app mapped, in the state `initial`
    /// (use layout `UNDEFINED`). [`StBuffer::read`], [`StBuffer::write`],
    /// [`StBuffer::flush`] and [`StBuffer::invalidate`] then work as for the library's own
    /// buffers, covering only this buffer's bytes (rounded to `mapping.non_coherent_atom_size`).
    /// Fails if the buffer does not fit in the memory or the atom size is 0.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, raw: ash::vk::Buffer, mapping: vk_baton::HostMapping) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc, Destroy, ResourceState, StBuffer};
    /// let desc = BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_SRC);
    /// // SAFETY: `raw` is bound at `mapping.offset` of `mapping.memory`, which stays mapped.
    /// let b = unsafe {
    ///     StBuffer::from_raw_mapped(device, raw, desc, "staging", ResourceState::undefined(), Destroy::AppKeeps, mapping)?
    /// };
    /// b.write(0, &[1, 2, 3])?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// Everything [`StBuffer::from_raw`] needs, and: `handle` is bound to `mapping.memory` at
    /// `mapping.offset`; `mapping.ptr` points to that
    /// byte in a host mapping of the memory that covers at least the buffer's bytes rounded
    /// outward to the atom size (mapping the whole memory does) and stays mapped while the
    /// buffer lives; `coherent` and `memory_size` are true of the memory. Other host access to
    /// these bytes is the app's to synchronize.
    pub unsafe fn from_raw_mapped(
        device: &ash::Device,
        handle: vk::Buffer,
        desc: super::BufferDesc,
        name: &str,
        initial: super::ResourceState,
        destroy: super::Destroy,
        mapping: HostMapping,
    ) -> Result<Self> {
        if mapping.non_coherent_atom_size == 0 {
            return Err(Error::InvalidArgument(format!(
                "buffer `{name}`: non_coherent_atom_size 0"
            )));
        }
        if mapping
            .offset
            .checked_add(desc.size)
            .is_none_or(|end| end > mapping.memory_size)
        {
            return Err(Error::InvalidArgument(format!(
                "buffer `{name}`: {} bytes at offset {} do not fit in memory of {} bytes",
                desc.size, mapping.offset, mapping.memory_size
            )));
        }
        let mapped = Mapped::new(
            mapping.ptr,
            mapping.memory,
            mapping.memory_size,
            mapping.offset,
            desc.size,
            mapping.coherent,
            mapping.non_coherent_atom_size,
        );
        // SAFETY: the caller promised what `from_raw` needs (this function's contract holds it).
        let mut b = unsafe { Self::from_raw(device, handle, desc, name, initial, destroy) };
        b.mapped = Some(mapped);
        Ok(b)
    }

    /// Whether the buffer is host-visible and mapped.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// if b.is_mapped() { /* read/write work */ }
    /// # }
    /// ```
    pub fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }

    /// Where the buffer lives in its memory object and what flushes cover, if it is mapped.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) {
    /// if let Some(m) = b.host_memory() { println!("{:?} bytes {:?}", m.memory, m.atom_range); }
    /// # }
    /// ```
    pub fn host_memory(&self) -> Option<&HostMemory> {
        self.mapped.as_ref().map(|m| &m.memory)
    }

    /// The mapped bytes, invalidated first (on non-coherent memory) so that GPU writes are
    /// seen. Takes `&mut self`, so use it before sharing the `Arc` (or through
    /// `Arc::get_mut`); shared buffers use [`StBuffer::read`]. Fails with
    /// [`Error::InUseByGpu`] while a GPU write to the buffer is not known complete, and if the
    /// buffer is not host-visible or the invalidate fails.
    ///
    /// ```no_run
    /// # fn f(b: &mut vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// println!("{}", b.mapped_slice()?[0]);
    /// # Ok(()) }
    /// ```
    pub fn mapped_slice(&mut self) -> Result<&[u8]> {
        let p = self.check(0, 0)?;
        let size = self.desc.size;
        gpu_done_with(&self.name, self.state.unlocked(), 0..size, false)?;
        self.invalidate()?;
        // SAFETY: the mapping covers `size` bytes and lives as long as `self`; `&mut self`
        // rules out host writes through `write` while the slice lives, and new GPU work on
        // the buffer (a graph needs an `Arc` of it); earlier GPU writes are complete.
        Ok(unsafe { std::slice::from_raw_parts(p.as_ptr(), self.desc.size as usize) })
    }

    /// The mapped bytes for writing. Takes `&mut self` (see [`StBuffer::mapped_slice`]). On
    /// non-coherent memory, call [`StBuffer::flush`] after writing (or use
    /// [`StBuffer::write`], which does). Fails with [`Error::InUseByGpu`] while a GPU read or
    /// write of the buffer is not known complete, and if the buffer is not host-visible.
    ///
    /// ```no_run
    /// # fn f(b: &mut vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// b.mapped_slice_mut()?.fill(0);
    /// b.flush()?;
    /// # Ok(()) }
    /// ```
    pub fn mapped_slice_mut(&mut self) -> Result<&mut [u8]> {
        let p = self.check(0, 0)?;
        let size = self.desc.size;
        gpu_done_with(&self.name, self.state.unlocked(), 0..size, true)?;
        // SAFETY: as in `mapped_slice`, GPU reads are complete too, and `&mut self` makes
        // the slice unique.
        Ok(unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), self.desc.size as usize) })
    }

    fn check(&self, offset: u64, len: usize) -> Result<NonNull<u8>> {
        let m = self.mapped.as_ref().ok_or_else(|| {
            Error::InvalidArgument(format!("buffer `{}` is not host-visible", self.name))
        })?;
        if offset
            .checked_add(len as u64)
            .is_none_or(|e| e > self.desc.size)
        {
            return Err(Error::InvalidArgument(format!(
                "bytes {offset}..+{len} lie outside buffer `{}` of {} bytes",
                self.name, self.desc.size
            )));
        }
        Ok(m.ptr)
    }

    /// Copies `data` into the mapped buffer at `offset`, then flushes the buffer's bytes on
    /// non-coherent memory. Fails with [`Error::InUseByGpu`] while GPU work that reads or
    /// writes those bytes is not known complete (wait for its fence), and if the buffer is not
    /// host-visible, the range lies outside it, or the flush fails.
    ///
    /// The check makes host writes safe: the tracked state names every queue and timeline
    /// value that used the bytes, and no graph can submit work on the buffer during the copy.
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// b.write(0, &42u32.to_le_bytes())?;
    /// # Ok(()) }
    /// ```
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        let p = self.check(offset, data.len())?;
        let _host = self.host.lock();
        let _idle = self.idle_for_host(offset, data.len(), true)?;
        // SAFETY: the range was checked to lie inside the mapping; the host lock excludes
        // other host access through `read`/`write`; the GPU is done with the bytes and cannot
        // start on them while `_idle` is held; `data` cannot alias device memory.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                p.as_ptr().add(offset as usize),
                data.len(),
            )
        };
        self.flush_locked()
    }

    /// Copies bytes at `offset` out of the mapped buffer into `out`, after invalidating the
    /// buffer's bytes on non-coherent memory. Fails with [`Error::InUseByGpu`] while a GPU
    /// write of those bytes is not known complete (wait for the graph's fence; GPU reads may
    /// go on), and if the buffer is not host-visible, the range lies outside it, or the
    /// invalidate fails. Once the host saw the execution's [`ExecutionFence`](crate::ExecutionFence)
    /// signalled (`wait`, `wait_timeout`, `is_complete`), it does not wait; before that it waits
    /// up to 100 ms for the queue's timeline before it fails (as `write` and the mapped slices
    /// do).
    ///
    /// ```no_run
    /// # fn f(b: &vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// let mut v = [0u8; 4];
    /// b.read(0, &mut v)?;
    /// # Ok(()) }
    /// ```
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let p = self.check(offset, out.len())?;
        let _host = self.host.lock();
        let _idle = self.idle_for_host(offset, out.len(), false)?;
        self.invalidate_locked()?;
        // SAFETY: as in `write`; GPU reads of the bytes may run meanwhile, writes cannot.
        unsafe {
            std::ptr::copy_nonoverlapping(
                p.as_ptr().add(offset as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }

    /// Makes host writes to the buffer's bytes available to the device
    /// (`vkFlushMappedMemoryRanges` over [`HostMemory::atom_range`]); nothing on coherent
    /// memory. Fails if the buffer is not host-visible or the flush fails.
    ///
    /// ```no_run
    /// # fn f(b: &mut vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// b.mapped_slice_mut()?[0] = 7;
    /// b.flush()?;
    /// # Ok(()) }
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.check(0, 0)?;
        let _host = self.host.lock();
        self.flush_locked()
    }

    /// Makes device writes to the buffer's bytes visible to the host
    /// (`vkInvalidateMappedMemoryRanges` over [`HostMemory::atom_range`]); nothing on
    /// coherent memory. Fails if the buffer is not host-visible or the invalidate fails.
    ///
    /// ```no_run
    /// # fn f(b: &mut vk_baton::StBuffer) -> vk_baton::Result<()> {
    /// b.invalidate()?;
    /// # Ok(()) }
    /// ```
    pub fn invalidate(&self) -> Result<()> {
        self.check(0, 0)?;
        let _host = self.host.lock();
        self.invalidate_locked()
    }

    /// The tracked state, locked, once the GPU is done with `len` bytes at `offset` (see
    /// [`gpu_done_with`]). Every submission that uses the buffer holds this lock while it
    /// submits, so none can start while the guard lives.
    fn idle_for_host(
        &self,
        offset: u64,
        len: usize,
        host_writes: bool,
    ) -> Result<TrackedGuard<'_>> {
        let tracked = self.tracked().lock();
        let bytes = offset..offset + len as u64;
        gpu_done_with(&self.name, &tracked, bytes, host_writes)?;
        Ok(tracked)
    }

    fn range(&self) -> Option<vk::MappedMemoryRange<'static>> {
        self.mapped
            .as_ref()
            .and_then(|m| mapped_memory_range(&m.memory))
    }

    fn flush_locked(&self) -> Result<()> {
        let Some(r) = self.range() else { return Ok(()) };
        // SAFETY: the range lies inside the memory's host mapping (gpu-allocator maps its
        // blocks whole; `from_raw_mapped`'s caller promised as much) and is atom-aligned.
        unsafe { self.device.flush_mapped_memory_ranges(&[r]) }
            .map_err(|e| Error::vk("vkFlushMappedMemoryRanges", e))
    }

    fn invalidate_locked(&self) -> Result<()> {
        let Some(r) = self.range() else { return Ok(()) };
        // SAFETY: as in `flush_locked`.
        unsafe { self.device.invalidate_mapped_memory_ranges(&[r]) }
            .map_err(|e| Error::vk("vkInvalidateMappedMemoryRanges", e))
    }
}

/// How long host access waits for a timeline whose value the host has not seen through a
/// fence.
const TIMELINE_LAG_NS: u64 = 100_000_000;

/// Refuses host access to `bytes` of buffer `name` while the GPU may still use them: the last
/// GPU write there, and for a host write also the GPU reads since, must have reached their
/// queue's timeline value. Value 0 (an access the app declared) counts as complete, as
/// [`StBuffer::declare_state`]'s contract says.
fn gpu_done_with(
    name: &str,
    tracked: &Tracked,
    bytes: Range<u64>,
    host_writes: bool,
) -> Result<()> {
    // A timeline value each queue must have reached; at most a few queues.
    let mut needed: Vec<(&Queue, Option<u64>)> = Vec::new();
    for (cells, seg) in &tracked.segments {
        if cells.end <= bytes.start || bytes.end <= cells.start {
            continue;
        }
        let reads = seg.reads.iter().filter(|_| host_writes);
        for r in seg.write.iter().chain(reads) {
            match needed.iter_mut().find(|(q, _)| *q == &r.queue) {
                // `None` (never left in a committed state) waits for nothing known: refuse.
                Some((_, v)) => *v = v.zip(r.value).map(|(a, b)| a.max(b)),
                None => needed.push((&r.queue, r.value)),
            }
        }
    }
    for (queue, value) in needed {
        let done = match value {
            Some(0) => true,
            Some(v) => known_reached(queue, v)?,
            None => false,
        };
        if !done {
            return Err(Error::InUseByGpu {
                resource: name.to_owned(),
            });
        }
    }
    Ok(())
}

/// Whether `queue`'s timeline has reached `value`, asking the timeline only when the host has
/// not seen it through one of the library's fences.
///
/// The fences come first, and not only because they cost nothing: a timeline query
/// (`vkGetSemaphoreCounterValue`, `vkWaitSemaphores`) is a host wait to the validation layer,
/// and layer 1.4.363 then retires the timeline's queue's work alone and reports a hazard on
/// later work that a semaphore chain through another queue orders (a false positive; see
/// `tests/layer_false_positives.rs` and `docs/testing.md`). A fence wait does not, since
/// 1.4.340. The timeline may also signal a moment after the execution's fence (Vulkan does
/// not order the two signals), which [`Queue::host_complete`] does not wait for.
///
/// Otherwise, wait briefly: a read of work that completes right now succeeds, while a read of
/// work still running fails soon.
fn known_reached(queue: &Queue, value: u64) -> Result<bool> {
    Ok(queue.host_complete() >= value
        || queue.completed_value()? >= value
        || queue.wait_value(value, TIMELINE_LAG_NS)?)
}

#[cfg(test)]
mod tests {
    use crate::plan::{Recorded, SegmentState};
    use crate::{BufferDesc, Context, Error};
    use ash::vk;

    /// A read of a buffer whose last write the host knows complete through the library's
    /// fences ([`crate::Queue::host_complete`]) succeeds at once, without asking the timeline,
    /// which may lag the fence (here it never signals at all).
    #[test]
    fn a_write_seen_complete_through_a_fence_needs_no_timeline_query() {
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        let buf = ctx
            .buffer(BufferDesc::readback(16, usage), "readback")
            .unwrap();
        let queue = ctx.graphics().clone();
        // A value handed out that nothing signals: the timeline stays below it.
        let value = queue.lock().next_value();
        let write = Recorded {
            queue: queue.clone(),
            value: Some(value),
            stages: vk::PipelineStageFlags2::COPY,
            access: vk::AccessFlags2::TRANSFER_WRITE,
        };
        let state = SegmentState {
            defined: true,
            write: Some(write),
            ..SegmentState::default()
        };
        buf.tracked().lock().commit(vec![(0..16, state)]);
        let mut out = [0u8; 16];
        assert!(
            matches!(buf.read(0, &mut out), Err(Error::InUseByGpu { .. })),
            "nothing says the write is complete yet"
        );
        queue.note_host_complete(value);
        buf.read(0, &mut out)
            .expect("the host saw the write complete");
    }
}
