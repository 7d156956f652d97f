//! The chained workload that `frame.rs` and `replay.rs` measure, and its hand-written side:
//! pass 0 fills `buf[1]`, pass `i > 0` copies `buf[i % B]` into `buf[(i + 1) % B]`, on one
//! queue or cut into three runs on three queues (see `frame.rs`); and the two benches'
//! command-line flags and medians.

use ash::vk;
use std::sync::Arc;
use std::time::Duration;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, Declare, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::Context;

/// Each buffer's size.
pub const BUFFER_SIZE: u64 = 4096;

/// Pass `i` of the workload, as both sides record it.
pub fn record_pass(device: &ash::Device, cmd: vk::CommandBuffer, bufs: &[Arc<StBuffer>], i: usize) {
    let dst = bufs[(i + 1) % bufs.len()].handle();
    if i == 0 {
        // SAFETY: `cmd` is recording and the buffer is alive.
        unsafe { device.cmd_fill_buffer(cmd, dst, 0, vk::WHOLE_SIZE, 7) };
    } else {
        let region = vk::BufferCopy::default().size(BUFFER_SIZE);
        // SAFETY: `cmd` is recording; both buffers are alive and BUFFER_SIZE long.
        unsafe { device.cmd_copy_buffer(cmd, bufs[i % bufs.len()].handle(), dst, &[region]) };
    }
}

/// The graph side's pass `i`.
pub struct Step {
    pub bufs: Arc<Vec<Arc<StBuffer>>>,
    pub i: usize,
    /// Its replay key (used where the graph replays: `replay.rs`).
    pub generation: Generation,
}

impl Pass for Step {
    fn declare(&self, d: &mut Declare<'_>) {
        let dst = &self.bufs[(self.i + 1) % self.bufs.len()];
        if self.i == 0 {
            d.uses(dst, Access::TRANSFER_WRITE).discard();
        } else {
            d.uses(&self.bufs[self.i % self.bufs.len()], Access::COPY_READ);
            d.uses(dst, Access::COPY_WRITE).discard();
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        record_pass(r.device(), r.cmd(), &self.bufs, self.i);
        Ok(())
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name only the step's buffers, which it keeps alive, and
        // change with nothing but the step.
        Some(unsafe { self.generation.key() })
    }
}

/// The `n` steps of a frame on `bufs`.
pub fn steps(bufs: &Arc<Vec<Arc<StBuffer>>>, n: usize) -> Vec<Step> {
    let step = |i| Step {
        bufs: bufs.clone(),
        i,
        generation: Generation::new(),
    };
    (0..n).map(step).collect()
}

/// Which queue runs pass `i` of `n` when the frame uses `runs` queues (1 or 3).
pub fn run_of(i: usize, n: usize, runs: usize) -> usize {
    (i * runs / n).min(runs - 1)
}

/// The hand-written renderer: command buffers, semaphores and a fence made once.
pub struct Hand {
    device: ash::Device,
    /// Per run: its queue, a pool and one command buffer.
    runs: Vec<(Queue, vk::CommandPool, vk::CommandBuffer)>,
    /// Between run r and r + 1.
    semaphores: Vec<vk::Semaphore>,
    fence: vk::Fence,
    /// Resets each command buffer as it begins (pools made with `RESET_COMMAND_BUFFER`), as
    /// the library's pools do, instead of resetting its pools (`--hand-resets-buffers`).
    resets_buffers: bool,
}

impl Hand {
    pub fn new(ctx: &Context, queues: &[Queue], resets_buffers: bool) -> Hand {
        let device = ctx.device().clone();
        let runs = queues
            .iter()
            .map(|q| {
                let info = vk::CommandPoolCreateInfo::default()
                    .queue_family_index(q.family())
                    .flags(match resets_buffers {
                        true => vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER,
                        false => vk::CommandPoolCreateFlags::TRANSIENT,
                    });
                // SAFETY: valid create info on a live device.
                let pool = unsafe { device.create_command_pool(&info, None) }.expect("pool");
                let alloc = vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1);
                // SAFETY: valid allocate info.
                let cmd = unsafe { device.allocate_command_buffers(&alloc) }.expect("cb")[0];
                (q.clone(), pool, cmd)
            })
            .collect::<Vec<_>>();
        let semaphores = (1..runs.len())
            .map(|_| {
                // SAFETY: valid create info.
                unsafe { device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
                    .expect("semaphore")
            })
            .collect();
        // SAFETY: valid create info.
        let fence =
            unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.expect("fence");
        Hand {
            device,
            runs,
            semaphores,
            fence,
            resets_buffers,
        }
    }

    /// Records and submits one frame of `n` passes; returns after the submit.
    pub fn submit_frame(&self, bufs: &[Arc<StBuffer>], n: usize) {
        self.record_frame(bufs, n, true);
        self.submit();
    }

