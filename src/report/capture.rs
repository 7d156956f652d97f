//! [`Graph::capture_report`]: a graph's next executions, each added to a report when it
//! completes, with its GPU times where the graph is timed and what the verifier finds in it.
//!
//! The graph's part ([`ReportHooks`], installed in its extensions) hands each execution it
//! still wants a part of its own with a copy of the plan; that part adds the frame when the
//! execution completes, whether a fence saw it or not.

use super::Report;
use crate::extensions::{ReportHooks, ReportRun};
use crate::plan::Plan;
use crate::Graph;
use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;

/// What the capture's handle, the graph's part and the executions' parts share.
struct Shared {
    report: Report,
    /// The number the next execution captured gets.
    next: usize,
    /// How many executions to capture.
    wanted: usize,
    /// How many of them completed and went in.
    completed: usize,
}

/// The report of a graph's next executions, filled as they complete: see
/// [`Graph::capture_report`].
pub struct ReportCapture(Arc<Mutex<Shared>>);

impl Graph {
    /// Captures this graph's next `executions` executions into a report titled `title`: each
    /// goes in when it completes (labelled `execution 0`, `execution 1`, ...), with its plan,
    /// its GPU times if the graph is timed ([`Graph::set_gpu_timings`]), and what
    /// [`Plan::verify`] finds in it. A replayed execution goes in like any other. A later call
    /// starts a new capture; executions already captured still complete into the earlier one.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let graph = ctx.graph()?;
    /// graph.set_gpu_timings(Some(ctx.timestamp_support()));
    /// let capture = graph.capture_report("my renderer", 3);
    /// for _ in 0..3 {
    ///     graph.record().insert_pass("blur", pass, q).finish()?.execute()?.wait()?;
    /// }
    /// assert!(capture.is_done());
    /// std::fs::write("frames.html", capture.to_html()).expect("written");
    /// # Ok(()) }
    /// ```
    pub fn capture_report(&self, title: &str, executions: usize) -> ReportCapture {
        let shared = Arc::new(Mutex::new(Shared {
            report: Report::new(title),
            next: 0,
            wanted: executions,
            completed: 0,
        }));
        log::debug!("capturing the next {executions} execution(s) into the report `{title}`");
        self.pools().extensions().report = Some(Box::new(Capture(shared.clone())));
        ReportCapture(shared)
    }
}

impl ReportCapture {
    /// How many of the captured executions completed and went in.
    pub fn completed(&self) -> usize {
        self.0.lock().completed
    }

    /// Whether every execution asked for completed and went in.
    pub fn is_done(&self) -> bool {
        let s = self.0.lock();
        s.completed == s.wanted
    }

    /// The report of the executions that completed so far, as one HTML file.
    pub fn to_html(&self) -> String {
        self.0.lock().report.to_html()
    }
}

/// The graph's part.
struct Capture(Arc<Mutex<Shared>>);

impl ReportHooks for Capture {
    fn start(&mut self, plan: &Plan) -> Option<Box<dyn ReportRun>> {
        let mut s = self.0.lock();
        if s.next == s.wanted {
            return None;
        }
        s.next += 1;
        Some(Box::new(Run {
            shared: self.0.clone(),
            number: s.next - 1,
            plan: plan.clone(),
        }))
    }
}

/// One captured execution's part.
struct Run {
    shared: Arc<Mutex<Shared>>,
    number: usize,
    plan: Plan,
}

impl ReportRun for Run {
    fn complete(self: Box<Self>, timing: Option<&mut dyn Any>) {
        let times = timing.and_then(crate::timing::completed_times);
        let findings = self.plan.verify().err().unwrap_or_default();
        let label = format!("execution {}", self.number);
        let mut s = self.shared.lock();
        s.report.add_frame(&label, &self.plan, times, &findings);
        s.completed += 1;
    }
}
