//! The plain data of recording: the pieces a batch is cut into, the jobs that record them,
//! and the per-frame lists that hold both, kept in the graph's spares.

use ash::vk;
use std::ops::Range;

/// Consecutive commands of one batch, recorded by one thread into one primary command buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Indices into the batch's commands.
    pub(crate) commands: Range<usize>,
    /// The thread that records it: 0 is the thread that calls `execute()`.
    pub(crate) thread: usize,
}

/// A piece with its command buffer, ready to record.
pub(crate) struct Job {
    pub(super) queue: usize,
    pub(super) batch: usize,
    pub(super) commands: Range<usize>,
    /// The thread that records it (0 without recording threads).
    #[cfg_attr(not(feature = "parallel-recording"), allow(dead_code))]
    pub(super) thread: usize,
    pub(super) cmd: vk::CommandBuffer,
    /// The batch's timestamp queries, reset at the start of its first piece (without host
    /// reset).
    pub(super) reset: Option<Range<u32>>,
}

/// The per-frame lists of recording, kept in the graph's spares.
#[derive(Default)]
pub(crate) struct RecordingLists {
    pub(super) pieces: Vec<Piece>,
    /// Per batch of every queue, in queue order: where its pieces end in `pieces`.
    pub(super) piece_ends: Vec<usize>,
    pub(super) jobs: Vec<Job>,
    /// Per pass: its first timestamp query, if timed.
    pub(super) queries: Vec<Option<u32>>,
}
