//! GPU tests: run on any Vulkan 1.3 device (lavapipe in CI) with validation and
//! synchronization validation on. Any validation message fails the test, and so does a
//! missing device.

mod common;

use common::gate::{Gate, Gated};
use common::*;
use std::sync::Arc;
use std::time::Duration;
use vk_baton::ash::vk;
use vk_baton::plan::Command;
use vk_baton::{
    Access, BufferDesc, BufferRange, Declare, Error, ImageDesc, ImageRange, Pass, Recorder,
    StBuffer, StImage,
};

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

/// Declares a single use, records nothing.
struct Uses(
    Vec<(Arc<StImage>, Access, Option<ImageRange>)>,
    Vec<(Arc<StBuffer>, Access, Option<BufferRange>)>,
);

impl Pass for Uses {
    fn declare(&self, d: &mut Declare<'_>) {
        for (i, a, r) in &self.0 {
            match r {
                Some(r) => d.uses(i, *a).range(*r),
                None => d.uses(i, *a),
            };
        }
        for (b, a, r) in &self.1 {
            match r {
                Some(r) => d.uses(b, *a).range(*r),
                None => d.uses(b, *a),
            };
        }
    }
    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

#[test]
fn queue_and_resource_from_another_device_are_refused() {
    let ctx = ctx();
    let other = common::ctx();
    let img = ctx
        .image(
            ImageDesc::storage_2d(4, 4, vk::Format::R8G8B8A8_UNORM),
            "mine",
        )
        .unwrap();
    let foreign_img = other
        .image(
            ImageDesc::storage_2d(4, 4, vk::Format::R8G8B8A8_UNORM),
            "foreign",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();

    let mut p = Uses(vec![(img.clone(), Access::TRANSFER_WRITE, None)], vec![]);
    let e = graph
        .record()
        .insert_pass("p", &mut p, other.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ForeignDevice { .. }), "{e}");

    let mut p = Uses(
        vec![(foreign_img.clone(), Access::TRANSFER_WRITE, None)],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("p", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ForeignDevice { .. }), "{e}");
    assert!(e.to_string().contains("foreign"));
    drop(foreign_img);
    assert_clean(&ctx);
    assert_clean(&other);
}

#[test]
fn usage_flags_and_ranges_are_checked_end_to_end() {
    let ctx = ctx();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                4,
                4,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::SAMPLED,
            ),
            "no-storage",
        )
        .unwrap();
    let buf = ctx
        .buffer(
            BufferDesc::new(64, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();

    let mut p = Uses(
        vec![(img.clone(), Access::COMPUTE_SHADER_WRITE, None)],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("storage write", &mut p, ctx.async_compute())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::UsageNotAllowed { .. }), "{e}");

    let mut p = Uses(
        vec![],
        vec![(
            buf.clone(),
            Access::TRANSFER_WRITE,
            Some(BufferRange {
                offset: 60,
                size: 8,
            }),
        )],
    );
    let e = graph
        .record()
        .insert_pass("past the end", &mut p, ctx.transfer())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");

    let mut p = Uses(
        vec![(
            img.clone(),
            Access::TRANSFER_WRITE,
            Some(ImageRange::mip(1, 1)),
        )],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("mip 1 of 1", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::RangeOutOfBounds { .. }), "{e}");

    let mut p = Uses(
        vec![
            (img.clone(), Access::TRANSFER_WRITE, None),
            (img.clone(), Access::FRAGMENT_SHADER_SAMPLED_READ, None),
        ],
        vec![],
    );
    let e = graph
        .record()
        .insert_pass("twice", &mut p, ctx.graphics())
        .finish()
        .unwrap_err();
    assert!(matches!(e, Error::ConflictingUses { .. }), "{e}");

    // Nothing changed: the resources are still fresh.
    assert_eq!(img.state().version, 0);
    assert_eq!(buf.state().version, 0);
    assert_clean(&ctx);
}

