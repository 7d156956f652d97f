//! `StImage::from_create_info`: an app's image wrapped from the create info it was made with,
//! and (in debug builds) a handle that does not match that info refused.

use super::*;

/// An image the app creates with `info`, and its memory from the context's allocator.
struct AppImage<'c> {
    ctx: &'c vk_baton_context::Context,
    image: vk::Image,
    allocation: Option<gpu_allocator::vulkan::Allocation>,
}

impl<'c> AppImage<'c> {
    fn new(ctx: &'c vk_baton_context::Context, info: &vk::ImageCreateInfo<'_>) -> Self {
        // SAFETY: a valid create info on a live device; destroyed in Drop.
        let image = unsafe { ctx.device().create_image(info, None) }.unwrap();
        // SAFETY: a live image.
        let requirements = unsafe { ctx.device().get_image_memory_requirements(image) };
        let allocation = ctx
            .allocator()
            .lock()
            .allocate(&gpu_allocator::vulkan::AllocationCreateDesc {
                name: "app image",
                requirements,
                location: gpu_allocator::MemoryLocation::GpuOnly,
                linear: false,
                allocation_scheme: gpu_allocator::vulkan::AllocationScheme::GpuAllocatorManaged,
            })
            .unwrap();
        // SAFETY: a fresh allocation that satisfies the requirements.
        unsafe {
            ctx.device()
                .bind_image_memory(image, allocation.memory(), allocation.offset())
        }
        .unwrap();
        AppImage {
            ctx,
            image,
            allocation: Some(allocation),
        }
    }
}

impl Drop for AppImage<'_> {
    fn drop(&mut self) {
        // SAFETY: the tests drop every wrapper and wait for their graphs first.
        unsafe { self.ctx.device().destroy_image(self.image, None) };
        if let Some(a) = self.allocation.take() {
            self.ctx.allocator().lock().free(a).unwrap();
        }
    }
}

