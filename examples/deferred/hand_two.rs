//! The hand-written frame on two queues, its waits and GPU times, its readback, and its
//! cleanup (see `hand.rs`).

use super::{
    before_lighting, depth_read_only, gbuffer_to_compute, to_sampled, Hand, AFTER_WAIT, CAO, CS,
    STORAGE_WRITE, TESTS,
};
use crate::hand_record::{barrier, first_uses, image, Compute};
use std::time::Duration;
use support::vkerr;
use vk_baton::ash::vk;
use vk_baton::BufferDesc;
use vk_baton_context::Context;

use vk::AccessFlags2 as A;
use vk::ImageLayout as L;
use vk::PipelineStageFlags2 as S;

/// The images the compute queue uses first in a frame (the graphics queue moves the others
/// out of UNDEFINED).
const COMPUTE_FIRST: [&str; 3] = ["ssao raw", "ssao", "hdr"];

/// A signal or wait of `semaphore` at `value`, at `stages`.
fn sem(semaphore: vk::Semaphore, value: u64, stages: S) -> vk::SemaphoreSubmitInfo<'static> {
    vk::SemaphoreSubmitInfo::default()
        .semaphore(semaphore)
        .value(value)
        .stage_mask(stages)
}

impl Hand {
    /// Graphics and async compute are two queues: three batches on each (see the module docs
    /// of `hand.rs`), recorded (unless `record` is false: a hand replay submits them again)
    /// and submitted in four submits.
    pub(super) fn record_two(&mut self, s: usize, record: bool) -> vk_baton::Result<()> {
        let cmds = match record {
            true => {
                let compute = std::mem::take(&mut self.slots[s].compute);
                let recorded = self.record_batches(s, &compute);
                self.slots[s].compute = compute;
                recorded?
            }
            false => self.slots[s].cmds,
        };
        let info = |q: usize, b: usize| {
            [vk::CommandBufferSubmitInfo::default().command_buffer(cmds[q][b])]
        };
        let (g, c) = (self.timelines[0], self.timelines[1]);
        // Two values per frame on each timeline.
        let v = 2 * self.frames;
        // Compute [cull]: the draws, written at COMPUTE_SHADER.
        let c1 = info(1, 0);
        let c1_waits = self.upload_wait(CS);
        let c1_signal = [sem(c, v + 1, CS)];
        // Graphics [forward depth, transparent, gbuffer] after the draws (read at DRAW_INDIRECT),
        // whose G-buffer the compute queue reads (written by the fragment tests and color
        // output); [shadow map] (written by the fragment tests).
        let g1 = info(0, 0);
        let mut g1_waits = self.upload_wait(S::VERTEX_INPUT | S::VERTEX_SHADER);
        g1_waits.push(sem(c, v + 1, S::DRAW_INDIRECT));
        let g1_signal = [sem(g, v + 1, TESTS | CAO)];
        let g2 = info(0, 1);
        let g2_signal = [sem(g, v + 2, TESTS)];
        // Compute [ssao, blur, light culling] after the G-buffer; [lighting] after the shadow
        // map, its HDR image read by graphics at COMPUTE_SHADER.
        let c2 = info(1, 1);
        let c2_waits = [sem(g, v + 1, CS)];
        let c3 = info(1, 2);
        let c3_waits = [sem(g, v + 2, CS)];
        let c3_signal = [sem(c, v + 2, CS)];
        // Graphics [bloom, tonemap, ui] after the lighting.
        let g3 = info(0, 2);
        let g3_waits = [sem(c, v + 2, CS)];
        let [gfx_fence, compute_fence] = self.slots[s].fences;
        let submit = vk::SubmitInfo2::default;
        self.submit(
            &self.compute,
            &[submit()
                .command_buffer_infos(&c1)
                .wait_semaphore_infos(&c1_waits)
                .signal_semaphore_infos(&c1_signal)],
            vk::Fence::null(),
        )?;
        self.submit(
            &self.gfx,
            &[
                submit()
                    .command_buffer_infos(&g1)
                    .wait_semaphore_infos(&g1_waits)
                    .signal_semaphore_infos(&g1_signal),
                submit()
                    .command_buffer_infos(&g2)
                    .signal_semaphore_infos(&g2_signal),
            ],
            vk::Fence::null(),
        )?;
        self.submit(
            &self.compute,
            &[
                submit()
                    .command_buffer_infos(&c2)
                    .wait_semaphore_infos(&c2_waits),
                submit()
                    .command_buffer_infos(&c3)
                    .wait_semaphore_infos(&c3_waits)
                    .signal_semaphore_infos(&c3_signal),
            ],
            compute_fence,
        )?;
        self.submit(
            &self.gfx,
            &[submit()
                .command_buffer_infos(&g3)
                .wait_semaphore_infos(&g3_waits)],
            gfx_fence,
        )
    }

