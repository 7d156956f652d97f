//! `Graph::hand_off`: resources handed to the app's own command buffer and submit, and back.
//!
//! Each chain: a graph uploads a buffer, the app copies it into an image in its own command
//! buffer through a handoff, and a graph downloads the image; the host checks every texel.
//! The lavapipe tests run on one queue family; the `multi_family_` tests need a dedicated
//! transfer family and are ignored by default (run them on the NVIDIA machine with
//! `--include-ignored`: on a single-family device they fail with a clear message).

mod common;
#[path = "handoff/multi_family.rs"]
mod multi_family;

use common::*;
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::plan::{Recorded, SegmentState};
use vk_baton::{Access, BufferDesc, Graph, ImageDesc, Queue, StBuffer, StImage};
use vk_baton_context::Context;

const W: u32 = 16;
const H: u32 = 8;
const BYTES: u64 = (W * H * 4) as u64;

/// The app's own command pool, command buffer and fence, on one family.
struct AppCmd {
    device: vk_baton::ash::Device,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
}

impl AppCmd {
    /// With its command buffer recording.
    fn new(ctx: &Context, family: u32) -> AppCmd {
        let app = AppCmd::idle(ctx, family);
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the command buffer was just allocated: in the initial state.
        unsafe { app.device.begin_command_buffer(app.cmd, &begin) }.unwrap();
        app
    }

    /// With its command buffer in the initial state.
    fn idle(ctx: &Context, family: u32) -> AppCmd {
        let device = ctx.device().clone();
        // SAFETY: valid create infos on a live device; destroyed in Drop after the fence.
        unsafe {
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                    None,
                )
                .unwrap();
            let cmd = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .unwrap()[0];
            let fence = device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .unwrap();
            AppCmd {
                device,
                pool,
                cmd,
                fence,
            }
        }
    }

    /// The app's own copy of `data` into mip 0 of `img` (in `layout`), then
    /// `vkEndCommandBuffer`.
    fn copy_and_end(&self, data: &StBuffer, img: &StImage, layout: vk::ImageLayout) {
        self.copy(data, img, layout);
        // SAFETY: `cmd` is recording.
        unsafe { self.device.end_command_buffer(self.cmd).unwrap() };
    }

    /// The app's own copy of `data` into mip 0 of `img` (in `layout`).
    fn copy(&self, data: &StBuffer, img: &StImage, layout: vk::ImageLayout) {
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: 1,
            })
            .image_extent(img.desc().extent);
        // SAFETY: `cmd` is recording; the handoff's barriers were recorded before.
        unsafe {
            self.device.cmd_copy_buffer_to_image(
                self.cmd,
                data.handle(),
                img.handle(),
                layout,
                &[region],
            );
        }
    }
}

impl Drop for AppCmd {
    fn drop(&mut self) {
        // SAFETY: the fence was submitted (or never was: then nothing is pending either, as
        // the tests wait for the queue through a later graph before dropping).
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_command_pool(self.pool, None);
        }
    }
}

struct Chain {
    staging: Arc<StBuffer>,
    data: Arc<StBuffer>,
    img: Arc<StImage>,
    readback: Arc<StBuffer>,
    pattern: Vec<u8>,
}

