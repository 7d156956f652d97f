//! Will async compute pay: the span a plan allows at best, its critical path, and the best
//! move of one pass to another queue, from the passes' GPU times.

use super::*;
use vk_baton::predict::{best_moves, Move};

const MS: u64 = 1_000_000;

/// CONCURRENT buffers (no ownership transfers), so only the waits order the queues.
fn shared(name: &str) -> ResourceDecl {
    buffer(name).concurrent()
}

/// ```text
/// transfer: [upload 1ms] --a--.
/// compute:                    [light 2ms] --c--.
/// graphics: [shadows 4ms] --b------------------[draw 3ms]
/// ```
///
/// Graphics waits for compute before `draw`, in a second batch: `draw` starts when both
/// `shadows` (4 ms) and `light` (1 + 2 ms) are done, at 4 ms. The span is 7 ms of 10 serial;
/// the critical path is `shadows` then `draw`.
#[test]
fn the_span_at_best_follows_the_waits_and_the_critical_path_is_the_longest_chain() {
    let p = run(
        three_families(),
        vec![shared("a"), shared("b"), shared("c")],
        vec![
            pass("upload", 2, &[(0, Access::COPY_WRITE)]),
            pass("shadows", 0, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "light",
                1,
                &[
                    (0, Access::COMPUTE_SHADER_READ),
                    (2, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "draw",
                0,
                &[
                    (1, Access::COMPUTE_SHADER_READ),
                    (2, Access::COMPUTE_SHADER_READ),
                ],
            ),
        ],
    );
    let times = [MS, 4 * MS, 2 * MS, 3 * MS];
    let at_best = p.predict(&times);
    assert_eq!(
        at_best.passes,
        [
            Some((0, MS)),
            Some((0, 4 * MS)),
            Some((MS, 3 * MS)),
            Some((4 * MS, 7 * MS))
        ]
    );
    assert_eq!((at_best.span_ns, at_best.serial_ns), (7 * MS, 10 * MS));
    assert_eq!(at_best.critical_path, [1, 3]);
    assert_eq!(
        at_best.to_string(),
        "span 7.000 ms at best (serial 10.000 ms, overlap 1.43x); critical path: 1 -> 3"
    );
    // When `light` takes longer than `shadows`, the chain through the other queues decides.
    let slow_light = p.predict(&[MS, 4 * MS, 5 * MS, 3 * MS]);
    assert_eq!(slow_light.span_ns, 9 * MS);
    assert_eq!(slow_light.critical_path, [0, 2, 3]);
}

/// One graphics queue runs everything: 6 ms serial and 6 ms span. On async compute, `shadows`
/// or `ssao` runs beside the other (4 ms), and `gbuffer` beside `shadows` (5 ms: `ssao` still
/// waits for it after `shadows`). `lighting` reads everything: moving it gains nothing, so it
/// is not listed.
#[test]
fn moving_a_pass_to_async_compute_is_predicted_by_planning_the_frame_again() {
    let q =
        |name: &str, family| QueueDecl::new(name, family, if family == 0 { GFX } else { COMPUTE });
    let p = run(
        vec![q("graphics", 0), q("compute", 1)],
        vec![
            shared("gbuffer"),
            shared("shadow map"),
            shared("ao"),
            shared("image"),
        ],
        vec![
            pass("gbuffer", 0, &[(0, Access::COMPUTE_SHADER_WRITE)]),
            pass("shadows", 0, &[(1, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "ssao",
                0,
                &[
                    (0, Access::COMPUTE_SHADER_READ),
                    (2, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "lighting",
                0,
                &[
                    (0, Access::COMPUTE_SHADER_READ),
                    (1, Access::COMPUTE_SHADER_READ),
                    (2, Access::COMPUTE_SHADER_READ),
                    (3, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
        ],
    );
    let times = [MS, 2 * MS, 2 * MS, MS];
    let now = p.predict(&times);
    assert_eq!((now.span_ns, now.serial_ns), (6 * MS, 6 * MS));
    assert_eq!(now.overlap(), 1.0);
    let moves = best_moves(&p, &times);
    assert_eq!(
        moves,
        [
            Move {
                pass: 1,
                to_queue: 1,
                span_ns: 4 * MS
            },
            Move {
                pass: 2,
                to_queue: 1,
                span_ns: 4 * MS
            },
            Move {
                pass: 0,
                to_queue: 1,
                span_ns: 5 * MS
            }
        ]
    );
}
