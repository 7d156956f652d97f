//! Two known false positives of the Khronos validation layer's synchronization validation,
//! each written as the smallest valid pattern that shows it, in raw Vulkan on the context's
//! queues (no graph): so that a report of the library's plans can be told apart from a layer
//! fault, and so that these tests fail, and the allowance for the message goes, once a layer
//! version behaves differently from what is known.
//!
//! Both faults are in how the layer retires GPU work the host has seen complete: it retires
//! the work of the one queue the host waited on, and forgets that a semaphore chain through
//! another queue had ordered the accesses that follow. By the specification a host wait
//! changes nothing about the ordering of later GPU work: every access below is ordered by its
//! semaphores alone, with or without the host wait.
//!
//! Each report is found by content: a `SYNC-HAZARD-…` id whose first word is the later access
//! and last word the earlier one, naming the planted buffer's handle. What each layer version
//! must report comes from the version the layer gives (`vkEnumerateInstanceLayerProperties`),
//! never from a check not firing; a version nobody has run these on may report the hazard or
//! not, but nothing else.
//!
//! They need queues of several families (the NVIDIA machine, `../shared/device/README.md`), so
//! they are ignored by default; started on a device without them, they fail with a clear
//! message.

mod common;

use common::{ctx, CopyBuffer, HostRead};
use std::sync::Arc;
use std::time::{Duration, Instant};
use vk_baton::ash::vk::{self, Handle};
use vk_baton::{Access, BufferDesc, Declare, Pass, Queue, Recorder, StBuffer};
use vk_baton_context::{Context, ValidationMessages};

/// A layer version as `vkEnumerateInstanceLayerProperties` gives it (`VK_MAKE_API_VERSION`).
const fn version(major: u32, minor: u32, patch: u32) -> u32 {
    vk::make_api_version(0, major, minor, patch)
}

/// Debian 12's layer: it checks synchronization only within a command buffer.
const STOCK_DEBIAN_12: u32 = version(1, 3, 239);
/// The first version that checks across submits and queues that these tests have run on.
const FIRST_SUBMIT_TIME: u32 = version(1, 4, 309);
/// The first release with upstream commit f4a49b2da ("Fix fence wait for cross-queue
/// synchronization"): its tag `v1.4.340` is the first that contains it.
const FENCE_WAIT_FIXED: u32 = version(1, 4, 340);
/// The first version seen to report the timeline host-wait false positive.
const TIMELINE_WAIT_SEEN: u32 = version(1, 4, 363);

/// The Khronos validation layer's version (its `specVersion`); a test that runs without the
/// layer means nothing, so that fails.
// A local helper until the shared requirements of `vk-baton-context` can tell it.
fn layer_version(ctx: &Context) -> u32 {
    // SAFETY: the context's loader entry is alive; the call has no other precondition.
    let layers = unsafe { ctx.entry().enumerate_instance_layer_properties() }.unwrap();
    let found = layers
        .iter()
        .find(|l| l.layer_name_as_c_str() == Ok(c"VK_LAYER_KHRONOS_validation"));
    assert!(
        ctx.validation() && found.is_some(),
        "these tests need the Khronos validation layer with synchronization validation"
    );
    found.unwrap().spec_version
}

fn show(v: u32) -> String {
    let (a, b, c) = (
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v),
    );
    format!("{a}.{b}.{c}")
}

/// What a layer version reports for a pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// The false positive, and nothing else.
    Fires,
    /// Nothing.
    Silent,
    /// A version nobody has run the pattern on: the false positive or nothing, nothing else.
    Unknown,
}

/// Whether a message id names a synchronization hazard of a `later` access (`READ` or
/// `WRITE`) after an `earlier` one: `SYNC-HAZARD-<later>-<relation>-<earlier>` (1.4.309 says
/// `AFTER` within a queue and `RACING` across queues).
fn is_hazard(id: &str, later: &str, earlier: &str) -> bool {
    let Some(kind) = id
        .replace('_', "-")
        .strip_prefix("SYNC-HAZARD-")
        .map(str::to_owned)
    else {
        return false;
    };
    let words: Vec<&str> = kind.split('-').collect();
    words.len() >= 3 && words.first() == Some(&later) && words.last() == Some(&earlier)
}

