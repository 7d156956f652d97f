//! The fence-wait false positive ([`FENCE_WAIT_FORGETS_OTHER_QUEUES`]).

use super::common::ctx;
use super::raw::{copy_whole, fill, Raw};
use super::{bytes, check, expectation, layer, shared_buffer, two_queues, STOCK_DEBIAN_12};
use vk_baton::ash::vk;
use vk_baton_context::messages::FENCE_WAIT_FORGETS_OTHER_QUEUES;

/// Layers 1.4.309 up to 1.4.339 retire only the fenced queue's work when the host waits on a
/// fence, so a semaphore chain through another queue is forgotten (fixed upstream by commit
/// f4a49b2da, "Fix fence wait for cross-queue synchronization", first in tag v1.4.340, whose
/// layer reports version 1.4.340). The pattern, on queues C (async compute) and G (graphics)
/// and a buffer T:
///
/// - C copies from T, then signals `s = 1`;
/// - G waits for `s = 1`, writes T, and is fenced;
/// - the host waits on that fence;
/// - G signals `s = 2`; C waits for it and writes T.
///
/// Valid by the specification: C's read happens before its signal of 1, which happens before
/// G's wait and so before everything G does after it, its signal of 2 included, which happens
/// before C's wait and write. Submission order alone would not order C's read before C's
/// write (no barrier lies between them); the semaphore chain does. The layers with the fault
/// report WRITE-AFTER-READ on C's write: the fence wait retired G's work alone, and the chain
/// through G that ordered C's read is forgotten.
///
/// On the versions the allowance names, the report must come, and the allowance must cover
/// it; on 1.3.239 (no submit-time checks) and from 1.4.340 on, nothing may be reported.
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn a_fence_wait_forgets_a_semaphore_chain_through_another_queue_on_1_4_309() {
    let ctx = ctx();
    let (c, g) = (ctx.async_compute().clone(), ctx.graphics().clone());
    two_queues(&ctx, &c, &g);
    let v = layer(&ctx);
    let t = shared_buffer(&ctx, &c, &g, "T");
    let out = shared_buffer(&ctx, &c, &g, "copy of T");
    t.write(0, &[1; 256]).unwrap();
    let mut raw = Raw::new(&ctx);
    let s = raw.timeline();
    let all = vk::PipelineStageFlags2::ALL_COMMANDS;

    let read = raw.commands(&c, |cmd| copy_whole(&ctx, cmd, &t, &out));
    raw.submit(&c, Some(read), &[], &[(s, 1)], vk::Fence::null());
    let write = raw.commands(&g, |cmd| fill(&ctx, cmd, &t, 2));
    // SAFETY: a valid create info on a live device; destroyed below after its wait.
    let fence = unsafe { ctx.device().create_fence(&Default::default(), None) }.unwrap();
    raw.submit(&g, Some(write), &[(s, 1, all)], &[], fence);
    // SAFETY: the fence was submitted above; nothing else uses it.
    unsafe {
        ctx.device()
            .wait_for_fences(&[fence], true, u64::MAX)
            .unwrap();
        ctx.device().destroy_fence(fence, None);
    }
    raw.submit(&g, None, &[], &[(s, 2)], vk::Fence::null());
    let rewrite = raw.commands(&c, |cmd| fill(&ctx, cmd, &t, 3));
    raw.submit(&c, Some(rewrite), &[(s, 2, all)], &[], vk::Fence::null());
    raw.idle();

    assert_eq!(bytes(&out), [1; 256], "C's copy saw T before G's write");
    assert_eq!(bytes(&t), [3; 256], "C's write came last");
    let allowance = FENCE_WAIT_FORGETS_OTHER_QUEUES;
    let expect = expectation(&allowance, v, &[STOCK_DEBIAN_12]);
    check(&ctx.validation_messages(), (v, expect), &allowance, &t);
}
