//! Multi-family GPU tests: ownership transfers between a dedicated compute or transfer family
//! and the graphics family. They need several queue families, so they are ignored by default;
//! run them on the NVIDIA machine (`../shared/device/README.md`) with `--include-ignored`.
//! Run on a single-family device they fail with a clear message instead of passing vacuously.

mod common;

use common::*;
use vk_baton::ash::vk;
use vk_baton::plan::{Command, Plan};
use vk_baton::{BufferDesc, ImageDesc};
use vk_baton_context::Context;

fn multi_ctx() -> Context {
    let ctx = ctx();
    assert!(
        ctx.async_compute().family() != ctx.graphics().family() && ctx.transfer().family() != ctx.graphics().family(),
        "this test needs dedicated compute and transfer queue families, but `{}` has graphics = {:?}, async_compute = {:?}, transfer = {:?}; run it on the NVIDIA machine",
        ctx.device_name(),
        ctx.graphics(),
        ctx.async_compute(),
        ctx.transfer()
    );
    ctx
}

/// A storage buffer of `len` bytes shared CONCURRENT by async compute and graphics (a copy
/// source), and a host-readable buffer to copy it into.
fn concurrent_storage(
    ctx: &Context,
    len: u64,
    name: &str,
) -> (
    std::sync::Arc<vk_baton::StBuffer>,
    std::sync::Arc<vk_baton::StBuffer>,
) {
    let families = [ctx.async_compute().family(), ctx.graphics().family()];
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
    let storage = ctx
        .buffer(BufferDesc::new(len, usage).concurrent(&families), name)
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    (storage, readback)
}

/// Every (queue index, family transfer) of the plan's barriers.
fn transfers(plan: &Plan) -> Vec<(usize, (u32, u32), vk::ImageLayout, vk::ImageLayout)> {
    let mut out = Vec::new();
    for (q, qp) in plan.queues.iter().enumerate() {
        for c in qp.batches.iter().flat_map(|b| &b.commands) {
            if let Command::Barrier(b) = c {
                for ib in &b.images {
                    if let Some(f) = ib.scopes.families {
                        out.push((q, f, ib.old_layout, ib.new_layout));
                    }
                }
                for bb in &b.buffers {
                    if let Some(f) = bb.scopes.families {
                        out.push((q, f, vk::ImageLayout::UNDEFINED, vk::ImageLayout::UNDEFINED));
                    }
                }
            }
        }
    }
    out
}

