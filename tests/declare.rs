//! Declaring uses with `Declare::uses` and closure passes (`GraphBuilder::insert_fn`,
//! `FnPass`), on the GPU with validation: the declarations reach the plan as written, and the
//! commands recorded from closures run in the planned order.

mod common;

use common::*;
use std::cell::Cell;
use vk_baton::ash::vk;
use vk_baton::pass::FnPass;
use vk_baton::plan::UseDecl;
use vk_baton::{Access, BufferDesc, BufferRange, Error, ImageRange, Resource, SubRange};

#[test]
fn closure_passes_fill_two_halves_and_read_them_back() {
    let ctx = ctx();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let gpu = ctx.buffer(BufferDesc::new(256, usage), "gpu").unwrap();
    let host = ctx
        .buffer(BufferDesc::readback(256, usage), "host")
        .unwrap();
    let low = BufferRange {
        offset: 0,
        size: 128,
    };
    let high = BufferRange {
        offset: 128,
        size: 128,
    };
    let fill = |range: BufferRange, value: u32| {
        let gpu = &gpu;
        move |r: &mut vk_baton::Recorder<'_>| {
            // SAFETY: the buffer is alive; the graph put the range in the declared state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), gpu.handle(), range.offset, range.size, value)
            };
            Ok(())
        }
    };
    let region = vk::BufferCopy::default().size(256);
    let graph = ctx.graph().unwrap();
    let planned = graph
        .record()
        .insert_fn(
            "low",
            ctx.transfer(),
            |d| {
                d.uses(&gpu, Access::TRANSFER_WRITE).range(low).discard();
            },
            fill(low, 0x1111_1111),
        )
        .insert_fn(
            "high",
            ctx.transfer(),
            |d| {
                d.uses(&gpu, Access::TRANSFER_WRITE).range(high).discard();
            },
            fill(high, 0x2222_2222),
        )
        .insert_fn(
            "read back",
            ctx.graphics(),
            |d| {
                d.uses(&gpu, Access::COPY_READ);
                d.uses(&host, Access::COPY_WRITE).discard();
            },
            |r| {
                // SAFETY: both buffers are alive and 256 bytes long.
                unsafe {
                    r.device()
                        .cmd_copy_buffer(r.cmd(), gpu.handle(), host.handle(), &[region])
                };
                Ok(())
            },
        )
        .insert_fn(
            "host",
            ctx.graphics(),
            |d| {
                d.uses(&host, Access::HOST_READ);
            },
            |_r| Ok(()),
        )
        .finish()
        .unwrap();
    // The declarations as the planner received them (resources numbered in order of first
    // use: gpu 0, host 1).
    let uses: Vec<Vec<UseDecl>> = planned
        .plan()
        .input
        .passes
        .iter()
        .map(|p| p.uses.clone())
        .collect();
    let with = |u: UseDecl, range: Option<SubRange>, discard: bool| UseDecl {
        range,
        discard,
        ..u
    };
    assert_eq!(
        uses,
        vec![
            vec![with(
                UseDecl::new(0, Access::TRANSFER_WRITE),
                Some(SubRange::Buffer(low)),
                true
            )],
            vec![with(
                UseDecl::new(0, Access::TRANSFER_WRITE),
                Some(SubRange::Buffer(high)),
                true
            )],
            vec![
                UseDecl::new(0, Access::COPY_READ),
                with(UseDecl::new(1, Access::COPY_WRITE), None, true)
            ],
            vec![UseDecl::new(1, Access::HOST_READ)],
        ]
    );
    planned.execute().unwrap().wait().unwrap();
    let mut out = [0u8; 256];
    host.read(0, &mut out).unwrap();
    assert!(out[..128].iter().all(|&b| b == 0x11), "{out:?}");
    assert!(out[128..].iter().all(|&b| b == 0x22), "{out:?}");
    assert_clean(&ctx);
}

#[test]
fn an_fn_pass_is_reused_across_graphs() {
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::readback(64, vk::BufferUsageFlags::TRANSFER_DST),
            "counter",
        )
        .unwrap();
    let runs = Cell::new(0u32);
    let mut fill = FnPass::new(
        |d| {
            d.uses(&buf, Access::TRANSFER_WRITE).discard();
        },
        |r| {
            runs.set(runs.get() + 1);
            // SAFETY: the buffer is alive and in TRANSFER_WRITE's state.
            unsafe {
                r.device()
                    .cmd_fill_buffer(r.cmd(), buf.handle(), 0, vk::WHOLE_SIZE, runs.get())
            };
            Ok(())
        },
    );
    let mut host = HostRead(buf.clone());
    let graph = ctx.graph().unwrap();
    for expect in 1..=2u32 {
        graph
            .record()
            .insert_pass("fill", &mut fill, ctx.transfer())
            .insert_pass("host", &mut host, ctx.transfer())
            .finish()
            .unwrap()
            .execute()
            .unwrap()
            .wait()
            .unwrap();
        let mut out = [0u8; 4];
        buf.read(60, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), expect);
    }
    assert_eq!(runs.get(), 2);
    assert_clean(&ctx);
}

