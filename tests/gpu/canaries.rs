//! Canaries: hazards planted on purpose, which the validation layer must report, so that "no
//! validation message" in every other test means something. One within a command buffer, one
//! across two submits to one queue, and one across two queues, between two transfer writes;
//! and two (within a command buffer, across two submits) between a compute shader's write of a
//! storage buffer and another dispatch's read of it through a descriptor, which the layer
//! checks only with its shader-access heuristic on (`Context` turns it on through
//! `VK_EXT_layer_settings`; Vulkan-ValidationLayers issue #11011). Last, not a canary, a test
//! of how coarse that heuristic is: it takes a dispatch to access the whole range of each
//! descriptor it uses.
//!
//! Each report is found by content: a synchronization hazard (`SYNC-HAZARD-…` id) between the
//! two planted accesses (the first word of the id the later access, the last the earlier) that
//! names the planted buffer's handle. Nothing depends on one layer version's wording: 1.4.309
//! calls the same hazard `WRITE-AFTER-WRITE` within a queue and `WRITE-RACING-WRITE` across
//! queues. The planted passes declare nothing, so the graph orders nothing between them: the
//! hazard is real.
//!
//! Checks across submits and queues need a layer that validates at submit time (Khronos layer
//! 1.4.309 or newer; Debian 12's 1.3.239 misses both). Those canaries, and the heuristic's
//! test, skip below that version, as the layer reports it (`Need::SUBMIT_TIME_VALIDATION`),
//! never because a check did not fire; where the layer qualifies, the canary must fire. CI
//! requires such a layer (`VK_BATON_REQUIRE`), so there they never skip.

use super::*;
use vk_baton::ash::vk::Handle;
use vk_baton::Queue;
use vk_baton_context::Context;

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

/// Whether a message id names a synchronization hazard of a `later` access (`READ` or
/// `WRITE`) after an `earlier` one: `SYNC-HAZARD-<later>-<relation>-<earlier>`.
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

#[test]
fn hazards_are_told_apart_by_their_two_accesses() {
    for id in [
        "SYNC-HAZARD-WRITE-AFTER-WRITE",
        "SYNC-HAZARD-WRITE-RACING-WRITE",
        "SYNC-HAZARD-WRITE_AFTER_WRITE",
    ] {
        assert!(is_hazard(id, "WRITE", "WRITE"), "{id}");
        assert!(!is_hazard(id, "READ", "WRITE"), "{id}");
    }
    for id in [
        "SYNC-HAZARD-READ-AFTER-WRITE",
        "SYNC-HAZARD-READ-RACING-WRITE",
        "SYNC-HAZARD-READ_AFTER_WRITE",
    ] {
        assert!(is_hazard(id, "READ", "WRITE"), "{id}");
        assert!(!is_hazard(id, "WRITE", "WRITE"), "{id}");
    }
    for id in [
        "SYNC-HAZARD-WRITE-AFTER-READ",
        "VUID-x-WRITE-y-WRITE",
        "VUID-x-READ-y-WRITE",
        "SYNC-HAZARD-WRITE",
        "SYNC-HAZARD-READ",
    ] {
        assert!(!is_hazard(id, "WRITE", "WRITE"), "{id}");
        assert!(!is_hazard(id, "READ", "WRITE"), "{id}");
    }
}

/// Asserts that validation reported a hazard of a `later` access after an `earlier` one
/// (`"READ"` or `"WRITE"` each) that names `buf`.
fn assert_hazard(ctx: &Context, buf: &StBuffer, later: &str, earlier: &str, where_: &str) {
    let m = ctx.validation_messages();
    let handle = buf.handle().as_raw();
    let hazard = m
        .messages
        .iter()
        .any(|x| is_hazard(&x.id, later, earlier) && x.names(handle));
    assert!(
        hazard,
        "the layer did not report the {later}-after-{earlier} hazard planted {where_} on buffer \
         {handle:#x}; is it a layer that validates at submit time (1.4.309 or newer), with the \
         shader-access heuristic on for accesses through descriptors? {m}"
    );
}

/// Asserts that validation reported a hazard between two writes of `buf`.
fn assert_reported(ctx: &Context, buf: &StBuffer, where_: &str) {
    assert_hazard(ctx, buf, "WRITE", "WRITE", where_);
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
    if ctx.machine().skips(&[Need::SUBMIT_TIME_VALIDATION]) {
        return;
    }
    let buf = planted(&ctx);
    fill_twice(&ctx, &buf, [ctx.graphics(); 2]);
    assert_reported(&ctx, &buf, "across two submits");
}

