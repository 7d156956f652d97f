//! The graph's replay settings ([`Graph::set_replay`], [`Graph::invalidate_recordings`]):
//! what the prepared frames (`src/prepared/replays.rs`) and the recording step
//! (`src/exec/record/replay.rs`) read.

use super::Graph;
use std::sync::atomic::Ordering;

impl Graph {
    /// Whether a frame submits the command buffers an earlier execution of its plan recorded
    /// again, instead of recording (off by default). A frame replays when its plan is the one
    /// the recording was made for (a plan reused at any tier: only timeline values and binary
    /// semaphores moved, and those are in the submit), every pass gives the
    /// [replay key](crate::Pass::replay_key) it gave then, every resource is the same object
    /// (by identity, not handle; for a transient, the same object of its heap set), and
    /// labels, GPU timings and the layout policy are as they were. Otherwise it records, as
    /// without replay, and keeps the new recording. A replay calls no pass's `record()`;
    /// passes that ask for it do their bookkeeping in
    /// [`Pass::replayed`](crate::Pass::replayed). Timed frames read the recording's timestamp
    /// queries again, and a frame recorded on several threads keeps its pieces. Handoffs
    /// record every time.
    ///
    /// A frame keeps at most three recordings of its plan (one per execution in flight, and
    /// one more), each a command buffer per batch, and a graph keeps a few frames
    /// ([`plan::KEPT_PLANS`](crate::plan::KEPT_PLANS)): memory is bounded. With replay on,
    /// each set of resources keeps a frame of its own while there is room (a frame per
    /// swapchain image, say), so that its recordings stay. [`ExecutionFence::replayed`](crate::ExecutionFence::replayed) tells whether
    /// an execution replayed.
    ///
    /// The contents of buffers and images may change between replays (uniforms, indirect
    /// arguments, instance data the host writes): that is the point. What the commands name
    /// may not: see [`ReplayKey::new`](crate::pass::ReplayKey::new).
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// graph.set_replay(true);
    /// for _ in 0..3 {
    ///     let fence = graph.record().insert_pass("p", &mut *pass, q).finish()?.execute()?;
    ///     fence.wait()?;
    ///     println!("replayed: {}", fence.replayed());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn set_replay(&self, on: bool) {
        self.replay.store(on, Ordering::Relaxed);
        self.kept.lock().cache.own_frames = on;
    }

    /// Makes every recording this graph kept stale, for frames to record again: for example
    /// after the app rebuilt a pipeline that passes name without changing their keys.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// // ... the shaders were reloaded into the same pipeline objects' places ...
    /// graph.invalidate_recordings();
    /// # }
    /// ```
    pub fn invalidate_recordings(&self) {
        self.pools.invalidate_recordings();
    }

    /// Whether executions keep their recordings ([`Graph::set_replay`]).
    pub(crate) fn replay_on(&self) -> bool {
        self.replay.load(Ordering::Relaxed)
    }
}
