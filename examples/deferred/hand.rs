//! The deferred frame written by hand with raw ash, for `--compare`: the same passes, pipelines,
//! shaders, scene and recording functions as the library's frame, with the barriers, semaphores
//! and submits an expert writes for this frame.
//!
//! - **Targets**: one set per frame in flight, each image in memory of its own (no aliasing).
//!   A set is used again only after the host waited for the fences of the frame that used it,
//!   so every image starts a frame in UNDEFINED: each queue's first barrier moves all the
//!   images it uses first into their first layout at once (from nothing: the fence wait
//!   ordered the earlier frame's accesses), and no later barrier is needed for them.
//! - **Sharing**: the images and buffer both queues use (draws, G-buffer, depth, shadow map,
//!   HDR) are CONCURRENT between the two families where they differ, as on the library side by
//!   default: no ownership transfer. A layout change of such an image happens on the queue that
//!   reads it next, after its semaphore wait, chained from the wait's stage.
//! - **One VkQueue** (graphics and async compute the same, as on lavapipe): one command
//!   buffer, one submit, barriers only. With `--hand-split` the two-queue frame below runs on
//!   that one queue instead (its batches in the same order, chained by the same semaphores):
//!   the validation layer checks its semaphores and barriers there too.
//! - **Two queues** (same family or not): one timeline semaphore per queue, two values per frame
//!   on each. Compute: [cull] signals 1; [SSAO, blur, light culling] waits for graphics 1;
//!   [lighting] waits for graphics 2 and signals 2. Graphics: [forward depth, transparent,
//!   G-buffer] waits for compute 1 and signals 1; [shadow map] signals 2; [bloom, tonemap, UI]
//!   waits for compute 2. Each batch is submitted after the batch it waits for (no wait before
//!   signal): compute, graphics, compute, graphics, each with its batches in one
//!   `vkQueueSubmit2`; the last one of each queue with that queue's fence.
//! - The first frame in each slot also waits for the scene's upload (the library's upload graph
//!   on the transfer queue), on the transfer queue's timeline; later frames come after those on
//!   the host (the fences). Nothing writes the scene again.
//! - Each compute pass's descriptor set is written once per slot (its targets never change);
//!   `--hand-write-sets` writes them in every frame instead, as the library's passes do
//!   without `--replay`, to tell that cost apart in the CPU times.
//! - Timestamps at the start and end of each queue's work in the frame, for the GPU time.
//! - `replay` (the third side of `--compare --replay`): each slot records its frame once,
//!   without `ONE_TIME_SUBMIT`, and submits those command buffers again (only the frame number
//!   in memory and the submits' timeline values change): the floor a library replay can reach.

use super::frame::{dispatches, own_targets, Targets};
use super::hand_record::{
    barrier, buffer, first_uses, image, Compute, Raster, Views, AFTER_WAIT, CAO, COLOR_WRITE, CS,
    DEPTH_WRITE, SAMPLED, STORAGE_WRITE, TESTS,
};
use super::pipelines::Pipelines;
use super::pipelines::Samplers;
use super::scene::Scene;
use super::Options;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::vkerr;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::{self, vk};
use vk_baton::{Queue, StImage};
use vk_baton_context::Context;

use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

/// Command buffers per queue and frame: one per batch.
const BATCHES: usize = 3;

/// One frame in flight's targets, compute passes, command buffers and fences.
struct Slot {
    t: Targets,
    views: Views,
    /// In the order of [`dispatches`].
    compute: Vec<Compute>,
    /// Per queue (graphics, compute): its pool and a command buffer per batch.
    pools: [vk::CommandPool; 2],
    cmds: [[vk::CommandBuffer; BATCHES]; 2],
    /// Per queue, signalled by its last submit of the frame.
    fences: [vk::Fence; 2],
    /// Whether the fences are pending (a frame was submitted and not yet waited for).
    pending: bool,
    /// Whether the command buffers hold the slot's frame (a hand replay submits them again).
    recorded: bool,
}

