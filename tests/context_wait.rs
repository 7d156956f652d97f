//! `Context::device_wait_idle`: all submitted work is done when it returns, and it holds
//! every queue's submit lock while it waits, as `vkDeviceWaitIdle` requires.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc};
use vk_baton_context::Context;

fn ctx() -> Context {
    let _ = env_logger::builder().is_test(true).try_init();
    Context::new_for_tests().expect("a Vulkan 1.3 device and the validation layer")
}

/// A frame's work is complete once `device_wait_idle` returns, with no validation message.
#[test]
fn device_wait_idle_returns_once_submitted_work_is_done() {
    let ctx = ctx();
    let usage = vk::BufferUsageFlags::TRANSFER_DST;
    let buf = ctx
        .buffer(BufferDesc::new(1 << 20, usage), "filled")
        .unwrap();
    let graph = ctx.graph().unwrap();
    let fences: Vec<_> = (0..3u32)
        .map(|i| {
            let buf = &buf;
            let planned = graph.record().insert_fn(
                "fill",
                ctx.graphics(),
                move |d| {
                    d.uses(buf, Access::TRANSFER_WRITE).discard();
                },
                move |r| {
                    // SAFETY: the buffer is alive and in the declared state.
                    unsafe {
                        r.device()
                            .cmd_fill_buffer(r.cmd(), buf.handle(), 0, vk::WHOLE_SIZE, i)
                    };
                    Ok(())
                },
            );
            planned.finish().unwrap().execute().unwrap()
        })
        .collect();
    ctx.device_wait_idle().unwrap();
    assert!(fences.iter().all(|f| f.is_complete()));
    drop(fences);
    drop(graph);
    let m = ctx.validation_messages();
    assert!(m == 0, "{m}");
}

/// While another thread holds a queue's submit lock, `device_wait_idle` waits for it: it
/// returns only after that thread let go.
#[test]
fn device_wait_idle_takes_every_queue_lock() {
    let ctx = Arc::new(ctx());
    for q in ctx.queues().iter().chain(ctx.graphics_queues()) {
        let released = Arc::new(AtomicBool::new(false));
        let (locked, was_locked) = mpsc::channel();
        let holder = {
            let (ctx, q, released) = (ctx.clone(), q.clone(), released.clone());
            std::thread::spawn(move || {
                let lock = q.lock();
                locked.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(100));
                released.store(true, Ordering::SeqCst);
                drop(lock);
                drop(ctx);
            })
        };
        was_locked.recv().unwrap();
        ctx.device_wait_idle().unwrap();
        assert!(
            released.load(Ordering::SeqCst),
            "`{}`: device_wait_idle returned while another thread held its lock",
            q.name()
        );
        holder.join().unwrap();
    }
}