#[test]
fn stale_plan_is_refused_before_submitting() {
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::new(
                256,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "buf",
        )
        .unwrap();
    let src = ctx
        .buffer(
            BufferDesc::upload(256, vk::BufferUsageFlags::TRANSFER_SRC),
            "src",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let mut a = CopyBuffer {
        src: src.clone(),
        dst: buf.clone(),
    };
    let mut b = CopyBuffer {
        src: src.clone(),
        dst: buf.clone(),
    };
    let planned_a = graph
        .record()
        .insert_pass("a", &mut a, ctx.graphics())
        .finish()
        .unwrap();
    let planned_b = graph
        .record()
        .insert_pass("b", &mut b, ctx.graphics())
        .finish()
        .unwrap();
    let fence = planned_b.execute().unwrap();
    let e = planned_a.execute().unwrap_err();
    assert!(matches!(e, Error::StalePlan { .. }), "{e}");
    fence.wait().unwrap();
    assert_clean(&ctx);
}

/// A fence's timed wait reports an incomplete execution as such, then completion. The work is
/// held back by a gate the test opens itself, so "incomplete" is certain, not a race.
#[test]
fn fence_wait_timeout_and_completion() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1 << 16;
    let buf = ctx
        .buffer(
            BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
            "buf",
        )
        .unwrap();
    let set = kit.buffer_set(&buf);
    let graph = ctx.graph().unwrap();
    let gate = Gate::new(&ctx, ctx.async_compute());
    let mut fill = Gated {
        inner: Fill {
            kit: &kit,
            buf: buf.clone(),
            set,
            seed: 1,
            repeat: 8,
        },
        gate: gate.event,
    };
    let fence = graph
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let token = fence.completion();
    assert!(
        !fence.wait_timeout(Duration::from_millis(20)).unwrap(),
        "the gate is closed: the wait must time out"
    );
    assert!(!fence.is_complete());
    assert!(!token.is_complete());
    assert!(!token.has_failed());
    assert!(matches!(token.check(), Err(Error::NotReady)));

    gate.open();
    assert!(fence.wait_timeout(Duration::from_secs(60)).unwrap());
    assert!(fence.is_complete());
    assert!(token.is_complete());
    fence.wait().unwrap();
    token.check().unwrap();

    // An empty graph completes at once.
    let empty = graph.record().finish().unwrap().execute().unwrap();
    assert!(empty.is_complete());
    drop(fill);
    drop(gate);
    assert_clean(&ctx);
}

/// Dropping the fence of an execution that is provably still held back (by a gate the test
/// opens only afterwards) keeps its resources alive; they go once it completes. Dropping the
/// graph then waits for such an execution instead of freeing under it.
#[test]
fn dropping_an_incomplete_fence_frees_nothing_early() {
    let ctx = ctx();
    let kit = Compute::new(
        &ctx,
        vk_baton_shaders::FILL_COMP,
        vk::DescriptorType::STORAGE_BUFFER,
    );
    let count = 1 << 12;
    let graph = ctx.graph().unwrap();
    let gate = Gate::new(&ctx, ctx.async_compute());
    let token;
    let weak;
    {
        let buf = ctx
            .buffer(
                BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
                "short-lived",
            )
            .unwrap();
        weak = Arc::downgrade(&buf);
        let set = kit.buffer_set(&buf);
        let mut fill = Gated {
            inner: Fill {
                kit: &kit,
                buf,
                set,
                seed: 2,
                repeat: 1,
            },
            gate: gate.event,
        };
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, ctx.async_compute())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        token = fence.completion();
        // The pass (and its Arc) and the fence drop here, while the gate holds the work back.
    }
    assert!(!token.is_complete(), "the gate is still closed");
    let _ = graph.record(); // collects completed executions: this one is not
    assert!(
        weak.upgrade().is_some(),
        "the buffer was freed while the GPU may still use it"
    );

    gate.open();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !token.is_complete() {
        assert!(!token.has_failed());
        assert!(
            std::time::Instant::now() < deadline,
            "execution never completed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = graph.record();
    assert!(weak.upgrade().is_none(), "released once complete");

    // Dropping the graph with an incomplete dropped fence waits instead of freeing early: the
    // gate opens from another thread only after the drop has begun waiting.
    gate.close();
    let buf = ctx
        .buffer(
            BufferDesc::new(count * 4, vk::BufferUsageFlags::STORAGE_BUFFER),
            "dropped with graph",
        )
        .unwrap();
    let weak = Arc::downgrade(&buf);
    let set = kit.buffer_set(&buf);
    let mut fill = Gated {
        inner: Fill {
            kit: &kit,
            buf,
            set,
            seed: 3,
            repeat: 1,
        },
        gate: gate.event,
    };
    let fence = graph
        .record()
        .insert_pass("fill", &mut fill, ctx.async_compute())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let token = fence.completion();
    drop(fence);
    drop(fill);
    assert!(!token.is_complete());
    assert!(weak.upgrade().is_some());
    let opened = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            opened.store(true, std::sync::atomic::Ordering::SeqCst);
            gate.open();
        });
        drop(graph);
        assert!(
            opened.load(std::sync::atomic::Ordering::SeqCst),
            "dropping the graph returned before the held-back execution could run"
        );
    });
    assert!(token.is_complete());
    assert!(weak.upgrade().is_none());
    drop(gate);
    assert_clean(&ctx);
}