/// Asserts one release on `from`'s queue and one matching acquire on `to`'s queue.
fn assert_release_acquire(
    plan: &Plan,
    queues: &[vk_baton::Queue],
    from: &vk_baton::Queue,
    to: &vk_baton::Queue,
) {
    let t = transfers(plan);
    let qi = |q: &vk_baton::Queue| queues.iter().position(|x| x == q).unwrap();
    let fam = (from.family(), to.family());
    let release: Vec<_> = t.iter().filter(|x| x.0 == qi(from) && x.1 == fam).collect();
    let acquire: Vec<_> = t.iter().filter(|x| x.0 == qi(to) && x.1 == fam).collect();
    assert_eq!(release.len(), 1, "one release on `{}`: {t:?}", from.name());
    assert_eq!(acquire.len(), 1, "one acquire on `{}`: {t:?}", to.name());
    assert_eq!(
        (release[0].2, release[0].3),
        (acquire[0].2, acquire[0].3),
        "release and acquire give the same layouts"
    );
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn compute_to_graphics_buffer_ownership_transfer() {
    buffer_ownership_transfer(&multi_ctx());
}

/// The same transfer on a device with `VK_KHR_maintenance8` (the H100's driver has it): the
/// barriers carry `USE_ALL_STAGES`, and graphics waits at the copy's stage instead of
/// `ALL_COMMANDS`; the data and validation are checked as without it.
#[test]
#[ignore = "needs several queue families and VK_KHR_maintenance8 (run on the NVIDIA machine)"]
fn compute_to_graphics_buffer_ownership_transfer_with_maintenance8() {
    let _ = multi_ctx();
    let ctx = Context::with_options(vk_baton_context::ContextOptions {
        validation: true,
        device_features: vk_baton::access::DeviceFeatures::MAINTENANCE8,
        ..Default::default()
    })
    .expect("the NVIDIA machine's driver has VK_KHR_maintenance8");
    let plan = buffer_ownership_transfer(&ctx);
    assert!(plan.contains("transfers use all stages"), "{plan}");
    let wait = (plan.lines())
        .find(|l| l.trim_start().starts_with("wait"))
        .unwrap();
    assert!(!wait.ends_with("ALL_COMMANDS"), "{wait}");
}

/// Fills a buffer on async compute and copies it to a readback buffer on graphics, checked by
/// its bytes; returns the plan as text.
fn buffer_ownership_transfer(ctx: &Context) -> String {
    let kit = Compute::new(
        ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 4096usize;
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
        seed: 11,
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
        .insert_pass("copy", &mut copy, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    let text = planned.to_string();
    println!("{text}");
    assert_release_acquire(
        planned.plan(),
        planned.queues(),
        ctx.async_compute(),
        ctx.graphics(),
    );
    assert_eq!(planned.plan().semaphore_waits(), 1);
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == fill_expected(count, 11));
    assert_eq!(storage.state().owner(), Some(Some(ctx.graphics().family())));
    drop(fill);
    assert_clean(ctx);
    text
}

/// Draws the pattern on `draw_q`, downloads it on `ctx.graphics()`; returns the pixels.
fn pattern_pixels(ctx: &Context, draw_q: &vk_baton::Queue, check_transfer: bool) -> Vec<u8> {
    let kit = Compute::new(
        ctx,
        vk_baton_shaders::PATTERN_COMP,
        vk::DescriptorType::STORAGE_IMAGE,
    );
    let (w, h) = (96u32, 64u32);
    let img = ctx
        .image(
            ImageDesc::storage_2d(w, h, vk::Format::R8G8B8A8_UNORM),
            "pattern",
        )
        .unwrap();
    let len = (w * h * 4) as u64;
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    let (set, view) = kit.image_set(&img);
    struct Draw<'a>(
        &'a Compute,
        std::sync::Arc<vk_baton::StImage>,
        vk::DescriptorSet,
    );
    impl vk_baton::Pass for Draw<'_> {
        fn declare(&self, d: &mut vk_baton::Declare<'_>) {
            d.uses(&self.1, vk_baton::Access::COMPUTE_SHADER_WRITE)
                .discard();
        }
        fn record(&mut self, r: &mut vk_baton::Recorder<'_>) -> vk_baton::Result<()> {
            let e = self.1.desc().extent;
            self.0.dispatch(
                r,
                self.2,
                [0, 0],
                [e.width.div_ceil(8), e.height.div_ceil(8), 1],
            );
            Ok(())
        }
    }
    let graph = ctx.graph().unwrap();
    let mut draw = Draw(&kit, img.clone(), set);
    let mut down = ImageToBuffer {
        src: img.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("draw", &mut draw, draw_q)
        .insert_pass("download", &mut down, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    if check_transfer {
        assert_release_acquire(planned.plan(), planned.queues(), draw_q, ctx.graphics());
    }
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    // SAFETY: the execution completed.
    unsafe { ctx.device().destroy_image_view(view, None) };
    out
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn compute_to_graphics_image_ownership_transfer() {
    let ctx = multi_ctx();
    let reference = pattern_pixels(&ctx, ctx.graphics(), false);
    let moved = pattern_pixels(&ctx, ctx.async_compute(), true);
    assert!(
        reference.iter().any(|&b| b != 0),
        "the pattern is not blank"
    );
    assert!(
        moved == reference,
        "the image changed on its way from the compute family to the graphics family"
    );
    assert_clean(&ctx);
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn transfer_to_graphics_upload() {
    let ctx = multi_ctx();
    let (w, h) = (33u32, 17u32);
    let len = (w * h * 4) as u64;
    let data: Vec<u8> = (0..len as usize).map(|i| (i * 7 + 3) as u8).collect();
    let upload = ctx
        .buffer(
            BufferDesc::upload(len, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    upload.write(0, &data).unwrap();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                w,
                h,
                vk::Format::R8G8B8A8_UINT,
                vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC,
            ),
            "uploaded",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(len, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let mut up = BufferToImage {
        src: upload.clone(),
        dst: img.clone(),
    };
    let mut down = ImageToBuffer {
        src: img.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = graph
        .record()
        .insert_pass("upload", &mut up, ctx.transfer())
        .insert_pass("download", &mut down, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    assert_release_acquire(
        planned.plan(),
        planned.queues(),
        ctx.transfer(),
        ctx.graphics(),
    );
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == data);
    assert_clean(&ctx);
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn ownership_inherited_across_graphs() {
    let ctx = multi_ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 2048usize;
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

    let first = ctx.graph().unwrap();
    let mut fill = Fill {
        kit: &kit,
        buf: storage.clone(),
        set,
        seed: 21,
        repeat: 1,
    };
    let fence1 = first
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    assert_eq!(
        storage.state().owner(),
        Some(Some(ctx.async_compute().family()))
    );

    // A second graph that never names the compute queue: the state does, so it releases there.
    let second = ctx.graph().unwrap();
    let mut copy = CopyBuffer {
        src: storage.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    let planned = second
        .record()
        .insert_pass("copy", &mut copy, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    assert!(
        planned.queues().contains(ctx.async_compute()),
        "the compute queue joins the plan from the recorded state"
    );
    assert_release_acquire(
        planned.plan(),
        planned.queues(),
        ctx.async_compute(),
        ctx.graphics(),
    );
    let fence2 = planned.execute().unwrap();
    fence2.wait().unwrap();
    fence1.wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == fill_expected(count, 21));
    drop(fill);
    assert_clean(&ctx);
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn concurrent_sharing_needs_no_transfer() {
    let ctx = multi_ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1024usize;
    let len = (count * 4) as u64;
    let (storage, readback) = concurrent_storage(&ctx, len, "concurrent");
    let set = kit.buffer_set(&storage);
    let graph = ctx.graph().unwrap();
    let mut fill = Fill {
        kit: &kit,
        buf: storage.clone(),
        set,
        seed: 4,
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
        .insert_pass("copy", &mut copy, ctx.graphics())
        .insert_pass("host read", &mut host, ctx.graphics())
        .finish()
        .unwrap();
    println!("{planned}");
    assert!(
        transfers(planned.plan()).is_empty(),
        "no ownership transfer for CONCURRENT sharing"
    );
    assert_eq!(planned.plan().semaphore_waits(), 1);
    planned.execute().unwrap().wait().unwrap();
    let mut out = vec![0u8; len as usize];
    readback.read(0, &mut out).unwrap();
    assert!(out == fill_expected(count, 4));
    drop(fill);
    assert_clean(&ctx);
}

/// Reads of what async compute wrote in an earlier graph, after the host saw that work
/// complete through a reader's fence (the host never waits for the writer's own fence):
/// - the first reader, on graphics, waits for the write, and the submit carries the wait;
/// - the next reader on graphics plans no wait at all: the first reader's wait already ordered
///   the write before every later copy there and made it visible (`SegmentState::visible`);
/// - a reader on the transfer queue, which never waited for the write, plans the wait and
///   submits it, although the host saw the work complete (`Queue::host_complete`): the fence
///   orders the work, but only a wait of the transfer queue makes the write visible there.
///   Submits used to leave such waits out, and the validation layer reported
///   READ_RACING_WRITE.
///
/// The data must arrive every time, and the validation layer must agree.
#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn a_wait_for_work_the_host_saw_complete_is_submitted_where_it_makes_writes_visible() {
    let ctx = multi_ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1024usize;
    let len = (count * 4) as u64;
    let compute = ctx.async_compute();
    let families = [compute, ctx.graphics(), ctx.transfer()].map(|q| q.family());
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
    let storage = ctx
        .buffer(
            BufferDesc::new(len, usage).concurrent(&families),
            "written on compute",
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
        seed: 9,
        repeat: 1,
    };
    let filled = graph
        .record()
        .insert_pass("fill", &mut fill, compute)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let written = compute.last_value();
    assert!(
        compute.host_complete() < written,
        "no fence after the fill was seen"
    );

    // Reads `storage` on `q` into `readback` and checks it; returns how many of the plan's
    // waits were for the fill.
    let read = |q: &vk_baton::Queue| {
        readback.write(0, &vec![0u8; len as usize]).unwrap();
        let mut copy = CopyBuffer {
            src: storage.clone(),
            dst: readback.clone(),
        };
        let mut host = HostRead(readback.clone());
        let planned = graph
            .record()
            .insert_pass("copy", &mut copy, q)
            .insert_pass("host read", &mut host, q)
            .finish()
            .unwrap();
        let plan = planned.plan();
        let on_fill = (plan.queues.iter())
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.waits)
            .filter(|w| {
                matches!(w.target, vk_baton::plan::WaitTarget::Value { queue, value }
                    if value == written && plan.input.queues[queue].name == compute.name())
            })
            .count();
        let fence = planned.execute().unwrap();
        fence.wait().unwrap();
        let mut out = vec![0u8; len as usize];
        readback.read(0, &mut out).unwrap();
        assert!(out == fill_expected(count, 9), "on `{}`", q.name());
        on_fill
    };
    assert_eq!(read(ctx.graphics()), 1, "the first reader waits");
    assert_eq!(
        compute.host_complete(),
        written,
        "through the reader's wait"
    );
    assert_eq!(read(ctx.graphics()), 0, "made visible on graphics already");
    assert_eq!(read(ctx.transfer()), 1, "never made visible on transfer");
    drop(filled);
    drop(fill);
    assert_clean(&ctx);
}