fn chain(ctx: &Context) -> Chain {
    let pattern: Vec<u8> = (0..W * H).flat_map(|i| (i * 7 + 3).to_le_bytes()).collect();
    let staging = ctx
        .buffer(
            BufferDesc::upload(BYTES, vk::BufferUsageFlags::TRANSFER_SRC),
            "staging",
        )
        .unwrap();
    staging.write(0, &pattern).unwrap();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let data = ctx.buffer(BufferDesc::new(BYTES, usage), "data").unwrap();
    let img_usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let img = ctx
        .image(
            ImageDesc::new_2d(W, H, vk::Format::R32_UINT, img_usage),
            "img",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(BYTES, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    Chain {
        staging,
        data,
        img,
        readback,
        pattern,
    }
}

fn upload(graph: &Graph, c: &Chain, q: &Queue) {
    let mut copy = CopyBuffer {
        src: c.staging.clone(),
        dst: c.data.clone(),
    };
    let fence = graph
        .record()
        .insert_pass("upload", &mut copy, q)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
}

/// Downloads the image on `q` and returns its bytes.
fn download(graph: &Graph, c: &Chain, q: &Queue) -> Vec<u8> {
    let mut copy = ImageToBuffer {
        src: c.img.clone(),
        dst: c.readback.clone(),
    };
    let mut host = HostRead(c.readback.clone());
    let fence = graph
        .record()
        .insert_pass("download", &mut copy, q)
        .insert_pass("host read", &mut host, q)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    let mut out = vec![0u8; BYTES as usize];
    c.readback.read(0, &mut out).unwrap();
    out
}

/// A graph on `q` copies the chain's buffer into its image, and waits.
fn copy_into_image(graph: &Graph, c: &Chain, q: &Queue) {
    let mut to_image = BufferToImage {
        src: c.data.clone(),
        dst: c.img.clone(),
    };
    graph
        .record()
        .insert_pass("to image", &mut to_image, q)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
}

/// The state a handoff of `access` on `q` leaves: written (or read) by the app at `value`.
fn after_app(q: &Queue, value: u64, access: Access) -> Recorded<Queue> {
    Recorded {
        queue: q.clone(),
        value: Some(value),
        stages: access.stages,
        access: access.access,
    }
}

/// Upload on `upload_q`, the app's copy on `app_q` through a handoff, download on
/// `download_q`; every texel checked; in a graph under `policy`, the app's copy in the layout
/// the handoff names.
fn graph_handoff_graph(
    ctx: &Context,
    (upload_q, app_q, download_q): (&Queue, &Queue, &Queue),
    policy: LayoutPolicy,
) {
    if policy == LayoutPolicy::General {
        // Copies in GENERAL on purpose: old layers' performance warning is expected.
        ctx.allow_message(COPY_IN_GENERAL_LAYOUT);
    }
    let graph = ctx.graph().unwrap();
    graph.set_layout_policy(policy);
    let copied = policy.layout(Access::COPY_WRITE);
    let c = chain(ctx);
    upload(&graph, &c, upload_q);
    let app = AppCmd::new(ctx, app_q.family());
    let before = app_q.last_value();
    let handoff = graph
        .hand_off("app copy", app_q, |d| {
            d.uses(&c.data, Access::COPY_READ);
            d.uses(&c.img, Access::COPY_WRITE).discard();
        })
        .unwrap();
    let value = handoff.signal_value();
    assert_eq!(value, before + 1);
    // One timeline signal of the app's queue at the reserved value, after all of it.
    let signals: Vec<_> = handoff
        .signals()
        .iter()
        .map(|s| (s.semaphore, s.value, s.stage_mask))
        .collect();
    assert_eq!(
        signals,
        vec![(
            app_q.timeline(),
            value,
            vk::PipelineStageFlags2::ALL_COMMANDS
        )]
    );
    let (mut memory, mut buffer, mut images) = (vec![], vec![], vec![]);
    handoff
        .barriers()
        .append_to(&mut memory, &mut buffer, &mut images);
    assert_eq!(
        handoff.barriers().len(),
        memory.len() + buffer.len() + images.len()
    );
    let images: Vec<_> = (images.iter())
        .map(|b| (b.old_layout, b.new_layout, b.image, b.dst_access_mask))
        .collect();
    assert_eq!(
        images,
        vec![(
            vk::ImageLayout::UNDEFINED,
            copied,
            c.img.handle(),
            vk::AccessFlags2::TRANSFER_WRITE
        )]
    );
    if upload_q.family() == app_q.family() {
        // No ownership to transfer: the buffer's dependency is a memory barrier, as in a
        // graph's own batches.
        assert!(buffer.is_empty(), "{handoff}");
        let memory: Vec<_> = (memory.iter())
            .map(|m| (m.src_access_mask, m.dst_access_mask))
            .collect();
        assert_eq!(
            memory,
            vec![(
                vk::AccessFlags2::TRANSFER_WRITE,
                vk::AccessFlags2::TRANSFER_READ
            )],
            "{handoff}"
        );
    } else {
        assert!(memory.is_empty(), "{handoff}");
        assert_eq!(buffer.len(), 1, "{handoff}");
        assert_eq!(buffer[0].buffer, c.data.handle());
        assert_eq!(buffer[0].dst_access_mask, vk::AccessFlags2::TRANSFER_READ);
        // The acquire half; the library submitted the release on the upload queue, which
        // the app's submit waits for.
        assert_eq!(
            (
                buffer[0].src_queue_family_index,
                buffer[0].dst_queue_family_index
            ),
            (upload_q.family(), app_q.family())
        );
        let release_q = handoff
            .plan()
            .queues
            .iter()
            .position(|q| q.batches.len() == 1 && q.batches[0].waits.is_empty())
            .filter(|&q| q != handoff.plan().app_batch().unwrap().queue);
        assert!(release_q.is_some(), "a release-only batch:\n{handoff}");
        let waits: Vec<_> = handoff.waits().iter().map(|w| w.semaphore).collect();
        assert_eq!(waits, vec![upload_q.timeline()], "{handoff}");
    }
    // SAFETY: `app.cmd` is recording, of the app queue's family, and goes to that queue in
    // the handoff's submit below.
    unsafe { handoff.record_barriers(app.cmd) };
    assert_eq!(handoff.layout(Access::COPY_WRITE), copied);
    app.copy_and_end(&c.data, &c.img, handoff.layout(Access::COPY_WRITE));
    // SAFETY: the command buffer holds the handoff's barriers, then the copy; the buffers
    // and the image outlive the fence, waited for below.
    unsafe { handoff.submit(&[app.cmd], app.fence) }.unwrap();
    // The submit released the queue's lock (`last_value` takes it).
    assert_eq!(app_q.last_value(), value);

    // The states the next graph starts from: the app's copy at the reserved value.
    let img = c.img.state();
    assert_eq!(img.layout(), Some(copied));
    assert_eq!(img.owner(), Some(Some(app_q.family())));
    assert_eq!(
        img.segments[0].1.write,
        Some(after_app(app_q, value, Access::COPY_WRITE))
    );
    let data = c.data.state();
    assert_eq!(
        data.segments[0].1.reads,
        vec![after_app(app_q, value, Access::COPY_READ)]
    );
    assert_eq!(data.owner(), Some(Some(app_q.family())));

    assert_eq!(download(&graph, &c, download_q), c.pattern);
    // SAFETY: the app's fence was submitted; the download graph waited after it.
    unsafe {
        ctx.device()
            .wait_for_fences(&[app.fence], true, u64::MAX)
            .unwrap()
    };
    drop(app);
    drop(graph);
    assert_clean(ctx);
}

#[test]
fn graph_then_handoff_then_graph_on_one_family() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    graph_handoff_graph(&ctx, (&q, &q, &q), LayoutPolicy::Optimal);
}

/// The same in a graph under `LayoutPolicy::General`: the handoff moves the image to
/// `GENERAL`, and the app's copy names it (validation checks the layout at the submit).
#[test]
fn a_handoff_in_general_layouts_names_its_layout() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    graph_handoff_graph(&ctx, (&q, &q, &q), LayoutPolicy::General);
}

