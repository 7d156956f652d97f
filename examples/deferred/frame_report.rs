//! `--report FILE.html`: the last frames (up to three) in one HTML report
//! (`vk_baton::report`), each with its plan, its GPU times (the graph times every pass) and what
//! the verifier finds in it (nothing, in a correct frame).

use vk_baton::plan::Plan;
use vk_baton::report::Report;
use vk_baton::ExecutionFence;

/// How many of the last frames go in.
const FRAMES: u32 = 3;

/// The report being made, and the plans of the frames still running.
pub struct FrameReport {
    report: Report,
    /// The first frame that goes in.
    first: u32,
    running: Vec<(u32, Plan)>,
}

impl FrameReport {
    /// A report of the last frames of `frames`.
    pub fn new(frames: u32) -> Self {
        FrameReport {
            report: Report::new("deferred: the last frames"),
            first: frames.saturating_sub(FRAMES),
            running: Vec::new(),
        }
    }

    /// Frame `n` was planned as `plan`: kept if it is one of the last.
    pub fn planned(&mut self, n: u32, plan: &Plan) {
        if n >= self.first {
            self.running.push((n, plan.clone()));
        }
    }

    /// Frame `n` completed (its fence was waited for): its times and findings go in.
    pub fn completed(&mut self, n: u32, fence: &ExecutionFence) {
        let Some(i) = self.running.iter().position(|(m, _)| *m == n) else {
            return;
        };
        let (_, plan) = self.running.remove(i);
        let findings = plan.verify().err().unwrap_or_default();
        let times = fence.take_gpu_timings();
        let label = format!("frame {n}");
        self.report
            .add_frame(&label, &plan, times.as_ref(), &findings);
    }

    /// Writes the report to `path`.
    pub fn write(&self, path: &std::path::Path) -> vk_baton::Result<()> {
        std::fs::write(path, self.report.to_html())
            .map_err(|e| vk_baton::Error::InvalidInput(format!("{}: {e}", path.display())))?;
        println!(
            "wrote {} (report of the last {} frames: plans, GPU times, findings)",
            path.display(),
            self.report.frames()
        );
        Ok(())
    }
}