/// Two hidden fills in two executions on two queues.
#[test]
#[ignore = "needs two queues"]
fn canary_hazard_across_two_queues() {
    let ctx = ctx();
    if ctx.machine().skips(&[Need::SUBMIT_TIME_VALIDATION]) {
        return;
    }
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

/// The words `matrix_copy.comp` copies: one workgroup of 64.
const WORDS: u32 = 64;

fn storage(ctx: &Context, bytes: u64, name: &str) -> Arc<StBuffer> {
    ctx.buffer(
        BufferDesc::new(bytes, vk::BufferUsageFlags::STORAGE_BUFFER),
        name,
    )
    .unwrap()
}

/// What the shader-access canaries plant on: `fill.comp` writes the planted storage buffer
/// (binding 0, `writeonly`), and `matrix_copy.comp` reads its 64 words through a descriptor
/// (binding 0, `readonly`) into a second buffer (binding 1, `writeonly`).
struct ShaderAccesses {
    fill: Compute,
    fill_set: vk::DescriptorSet,
    planted: Arc<StBuffer>,
    /// The copy's destination, kept alive for the copy's descriptor set.
    _copied: Arc<StBuffer>,
    copy: Compute,
    copy_set: vk::DescriptorSet,
}

impl ShaderAccesses {
    fn new(ctx: &Context) -> ShaderAccesses {
        let bytes = u64::from(WORDS) * 4;
        let (planted, copied) = (
            storage(ctx, bytes, "planted"),
            storage(ctx, bytes, "copied"),
        );
        let fill = Compute::new(
            ctx,
            vk_baton_shaders::FILL_COMP,
            vk::DescriptorType::STORAGE_BUFFER,
        );
        let fill_set = fill.buffer_set(&planted);
        let copy = Compute::with_bindings(
            ctx,
            vk_baton_shaders::matrix::COPY_COMP,
            &[vk::DescriptorType::STORAGE_BUFFER; 2],
        );
        let copy_set = copy.buffers_set(&[(&planted, 0..bytes), (&copied, 0..bytes)]);
        ShaderAccesses {
            fill,
            fill_set,
            planted,
            _copied: copied,
            copy,
            copy_set,
        }
    }

    /// `fill.comp` writes the planted buffer.
    fn record_write(&self, r: &Recorder<'_>) {
        self.fill.dispatch(r, self.fill_set, [WORDS, 7], [1, 1, 1]);
    }

    /// `matrix_copy.comp` reads the planted buffer through its descriptor.
    fn record_read(&self, r: &Recorder<'_>) {
        self.copy.dispatch(r, self.copy_set, [0, 0], [1, 1, 1]);
    }
}

/// Which of the planted accesses a pass records (it declares neither).
enum Planted {
    Write,
    Read,
    WriteThenRead,
}

/// Records planted shader accesses, declaring nothing: accesses the graph does not know about.
struct HiddenShaderAccesses<'a>(&'a ShaderAccesses, Planted);

impl Pass for HiddenShaderAccesses<'_> {
    fn declare(&self, _d: &mut Declare<'_>) {}
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        if matches!(self.1, Planted::Write | Planted::WriteThenRead) {
            self.0.record_write(r);
        }
        if matches!(self.1, Planted::Read | Planted::WriteThenRead) {
            self.0.record_read(r);
        }
        Ok(())
    }
}

