//! The hand-written side: raw ash on vk-baton's device, one command buffer per frame, the
//! fewest correct barriers (`benches/frame.rs`'s model), and with `--variants` the same frame
//! with other barrier encodings, to find which encoding a driver runs fastest.

use crate::timer::{FrameTimer, Stamps};
use crate::workload::{read_of, record_pass, write_of, BUFFERS, BUFFER_SIZE};
use ash::vk;
use vk_baton::Queue;

/// The queue a hand-written side submits to, behind its owner's lock.
pub enum HandQueue {
    /// A vk-baton queue (vk-baton's device).
    Baton(Queue),
    /// Queue 0 of `family` on vk-graph's device.
    Peer(vk_graph::driver::device::Device, u32),
}

impl HandQueue {
    fn family(&self) -> u32 {
        match self {
            HandQueue::Baton(q) => q.family(),
            HandQueue::Peer(_, family) => *family,
        }
    }

    /// `vkQueueSubmit2` under the queue's lock.
    ///
    /// # Safety
    /// `d` is the queue's device; every handle the submits name is alive.
    unsafe fn submit2(&self, d: &ash::Device, submits: &[vk::SubmitInfo2<'_>], fence: vk::Fence) {
        match self {
            HandQueue::Baton(q) => {
                let lock = q.lock();
                // SAFETY: the queue is locked; the caller's contract.
                unsafe { d.queue_submit2(lock.handle(), submits, fence) }.expect("submit");
            }
            HandQueue::Peer(device, family) => {
                vk_graph::driver::device::Device::with_queue(device, *family, 0, |q| {
                    // SAFETY: vk-graph holds the queue's lock while this runs; the caller's
                    // contract.
                    unsafe { d.queue_submit2(q, submits, fence) }.expect("submit")
                })
            }
        }
    }
}

/// How the hand side encodes the barrier before each pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The model (`benches/frame.rs`): one `VkMemoryBarrier2` per pass boundary and one at the
    /// frame start, ALL_TRANSFER → ALL_TRANSFER, TRANSFER_WRITE → TRANSFER_READ|TRANSFER_WRITE.
    Global2,
    /// As `Global2` with only TRANSFER_READ as destination access: the write after a read
    /// needs only the execution dependency, as vk-graph records it.
    Global2ReadOnly,
    /// As `Global2` with the COPY stage in place of ALL_TRANSFER on the copies' side of each
    /// barrier (the fill stays ALL_TRANSFER): vk-baton's stage masks.
    Global2Copy,
    /// What vk-baton records (its plan through `barrier_scratch.rs`): per boundary one
    /// `VkMemoryBarrier2` per distinct set of masks, COPY/TRANSFER_WRITE → COPY/TRANSFER_READ for
    /// the buffer read and, for the one written, COPY/NONE → COPY/TRANSFER_WRITE where its last
    /// write was earlier in the frame, COPY/TRANSFER_WRITE → COPY/TRANSFER_WRITE where it was in
    /// the previous frame; the fill's side at ALL_TRANSFER.
    TwoMemory2,
    /// As `TwoMemory2` with vk-graph's masks for the buffer written: a write after a read is
    /// an execution dependency with no access masks (COPY/NONE → COPY/NONE), a write after a
    /// write COPY/TRANSFER_WRITE → COPY/TRANSFER_WRITE. What vk-baton would record if its
    /// planner gave a write after reads no destination access.
    TwoMemory2ExecOnlyWar,
    /// sync2 `VkBufferMemoryBarrier2`s, one per buffer the pass uses, with vk-graph's masks.
    Buffer2,
    /// vk-graph's own encoding: `vkCmdPipelineBarrier` (sync1) with one `VkBufferMemoryBarrier`
    /// per buffer the pass uses, TOP_OF_PIPE|TRANSFER → BOTTOM_OF_PIPE|TRANSFER.
    Buffer1,
    /// `vkCmdPipelineBarrier` (sync1) with one global `VkMemoryBarrier`, TRANSFER → TRANSFER.
    Global1,
}