    /// Records the six command buffers of the frame in slot `s`: per queue (graphics,
    /// compute), per batch.
    fn record_batches(
        &self,
        s: usize,
        compute: &[Compute],
    ) -> vk_baton::Result<[[vk::CommandBuffer; 3]; 2]> {
        let dev = &self.device;
        let (slot, r) = (&self.slots[s], self.raster());
        let (t, v) = (&slot.t, &slot.views);
        let cmds = slot.cmds;
        let compute_first = |name: &str| COMPUTE_FIRST.contains(&name);
        // Every block below: each command buffer is recording on its queue (compute
        // passes on a queue with compute, raster passes on graphics); each barrier puts what
        // the next pass uses in the layout it names, with the earlier writes visible: on this
        // queue by the barrier, from the other queue by the batch's semaphore wait, with the
        // layout change chained from the wait's stage (AFTER_WAIT); every object is alive until
        // the slot's fences.
        let c = self.begin(s, 1, 0)?;
        // SAFETY: as above; the compute-first images leave UNDEFINED.
        unsafe {
            self.stamp_start(c, s, 1);
            barrier(dev, c, &first_uses(t, compute_first), &[]);
            compute[0].record(dev, c); // cull
        }
        self.end(c)?;
        let g = self.begin(s, 0, 0)?;
        // SAFETY: as above; the other images leave UNDEFINED.
        unsafe {
            self.stamp_start(g, s, 0);
            // The culling's draws: visible to DRAW_INDIRECT by the semaphore wait.
            barrier(dev, g, &first_uses(t, |name| !compute_first(name)), &[]);
            r.forward_depth(g, t, v);
            barrier(dev, g, &[depth_read_only(t)], &[]);
            r.transparent(g, t, v);
            r.gbuffer(g, t, v);
        }
        self.end(g)?;
        let g = self.begin(s, 0, 1)?;
        // SAFETY: as above (the shadow map is in its layout since the first barrier).
        unsafe { r.shadow(g, t, v) };
        self.end(g)?;
        let c = self.begin(s, 1, 1)?;
        // SAFETY: as above, after the wait for the G-buffer.
        unsafe {
            barrier(dev, c, &gbuffer_to_compute(t, AFTER_WAIT, AFTER_WAIT), &[]);
            compute[1].record(dev, c); // ssao
            barrier(
                dev,
                c,
                &[to_sampled(&t.ssao_raw, L::GENERAL, STORAGE_WRITE)],
                &[],
            );
            compute[2].record(dev, c); // ssao blur
            compute[3].record(dev, c); // light culling: depth is readable already
        }
        self.end(c)?;
        let c = self.begin(s, 1, 2)?;
        // SAFETY: as above, after the wait for the shadow map.
        unsafe {
            let (images, buffers) = before_lighting(t, AFTER_WAIT);
            barrier(dev, c, &images, &buffers);
            compute[4].record(dev, c); // lighting
            self.stamp_end(c, s, 1);
        }
        self.end(c)?;
        let g = self.begin(s, 0, 2)?;
        // SAFETY: as above, after the wait for the lighting (`post`'s contract).
        unsafe {
            self.post(g, t, v, compute, AFTER_WAIT);
            self.stamp_end(g, s, 0);
        }
        self.end(g)?;
        Ok(cmds)
    }