    /// Records one frame of `n` passes into the runs' command buffers, to be submitted once
    /// (`one_time`) or again and again by [`Hand::submit`].
    pub fn record_frame(&self, bufs: &[Arc<StBuffer>], n: usize, one_time: bool) {
        let d = &self.device;
        let runs = self.runs.len();
        let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
        let global = [vk::MemoryBarrier2::default()
            .src_stage_mask(transfer)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(transfer)
            .dst_access_mask(vk::AccessFlags2::TRANSFER_READ | vk::AccessFlags2::TRANSFER_WRITE)];
        for (r, (_, pool, cmd)) in self.runs.iter().enumerate() {
            let cmd = *cmd;
            let first = (0..n).find(|&i| run_of(i, n, runs) == r).expect("a pass");
            let last = (0..n).rfind(|&i| run_of(i, n, runs) == r).expect("a pass");
            if !self.resets_buffers {
                // SAFETY: the fence wait of the previous frame left no buffer of the pool
                // pending.
                unsafe { d.reset_command_pool(*pool, vk::CommandPoolResetFlags::empty()) }
                    .expect("reset");
            }
            let flags = match one_time {
                true => vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
                false => vk::CommandBufferUsageFlags::empty(),
            };
            let begin = vk::CommandBufferBeginInfo::default().flags(flags);
            // SAFETY: `cmd` is in the initial state after the pool reset, or not pending (the
            // previous frame's fence) in a pool that lets `begin` reset it.
            unsafe { d.begin_command_buffer(cmd, &begin) }.expect("begin");
            // The first run orders its writes after the previous frame's accesses of the same
            // queue (the fence wait covers other queues'); a later run after an earlier run
            // on the same family is ordered by the semaphore, on another family by the
            // acquire.
            let crossing = bufs[first % bufs.len()].handle();
            let family = self.runs[r].0.family();
            let prev_family = (r > 0).then(|| self.runs[r - 1].0.family());
            let acquire = [vk::BufferMemoryBarrier2::default()
                .src_queue_family_index(prev_family.unwrap_or(family))
                .dst_queue_family_index(family)
                .dst_stage_mask(transfer)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)
                .buffer(crossing)
                .size(vk::WHOLE_SIZE)];
            let dep = if r == 0 {
                vk::DependencyInfo::default().memory_barriers(&global)
            } else if prev_family.is_some_and(|p| p != family) {
                vk::DependencyInfo::default().buffer_memory_barriers(&acquire)
            } else {
                vk::DependencyInfo::default()
            };
            if !dep.p_memory_barriers.is_null() || !dep.p_buffer_memory_barriers.is_null() {
                // SAFETY: recording; the buffer is alive.
                unsafe { d.cmd_pipeline_barrier2(cmd, &dep) };
            }
            for i in first..=last {
                if i > first {
                    let dep = vk::DependencyInfo::default().memory_barriers(&global);
                    // SAFETY: recording.
                    unsafe { d.cmd_pipeline_barrier2(cmd, &dep) };
                }
                record_pass(d, cmd, bufs, i);
            }
            let next_family = (r + 1 < runs).then(|| self.runs[r + 1].0.family());
            if let Some(next) = next_family.filter(|&f| f != family) {
                let release = [vk::BufferMemoryBarrier2::default()
                    .src_stage_mask(transfer)
                    .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                    .src_queue_family_index(family)
                    .dst_queue_family_index(next)
                    .buffer(bufs[(last + 1) % bufs.len()].handle())
                    .size(vk::WHOLE_SIZE)];
                let dep = vk::DependencyInfo::default().buffer_memory_barriers(&release);
                // SAFETY: recording; the buffer is alive.
                unsafe { d.cmd_pipeline_barrier2(cmd, &dep) };
            }
            // SAFETY: recording.
            unsafe { d.end_command_buffer(cmd) }.expect("end");
        }
    }

    /// Submits the runs' recorded command buffers, each run's batch waiting for the one
    /// before it; the last signals the fence.
    pub fn submit(&self) {
        let d = &self.device;
        let runs = self.runs.len();
        // Without VK_KHR_maintenance8, a release is outside its barrier's second scope and
        // an acquire outside its barrier's first: only a signal after all commands orders
        // the release, and only a wait before all commands orders the acquire.
        let stages = |crosses: bool| match crosses {
            true => vk::PipelineStageFlags2::ALL_COMMANDS,
            false => vk::PipelineStageFlags2::ALL_TRANSFER,
        };
        let family = |r: usize| self.runs[r].0.family();
        for (r, (queue, _, cmd)) in self.runs.iter().enumerate() {
            let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(*cmd)];
            let mut submit = vk::SubmitInfo2::default().command_buffer_infos(&cmds);
            let waits = (r > 0).then(|| {
                [vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.semaphores[r - 1])
                    .stage_mask(stages(family(r - 1) != family(r)))]
            });
            if let Some(waits) = &waits {
                submit = submit.wait_semaphore_infos(waits);
            }
            let signals = (r + 1 < runs).then(|| {
                [vk::SemaphoreSubmitInfo::default()
                    .semaphore(self.semaphores[r])
                    .stage_mask(stages(family(r + 1) != family(r)))]
            });
            if let Some(signals) = &signals {
                submit = submit.signal_semaphore_infos(signals);
            }
            let fence = if r + 1 == runs {
                self.fence
            } else {
                vk::Fence::null()
            };
            let lock = queue.lock();
            // SAFETY: the queue is locked; every handle is alive; the command buffer is
            // recorded and not pending (the last frame's fence was waited for); the semaphore
            // waited on is signalled by the submit just before.
            unsafe { d.queue_submit2(lock.handle(), &[submit], fence) }.expect("submit");
        }
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
            for (_, pool, _) in &self.runs {
                self.device.destroy_command_pool(*pool, None);
            }
            for s in &self.semaphores {
                self.device.destroy_semaphore(*s, None);
            }
            self.device.destroy_fence(self.fence, None);
        }
    }
}

/// Medians of one side: (cpu, frame).
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The value after flag `name`, parsed.
pub fn arg<T: std::str::FromStr>(name: &str) -> Option<T> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    let value = args.get(i + 1).and_then(|v| v.parse().ok());
    assert!(value.is_some(), "{name} needs a value");
    value
}

/// The median of `values` and its spread (min, max).
pub fn spread(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}