impl Encoding {
    pub const ALL: [Encoding; 8] = [
        Encoding::Global2,
        Encoding::Global2ReadOnly,
        Encoding::Global2Copy,
        Encoding::TwoMemory2,
        Encoding::TwoMemory2ExecOnlyWar,
        Encoding::Buffer2,
        Encoding::Buffer1,
        Encoding::Global1,
    ];

    /// The column label.
    pub fn label(self) -> &'static str {
        match self {
            Encoding::Global2 => "hand",
            Encoding::Global2ReadOnly => "hand:r",
            Encoding::Global2Copy => "hand:copy",
            Encoding::TwoMemory2 => "hand:2mem",
            Encoding::TwoMemory2ExecOnlyWar => "hand:2mem-r",
            Encoding::Buffer2 => "hand:buf2",
            Encoding::Buffer1 => "hand:buf1",
            Encoding::Global1 => "hand:glob1",
        }
    }
}

/// A buffer's last access, as vk-graph tracks it to build its barriers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    Nothing,
    Read,
    Write,
}

/// One buffer's barrier as vk-graph (vk-sync's `get_buffer_memory_barrier`) computes it:
/// (source stage used, source access, destination access). A read or nothing before gives no
/// access masks (an execution dependency); a write before makes the write available and the
/// next access's kind visible.
fn vk_sync_masks(prev: Last, next_is_write: bool) -> (bool, vk::AccessFlags2, vk::AccessFlags2) {
    let next = if next_is_write {
        vk::AccessFlags2::TRANSFER_WRITE
    } else {
        vk::AccessFlags2::TRANSFER_READ
    };
    match prev {
        Last::Nothing => (false, vk::AccessFlags2::NONE, vk::AccessFlags2::NONE),
        Last::Read => (true, vk::AccessFlags2::NONE, vk::AccessFlags2::NONE),
        Last::Write => (true, vk::AccessFlags2::TRANSFER_WRITE, next),
    }
}

/// One `VkMemoryBarrier2` from TRANSFER_WRITE in `src` to `dst_access` in `dst`.
fn global2(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    src: vk::PipelineStageFlags2,
    dst: vk::PipelineStageFlags2,
    dst_access: vk::AccessFlags2,
) {
    let m = [vk::MemoryBarrier2::default()
        .src_stage_mask(src)
        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
        .dst_stage_mask(dst)
        .dst_access_mask(dst_access)];
    // SAFETY: `cmd` is recording on `d`.
    unsafe { d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&m)) };
}

/// The hand-written renderer: pool, command buffer, fence and timer made once.
pub struct Hand {
    /// Dropped before `queue`, which may hold the last reference to vk-graph's device.
    pub timer: FrameTimer,
    device: ash::Device,
    queue: HandQueue,
    /// The ring of buffers, on `device`.
    bufs: Vec<vk::Buffer>,
    /// Runs on vk-graph's device (the row `hand@vkg`).
    pub on_peer: bool,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    pub encoding: Encoding,
    /// Per buffer, for the vk-graph encodings.
    last: [Last; BUFFERS],
}

