//! Declared unordered writes across queues, frame after frame: atomics into a histogram on
//! async compute and disjoint tiles of an atlas on graphics, read together on graphics.

use super::*;
use vk_baton::plan::{Command, Region, Unordered};

/// ```text
/// async compute: [clear] [bin 0] [bin 1] ------------.
/// graphics:      [tile 0] [tile 1] ------------------+--> [composite: atlas + histogram]
/// ```
///
/// The bins are one group of atomics and the tiles one group of disjoint writes: on every
/// topology, no barrier command lies between the two members of a group, on the members'
/// queue. The composite waits for every member. The next frame's clear and tiles wait for the
/// last frame's composite (write after read), with any transfer back. Each frame is verified
/// alone and chained with the frames before it.
pub(crate) fn groups_on_two_queues(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let hist = s.buf(
        "histogram",
        1024,
        XFER | vk::BufferUsageFlags::STORAGE_BUFFER,
    );
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let atlas = s.img("atlas", 1, 1, storage);
    let atomic = |name: &str, q| {
        pass(
            name,
            q,
            [u(hist, Access::COMPUTE_SHADER_READ_WRITE).unordered(Unordered::Atomic)],
        )
    };
    let tile = |name: &str, q, x| {
        let region = Region::texels([x, 0, 0], [128, 128, 1]);
        pass(
            name,
            q,
            [u(atlas, Access::COMPUTE_SHADER_WRITE).unordered(Unordered::Disjoint(region))],
        )
    };
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass("clear", s.c, [ud(hist, Access::TRANSFER_WRITE)]),
            atomic("bin 0", s.c),
            atomic("bin 1", s.c),
            tile("tile 0", s.g, 0),
            tile("tile 1", s.g, 128),
            pass(
                "composite",
                s.g,
                [
                    u(atlas, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    u(hist, Access::FRAGMENT_SHADER_STORAGE_READ),
                ],
            ),
        ]);
        for (first, second) in [(1, 2), (3, 4)] {
            assert!(
                adjacent(&r, first, second),
                "{topo:?} frame {f}: a barrier between passes {first} and {second}\n{}",
                r.plan
            );
        }
    }
    FRAMES
}

/// Whether pass `b` follows pass `a` in one batch with nothing but passes between them.
fn adjacent(r: &FrameReport, a: usize, b: usize) -> bool {
    r.plan.queues.iter().flat_map(|q| &q.batches).any(|batch| {
        let at = |p| {
            batch
                .commands
                .iter()
                .position(|c| matches!(c, Command::Pass(x) if *x == p))
        };
        match (at(a), at(b)) {
            (Some(i), Some(j)) => {
                i < j
                    && batch.commands[i..j]
                        .iter()
                        .all(|c| matches!(c, Command::Pass(_)))
            }
            _ => false,
        }
    })
}