/// A compute shader writes a storage buffer and the next dispatch, recorded right after it in
/// the same command buffer with no barrier, reads it through a descriptor.
#[test]
fn canary_shader_read_after_write_within_one_command_buffer() {
    let ctx = ctx();
    let kit = ShaderAccesses::new(&ctx);
    let mut both = HiddenShaderAccesses(&kit, Planted::WriteThenRead);
    ctx.graph()
        .unwrap()
        .record()
        .insert_pass("write then read", &mut both, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_hazard(
        &ctx,
        &kit.planted,
        "READ",
        "WRITE",
        "through a descriptor within one command buffer",
    );
}

/// The same write and read in two executions on one queue, submitted one after the other and
/// waited for only after both: two submits with nothing between them.
#[test]
fn canary_shader_read_after_write_across_two_submits() {
    let ctx = ctx();
    if ctx.machine().skips(&[Need::SUBMIT_TIME_VALIDATION]) {
        return;
    }
    let kit = ShaderAccesses::new(&ctx);
    let graph = ctx.graph().unwrap();
    let mut write = HiddenShaderAccesses(&kit, Planted::Write);
    let mut read = HiddenShaderAccesses(&kit, Planted::Read);
    let first = graph
        .record()
        .insert_pass("write", &mut write, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    let second = graph
        .record()
        .insert_pass("read", &mut read, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap();
    first.wait().unwrap();
    second.wait().unwrap();
    assert_hazard(
        &ctx,
        &kit.planted,
        "READ",
        "WRITE",
        "through a descriptor across two submits",
    );
}

/// Records one dispatch of `checksum.comp` through `set`, declaring nothing.
struct Checksum<'a> {
    kit: &'a Compute,
    set: vk::DescriptorSet,
    /// Where the one workgroup writes its partial sum, in words from the start of binding 1.
    first: u32,
}

impl Pass for Checksum<'_> {
    fn declare(&self, _d: &mut Declare<'_>) {}
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // `words` 0: the loop reads nothing; the one workgroup writes one partial sum.
        self.kit.dispatch(r, self.set, [0, self.first], [1, 1, 1]);
        Ok(())
    }
}

/// Not a canary: how coarse the shader-access heuristic is, shown on a false positive that the
/// streaming_upload sample's hand-written side ran into. Two dispatches of `checksum.comp`
/// (one workgroup each: it writes exactly `partials[first]`) write words 0 and 64 of one
/// buffer, in two submits to one queue with nothing ordering them. Those are different memory
/// locations, so by the Vulkan memory model the two writes do not race and need no ordering;
/// but when both dispatches' descriptors cover the whole buffer, layer 1.4.309 reports a
/// write-after-write hazard: it takes a dispatch to access the whole range its descriptor
/// covers (it cannot evaluate the shader's indices). When each descriptor covers only its
/// dispatch's share (offsets 0 and 256 bytes, 256 being the largest
/// `minStorageBufferOffsetAlignment` the spec allows; `first` 0 for both), the same writes are
/// reported clean. Code whose unordered dispatches share a buffer therefore binds each one's
/// share, as the sample now does.
///
/// (Within one command buffer, layer 1.4.309 reports no write-after-write hazard between two
/// dispatches' writes through bound descriptors at all, even to the same words: its
/// `SuppressedBoundDescriptorWAW` applies to command-buffer validation only, not at submit
/// time; Vulkan-ValidationLayers PR #8277 names the gap and PR #12026 removes the suppression.
/// It does report a read after a write there, which the shader canary within one command
/// buffer relies on.)
#[test]
fn shader_access_heuristic_takes_a_descriptor_s_whole_range_as_accessed() {
    let ctx = ctx();
    if ctx.machine().skips(&[Need::SUBMIT_TIME_VALIDATION]) {
        return;
    }
    let kit = Compute::with_bindings(
        &ctx,
        vk_baton_shaders::CHECKSUM_COMP,
        &[vk::DescriptorType::STORAGE_BUFFER; 2],
    );
    let data = storage(&ctx, 256, "checksum data");
    // One dispatch per execution, both submitted before either is waited for.
    let submit_two = |sets: [vk::DescriptorSet; 2], firsts: [u32; 2]| {
        let graph = ctx.graph().unwrap();
        let mut passes = [0, 1].map(|i| Checksum {
            kit: &kit,
            set: sets[i],
            first: firsts[i],
        });
        let [a, b] = &mut passes;
        let first = graph
            .record()
            .insert_pass("first checksum", a, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        let second = graph
            .record()
            .insert_pass("second checksum", b, ctx.graphics())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        first.wait().unwrap();
        second.wait().unwrap();
    };
    // Whole-buffer descriptors, the dispatches' words told apart by `first`: reported.
    let whole = storage(&ctx, 512, "partials, whole-buffer descriptors");
    let set = kit.buffers_set(&[(&data, 0..256), (&whole, 0..512)]);
    submit_two([set, set], [0, 64]);
    assert_hazard(
        &ctx,
        &whole,
        "WRITE",
        "WRITE",
        "(a false positive: the two dispatches write different words)",
    );
    let before = ctx.validation_messages();
    // One descriptor per share: the same two words written, and nothing reported.
    let shares = storage(&ctx, 512, "partials, one descriptor per share");
    let sets = [0, 256].map(|at| kit.buffers_set(&[(&data, 0..256), (&shares, at..at + 4)]));
    submit_two(sets, [0, 0]);
    let after = ctx.validation_messages();
    assert!(
        after.count == before.count,
        "writes through descriptors of disjoint ranges were reported: {after}"
    );
}
