//! The raster matrix: every write a frame makes × every read that can consume what it wrote,
//! checked word for word on the GPU, in every placement of the writer and the reader
//! (issue "The library draws", item 6). Written from the synchronization contract
//! (`DESIGN.md`) and the Vulkan specification, through the public API only.
//!
//! - **Writes** (`cases.rs`, `Write`): a color attachment with load op CLEAR, one with load op
//!   LOAD and additive blending, a 4× multisampled attachment resolved into the data, a depth
//!   attachment, the stencil of a D32_SFLOAT_S8_UINT attachment written apart from its depth
//!   (depth tested read-only: one use per plane, `stencil.rs`), storage buffer writes from the
//!   fragment and the vertex shader, a buffer copy and fill, an image copy and clear, compute
//!   writes of a buffer and an image. The attachment writes use the stock `Render` pass.
//! - **Reads** (`Read`): vertex and index buffers, indirect draw and dispatch arguments,
//!   uniform, storage and sampled reads in the vertex and in the fragment shader, a
//!   read-only depth test, a stencil test, copies, a blit, and compute storage and sampled
//!   reads. The stencil row is read by a stencil test, a depth test of its depth alone, a copy
//!   of its stencil aspect and sampled reads of that aspect, each use narrowed to the plane it
//!   reads (`Use::aspect`). Input attachments are not in it: dynamic rendering reads them
//!   only with `VK_KHR_dynamic_rendering_local_read`, which vk-baton does not plan for.
//! - **Pairs** (`pairs()`): buffers written by storage, transfer and compute writes meet
//!   every buffer read; images written by attachments, resolves, transfers and compute meet
//!   every image read that their format allows; the stencil row meets its 5 reads.
//!   5 × 10 + 6 × 8 + 1 × 5 + 1 × 5 = 108 pairs.
//! - **Data**: each case writes 64 words of its own (from a host-written source buffer, or a
//!   fill value or clear colour), shaped so its read can take them (index values name distinct
//!   pixels, indirect arguments stay small, depths are k/256; the stencil row's word is
//!   `k << 8 | stencil`). The read turns every word it read into a word of its result: a
//!   point per word into an r32ui target (the value read in the vertex or fragment shader, the
//!   vertex attribute, the index, the indirect draw's vertex and instance numbers), a compute
//!   copy, a copy, a blit; the read-only depth test counts, per pixel, which of 255 depths
//!   pass; the stencil test adds each bit that passes an EQUAL test on it alone. The result
//!   is copied to a host buffer and compared with the CPU's model (`expected`), bit for bit.
//! - **Placements** (`placements.rs`): one queue; graphics → async compute → graphics across
//!   families with EXCLUSIVE (ownership transfers there and back) and with CONCURRENT data;
//!   two queues of the graphics family; the write in one graph and the read in the next; and
//!   each write on the queue made for it. Each GPU placement runs every case in one graph (two
//!   for the last-but-one), each case's passes one after the other, two frames; the gate
//!   (`common/gate.rs`) holds the graphics queue until everything is submitted, so a read
//!   that did not wait would run first. Lavapipe has one queue of one family: the placements
//!   it lacks are `#[ignore]`d here and run on the NVIDIA machine with `--include-ignored`
//!   (`.ci/nvidia.sh`); on a device without them they fail, naming what is missing.
//!   Across families (EXCLUSIVE) each plane of the data makes its own release and acquire each
//!   way (counted per plane: `placements::ownership_transfers`). Outside them, the read of
//!   the stencil row's depth alone must need no barrier on the data in the graph of the write
//!   (`gpu_stencil::depth_read_barriers`; also checked in the simulation).
//! - **Simulated** (`simulated.rs`): every placement, planned and verified frame after frame
//!   on a simulated NVIDIA-like topology (graphics, compute-only and transfer-only
//!   families), from the same pass declarations.
//!
//! Any validation message (synchronization validation included) fails a placement.

mod common;

#[path = "raster_matrix/cases.rs"]
mod cases;
#[path = "raster_matrix/gpu.rs"]
mod gpu;
#[path = "raster_matrix/gpu_passes.rs"]
mod gpu_passes;
#[path = "raster_matrix/gpu_stencil.rs"]
mod gpu_stencil;
#[path = "raster_matrix/kit.rs"]
mod kit;
#[path = "raster_matrix/placements.rs"]
mod placements;
#[path = "raster_matrix/resources.rs"]
mod resources;
#[cfg(feature = "verify")]
#[path = "raster_matrix/simulated.rs"]
mod simulated;
#[path = "raster_matrix/stencil.rs"]
mod stencil;

