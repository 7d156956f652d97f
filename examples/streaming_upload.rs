//! Streaming upload: a sequence of large buffers goes through the transfer queue into
//! device-local memory while a compute shader on the async compute queue checksums the
//! previous one, so every byte is really used and checked.
//!
//! Each buffer is one small graph: `upload` (a `vkCmdCopyBuffer` from a host-visible staging
//! buffer, on `ctx.transfer()`) then `verify` (`checksum.comp`, on `ctx.async_compute()`). Three
//! device buffers rotate and three graphs are in flight (`--in-flight`), so upload N+1
//! overlaps verify N. vk-baton works out the rest: upload N+3 waits for verify N's read of
//! the buffer it overwrites (no ownership transfer: the upload discards the old contents),
//! and verify N waits for upload N, with a release/acquire pair when transfer and compute
//! are different families.
//!
//! In the same run it measures a plain hand-written staging copy (raw ash: its own command
//! pool, command buffers, barrier, `vkQueueSubmit2` under the queue's lock, and fences; copies
//! only) and the graph doing the uploads alone, and prints all three throughputs and ratios.
//!
//! ```text
//! cargo run --release --example streaming_upload                      # 64 x 16 MiB
//! VK_BATON_VALIDATION=1 cargo run --example streaming_upload -- --count 6 --mib 1
//! ```
//!
//! Exits non-zero on any validation message or a checksum mismatch.

use std::sync::Arc;
use std::time::Instant;
use support::{push_u32s, report_validation, vkerr, InFlight, ValueExt};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, BufferRange, Context, Declare, Pass, Recorder, StBuffer};
use vk_baton_passes::{ComputeDispatch, ShaderAccess};

const USAGE: &str = "usage: streaming_upload [--count BUFFERS] [--mib MIB] [--in-flight N] [--groups N] [--sync-only] [--concurrent]";

/// Default graphs (or hand-written submits) in flight, and device buffers in the ring
/// (`--in-flight`). Three give the transfer queue a buffer to fill while the compute queue
/// still checks the one before, without waiting on a semaphore round trip.
const IN_FLIGHT: usize = 3;
/// Distinct pre-filled staging buffers the stream cycles through.
const STAGING: usize = 4;
/// Default workgroups of the checksum dispatch (each writes one partial sum; `--groups`).
const GROUPS: u32 = 256;

/// Word `j` of staging buffer `k`.
fn pattern(k: u32, j: u32) -> u32 {
    j.wrapping_mul(2_654_435_761) ^ k.wrapping_mul(0x0100_0193).wrapping_add(0x1234_5678)
}

/// The host's copy of `checksum.comp`, summed over every workgroup.
fn checksum(words: impl Iterator<Item = u32>) -> u32 {
    words.enumerate().fold(0u32, |s, (j, w)| {
        s.wrapping_add(w ^ (j as u32).wrapping_mul(0x9E37_79B9))
    })
}

/// The upload: copies all of `src` into `dst`, whose old contents it discards.
struct Upload {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
}

impl Pass for Upload {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default().size(self.src.size());
        // SAFETY: both buffers are in the declared transfer states and of equal size.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
}

/// The consumer: `checksum.comp` checksums `data` into `groups` partial sums at word `first`
/// of `partials`. The dispatch is a stock `ComputeDispatch` bound to `data` and to the whole
/// partial-sums buffer; this pass records it but declares the partial sums more narrowly than
/// the binding: only this buffer's slots, all overwritten (what `first` in the push constants
/// tells the shader), so earlier buffers' slots are untouched and their verifies need not be
/// ordered before this one.
struct Verify<'a> {
    dispatch: &'a mut ComputeDispatch,
    data: Arc<StBuffer>,
    partials: Arc<StBuffer>,
    first: u32,
    groups: u32,
}

impl Pass for Verify<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.data, Access::COMPUTE_SHADER_READ);
        d.uses(&self.partials, Access::COMPUTE_SHADER_WRITE)
            .range(BufferRange {
                offset: self.first as u64 * 4,
                size: self.groups as u64 * 4,
            })
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.dispatch.record(r)
    }
}

/// Makes a mapped buffer's GPU writes visible to the host once the fence signals.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }

    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
}

