//! The locks a frame takes: at most three acquisitions of the graph's and executor's own
//! mutexes ([`crate::sync::Mutex`]) for a frame that reuses its plan, whether built by a
//! builder or held, and one of each resource's state lock
//! ([`crate::resource::TrackedState`]) in release builds.

use crate::sync::acquisitions;
use crate::{Access, BufferDesc, Context, Declare, Pass, Recorder, StBuffer};
use ash::vk;
use std::sync::Arc;

/// Copies `bufs[i]` into `bufs[i + 1]` (pass 0 fills `bufs[1]`: a fill runs at the clear
/// stage, which `TRANSFER_WRITE` covers and `COPY_WRITE` does not).
struct Step {
    bufs: Arc<Vec<Arc<StBuffer>>>,
    i: usize,
}

impl Pass for Step {
    fn declare(&self, d: &mut Declare<'_>) {
        let dst = &self.bufs[self.i + 1];
        if self.i == 0 {
            d.uses(dst, Access::TRANSFER_WRITE).discard();
        } else {
            d.uses(&self.bufs[self.i], Access::COPY_READ);
            d.uses(dst, Access::COPY_WRITE).discard();
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> crate::Result<()> {
        let dst = self.bufs[self.i + 1].handle();
        let region = vk::BufferCopy::default().size(64);
        // SAFETY: `cmd` is recording; the buffers are alive and in the declared states.
        unsafe {
            if self.i == 0 {
                (r.device()).cmd_fill_buffer(r.cmd(), dst, 0, vk::WHOLE_SIZE, 7);
            } else {
                let src = self.bufs[self.i].handle();
                r.device().cmd_copy_buffer(r.cmd(), src, dst, &[region]);
            }
        }
        Ok(())
    }
}

const MAX_LOCKS: u64 = 3;

/// A frame that reuses its plan takes at most [`MAX_LOCKS`] of the graph's and executor's own
/// mutexes, from `record()` to the fence's `wait()`: built by a builder, and held.
#[test]
fn a_reused_frame_takes_at_most_three_locks() {
    let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let bufs: Arc<Vec<_>> = Arc::new(
        (0..5)
            .map(|i| ctx.buffer(BufferDesc::new(64, usage), &format!("b{i}")))
            .collect::<crate::Result<_>>()
            .unwrap(),
    );
    let mut steps: Vec<_> = (0..4)
        .map(|i| Step {
            bufs: bufs.clone(),
            i,
        })
        .collect();

    let mut builder_frame = || {
        let before = acquisitions();
        let mut b = graph.record();
        for s in steps.iter_mut() {
            b = b.insert_pass("step", s, &q);
        }
        let planned = b.finish().unwrap();
        let reused = planned.reused();
        planned.execute().unwrap().wait().unwrap();
        let locks = (acquisitions().0 - before.0, acquisitions().1 - before.1);
        (reused, locks)
    };
    for _ in 0..3 {
        builder_frame();
    }
    let (reused, (builder, builder_states)) = builder_frame();
    assert!(reused);

    let mut held = {
        let mut b = graph.record();
        for s in steps.iter_mut() {
            b = b.insert_pass("step", s, &q);
        }
        b.finish().unwrap().hold()
    };
    for _ in 0..3 {
        held.execute().unwrap().wait().unwrap();
    }
    let before = acquisitions();
    held.execute().unwrap().wait().unwrap();
    let held_locks = acquisitions().0 - before.0;
    let held_states = acquisitions().1 - before.1;
    assert_eq!(held.replanned(), 0);
    drop(held);

    eprintln!("locks per reused frame: builder {builder}, held {held_locks}");
    eprintln!("resource state locks: builder {builder_states}, held {held_states}");
    // At rest, a frame reads each resource's published version and takes its lock once, to
    // check and commit at submit time; debug builds lock it once more, to check the state
    // the rebind took on trust. The steps use buffers 1 to 4.
    let per_resource = if cfg!(debug_assertions) { 2 } else { 1 };
    assert_eq!(builder_states, 4 * per_resource);
    assert_eq!(held_states, 4 * per_resource);
    assert!(builder <= MAX_LOCKS, "a builder frame took {builder} locks");
    assert!(
        held_locks <= MAX_LOCKS,
        "a held frame took {held_locks} locks"
    );
    assert_eq!(
        ctx.validation_messages(),
        0,
        "{}",
        ctx.validation_messages()
    );
}

/// A frame reused at rest under other pass names (borrowed or owned) reports them: the
/// kept plan's declarations take the frame's names, and nothing else changes.
#[test]
fn a_frame_reused_at_rest_takes_its_pass_names() {
    let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
    let graph = ctx.graph().unwrap();
    let q = ctx.graphics().clone();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let bufs: Arc<Vec<_>> = Arc::new(
        (0..4)
            .map(|i| ctx.buffer(BufferDesc::new(64, usage), &format!("b{i}")))
            .collect::<crate::Result<_>>()
            .unwrap(),
    );
    let mut steps: Vec<_> = (0..3)
        .map(|i| Step {
            bufs: bufs.clone(),
            i,
        })
        .collect();
    let mut frame = |renamed: bool| {
        let mut b = graph.record();
        for (k, s) in steps.iter_mut().enumerate() {
            b = match renamed {
                true => b.insert_pass(format!("renamed {k}"), s, &q),
                false => b.insert_pass("step", s, &q),
            };
        }
        let planned = b.finish().unwrap();
        let names: Vec<String> = (planned.plan().input.passes.iter())
            .map(|p| p.name.clone())
            .collect();
        let at_rest = planned.at_rest();
        planned.execute().unwrap().wait().unwrap();
        (at_rest, names)
    };
    for _ in 0..4 {
        frame(false);
    }
    let (at_rest, names) = frame(true);
    assert!(at_rest, "the frame declares what the last one did");
    assert_eq!(names, ["renamed 0", "renamed 1", "renamed 2"]);
    let (at_rest, names) = frame(false);
    assert!(at_rest);
    assert_eq!(names, ["step"; 3]);
    assert_eq!(ctx.validation_messages(), 0);
}
