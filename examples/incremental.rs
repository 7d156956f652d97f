//! Incremental adoption: an app that records its frame by hand with raw ash keeps doing so,
//! and hands vk-baton two jobs only: the upload (on the transfer queue) and the final handoff
//! of the frame (here headless: a copy into a host buffer; with a window, the present).
//!
//! Read it as a migration guide. Each numbered step says what the app did BEFORE and what it
//! does AFTER. Nothing forces the rest of the app to change: it keeps its own device, queues,
//! memory, pipelines, command pool, command buffers, barriers and submits.
//!
//! ```text
//! cargo run --example incremental -- --frames 2
//! ```
//!
//! Each frame: vk-baton uploads `data[i] = i * 7 + 1000 * frame` into the app's own buffer;
//! the app's own compute pass writes `image[x, y] = data[y * W + x] * 3 + 1` into its own
//! image; vk-baton copies the image to a host buffer, and the host checks every texel.
//! Exits non-zero on any validation message or a wrong texel.

use std::sync::Arc;
use support::{report_validation, vkerr, ValueExt};
use vk_baton::ash::vk;
use vk_baton::{
    BufferDesc, Context, Destroy, ImageDesc, Queue, ResourceState, StBuffer, StImage, StateSnapshot,
};
use vk_baton_passes::{ComputeDispatch, DownloadImage, ShaderAccess, UploadBuffer};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 32;

/// What the app must do before touching a resource a graph used last: read off its tracked
/// state (step 4).
struct AfterGraph {
    /// The layout the graph left it in (the app's barrier's `oldLayout`).
    layout: vk::ImageLayout,
    /// The family that owns it now.
    owner: Option<u32>,
    /// The stages and accesses the app's barrier must wait for (its source scope).
    src_stages: vk::PipelineStageFlags2,
    src_access: vk::AccessFlags2,
    /// Timeline values the app's submit must wait for (one per queue, the highest).
    waits: Vec<(Queue, u64)>,
}

fn after_graph(s: &StateSnapshot) -> AfterGraph {
    let mut a = AfterGraph {
        layout: s.layout().unwrap_or(vk::ImageLayout::UNDEFINED),
        owner: s.owner().flatten(),
        src_stages: vk::PipelineStageFlags2::NONE,
        src_access: vk::AccessFlags2::NONE,
        waits: Vec::new(),
    };
    for (_, seg) in &s.segments {
        // The last write (a layout transition or ownership transfer counts as one) and the
        // reads since: the app's next write must come after all of them; its next read
        // after the write.
        for (rec, is_write) in seg
            .write
            .iter()
            .map(|w| (w, true))
            .chain(seg.reads.iter().map(|r| (r, false)))
        {
            a.src_stages |= rec.stages;
            if is_write {
                a.src_access |= rec.access;
            }
            // `Some(0)`: ordered by the app itself; `Some(v)`: wait for v on that timeline.
            if let Some(v) = rec.value.filter(|&v| v > 0) {
                match a.waits.iter_mut().find(|(q, _)| *q == rec.queue) {
                    Some((_, w)) => *w = (*w).max(v),
                    None => a.waits.push((rec.queue.clone(), v)),
                }
            }
        }
    }
    a
}

/// The app's own memory allocation (what the app already had; vk-baton needs none of it).
fn app_allocate(
    ctx: &Context,
    req: vk::MemoryRequirements,
    flags: vk::MemoryPropertyFlags,
) -> vk_baton::Result<vk::DeviceMemory> {
    // SAFETY: plain query on a live physical device.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_memory_properties(ctx.physical_device())
    };
    let index = (0..props.memory_type_count)
        .find(|&i| {
            req.memory_type_bits & (1 << i) != 0
                && props.memory_types[i as usize]
                    .property_flags
                    .contains(flags)
        })
        .ok_or_else(|| vk_baton::Error::InvalidInput("no suitable memory type".into()))?;
    // SAFETY: a valid allocate info; the app frees the memory at exit.
    unsafe {
        ctx.device().allocate_memory(
            &vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(index),
            None,
        )
    }
    .map_err(vkerr("vkAllocateMemory"))
}

