//! GPU time of a frame from two timestamps, the same way on every side: the first command of
//! the frame's command stream resets two queries and writes one (`TOP_OF_PIPE`), the last
//! writes the other (`ALL_COMMANDS`: when everything before it has finished).

use ash::vk;
use std::time::Duration;

/// A two-query timestamp pool on one device.
pub struct FrameTimer {
    device: ash::Device,
    pool: vk::QueryPool,
    period_ns: f64,
    valid_mask: u64,
}

/// The handles a command needs to write the timer's timestamps (`Copy`, so that a `'static`
/// closure can take them).
#[derive(Clone, Copy)]
pub struct Stamps {
    pool: vk::QueryPool,
}

impl FrameTimer {
    /// `period_ns` is the device's `timestampPeriod`, `valid_bits` the queue family's
    /// `timestampValidBits` (not 0).
    pub fn new(device: &ash::Device, period_ns: f32, valid_bits: u32) -> FrameTimer {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(2);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { device.create_query_pool(&info, None) }.expect("query pool");
        let valid_mask = if valid_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << valid_bits) - 1
        };
        FrameTimer {
            device: device.clone(),
            pool,
            period_ns: period_ns as f64,
            valid_mask,
        }
    }

    pub fn stamps(&self) -> Stamps {
        Stamps { pool: self.pool }
    }

    /// The time between the two timestamps of the last frame, which must be complete.
    pub fn read(&self) -> Duration {
        let mut t = [0u64; 2];
        // SAFETY: both queries were written by a submission whose fence was waited for.
        unsafe {
            self.device.get_query_pool_results(
                self.pool,
                0,
                &mut t,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .expect("timestamps");
        let ticks = t[1].wrapping_sub(t[0]) & self.valid_mask;
        Duration::from_nanos((ticks as f64 * self.period_ns) as u64)
    }
}

impl Stamps {
    /// The frame's first command: resets the queries, writes the start.
    ///
    /// # Safety
    /// `cmd` is recording on the timer's device, on a graphics or compute queue, outside a
    /// render pass, and the previous frame that used the timer is complete.
    pub unsafe fn start(self, device: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: the caller's contract.
        unsafe {
            device.cmd_reset_query_pool(cmd, self.pool, 0, 2);
            device.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::TOP_OF_PIPE, self.pool, 0);
        }
    }

    /// The frame's last command: writes the end.
    ///
    /// # Safety
    /// As [`Stamps::start`], after it in the same frame.
    pub unsafe fn end(self, device: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: the caller's contract.
        unsafe {
            device.cmd_write_timestamp2(cmd, vk::PipelineStageFlags2::ALL_COMMANDS, self.pool, 1)
        };
    }
}

impl Drop for FrameTimer {
    fn drop(&mut self) {
        // SAFETY: every frame that used the pool was waited for.
        unsafe { self.device.destroy_query_pool(self.pool, None) };
    }
}
