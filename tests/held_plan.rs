//! Plans executed again: a held plan (`Planned::hold`) executed frame after frame rebinds
//! while the resources' states only move on in time, re-plans when another graph changed one
//! in a way that matters, and the data is right every frame; a plan the builder reuses for
//! other resources of the same shape records its barriers on those resources. Validation on,
//! any message fails.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, ImageDesc, Pass, Recorder, StBuffer, StImage};

const SIZE: u64 = 256;

/// Fills `dst` with the current value of `value` (read at record time, so the declarations
/// stay the same while the data changes from frame to frame).
struct Fill {
    dst: Arc<StBuffer>,
    value: Arc<AtomicU32>,
}

impl Pass for Fill {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let v = self.value.load(Ordering::Relaxed);
        // SAFETY: `cmd` is recording; the buffer is alive and in the declared state.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.dst.handle(), 0, vk::WHOLE_SIZE, v)
        };
        Ok(())
    }
}

/// Copies `src` into `dst`.
struct Copy {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
}

impl Pass for Copy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::COPY_READ);
        d.uses(&self.dst, Access::COPY_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default().size(SIZE);
        // SAFETY: `cmd` is recording; both buffers are alive, SIZE long, in the declared states.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
}

/// The host reads `buf` after the GPU.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

fn read_u32s(buf: &StBuffer) -> Vec<u32> {
    let mut out = vec![0u8; SIZE as usize];
    buf.read(0, &mut out).unwrap();
    out.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The frame both held-plan tests run: a fill of `a` (storage-capable) with the current
/// `value`, a copy of `a` into the readback buffer `out`, and the host's read of `out`.
struct FillCopyRead {
    a: Arc<StBuffer>,
    out: Arc<StBuffer>,
    value: Arc<AtomicU32>,
    fill: Fill,
    copy: Copy,
    read: HostRead,
}

impl FillCopyRead {
    fn new(ctx: &vk_baton_context::Context) -> Self {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let storage = usage | vk::BufferUsageFlags::STORAGE_BUFFER;
        let a = ctx.buffer(BufferDesc::new(SIZE, storage), "a").unwrap();
        let out = ctx
            .buffer(BufferDesc::readback(SIZE, usage), "out")
            .unwrap();
        let value = Arc::new(AtomicU32::new(0));
        FillCopyRead {
            fill: Fill {
                dst: a.clone(),
                value: value.clone(),
            },
            copy: Copy {
                src: a.clone(),
                dst: out.clone(),
            },
            read: HostRead(out.clone()),
            a,
            out,
            value,
        }
    }
}

#[test]
fn a_held_plan_rebinds_frame_after_frame_and_replans_when_a_state_changed() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics().clone();
    let FillCopyRead {
        a,
        out,
        value,
        mut fill,
        mut copy,
        mut read,
    } = FillCopyRead::new(&ctx);
    let mut held = graph
        .record()
        .insert_pass("fill", &mut fill, &q)
        .insert_pass("copy", &mut copy, &q)
        .insert_pass("read", &mut read, &q)
        .finish()
        .unwrap()
        .hold();
    for frame in 1..=8u32 {
        value.store(frame * 0x0101_0101, Ordering::Relaxed);
        held.execute().unwrap().wait().unwrap();
        assert_eq!(
            read_u32s(&out),
            vec![frame * 0x0101_0101; 64],
            "frame {frame}"
        );
    }
    // Frame 1 ran the plan `finish()` made; frame 2 found the states of a frame before it
    // (written, not undefined), which plans differently; from then on every frame rebinds.
    assert_eq!(held.replanned(), 1, "{}", held.plan());
    assert_eq!(held.took_kept(), 0, "nothing was kept before frame 2");
    // Frame 3 found the states frame 2 left (compared in full); from frame 4 on, the plan's
    // input was such a state too, and the versions alone tell that nothing else changed.
    assert_eq!(held.at_rest(), 5, "frames 4 to 8 rebound at rest");

    // Another graph reads `a` in the compute-shader stage: the next fill must wait for that
    // read too, so the held plan must be re-planned rather than rebound.
    let mut other = vk_baton::pass::FnPass::new(
        |d: &mut Declare<'_>| {
            d.uses(&a, Access::COMPUTE_SHADER_READ);
        },
        |_: &mut Recorder<'_>| Ok(()),
    );
    graph
        .record()
        .insert_pass("other reader", &mut other, &q)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    value.store(0xabab_abab, Ordering::Relaxed);
    held.execute().unwrap().wait().unwrap();
    assert_eq!(
        (held.replanned(), held.took_kept()),
        (2, 0),
        "a shape not met yet"
    );
    assert_eq!(read_u32s(&out), vec![0xabab_abab; 64]);
    // The frame after it starts from the steady states again, which the plan just made does
    // not match: one more re-plan, which takes the steady plan the held plan left with the
    // graph's kept plans, then rebinding again.
    for (frame, replanned) in [(10, 3), (11, 3), (12, 3)] {
        value.store(frame, Ordering::Relaxed);
        held.execute().unwrap().wait().unwrap();
        assert_eq!(held.replanned(), replanned, "frame {frame}");
        assert_eq!(
            held.took_kept(),
            1,
            "frame {frame}: the steady shape came back"
        );
        assert_eq!(read_u32s(&out), vec![frame; 64], "frame {frame}");
    }
    // Frame 11 found the states frame 10 left; frame 12 rebound at rest again.
    assert_eq!(held.at_rest(), 6, "frame 12 rebound at rest");
    // The plan's queue indices still name the one queue, after three re-plans.
    let names: Vec<_> = held.queues().iter().map(|q| q.name().to_owned()).collect();
    assert_eq!(names, [q.name()], "{}", held.plan());
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}