/// Dropped without a submit: the states are as they were, the queue's lock is free, and the
/// next graph plans from the old states (its download sees the upload, not the app's copy).
#[test]
fn a_dropped_handoff_leaves_the_resources_as_they_were() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    let graph = ctx.graph().unwrap();
    let c = chain(&ctx);
    upload(&graph, &c, &q);
    let (data, img) = (c.data.state(), c.img.state());
    let before = q.last_value();
    let handoff = graph
        .hand_off("never submitted", &q, |d| {
            d.uses(&c.data, Access::COPY_READ);
            d.uses(&c.img, Access::COPY_WRITE).discard();
        })
        .unwrap();
    assert_eq!(
        c.img.state().layout(),
        Some(vk::ImageLayout::TRANSFER_DST_OPTIMAL),
        "committed while handed off"
    );
    drop(handoff);
    assert_eq!(c.data.state().segments, data.segments);
    assert_eq!(c.img.state().segments, img.segments);
    assert_eq!(c.img.state().layout(), Some(vk::ImageLayout::UNDEFINED));
    assert_eq!(q.last_value(), before + 1, "the reserved value is skipped");

    // The lock is free and the data intact: copy it into the image with a graph instead.
    copy_into_image(&graph, &c, &q);
    assert_eq!(download(&graph, &c, &q), c.pattern);
    drop(graph);
    assert_clean(&ctx);
}

/// `Handoff::record_and_submit` whose recording fails: the app's error comes back, nothing is
/// submitted, and the handoff is dropped as if never submitted (states put back, the queue's
/// lock free), so that a graph can do the work instead.
#[test]
fn a_failed_recording_in_record_and_submit_returns_its_error_and_submits_nothing() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    let graph = ctx.graph().unwrap();
    let c = chain(&ctx);
    upload(&graph, &c, &q);
    let img = c.img.state();
    let app = AppCmd::idle(&ctx, q.family());
    let handoff = graph
        .hand_off("fails", &q, |d| {
            d.uses(&c.data, Access::COPY_READ);
            d.uses(&c.img, Access::COPY_WRITE).discard();
        })
        .unwrap();
    // SAFETY: `app.cmd` is new, of `q`'s family; nothing is recorded or submitted.
    let result = unsafe {
        handoff.record_and_submit(app.cmd, app.fence, |_| {
            Err(vk_baton::Error::InvalidInput(
                "the app's recording failed".into(),
            ))
        })
    };
    assert!(
        matches!(&result, Err(vk_baton::Error::InvalidInput(why)) if why == "the app's recording failed"),
        "{result:?}"
    );
    assert_eq!(c.img.state().segments, img.segments, "states put back");
    // SAFETY: the fence was never submitted: unsignalled.
    let signalled = unsafe { ctx.device().get_fence_status(app.fence) }.unwrap();
    assert!(!signalled, "nothing was submitted with the app's fence");
    copy_into_image(&graph, &c, &q);
    assert_eq!(download(&graph, &c, &q), c.pattern);
    drop(app);
    drop(graph);
    assert_clean(&ctx);
}