/// The baseline: the staging copy an app would write by hand with raw ash.
struct HandWritten {
    device: vk_baton::ash::Device,
    pool: vk::CommandPool,
    cmds: Vec<vk::CommandBuffer>,
    fences: Vec<vk::Fence>,
}

impl HandWritten {
    fn new(ctx: &Context, in_flight: usize) -> vk_baton::Result<HandWritten> {
        let d = ctx.device();
        // SAFETY: valid create infos on a live device; destroyed in `Drop` after the fences
        // have been waited for.
        unsafe {
            let pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(ctx.transfer().family())
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vkerr("vkCreateCommandPool"))?;
            let cmds = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(in_flight as u32),
                )
                .map_err(vkerr("vkAllocateCommandBuffers"))?;
            let mut fences = Vec::new();
            for _ in 0..in_flight {
                fences.push(
                    d.create_fence(
                        &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                        None,
                    )
                    .map_err(vkerr("vkCreateFence"))?,
                );
            }
            Ok(HandWritten {
                device: d.clone(),
                pool,
                cmds,
                fences,
            })
        }
    }

    /// Copies `src` into `dst` in slot `slot`: wait for the slot's last submit, record a
    /// barrier (the previous copy into `dst` happens-before this one) and the copy, submit.
    fn copy(
        &self,
        ctx: &Context,
        slot: usize,
        src: &StBuffer,
        dst: &StBuffer,
    ) -> vk_baton::Result<()> {
        let d = &self.device;
        let (cmd, fence) = (self.cmds[slot], self.fences[slot]);
        let barrier = [vk::BufferMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COPY)
            .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::COPY)
            .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(dst.handle())
            .offset(0)
            .size(vk::WHOLE_SIZE)];
        // SAFETY: the fence wait makes the slot's command buffer idle before it is reset and
        // re-recorded; the buffers are live; the submit happens under the queue's lock.
        unsafe {
            d.wait_for_fences(&[fence], true, u64::MAX)
                .map_err(vkerr("vkWaitForFences"))?;
            d.reset_fences(&[fence]).map_err(vkerr("vkResetFences"))?;
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vkerr("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vkerr("vkBeginCommandBuffer"))?;
            d.cmd_pipeline_barrier2(
                cmd,
                &vk::DependencyInfo::default().buffer_memory_barriers(&barrier),
            );
            d.cmd_copy_buffer(
                cmd,
                src.handle(),
                dst.handle(),
                &[vk::BufferCopy::default().size(src.size())],
            );
            d.end_command_buffer(cmd)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let cmd_info = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            let submit = vk::SubmitInfo2::default().command_buffer_infos(&cmd_info);
            let lock = ctx.transfer().lock();
            d.queue_submit2(lock.handle(), &[submit], fence)
                .map_err(vkerr("vkQueueSubmit2"))?;
        }
        Ok(())
    }

    fn wait_all(&self) -> vk_baton::Result<()> {
        // SAFETY: the fences are live; every one was submitted or created signalled.
        unsafe { self.device.wait_for_fences(&self.fences, true, u64::MAX) }
            .map_err(vkerr("vkWaitForFences"))
    }
}

impl Drop for HandWritten {
    fn drop(&mut self) {
        // SAFETY: waiting first makes every command buffer idle; then nothing uses them.
        unsafe {
            let _ = self.device.wait_for_fences(&self.fences, true, u64::MAX);
            for &f in &self.fences {
                self.device.destroy_fence(f, None);
            }
            self.device.destroy_command_pool(self.pool, None);
        }
    }
}

fn gib_per_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / (1u64 << 30) as f64
}