/// Checks the messages against what layer version `v` is expected to report: the false
/// positive is a `later`-after-`earlier` hazard on `planted`.
fn check(
    m: &ValidationMessages,
    (v, expect): (u32, Expect),
    planted: &StBuffer,
    later: &str,
    earlier: &str,
) {
    let raw = planted.handle().as_raw();
    let is_it =
        |x: &vk_baton_context::ValidationMessage| is_hazard(&x.id, later, earlier) && x.names(raw);
    assert!(
        m.messages.iter().all(is_it),
        "layer {}: only the known {later}-after-{earlier} on `{}` may be reported: {m}",
        show(v),
        planted.name()
    );
    match expect {
        Expect::Fires => assert!(
            m.count > 0,
            "layer {} is known to report this false positive, and did not: a fixed layer? \
             Then move its version range and the allowance for the message",
            show(v)
        ),
        Expect::Silent => assert!(m == &0, "layer {}: {m}", show(v)),
        Expect::Unknown => eprintln!(
            "note: layer {} untested for this pattern; it reported {} message(s)",
            show(v),
            m.count
        ),
    }
}

/// Two distinct queues, or a clear failure where the device has only one family.
fn two_queues(ctx: &Context, a: &Queue, b: &Queue) {
    assert!(
        a.family() != b.family(),
        "this test needs queues of two families, but `{}` gives `{}` and `{}` family {}; run it on the NVIDIA machine",
        ctx.device_name(),
        a.name(),
        b.name(),
        a.family()
    );
}

/// A buffer of 256 bytes shared CONCURRENT by the two queues' families, copied to and from,
/// in host-visible memory so that the test can check its bytes.
fn shared_buffer(ctx: &Context, a: &Queue, b: &Queue, name: &str) -> Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    ctx.buffer(
        BufferDesc::readback(256, usage).concurrent(&[a.family(), b.family()]),
        name,
    )
    .unwrap()
}

/// Raw Vulkan objects of one test: timeline semaphores, one command pool per queue, and the
/// command buffers; all destroyed once every queue used is idle.
struct Raw<'a> {
    ctx: &'a Context,
    semaphores: Vec<vk::Semaphore>,
    pools: Vec<(Queue, vk::CommandPool)>,
}

impl<'a> Raw<'a> {
    fn new(ctx: &'a Context) -> Self {
        Raw {
            ctx,
            semaphores: Vec::new(),
            pools: Vec::new(),
        }
    }

    fn timeline(&mut self) -> vk::Semaphore {
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: a valid create info on a live device; destroyed in Drop.
        let s = unsafe { self.ctx.device().create_semaphore(&info, None) }.unwrap();
        self.semaphores.push(s);
        s
    }

    /// One command buffer for `queue`, recorded by `record`.
    fn commands(
        &mut self,
        queue: &Queue,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> vk::CommandBuffer {
        let d = self.ctx.device();
        let pool = match self.pools.iter().find(|(q, _)| q == queue) {
            Some(&(_, p)) => p,
            None => {
                let info = vk::CommandPoolCreateInfo::default().queue_family_index(queue.family());
                // SAFETY: a valid create info on a live device; destroyed in Drop.
                let p = unsafe { d.create_command_pool(&info, None) }.unwrap();
                self.pools.push((queue.clone(), p));
                p
            }
        };
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is alive and used from this thread only; the command buffer is
        // begun, recorded and ended before it is submitted.
        unsafe {
            let cmd = d.allocate_command_buffers(&info).unwrap()[0];
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            record(cmd);
            d.end_command_buffer(cmd).unwrap();
            cmd
        }
    }

    /// Submits `cmd` (if any) to `queue`, waiting for each `(semaphore, value, stages)` of
    /// `waits`, then signalling each `(semaphore, value)` of `signals` at ALL_COMMANDS.
    fn submit(
        &self,
        queue: &Queue,
        cmd: Option<vk::CommandBuffer>,
        waits: &[(vk::Semaphore, u64, vk::PipelineStageFlags2)],
        signals: &[(vk::Semaphore, u64)],
        fence: vk::Fence,
    ) {
        let waits: Vec<_> = waits
            .iter()
            .map(|&(s, v, stages)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .value(v)
                    .stage_mask(stages)
            })
            .collect();
        let signals: Vec<_> = signals
            .iter()
            .map(|&(s, v)| {
                vk::SemaphoreSubmitInfo::default()
                    .semaphore(s)
                    .value(v)
                    .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            })
            .collect();
        let cmds: Vec<_> = cmd
            .iter()
            .map(|&c| vk::CommandBufferSubmitInfo::default().command_buffer(c))
            .collect();
        let submit = vk::SubmitInfo2::default()
            .wait_semaphore_infos(&waits)
            .command_buffer_infos(&cmds)
            .signal_semaphore_infos(&signals);
        let lock = queue.lock();
        // SAFETY: the queue's submit lock is held; everything submitted lives until Drop,
        // which waits for the queues to be idle.
        unsafe {
            self.ctx
                .device()
                .queue_submit2(lock.handle(), &[submit], fence)
        }
        .unwrap();
    }