#[test]
fn a_byte_range_for_an_image_is_refused_when_planning() {
    let ctx = ctx();
    let img = ctx
        .image(
            vk_baton::ImageDesc::new_2d(
                4,
                4,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::TRANSFER_DST,
            ),
            "img",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    // Through `Resource` the range kind is only known at run time: the planner refuses it.
    let as_resource = Resource::Image(img.clone());
    let e = graph
        .record()
        .insert_fn(
            "bad",
            ctx.graphics(),
            |d| {
                d.uses(&as_resource, Access::TRANSFER_WRITE)
                    .range(SubRange::Buffer(BufferRange { offset: 0, size: 4 }));
            },
            |_r| Ok(()),
        )
        .finish()
        .expect_err("an image use with a byte range is refused");
    let Error::RangeOutOfBounds { pass, resource, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!((pass.as_str(), resource.as_str()), ("bad", "img"));
    // The same use with an image range plans.
    graph
        .record()
        .insert_fn(
            "good",
            ctx.graphics(),
            |d| {
                d.uses(&as_resource, Access::TRANSFER_WRITE)
                    .range(SubRange::Image(ImageRange::mip(0, 1)))
                    .discard();
            },
            |_r| Ok(()),
        )
        .finish()
        .unwrap();
    assert_clean(&ctx);
}

/// An access whose stage needs a device feature the graph was not told of is refused when
/// the frame is planned, naming the feature; the graph goes on with the next frame, and the
/// same frame is refused again (a refused frame leaves no plan to reuse).
#[test]
fn an_access_whose_device_feature_is_not_enabled_is_refused() {
    use vk_baton::access::DeviceFeatures;
    let ctx = ctx();
    let buf = ctx
        .buffer(
            BufferDesc::new(
                64,
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_DST
                    | vk::BufferUsageFlags::TRANSFER_SRC,
            ),
            "meshlets",
        )
        .unwrap();
    let host = ctx
        .buffer(
            BufferDesc::readback(64, vk::BufferUsageFlags::TRANSFER_DST),
            "host",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    assert_eq!(graph.device_features(), DeviceFeatures::NONE);
    let mesh_read = |access: Access| {
        let buf = &buf;
        graph
            .record()
            .insert_fn(
                "draw meshlets",
                ctx.graphics(),
                move |d| {
                    d.uses(buf, access);
                },
                |_r| Ok(()),
            )
            .finish()
            .map(drop)
    };
    for _ in 0..2 {
        match mesh_read(Access::MESH_SHADER_STORAGE_READ) {
            Err(Error::FeatureNotEnabled {
                pass,
                resource,
                access,
                feature,
            }) => {
                assert_eq!(
                    (pass.as_str(), resource.as_str(), access.as_str(), feature),
                    (
                        "draw meshlets",
                        "meshlets",
                        "MESH_SHADER_STORAGE_READ",
                        "meshShader"
                    )
                );
            }
            other => panic!("{other:?}"),
        }
    }
    // A raw access is judged by its flags the same way.
    let task = Access::raw(
        vk::PipelineStageFlags2::TASK_SHADER_EXT,
        vk::AccessFlags2::SHADER_STORAGE_READ,
        vk::ImageLayout::UNDEFINED,
    );
    let e = mesh_read(task).expect_err("a task-shader stage needs taskShader");
    assert!(e.to_string().contains("taskShader"), "{e}");
    // The graph goes on: a fill read back, checked by its bytes.
    let region = vk::BufferCopy::default().size(64);
    graph
        .record()
        .insert_fn(
            "fill",
            ctx.graphics(),
            |d| {
                d.uses(&buf, Access::TRANSFER_WRITE).discard();
            },
            |r| {
                // SAFETY: the buffer is alive, 64 bytes long, and in the declared state.
                unsafe {
                    r.device()
                        .cmd_fill_buffer(r.cmd(), buf.handle(), 0, 64, 0x5a5a_5a5a)
                };
                Ok(())
            },
        )
        .insert_fn(
            "read back",
            ctx.graphics(),
            |d| {
                d.uses(&buf, Access::COPY_READ);
                d.uses(&host, Access::COPY_WRITE).discard();
            },
            |r| {
                // SAFETY: both buffers are alive and 64 bytes long.
                unsafe {
                    r.device()
                        .cmd_copy_buffer(r.cmd(), buf.handle(), host.handle(), &[region])
                };
                Ok(())
            },
        )
        .insert_fn(
            "host",
            ctx.graphics(),
            |d| {
                d.uses(&host, Access::HOST_READ);
            },
            |_r| Ok(()),
        )
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    let mut out = [0u8; 64];
    host.read(0, &mut out).unwrap();
    assert!(out.iter().all(|&b| b == 0x5a), "{out:?}");
    assert_clean(&ctx);
}
