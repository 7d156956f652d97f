//! A pass that fails or panics in `record()`: the execution ends before anything is submitted,
//! leaves the graph, the resources and the pools as it found them, and says which pass it was.
//! Also: a failed allocation names the resource and its size, and is no validation message.

mod common;

use common::*;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{
    Access, BufferDesc, CompletionToken, Declare, Error, Graph, Pass, Queue, Recorder, StBuffer,
};
use vk_baton_context::Context;

/// What [`Probe::record`] does after taking its completion token.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Then {
    /// Fills the buffer with the value.
    Fill(u32),
    /// Panics (after recording a fill).
    Panic,
    /// Returns an error from a Vulkan call of its own.
    Fail,
}

/// Writes one buffer with `vkCmdFillBuffer`; remembers its completion token.
struct Probe {
    buf: Arc<StBuffer>,
    then: Then,
    token: Option<CompletionToken>,
}

impl Probe {
    fn new(buf: &Arc<StBuffer>, then: Then) -> Self {
        Probe {
            buf: buf.clone(),
            then,
            token: None,
        }
    }
}

impl Pass for Probe {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.token = Some(r.completion());
        let value = match self.then {
            Then::Fill(v) => v,
            Then::Panic => 0xdead,
            Then::Fail => {
                return Err(Error::vk(
                    "vkCreateThing",
                    vk::Result::ERROR_OUT_OF_HOST_MEMORY,
                ))
            }
        };
        // SAFETY: the buffer is alive and the graph ordered this pass.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.buf.handle(), 0, vk::WHOLE_SIZE, value)
        };
        if self.then == Then::Panic {
            panic!("planted panic in `{}`", r.pass_name());
        }
        Ok(())
    }
}

/// Fills `dst` with `value` on `queue`, copies it into a readback buffer and returns its first
/// word: proof that an execution on `graph` runs and its result arrives.
fn fill_and_read(
    graph: &Graph,
    ctx: &Context,
    queue: &Queue,
    dst: &Arc<StBuffer>,
    value: u32,
) -> u32 {
    let readback = ctx
        .buffer(
            BufferDesc::readback(dst.size(), vk::BufferUsageFlags::TRANSFER_DST),
            "readback",
        )
        .unwrap();
    let mut fill = Probe::new(dst, Then::Fill(value));
    let mut copy = CopyBuffer {
        src: dst.clone(),
        dst: readback.clone(),
    };
    let mut host = HostRead(readback.clone());
    graph
        .record()
        .insert_pass("fill", &mut fill, queue)
        .insert_pass("copy", &mut copy, queue)
        .insert_pass("host", &mut host, queue)
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    fill.token.unwrap().check().unwrap();
    let mut word = [0u8; 4];
    readback.read(0, &mut word).unwrap();
    u32::from_le_bytes(word)
}

fn transfer_buffer(ctx: &Context, name: &str) -> Arc<StBuffer> {
    ctx.buffer(
        BufferDesc::new(
            256,
            vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
        ),
        name,
    )
    .unwrap()
}

/// Runs `graph` with a good pass on `first` and a panicking one on `second`, and checks what
/// the panic leaves: the panic itself reaches the caller, both tokens report a failed
/// execution, and no resource state changed.
fn panic_after_a_good_pass(ctx: &Context, graph: &Graph, first: &Queue, second: &Queue) {
    let a = transfer_buffer(ctx, "a");
    let b = transfer_buffer(ctx, "b");
    let before = (a.state(), b.state());
    let mut good = Probe::new(&a, Then::Fill(1));
    let mut boom = Probe::new(&b, Then::Panic);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        graph
            .record()
            .insert_pass("good", &mut good, first)
            .insert_pass("boom", &mut boom, second)
            .finish()
            .unwrap()
            .execute()
    }));
    let payload = caught.expect_err("the pass's panic reaches the caller");
    let message = payload
        .downcast_ref::<String>()
        .expect("the pass's own panic payload");
    assert_eq!(message, "planted panic in `boom`");
    for token in [good.token.take(), boom.token.take()] {
        let token = token.expect("record ran");
        assert!(token.has_failed());
        assert!(!token.is_complete());
        assert!(matches!(token.check(), Err(Error::NotExecuted)));
        // The documented wait loop ends.
        while !token.is_complete() && !token.has_failed() {
            std::thread::yield_now();
        }
    }
    assert_eq!((a.state(), b.state()), before, "no state was committed");

    // A panic in record_only() is handled the same way.
    let mut boom = Probe::new(&b, Then::Panic);
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        graph
            .record()
            .insert_pass("boom", &mut boom, second)
            .finish()
            .unwrap()
            .record_only()
    }));
    assert!(caught.is_err());
    assert!(boom.token.take().unwrap().has_failed());

    // The graph works on, on this thread and on others, with a graph of their own too.
    assert_eq!(fill_and_read(graph, ctx, first, &a, 7), 7);
    assert_eq!(fill_and_read(graph, ctx, second, &b, 8), 8);
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(fill_and_read(graph, ctx, second, &a, 9), 9));
        s.spawn(|| {
            let other = ctx.graph().unwrap();
            let c = transfer_buffer(ctx, "c");
            assert_eq!(fill_and_read(&other, ctx, first, &c, 10), 10);
        });
    });
    assert_eq!(fill_and_read(graph, ctx, first, &b, 11), 11);
}

/// Destroys everything, then the device, and checks that nothing leaked: a fence or pool left
/// behind would make vkDestroyDevice report VUID-vkDestroyDevice-device-00378.
fn destroy_and_check(ctx: Context, graph: Graph) {
    let log = ctx.message_log();
    assert_clean(&ctx);
    drop(graph);
    drop(ctx);
    assert!(log.validation() == 0, "{}", log.validation());
}

