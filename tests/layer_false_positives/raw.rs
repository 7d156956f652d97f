//! Raw Vulkan for the patterns: timeline semaphores, command buffers and submits on the
//! context's queues, outside any graph.

use vk_baton::ash::vk;
use vk_baton::{Queue, StBuffer};
use vk_baton_context::Context;

/// Raw Vulkan objects of one test: timeline semaphores, one command pool per queue, and the
/// command buffers; all destroyed once every queue used is idle.
pub struct Raw<'a> {
    ctx: &'a Context,
    semaphores: Vec<vk::Semaphore>,
    pools: Vec<(Queue, vk::CommandPool)>,
}

impl<'a> Raw<'a> {
    pub fn new(ctx: &'a Context) -> Self {
        Raw {
            ctx,
            semaphores: Vec::new(),
            pools: Vec::new(),
        }
    }

    /// A new timeline semaphore at 0.
    pub fn timeline(&mut self) -> vk::Semaphore {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: a valid create info on a live device; destroyed in Drop.
        let s = unsafe { self.ctx.device().create_semaphore(&info, None) }.unwrap();
        self.semaphores.push(s);
        s
    }

    /// One command buffer for `queue`, recorded by `record`.
    pub fn commands(
        &mut self,
        queue: &Queue,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> vk::CommandBuffer {
        let d = self.ctx.device();
        let pool = match self.pools.iter().find(|(q, _)| q == queue) {
            Some(&(_, p)) => p,
            None => {
                let info = vk::CommandPoolCreateInfo::default().queue_family_index(queue.family());
                // SAFETY: a valid create info on a live device; destroyed in Drop.
                let p = unsafe { d.create_command_pool(&info, None) }.unwrap();
                self.pools.push((queue.clone(), p));
                p
            }
        };
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is alive and used from this thread only; the command buffer is
        // begun, recorded and ended before it is submitted.
        unsafe {
            let cmd = d.allocate_command_buffers(&info).unwrap()[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            record(cmd);
            d.end_command_buffer(cmd).unwrap();
            cmd
        }
    }

    /// Submits `cmd` (if any) to `queue`, waiting for each `(semaphore, value, stages)` of
    /// `waits`, then signalling each `(semaphore, value)` of `signals` at ALL_COMMANDS.
    pub fn submit(
        &self,
        queue: &Queue,
        cmd: Option<vk::CommandBuffer>,
        waits: &[(vk::Semaphore, u64, vk::PipelineStageFlags2)],
        signals: &[(vk::Semaphore, u64)],
        fence: vk::Fence,
    ) {
        let waits: Vec<_> = waits
            .iter()
            .map(|&(s, v, stages)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .value(v)
                    .stage_mask(stages)
            })
            .collect();
        let signals: Vec<_> = signals
            .iter()
            .map(|&(s, v)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .value(v)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            })
            .collect();
        let cmds: Vec<_> = cmd
            .iter()
            .map(|&c| vk::CommandBufferSubmitInfo::default().command_buffer(c))
            .collect();
        let submit = vk::SubmitInfo2::default()
            .wait_semaphore_infos(&waits)
            .command_buffer_infos(&cmds)
            .signal_semaphore_infos(&signals);
        let lock = queue.lock();
        // SAFETY: the queue's submit lock is held; everything submitted lives until Drop,
        // which waits for the queues to be idle.
        unsafe {
            self.ctx
                .device()
                .queue_submit2(lock.handle(), &[submit], fence)
        }
        .unwrap();
    }

    /// Waits until every queue used is idle.
    pub fn idle(&self) {
        for (q, _) in &self.pools {
            let lock = q.lock();
            // SAFETY: the queue's submit lock is held.
            unsafe { self.ctx.device().queue_wait_idle(lock.handle()) }.unwrap();
        }
    }
}

impl Drop for Raw<'_> {
    fn drop(&mut self) {
        self.idle();
        let d = self.ctx.device();
        // SAFETY: every queue used is idle, so nothing uses the pools' command buffers or
        // the semaphores any more.
        unsafe {
            for &(_, p) in &self.pools {
                d.destroy_command_pool(p, None);
            }
            for &s in &self.semaphores {
                d.destroy_semaphore(s, None);
            }
        }
    }
}

/// `vkCmdCopyBuffer` of the whole of `src` into `dst`.
pub fn copy_whole(ctx: &Context, cmd: vk::CommandBuffer, src: &StBuffer, dst: &StBuffer) {
    let region = vk::BufferCopy::default().size(src.size());
    // SAFETY: both buffers are alive, have TRANSFER usage and the same size.
    unsafe {
        ctx.device()
            .cmd_copy_buffer(cmd, src.handle(), dst.handle(), &[region])
    };
}

/// `vkCmdUpdateBuffer` of all 256 bytes of `dst` with `byte`.
pub fn fill(ctx: &Context, cmd: vk::CommandBuffer, dst: &StBuffer, byte: u8) {
    // SAFETY: the buffer is alive and has TRANSFER_DST usage.
    unsafe {
        ctx.device()
            .cmd_update_buffer(cmd, dst.handle(), 0, &[byte; 256])
    };
}
