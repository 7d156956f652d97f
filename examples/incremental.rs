//! Incremental adoption: an app that records its frame by hand with raw ash keeps doing so,
//! and hands vk-baton the upload (on the transfer queue) and the download (also on the
//! transfer queue). Between them, its own compute pass on the graphics queue uses both
//! resources through one call, `Graph::hand_off`.
//!
//! Read it as a migration guide. Each numbered step says what the app did BEFORE and what it
//! does AFTER. The rest of the app does not change: it keeps its own device, queues, memory,
//! pipeline, command pool, command buffer and submit.
//!
//! ```text
//! cargo run --example incremental -- --frames 2
//! ```
//!
//! Each frame: vk-baton uploads `data[i] = i * 7 + 1000 * frame` into the app's own buffer;
//! the app's own compute pass writes `image[x, y] = data[y * W + x] * 3 + 1` into its own
//! image; vk-baton copies the image to a host buffer, and the host checks every texel. Where
//! the transfer queue is another family (NVIDIA), each handoff between the queues is an
//! ownership transfer. Exits non-zero on any validation message or a wrong texel.

use std::sync::Arc;
use support::{report_validation, vkerr, ValueExt};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Destroy, ResourceState, StBuffer, StImage};
use vk_baton_context::Context;
use vk_baton_passes::{ComputeDispatch, DownloadImage, ShaderAccess, UploadBuffer};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 32;

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
    // here; an app with its own makes the queues with `vk_baton::Queue::new(&instance,
    // physical_device, &device, family, index, name)`, once per VkQueue, and clones them
    // wherever they are needed.
    let ctx = Context::new()?;
    let device = ctx.device();
    let (graphics, transfer) = (ctx.graphics(), ctx.transfer());
    println!("device: {}", ctx.device_name());
    println!(
        "queues: graphics = family {}, transfer = family {}",
        graphics.family(),
        transfer.family()
    );

    // ---------------------------------------------------------------------------------------
    // Step 1: wrap the app's own handles.
    //
    // BEFORE: the app created its buffer and image with vkCreate*, bound its own memory, and
    //         tracked their layouts in its head.
    // AFTER:  the same handles, wrapped with `from_raw` (the image with `from_create_info`,
    //         from the create info the app made it with) in the state they are in (fresh:
    //         undefined) and `Destroy::AppKeeps`: vk-baton never frees them.
    // ---------------------------------------------------------------------------------------
    let bytes = (WIDTH * HEIGHT * 4) as u64;
    let buffer_usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let image_info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R32_UINT)
        .extent(vk::Extent3D {
            width: WIDTH,
            height: HEIGHT,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC);
    let (raw_buffer, raw_image, memory) =
        app_buffer_and_image(&ctx, bytes, buffer_usage, &image_info)?;
    // SAFETY: the app's own live buffer and image of `device`, created with exactly this
    // description and create info and bound to memory; fresh (undefined); the app destroys them after the
    // wrappers are gone (`AppKeeps`).
    let (data_buf, image) = unsafe {
        let data_buf = StBuffer::from_raw(
            device,
            raw_buffer,
            BufferDesc::new(bytes, buffer_usage),
            "app data",
            ResourceState::undefined(),
            Destroy::AppKeeps,
        );
        let image = StImage::from_create_info(
            device,
            raw_image,
            &image_info,
            "app image",
            ResourceState::undefined(),
            Destroy::AppKeeps,
        )?;
        (Arc::new(data_buf), Arc::new(image))
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
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(graphics.family())
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        let pool = device
            .create_command_pool(&pool_info, None)
            .map_err(vkerr("vkCreateCommandPool"))?;
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .command_buffer_count(1);
        let cmd = device
            .allocate_command_buffers(&alloc)
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
        // AFTER:  a stock `UploadBuffer` pass on `ctx.transfer()`. Nothing blocks: the next
        //         frame's upload waits on the GPU for this frame's compute read.
        // -----------------------------------------------------------------------------------
        let mut upload =
            UploadBuffer::new(device, ctx.allocator(), data_buf.clone(), 0, &data_bytes)?;
        let _uploaded = graph
            .record()
            .insert_pass("upload", &mut upload, transfer)
            .finish()?
            .execute()?;

        // -----------------------------------------------------------------------------------
        // Step 3: the app's own compute pass, through a handoff (graph -> app -> graph).
        //
        // BEFORE: the app worked out its barrier (old layout, source stages and accesses),
        //         its semaphore waits and, across families, a release on the transfer queue;
        //         submitted under the queue's lock with a reserved timeline value; then told
        //         the next graph, by hand, what state it left.
        // AFTER:  `hand_off` with the accesses the dispatch makes. It submits the release on
        //         the transfer queue where one is needed, and hands back one barrier command
        //         (with the acquire), the waits and the signal. `submit` makes the app's
        //         vkQueueSubmit2 with them; the states are already the dispatch's.
        // -----------------------------------------------------------------------------------
        let handoff = graph.hand_off("app compute", graphics, |d| {
            d.uses(&data_buf, Access::COMPUTE_SHADER_READ);
            d.uses(&image, Access::COMPUTE_SHADER_WRITE).discard();
        })?;
        let (mut memory, mut buffers, mut images) = (vec![], vec![], vec![]);
        (handoff.barriers()).append_to(&mut memory, &mut buffers, &mut images);
        let acquire =
            (buffers.iter()).any(|b| b.src_queue_family_index != b.dst_queue_family_index);
        println!(
            "  handoff: {} wait(s), {} barrier(s){}, signals `graphics` timeline value {}",
            handoff.waits().len(),
            handoff.barriers().len(),
            if acquire {
                " (the buffer's acquire from the transfer family)"
            } else {
                ""
            },
            handoff.signal_value()
        );
        // SAFETY: the command buffer is idle (the previous frame's fence was waited for), of
        // the graphics family, from a pool that allows resetting it; the dispatch uses the
        // resources as declared; `pipe` and the resources live until the fence below is
        // waited for.
        unsafe {
            handoff.record_and_submit(cmd, fence, |cmd| {
                pipe.record_commands(cmd).map_err(vk_baton::Error::from)
            })?;
        }
        println!(
            "  the app's image is in {:?}, owned by family {:?}: the next graph starts there",
            image.state().layout().unwrap_or_default(),
            image.state().owner().flatten()
        );

        // -----------------------------------------------------------------------------------
        // Step 4: the download goes to vk-baton, on the transfer queue.
        //
        // BEFORE: the app transitioned the image for a copy (or for presentation) by hand.
        // AFTER:  a stock `DownloadImage` pass; the graph transitions GENERAL ->
        //         TRANSFER_SRC_OPTIMAL after the app's compute write, moving the image back
        //         to the transfer family where that is another one.
        // -----------------------------------------------------------------------------------
        let mut download = DownloadImage::level(device, ctx.allocator(), image.clone(), 0)?;
        let result = download.handle();
        let planned = graph
            .record()
            .insert_pass("download", &mut download, transfer)
            .finish()?;
        if frame == 0 {
            println!("  the download graph's plan:");
            planned
                .to_string()
                .lines()
                .for_each(|line| println!("    {line}"));
        }
        planned.execute()?.wait()?;
        // SAFETY: the app's submit precedes the download, which waited for it. Reset for the
        // next frame.
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
        let expected: Vec<u32> = data
            .iter()
            .map(|d| d.wrapping_mul(3).wrapping_add(1))
            .collect();
        let right = out.iter().zip(&expected).filter(|(o, e)| o == e).count();
        println!(
            "  image row 0: {:?} ... (expected data * 3 + 1: {:?} ...)",
            &out[..4],
            &expected[..4]
        );
        let ok = right == expected.len() && out.len() == expected.len();
        println!(
            "  check: {right} of {} texels correct{}",
            expected.len(),
            if ok { " (OK)" } else { " (MISMATCH)" }
        );
        all_ok &= ok;
    }

    drop(graph);
    drop(pipe);
    // SAFETY: every submission has completed (fences and graphs waited); the wrappers are
    // dropped first, and with `Destroy::AppKeeps` they never destroyed the handles.
    unsafe {
        device
            .device_wait_idle()
            .map_err(vkerr("vkDeviceWaitIdle"))?;
        drop((data_buf, image));
        device.destroy_fence(fence, None);
        device.destroy_command_pool(pool, None);
        device.destroy_buffer(raw_buffer, None);
        device.destroy_image(raw_image, None);
        memory.into_iter().for_each(|m| device.free_memory(m, None));
    }
    println!();
    let messages = report_validation(&ctx);
    Ok(messages == 0 && all_ok)
}

