//! A frame report (feature `report`): one self-contained HTML file that shows what the GPU did
//! and why. Open it in any browser; it needs no network, script or font from elsewhere.
//!
//! It shows, per frame:
//! - a **timeline**, one lane per queue: batches, passes, barrier commands, semaphore waits
//!   (arrows across queues) and signals, on a GPU-time axis where the frame was timed
//!   ([`Graph::set_gpu_timings`](crate::Graph::set_gpu_timings)) and in plan order where not;
//! - **details** of what is hovered or clicked: a pass's declared uses and time; a barrier
//!   entry's stages, accesses, layouts, families and range, and why it is there (its
//!   [`Cause`](crate::plan::Cause): the earlier access it orders the next use after);
//! - each **resource's** states across the frame, and for transients a map of their heaps over
//!   time, with the memory they take aliased, not aliased, and the lower bound;
//! - the **predicted** span ([`Plan::predict`]) beside the **measured** one, the critical path,
//!   and the moves to another queue that would shorten it ([`best_moves`](crate::predict::best_moves));
//! - the verifier's **findings** ([`Plan::verify`]), where they are on the timeline.
//!
//! # How it is built
//!
//! [`Report`] turns each frame into compact JSON as it is added (`frame` and `batches`, with
//! strings shared through one table: `json`), so it keeps no plan. [`Report::to_html`] puts that
//! data into the page beside the viewer (`viewer/`: markup, stylesheet and script, in this
//! crate's sources), which lays out and draws everything in the browser. The same data gives
//! the same file, byte for byte. [`Graph::capture_report`](crate::Graph::capture_report)
//! (`capture`) adds a graph's next executions to a report as they complete, through the
//! executor's extension point; it is the only part the frame path ever calls.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{ash::vk, Access};
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
//!                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
//!     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
//!     passes: vec![
//!         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
//!         PassDecl::new("shade", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ],
//! };
//! let plan = plan(&input)?;
//! // No times, no findings: the passes in plan order.
//! let html = plan.to_html(None, &[]);
//! // std::fs::write("frame.html", &html)?;
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! // The data names each barrier entry's cause.
//! assert!(html.contains("for `shade`, after `simulate`"));
//! # Ok::<(), vk_baton::Error>(())
//! ```
//!
//! For several frames, add each to a [`Report`], or let the graph capture its next executions
//! ([`Graph::capture_report`](crate::Graph::capture_report)): the page then has a frame
//! selector.

mod batches;
mod capture;
mod frame;
mod json;
mod page;

use crate::plan::Plan;
use crate::timing::GpuTimings;
use crate::violation::Violation;
pub use capture::ReportCapture;
use frame::FrameInput;
use json::Strings;

/// Several frames in one report, each added as it ran: see the [module](self).
///
/// ```no_run
/// # fn f(ctx: &vk_baton_context::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
/// use vk_baton::report::Report;
/// let graph = ctx.graph()?;
/// graph.set_gpu_timings(Some(ctx.timestamp_support()));
/// let mut report = Report::new("my renderer");
/// for frame in 0..3 {
///     let planned = graph.record().insert_pass("blur", pass, q).finish()?;
///     let plan = planned.plan().clone();
///     let fence = planned.execute()?;
///     fence.wait()?;
///     report.add_frame(&format!("frame {frame}"), &plan, fence.take_gpu_timings().as_ref(), &[]);
/// }
/// std::fs::write("frames.html", report.to_html()).expect("written");
/// # Ok(()) }
/// ```
pub struct Report {
    title: String,
    strings: Strings,
    /// Each frame's JSON object.
    frames: Vec<String>,
}

impl Report {
    /// An empty report; `title` heads the page.
    pub fn new(title: &str) -> Report {
        Report {
            title: title.to_owned(),
            strings: Strings::default(),
            frames: Vec::new(),
        }
    }

    /// Adds a frame: its plan, its GPU times where it was timed, and the verifier's findings
    /// on it (empty where it has none). `label` names it in the frame selector.
    pub fn add_frame(
        &mut self,
        label: &str,
        plan: &Plan,
        timings: Option<&GpuTimings>,
        findings: &[Violation],
    ) {
        let measured = timings.map_or_else(Vec::new, |t| by_pass(plan, t));
        let input = FrameInput {
            label,
            plan,
            measured: &measured,
            findings,
        };
        let mut out = String::new();
        frame::write(&mut out, &mut self.strings, &input);
        self.frames.push(out);
    }

    /// How many frames it holds.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The report as one HTML file.
    pub fn to_html(&self) -> String {
        page::html(&self.title, &self.strings, &self.frames)
    }
}

impl Plan {
    /// The plan as a one-frame HTML report, with its GPU times and the verifier's findings
    /// where there are some: see the [`report` module](crate::report).
    pub fn to_html(&self, timings: Option<&GpuTimings>, findings: &[Violation]) -> String {
        let mut report = Report::new("vk-baton plan");
        report.add_frame("plan", self, timings, findings);
        report.to_html()
    }
}

/// Per pass of `plan` (by index), its start and end in `timings`. A timing names its pass by
/// program-order index and name; one whose index names another pass is looked up by name.
fn by_pass(plan: &Plan, timings: &GpuTimings) -> Vec<Option<(u64, u64)>> {
    let passes = &plan.input.passes;
    let mut at = vec![None; passes.len()];
    for t in timings.passes() {
        let i = match passes.get(t.order) {
            Some(p) if p.name == t.pass() => Some(t.order),
            _ => passes.iter().position(|p| p.name == t.pass()),
        };
        if let Some(i) = i {
            at[i] = Some((t.start_ns(), t.end_ns()));
        }
    }
    at
}
#[cfg(test)]
mod tests;
