//! `--replay`: which frames of the frame loop recorded, and how many replayed.

/// `--replay`: which frames recorded and how many replayed. The first frame has a plan of its
/// own (it waits for the upload); after it, a frame records only the first time its heap set
/// comes under the steady plan, and every other frame replays.
#[derive(Default)]
pub struct Replays {
    recorded: Vec<u32>,
    replayed: u32,
    /// Heap sets the graph has made.
    sets: usize,
}

impl Replays {
    /// Counts frame `n`, which `replayed` or recorded, after which the graph has `sets` heap
    /// sets.
    pub fn frame(&mut self, n: u32, replayed: bool, sets: usize) {
        match replayed {
            true => self.replayed += 1,
            false => self.recorded.push(n),
        }
        self.sets = sets;
    }

    /// Whether frames replayed, and only the first frame and the first on each heap set
    /// recorded.
    pub fn ok(&self) -> bool {
        self.replayed > 0 && self.recorded.len() <= 1 + self.sets
    }

    /// "replayed 57 of 60 frames (recorded: frames 0, 1, 2; 2 heap set(s))".
    pub fn summary(&self, frames: u32) -> String {
        let recorded: Vec<String> = self.recorded.iter().map(u32::to_string).collect();
        format!(
            "replayed {} of {frames} frames (recorded: frames {}; {} heap set(s))",
            self.replayed,
            recorded.join(", "),
            self.sets
        )
    }
}
