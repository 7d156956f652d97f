//! Shared helpers for the GPU tests of the stock passes.
#![allow(dead_code)]

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, ImageDesc, StBuffer, StImage};
use vk_baton_context::Context;
// For the tests that allow a message or skip without something; not every binary does.
#[allow(unused_imports)]
pub use vk_baton_context::{
    messages::{
        COPY_IN_GENERAL_LAYOUT, FENCE_WAIT_FORGETS_OTHER_QUEUES, TIMELINE_WAIT_FORGETS_OTHER_QUEUES,
    },
    requirements::Need,
};

/// A context with validation and synchronization validation on. A missing device or layer
/// fails the test: GPU tests never skip.
pub fn ctx() -> Context {
    let _ = env_logger::builder().is_test(true).try_init();
    let ctx = Context::new_for_tests().expect(
        "GPU tests need a Vulkan 1.3 device and the validation layer (install mesa-vulkan-drivers and vulkan-validationlayers)",
    );
    assert!(ctx.validation(), "validation must be on");
    ctx
}

/// Asserts that validation reported nothing but the messages the test allowed
/// ([`Context::allow_message`]).
///
/// A multi-family test whose frames meet one of the validation layer's two known false
/// positives allows it by name, in one line, before it checks:
/// `ctx.allow_message(FENCE_WAIT_FORGETS_OTHER_QUEUES)` (a host fence wait, then work that a
/// semaphore chain through another queue orders) or
/// `ctx.allow_message(TIMELINE_WAIT_FORGETS_OTHER_QUEUES)` (a host wait or counter read on a
/// timeline, the same). Each covers its message only on the layer versions known to report it
/// (see `docs/testing.md`), so on any other layer the test still fails on that message. No
/// test allows them unless it says so: a message nobody expected still fails every test.
pub fn assert_clean(ctx: &Context) {
    let m = ctx.unexpected_messages();
    assert!(m == 0, "{m}");
}

/// Deterministic pseudo-random bytes (xorshift64*).
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

pub const XFER: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw() | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

pub const IXFER: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::TRANSFER_SRC.as_raw() | vk::ImageUsageFlags::TRANSFER_DST.as_raw(),
);

/// A device-local buffer usable as a transfer source and destination.
pub fn buffer(ctx: &Context, size: u64, name: &str) -> Arc<StBuffer> {
    ctx.buffer(BufferDesc::new(size, XFER), name)
        .expect("buffer")
}

/// A 2D image usable as transfer source and destination (and sampled).
pub fn image(
    ctx: &Context,
    w: u32,
    h: u32,
    format: vk::Format,
    mips: u32,
    layers: u32,
    name: &str,
) -> Arc<StImage> {
    ctx.image(
        ImageDesc::new_2d(w, h, format, IXFER | vk::ImageUsageFlags::SAMPLED)
            .mips(mips)
            .layers(layers),
        name,
    )
    .expect("image")
}

/// Runs passes in order on one queue and waits.
pub fn run(ctx: &Context, q: &vk_baton::Queue, passes: &mut [(&str, &mut dyn vk_baton::Pass)]) {
    let graph = ctx.graph().expect("graph");
    let mut b = graph.record();
    for (name, p) in passes.iter_mut() {
        b = b.insert_pass(*name, &mut **p, q);
    }
    b.finish()
        .expect("plan")
        .execute()
        .expect("execute")
        .wait()
        .expect("wait");
}

/// Every image barrier's (old, new) layouts.
pub fn image_layouts(plan: &vk_baton::plan::Plan) -> Vec<(vk::ImageLayout, vk::ImageLayout)> {
    let layouts = plan.image_barriers().map(|i| (i.old_layout, i.new_layout));
    layouts.collect()
}

/// Whether an image barrier with these layouts moves the image to another layout than
/// `GENERAL`, or from another than `UNDEFINED` or `GENERAL`: what `LayoutPolicy::General`
/// leaves out.
pub fn leaves_general((old, new): (vk::ImageLayout, vk::ImageLayout)) -> bool {
    use vk::ImageLayout as L;
    new != L::GENERAL || !matches!(old, L::UNDEFINED | L::GENERAL)
}