/// The hand-written renderer.
pub struct Hand {
    device: ash::Device,
    gfx: Queue,
    compute: Queue,
    /// Graphics and async compute are two VkQueues.
    two: bool,
    /// One timeline semaphore per queue (graphics, compute).
    timelines: [vk::Semaphore; 2],
    /// The scene's upload, which the first frame of each slot waits for: the transfer queue's timeline and
    /// the value it reaches.
    upload: Option<(vk::Semaphore, u64)>,
    slots: Vec<Slot>,
    /// Frames submitted so far.
    frames: u64,
    pipelines: Arc<Pipelines>,
    scene: Arc<Scene>,
    multi_draw: bool,
    skip: Vec<String>,
    /// `--hand-write-sets`: write every compute pass's descriptor set in every frame, as the
    /// library's passes must (their transients are other images from one execution to the
    /// next), rather than once.
    write_sets: bool,
    /// Each slot records its frame once, without `ONE_TIME_SUBMIT`, and submits it again
    /// (only the frame number in memory and the submits' timeline values change): the floor
    /// a replay can reach.
    replay: bool,
    /// Four timestamps per slot: graphics start and end, compute start and end.
    queries: vk::QueryPool,
    period_ns: f64,
    masks: [u64; 2],
}

/// The valid bits of a timestamp of `family`.
fn mask(ctx: &Context, family: u32) -> u64 {
    match ctx.timestamp_support().valid_bits(family) {
        0 => 0,
        64.. => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

impl Hand {
    /// Makes `slots` sets of targets and everything the frame records with. `upload`: the
    /// transfer queue's timeline value that the scene's upload signals. `replay`: see
    /// [`Hand::replay`].
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        o: &Options,
        scene: &Arc<Scene>,
        samplers: &Arc<Samplers>,
        pipelines: &Arc<Pipelines>,
        upload: u64,
        slots: usize,
        replay: bool,
    ) -> vk_baton::Result<Hand> {
        let device = ctx.device().clone();
        let (gfx, compute) = (ctx.graphics().clone(), ctx.async_compute().clone());
        // `--hand-split`: the two-queue frame on one VkQueue, where lavapipe can validate it.
        let two = gfx.handle() != compute.handle() || o.hand_split;
        let timeline = || {
            let mut ty = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
            // SAFETY: a valid create info on a live device; destroyed in Drop.
            unsafe { device.create_semaphore(&info, None) }.map_err(vkerr("vkCreateSemaphore"))
        };
        let query_info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(4 * slots as u32);
        let mut hand = Hand {
            timelines: [timeline()?, timeline()?],
            // SAFETY: a valid create info on a live device; destroyed in Drop.
            queries: unsafe { device.create_query_pool(&query_info, None) }
                .map_err(vkerr("vkCreateQueryPool"))?,
            device,
            upload: Some((ctx.transfer().timeline(), upload)),
            slots: Vec::with_capacity(slots),
            frames: 0,
            pipelines: pipelines.clone(),
            scene: scene.clone(),
            multi_draw: ctx.features().multi_draw_indirect == vk::TRUE,
            skip: o.skip.clone(),
            write_sets: o.hand_write_sets,
            replay,
            period_ns: ctx.timestamp_support().period_ns() as f64,
            masks: [mask(ctx, gfx.family()), mask(ctx, compute.family())],
            gfx,
            compute,
            two,
        };
        for s in 0..slots {
            let side = if replay { "hand replay" } else { "hand" };
            let t = own_targets(ctx, o, scene, &format!("{side} {s} "))?;
            let slot = hand.slot(ctx, t, samplers)?;
            hand.slots.push(slot);
        }
        Ok(hand)
    }

    fn slot(&self, ctx: &Context, t: Targets, samplers: &Arc<Samplers>) -> vk_baton::Result<Slot> {
        let dev = &self.device;
        let mut slot = Slot {
            views: Views {
                shadow: view(dev, &t.shadow)?,
                depth: view(dev, &t.depth)?,
                albedo: view(dev, &t.albedo)?,
                normal: view(dev, &t.normal)?,
                msaa_depth: view(dev, &t.msaa_depth)?,
                msaa_color: view(dev, &t.msaa_color)?,
                transparent: view(dev, &t.transparent)?,
                output: view(dev, &t.output)?,
            },
            compute: Vec::new(),
            pools: [vk::CommandPool::null(); 2],
            cmds: [[vk::CommandBuffer::null(); BATCHES]; 2],
            fences: [vk::Fence::null(); 2],
            pending: false,
            recorded: false,
            t,
        };
        for (_, mut d) in dispatches(ctx, &slot.t, &self.scene, samplers, false)? {
            // The set's views and buffers are this slot's for good: written once.
            let set = d.write_set(dev, LayoutPolicy::Optimal)?;
            slot.compute.push(Compute { dispatch: d, set });
        }
        for (q, queue) in [&self.gfx, &self.compute].into_iter().enumerate() {
            let info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(queue.family())
                .flags(vk::CommandPoolCreateFlags::TRANSIENT);
            // SAFETY (the three calls): valid create infos on a live device; the objects are
            // destroyed in Drop.
            unsafe {
                slot.pools[q] = dev
                    .create_command_pool(&info, None)
                    .map_err(vkerr("vkCreateCommandPool"))?;
                let alloc = vk::CommandBufferAllocateInfo::default()
                    .command_pool(slot.pools[q])
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(BATCHES as u32);
                let cmds = dev
                    .allocate_command_buffers(&alloc)
                    .map_err(vkerr("vkAllocateCommandBuffers"))?;
                slot.cmds[q].copy_from_slice(&cmds);
                slot.fences[q] = dev
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .map_err(vkerr("vkCreateFence"))?;
            }
        }
        Ok(slot)
    }

    /// Records and submits frame `n` in slot `n % slots`, after waiting for the frame that used
    /// that slot. Returns the host time spent recording and submitting (the wait excluded) and
    /// the GPU time of the frame waited for, if any.
    pub fn frame(&mut self, n: u32) -> vk_baton::Result<(Duration, Option<Duration>)> {
        let s = n as usize % self.slots.len();
        let gpu = self.wait_slot(s)?;
        let start = Instant::now();
        let dev = self.device.clone();
        let record = !(self.replay && self.slots[s].recorded);
        for q in (0..1 + self.two as usize).filter(|_| record) {
            // SAFETY: the slot's last frame completed (its fences were waited for).
            unsafe {
                dev.reset_command_pool(self.slots[s].pools[q], vk::CommandPoolResetFlags::empty())
            }
            .map_err(vkerr("vkResetCommandPool"))?;
        }
        for c in &mut self.slots[s].compute {
            if self.write_sets && record {
                c.set = c.dispatch.write_set(&dev, LayoutPolicy::Optimal)?;
            }
            c.set_frame(n)?;
        }
        if self.two {
            self.record_two(s, record)?;
        } else {
            self.record_one(s, record)?;
        }
        self.slots[s].recorded = true;
        self.slots[s].pending = true;
        self.frames += 1;
        Ok((start.elapsed(), gpu))
    }

    /// Begins command buffer `b` of queue `q` (0: graphics, 1: compute) of slot `s`.
    fn begin(&self, s: usize, q: usize, b: usize) -> vk_baton::Result<vk::CommandBuffer> {
        let cmd = self.slots[s].cmds[q][b];
        let info = vk::CommandBufferBeginInfo::default().flags(match self.replay {
            true => vk::CommandBufferUsageFlags::empty(),
            false => vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
        });
        // SAFETY: the pool was reset: `cmd` is in the initial state.
        unsafe { self.device.begin_command_buffer(cmd, &info) }
            .map_err(vkerr("vkBeginCommandBuffer"))?;
        Ok(cmd)
    }

    fn end(&self, cmd: vk::CommandBuffer) -> vk_baton::Result<()> {
        // SAFETY: `cmd` is recording, outside any rendering.
        unsafe { self.device.end_command_buffer(cmd) }.map_err(vkerr("vkEndCommandBuffer"))
    }

    /// Resets the slot's two timestamps of queue `q` and writes the first.
    ///
    /// # Safety
    ///
    /// `cmd` is recording on queue `q`, outside a rendering.
    unsafe fn stamp_start(&self, cmd: vk::CommandBuffer, s: usize, q: usize) {
        let first = 4 * s as u32 + 2 * q as u32;
        // SAFETY: the caller's promise; the queries of the slot's last frame were read. Query
        // commands of one queue run in submission order: the reset comes before the write.
        unsafe {
            self.device
                .cmd_reset_query_pool(cmd, self.queries, first, 2);
            self.device
                .cmd_write_timestamp2(cmd, S::TOP_OF_PIPE, self.queries, first);
        }
    }

    /// Writes queue `q`'s last timestamp once all its earlier commands are done.
    ///
    /// # Safety
    ///
    /// As [`Hand::stamp_start`], later on the same queue.
    unsafe fn stamp_end(&self, cmd: vk::CommandBuffer, s: usize, q: usize) {
        let query = 4 * s as u32 + 2 * q as u32 + 1;
        // SAFETY: the caller's promise. (A timestamp, not a barrier: ALL_COMMANDS is when
        // everything before it has finished.)
        unsafe {
            self.device
                .cmd_write_timestamp2(cmd, S::ALL_COMMANDS, self.queries, query)
        };
    }

    fn raster(&self) -> Raster<'_> {
        Raster {
            dev: &self.device,
            pipelines: &self.pipelines,
            scene: &self.scene,
            multi_draw: self.multi_draw,
            skip: &self.skip,
        }
    }

    /// Graphics and async compute are one VkQueue: the whole frame in one command buffer,
    /// recorded (unless `record` is false: a hand replay submits it again) and submitted.
    fn record_one(&mut self, s: usize, record: bool) -> vk_baton::Result<()> {
        let cmd = match record {
            true => self.one_frame(s)?,
            false => self.slots[s].cmds[0][0],
        };
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let waits = self.upload_wait(S::VERTEX_INPUT | S::VERTEX_SHADER | CS);
        let submit = vk::SubmitInfo2::default()
            .command_buffer_infos(&cmds)
            .wait_semaphore_infos(&waits);
        self.submit(&self.gfx, &[submit], self.slots[s].fences[0])
    }

    /// Records the one-queue frame in program order, with barriers where the two queues'
    /// frames meet.
    fn one_frame(&mut self, s: usize) -> vk_baton::Result<vk::CommandBuffer> {
        let cmd = self.begin(s, 0, 0)?;
        let dev = self.device.clone();
        let compute = std::mem::take(&mut self.slots[s].compute);
        let (slot, r) = (&self.slots[s], self.raster());
        let (t, v) = (&slot.t, &slot.views);
        // SAFETY: `cmd` is recording on the graphics queue (which has compute); each barrier
        // puts what the next pass uses in the layout it names, with the earlier writes visible
        // (the comments below say which); every object is alive until the slot's fence.
        unsafe {
            self.stamp_start(cmd, s, 0);
            barrier(&dev, cmd, &first_uses(t, |_| true), &[]);
            compute[0].record(&dev, cmd); // cull
            barrier(
                &dev,
                cmd,
                &[],
                &[buffer(
                    &t.draws,
                    STORAGE_WRITE,
                    (S::DRAW_INDIRECT, A::INDIRECT_COMMAND_READ),
                )],
            );
            r.forward_depth(cmd, t, v);
            barrier(&dev, cmd, &[depth_read_only(t)], &[]);
            r.transparent(cmd, t, v);
            // The G-buffer's targets are in their layouts since the first barrier; the draws
            // are visible to DRAW_INDIRECT since the one before the forward depth.
            r.gbuffer(cmd, t, v);
            barrier(
                &dev,
                cmd,
                &gbuffer_to_compute(t, DEPTH_WRITE, COLOR_WRITE),
                &[],
            );
            compute[1].record(&dev, cmd); // ssao
            barrier(
                &dev,
                cmd,
                &[to_sampled(&t.ssao_raw, L::GENERAL, STORAGE_WRITE)],
                &[],
            );
            compute[2].record(&dev, cmd); // ssao blur
            compute[3].record(&dev, cmd); // light culling: depth is readable already
            r.shadow(cmd, t, v);
            let (images, buffers) = before_lighting(t, DEPTH_WRITE);
            barrier(&dev, cmd, &images, &buffers);
            compute[4].record(&dev, cmd); // lighting
            self.post(cmd, t, v, &compute, STORAGE_WRITE);
            self.stamp_end(cmd, s, 0);
        }
        self.slots[s].compute = compute;
        self.end(cmd)?;
        Ok(cmd)
    }

    /// After the lighting, on graphics: bloom down and up, tonemap, UI. `hdr_src`: where the
    /// lighting's writes to the HDR image come from (its writes on this queue, or the
    /// semaphore wait at `COMPUTE_SHADER` that made them visible).
    ///
    /// # Safety
    ///
    /// `cmd` is recording on the graphics queue; the lighting's writes are ordered before
    /// `hdr_src`; the other targets are in the layouts of the first barrier, and the
    /// transparent layer resolved (earlier on this queue).
    unsafe fn post(
        &self,
        cmd: vk::CommandBuffer,
        t: &Targets,
        v: &Views,
        compute: &[Compute],
        hdr_src: (S, A),
    ) {
        let dev = &self.device;
        // SAFETY: the caller's promise; each barrier makes the last pass's output readable
        // by the next one (the bloom targets are in GENERAL since the first barrier).
        unsafe {
            barrier(dev, cmd, &[to_sampled(&t.hdr, L::GENERAL, hdr_src)], &[]);
            for (i, down) in t.down.iter().enumerate() {
                compute[5 + i].record(dev, cmd); // bloom down i
                barrier(
                    dev,
                    cmd,
                    &[to_sampled(down, L::GENERAL, STORAGE_WRITE)],
                    &[],
                );
            }
            for (k, i) in (0..3).rev().enumerate() {
                compute[9 + k].record(dev, cmd); // bloom up i
                let mut images = vec![to_sampled(&t.up[i], L::GENERAL, STORAGE_WRITE)];
                if i == 0 {
                    // The tonemap reads the resolved glass layer too.
                    images.push(to_sampled(
                        &t.transparent,
                        L::COLOR_ATTACHMENT_OPTIMAL,
                        COLOR_WRITE,
                    ));
                }
                barrier(dev, cmd, &images, &[]);
            }
            compute[12].record(dev, cmd); // tonemap
            let blend = (CAO, A::COLOR_ATTACHMENT_READ | A::COLOR_ATTACHMENT_WRITE);
            let output = image(
                &t.output,
                L::GENERAL,
                L::COLOR_ATTACHMENT_OPTIMAL,
                STORAGE_WRITE,
                blend,
            );
            barrier(dev, cmd, &[output], &[]);
            self.raster().ui(cmd, t, v);
        }
    }

    /// The wait for the scene's upload, at the stages that read the scene there, of the first
    /// batch on each queue of the first frame in each slot. Every later frame is submitted
    /// after the host waited for the fences of a frame that waited for the upload; nothing
    /// writes the scene again.
    fn upload_wait(&self, stages: S) -> Vec<vk::SemaphoreSubmitInfo<'static>> {
        match self.upload {
            Some((semaphore, value)) if self.frames < self.slots.len() as u64 => {
                vec![vk::SemaphoreSubmitInfo::default()
                    .semaphore(semaphore)
                    .value(value)
                    .stage_mask(stages)]
            }
            _ => Vec::new(),
        }
    }

    fn submit(
        &self,
        queue: &Queue,
        submits: &[vk::SubmitInfo2<'_>],
        fence: vk::Fence,
    ) -> vk_baton::Result<()> {
        let lock = queue.lock();
        // SAFETY: the queue's lock is held; every command buffer is recorded, every semaphore
        // waited on is signalled by a batch submitted earlier.
        unsafe { self.device.queue_submit2(lock.handle(), submits, fence) }
            .map_err(vkerr("vkQueueSubmit2"))
    }
}