impl Hand {
    pub fn new(
        device: &ash::Device,
        queue: HandQueue,
        bufs: Vec<vk::Buffer>,
        timer: FrameTimer,
        encoding: Encoding,
    ) -> Hand {
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue.family())
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { device.create_command_pool(&info, None) }.expect("pool");
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: valid allocate info.
        let cmd = unsafe { device.allocate_command_buffers(&alloc) }.expect("cb")[0];
        // SAFETY: valid create info.
        let fence =
            unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.expect("fence");
        Hand {
            device: device.clone(),
            on_peer: matches!(queue, HandQueue::Peer(..)),
            queue,
            bufs,
            pool,
            cmd,
            fence,
            timer,
            encoding,
            last: [Last::Nothing; BUFFERS],
        }
    }

    /// The row's label: the encoding's, or `hand@vkg` on vk-graph's device.
    pub fn label(&self) -> &'static str {
        if self.on_peer {
            "hand@vkg"
        } else {
            self.encoding.label()
        }
    }

    /// The barrier before pass `i` (the frame-start barrier for `i == 0`).
    fn barrier(&self, last: &mut [Last; BUFFERS], bufs: &[vk::Buffer], i: usize) {
        let (d, cmd) = (&self.device, self.cmd);
        let transfer2 = vk::PipelineStageFlags2::ALL_TRANSFER;
        let rw = vk::AccessFlags2::TRANSFER_READ | vk::AccessFlags2::TRANSFER_WRITE;
        match self.encoding {
            Encoding::Global2 => global2(d, cmd, transfer2, transfer2, rw),
            Encoding::Global2ReadOnly => global2(
                d,
                cmd,
                transfer2,
                transfer2,
                vk::AccessFlags2::TRANSFER_READ,
            ),
            Encoding::Global2Copy => {
                // Copies at COPY; the fill (pass 0) at ALL_TRANSFER, as vk-baton's
                // Access::TRANSFER_WRITE puts it.
                let copy = vk::PipelineStageFlags2::COPY;
                let src = if i == 1 { transfer2 } else { copy };
                let dst = if i == 0 { transfer2 } else { copy };
                global2(d, cmd, src, dst, rw)
            }
            Encoding::TwoMemory2 | Encoding::TwoMemory2ExecOnlyWar => {
                let copy = vk::PipelineStageFlags2::COPY;
                let (r, w) = (
                    vk::AccessFlags2::TRANSFER_READ,
                    vk::AccessFlags2::TRANSFER_WRITE,
                );
                let none = vk::AccessFlags2::NONE;
                let barrier = |src, src_access, dst, dst_access| {
                    vk::MemoryBarrier2::default()
                        .src_stage_mask(src)
                        .src_access_mask(src_access)
                        .dst_stage_mask(dst)
                        .dst_access_mask(dst_access)
                };
                // The fill (pass 0) is at ALL_TRANSFER, the copies at COPY.
                let (into, from) = (
                    if i == 0 { transfer2 } else { copy },
                    if i == 1 { transfer2 } else { copy },
                );
                let written = write_of(i);
                let after_read = last[written] == Last::Read;
                let write = if self.encoding == Encoding::TwoMemory2ExecOnlyWar && after_read {
                    barrier(copy, none, into, none)
                } else if after_read && i >= BUFFERS {
                    // vk-baton: the buffer's last write (pass i - 8, this frame) was made
                    // available before its read, so only the write's visibility is added.
                    barrier(copy, none, into, w)
                } else {
                    barrier(copy, w, into, w)
                };
                let mut m = vec![write];
                if let Some(read) = read_of(i) {
                    m.insert(0, barrier(from, w, copy, r));
                    last[read] = Last::Read;
                }
                last[written] = Last::Write;
                // SAFETY: recording.
                unsafe {
                    d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&m))
                };
            }
            Encoding::Global1 => {
                let m = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(
                        vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
                    )];
                let t = vk::PipelineStageFlags::TRANSFER;
                // SAFETY: recording.
                unsafe {
                    d.cmd_pipeline_barrier(cmd, t, t, vk::DependencyFlags::empty(), &m, &[], &[])
                };
            }
            Encoding::Buffer2 | Encoding::Buffer1 => self.buffer_barriers(last, bufs, i),
        }
    }

    /// vk-graph's barriers before pass `i`: one per buffer the pass uses, from the buffer's
    /// last access.
    fn buffer_barriers(&self, last: &mut [Last; BUFFERS], bufs: &[vk::Buffer], i: usize) {
        let (d, cmd) = (&self.device, self.cmd);
        let uses = read_of(i)
            .map(|b| (b, false))
            .into_iter()
            .chain([(write_of(i), true)]);
        let mut b2: Vec<vk::BufferMemoryBarrier2<'_>> = Vec::with_capacity(2);
        let mut b1: Vec<vk::BufferMemoryBarrier<'_>> = Vec::with_capacity(2);
        let mut src1 = vk::PipelineStageFlags::TOP_OF_PIPE;
        let dst1 = vk::PipelineStageFlags::BOTTOM_OF_PIPE | vk::PipelineStageFlags::TRANSFER;
        for (b, write) in uses {
            let (staged, src_access, dst_access) = vk_sync_masks(last[b], write);
            last[b] = if write { Last::Write } else { Last::Read };
            if staged {
                src1 |= vk::PipelineStageFlags::TRANSFER;
            }
            b2.push(
                vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(if staged {
                        vk::PipelineStageFlags2::ALL_TRANSFER
                    } else {
                        vk::PipelineStageFlags2::NONE
                    })
                    .src_access_mask(src_access)
                    .dst_stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)
                    .dst_access_mask(dst_access)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(bufs[b])
                    .size(BUFFER_SIZE),
            );
            b1.push(
                vk::BufferMemoryBarrier::default()
                    // The sync2 and sync1 access bits of transfers have the same values.
                    .src_access_mask(vk::AccessFlags::from_raw(src_access.as_raw() as u32))
                    .dst_access_mask(vk::AccessFlags::from_raw(dst_access.as_raw() as u32))
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(bufs[b])
                    .size(BUFFER_SIZE),
            );
        }
        // SAFETY: recording; the buffers are alive.
        unsafe {
            if self.encoding == Encoding::Buffer2 {
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().buffer_memory_barriers(&b2),
                );
            } else {
                d.cmd_pipeline_barrier(
                    cmd,
                    src1,
                    dst1,
                    vk::DependencyFlags::empty(),
                    &[],
                    &b1,
                    &[],
                );
            }
        }
    }

    /// Records and submits one frame of `n` passes; returns after the submit.
    pub fn submit_frame(&mut self, n: usize) {
        let bufs = &self.bufs[..];
        let stamps: Stamps = self.timer.stamps();
        let (d, cmd) = (&self.device, self.cmd);
        let mut last = self.last;
        // SAFETY: the fence wait of the previous frame left the pool's buffer not pending.
        unsafe { d.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty()) }
            .expect("reset");
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cmd` is in the initial state after the pool reset.
        unsafe { d.begin_command_buffer(cmd, &begin) }.expect("begin");
        // SAFETY: recording on a graphics queue; the previous frame is complete.
        unsafe { stamps.start(d, cmd) };
        for i in 0..n {
            self.barrier(&mut last, bufs, i);
            // SAFETY: recording; the buffers are alive and the right size.
            unsafe { record_pass(d, cmd, bufs, i) };
        }
        // SAFETY: as for the start.
        unsafe { stamps.end(d, cmd) };
        // SAFETY: recording.
        unsafe { d.end_command_buffer(cmd) }.expect("end");
        let cbs = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let submit = vk::SubmitInfo2::default().command_buffer_infos(&cbs);
        // SAFETY: every handle is alive; `d` is the queue's device.
        unsafe { self.queue.submit2(d, &[submit], self.fence) };
        self.last = last;
    }

    pub fn wait(&self) {
        // SAFETY: the fence is alive and was submitted.
        unsafe { self.device.wait_for_fences(&[self.fence], true, u64::MAX) }.expect("wait");
        // SAFETY: the fence is signalled and not pending.
        unsafe { self.device.reset_fences(&[self.fence]) }.expect("reset fence");
    }
}

impl Drop for Hand {
    fn drop(&mut self) {
        // SAFETY: every submit was waited for; nothing is pending.
        unsafe {
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_fence(self.fence, None);
        }
    }
}
