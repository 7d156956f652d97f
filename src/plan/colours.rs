//! The colours a plan is drawn in, shared by its diagram and by the debug labels recorded
//! around its passes and barrier commands, so that a capture and the diagram match.

/// One colour per planner queue, in queue order (repeating after six). No purple or orange:
/// those mean ownership and binary semaphores in the diagram.
pub(crate) const QUEUES: [[u8; 3]; 6] = [
    [0x2f, 0x6d, 0xb5], // blue
    [0x23, 0x8b, 0x4f], // green
    [0xb0, 0x3a, 0x2e], // brick
    [0x1d, 0x8a, 0x99], // teal
    [0x86, 0x6a, 0x1c], // olive
    [0xbf, 0x3f, 0x7f], // rose
];

/// Barrier commands that release or acquire ownership.
pub(crate) const OWNERSHIP: [u8; 3] = [0x7b, 0x3f, 0xa8];

/// Plain barrier commands.
pub(crate) const BARRIER: [u8; 3] = [0x4a, 0x4a, 0x4a];

/// Planner queue `queue`'s colour as RGB bytes.
pub(crate) fn queue_rgb(queue: usize) -> [u8; 3] {
    QUEUES[queue % QUEUES.len()]
}

/// A barrier command's colour as RGB bytes (`ownership`: it transfers ownership).
pub(crate) fn barrier_rgb(ownership: bool) -> [u8; 3] {
    if ownership {
        OWNERSHIP
    } else {
        BARRIER
    }
}
