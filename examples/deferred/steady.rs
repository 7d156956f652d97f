//! The frame loop's steady frames: which frames count, and what they made.
//!
//! The first `FRAMES_IN_FLIGHT` frames make the heap sets and objects. After them, a frame may
//! still make the heap set of a frame in flight: a fast GPU may finish the first frames before
//! the next one binds, so that two frames first overlap (and need two sets) later on, on any
//! frame up to the last. Each frame is judged on its own, from the graph's stats around it: one
//! that made the set of a frame in flight (at most `FRAMES_IN_FLIGHT` sets) is left out; every
//! other frame after the first ones is steady and must reuse its plan and make nothing (one
//! more set is a miss).

use std::time::Duration;
use vk_baton::TransientStats;

/// What the steady frames did, frame by frame.
pub struct Steady {
    frames_in_flight: usize,
    /// Steady frames so far.
    pub frames: u32,
    /// Of them, those that reused their plan.
    pub reused: u32,
    /// Heaps allocated and Vulkan objects created by them.
    pub made: (u64, u64),
    /// The frames after the first ones that made the heap set of a frame in flight.
    pub late_sets: Vec<u32>,
    /// Wall-clock time of the steady frames: each from its wait for a fence to its execute,
    /// and the loop's final wait for the frames in flight.
    pub time: Duration,
}

impl Steady {
    pub fn new(frames_in_flight: usize) -> Self {
        Self {
            frames_in_flight,
            frames: 0,
            reused: 0,
            made: (0, 0),
            late_sets: Vec::new(),
            time: Duration::ZERO,
        }
    }

    /// Counts frame `n`, which took `time`, reused its plan or not, and found the graph's
    /// stats at `before` and left them at `after`.
    pub fn frame(
        &mut self,
        n: u32,
        (before, after): (&TransientStats, &TransientStats),
        reused: bool,
        time: Duration,
    ) {
        if (n as usize) < self.frames_in_flight {
            return;
        }
        if after.sets > before.sets && after.sets <= self.frames_in_flight {
            self.late_sets.push(n);
            return;
        }
        self.frames += 1;
        self.reused += reused as u32;
        self.made.0 += after.heap_allocations - before.heap_allocations;
        self.made.1 += after.objects_created - before.objects_created;
        self.time += time;
    }

    /// Whether there were steady frames and each reused its plan and made nothing.
    pub fn ok(&self) -> bool {
        self.frames > 0 && self.reused == self.frames && self.made == (0, 0)
    }

    /// Which frames were steady, for `frames` frames in all: "frames 2 to 5", with any left out.
    pub fn which(&self, frames: u32) -> String {
        let mut s = format!("frames {} to {}", self.frames_in_flight, frames - 1);
        for n in &self.late_sets {
            s += &format!(" but {n}, which made the heap set of a frame in flight");
        }
        s
    }
}
