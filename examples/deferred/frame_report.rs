//! `--report FILE.html`: the scene's upload and the last frames (up to three) in one HTML report
//! (`vk_baton::report`), each with its plan, its GPU times (the graph times every pass) and what
//! the verifier finds in it (nothing, in a correct frame). The upload runs on the transfer
//! queue, the frames on graphics and async compute: together, every family the sample uses.

use vk_baton::plan::Plan;
use vk_baton::report::Report;
use vk_baton::timing::GpuTimings;
use vk_baton::verify::Violation;
use vk_baton::ExecutionFence;

/// How many of the last frames go in.
const FRAMES: u32 = 3;
/// The number the upload goes by (frames count from 0).
pub const UPLOAD: u32 = u32::MAX;

/// The frames kept, and their times and findings once complete.
pub struct FrameReport {
    /// The first frame that goes in.
    first: u32,
    /// Per frame: its number, plan, and once complete, its GPU times and findings.
    frames: Vec<Frame>,
}

struct Frame {
    n: u32,
    plan: Plan,
    done: Option<(Option<GpuTimings>, Vec<Violation>)>,
}

impl FrameReport {
    /// A report of the last frames of `frames`.
    pub fn new(frames: u32) -> Self {
        FrameReport {
            first: frames.saturating_sub(FRAMES),
            frames: Vec::new(),
        }
    }

    /// Frame `n` (or the [`UPLOAD`]) was planned as `plan`: kept if it is one of the last.
    pub fn planned(&mut self, n: u32, plan: &Plan) {
        if n >= self.first || n == UPLOAD {
            let plan = plan.clone();
            self.frames.push(Frame {
                n,
                plan,
                done: None,
            });
        }
    }

    /// Frame `n` completed (its fence was waited for): its times and findings go in.
    pub fn completed(&mut self, n: u32, fence: &ExecutionFence) {
        if let Some(f) = self.frames.iter_mut().find(|f| f.n == n) {
            let findings = f.plan.verify().err().unwrap_or_default();
            f.done = Some((fence.take_gpu_timings(), findings));
        }
    }

    /// Writes the report to `path`: the upload first, then the frames in order.
    pub fn write(&self, path: &std::path::Path) -> vk_baton::Result<()> {
        let mut report = Report::new("deferred: the upload and the last frames");
        let upload = self.frames.iter().filter(|f| f.n == UPLOAD);
        let frames = self.frames.iter().filter(|f| f.n != UPLOAD);
        for f in upload.chain(frames) {
            let label = match f.n {
                UPLOAD => "upload".to_string(),
                n => format!("frame {n}"),
            };
            let (times, findings) = f
                .done
                .as_ref()
                .map_or((None, &[][..]), |(t, v)| (t.as_ref(), &v[..]));
            report.add_frame(&label, &f.plan, times, findings);
        }
        std::fs::write(path, report.to_html())
            .map_err(|e| vk_baton::Error::InvalidInput(format!("{}: {e}", path.display())))?;
        println!(
            "wrote {} (report of the upload and the last {} frames: plans, GPU times, findings)",
            path.display(),
            report.frames() - 1
        );
        Ok(())
    }
}