use cases::*;
use placements::{run, Placement, PLACEMENTS};

/// The pairs, listed, and the size of the matrix.
#[test]
fn matrix_lists_its_pairs() {
    let pairs = pairs();
    for p in &pairs {
        println!(
            "{:3} {:?} ({:?}) -> {:?}",
            p.index,
            p.write,
            p.kind(),
            p.read
        );
    }
    let per_kind = |k: Kind| WRITES.iter().filter(|w| w.kind() == k).count() * reads_of(k).len();
    assert_eq!(
        (
            per_kind(Kind::Buffer),
            per_kind(Kind::Color),
            per_kind(Kind::Depth),
            per_kind(Kind::Stencil)
        ),
        (50, 48, 5, 5)
    );
    assert_eq!(pairs.len(), 108);
    println!(
        "{} pairs x {} placements = {} cases",
        pairs.len(),
        PLACEMENTS.len(),
        pairs.len() * PLACEMENTS.len()
    );
}

/// A word changed the way a missed write would change it, still shaped for its read.
fn perturb(p: &Pair, w: u32) -> u32 {
    match (p.kind(), p.read) {
        // Depth step and stencil both: each read takes one.
        (Kind::Stencil, _) => w ^ 0x0101,
        (Kind::Depth, _) => {
            let k = (f32::from_bits(w) * 256.0) as u32;
            (((k + 1) % 255) as f32 / 256.0).to_bits()
        }
        (_, Read::IndexBuffer) => w ^ 1 << 16,
        (_, Read::IndirectDraw) => w ^ 1,
        (_, Read::IndirectDispatch) => w % 4 + 1,
        _ => w ^ 0x0101_0101,
    }
}

/// The CPU model's result depends on every word a read takes (all 64, but the first four of
/// indirect draw arguments and the first three of dispatch arguments): a model that ignored
/// a word would let a wrong word pass on the GPU.
#[test]
fn matrix_model_depends_on_every_word() {
    for p in pairs() {
        let c = content(&p, &source(&p, 0));
        let want = expected(&p, &c);
        let used = match p.read {
            Read::IndirectDraw => 4,
            Read::IndirectDispatch => 3,
            _ => WORDS,
        };
        for i in 0..used {
            let mut other = c.clone();
            other[i] = perturb(&p, c[i]);
            assert_ne!(expected(&p, &other), want, "{} ignores word {i}", p.name());
        }
    }
}

#[test]
fn gpu_one_queue() {
    run(Placement::OneQueue);
}

#[test]
fn gpu_two_graphs() {
    run(Placement::TwoGraphs);
}

#[test]
#[ignore = "needs a compute-only queue family (run on the NVIDIA machine)"]
fn gpu_families_exclusive() {
    run(Placement::FamiliesExclusive);
}

#[test]
#[ignore = "needs a compute-only queue family (run on the NVIDIA machine)"]
fn gpu_families_concurrent() {
    run(Placement::FamiliesConcurrent);
}

#[test]
#[ignore = "needs two queues in the graphics family (run on the NVIDIA machine)"]
fn gpu_two_queues_of_one_family() {
    run(Placement::TwoQueues);
}

#[test]
#[ignore = "needs compute-only and transfer-only queue families (run on the NVIDIA machine)"]
fn gpu_writer_queues() {
    run(Placement::WriterQueues);
}

#[cfg(feature = "verify")]
mod sim {
    use super::placements::Placement;
    use super::simulated::{simulate, SIM_FRAMES};

    fn check(placement: Placement) {
        let transfers = simulate(placement);
        assert_eq!(transfers.len(), SIM_FRAMES);
        if let Some(want) = placement.transfers(&super::pairs()) {
            assert!(
                transfers.iter().all(|&t| t == want),
                "{placement:?}: ownership-transfer barriers per frame {transfers:?}, expected {want}"
            );
        }
        println!("{placement:?}: {SIM_FRAMES} frames verified, transfers per frame {transfers:?}");
    }

    #[test]
    fn simulated_one_queue() {
        check(Placement::OneQueue);
    }
    #[test]
    fn simulated_families_exclusive() {
        check(Placement::FamiliesExclusive);
    }
    #[test]
    fn simulated_families_concurrent() {
        check(Placement::FamiliesConcurrent);
    }
    #[test]
    fn simulated_two_queues_of_one_family() {
        check(Placement::TwoQueues);
    }
    #[test]
    fn simulated_two_graphs() {
        check(Placement::TwoGraphs);
    }
    #[test]
    fn simulated_writer_queues() {
        check(Placement::WriterQueues);
    }
}