    /// Copies the output of frame `n` (the last one submitted, waited for with
    /// [`Hand::wait_all`]) into a host-visible buffer and reads it.
    pub fn readback(&mut self, ctx: &Context, n: u32) -> vk_baton::Result<Vec<u8>> {
        let s = n as usize % self.slots.len();
        let out = &self.slots[s].t.output;
        let e = out.desc().extent;
        let bytes = e.width as u64 * e.height as u64 * 4;
        let buf = ctx.buffer(
            BufferDesc::readback(bytes, vk::BufferUsageFlags::TRANSFER_DST),
            "hand readback",
        )?;
        let dev = &self.device;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.slots[s].pools[0])
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: a valid allocate info; the pool is not in use by another thread.
        let cmd = unsafe { dev.allocate_command_buffers(&alloc) }
            .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(e);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        let copy_read = (S::COPY, A::TRANSFER_READ);
        let ui = (CAO, A::COLOR_ATTACHMENT_WRITE);
        let to_src = image(
            out,
            L::COLOR_ATTACHMENT_OPTIMAL,
            L::TRANSFER_SRC_OPTIMAL,
            ui,
            copy_read,
        );
        let to_host =
            crate::hand_record::buffer(&buf, (S::COPY, A::TRANSFER_WRITE), (S::HOST, A::HOST_READ));
        // SAFETY: `cmd` is new; the UI's writes (earlier on this queue) come before the copy,
        // the copy's before the host's read; the fence wait below ends the GPU's use.
        unsafe {
            dev.begin_command_buffer(cmd, &begin)
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            barrier(dev, cmd, &[to_src], &[]);
            dev.cmd_copy_image_to_buffer(
                cmd,
                out.handle(),
                L::TRANSFER_SRC_OPTIMAL,
                buf.handle(),
                &[region],
            );
            barrier(dev, cmd, &[], &[to_host]);
            dev.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
        }
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let fence = self.slots[s].fences[0];
        self.submit(
            &self.gfx,
            &[vk::SubmitInfo2::default().command_buffer_infos(&cmds)],
            fence,
        )?;
        // SAFETY: the fence was just submitted; once signalled nothing uses `cmd`.
        unsafe {
            dev.wait_for_fences(&[fence], true, u64::MAX)
                .map_err(vkerr("vkWaitForFences"))?;
            dev.reset_fences(&[fence]).map_err(vkerr("vkResetFences"))?;
            dev.free_command_buffers(self.slots[s].pools[0], &[cmd]);
        }
        let mut pixels = vec![0u8; bytes as usize];
        buf.read(0, &mut pixels)?;
        Ok(pixels)
    }
}

impl Drop for Hand {
    fn drop(&mut self) {
        // Nothing may be destroyed while the GPU uses it.
        if let Err(e) = self.wait_all() {
            log::error!("hand-written frame: waiting for the frames in flight: {e}");
        }
        let dev = &self.device;
        // SAFETY: every frame was waited for; the objects are this renderer's and null handles
        // are ignored. The targets and compute passes drop after this.
        unsafe {
            for slot in &self.slots {
                for v in slot.views.all() {
                    dev.destroy_image_view(v, None);
                }
                for p in slot.pools {
                    dev.destroy_command_pool(p, None);
                }
                for f in slot.fences {
                    dev.destroy_fence(f, None);
                }
            }
            for s in self.timelines {
                dev.destroy_semaphore(s, None);
            }
            dev.destroy_query_pool(self.queries, None);
        }
    }
}

impl Hand {
    /// The fences a frame of this renderer signals: graphics', and compute's with two queues.
    fn fences(&self, s: usize) -> &[vk::Fence] {
        &self.slots[s].fences[..1 + self.two as usize]
    }

    /// Waits for the frame that used slot `s`, if any; returns its GPU time (the span from the
    /// first timestamp to the last across the queues).
    pub fn wait_slot(&mut self, s: usize) -> vk_baton::Result<Option<Duration>> {
        if !self.slots[s].pending {
            return Ok(None);
        }
        let fences = self.fences(s);
        // SAFETY: the fences were submitted; waiting and resetting them once signalled is valid.
        unsafe {
            self.device
                .wait_for_fences(fences, true, u64::MAX)
                .map_err(vkerr("vkWaitForFences"))?;
            self.device
                .reset_fences(fences)
                .map_err(vkerr("vkResetFences"))?;
        }
        self.slots[s].pending = false;
        let mut ts = [0u64; 4];
        let n = if self.two { 4 } else { 2 };
        // SAFETY: the frame that wrote these queries has completed (its fences).
        unsafe {
            self.device.get_query_pool_results(
                self.queries,
                4 * s as u32,
                &mut ts[..n],
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(vkerr("vkGetQueryPoolResults"))?;
        Ok(Some(span(&ts[..n], self.masks, self.period_ns)))
    }

    /// The semaphore waits of a steady frame (the first frames also wait for the upload).
    pub fn semaphore_waits(&self) -> usize {
        if self.two {
            4
        } else {
            0
        }
    }

    /// Waits for every frame in flight; their GPU times.
    pub fn wait_all(&mut self) -> vk_baton::Result<Vec<Duration>> {
        let mut out = Vec::new();
        for s in 0..self.slots.len() {
            out.extend(self.wait_slot(s)?);
        }
        Ok(out)
    }
}

/// The span from the first start to the last end, in nanoseconds' `Duration`: `ts` holds
/// (start, end) pairs per queue, graphics then compute.
pub fn span(ts: &[u64], masks: [u64; 2], period_ns: f64) -> Duration {
    let pairs: Vec<(u64, u64)> = ts
        .chunks_exact(2)
        .zip(masks)
        .map(|(p, m)| (p[0] & m, p[1] & m))
        .collect();
    let start = pairs.iter().map(|p| p.0).min().unwrap_or(0);
    let end = pairs.iter().map(|p| p.1).max().unwrap_or(0);
    Duration::from_nanos((end.saturating_sub(start) as f64 * period_ns) as u64)
}
