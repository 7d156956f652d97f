//! `execute_signalling`: an execution signals the app's own fence, binary semaphore and
//! timeline semaphore; the app paces its frames on them and reads the results after its own
//! waits, under the validation layer with synchronization validation (any message fails).

mod common;

use common::{assert_clean, ctx};
use vk_baton::ash::vk;
use vk_baton::{AppSignals, BufferDesc, Error};
use vk_baton_passes::{DownloadBuffer, UploadBuffer};

/// The app's fence, binary semaphore and timeline semaphore; destroyed on drop.
struct AppSync {
    device: vk_baton::ash::Device,
    fence: vk::Fence,
    binary: vk::Semaphore,
    timeline: vk::Semaphore,
}

impl AppSync {
    fn new(device: &vk_baton::ash::Device) -> AppSync {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        // SAFETY: plain create infos on a live device.
        unsafe {
            AppSync {
                device: device.clone(),
                fence: device
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .unwrap(),
                binary: device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .unwrap(),
                timeline: device
                    .create_semaphore(
                        &vk::SemaphoreCreateInfo::default().push_next(&mut kind),
                        None,
                    )
                    .unwrap(),
            }
        }
    }
}

impl Drop for AppSync {
    fn drop(&mut self) {
        // SAFETY: the test waited for every submit that uses them.
        unsafe {
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_semaphore(self.binary, None);
            self.device.destroy_semaphore(self.timeline, None);
        }
    }
}

/// Three frames upload bytes to a buffer and copy them back, each paced by the app: it waits on
/// its own fence (and, for the timeline, on the frame's value from the host), then reads the
/// download and checks it. The binary semaphore is consumed by an app submit that waits on it.
#[test]
fn the_app_waits_on_its_own_fence_and_semaphores_then_reads_the_results() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let sync = AppSync::new(ctx.device());
    let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
    let buffer = ctx.buffer(BufferDesc::new(256, usage), "data").unwrap();
    let gfx = ctx.graphics();
    for frame in 0..3u64 {
        let bytes: Vec<u8> = (0..256).map(|i| (i as u64 * 7 + frame) as u8).collect();
        let mut up =
            UploadBuffer::new(ctx.device(), ctx.allocator(), buffer.clone(), 0, &bytes).unwrap();
        let mut down =
            DownloadBuffer::whole(ctx.device(), ctx.allocator(), buffer.clone()).unwrap();
        let result = down.handle();
        let planned = graph
            .record()
            .insert_pass("upload", &mut up, gfx)
            .insert_pass("download", &mut down, gfx)
            .finish()
            .unwrap();
        let signals = AppSignals::new()
            .fence(sync.fence)
            .binary(gfx, sync.binary)
            .timeline(gfx, sync.timeline, frame + 1);
        // SAFETY: the fence is unsignalled (reset after each frame's wait), the binary
        // semaphore has no signal pending (the app's submit below waited on the last one), the
        // timeline's value grows by one a frame; all live until the end of the test.
        let execution = unsafe { planned.execute_signalling(&signals) }.unwrap();
        // The app consumes the binary semaphore with a submit of its own (through the queue's
        // lock: queue access needs external synchronization).
        let wait = [vk::SemaphoreSubmitInfo::default()
            .semaphore(sync.binary)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let submit = vk::SubmitInfo2::default().wait_semaphore_infos(&wait);
        let lock = gfx.lock();
        // SAFETY: the queue's lock is held; the semaphore's signal was submitted above.
        unsafe {
            ctx.device()
                .queue_submit2(lock.handle(), &[submit], vk::Fence::null())
        }
        .unwrap();
        drop(lock);
        // Frame pacing on the app's own objects.
        let (semaphores, values) = ([sync.timeline], [frame + 1]);
        let wait = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        // SAFETY: live objects of this device.
        unsafe {
            ctx.device().wait_semaphores(&wait, u64::MAX).unwrap();
            ctx.device()
                .wait_for_fences(&[sync.fence], true, u64::MAX)
                .unwrap();
            ctx.device().reset_fences(&[sync.fence]).unwrap();
        }
        // The GPU is done, as the library sees too.
        assert!(execution.is_complete(), "frame {frame}");
        assert_eq!(result.read().unwrap(), bytes, "frame {frame}");
        // SAFETY: the timeline value the app waited for.
        let reached = unsafe { ctx.device().get_semaphore_counter_value(sync.timeline) }.unwrap();
        assert_eq!(reached, frame + 1);
    }
    // A held plan signals the app's fence the same way.
    let bytes = vec![0x5a; 256];
    let mut up =
        UploadBuffer::new(ctx.device(), ctx.allocator(), buffer.clone(), 0, &bytes).unwrap();
    let mut held = graph
        .record()
        .insert_pass("upload", &mut up, gfx)
        .finish()
        .unwrap()
        .hold();
    for _ in 0..2 {
        let signals = AppSignals::new().fence(sync.fence);
        // SAFETY: the fence is unsignalled (reset after each wait) and alive.
        let execution = unsafe { held.execute_signalling(&signals) }.unwrap();
        // SAFETY: a live fence whose signal was submitted.
        unsafe {
            ctx.device()
                .wait_for_fences(&[sync.fence], true, u64::MAX)
                .unwrap();
            ctx.device().reset_fences(&[sync.fence]).unwrap();
        }
        assert!(execution.is_complete());
    }
    drop(held);
    // SAFETY: the app's last submit (the binary wait) is on this queue.
    unsafe { ctx.device().queue_wait_idle(gfx.lock().handle()) }.unwrap();

    // A fence for an execution without work cannot be signalled: refused, nothing submitted.
    let signals = AppSignals::new().fence(sync.fence);
    // SAFETY: refused before anything is submitted.
    let err = unsafe {
        graph
            .record()
            .finish()
            .unwrap()
            .execute_signalling(&signals)
    };
    assert!(matches!(err, Err(Error::InvalidArgument(_))), "{err:?}");
    // Nor a timeline signal of 0 (a signal must raise the value): refused, nothing submitted.
    let bytes = vec![0x33; 256];
    let mut up =
        UploadBuffer::new(ctx.device(), ctx.allocator(), buffer.clone(), 0, &bytes).unwrap();
    let signals = AppSignals::new().timeline(gfx, sync.timeline, 0);
    // SAFETY: refused before anything is submitted.
    let err = unsafe {
        graph
            .record()
            .insert_pass("upload", &mut up, gfx)
            .finish()
            .unwrap()
            .execute_signalling(&signals)
    };
    let Err(Error::InvalidArgument(why)) = err else {
        panic!("{err:?}");
    };
    assert!(why.contains("a signal must raise the value"), "{why}");
    drop(sync);
    drop(graph);
    assert_clean(&ctx);
}