#[test]
fn keep_alive_objects_live_until_completion() {
    struct Keeper(Arc<StBuffer>, Arc<()>);
    impl Pass for Keeper {
        fn declare(&self, d: &mut Declare<'_>) {
            d.uses(&self.0, Access::TRANSFER_WRITE).discard();
        }
        fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
            // SAFETY: the buffer is in the declared state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 0xABCD_1234)
            };
            r.keep_alive(self.1.clone());
            Ok(())
        }
    }
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::readback(1024, vk::BufferUsageFlags::TRANSFER_DST),
            "filled",
        )
        .unwrap();
    let marker = Arc::new(());
    let graph = ctx.graph().unwrap();
    let mut k = Keeper(buf.clone(), marker.clone());
    let mut host = HostRead(buf.clone());
    let fence = graph
        .record()
        .insert_pass("fill", &mut k, ctx.transfer())
        .insert_pass("host", &mut host, ctx.transfer())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    assert_eq!(
        Arc::strong_count(&marker),
        3,
        "the fence holds the kept object"
    );
    fence.wait().unwrap();
    assert_eq!(Arc::strong_count(&marker), 2, "released after the wait");
    let mut out = [0u8; 8];
    buf.read(1016, &mut out).unwrap();
    assert_eq!(out, [0x34, 0x12, 0xCD, 0xAB, 0x34, 0x12, 0xCD, 0xAB]);
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

#[test]
fn validation_and_sync_validation_are_really_on() {
    // A pass pair that hides its hazard from the graph: the layer must report it.
    struct Hidden(Arc<StBuffer>, Arc<StBuffer>, bool);
    impl Pass for Hidden {
        fn declare(&self, _d: &mut Declare<'_>) {}
        fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
            // SAFETY: valid commands; the missing barrier is the point of the test.
            unsafe {
                if self.2 {
                    r.device()
                        .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 1);
                } else {
                    r.device().cmd_copy_buffer(
                        r.cmd(),
                        self.0.handle(),
                        self.1.handle(),
                        &[vk::BufferCopy {
                            src_offset: 0,
                            dst_offset: 0,
                            size: 64,
                        }],
                    );
                }
            }
            Ok(())
        }
    }
    let ctx = ctx();
    let a = ctx
        .buffer(
            BufferDesc::new(
                64,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "a",
        )
        .unwrap();
    let b = ctx
        .buffer(BufferDesc::new(64, vk::BufferUsageFlags::TRANSFER_DST), "b")
        .unwrap();
    let graph = ctx.graph().unwrap();
    let mut w = Hidden(a.clone(), b.clone(), true);
    let mut r = Hidden(a.clone(), b.clone(), false);
    graph
        .record()
        .insert_pass("write", &mut w, ctx.graphics())
        .insert_pass("read", &mut r, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let m = ctx.validation_messages();
    assert!(
        m.texts.iter().any(|t| t.contains("SYNC-HAZARD")),
        "synchronization validation did not report the hidden hazard: {m}"
    );
}

/// Remembers the completion token it is handed, then optionally fails to record.
struct TokenProbe {
    buf: Arc<StBuffer>,
    token: Option<vk_baton::CompletionToken>,
    fail: bool,
}

impl Pass for TokenProbe {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.token = Some(r.completion());
        if self.fail {
            return Err(Error::PassFailed("planted failure".into()));
        }
        // SAFETY: the buffer is alive; the graph ordered this pass.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.buf.handle(), 0, vk::WHOLE_SIZE, 9)
        };
        Ok(())
    }
}

