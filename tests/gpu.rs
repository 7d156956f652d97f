//! GPU tests: run on any Vulkan 1.3 device (lavapipe in CI) with validation and
//! synchronization validation on. Any validation message fails the test, and so does a
//! missing device.
//!
//! Here: data through buffers and images across queues and graphs, and state the app declares.
//! Refused input is in `gpu/refusals.rs`, fences and lifetimes in `gpu/lifetime.rs`, and the
//! canaries that prove the layer's checks are live in `gpu/canaries.rs`.

mod common;

use common::gate::Gate;
use common::*;
use std::sync::Arc;
use std::time::Duration;
use vk_baton::ash::vk;
use vk_baton::plan::Command;
use vk_baton::{
    Access, BufferDesc, BufferRange, Declare, Error, ImageDesc, ImageRange, Pass, Recorder,
    StBuffer, StImage,
};

#[path = "gpu/canaries.rs"]
mod canaries;
#[path = "gpu/lifetime.rs"]
mod lifetime;
#[path = "gpu/refusals.rs"]
mod refusals;
#[path = "gpu/unordered.rs"]
mod unordered;
#[path = "gpu/wrapped_image.rs"]
mod wrapped_image;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .rotate_left(seed as u32 % 31) as u8
                ^ seed
        })
        .collect()
}