/// Work on the transfer queue, then on the graphics queue (two queues, and two families, where
/// the device has them: an ownership transfer between them): the app's fence is signalled by
/// one more submit that waits for the other queue's last timeline value, and a timeline
/// semaphore on the transfer queue when that queue's part is done.
#[test]
fn the_app_fence_covers_every_queue_of_the_execution() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let sync = AppSync::new(ctx.device());
    let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
    let buffer = ctx.buffer(BufferDesc::new(4096, usage), "data").unwrap();
    for frame in 0..3u64 {
        let bytes: Vec<u8> = (0..4096).map(|i| (i as u64 * 13 + frame) as u8).collect();
        let mut up =
            UploadBuffer::new(ctx.device(), ctx.allocator(), buffer.clone(), 0, &bytes).unwrap();
        let mut down =
            DownloadBuffer::whole(ctx.device(), ctx.allocator(), buffer.clone()).unwrap();
        let result = down.handle();
        let planned = graph
            .record()
            .insert_pass("upload", &mut up, ctx.transfer())
            .insert_pass("download", &mut down, ctx.graphics())
            .finish()
            .unwrap();
        let signals =
            AppSignals::new()
                .fence(sync.fence)
                .timeline(ctx.transfer(), sync.timeline, frame + 1);
        // SAFETY: the fence is unsignalled (reset after each wait); the timeline's value grows
        // by one a frame; both live until the end of the test.
        let execution = unsafe { planned.execute_signalling(&signals) }.unwrap();
        // SAFETY: live objects whose signals were submitted.
        unsafe {
            ctx.device()
                .wait_for_fences(&[sync.fence], true, u64::MAX)
                .unwrap();
            ctx.device().reset_fences(&[sync.fence]).unwrap();
        }
        assert!(execution.is_complete(), "frame {frame}");
        assert_eq!(result.read().unwrap(), bytes, "frame {frame}");
        // SAFETY: a live timeline semaphore.
        let reached = unsafe { ctx.device().get_semaphore_counter_value(sync.timeline) }.unwrap();
        assert_eq!(reached, frame + 1);
    }
    drop(sync);
    drop(graph);
    assert_clean(&ctx);
}