#[test]
fn a_panic_in_record_on_one_queue_leaves_everything_as_an_error_would() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    // Executions before, so the pools hold command buffers and fences the panic could lose.
    let warm = transfer_buffer(&ctx, "warm");
    assert_eq!(fill_and_read(&graph, &ctx, ctx.graphics(), &warm, 3), 3);
    panic_after_a_good_pass(&ctx, &graph, ctx.graphics(), ctx.graphics());
    drop(warm);
    destroy_and_check(ctx, graph);
}

/// The case that leaked a fence: the first queue's fence is taken before the second queue's
/// pass panics.
#[test]
#[ignore = "needs a dedicated compute queue family (run on the NVIDIA machine)"]
fn a_panic_in_record_on_two_queues_leaves_everything_as_an_error_would() {
    let ctx = ctx();
    assert!(
        ctx.async_compute() != ctx.graphics(),
        "this test needs a dedicated compute family, but `{}` has one queue for both",
        ctx.device_name()
    );
    let graph = ctx.graph().unwrap();
    let warm = transfer_buffer(&ctx, "warm");
    assert_eq!(fill_and_read(&graph, &ctx, ctx.graphics(), &warm, 3), 3);
    assert_eq!(
        fill_and_read(&graph, &ctx, ctx.async_compute(), &warm, 4),
        4
    );
    panic_after_a_good_pass(&ctx, &graph, ctx.graphics(), ctx.async_compute());
    drop(warm);
    destroy_and_check(ctx, graph);
}

#[test]
fn an_error_from_record_names_the_pass() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let a = transfer_buffer(&ctx, "a");
    let mut good = Probe::new(&a, Then::Fill(1));
    let mut bad = Probe::new(&a, Then::Fail);
    let e = graph
        .record()
        .insert_pass("good", &mut good, ctx.graphics())
        .insert_pass("bad", &mut bad, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap_err();
    match &e {
        Error::Record { pass, source } => {
            assert_eq!(pass, "bad");
            assert!(
                matches!(
                    **source,
                    Error::Vulkan {
                        call: "vkCreateThing",
                        result: vk::Result::ERROR_OUT_OF_HOST_MEMORY
                    }
                ),
                "{source:?}"
            );
        }
        e => panic!("expected Error::Record, got {e:?}"),
    }
    assert!(
        e.to_string()
            .starts_with("pass `bad` failed to record: vkCreateThing failed"),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
    assert!(bad.token.take().unwrap().has_failed());
    assert_eq!(fill_and_read(&graph, &ctx, ctx.graphics(), &a, 5), 5);
    drop(a);
    destroy_and_check(ctx, graph);
}

/// Asks for `size` bytes; the error must name the buffer and the size, and must not count as
/// a validation message (the driver's own report of the failure goes to `driver_messages`).
fn refused(ctx: &Context, size: u64, name: &str) -> Error {
    let e = ctx
        .buffer(
            BufferDesc::new(size, vk::BufferUsageFlags::TRANSFER_DST),
            name,
        )
        .unwrap_err();
    let Error::Allocation {
        resource,
        size: asked,
        ..
    } = &e
    else {
        panic!("expected Error::Allocation, got {e:?}");
    };
    assert_eq!(resource, name);
    assert!(*asked >= size, "{asked} < {size}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("cannot allocate {asked} bytes for `{name}`: ")),
        "{text}"
    );
    assert!(
        ctx.unexpected_messages() == 0,
        "{}",
        ctx.unexpected_messages()
    );
    e
}

#[test]
fn a_failed_allocation_names_the_resource_and_its_size() {
    let ctx = ctx();
    let tib = 1u64 << 40;
    let e = refused(&ctx, tib, "one tebibyte");
    assert!(e.to_string().contains("`one tebibyte`"), "{e}");
    eprintln!("{e}");

    // Larger than the largest heap but (where the device allows) a valid buffer size: the
    // allocator refuses it.
    // SAFETY: plain query.
    let props = unsafe {
        ctx.instance()
            .get_physical_device_memory_properties(ctx.physical_device())
    };
    let heap = props
        .memory_heaps_as_slice()
        .iter()
        .map(|h| h.size)
        .max()
        .unwrap();
    let e = refused(&ctx, heap + (1 << 20), "over the heap");
    eprintln!("{e}\ndriver: {}", ctx.driver_messages());

    // The context and later allocations are fine.
    let fine = transfer_buffer(&ctx, "fine");
    let graph = ctx.graph().unwrap();
    assert_eq!(fill_and_read(&graph, &ctx, ctx.graphics(), &fine, 6), 6);
    drop(fine);
    destroy_and_check(ctx, graph);
}

/// A pass that panics in `declare()`, after declaring a buffer: once the panic is caught, the
/// graph keeps nothing of that frame alive (the buffer's last `Arc` is the app's), and the next
/// frame plans and runs.
#[test]
fn a_panic_in_declare_keeps_no_resource_alive() {
    let ctx = ctx();
    let graph = ctx.graph().unwrap();
    let buf = transfer_buffer(&ctx, "declared then panicked");
    let q = ctx.graphics();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        graph
            .record()
            .insert_fn(
                "panics in declare",
                q,
                |d| {
                    d.uses(&buf, Access::TRANSFER_WRITE);
                    panic!("declare failed");
                },
                |_| Ok(()),
            )
            .finish()
            .map(drop)
    }));
    assert!(caught.is_err(), "the panic comes through");
    assert_eq!(
        Arc::strong_count(&buf),
        1,
        "the graph still holds the buffer"
    );
    assert_eq!(fill_and_read(&graph, &ctx, q, &buf, 5), 5);
    drop(buf);
    destroy_and_check(ctx, graph);
}