fn info(width: u32, height: u32) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R32_UINT)
        .extent(vk::Extent3D {
            width,
            height,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .usage(vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST)
}

/// Wrapped from its create info, the image has that description, and data goes through it
/// bit-exactly with no validation message.
#[test]
fn an_image_wrapped_from_its_create_info_carries_data() {
    let ctx = ctx();
    let info = info(16, 8);
    let app = AppImage::new(&ctx, &info);
    // SAFETY: `app.image` was created from `info` and bound; never used; destroyed after the
    // wrapper (dropped below, after the graph waited).
    let img = Arc::new(
        unsafe {
            StImage::from_create_info(
                ctx.device(),
                app.image,
                &info,
                "app image",
                vk_baton::ResourceState::undefined(),
                vk_baton::Destroy::AppKeeps,
            )
        }
        .unwrap(),
    );
    let desc = img.desc();
    assert_eq!(
        (desc.format, desc.extent, desc.mip_levels, desc.usage),
        (info.format, info.extent, 1, info.usage)
    );
    let bytes = 16 * 8 * 4;
    let data = pattern(bytes, 5);
    let upload = ctx
        .buffer(
            BufferDesc::upload(bytes as u64, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    upload.write(0, &data).unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(bytes as u64, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let (mut up, mut down, mut host) = (
        BufferToImage {
            src: upload.clone(),
            dst: img.clone(),
        },
        ImageToBuffer {
            src: img.clone(),
            dst: readback.clone(),
        },
        HostRead(readback.clone()),
    );
    graph
        .record()
        .insert_pass("up", &mut up, ctx.graphics())
        .insert_pass("down", &mut down, ctx.graphics())
        .insert_pass("host", &mut host, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let mut out = vec![0u8; bytes];
    readback.read(0, &mut out).unwrap();
    assert!(out == data, "the texels differ");
    drop((up, down, img));
    drop(graph);
    drop(app);
    assert_clean(&ctx);
}

/// In debug builds, a create info that is not the handle's (another size) is refused, naming
/// both memory sizes.
#[test]
// Only debug builds check the handle (release builds trust the app): compiled out of release
// builds, not ignored, since the NVIDIA runs pass `--include-ignored` to every binary.
#[cfg(debug_assertions)]
fn a_create_info_that_is_not_the_handles_is_refused_in_debug_builds() {
    let ctx = ctx();
    let app = AppImage::new(&ctx, &info(16, 8));
    let stated = info(256, 256);
    // SAFETY: deliberately wrong info: the check must refuse it before anything uses it.
    let result = unsafe {
        StImage::from_create_info(
            ctx.device(),
            app.image,
            &stated,
            "app image",
            vk_baton::ResourceState::undefined(),
            vk_baton::Destroy::AppKeeps,
        )
    };
    match result {
        Err(Error::InvalidArgument(why)) => {
            assert!(why.contains("`app image`"), "{why}");
            assert!(why.contains("does not match its create info"), "{why}");
            assert!(why.contains("256x256x1"), "{why}");
        }
        Err(e) => panic!("expected Error::InvalidArgument, got {e:?}"),
        Ok(_) => panic!("a handle of another size was accepted"),
    }
    // An info no image can be created with: refused in every build.
    let empty = info(0, 8);
    // SAFETY: refused before the handle is used.
    let result = unsafe {
        StImage::from_create_info(
            ctx.device(),
            app.image,
            &empty,
            "app image",
            vk_baton::ResourceState::undefined(),
            vk_baton::Destroy::AppKeeps,
        )
    };
    assert!(
        matches!(&result, Err(Error::InvalidArgument(why)) if why.contains("extent 0x8x1")),
        "{:?}",
        result.err()
    );
    drop(app);
    assert_clean(&ctx);
}

/// An initial state the create info contradicts is refused in every build: an image created
/// `PREINITIALIZED` (its contents written by the host) wrapped as `undefined()`, whose first
/// transition would discard them, and the reverse, a `PREINITIALIZED` state for an image
/// created `UNDEFINED`, whose first barrier would name a layout the image is not in.
#[test]
fn an_initial_state_its_create_info_contradicts_is_refused() {
    let ctx = ctx();
    let wrap = |info: &vk::ImageCreateInfo<'_>, app: &AppImage<'_>, initial| {
        // SAFETY: `app.image` was created from `info` and bound; refused before any use, or
        // dropped unused before `app`.
        unsafe {
            StImage::from_create_info(
                ctx.device(),
                app.image,
                info,
                "app image",
                initial,
                vk_baton::Destroy::AppKeeps,
            )
        }
    };
    let preinitialized = vk::ImageLayout::PREINITIALIZED;
    // PREINITIALIZED is for host-written images: linear tiling only (the spec's rule).
    let pre_info = info(16, 8)
        .initial_layout(preinitialized)
        .tiling(vk::ImageTiling::LINEAR);
    let pre = AppImage::new(&ctx, &pre_info);
    match wrap(&pre_info, &pre, vk_baton::ResourceState::undefined()) {
        Err(Error::InvalidArgument(why)) => {
            assert!(why.contains("`app image`"), "{why}");
            assert!(
                why.contains("PREINITIALIZED") && why.contains("UNDEFINED"),
                "{why}"
            );
        }
        Err(e) => panic!("expected Error::InvalidArgument, got {e:?}"),
        Ok(_) => panic!("an undefined state for a PREINITIALIZED image was accepted"),
    }
    let stated = vk_baton::ResourceState::defined(preinitialized);
    drop(wrap(&pre_info, &pre, stated.clone()).unwrap());
    let undefined_info = info(16, 8);
    let undefined = AppImage::new(&ctx, &undefined_info);
    let result = wrap(&undefined_info, &undefined, stated);
    assert!(
        matches!(&result, Err(Error::InvalidArgument(why)) if why.contains("PREINITIALIZED")),
        "{:?}",
        result.err()
    );
    drop((pre, undefined));
    assert_clean(&ctx);
}
