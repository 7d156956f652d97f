//! Canaries: hazards planted on purpose, which the validation layer must report, so that "no
//! validation message" in every other test means something. One within a command buffer, one
//! across two submits to one queue, and one across two queues.
//!
//! Each report is found by content: a synchronization hazard (`SYNC-HAZARD-…` id) between two
//! writes that names the planted buffer's handle. Nothing depends on one layer version's
//! wording: 1.4.309 calls the same hazard `WRITE-AFTER-WRITE` within a queue and
//! `WRITE-RACING-WRITE` across queues. The planted passes declare nothing, so the graph orders
//! nothing between them: the hazard is real.
//!
//! Checks across submits and queues need a layer that validates at submit time (Khronos layer
//! 1.4.309 or newer; Debian 12's 1.3.239 misses both): the README says how the tests get one.

use super::*;
use vk_baton::ash::vk::Handle;
use vk_baton::{Context, Queue};

/// Fills the buffer without declaring it: a write the graph does not know about.
struct HiddenFill(Arc<StBuffer>);

impl Pass for HiddenFill {
    fn declare(&self, _d: &mut Declare<'_>) {}
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // SAFETY: a valid fill of a live buffer with TRANSFER_DST usage; the missing barrier
        // is the point.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 1)
        };
        Ok(())
    }
}

fn planted(ctx: &Context) -> Arc<StBuffer> {
    ctx.buffer(
        BufferDesc::new(256, vk::BufferUsageFlags::TRANSFER_DST),
        "planted",
    )
    .unwrap()
}

/// Whether a message id names a synchronization hazard between two writes:
/// `SYNC-HAZARD-<first>-<relation>-<second>` with both accesses `WRITE`.
fn is_write_write_hazard(id: &str) -> bool {
    let Some(kind) = id
        .replace('_', "-")
        .strip_prefix("SYNC-HAZARD-")
        .map(str::to_owned)
    else {
        return false;
    };
    let words: Vec<&str> = kind.split('-').collect();
    words.len() >= 3 && words.first() == Some(&"WRITE") && words.last() == Some(&"WRITE")
}

#[test]
fn write_write_hazards_are_told_apart_from_others() {
    for id in [
        "SYNC-HAZARD-WRITE-AFTER-WRITE",
        "SYNC-HAZARD-WRITE-RACING-WRITE",
        "SYNC-HAZARD-WRITE_AFTER_WRITE",
    ] {
        assert!(is_write_write_hazard(id), "{id}");
    }
    for id in [
        "SYNC-HAZARD-READ-AFTER-WRITE",
        "SYNC-HAZARD-WRITE-AFTER-READ",
        "VUID-x-WRITE-y-WRITE",
        "SYNC-HAZARD-WRITE",
    ] {
        assert!(!is_write_write_hazard(id), "{id}");
    }
}

/// Asserts that validation reported a hazard between two writes of `buf`.
fn assert_reported(ctx: &Context, buf: &StBuffer, where_: &str) {
    let m = ctx.validation_messages();
    let handle = buf.handle().as_raw();
    let hazard = m
        .messages
        .iter()
        .any(|x| is_write_write_hazard(&x.id) && x.names(handle));
    assert!(
        hazard,
        "the layer did not report the write-after-write hazard planted {where_} on buffer \
         {handle:#x}; is it a layer that validates at submit time (1.4.309 or newer)? {m}"
    );
}

/// Two hidden fills in one execution on one queue: one command buffer.
#[test]
fn canary_hazard_within_one_command_buffer() {
    let ctx = ctx();
    let buf = planted(&ctx);
    let graph = ctx.graph().unwrap();
    let (mut a, mut b) = (HiddenFill(buf.clone()), HiddenFill(buf.clone()));
    graph
        .record()
        .insert_pass("first", &mut a, ctx.graphics())
        .insert_pass("second", &mut b, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_reported(&ctx, &buf, "within one command buffer");
}

/// Runs one hidden fill per queue, each in an execution of its own, and waits for both only
/// after both were submitted.
fn fill_twice(ctx: &Context, buf: &Arc<StBuffer>, queues: [&Queue; 2]) {
    let graph = ctx.graph().unwrap();
    let (mut a, mut b) = (HiddenFill(buf.clone()), HiddenFill(buf.clone()));
    let first = graph
        .record()
        .insert_pass("first", &mut a, queues[0])
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let second = graph
        .record()
        .insert_pass("second", &mut b, queues[1])
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    first.wait().unwrap();
    second.wait().unwrap();
}

/// Two hidden fills in two executions on one queue: two submits.
#[test]
fn canary_hazard_across_two_submits() {
    let ctx = ctx();
    let buf = planted(&ctx);
    fill_twice(&ctx, &buf, [ctx.graphics(); 2]);
    assert_reported(&ctx, &buf, "across two submits");
}

/// Two hidden fills in two executions on two queues.
#[test]
#[ignore = "needs two queues"]
fn canary_hazard_across_two_queues() {
    let ctx = ctx();
    let (a, b) = (ctx.graphics(), ctx.transfer());
    assert!(
        a != b,
        "this device has one queue: run it where there are two"
    );
    // The queues' handles, to read the report by.
    println!("graphics {:?}, transfer {:?}", a.handle(), b.handle());
    let buf = planted(&ctx);
    fill_twice(&ctx, &buf, [a, b]);
    assert_reported(&ctx, &buf, "across two queues");
}