#[test]
fn round_trip_host_buffer_image_buffer_host() {
    let ctx = ctx();
    let (w, h) = (37u32, 19u32);
    let len = (w * h * 4) as u64;
    let data = pattern(len as usize, 7);
    let upload = ctx
        .buffer(
            BufferDesc::upload(len, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    upload.write(0, &data).unwrap();
    let device_buf = ctx
        .buffer(
            BufferDesc::new(
                len,
                vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            ),
            "device",
        )
        .unwrap();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                w,
                h,
                vk::Format::R8G8B8A8_UINT,
                vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST,
            ),
            "img",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();

    let graph = ctx.graph().unwrap();
    let mut a = CopyBuffer {
        src: upload.clone(),
        dst: device_buf.clone(),
    };
    let mut b = BufferToImage {
        src: device_buf.clone(),
        dst: img.clone(),
    };
    let mut c = ImageToBuffer {
        src: img.clone(),
        dst: readback.clone(),
    };
    let mut d = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("upload", &mut a, ctx.transfer())
        .insert_pass("to image", &mut b, ctx.graphics())
        .insert_pass("to buffer", &mut c, ctx.graphics())
        .insert_pass("host read", &mut d, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    planned.execute().unwrap().wait().unwrap();

    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == data, "round trip changed the data");
    assert_eq!(
        img.state().layout(),
        Some(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
    );
    assert!(readback.state().defined());
    assert_clean(&ctx);
}

#[test]
fn compute_to_transfer_chain() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1000usize;
    let len = (count * 4) as u64;
    let storage = ctx
        .buffer(
            BufferDesc::new(
                len,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "storage",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    let set = kit.buffer_set(&storage);
    let graph = ctx.graph().unwrap();
    let mut fill = Fill {
        kit: &kit,
        buf: storage.clone(),
        set,
        seed: 5,
        repeat: 1,
    };
    let mut copy = CopyBuffer {
        src: storage.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .insert_pass("copy", &mut copy, ctx.transfer())
        .insert_pass("host read", &mut host, ctx.transfer())
        .finish()
        .unwrap();
    println!("{planned}");
    if !ctx.has_several_families() {
        // One queue: the compute write and the copy are ordered by one barrier.
        let barriers: Vec<_> = planned.plan().queues[0]
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .filter_map(|c| {
                if let Command::Barrier(b) = c {
                    Some(b)
                } else {
                    None
                }
            })
            .collect();
        let to_copy = barriers
            .iter()
            .flat_map(|b| &b.buffers)
            .find(|b| b.scopes.dst_access == vk::AccessFlags2::TRANSFER_READ)
            .expect("a barrier before the copy");
        assert_eq!(
            to_copy.scopes.src_stages,
            vk::PipelineStageFlags2::COMPUTE_SHADER
        );
        assert_eq!(
            to_copy.scopes.src_access,
            vk::AccessFlags2::SHADER_STORAGE_WRITE
        );
    }
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == fill_expected(count, 5));
    drop(fill);
    assert_clean(&ctx);
}

#[test]
fn second_graph_inherits_state_from_the_first() {
    let ctx = ctx();
    let (w, h) = (16u32, 8u32);
    let len = (w * h * 4) as u64;
    let data = pattern(len as usize, 3);
    let upload = ctx
        .buffer(
            BufferDesc::upload(len, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    upload.write(0, &data).unwrap();
    let img = ctx
        .image(
            ImageDesc::storage_2d(w, h, vk::Format::R8G8B8A8_UNORM),
            "img",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();

    let first = ctx.graph().unwrap();
    let mut up = BufferToImage {
        src: upload.clone(),
        dst: img.clone(),
    };
    let fence1 = first
        .record()
        .insert_pass("upload", &mut up, ctx.transfer())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let s = img.state();
    assert_eq!(s.layout(), Some(vk::ImageLayout::TRANSFER_DST_OPTIMAL));
    assert_eq!(s.owner(), Some(Some(ctx.transfer().family())));
    let write = s.segments[0].1.write.clone().expect("a recorded write");
    assert_eq!(&write.queue, ctx.transfer());
    assert!(write.value.unwrap() >= 1);

    // A different graph, without waiting for the first: it must order itself after it.
    let second = ctx.graph().unwrap();
    let mut down = ImageToBuffer {
        src: img.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = second
        .record()
        .insert_pass("download", &mut down, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    let gq = planned
        .queues()
        .iter()
        .position(|q| q == ctx.graphics())
        .unwrap();
    let first_barrier = planned.plan().queues[gq]
        .batches
        .iter()
        .flat_map(|b| &b.commands)
        .find_map(|c| {
            if let Command::Barrier(b) = c {
                Some(b)
            } else {
                None
            }
        })
        .unwrap();
    let ib = first_barrier
        .images
        .iter()
        .find(|b| b.new_layout == vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
        .expect("the image transitions");
    assert_eq!(
        ib.old_layout,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        "the old layout comes from the first graph"
    );
    let fence2 = planned.execute().unwrap();
    fence2.wait().unwrap();
    fence1.wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == data);
    assert_clean(&ctx);
}

#[test]
fn app_declared_state_and_raw_handles() {
    let ctx = ctx();
    let len = 64u64;
    let data = pattern(len as usize, 9);
    let upload = ctx
        .buffer(
            BufferDesc::upload(len, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    upload.write(0, &data).unwrap();
    // A buffer the app created and filled by hand on the graphics queue.
    let info = vk::BufferCreateInfo::default()
        .size(len)
        .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST);
    // SAFETY: plain creation; memory comes from the context's allocator below.
    let raw = unsafe { ctx.device().create_buffer(&info, None) }.unwrap();
    // SAFETY: live buffer.
    let req = unsafe { ctx.device().get_buffer_memory_requirements(raw) };
    let alloc = ctx
        .allocator()
        .lock()
        .allocate(&gpu_allocator::vulkan::AllocationCreateDesc {
            name: "raw",
            requirements: req,
            location: gpu_allocator::MemoryLocation::GpuOnly,
            linear: true,
            allocation_scheme: gpu_allocator::vulkan::AllocationScheme::GpuAllocatorManaged,
        })
        .unwrap();
    // SAFETY: fresh allocation satisfying the requirements.
    unsafe {
        ctx.device()
            .bind_buffer_memory(raw, alloc.memory(), alloc.offset())
    }
    .unwrap();
    // SAFETY: `raw` is a live buffer of the device made with this size and usage and bound
    // above; the test destroys it after the last `Arc`.
    let wrapped = Arc::new(unsafe {
        StBuffer::from_raw(
            ctx.device(),
            raw,
            BufferDesc::new(len, info.usage),
            "raw",
            vk_baton::ResourceState::undefined(),
            vk_baton::Destroy::AppKeeps,
        )
    });
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();

    let graph = ctx.graph().unwrap();
    let mut a = CopyBuffer {
        src: upload.clone(),
        dst: wrapped.clone(),
    };
    graph
        .record()
        .insert_pass("fill raw", &mut a, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    // The app reads the state, then declares what its own work left.
    assert!(wrapped.state().defined());
    // SAFETY: the copy on graphics it names is complete (waited above) and left every byte
    // defined.
    unsafe {
        wrapped.declare_state(
            vk_baton::ResourceState::defined(vk::ImageLayout::UNDEFINED)
                .owned_by(ctx.graphics().family())
                .last_access(
                    ctx.graphics(),
                    vk::PipelineStageFlags2::COPY,
                    vk::AccessFlags2::TRANSFER_WRITE,
                ),
        )
    };
    let mut b = CopyBuffer {
        src: wrapped.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("read raw", &mut b, ctx.graphics())
        .insert_pass("host", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    let first = planned.plan().queues[0].batches[0]
        .commands
        .first()
        .cloned();
    let Some(Command::Barrier(bar)) = first else {
        panic!("expected a barrier after the declared write")
    };
    assert_eq!(
        bar.buffers[0].scopes.src_stages,
        vk::PipelineStageFlags2::COPY
    );
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == data);
    drop((a, b, wrapped));
    // SAFETY: the GPU is done (waited) and the wrapper is gone; the app destroys its buffer.
    unsafe { ctx.device().destroy_buffer(raw, None) };
    ctx.allocator().lock().free(alloc).unwrap();
    assert_clean(&ctx);
}

/// A context that enables `VK_KHR_swapchain` also enables the `VK_KHR_surface` it requires,
/// without the app naming it (the layer reports a missing dependency at `vkCreateDevice`),
/// and present fences with what they require: `VK_EXT_swapchain_maintenance1` and its
/// feature, `VK_EXT_surface_maintenance1` and `VK_KHR_get_surface_capabilities2`, where the
/// device has them: the CI's lavapipe (Mesa 25 and newer, in the layer's root) and the H100
/// do; Debian 12's (Mesa 22.3) does not, and there present fences are off.
#[test]
fn a_swapchain_context_enables_the_surface_extension_it_needs() {
    let _ = env_logger::builder().is_test(true).try_init();
    let ctx = vk_baton_context::Context::with_options(vk_baton_context::ContextOptions {
        validation: true,
        swapchain: true,
        ..Default::default()
    })
    .unwrap();
    let fences = Need::device_extension("VK_EXT_swapchain_maintenance1");
    if ctx.machine().skips_part("present fences on", &[fences]) {
        assert!(!ctx.present_fences());
    } else {
        assert!(ctx.present_fences(), "present fences are off");
    }
    assert_clean(&ctx);
    // Without a swapchain, none of it.
    assert!(!common::ctx().present_fences());
}

/// The context enables the raster features the device has, and what the app asks for; a
/// feature or an extension the device lacks is an error that names it.
#[test]
fn a_context_enables_raster_features_and_refuses_what_the_device_lacks() {
    let ctx = ctx();
    // SAFETY: the context's live instance and physical device.
    let has = unsafe {
        ctx.instance()
            .get_physical_device_features(ctx.physical_device())
    };
    let on = ctx.features();
    let pairs = [
        (has.independent_blend, on.independent_blend),
        (has.multi_draw_indirect, on.multi_draw_indirect),
        (
            has.draw_indirect_first_instance,
            on.draw_indirect_first_instance,
        ),
        (
            has.vertex_pipeline_stores_and_atomics,
            on.vertex_pipeline_stores_and_atomics,
        ),
        (
            has.fragment_stores_and_atomics,
            on.fragment_stores_and_atomics,
        ),
        (has.sampler_anisotropy, on.sampler_anisotropy),
        (has.sample_rate_shading, on.sample_rate_shading),
        (has.depth_clamp, on.depth_clamp),
        (has.fill_mode_non_solid, on.fill_mode_non_solid),
    ];
    assert!(pairs.iter().all(|(h, o)| h == o), "{pairs:?}");
    // Lavapipe and NVIDIA both have these two, which a raster sample needs.
    assert_eq!(
        (on.fragment_stores_and_atomics, on.independent_blend),
        (vk::TRUE, vk::TRUE)
    );
    let options = |features, device_extensions| vk_baton_context::ContextOptions {
        validation: true,
        features,
        device_extensions,
        ..Default::default()
    };
    if has.shader_resource_residency == vk::FALSE {
        let wanted = vk::PhysicalDeviceFeatures {
            shader_resource_residency: vk::TRUE,
            ..Default::default()
        };
        let e = vk_baton_context::Context::with_options(options(wanted, vec![])).unwrap_err();
        assert!(
            matches!(&e, Error::Environment(m) if m.ends_with("asked for: shader_resource_residency")),
            "{e}"
        );
    }
    let e = vk_baton_context::Context::with_options(options(
        vk::PhysicalDeviceFeatures::default(),
        vec![c"VK_VKBATON_no_such_extension".to_owned()],
    ))
    .unwrap_err();
    assert!(
        matches!(&e, Error::Environment(m) if m.ends_with("asked for: VK_VKBATON_no_such_extension")),
        "{e}"
    );
    assert_clean(&ctx);
}
