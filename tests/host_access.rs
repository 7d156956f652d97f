//! Host reads and writes of mapped buffers are refused while GPU work on the bytes may still
//! run, and allowed once it is complete. Runs on lavapipe with validation.
//!
//! The graph is held back by the app's own submit just before it on the same queue, which
//! waits on a timeline semaphore that the host signals later: queues start their batches in
//! submission order. That gate is the point here (the refusals need work certainly in flight),
//! so the test meets the layer quirk `common/gate.rs` describes; after the fence it only
//! accesses the buffers from the host, which the layer does not check.

mod common;

use common::*;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, Error};

#[test]
fn host_access_waits_for_the_gpu() {
    let ctx = ctx();
    let device = ctx.device();
    let data: Vec<u8> = (0..256u32).map(|i| (i * 7) as u8).collect();
    let upload = ctx
        .buffer(
            BufferDesc::upload(256, vk::BufferUsageFlags::TRANSFER_SRC),
            "upload",
        )
        .unwrap();
    let readback = ctx
        .buffer(
            BufferDesc::readback(256, vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    upload.write(0, &data).unwrap();

    // The app's gate: a submit that waits for the host to signal a timeline semaphore.
    let mut timeline_type = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(0);
    let info = vk::SemaphoreCreateInfo::default().push_next(&mut timeline_type);
    // SAFETY: a valid create info on a live device; destroyed at the end, once the queue is
    // idle.
    let gate = unsafe { device.create_semaphore(&info, None) }.unwrap();
    let wait = [vk::SemaphoreSubmitInfo::default()
        .semaphore(gate)
        .value(1)
        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
    let submit = vk::SubmitInfo2::default().wait_semaphore_infos(&wait);
    {
        let lock = ctx.graphics().lock();
        // SAFETY: the queue's lock is held; the semaphore lives until the queue is idle.
        unsafe { device.queue_submit2(lock.handle(), &[submit], vk::Fence::null()) }.unwrap();
    }

    let mut copy = CopyBuffer {
        src: upload.clone(),
        dst: readback.clone(),
    };
    let graph = ctx.graph().unwrap();
    let fence = graph
        .record()
        .insert_pass("copy", &mut copy, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();

    // The copy cannot have run: the host has not opened the gate.
    let mut out = vec![0u8; 256];
    let refused = readback.read(0, &mut out);
    assert!(
        matches!(&refused, Err(Error::InUseByGpu { resource }) if resource == "readback"),
        "{refused:?}"
    );
    let refused = upload.write(0, &[0; 4]);
    assert!(
        matches!(&refused, Err(Error::InUseByGpu { resource }) if resource == "upload"),
        "{refused:?}"
    );
    // The GPU only reads `upload`: the host may read it meanwhile.
    let mut first = [0u8; 4];
    upload.read(0, &mut first).unwrap();
    assert_eq!(first, data[..4]);
    assert!(!fence.is_complete());

    // SAFETY: a live timeline semaphore; 1 is above its value.
    unsafe {
        device.signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(gate).value(1))
    }
    .unwrap();
    fence.wait().unwrap();
    readback.read(0, &mut out).unwrap();
    assert_eq!(out, data);
    upload.write(0, &[0; 4]).unwrap();

    {
        let lock = ctx.graphics().lock();
        // SAFETY: the queue's lock is held; once it is idle nothing uses the semaphore.
        unsafe {
            device.queue_wait_idle(lock.handle()).unwrap();
            device.destroy_semaphore(gate, None);
        }
    }
    assert_clean(&ctx);
}
