//! An error the library returns is not also logged as an error: the caller decides what to
//! say about it. A test logger counts the error-level records of the test's own thread.

use std::cell::RefCell;
use std::sync::Once;
use vk_baton::ash::vk;
use vk_baton::{Access, BufferDesc, Error};
use vk_baton_context::Context;

thread_local! {
    /// Error-level records logged on this thread.
    static ERRORS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

struct CaptureErrors;

impl log::Log for CaptureErrors {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Error
    }
    fn log(&self, r: &log::Record<'_>) {
        if r.level() == log::Level::Error {
            ERRORS.with(|e| e.borrow_mut().push(r.args().to_string()));
        }
    }
    fn flush(&self) {}
}

/// The errors logged on this thread while `f` runs.
fn errors_logged_by<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        log::set_logger(&CaptureErrors).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Error);
    });
    ERRORS.with(|e| e.borrow_mut().clear());
    let out = f();
    (out, ERRORS.with(|e| e.borrow_mut().split_off(0)))
}

/// `finish()` refuses an access whose device feature the graph was not told of, and returns
/// `Error::FeatureNotEnabled` without logging it.
#[test]
fn a_feature_refusal_is_returned_not_logged() {
    let ctx = Context::new_for_tests().expect("a Vulkan 1.3 device and the validation layer");
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let buf = ctx.buffer(BufferDesc::new(64, usage), "meshlets").unwrap();
    let graph = ctx.graph().unwrap();
    let (result, errors) = errors_logged_by(|| {
        graph
            .record()
            .insert_fn(
                "draw meshlets",
                ctx.graphics(),
                |d| {
                    d.uses(&buf, Access::MESH_SHADER_STORAGE_READ);
                },
                |_r| Ok(()),
            )
            .finish()
            .map(drop)
    });
    assert!(
        matches!(result, Err(Error::FeatureNotEnabled { .. })),
        "{result:?}"
    );
    assert_eq!(errors, Vec::<String>::new());
    let m = ctx.validation_messages();
    assert!(m == 0, "{m}");
}
