//! The vk-baton side: the graph records, plans (or reuses the last plan) and executes each
//! frame, as an app would: `graph.record()` … `finish()?.execute()?`.

use crate::timer::{FrameTimer, Stamps};
use crate::workload::{read_of, record_pass, write_of};
use ash::vk;
use std::sync::Arc;
use vk_baton::{Access, Declare, Graph, Pass, Queue, Recorder, StBuffer};

/// Pass `i` of the workload.
pub struct Step {
    bufs: Arc<Vec<Arc<StBuffer>>>,
    handles: Arc<Vec<vk::Buffer>>,
    i: usize,
}

impl Pass for Step {
    fn declare(&self, d: &mut Declare<'_>) {
        let dst = &self.bufs[write_of(self.i)];
        match read_of(self.i) {
            // vkCmdFillBuffer is a transfer write of no narrower stage.
            None => {
                d.uses(dst, Access::TRANSFER_WRITE).discard();
            }
            Some(src) => {
                d.uses(&self.bufs[src], Access::COPY_READ);
                d.uses(dst, Access::COPY_WRITE).discard();
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // SAFETY: recording; the graph keeps the buffers alive and ordered.
        unsafe { record_pass(r.device(), r.cmd(), &self.handles, self.i) };
        Ok(())
    }
}

/// The first or last command of the frame: a pass that uses nothing and writes a timestamp.
pub struct Stamp {
    stamps: Stamps,
    start: bool,
}

impl Pass for Stamp {
    fn declare(&self, _: &mut Declare<'_>) {}

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        // SAFETY: recording on the graphics queue; the previous frame was waited for.
        unsafe {
            if self.start {
                self.stamps.start(r.device(), r.cmd())
            } else {
                self.stamps.end(r.device(), r.cmd())
            }
        };
        Ok(())
    }
}

/// The passes of one `n`-pass frame, made once and inserted every frame.
pub struct Baton {
    pub timer: FrameTimer,
    first: Stamp,
    steps: Vec<Step>,
    last: Stamp,
}

impl Baton {
    pub fn new(timer: FrameTimer, bufs: &Arc<Vec<Arc<StBuffer>>>, n: usize) -> Baton {
        let handles = Arc::new(bufs.iter().map(|b| b.handle()).collect::<Vec<_>>());
        let stamps = timer.stamps();
        Baton {
            timer,
            first: Stamp {
                stamps,
                start: true,
            },
            steps: (0..n)
                .map(|i| Step {
                    bufs: bufs.clone(),
                    handles: handles.clone(),
                    i,
                })
                .collect(),
            last: Stamp {
                stamps,
                start: false,
            },
        }
    }

    /// Records, plans and executes one frame; returns its fence after the submit.
    pub fn frame(&mut self, graph: &Graph, q: &Queue) -> vk_baton::ExecutionFence {
        let mut b = graph.record().insert_pass("stamp", &mut self.first, q);
        for s in &mut self.steps {
            b = b.insert_pass("step", s, q);
        }
        b.insert_pass("stamp", &mut self.last, q)
            .finish()
            .expect("plan")
            .execute()
            .expect("execute")
    }

    /// The plan of one frame, as vk-baton prints it.
    pub fn plan_text(&mut self, graph: &Graph, q: &Queue) -> String {
        let mut b = graph.record().insert_pass("stamp", &mut self.first, q);
        for s in &mut self.steps {
            b = b.insert_pass("step", s, q);
        }
        let planned = b
            .insert_pass("stamp", &mut self.last, q)
            .finish()
            .expect("plan");
        let text = planned.plan().to_string();
        planned.execute().expect("execute").wait().expect("wait");
        text
    }
}