/// A whole view of `img` (2D, its format, every aspect).
fn view(dev: &ash::Device, img: &StImage) -> vk_baton::Result<vk::ImageView> {
    let info = vk::ImageViewCreateInfo::default()
        .image(img.handle())
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(img.desc().format)
        .subresource_range(img.full_range());
    // SAFETY: a valid create info for a live image; destroyed in Drop.
    unsafe { dev.create_image_view(&info, None) }.map_err(vkerr("vkCreateImageView"))
}

/// Written at `src` in `old`, read next by a compute shader's sampler.
pub fn to_sampled(img: &StImage, old: L, src: (S, A)) -> vk::ImageMemoryBarrier2<'static> {
    image(img, old, L::SHADER_READ_ONLY_OPTIMAL, src, SAMPLED)
}

/// The multisampled depth, written by the forward depth, then tested read-only by the glass.
fn depth_read_only(t: &Targets) -> vk::ImageMemoryBarrier2<'static> {
    let read = (TESTS, A::DEPTH_STENCIL_ATTACHMENT_READ);
    image(
        &t.msaa_depth,
        L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
        DEPTH_WRITE,
        read,
    )
}

/// Depth, normal and albedo from the G-buffer's attachments to the compute passes' samplers:
/// `depth_src` and `color_src` are the G-buffer's writes on the same queue, or the semaphore
/// wait that made them visible on another.
fn gbuffer_to_compute(
    t: &Targets,
    depth_src: (S, A),
    color_src: (S, A),
) -> [vk::ImageMemoryBarrier2<'static>; 3] {
    [
        to_sampled(&t.depth, L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL, depth_src),
        to_sampled(&t.normal, L::COLOR_ATTACHMENT_OPTIMAL, color_src),
        to_sampled(&t.albedo, L::COLOR_ATTACHMENT_OPTIMAL, color_src),
    ]
}

/// Before the lighting: the shadow map (`shadow_src`: as in [`gbuffer_to_compute`]), the
/// blurred SSAO and the light tiles, written on the compute queue.
fn before_lighting(
    t: &Targets,
    shadow_src: (S, A),
) -> (
    Vec<vk::ImageMemoryBarrier2<'static>>,
    Vec<vk::BufferMemoryBarrier2<'static>>,
) {
    (
        vec![
            to_sampled(&t.shadow, L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL, shadow_src),
            to_sampled(&t.ssao, L::GENERAL, STORAGE_WRITE),
        ],
        vec![buffer(
            &t.tiles,
            STORAGE_WRITE,
            (CS, A::SHADER_STORAGE_READ),
        )],
    )
}

// The two-queue frame, the waits, the readback and the cleanup.
#[path = "hand_two.rs"]
mod two;
pub use two::span;