/// Clears `image` to `value`, then copies it into `out` and reads it on the host.
fn clear_and_read_back(
    graph: &vk_baton::Graph,
    q: &vk_baton::Queue,
    image: &Arc<StImage>,
    out: &Arc<StBuffer>,
    value: u32,
) -> bool {
    let range = vk::ImageSubresourceRange::default()
        .aspect_mask(vk::ImageAspectFlags::COLOR)
        .level_count(1)
        .layer_count(1);
    let extent = image.desc().extent;
    let planned = graph
        .record()
        .insert_fn(
            "clear",
            q,
            |d| {
                d.uses(image, Access::CLEAR_COLOR_WRITE).discard();
            },
            |r| {
                let color = vk::ClearColorValue { uint32: [value; 4] };
                // SAFETY: `cmd` is recording; the image is alive, in TRANSFER_DST_OPTIMAL.
                unsafe {
                    r.device().cmd_clear_color_image(
                        r.cmd(),
                        image.handle(),
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &color,
                        &[range],
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "copy out",
            q,
            |d| {
                d.uses(image, Access::COPY_READ);
                d.uses(out, Access::COPY_WRITE).discard();
            },
            |r| {
                let region = vk::BufferImageCopy::default()
                    .image_subresource(
                        vk::ImageSubresourceLayers::default()
                            .aspect_mask(vk::ImageAspectFlags::COLOR)
                            .layer_count(1),
                    )
                    .image_extent(extent);
                // SAFETY: `cmd` is recording; both are alive and in the declared states.
                unsafe {
                    r.device().cmd_copy_image_to_buffer(
                        r.cmd(),
                        image.handle(),
                        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        out.handle(),
                        &[region],
                    )
                };
                Ok(())
            },
        )
        .insert_fn(
            "read",
            q,
            |d| {
                d.uses(out, Access::HOST_READ);
            },
            |_| Ok(()),
        )
        .finish()
        .unwrap();
    let reused = planned.reused();
    planned.execute().unwrap().wait().unwrap();
    reused
}

/// Two images of one shape, each with its read-back buffer, used by frames in turn: once
/// both have been through a frame, their states look alike and the builder reuses one plan
/// for both. Its barriers must name each frame's own image (layout transitions on the other
/// image would leave this one in the wrong layout: validation and the data would say so).
#[test]
fn a_reused_plan_records_its_barriers_on_the_frames_own_resources() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics().clone();
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let desc = ImageDesc::new_2d(4, 4, vk::Format::R8G8B8A8_UINT, usage);
    let pairs: Vec<(Arc<StImage>, Arc<StBuffer>)> = (0..2)
        .map(|i| {
            let image = ctx.image(desc.clone(), &format!("image {i}")).unwrap();
            let out = BufferDesc::readback(64, vk::BufferUsageFlags::TRANSFER_DST);
            (image, ctx.buffer(out, &format!("out {i}")).unwrap())
        })
        .collect();
    let mut reused = Vec::new();
    for frame in 0..8u32 {
        let (image, out) = &pairs[frame as usize % 2];
        let value = 0x10 + frame;
        reused.push(clear_and_read_back(&graph, &q, image, out, value));
        let mut texels = [0u8; 64];
        out.read(0, &mut texels).unwrap();
        assert_eq!(texels, [value as u8; 64], "frame {frame}");
    }
    // Frame 1 finds its image undefined as frame 0 did: frame 0's plan, on image 1. Frame 2
    // is the first to find an image in TRANSFER_SRC_OPTIMAL, so it plans; from then on, image
    // after image, one plan.
    assert_eq!(
        reused,
        [false, true, false, true, true, true, true, true],
        "which frames reused the last plan"
    );
    drop(pairs);
    drop(graph);
    common::assert_clean(&ctx);
}

/// A frame loop that cycles through a few shapes (here one to four fills of a buffer, then a
/// copy out of it and a host read) reuses each shape's plan from the shape's second round on:
/// the graph keeps the plans of its last four executions. A cycle of five shapes outgrows them
/// and plans every frame. The data is right every frame either way.
#[test]
fn a_frame_loop_of_a_few_shapes_reuses_each_shapes_plan() {
    let ctx = common::ctx();
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    // Which frames of a cycle through `shapes` shapes reused a plan, on a graph and buffers
    // of their own.
    let run = |shapes: u32, frames: u32| -> Vec<bool> {
        let graph = ctx.graph().unwrap();
        let a = ctx.buffer(BufferDesc::new(SIZE, usage), "a").unwrap();
        let out = ctx
            .buffer(BufferDesc::readback(SIZE, usage), "out")
            .unwrap();
        let value = Arc::new(AtomicU32::new(0));
        let mut copy = Copy {
            src: a.clone(),
            dst: out.clone(),
        };
        let mut read = HostRead(out.clone());
        (0..frames)
            .map(|frame| {
                let fills = frame % shapes + 1;
                value.store(0x0101_0101 * (frame + 1), Ordering::Relaxed);
                let mut fill: Vec<Fill> = (0..fills)
                    .map(|_| Fill {
                        dst: a.clone(),
                        value: value.clone(),
                    })
                    .collect();
                let mut b = graph.record();
                for f in &mut fill {
                    b = b.insert_pass("fill", f, &q);
                }
                let planned = b
                    .insert_pass("copy", &mut copy, &q)
                    .insert_pass("read", &mut read, &q)
                    .finish()
                    .unwrap();
                let reused = planned.reused();
                planned.execute().unwrap().wait().unwrap();
                assert_eq!(
                    read_u32s(&out),
                    vec![0x0101_0101 * (frame + 1); 64],
                    "{shapes} shapes, frame {frame}"
                );
                reused
            })
            .collect()
    };
    // Frame 0 finds `a` never used; frames 1 to 3 are new shapes; frame 4 has frame 0's shape
    // but finds `a` written, which plans differently. From frame 5 on, each shape's plan.
    let four = run(4, 12);
    let want: Vec<bool> = (0..12).map(|frame| frame >= 5).collect();
    assert_eq!(four, want, "which frames of a 4-shape cycle reused a plan");
    assert_eq!(
        run(5, 15),
        vec![false; 15],
        "a 5-shape cycle outgrows the kept plans"
    );
    common::assert_clean(&ctx);
}

/// A builder's frame loop over buffers only it touches: after the states repeat, `finish()`
/// takes the last plan at rest (versions compared, no state read); another graph's read of one
/// buffer sends the next frame back to comparing states, and the data is right every frame.
#[test]
fn a_frame_loop_is_rebound_at_rest_until_another_graph_touches_a_resource() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics().clone();
    let FillCopyRead {
        a,
        out,
        value,
        mut fill,
        mut copy,
        mut read,
    } = FillCopyRead::new(&ctx);
    let mut frame = |n: u32| {
        value.store(n * 0x0102_0304, Ordering::Relaxed);
        let planned = graph
            .record()
            .insert_pass("fill", &mut fill, &q)
            .insert_pass("copy", &mut copy, &q)
            .insert_pass("read", &mut read, &q)
            .finish()
            .unwrap();
        let how = match (planned.reused(), planned.at_rest()) {
            (_, true) => 'a',
            (true, false) => 'r',
            (false, _) => 'p',
        };
        planned.execute().unwrap().wait().unwrap();
        assert_eq!(read_u32s(&out), vec![n * 0x0102_0304; 64], "frame {n}");
        how
    };
    let steady: String = (1..=6).map(&mut frame).collect();
    // Planned (fresh buffers), planned (written ones), reused after comparing the states the
    // second frame left, then at rest.
    assert_eq!(steady, "ppraaa");

    let mut other = vk_baton::pass::FnPass::new(
        |d: &mut Declare<'_>| {
            d.uses(&a, Access::COMPUTE_SHADER_READ);
        },
        |_: &mut Recorder<'_>| Ok(()),
    );
    // Another graph, with a cache of its own: only the buffer's state tells this one.
    let other_graph = ctx.graph().unwrap();
    let reader = other_graph
        .record()
        .insert_pass("other reader", &mut other, &q);
    reader.finish().unwrap().execute().unwrap().wait().unwrap();
    let after: String = (7..=10).map(&mut frame).collect();
    // The read changed `a`'s state: the next fill must wait for it, a new shape. The frame
    // after finds the steady states again and takes the steady plan, compared in full; its
    // last execution was before the read, so its input is not at rest yet. The one after
    // that compares in full once more and finds the states that plan left; then at rest.
    assert_eq!(after, "prra");
    drop(other_graph);
    drop(graph);
    common::assert_clean(&ctx);
}