/// Dropped without a submit after someone committed to a handed resource: the handoff cannot
/// put the old states back, so it submits its own barriers and signal. The image is then in
/// the layout the handoff promised (validation would catch anything else) and the queue's
/// timeline reaches the reserved value.
#[test]
fn a_dropped_handoff_that_was_observed_submits_its_barriers() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    let graph = ctx.graph().unwrap();
    let c = chain(&ctx);
    upload(&graph, &c, &q);
    let handoff = graph
        .hand_off("observed", &q, |d| {
            d.uses(&c.data, Access::COPY_READ);
            d.uses(&c.img, Access::COPY_WRITE).discard();
        })
        .unwrap();
    let value = handoff.signal_value();
    // The one-line declaration of hand-written work: what the handoff's state says anyway.
    // SAFETY: the handoff's own copy write on `q` (recorded by its drop below) is what this
    // declares, ordered before the next graph on `q`.
    unsafe { c.img.declare_access(&q, Access::COPY_WRITE) };
    drop(handoff);
    assert_eq!(
        c.img.state().layout(),
        Some(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
    );
    // The next graph transitions from TRANSFER_DST_OPTIMAL, which the dropped handoff's own
    // barrier established; then the timeline has passed the reserved value.
    copy_into_image(&graph, &c, &q);
    assert!(q.completed_value().unwrap() >= value);
    assert_eq!(download(&graph, &c, &q), c.pattern);
    drop(graph);
    assert_clean(&ctx);
}

/// `declare_access`: hand-written work declared in one line; the next graph chains from it.
#[test]
fn declare_access_states_the_app_s_work_in_the_access_vocabulary() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    let c = chain(&ctx);
    // SAFETY: a state declaration only, checked below; no graph runs from it before the
    // test's own writes make it true.
    unsafe { c.img.declare_access(&q, Access::COMPUTE_SHADER_WRITE) };
    let want = SegmentState {
        layout: vk::ImageLayout::GENERAL,
        defined: true,
        owner: Some(q.family()),
        write: Some(after_app(&q, 0, Access::COMPUTE_SHADER_WRITE)),
        reads: vec![],
        visible: vec![],
    };
    assert_eq!(c.img.state().segments, vec![(0..1, want)]);
    // SAFETY: as above.
    unsafe { c.data.declare_access(&q, Access::TRANSFER_WRITE) };
    let s = c.data.state();
    assert_eq!(s.layout(), Some(vk::ImageLayout::UNDEFINED));
    assert_eq!(
        s.segments[0].1.write,
        Some(after_app(&q, 0, Access::TRANSFER_WRITE))
    );
    assert_clean(&ctx);
}

/// The same handoff frame after frame: the first two frames plan (the image is fresh, then
/// written by the first copy); from the third on, the states differ only in timeline values,
/// and the handoff takes the plan the graph kept from the frame before. Every frame's copy is
/// checked by its texels. The app records and submits through `Handoff::record_and_submit`.
#[test]
fn a_handoff_that_comes_back_each_frame_reuses_its_plan() {
    let ctx = ctx();
    let q = ctx.graphics().clone();
    let graph = ctx.graph().unwrap();
    let c = chain(&ctx);
    upload(&graph, &c, &q);
    let mut reused = vec![];
    for _frame in 0..4 {
        let app = AppCmd::idle(&ctx, q.family());
        let handoff = graph
            .hand_off("app copy", &q, |d| {
                d.uses(&c.data, Access::COPY_READ);
                d.uses(&c.img, Access::COPY_WRITE).discard();
            })
            .unwrap();
        reused.push(handoff.reused());
        let layout = handoff.layout(Access::COPY_WRITE);
        // SAFETY: `app.cmd` is new, of `q`'s family; the copy uses the resources as declared;
        // the buffers and the image outlive the fence, which the download graph waits after.
        unsafe {
            handoff.record_and_submit(app.cmd, app.fence, |_| {
                app.copy(&c.data, &c.img, layout);
                Ok(())
            })
        }
        .unwrap();
        assert_eq!(download(&graph, &c, &q), c.pattern);
    }
    assert_eq!(reused, [false, false, true, true]);
    drop(graph);
    assert_clean(&ctx);
}
