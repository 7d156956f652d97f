//! The workload every side runs, from `benches/frame.rs`: pass 0 fills `buf[1]`; pass `i > 0`
//! copies `buf[i % 8]` into `buf[(i + 1) % 8]`, 4 KiB each, on one queue. Every pass reads
//! what the one before wrote, so every pass boundary is a dependency.

use ash::vk;

/// Buffers in the ring.
pub const BUFFERS: usize = 8;
/// Bytes per buffer.
pub const BUFFER_SIZE: u64 = 4096;
/// The value pass 0 fills with.
pub const FILL: u32 = 7;

/// The buffer pass `i` reads, if any (pass 0 only writes).
pub fn read_of(i: usize) -> Option<usize> {
    (i > 0).then_some(i % BUFFERS)
}

/// The buffer pass `i` writes (all of it).
pub fn write_of(i: usize) -> usize {
    (i + 1) % BUFFERS
}

/// Records pass `i`'s one command.
///
/// # Safety
/// `cmd` is recording on `device`, outside a render pass; `bufs` are alive, at least
/// `BUFFER_SIZE` long, with TRANSFER_SRC and TRANSFER_DST usage.
pub unsafe fn record_pass(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    bufs: &[vk::Buffer],
    i: usize,
) {
    let dst = bufs[write_of(i)];
    match read_of(i) {
        // SAFETY: the caller's contract.
        None => unsafe { device.cmd_fill_buffer(cmd, dst, 0, vk::WHOLE_SIZE, FILL) },
        Some(src) => {
            let region = vk::BufferCopy::default().size(BUFFER_SIZE);
            // SAFETY: the caller's contract.
            unsafe { device.cmd_copy_buffer(cmd, bufs[src], dst, &[region]) };
        }
    }
}