    /// Waits until every queue used is idle.
    fn idle(&self) {
        for (q, _) in &self.pools {
            let lock = q.lock();
            // SAFETY: the queue's submit lock is held.
            unsafe { self.ctx.device().queue_wait_idle(lock.handle()) }.unwrap();
        }
    }
}

impl Drop for Raw<'_> {
    fn drop(&mut self) {
        self.idle();
        let d = self.ctx.device();
        // SAFETY: every queue used is idle, so nothing uses the pools' command buffers or
        // the semaphores any more.
        unsafe {
            for &(_, p) in &self.pools {
                d.destroy_command_pool(p, None);
            }
            for &s in &self.semaphores {
                d.destroy_semaphore(s, None);
            }
        }
    }
}

fn copy_whole(ctx: &Context, cmd: vk::CommandBuffer, src: &StBuffer, dst: &StBuffer) {
    let region = vk::BufferCopy::default().size(src.size());
    // SAFETY: both buffers are alive, have TRANSFER usage and the same size.
    unsafe {
        ctx.device()
            .cmd_copy_buffer(cmd, src.handle(), dst.handle(), &[region])
    };
}

fn fill(ctx: &Context, cmd: vk::CommandBuffer, dst: &StBuffer, byte: u8) {
    // SAFETY: the buffer is alive and has TRANSFER_DST usage.
    unsafe {
        ctx.device()
            .cmd_update_buffer(cmd, dst.handle(), 0, &[byte; 256])
    };
}

fn bytes(b: &StBuffer) -> Vec<u8> {
    let mut out = vec![0; b.size() as usize];
    b.read(0, &mut out).unwrap();
    out
}

/// What layer version `v` reports for the fence pattern: 1.4.309 up to the fix reports it;
/// the stock 1.3.239 does not check across submits at all.
fn fence_expectation(v: u32) -> Expect {
    match v {
        STOCK_DEBIAN_12 => Expect::Silent,
        _ if (FIRST_SUBMIT_TIME..FENCE_WAIT_FIXED).contains(&v) => Expect::Fires,
        _ if v >= FENCE_WAIT_FIXED => Expect::Silent,
        _ => Expect::Unknown,
    }
}

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
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn a_fence_wait_forgets_a_semaphore_chain_through_another_queue_on_1_4_309() {
    let ctx = ctx();
    let (c, g) = (ctx.async_compute().clone(), ctx.graphics().clone());
    two_queues(&ctx, &c, &g);
    let v = layer_version(&ctx);
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
    let expect = (v, fence_expectation(v));
    check(&ctx.validation_messages(), expect, &t, "WRITE", "READ");
}

/// What layer version `v` reports for the timeline host-wait pattern: seen on 1.4.363, not on
/// 1.4.309; upstream's host wait on a timeline semaphore still retires only the signalling
/// queue's work as of 1.4.360 (a "TODO" in `SyncValidator::WaitForSemaphore`), so newer
/// versions are expected to report it until a fix lands, when this test fails and the
/// allowance goes.
fn timeline_expectation(v: u32) -> Expect {
    match v {
        STOCK_DEBIAN_12 | FIRST_SUBMIT_TIME => Expect::Silent,
        _ if v >= TIMELINE_WAIT_SEEN => Expect::Fires,
        _ => Expect::Unknown,
    }
}

/// How the host learns that the compute queue's signal happened.
#[derive(Clone, Copy, Debug)]
enum HostWait {
    /// `vkWaitSemaphores`.
    Wait,
    /// `vkGetSemaphoreCounterValue` until it shows the value.
    Poll,
    /// Not at all.
    None,
}