fn run() -> vk_baton::Result<bool> {
    let (mut count, mut mib, mut in_flight_max, mut groups) = (64u32, 16u64, IN_FLIGHT, GROUPS);
    // `--sync-only`: the verify pass keeps its declarations (so every barrier, ownership
    // transfer and semaphore stays) but launches no workgroup; isolates the cost of the sync.
    // `--concurrent`: the ring buffers are CONCURRENT between the two families.
    let (mut sync_only, mut concurrent) = (false, false);
    support::parse_args(USAGE, |name, p| {
        match name {
            "count" => count = p.value()?.parse()?,
            "mib" => mib = p.value()?.parse()?,
            "in-flight" => in_flight_max = p.value()?.parse()?,
            "groups" => groups = p.value()?.parse()?,
            "sync-only" => sync_only = true,
            "concurrent" => concurrent = true,
            _ => return Ok(false),
        }
        Ok(true)
    });
    let ctx = Context::new()?;
    if count == 0 || mib == 0 {
        return Err(vk_baton::Error::InvalidInput(
            "--count and --mib must be at least 1".into(),
        ));
    }
    let size = mib << 20;
    let words = (size / 4) as u32;
    let total = size * count as u64;
    let in_flight_max = in_flight_max.max(1);
    let groups = groups.max(1);

    println!("device: {}", ctx.device_name());
    println!(
        "queues: transfer = family {}, compute = family {}{}",
        ctx.transfer().family(),
        ctx.async_compute().family(),
        if ctx.transfer() == ctx.async_compute() {
            " (one VkQueue: single-queue device, upload and verify run one after the other)"
        } else {
            ""
        }
    );
    println!(
        "stream: {count} buffers x {mib} MiB = {:.2} GiB, {in_flight_max} in flight, {STAGING} pre-filled staging buffers",
        total as f64 / (1u64 << 30) as f64
    );

    // Pre-filled staging buffers (host-visible) and their expected checksums.
    let mut staging = Vec::new();
    let mut expected = Vec::new();
    for k in 0..STAGING.min(count as usize) as u32 {
        let b = ctx.buffer(
            BufferDesc::upload(size, vk::BufferUsageFlags::TRANSFER_SRC),
            &format!("staging {k}"),
        )?;
        let data: Vec<u8> = (0..words)
            .flat_map(|j| pattern(k, j).to_le_bytes())
            .collect();
        b.write(0, &data)?;
        staging.push(b);
        expected.push(checksum((0..words).map(|j| pattern(k, j))));
    }
    let dst_usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
    let mut dst_desc = BufferDesc::new(size, dst_usage);
    if concurrent {
        // CONCURRENT between the two families: semaphores only, no release/acquire pairs.
        dst_desc = dst_desc.concurrent(&[ctx.transfer().family(), ctx.async_compute().family()]);
    }
    let device_bufs: Vec<Arc<StBuffer>> = (0..in_flight_max)
        .map(|i| ctx.buffer(dst_desc.clone(), &format!("device {i}")))
        .collect::<vk_baton::Result<_>>()?;
    let partials = ctx.buffer(
        BufferDesc::readback(
            count as u64 * groups as u64 * 4,
            vk::BufferUsageFlags::STORAGE_BUFFER,
        ),
        "partial sums",
    )?;
    // One checksum dispatch per ring buffer, each bound to the whole partial-sums buffer
    // (`Verify` declares the slots it writes).
    let code = support::spirv(vk_baton_shaders::CHECKSUM_COMP)?;
    let mut verifies: Vec<ComputeDispatch> = device_bufs
        .iter()
        .map(|b| {
            // SAFETY: the sample's own shader (compiled from shaders/), with exactly the bindings
            // and push constants declared below.
            unsafe { ComputeDispatch::builder(ctx.device(), &code) }
                .name("checksum")
                .storage_buffer(0, b.clone(), ShaderAccess::Read)
                .storage_buffer(1, partials.clone(), ShaderAccess::Write)
                .push_constant_size(8)
                .groups(if sync_only { 0 } else { groups }, 1, 1)
                .build()
        })
        .collect::<Result<_, _>>()?;

    // 1. The hand-written baseline, into buffers of its own (the graph never sees them).
    let hand = HandWritten::new(&ctx, in_flight_max)?;
    let hand_dst: Vec<Arc<StBuffer>> = (0..in_flight_max)
        .map(|i| {
            ctx.buffer(
                BufferDesc::new(size, vk::BufferUsageFlags::TRANSFER_DST),
                &format!("hand-written {i}"),
            )
        })
        .collect::<vk_baton::Result<_>>()?;
    hand.copy(&ctx, 0, &staging[0], &hand_dst[0])?; // warm-up
    hand.wait_all()?;
    let t = Instant::now();
    for i in 0..count as usize {
        let slot = i % in_flight_max;
        hand.copy(&ctx, slot, &staging[i % staging.len()], &hand_dst[slot])?;
    }
    hand.wait_all()?;
    let hand_s = t.elapsed().as_secs_f64();

    let graph = ctx.graph()?;
    // 2. The graph, uploads only (like for like with the baseline).
    let upload_only = |i: usize| -> vk_baton::Result<vk_baton::ExecutionFence> {
        let mut up = Upload {
            src: staging[i % staging.len()].clone(),
            dst: device_bufs[i % in_flight_max].clone(),
        };
        // Bound to a local: the planned graph (which may own closure passes) must be dropped
        // before `up`, which a tail expression's temporary would outlive.
        let fence = graph
            .record()
            .insert_pass("upload", &mut up, ctx.transfer())
            .finish()?
            .execute();
        fence
    };
    upload_only(0)?.wait()?; // warm-up
    let mut in_flight = InFlight::new();
    let t = Instant::now();
    for i in 0..count as usize {
        if in_flight.0.len() >= in_flight_max {
            let ((), f) = in_flight.0.pop_front().expect("non-empty");
            f.wait()?;
        }
        in_flight.0.push_back(((), upload_only(i)?));
    }
    for ((), f) in in_flight.0.drain(..) {
        f.wait()?;
    }
    let upload_s = t.elapsed().as_secs_f64();

    // 3. The sample proper: upload on the transfer queue, verify on the compute queue.
    let mut plan_text = String::new();
    let t = Instant::now();
    for i in 0..count as usize {
        if in_flight.0.len() >= in_flight_max {
            let ((), f) = in_flight.0.pop_front().expect("non-empty");
            f.wait()?;
        }
        let mut up = Upload {
            src: staging[i % staging.len()].clone(),
            dst: device_bufs[i % in_flight_max].clone(),
        };
        let first = i as u32 * groups;
        let dispatch = &mut verifies[i % in_flight_max];
        dispatch.set_push_constants(&push_u32s(&[words, first]))?;
        let mut verify = Verify {
            dispatch,
            data: device_bufs[i % in_flight_max].clone(),
            partials: partials.clone(),
            first,
            groups,
        };
        let planned = graph
            .record()
            .insert_pass("upload", &mut up, ctx.transfer())
            .insert_pass("verify", &mut verify, ctx.async_compute())
            .finish()?;
        if i == 2.min(count as usize - 1) {
            plan_text = planned.to_string();
        }
        in_flight.0.push_back(((), planned.execute()?));
    }
    for ((), f) in in_flight.0.drain(..) {
        f.wait()?;
    }
    let stream_s = t.elapsed().as_secs_f64();

    let mut host = HostRead(partials.clone());
    graph
        .record()
        .insert_pass("host read", &mut host, ctx.async_compute())
        .finish()?
        .execute()?
        .wait()?;
    let mut raw = vec![0u8; partials.size() as usize];
    partials.read(0, &mut raw)?;
    let sums: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let verified = if sync_only {
        println!("--sync-only: the verify pass launched nothing; no checksum to check");
        count as usize
    } else {
        (0..count as usize)
            .filter(|&i| {
                let got = sums[i * groups as usize..(i + 1) * groups as usize]
                    .iter()
                    .fold(0u32, |a, &b| a.wrapping_add(b));
                got == expected[i % expected.len()]
            })
            .count()
    };

    println!(
        "\nplan of one streamed buffer (buffer {}):",
        2.min(count - 1)
    );
    print!("{plan_text}");
    println!();
    let hand_g = gib_per_s(total, hand_s);
    let up_g = gib_per_s(total, upload_s);
    let stream_g = gib_per_s(total, stream_s);
    println!("hand-written staging copy (raw ash):  {hand_g:8.2} GiB/s");
    println!(
        "vk-baton, uploads only:               {up_g:8.2} GiB/s  ({:.1}% of hand-written)",
        up_g / hand_g * 100.0
    );
    println!(
        "vk-baton, upload + compute verify:    {stream_g:8.2} GiB/s  ({:.1}% of hand-written)",
        stream_g / hand_g * 100.0
    );
    println!(
        "check: {verified}/{count} buffers verified by the compute checksum{}",
        if verified == count as usize {
            ""
        } else {
            " (MISMATCH)"
        }
    );
    drop(graph);
    drop(hand);
    drop(verifies);
    let messages = report_validation(&ctx);
    Ok(messages == 0 && verified == count as usize)
}

fn main() {
    support::main_with(run)
}
