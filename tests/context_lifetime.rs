//! A `Context` may drop before what it made: the queues, resources and graphs keep the device
//! alive, and the last of them to drop destroys it, with no validation message and no error
//! logged, in any order.

use std::cell::Cell;
use std::sync::{Arc, Once};
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Declare, ImageDesc, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::{Context, ContextOptions};

thread_local! {
    /// Error-level log records emitted on this thread: every drop below runs on the test's
    /// own thread, and other tests' errors never land here.
    static ERRORS: Cell<usize> = const { Cell::new(0) };
    static ERROR_TEXTS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct CountErrors;

impl log::Log for CountErrors {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Error
    }
    fn log(&self, r: &log::Record<'_>) {
        if r.level() == log::Level::Error {
            ERRORS.with(|e| e.set(e.get() + 1));
            ERROR_TEXTS.with(|t| t.borrow_mut().push(r.args().to_string()));
        }
    }
    fn flush(&self) {}
}

fn count_errors() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        log::set_logger(&CountErrors).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Error);
    });
}

fn errors_logged() -> (usize, Vec<String>) {
    (
        ERRORS.with(Cell::get),
        ERROR_TEXTS.with(|t| t.borrow().clone()),
    )
}

/// Fills the buffer and clears the image.
struct Fill {
    buf: Arc<StBuffer>,
    img: Arc<StImage>,
}

/// Fills the buffer.
struct FillBuffer(Arc<StBuffer>);

impl Pass for FillBuffer {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // SAFETY: the buffer is alive, and the graph ordered this pass.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.0.handle(), 0, vk::WHOLE_SIZE, 7)
        };
        Ok(())
    }
}

impl Pass for Fill {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::TRANSFER_WRITE).discard();
        d.uses(&self.img, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let color = vk::ClearColorValue {
            float32: [0.0, 1.0, 0.0, 1.0],
        };
        // SAFETY: both are alive, and the graph put them in the declared states.
        unsafe {
            r.device()
                .cmd_fill_buffer(r.cmd(), self.buf.handle(), 0, vk::WHOLE_SIZE, 7);
            r.device().cmd_clear_color_image(
                r.cmd(),
                self.img.handle(),
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &color,
                &[self.img.full_range()],
            );
        }
        Ok(())
    }
}

/// What a context made, each dropped on its own.
#[derive(Clone, Copy, Debug)]
enum Part {
    Context,
    Buffer,
    Image,
    Graph,
    Queue,
}

/// Makes a context, a buffer, an image, a graph and a clone of the graphics queue, runs one
/// execution that fills the buffer (left running: its fence is dropped unwaited), then drops
/// the five in `order`. The image stays unused: its state then holds no queue, which would
/// keep the device alive through the queue.
fn drop_in_order(order: [Part; 5]) {
    let before = errors_logged().0;
    let ctx = Arc::new(Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)"));
    let log = ctx.message_log();
    let buf = ctx
        .buffer(
            BufferDesc::new(1024, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                16,
                16,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::TRANSFER_DST,
            ),
            "img",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let queue = ctx.graphics().clone();
    {
        let mut fill = FillBuffer(buf.clone());
        let fence = graph
            .record()
            .insert_pass("fill", &mut fill, &queue)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        drop(fence); // the graph keeps the execution until it completes
    }
    let (mut ctx, mut buf, mut img, mut graph, mut queue) =
        (Some(ctx), Some(buf), Some(img), Some(graph), Some(queue));
    for (i, part) in order.iter().enumerate() {
        match part {
            Part::Context => drop(ctx.take()),
            Part::Buffer => drop(buf.take()),
            Part::Image => drop(img.take()),
            Part::Graph => drop(graph.take()),
            Part::Queue => drop(queue.take()),
        }
        let last = i == order.len() - 1;
        assert_eq!(
            log.device_destroyed(),
            last,
            "{order:?}: the device goes with the last part, not before ({part:?} dropped)"
        );
    }
    assert!(log.validation() == 0, "{order:?}: {}", log.validation());
    let (errors, texts) = errors_logged();
    assert_eq!(errors, before, "{order:?}: errors logged: {texts:?}");
}

#[test]
fn dropping_the_context_first_neither_leaks_the_device_nor_logs_an_error() {
    count_errors();
    use Part::*;
    let parts = [Context, Buffer, Image, Graph, Queue];
    // Every rotation (so each part goes first and last once), and each one reversed.
    for r in 0..parts.len() {
        let mut order = parts;
        order.rotate_left(r);
        drop_in_order(order);
        order.reverse();
        drop_in_order(order);
    }
}

#[test]
fn the_error_counter_sees_errors_logged_on_this_thread() {
    // The check above relies on this: an error logged here is seen here.
    count_errors();
    let before = errors_logged().0;
    log::error!("planted");
    assert_eq!(errors_logged().0, before + 1);
}

#[test]
fn two_graphics_queues_are_one_option_away() {
    count_errors();
    let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
    // SAFETY: plain query on the context's live instance and physical device.
    let families = unsafe {
        ctx.instance()
            .get_physical_device_queue_family_properties(ctx.physical_device())
    };
    let available = families[ctx.graphics().family() as usize].queue_count;
    assert_eq!(ctx.graphics_queues().len(), 1);
    drop(ctx);

    let two = Context::with_options(ContextOptions {
        validation: true,
        graphics_queues: 2,
        ..Default::default()
    });
    if available < 2 {
        // Lavapipe: one queue. A clear error, not a silent fallback to one queue.
        let e = two.expect_err("the family has one queue");
        assert_eq!(
            e.to_string(),
            format!("the Vulkan environment is not usable: ContextOptions::graphics_queues is 2, but the graphics family ({}) has 1 queue(s): ask for 1 to 1", families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS)).unwrap())
        );
        return;
    }
    let ctx = two.unwrap();
    let [main, side] = ctx.graphics_queues() else {
        panic!("two queues: {:?}", ctx.graphics_queues())
    };
    assert_eq!(main, ctx.graphics());
    assert_ne!(main.handle(), side.handle());
    assert_eq!((main.name(), side.name()), ("graphics", "graphics 1"));
    assert_eq!((main.index(), side.index()), (0, 1));
    // Work on the side queue, then on the main one, ordered by the planner's semaphores.
    let buf = ctx
        .buffer(
            BufferDesc::new(1024, vk::BufferUsageFlags::TRANSFER_DST),
            "buf",
        )
        .unwrap();
    let img = ctx
        .image(
            ImageDesc::new_2d(
                16,
                16,
                vk::Format::R8G8B8A8_UNORM,
                vk::ImageUsageFlags::TRANSFER_DST,
            ),
            "img",
        )
        .unwrap();
    let graph = ctx.graph().unwrap();
    let (mut a, mut b) = (
        Fill {
            buf: buf.clone(),
            img: img.clone(),
        },
        Fill { buf, img },
    );
    let planned = graph
        .record()
        .insert_pass("side", &mut a, side)
        .insert_pass("main", &mut b, main)
        .finish()
        .unwrap();
    assert_eq!(planned.plan().semaphore_waits(), 1, "{planned}");
    planned.execute().unwrap().wait().unwrap();
    assert!(
        ctx.unexpected_messages() == 0,
        "{}",
        ctx.unexpected_messages()
    );
}