/// The timeline host-wait pattern, on queues X (transfer) and K (async compute) and buffers
/// `c` and `d`:
///
/// - X writes `c` (`vkCmdUpdateBuffer`), then signals `sT = 1` at ALL_COMMANDS;
/// - K waits for `sT = 1` at ALL_COMMANDS, copies `c` into `d`, signals `sK = 1`;
/// - the host waits for `sK ≥ 1` (`vkWaitSemaphores`, or reads the counter), or not at all;
/// - X waits for `sK = 1` at ALL_TRANSFER and writes `c` again.
///
/// Valid by the specification: X's first write happens before `sT`'s signal, which happens
/// before K's copy, which happens before `sK`'s signal, which happens before X's second write
/// (both writes on X are also in submission order, chained through the waits). Returns the
/// messages, and checks the data.
fn timeline_host_wait(ctx: &Context, host: HostWait) -> (ValidationMessages, Arc<StBuffer>) {
    let (x, k) = (ctx.transfer().clone(), ctx.async_compute().clone());
    two_queues(ctx, &x, &k);
    let c = shared_buffer(ctx, &x, &k, "c");
    let d = shared_buffer(ctx, &x, &k, "d");
    let mut raw = Raw::new(ctx);
    let (st, sk) = (raw.timeline(), raw.timeline());
    let write = raw.commands(&x, |cmd| fill(ctx, cmd, &c, 1));
    raw.submit(&x, Some(write), &[], &[(st, 1)], vk::Fence::null());
    let copy = raw.commands(&k, |cmd| copy_whole(ctx, cmd, &c, &d));
    let all = vk::PipelineStageFlags2::ALL_COMMANDS;
    raw.submit(
        &k,
        Some(copy),
        &[(st, 1, all)],
        &[(sk, 1)],
        vk::Fence::null(),
    );
    let device = ctx.device();
    match host {
        HostWait::Wait => {
            let info = vk::SemaphoreWaitInfo::default()
                .semaphores(std::slice::from_ref(&sk))
                .values(&[1]);
            // SAFETY: a live timeline semaphore that a submitted batch signals.
            unsafe { device.wait_semaphores(&info, u64::MAX) }.unwrap();
        }
        HostWait::Poll => {
            let start = Instant::now();
            // SAFETY: a live timeline semaphore.
            while unsafe { device.get_semaphore_counter_value(sk) }.unwrap() < 1 {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "sK never reached 1"
                );
                std::thread::yield_now();
            }
        }
        HostWait::None => {}
    }
    let rewrite = raw.commands(&x, |cmd| fill(ctx, cmd, &c, 2));
    let transfer = vk::PipelineStageFlags2::ALL_TRANSFER;
    raw.submit(
        &x,
        Some(rewrite),
        &[(sk, 1, transfer)],
        &[],
        vk::Fence::null(),
    );
    raw.idle();
    drop(raw);
    assert_eq!(bytes(&d), [1; 256], "K's copy saw the first write of c");
    assert_eq!(bytes(&c), [2; 256], "the second write of c came last");
    (ctx.validation_messages(), c)
}

/// Layer 1.4.363's own false positive: a host wait on a timeline semaphore retires the
/// signalling queue's work alone, and a write that the semaphore chain ordered then shows as
/// unordered: WRITE-AFTER-WRITE on X's second write. No upstream fix is known.
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn a_timeline_host_wait_forgets_a_semaphore_chain_on_1_4_363() {
    let ctx = ctx();
    let v = layer_version(&ctx);
    let (m, c) = timeline_host_wait(&ctx, HostWait::Wait);
    check(&m, (v, timeline_expectation(v)), &c, "WRITE", "WRITE");
}

/// The same with only `vkGetSemaphoreCounterValue`: the layer treats a counter read that
/// shows the value as a host wait for it.
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn a_timeline_counter_read_forgets_a_semaphore_chain_on_1_4_363() {
    let ctx = ctx();
    let v = layer_version(&ctx);
    let (m, c) = timeline_host_wait(&ctx, HostWait::Poll);
    check(&m, (v, timeline_expectation(v)), &c, "WRITE", "WRITE");
}