/// The app's own buffer and image, each with its own device-local memory: what the app
/// already had (vk-baton needs none of it).
fn app_buffer_and_image(
    ctx: &Context,
    bytes: u64,
    usage: vk::BufferUsageFlags,
    image_info: &vk::ImageCreateInfo<'_>,
) -> vk_baton::Result<(vk::Buffer, vk::Image, [vk::DeviceMemory; 2])> {
    let device = ctx.device();
    // SAFETY: plain query on a live physical device.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_memory_properties(ctx.physical_device())
    };
    let allocate = |req: vk::MemoryRequirements| {
        let index = (0..props.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .ok_or_else(|| vk_baton::Error::InvalidInput("no device-local memory type".into()))?;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        // SAFETY: a valid allocate info; the app frees the memory at exit.
        unsafe { device.allocate_memory(&info, None) }.map_err(vkerr("vkAllocateMemory"))
    };
    let buffer_info = vk::BufferCreateInfo::default().size(bytes).usage(usage);
    // SAFETY: valid create infos; the memory satisfies the requirements; the app destroys
    // both at exit, after the device is idle.
    unsafe {
        let buffer = device
            .create_buffer(&buffer_info, None)
            .map_err(vkerr("vkCreateBuffer"))?;
        let buffer_memory = allocate(device.get_buffer_memory_requirements(buffer))?;
        device
            .bind_buffer_memory(buffer, buffer_memory, 0)
            .map_err(vkerr("vkBindBufferMemory"))?;
        let image = device
            .create_image(image_info, None)
            .map_err(vkerr("vkCreateImage"))?;
        let image_memory = allocate(device.get_image_memory_requirements(image))?;
        device
            .bind_image_memory(image, image_memory, 0)
            .map_err(vkerr("vkBindImageMemory"))?;
        Ok((buffer, image, [buffer_memory, image_memory]))
    }
}

fn main() {
    support::main_with(run)
}