fn run() -> vk_baton::Result<bool> {
    let mut frames = 2u32;
    support::parse_args("usage: incremental [--frames N]", |name, p| {
        match name {
            "frames" => frames = p.value()?.parse()?,
            _ => return Ok(false),
        }
        Ok(true)
    });
    // The app already has an instance, a device and queues. `Context` stands in for them
    // here; an app with its own makes the queues with `vk_baton::Queue::new(&device, family,
    // index, caps, name)`, once per VkQueue, and clones them wherever they are needed.
    let ctx = Context::new()?;
    let device = ctx.device();
    println!("device: {}", ctx.device_name());
    println!(
        "queues: graphics = family {}, transfer = family {}",
        ctx.graphics().family(),
        ctx.transfer().family()
    );

    // ---------------------------------------------------------------------------------------
    // Step 1: wrap the app's own handles.
    //
    // BEFORE: the app created its buffer and image with vkCreate*, bound its own memory, and
    //         tracked their layouts in its head.
    // AFTER:  the same handles, wrapped with `from_raw` in the state they are in (fresh:
    //         undefined) and `Destroy::AppKeeps`: vk-baton never frees them.
    // ---------------------------------------------------------------------------------------
    let bytes = (WIDTH * HEIGHT * 4) as u64;
    let buffer_info = vk::BufferCreateInfo::default()
        .size(bytes)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST);
    let image_desc = ImageDesc::new_2d(
        WIDTH,
        HEIGHT,
        vk::Format::R32_UINT,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
    );
    let image_info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(image_desc.format)
        .extent(image_desc.extent)
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(image_desc.usage)
        .initial_layout(vk::ImageLayout::UNDEFINED);
    // SAFETY: valid create infos; the memory satisfies the requirements; the app destroys
    // both at exit, after the device is idle.
    let (raw_buffer, buffer_memory, raw_image, image_memory) = unsafe {
        let b = device
            .create_buffer(&buffer_info, None)
            .map_err(vkerr("vkCreateBuffer"))?;
        let bm = app_allocate(
            &ctx,
            device.get_buffer_memory_requirements(b),
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
        )?;
        device
            .bind_buffer_memory(b, bm, 0)
            .map_err(vkerr("vkBindBufferMemory"))?;
        let i = device
            .create_image(&image_info, None)
            .map_err(vkerr("vkCreateImage"))?;
        let im = app_allocate(
            &ctx,
            device.get_image_memory_requirements(i),
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
        )?;
        device
            .bind_image_memory(i, im, 0)
            .map_err(vkerr("vkBindImageMemory"))?;
        (b, bm, i, im)
    };
    // SAFETY: both are live objects of `device`, made with these descriptions and bound
    // above; the app destroys them at the end, after the last graph's fence and `Arc`.
    let (data_buf, image) = unsafe {
        (
            Arc::new(StBuffer::from_raw(
                device,
                raw_buffer,
                BufferDesc::new(bytes, buffer_info.usage),
                "app data",
                ResourceState::undefined(),
                Destroy::AppKeeps,
            )),
            Arc::new(StImage::from_raw(
                device,
                raw_image,
                image_desc,
                "app image",
                ResourceState::undefined(),
                Destroy::AppKeeps,
            )),
        )
    };

    // The app's compute pipeline: a stock `ComputeDispatch` (pipeline, layout and descriptor
    // set in one object), which the app records into its own command buffer below rather than
    // inserting it into a graph. Its command pool, command buffer and fence: unchanged.
    let code = support::spirv(vk_baton_shaders::INCREMENTAL_COMP)?;
    // SAFETY: the sample's own shader (compiled from shaders/), with exactly the bindings
    // and push constants declared below.
    let pipe = unsafe { ComputeDispatch::builder(device, &code) }
        .name("app compute")
        .storage_buffer(0, data_buf.clone(), ShaderAccess::Read)
        .storage_image(1, image.clone(), ShaderAccess::Write)
        .groups(WIDTH.div_ceil(8), HEIGHT.div_ceil(8), 1)
        .build()?;
    // SAFETY: valid create infos; destroyed at exit after the fence has been waited for.
    let (pool, cmd, fence) = unsafe {
        let pool = device
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(ctx.graphics().family())
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .map_err(vkerr("vkCreateCommandPool"))?;
        let cmd = device
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
            .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
        let fence = device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(vkerr("vkCreateFence"))?;
        (pool, cmd, fence)
    };

    let graph = ctx.graph()?;
    let mut all_ok = true;
    for frame in 0..frames {
        println!("\nframe {frame}");
        let data: Vec<u32> = (0..WIDTH * HEIGHT)
            .map(|i| i.wrapping_mul(7).wrapping_add(1000 * frame))
            .collect();
        let data_bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();

        // -----------------------------------------------------------------------------------
        // Step 2: the upload goes to vk-baton, on the transfer queue.
        //
        // BEFORE: the app filled a staging buffer, recorded vkCmdCopyBuffer and a barrier on
        //         the graphics queue, submitted, and waited (vkQueueWaitIdle) before using it.
        // AFTER:  a stock `UploadBuffer` pass on `ctx.transfer()`, followed by an empty "hand
        //         over" pass on `ctx.graphics()` that declares how the app will use the buffer
        //         next. vk-baton adds the barriers and, where the transfer queue is another
        //         family, the release/acquire pair and the semaphore. Nothing blocks.
        // -----------------------------------------------------------------------------------
        let mut upload =
            UploadBuffer::new(device, ctx.allocator(), data_buf.clone(), 0, &data_bytes)?;
        let mut hand_over = HandOver(data_buf.clone());
        let _upload_done = graph
            .record()
            .insert_pass("upload", &mut upload, ctx.transfer())
            .insert_pass("hand over to the app", &mut hand_over, ctx.graphics())
            .finish()?
            .execute()?;

        // -----------------------------------------------------------------------------------
        // Step 3: read the state after the graph (graph -> app).
        //
        // BEFORE: the app knew the buffer was ready because it had waited for the queue.
        // AFTER:  the buffer's tracked state says which family owns it, and which timeline
        //         value the app's own submit must wait for, with which source scope.
        // -----------------------------------------------------------------------------------
        let buf_state = after_graph(&data_buf.state());
        println!(
            "  after the upload graph: `app data` owned by family {:?}; the app waits for {}",
            buf_state.owner,
            describe_waits(&buf_state.waits)
        );
        if buf_state.owner != Some(ctx.graphics().family()) {
            return Err(vk_baton::Error::InvalidInput(
                "the hand-over pass should have moved the buffer to the graphics family".into(),
            ));
        }
        // The image: undefined in frame 0; afterwards what the last frame's handoff left.
        let img_state = after_graph(&image.state());
        println!(
            "  the app's image is in {:?} (owner {:?}); its barrier starts from there",
            img_state.layout, img_state.owner
        );

        // -----------------------------------------------------------------------------------
        // Step 4: the app's own frame, recorded and submitted by hand, sharing the lock.
        //
        // BEFORE: vkQueueSubmit2 on the raw VkQueue, from wherever the app liked.
        // AFTER:  the same submit, made while holding `ctx.graphics().lock()`: vkQueueSubmit
        //         needs external synchronization, and graphs submit to that queue too. The
        //         submit waits on the timeline values read off in step 3 and signals the
        //         queue's timeline with a value reserved from the lock, so the queue's
        //         timeline stays one sequence that graphs and the app both extend.
        // -----------------------------------------------------------------------------------
        let buffer_barrier = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(buf_state.src_stages)
            .src_access_mask(buf_state.src_access)
            .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(raw_buffer)
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        let image_barrier = [vk::ImageMemoryBarrier2::default()
            .src_stage_mask(img_state.src_stages)
            .src_access_mask(img_state.src_access)
            .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
            .old_layout(img_state.layout)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(raw_image)
            .subresource_range(image.full_range())];
        // One wait per queue timeline, on the highest value either resource needs.
        let mut by_queue: Vec<(Queue, u64)> = Vec::new();
        for (q, v) in buf_state.waits.iter().chain(img_state.waits.iter()) {
            match by_queue.iter_mut().find(|(x, _)| x == q) {
                Some((_, w)) => *w = (*w).max(*v),
                None => by_queue.push((q.clone(), *v)),
            }
        }
        let mut waits: Vec<vk::SemaphoreSubmitInfo<'_>> = Vec::new();
        for (q, v) in &by_queue {
            waits.push(
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(q.timeline())
                    .value(*v)
                    .stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER),
            );
        }
        // SAFETY: the command buffer is idle (the previous frame's fence was waited for);
        // the barriers give the resources the layouts and visibility the dispatch needs (the
        // buffer readable, the image in GENERAL); `pipe` lives until after the fence below is
        // waited for; the submit is made under the queue's lock; the signalled value was
        // reserved from it.
        let signalled = unsafe {
            device
                .reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            device
                .begin_command_buffer(
                    cmd,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            device.cmd_pipeline_barrier2(
                cmd,
                &vk::DependencyInfo::default()
                    .buffer_memory_barriers(&buffer_barrier)
                    .image_memory_barriers(&image_barrier),
            );
            pipe.record_commands(cmd);
            device
                .end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            let mut lock = ctx.graphics().lock();
            let value = lock.next_value();
            let signals = [vk::SemaphoreSubmitInfo::default()
                .semaphore(ctx.graphics().timeline())
                .value(value)
                .stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)];
            let submit = vk::SubmitInfo2::default()
                .wait_semaphore_infos(&waits)
                .command_buffer_infos(&cmds)
                .signal_semaphore_infos(&signals);
            device
                .queue_submit2(lock.handle(), &[submit], fence)
                .map_err(vkerr("vkQueueSubmit2"))?;
            value
        };
        println!(
            "  the app's own submit: waited for {}, signalled `graphics` timeline value {signalled}",
            describe_waits(&by_queue)
        );

        // -----------------------------------------------------------------------------------
        // Step 5: declare the state after the app's own work (app -> graph).
        //
        // BEFORE: the next piece of code had to know, by convention, that the image was in
        //         GENERAL after a compute write.
        // AFTER:  the app says so once. The next graph takes it from there: a barrier from
        //         the app's stages, a layout transition from GENERAL. The app's work is
        //         ordered before the next graph by submission order on this queue.
        // -----------------------------------------------------------------------------------
        let graphics = ctx.graphics();
        // SAFETY: the app's dispatch, submitted to `graphics` after the last graph, left the
        // image in GENERAL; the next graph is ordered after it by submission order there.
        unsafe {
            image.declare_state(
                ResourceState::defined(vk::ImageLayout::GENERAL)
                    .owned_by(graphics.family())
                    .last_access(
                        graphics,
                        vk::PipelineStageFlags2::COMPUTE_SHADER,
                        vk::AccessFlags2::SHADER_STORAGE_WRITE,
                    ),
            )
        };
        // The app also read the buffer: a later upload must not overwrite it before that.
        // SAFETY: as above (the buffer is not host-visible, so no host access relies on it).
        unsafe {
            data_buf.declare_state(
                ResourceState::defined(vk::ImageLayout::UNDEFINED)
                    .owned_by(graphics.family())
                    .last_access(
                        graphics,
                        vk::PipelineStageFlags2::COMPUTE_SHADER,
                        vk::AccessFlags2::SHADER_STORAGE_READ,
                    ),
            )
        };

        // -----------------------------------------------------------------------------------
        // Step 6: the handoff at the end of the frame goes to vk-baton.
        //
        // BEFORE: the app transitioned the image for presentation (or a copy) by hand.
        // AFTER:  a stock `DownloadImage` pass (with a window: blit + present passes); the
        //         graph transitions GENERAL -> TRANSFER_SRC_OPTIMAL, chained from the app's
        //         compute write.
        // -----------------------------------------------------------------------------------
        let mut download = DownloadImage::level(device, ctx.allocator(), image.clone(), 0)?;
        let result = download.handle();
        let planned = graph
            .record()
            .insert_pass("handoff: download", &mut download, ctx.graphics())
            .finish()?;
        if frame == 0 {
            println!("  the handoff graph's plan:");
            for line in planned.to_string().lines() {
                println!("    {line}");
            }
        }
        planned.execute()?.wait()?;
        // SAFETY: the fence was submitted with the app's work, which precedes the handoff on
        // the same queue; after the graph's wait it has signalled. Reset for the next frame.
        unsafe {
            device
                .wait_for_fences(&[fence], true, u64::MAX)
                .map_err(vkerr("vkWaitForFences"))?;
            device
                .reset_fences(&[fence])
                .map_err(vkerr("vkResetFences"))?;
        }

        let out: Vec<u32> = result
            .read()
            .map_err(vk_baton::Error::from)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let wrong = out
            .iter()
            .zip(&data)
            .filter(|(o, d)| **o != d.wrapping_mul(3).wrapping_add(1))
            .count();
        println!(
            "  image row 0: {:?} ... (expected data * 3 + 1: {:?} ...)",
            &out[..4],
            data[..4]
                .iter()
                .map(|d| d.wrapping_mul(3).wrapping_add(1))
                .collect::<Vec<_>>()
        );
        println!(
            "  check: {} of {} texels correct{}",
            out.len() - wrong,
            out.len(),
            if wrong == 0 { " (OK)" } else { " (MISMATCH)" }
        );
        all_ok &= wrong == 0 && out.len() == data.len();
        let after = image.state();
        println!(
            "  after the handoff the image is in {:?}: the next frame's barrier starts there",
            after.layout().unwrap_or(vk::ImageLayout::UNDEFINED)
        );
    }

    drop(graph);
    drop(pipe);
    // SAFETY: every submission has completed (fences and graph waited); the wrappers are
    // dropped first, and with `Destroy::AppKeeps` they never destroyed the handles.
    unsafe {
        device
            .device_wait_idle()
            .map_err(vkerr("vkDeviceWaitIdle"))?;
        drop(data_buf);
        drop(image);
        device.destroy_fence(fence, None);
        device.destroy_command_pool(pool, None);
        device.destroy_buffer(raw_buffer, None);
        device.destroy_image(raw_image, None);
        device.free_memory(buffer_memory, None);
        device.free_memory(image_memory, None);
    }
    println!();
    let messages = report_validation(&ctx);
    Ok(messages == 0 && all_ok)
}

fn describe_waits(waits: &[(Queue, u64)]) -> String {
    if waits.is_empty() {
        return "nothing".into();
    }
    waits
        .iter()
        .map(|(q, v)| format!("`{}` timeline value {v}", q.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An empty pass that declares how the app will use the buffer next, so the graph moves it
/// there (barriers, ownership transfer) before handing it back.
struct HandOver(Arc<StBuffer>);

impl vk_baton::Pass for HandOver {
    fn declare(&self, d: &mut vk_baton::Declare<'_>) {
        d.uses(&self.0, vk_baton::Access::COMPUTE_SHADER_READ);
    }

    fn record(&mut self, _r: &mut vk_baton::Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

fn main() {
    support::main_with(run)
}