/// Without the host wait every layer version is silent: the semaphores alone order the
/// pattern, and the layer sees that.
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn without_the_host_wait_the_timeline_pattern_is_silent() {
    let ctx = ctx();
    let v = layer_version(&ctx);
    let (m, c) = timeline_host_wait(&ctx, HostWait::None);
    check(&m, (v, Expect::Silent), &c, "WRITE", "WRITE");
}

/// Overwrites a whole buffer with one byte value.
struct Overwrite(Arc<StBuffer>, u8);

impl Pass for Overwrite {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let data = vec![self.1; self.0.size() as usize];
        // SAFETY: the buffer is alive, in the declared state, and at most 64 KiB.
        unsafe {
            r.device()
                .cmd_update_buffer(r.cmd(), self.0.handle(), 0, &data)
        };
        Ok(())
    }
}

/// The library's own frames in the timeline pattern's shape: transfer writes `c`, async
/// compute copies it into `d`, the host reads `d` after the fence, and the next frame writes
/// `c` again on transfer. `StBuffer::read` knows from the fence that the copy is complete and
/// asks no timeline (`vkGetSemaphoreCounterValue`), so layer 1.4.363 has no host wait on a
/// timeline to misread, and no version reports anything.
#[test]
#[ignore = "needs queues of several families (NVIDIA)"]
fn a_host_read_after_the_fence_asks_no_timeline() {
    let ctx = ctx();
    let v = layer_version(&ctx);
    let (x, k) = (ctx.transfer().clone(), ctx.async_compute().clone());
    two_queues(&ctx, &x, &k);
    let c = shared_buffer(&ctx, &x, &k, "c");
    let d = shared_buffer(&ctx, &x, &k, "d");
    let graph = ctx.graph().unwrap();
    let (mut write, mut copy) = (
        Overwrite(c.clone(), 1),
        CopyBuffer {
            src: c.clone(),
            dst: d.clone(),
        },
    );
    let mut host = HostRead(d.clone());
    let fence = graph
        .record()
        .insert_pass("write c", &mut write, &x)
        .insert_pass("copy c to d", &mut copy, &k)
        .insert_pass("host read", &mut host, &k)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    assert_eq!(bytes(&d), [1; 256]);
    let mut rewrite = Overwrite(c.clone(), 2);
    let mut host = HostRead(c.clone());
    let fence = graph
        .record()
        .insert_pass("rewrite c", &mut rewrite, &x)
        .insert_pass("host read", &mut host, &x)
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    fence.wait().unwrap();
    assert_eq!(bytes(&c), [2; 256]);
    check(
        &ctx.validation_messages(),
        (v, Expect::Silent),
        &c,
        "WRITE",
        "WRITE",
    );
}

#[test]
fn hazard_ids_are_told_apart_by_their_two_accesses() {
    assert!(is_hazard("SYNC-HAZARD-WRITE-AFTER-READ", "WRITE", "READ"));
    assert!(is_hazard("SYNC-HAZARD-WRITE-RACING-READ", "WRITE", "READ"));
    assert!(is_hazard("SYNC-HAZARD-WRITE_AFTER_WRITE", "WRITE", "WRITE"));
    assert!(!is_hazard("SYNC-HAZARD-WRITE-AFTER-WRITE", "WRITE", "READ"));
    assert!(!is_hazard(
        "VUID-vkCmdCopyBuffer-srcBuffer-00118",
        "WRITE",
        "READ"
    ));
}

#[test]
fn known_layer_versions_have_their_expectations() {
    assert_eq!(fence_expectation(version(1, 3, 239)), Expect::Silent);
    assert_eq!(fence_expectation(version(1, 4, 309)), Expect::Fires);
    assert_eq!(fence_expectation(version(1, 4, 339)), Expect::Fires);
    assert_eq!(fence_expectation(version(1, 4, 340)), Expect::Silent);
    assert_eq!(fence_expectation(version(1, 4, 363)), Expect::Silent);
    assert_eq!(fence_expectation(version(1, 3, 290)), Expect::Unknown);
    assert_eq!(timeline_expectation(version(1, 4, 309)), Expect::Silent);
    assert_eq!(timeline_expectation(version(1, 4, 330)), Expect::Unknown);
    assert_eq!(timeline_expectation(version(1, 4, 363)), Expect::Fires);
    assert_eq!(show(version(1, 4, 363)), "1.4.363");
}