/// An execution that never reached the GPU must not look complete to the objects it handed a
/// token to (a download handle would otherwise return stale bytes).
#[test]
fn an_execution_that_failed_before_submit_never_looks_complete() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let buf = ctx
        .buffer(
            BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();

    // A pass that fails while recording.
    let mut failing = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: true,
    };
    let e = graph
        .record()
        .insert_pass("fails", &mut failing, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap_err();
    assert!(
        matches!(&e, Error::Record { pass, source } if pass == "fails" && matches!(**source, Error::PassFailed(_))),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "pass `fails` failed to record: planted failure"
    );
    let token = failing.token.take().expect("record ran");
    assert!(!token.is_complete());
    assert!(token.has_failed());
    assert!(matches!(token.check(), Err(Error::NotExecuted)));

    // A stale plan: recorded, then refused before submitting.
    let mut stale = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    let mut other = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    let planned = graph
        .record()
        .insert_pass("stale", &mut stale, ctx.graphics())
        .finish()
        .unwrap();
    let fence = graph
        .record()
        .insert_pass("other", &mut other, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    assert!(matches!(planned.execute(), Err(Error::StalePlan { .. })));
    fence.wait().unwrap();
    let token = stale.token.take().expect("record ran");
    assert!(matches!(token.check(), Err(Error::NotExecuted)));
    // The execution that did run completes normally.
    assert!(other.token.take().unwrap().is_complete());
    assert_clean(&ctx);
}

/// A graph that outlives its context keeps the device alive (leaked, with an error logged)
/// instead of destroying its pools and fences on a destroyed device: it still executes after
/// the context is gone, and dropping it then reports nothing.
#[test]
fn a_graph_may_outlive_its_context() {
    let ctx = ctx();
    let log = ctx.message_log();
    let graph = ctx.graph().unwrap();
    let queue = ctx.graphics().clone();
    let buf = ctx
        .buffer(
            BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let mut fill = TokenProbe {
        buf: buf.clone(),
        token: None,
        fail: false,
    };
    graph
        .record()
        .insert_pass("fill", &mut fill, &queue)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_clean(&ctx);
    drop(ctx);

    // The device lives on for the graph, its queue and its buffer.
    let fence = graph
        .record()
        .insert_pass("fill again", &mut fill, &queue)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    let token = fill.token.take().expect("record ran");
    token.check().unwrap();
    drop(fence);
    drop(fill);
    drop(buf);
    drop(queue);
    drop(graph); // destroys its fences and pools on the still-alive device
    assert!(log.validation() == 0, "{}", log.validation());
    assert!(log.driver() == 0, "{}", log.driver());
}

#[test]
fn empty_resources_are_refused() {
    let ctx = ctx();
    let e = ctx
        .buffer(
            BufferDesc::new(0, vk::BufferUsageFlags::TRANSFER_DST),
            "empty",
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let desc = ImageDesc::new_2d(
        0,
        16,
        vk::Format::R8G8B8A8_UNORM,
        vk::ImageUsageFlags::TRANSFER_DST,
    );
    let e = ctx.image(desc, "empty").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert_clean(&ctx);
}
