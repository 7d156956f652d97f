//! Planner scenarios: small graphs on fake queue setups, each stated with its whole compiled
//! plan as text through [`assert_plan!`], under an ASCII picture of the graph. No GPU.
//!
//! The expected plans follow the synchronization contract (DESIGN.md): source scopes are the
//! prior conflicting accesses' stages and writes, destination scopes the new use's, layout
//! transitions count as writes, and the last batch of each queue signals its timeline at
//! `ALL_COMMANDS` (for the fence and later graphs). Without `VK_KHR_maintenance8` a release's
//! destination stages and an acquire's source stages are ignored: the release is ordered
//! before the signal, and the acquire after the wait, only by `ALL_COMMANDS` semaphore masks.
//!
//! What the text cannot show (refused input, final states, counts, the verifier's answer) is
//! asserted beside it.

use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk;
use vk_baton::ash::vk::Handle;
use vk_baton::plan::*;
use vk_baton::{Access, BufferRange, Error, ImageRange, SubRange};

#[cfg(feature = "verify")]
#[path = "plan_scenarios/aspects.rs"]
mod aspects;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/coalesce.rs"]
mod coalesce;
#[path = "plan_scenarios/contract.rs"]
mod contract;
#[path = "plan_scenarios/errors.rs"]
mod errors;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/general_layouts.rs"]
mod general_layouts;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/hoist.rs"]
mod hoist;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/host_present.rs"]
mod host_present;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/host_stages.rs"]
mod host_stages;
#[path = "plan_scenarios/khronos.rs"]
mod khronos;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/maintenance8.rs"]
mod maintenance8;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/maintenance9.rs"]
mod maintenance9;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/no_use_passes.rs"]
mod no_use_passes;
#[path = "plan_scenarios/predict.rs"]
mod predict;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/queues.rs"]
mod queues;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/raster.rs"]
mod raster;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/ray_video.rs"]
mod ray_video;
#[path = "plan_scenarios/rebind.rs"]
mod rebind;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/redundant.rs"]
mod redundant;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/render_pass.rs"]
mod render_pass;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/schedule.rs"]
mod schedule;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/schedule_frames.rs"]
mod schedule_frames;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/transient.rs"]
mod transient;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/transient_frame.rs"]
mod transient_frame;
#[cfg(feature = "verify")]
#[path = "plan_scenarios/unordered.rs"]
mod unordered;

/// Asserts that a plan's whole `Display` text, in the alternate form that says why each
/// barrier entry is there, is `expected`. The expected text may start with
/// a newline (so that a raw string opens on its own line); that one newline is ignored. On a
/// mismatch it panics with a line diff and the whole plan as printed.
///
/// ```ignore
/// assert_plan!(p, r#"
/// queue `gfx` (family 0):
///   batch 0:
///     pass   `write`
///     signal timeline at ALL_COMMANDS
/// "#);
/// ```
macro_rules! assert_plan {
    ($plan:expr, $expected:expr $(,)?) => {
        $crate::check_plan(&format!("{:#}", $plan), $expected, file!(), line!())
    };
}
pub(crate) use assert_plan;

/// [`assert_plan!`]'s comparison.
#[track_caller]
pub fn check_plan(actual: &str, expected: &str, file: &str, line: u32) {
    let expected = expected.strip_prefix('\n').unwrap_or(expected);
    if actual == expected {
        return;
    }
    panic!(
        "plan differs from the expected text at {file}:{line} (- expected, + actual):\n{}\
         --- actual plan at {file}:{line} ---\n{actual}--- end ---",
        diff(expected, actual)
    );
}

/// A line diff of `a` and `b` (longest common subsequence): `  ` kept, `- ` only in `a`, `+ `
/// only in `b`.
fn diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out += &format!("  {}\n", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out += &format!("+ {}\n", b[j]);
            j += 1;
        } else {
            out += &format!("- {}\n", a[i]);
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the scenarios
// ---------------------------------------------------------------------------------------------

const GFX: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);
const COMPUTE: vk::QueueFlags =
    vk::QueueFlags::from_raw(vk::QueueFlags::COMPUTE.as_raw() | vk::QueueFlags::TRANSFER.as_raw());
const TRANSFER: vk::QueueFlags = vk::QueueFlags::TRANSFER;

/// graphics (family 0), async compute (family 1), transfer (family 2), named as the Khronos
/// examples' queues.
fn three_families() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new("graphics", 0, GFX),
        QueueDecl::new("compute", 1, COMPUTE),
        QueueDecl::new("transfer", 2, TRANSFER),
    ]
}

/// The same three kinds of queue, as on NVIDIA and AMD GPUs.
fn queues() -> Vec<QueueDecl> {
    three_families()
}

fn all_image_usage() -> vk::ImageUsageFlags {
    vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST
        | vk::ImageUsageFlags::COLOR_ATTACHMENT
}

fn all_buffer_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::VERTEX_BUFFER
}

/// A 1x1-mip, 1-layer color image of every usage the scenarios need.
fn image(name: &str) -> ResourceDecl {
    ResourceDecl::image(name, 1, 1, all_image_usage())
}

/// A 256-byte buffer of every usage the scenarios need.
fn buffer(name: &str) -> ResourceDecl {
    ResourceDecl::buffer(name, 256, all_buffer_usage())
}

/// A pass on `queue` with a use of each (resource, access).
fn pass(name: &str, queue: usize, uses: &[(usize, Access)]) -> PassDecl {
    uses.iter().fold(PassDecl::new(name, queue), |p, &(r, a)| {
        p.with_use(UseDecl::new(r, a))
    })
}

/// A pass on `queue` with one use of resource 0.
fn on(name: &str, queue: usize, access: Access) -> PassDecl {
    PassDecl::new(name, queue).with_use(UseDecl::new(0, access))
}

fn run(queues: Vec<QueueDecl>, resources: Vec<ResourceDecl>, passes: Vec<PassDecl>) -> Plan {
    plan(&PlanInput {
        queues,
        resources,
        passes,
    })
    .expect("plan")
}

/// Plans `input` and checks the plan with the verifier.
#[cfg(feature = "verify")]
fn planned(input: &PlanInput) -> Plan {
    let p = plan(input).unwrap();
    p.verify().unwrap_or_else(|v| panic!("{p}\n{v:#?}"));
    p
}

/// A swapchain image: a color attachment also copied from.
fn swapchain() -> ResourceDecl {
    ResourceDecl::image(
        "swap",
        1,
        1,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
    )
}

/// A pass on graphics that uses the swapchain image after a binary wait (the app's acquire).
fn acquire(name: &str, semaphore: u64, access: Access) -> PassDecl {
    on(name, 0, access).with_wait(BinaryWaitDecl {
        semaphore: vk::Semaphore::from_raw(semaphore),
        guards: vec![0],
        stages: None,
    })
}

/// The present on graphics, signalling a binary semaphore.
fn present(semaphore: u64) -> PassDecl {
    on("present", 0, Access::PRESENT).with_signal(BinarySignalDecl {
        semaphore: vk::Semaphore::from_raw(semaphore),
        stages: None,
    })
}
