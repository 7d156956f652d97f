//! The host-signal timeout ([`HOST_SIGNAL_DURING_FENCE_WAIT`]): a layer fault in its own
//! locking, not in synchronization validation.

use super::common::ctx;
use super::layer;
use super::raw::Raw;
use std::time::Duration;
use vk_baton::ash::vk;
use vk_baton_context::messages::HOST_SIGNAL_DURING_FENCE_WAIT;
use vk_baton_context::requirements::LayerVersion;

/// How many times the race is run: each run that meets the fault costs the layer's own
/// timeout (about 10 s), each other run about 0.1 s.
const RUNS: u64 = 12;

/// Layers before the semaphore-tracking rework (upstream pull 8519, first in 1.3.296) can
/// time out inside `vkWaitForFences` when another thread signals, from the host, a timeline
/// value that the fenced work waits for. The waiting thread holds the layer's lock while it
/// waits for the semaphore's state to move, and the signalling thread needs that lock to
/// move it: after its timeout the layer reports `UNASSIGNED-VkSemaphore-state-timeout`,
/// "most likely a validation bug". The pattern, on one queue Q and a timeline s:
///
/// - Q waits for `s = n`; a later batch signals `t = n` and fence F;
/// - the host waits on F; after 50 ms another thread signals `s = n` from the host.
///
/// Valid by the specification (timeline waits may be submitted before their signal, and
/// `vkSignalSemaphore` may be called from any thread). It is a race: on 1.3.239 the report
/// came in about half the runs of `gpu`'s `dropping_an_incomplete_fence_frees_nothing_early`
/// on a loaded machine, and in none of 26 runs on a quiet one, and this smaller pattern has
/// not shown it on demand. So here the allowance must cover whatever an old layer reports,
/// and from 1.4.309 on (the layers CI runs) nothing may be reported.
#[test]
fn a_host_signal_during_a_fence_wait_times_out_in_old_layers() {
    let ctx = ctx();
    let v = layer(&ctx);
    let q = ctx.graphics().clone();
    let mut raw = Raw::new(&ctx);
    let (s, t) = (raw.timeline(), raw.timeline());
    let d = ctx.device();
    for n in 1..=RUNS {
        // SAFETY: a valid create info on a live device; destroyed after its wait.
        let fence = unsafe { d.create_fence(&Default::default(), None) }.unwrap();
        let all = vk::PipelineStageFlags2::ALL_COMMANDS;
        raw.submit(&q, None, &[(s, n, all)], &[], vk::Fence::null());
        raw.submit(&q, None, &[], &[(t, n)], fence);
        std::thread::scope(|t| {
            t.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                let info = vk::SemaphoreSignalInfo::default().semaphore(s).value(n);
                // SAFETY: `s` is a live timeline at n - 1; n is above it.
                unsafe { d.signal_semaphore(&info) }.unwrap();
            });
            // SAFETY: the fence was submitted above; nothing else uses it.
            unsafe { d.wait_for_fences(&[fence], true, u64::MAX) }.unwrap();
        });
        // SAFETY: the fence signalled; nothing uses it any more.
        unsafe { d.destroy_fence(fence, None) };
    }
    raw.idle();
    let m = ctx.validation_messages();
    let a = HOST_SIGNAL_DURING_FENCE_WAIT;
    eprintln!("layer {v}: {} message(s) in {RUNS} runs: {m}", m.count);
    assert!(
        m.messages.iter().all(|x| a.covers(x, Some(v))) || m == 0,
        "layer {v}: {m}"
    );
    if v >= LayerVersion::new(1, 4, 309) {
        assert!(m == 0, "layer {v}: {m}");
    }
}
