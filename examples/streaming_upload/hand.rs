//! The baseline: the same stream written by hand with raw ash, as an app without vk-baton
//! would: its own persistently mapped staging buffers (one per slot, the host copies each
//! item in), command pools and buffers, the barriers, the release/acquire pair when transfer
//! and compute are different families, a timeline semaphore from the transfer submit to the
//! compute submit, and per slot one fence for each of its two submits. Its device buffers and
//! images are its own (the graph never sees them).

use crate::workload::{image_regions, Item, Workload};
use std::sync::Arc;
use std::time::Instant;
use support::vkerr;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, ImageDesc, Queue, StBuffer, StImage};
use vk_baton_context::Context;

/// Per-slot resources: staging, destinations, command buffers, fences, descriptor set.
struct Slot {
    staging: Arc<StBuffer>,
    /// The buffer the checksum reads: the destination of buffer pieces, or the images'
    /// copy-back for image streams.
    data: Arc<StBuffer>,
    images: Vec<Arc<StImage>>,
    upload_cmd: vk::CommandBuffer,
    consume_cmd: vk::CommandBuffer,
    /// Signalled by the upload's submit and by the consumer's. A wait on both covers each
    /// queue's work directly: the consumer's fence alone orders the upload before it too
    /// (through the semaphore), but validation layer 1.4.309 does not follow a fence wait
    /// through a semaphore to the other queue, and reports the next upload into the slot as a
    /// write-after-write hazard.
    fences: [vk::Fence; 2],
    set: vk::DescriptorSet,
}

pub struct HandWritten {
    device: vk_baton::ash::Device,
    transfer: Queue,
    compute: Queue,
    pools: [vk::CommandPool; 2],
    slots: Vec<Slot>,
    timeline: vk::Semaphore,
    value: u64,
    shader: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    descriptor_pool: vk::DescriptorPool,
    /// Every slot's partial sums: slot `s`'s share starts at word `s * MAX_GROUPS`.
    partials: Arc<StBuffer>,
    /// Per slot, the consumed batch whose partial sums are still to be checked.
    pending: Vec<Option<usize>>,
    /// The checksum each batch must give.
    expected: Vec<u32>,
    groups: u32,
    /// Batches checked, and those whose checksum matched.
    pub checks: crate::Checks,
    /// Host time per phase: uploads only, and with the consumer.
    pub phases: [HandPhases; 2],
}

/// Seconds the hand-written side spends in each host phase of a batch, summed over batches.
#[derive(Default, Clone, Copy, Debug)]
pub struct HandPhases {
    /// Waiting for the slot's fence (its last use) before reusing it.
    pub wait: f64,
    /// Copying the items into the slot's staging buffer.
    pub stage: f64,
    /// Recording the command buffers and submitting them.
    pub record_submit: f64,
    pub batches: usize,
}

/// The byte offset of slot `s`'s share of the partial sums.
fn share_offset(s: usize) -> u64 {
    s as u64 * 4 * u64::from(crate::MAX_GROUPS)
}

fn buffer_barrier(b: &StBuffer) -> vk::BufferMemoryBarrier2<'static> {
    vk::BufferMemoryBarrier2::default()
        .buffer(b.handle())
        .size(vk::WHOLE_SIZE)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
}

fn image_barrier(img: &StImage) -> vk::ImageMemoryBarrier2<'static> {
    vk::ImageMemoryBarrier2::default()
        .image(img.handle())
        .subresource_range(img.full_range())
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
}

impl HandWritten {
    /// The hand-written stream of `w`, `in_flight` slots; batch `b`'s checksum (of `groups`
    /// partial sums) must equal `expected[b]`.
    pub fn new(
        ctx: &Context,
        w: &Workload,
        in_flight: usize,
        spirv: &[u32],
        groups: u32,
        expected: Vec<u32>,
    ) -> vk_baton::Result<Self> {
        let d = ctx.device().clone();
        let (transfer, compute) = (ctx.transfer().clone(), ctx.async_compute().clone());
        let partials = ctx.buffer(
            BufferDesc::readback(
                in_flight as u64 * 4 * crate::MAX_GROUPS as u64,
                vk::BufferUsageFlags::STORAGE_BUFFER,
            ),
            "hand-written partial sums",
        )?;
        // SAFETY: valid create infos on a live device; everything is destroyed in `Drop`,
        // after waiting for the device.
        unsafe {
            let pool = |family| {
                d.create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))
            };
            let pools = [pool(transfer.family())?, pool(compute.family())?];
            let alloc = |pool| {
                d.allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(in_flight as u32),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))
            };
            let (ucmds, ccmds) = (alloc(pools[0])?, alloc(pools[1])?);
            let mut type_info = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let timeline = d
                .create_semaphore(
                    &vk::SemaphoreCreateInfo::default().push_next(&mut type_info),
                    None,
                )
                .map_err(vkerr("vkCreateSemaphore"))?;
            let shader = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
                .map_err(vkerr("vkCreateShaderModule"))?;
            let bindings = [0, 1].map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            });
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            let push = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .size(8)];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(std::slice::from_ref(&set_layout))
                        .push_constant_ranges(&push),
                    None,
                )
                .map_err(vkerr("vkCreatePipelineLayout"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(shader)
                .name(c"main");
            let pipeline = d
                .create_compute_pipelines(
                    vk::PipelineCache::null(),
                    &[vk::ComputePipelineCreateInfo::default()
                        .stage(stage)
                        .layout(layout)],
                    None,
                )
                .map_err(|(_, e)| vk_baton::Error::vk("vkCreateComputePipelines", e))?[0];
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(2 * in_flight as u32)];
            let descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(in_flight as u32)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            let layouts = vec![set_layout; in_flight];
            let sets = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(descriptor_pool)
                        .set_layouts(&layouts),
                )
                .map_err(vkerr("vkAllocateDescriptorSets"))?;
            let mut slots = Vec::new();
            for s in 0..in_flight {
                let staging = ctx.buffer(
                    BufferDesc::upload(w.batch_bytes(), vk::BufferUsageFlags::TRANSFER_SRC),
                    &format!("hand-written staging {s}"),
                )?;
                let data = ctx.buffer(
                    BufferDesc::new(
                        w.batch_bytes(),
                        vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
                    ),
                    &format!("hand-written data {s}"),
                )?;
                let images = match w.item {
                    Item::Piece { .. } => Vec::new(),
                    Item::Image { size, mips } => (0..w.per_batch)
                        .map(|p| {
                            ctx.image(
                                ImageDesc::new_2d(
                                    size,
                                    size,
                                    vk::Format::R8G8B8A8_UNORM,
                                    vk::ImageUsageFlags::TRANSFER_DST
                                        | vk::ImageUsageFlags::TRANSFER_SRC,
                                )
                                .mips(mips),
                                &format!("hand-written image {s}.{p}"),
                            )
                        })
                        .collect::<vk_baton::Result<_>>()?,
                };
                // The slot's set covers its own share of the partial sums only (at a multiple of
                // 16 KiB, which meets any device's minStorageBufferOffsetAlignment): the slots'
                // checksums are not ordered among themselves, and the validation layer's
                // shader-access heuristic takes a dispatch to write the whole range its
                // descriptor covers, whatever the shader's indices.
                let infos = [
                    [vk::DescriptorBufferInfo::default()
                        .buffer(data.handle())
                        .range(vk::WHOLE_SIZE)],
                    [vk::DescriptorBufferInfo::default()
                        .buffer(partials.handle())
                        .offset(share_offset(s))
                        .range(4 * u64::from(groups))],
                ];
                let writes = [0usize, 1].map(|b| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(sets[s])
                        .dst_binding(b as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(&infos[b])
                });
                d.update_descriptor_sets(&writes, &[]);
                let signalled =
                    vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED);
                let fences = [
                    d.create_fence(&signalled, None)
                        .map_err(vkerr("vkCreateFence"))?,
                    d.create_fence(&signalled, None)
                        .map_err(vkerr("vkCreateFence"))?,
                ];
                slots.push(Slot {
                    staging,
                    data,
                    images,
                    upload_cmd: ucmds[s],
                    consume_cmd: ccmds[s],
                    fences,
                    set: sets[s],
                });
            }
            Ok(Self {
                device: d,
                transfer,
                compute,
                pools,
                slots,
                timeline,
                value: 0,
                shader,
                set_layout,
                layout,
                pipeline,
                descriptor_pool,
                partials,
                pending: vec![None; in_flight],
                expected,
                groups,
                checks: crate::Checks::default(),
                phases: Default::default(),
            })
        }
    }

    /// Streams batch `b` of `w` through slot `b % slots`: waits for the slot's last use, copies
    /// the items into its staging buffer, records and submits the upload; with `consume`, also
    /// the checksum on the compute queue (`dispatched` workgroups, partial sums in the slot's
    /// share of the partial-sums buffer, checked once the slot's fence has signalled).
    pub fn batch(
        &mut self,
        w: &Workload,
        b: usize,
        consume: bool,
        dispatched: u32,
    ) -> vk_baton::Result<()> {
        let t0 = Instant::now();
        let d = self.device.clone();
        let s = b % self.slots.len();
        // SAFETY: the fences are live, and submitted or created signalled.
        unsafe { d.wait_for_fences(&self.slots[s].fences, true, u64::MAX) }
            .map_err(vkerr("vkWaitForFences"))?;
        self.check_slot(s)?;
        let t1 = Instant::now();
        let item_bytes = w.item.bytes();
        let items = w.items(b);
        // The fence wait made the staging buffer idle.
        for (p, i) in items.clone().enumerate() {
            self.slots[s]
                .staging
                .write(p as u64 * item_bytes, w.source(i))?;
        }
        let t2 = Instant::now();
        let recorded = self.record_submit(w, b, consume, dispatched);
        let phases = &mut self.phases[usize::from(consume)];
        phases.batches += 1;
        phases.wait += (t1 - t0).as_secs_f64();
        phases.stage += (t2 - t1).as_secs_f64();
        phases.record_submit += t2.elapsed().as_secs_f64();
        recorded
    }

    /// The rest of [`HandWritten::batch`] once the slot is idle and staged: records and
    /// submits the upload, and with `consume` the checksum.
    fn record_submit(
        &mut self,
        w: &Workload,
        b: usize,
        consume: bool,
        dispatched: u32,
    ) -> vk_baton::Result<()> {
        let d = self.device.clone();
        let s = b % self.slots.len();
        let slot = &self.slots[s];
        let item_bytes = w.item.bytes();
        let items = w.items(b);
        let n = items.len();
        let other_family = self.transfer.family() != self.compute.family();
        let (tf, cf) = (self.transfer.family(), self.compute.family());
        // SAFETY: the fence wait makes the slot's command buffers, staging buffer and
        // destinations idle before they are reused; every handle is live; submits happen under
        // the queues' locks.
        unsafe {
            let submitted = if consume {
                &slot.fences[..]
            } else {
                &slot.fences[..1]
            };
            d.reset_fences(submitted).map_err(vkerr("vkResetFences"))?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            let cmd = slot.upload_cmd;
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.begin_command_buffer(cmd, &begin)
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            let images = &slot.images[..slot.images.len().min(n)];
            match w.item {
                Item::Piece { bytes } => {
                    let regions: Vec<vk::BufferCopy> = (0..n as u64)
                        .map(|p| vk::BufferCopy {
                            src_offset: p * bytes,
                            dst_offset: p * bytes,
                            size: bytes,
                        })
                        .collect();
                    d.cmd_copy_buffer(cmd, slot.staging.handle(), slot.data.handle(), &regions);
                    if consume && other_family {
                        let release = [buffer_barrier(&slot.data)
                            .src_stage_mask(vk::PipelineStageFlags2::COPY)
                            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                            .src_queue_family_index(tf)
                            .dst_queue_family_index(cf)];
                        d.cmd_pipeline_barrier2(
                            cmd,
                            &vk::DependencyInfo::default().buffer_memory_barriers(&release),
                        );
                    }
                }
                Item::Image { size, mips } => {
                    // The old contents are not needed: from UNDEFINED, no ownership transfer.
                    let to_dst: Vec<_> = images
                        .iter()
                        .map(|img| {
                            image_barrier(img)
                                .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                                .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                                .old_layout(vk::ImageLayout::UNDEFINED)
                                .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                        })
                        .collect();
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().image_memory_barriers(&to_dst),
                    );
                    for (p, img) in images.iter().enumerate() {
                        let regions = image_regions(size, mips, p as u64 * item_bytes);
                        d.cmd_copy_buffer_to_image(
                            cmd,
                            slot.staging.handle(),
                            img.handle(),
                            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                            &regions,
                        );
                    }
                    if consume && other_family {
                        let release: Vec<_> = images
                            .iter()
                            .map(|img| {
                                image_barrier(img)
                                    .src_stage_mask(vk::PipelineStageFlags2::COPY)
                                    .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                                    .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                                    .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
                                    .src_queue_family_index(tf)
                                    .dst_queue_family_index(cf)
                            })
                            .collect();
                        d.cmd_pipeline_barrier2(
                            cmd,
                            &vk::DependencyInfo::default().image_memory_barriers(&release),
                        );
                    }
                }
            }
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            self.value += 1;
            // After the copies; a release barrier (across families) has no stage of its own
            // to signal after, so then the signal covers every stage.
            let stages = if other_family {
                vk::PipelineStageFlags2::ALL_COMMANDS
            } else {
                vk::PipelineStageFlags2::COPY
            };
            let signal = [vk::SemaphoreSubmitInfo::default()
                .semaphore(self.timeline)
                .value(self.value)
                .stage_mask(stages)];
            let mut submit = vk::SubmitInfo2::default().command_buffer_infos(&cmds);
            if consume {
                submit = submit.signal_semaphore_infos(&signal);
            }
            {
                let lock = self.transfer.lock();
                d.queue_submit2(lock.handle(), &[submit], slot.fences[0])
                    .map_err(vkerr("vkQueueSubmit2"))?;
            }
            if !consume {
                return Ok(());
            }

            // The consumer on the compute queue.
            let cmd = slot.consume_cmd;
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.begin_command_buffer(cmd, &begin)
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            let families = |b: vk::BufferMemoryBarrier2<'static>| {
                if other_family {
                    b.src_queue_family_index(tf).dst_queue_family_index(cf)
                } else {
                    b
                }
            };
            let wait_stage = match w.item {
                Item::Piece { .. } => {
                    if other_family {
                        let acquire = [families(buffer_barrier(&slot.data))
                            .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                            .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                            .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_READ)];
                        d.cmd_pipeline_barrier2(
                            cmd,
                            &vk::DependencyInfo::default().buffer_memory_barriers(&acquire),
                        );
                    }
                    vk::PipelineStageFlags2::COMPUTE_SHADER
                }
                Item::Image { size, mips } => {
                    // Acquire (or, on one family, just transition) the images for the copy-back.
                    let acquire: Vec<_> = images
                        .iter()
                        .map(|img| {
                            let b = image_barrier(img)
                                .src_stage_mask(vk::PipelineStageFlags2::COPY)
                                .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                                .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)
                                .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                                .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                            if other_family {
                                b.src_queue_family_index(tf).dst_queue_family_index(cf)
                            } else {
                                b
                            }
                        })
                        .collect();
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().image_memory_barriers(&acquire),
                    );
                    for (p, img) in images.iter().enumerate() {
                        let regions = image_regions(size, mips, p as u64 * item_bytes);
                        d.cmd_copy_image_to_buffer(
                            cmd,
                            img.handle(),
                            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                            slot.data.handle(),
                            &regions,
                        );
                    }
                    let to_shader = [buffer_barrier(&slot.data)
                        .src_stage_mask(vk::PipelineStageFlags2::COPY)
                        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                        .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                        .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_READ)];
                    d.cmd_pipeline_barrier2(
                        cmd,
                        &vk::DependencyInfo::default().buffer_memory_barriers(&to_shader),
                    );
                    vk::PipelineStageFlags2::COPY
                }
            };
            let words = (n as u64 * item_bytes / 4) as u32;
            // The set's partial-sums binding starts at the slot's share.
            let first = 0u32;
            let push: Vec<u8> = [words, first]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[slot.set],
                &[],
            );
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cmd, dispatched, 1, 1);
            // The partial sums are read by the host after the fence.
            let to_host = [buffer_barrier(&self.partials)
                .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)];
            d.cmd_pipeline_barrier2(
                cmd,
                &vk::DependencyInfo::default().buffer_memory_barriers(&to_host),
            );
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            // Without VK_KHR_maintenance8 an acquire is outside its barrier's first scope: only
            // a wait before all commands orders it after the release.
            let wait_stage = if other_family {
                vk::PipelineStageFlags2::ALL_COMMANDS
            } else {
                wait_stage
            };
            let wait = [vk::SemaphoreSubmitInfo::default()
                .semaphore(self.timeline)
                .value(self.value)
                .stage_mask(wait_stage)];
            let submit = vk::SubmitInfo2::default()
                .command_buffer_infos(&cmds)
                .wait_semaphore_infos(&wait);
            let lock = self.compute.lock();
            d.queue_submit2(lock.handle(), &[submit], slot.fences[1])
                .map_err(vkerr("vkQueueSubmit2"))?;
        }
        if dispatched > 0 {
            self.pending[s] = Some(b);
        }
        Ok(())
    }

    /// Checks the partial sums of the batch slot `s` consumed last, if not checked yet; the
    /// slot's fence must have signalled.
    fn check_slot(&mut self, s: usize) -> vk_baton::Result<()> {
        if let Some(b) = self.pending[s].take() {
            let sum = crate::baton::sum_u32s(&self.partials, share_offset(s) / 4, self.groups)?;
            self.checks
                .add(sum == self.expected[b % self.expected.len()]);
        }
        Ok(())
    }

    /// Waits for every slot and checks what they consumed.
    pub fn wait_all(&mut self) -> vk_baton::Result<()> {
        let fences: Vec<vk::Fence> = self.slots.iter().flat_map(|s| s.fences).collect();
        // SAFETY: the fences are live; every one was submitted or created signalled.
        unsafe { self.device.wait_for_fences(&fences, true, u64::MAX) }
            .map_err(vkerr("vkWaitForFences"))?;
        (0..self.slots.len()).try_for_each(|s| self.check_slot(s))
    }
}

impl Drop for HandWritten {
    fn drop(&mut self) {
        // SAFETY: waiting for the device makes every command buffer, set and semaphore idle;
        // then nothing uses them.
        unsafe {
            let _ = self.device.device_wait_idle();
            let d = &self.device;
            for f in self.slots.iter().flat_map(|s| s.fences) {
                d.destroy_fence(f, None);
            }
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.shader, None);
            d.destroy_semaphore(self.timeline, None);
            for p in self.pools {
                d.destroy_command_pool(p, None);
            }
        }
    }
}
