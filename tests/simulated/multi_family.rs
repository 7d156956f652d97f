//! Scenarios restating `tests/multi_family.rs`.

use super::*;

/// Mirrors `tests/multi_family.rs::compute_to_graphics_buffer_ownership_transfer` (`Fill`,
/// `CopyBuffer`, `HostRead` from tests/common), and `concurrent_sharing_needs_no_transfer`
/// when `concurrent`, repeated every frame.
pub(crate) fn compute_to_graphics_buffer(topo: Topo, concurrent: bool) -> usize {
    let mut s = S::new(topo);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
    let mut decl = ResourceDecl::buffer("storage", 16384, usage);
    // CONCURRENT only where the two families differ (`Sharing` dedups one family).
    decl.concurrent = concurrent && s.cross(s.c, s.g);
    let storage = s.sim.add_resource(decl);
    let readback = s.buf("readback", 16384, vk::BufferUsageFlags::TRANSFER_DST);
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass("fill", s.c, [ud(storage, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "copy",
                s.g,
                [
                    u(storage, Access::TRANSFER_READ),
                    ud(readback, Access::TRANSFER_WRITE),
                ],
            ),
            pass("host read", s.g, [u(readback, Access::HOST_READ)]),
        ]);
        let transfer = s.cross(s.c, s.g) && !concurrent;
        if f == 0 {
            // The GPU test's assertions: one release/acquire pair (exclusive), one wait.
            let pair = if transfer { (1, 1) } else { (0, 0) };
            assert_eq!(releases_acquires(&s, &r, s.c, s.g), pair, "{topo:?}");
            let w = usize::from(s.c != s.g);
            check(&s, "first frame", &r, (1 + w, w, 2 * pair.0));
        } else {
            let want = writer_reader_steady(&s, s.c, s.g, concurrent);
            check(&s, "steady", &r, want);
        }
    }
    let owner = s.sim.state(storage).unwrap()[0].1.owner;
    let want_owner = (!(concurrent && s.cross(s.c, s.g))).then(|| s.family(s.g));
    assert_eq!(
        owner, want_owner,
        "{topo:?}: the storage ends owned by graphics"
    );
    FRAMES
}

/// Mirrors `tests/multi_family.rs::pattern_pixels` (`Draw`, `ImageToBuffer`, `HostRead`) for
/// `compute_to_graphics_image_ownership_transfer`, which draws on graphics, then on async
/// compute; and `examples/headless.rs` (`Pattern`, `Download`, `HostRead`), the same shape.
pub(crate) fn draw_download(topo: Topo, draw_on_compute: bool, readback_bytes: u64) -> usize {
    let mut s = S::new(topo);
    let draw_q = if draw_on_compute { s.c } else { s.g };
    let usage = vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST;
    let img = s.img("pattern", 1, 1, usage);
    let readback = s.buf(
        "readback",
        readback_bytes,
        vk::BufferUsageFlags::TRANSFER_DST,
    );
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass("draw", draw_q, [ud(img, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "download",
                s.g,
                [
                    u(img, Access::TRANSFER_READ),
                    ud(readback, Access::TRANSFER_WRITE),
                ],
            ),
            pass("host read", s.g, [u(readback, Access::HOST_READ)]),
        ]);
        let transfer = s.cross(draw_q, s.g);
        assert_eq!(
            releases_acquires(&s, &r, draw_q, s.g),
            if transfer { (1, 1) } else { (0, 0) },
            "{topo:?}"
        );
        if f == 0 {
            let w = usize::from(draw_q != s.g);
            check(&s, "first frame", &r, (1 + w, w, 2 * usize::from(transfer)));
        } else {
            check(
                &s,
                "steady",
                &r,
                writer_reader_steady(&s, draw_q, s.g, false),
            );
        }
    }
    FRAMES
}

/// Mirrors `tests/multi_family.rs::transfer_to_graphics_upload` (`BufferToImage`,
/// `ImageToBuffer`, `HostRead`), repeated every frame.
pub(crate) fn transfer_to_graphics_upload(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let len = 33 * 17 * 4;
    let upload = s.buf("upload", len, vk::BufferUsageFlags::TRANSFER_SRC);
    let img = s.img("uploaded", 1, 1, IXFER);
    let readback = s.buf("readback", len, vk::BufferUsageFlags::TRANSFER_DST);
    for f in 0..FRAMES {
        let r = s.run(vec![
            pass(
                "upload",
                s.t,
                [
                    u(upload, Access::TRANSFER_READ),
                    ud(img, Access::TRANSFER_WRITE),
                ],
            ),
            pass(
                "download",
                s.g,
                [
                    u(img, Access::TRANSFER_READ),
                    ud(readback, Access::TRANSFER_WRITE),
                ],
            ),
            pass("host read", s.g, [u(readback, Access::HOST_READ)]),
        ]);
        let transfer = s.cross(s.t, s.g);
        assert_eq!(
            releases_acquires(&s, &r, s.t, s.g),
            if transfer { (1, 1) } else { (0, 0) },
            "{topo:?}"
        );
        if f > 0 {
            check(&s, "steady", &r, writer_reader_steady(&s, s.t, s.g, false));
        }
    }
    FRAMES
}

/// Mirrors `tests/multi_family.rs::ownership_inherited_across_graphs`: graph 1 fills on async
/// compute, graph 2 never names async compute, yet releases there (the state names it).
pub(crate) fn ownership_inherited_across_graphs(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
    let storage = s.buf("storage", 8192, usage);
    let readback = s.buf("readback", 8192, vk::BufferUsageFlags::TRANSFER_DST);
    let split = s.c != s.g;
    for f in 0..FRAMES {
        let first = s.run(vec![pass(
            "fill",
            s.c,
            [ud(storage, Access::COMPUTE_SHADER_WRITE)],
        )]);
        // After frame 0 the fill waits for the previous copy's read on graphics (WAR).
        let w = usize::from(split && f > 0);
        check(&s, "fill", &first, (1, w, 0));
        let second = s.run(vec![
            pass(
                "copy",
                s.g,
                [
                    u(storage, Access::TRANSFER_READ),
                    ud(readback, Access::TRANSFER_WRITE),
                ],
            ),
            pass("host read", s.g, [u(readback, Access::HOST_READ)]),
        ]);
        assert!(
            second.plan_queue(s.c).is_some(),
            "{topo:?}: compute joins the plan"
        );
        if s.cross(s.c, s.g) {
            // A release-only batch on compute, the acquire on graphics after one wait.
            assert_eq!(releases_acquires(&s, &second, s.c, s.g), (1, 1), "{topo:?}");
            check(&s, "copy", &second, (2, 1, 2));
        } else {
            // No transfer: graphics waits for the fill's value (if another queue ran it).
            check(&s, "copy", &second, (1, usize::from(split), 0));
        }
    }
    2 * FRAMES
}

/// A texture uploaded once on the transfer queue, then sampled every frame on graphics (in
/// the fragment shader) and on async compute (CONCURRENT where the families differ). The
/// first frame waits for the upload (and on one queue, changes the layout once); from the
/// second frame on, the write is already visible to both readers where they read it
/// (`SegmentState::visible`): no barrier and no wait, frame after frame.
pub(crate) fn uploaded_once_sampled_every_frame(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
    let mut decl = ResourceDecl::image("texture", 1, 1, usage);
    decl.concurrent = s.cross(s.t, s.g) || s.cross(s.c, s.g);
    let tex = s.sim.add_resource(decl);
    s.run(vec![pass("upload", s.t, [ud(tex, Access::TRANSFER_WRITE)])]);
    for f in 1..=FRAMES {
        let r = s.run(vec![
            pass("draw", s.g, [u(tex, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
            pass("cull", s.c, [u(tex, Access::COMPUTE_SHADER_SAMPLED_READ)]),
        ]);
        if f > 1 {
            assert_eq!(
                r.plan.semaphore_waits(),
                0,
                "{topo:?} frame {f}\n{}",
                r.plan
            );
            assert_eq!(
                r.plan.barrier_commands(),
                0,
                "{topo:?} frame {f}\n{}",
                r.plan
            );
        } else {
            assert!(
                r.plan.barrier_commands() > 0,
                "{topo:?}: the layout changes once"
            );
        }
    }
    FRAMES + 1
}

/// A pass that writes one buffer (keeping its contents), on graphics or async compute as the
/// frame decides. Moving between two queues of one family, the frames have one shape with the
/// queues swapped: the kept plan is reused, but never at rest, since its final states name
/// the queues by plan index. Back on one queue for three frames, it is at rest again.
pub(crate) fn writer_moving_between_queues(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let mut decl = ResourceDecl::buffer("buf", 256, XFER);
    decl.concurrent = true;
    let buf = s.sim.add_resource(decl);
    let order = [s.g, s.c, s.g, s.c, s.g, s.g, s.g, s.g, s.c, s.c, s.c, s.c];
    for (f, &q) in order.iter().enumerate() {
        let r = s.run(vec![pass("write", q, [u(buf, Access::TRANSFER_WRITE)])]);
        // At rest needs this frame's queue list and plan to be the last frame's, and that
        // frame's input to have been the one before's state.
        let same_as_before = f >= 3 && order[f - 1] == q && order[f - 2] == q && order[f - 3] == q;
        if r.at_rest {
            assert!(
                same_as_before || s.g == s.c,
                "{topo:?} frame {f}: at rest after a queue change"
            );
        }
    }
    eprintln!(
        "writer moving between queues {topo:?}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    order.len()
}

/// Async compute writes a storage image that graphics samples in a fragment shader, every
/// frame: on the H100's three families the image moves family twice a frame. Without
/// `maintenance8` every wait before an acquire is at `ALL_COMMANDS`; with it, the graphics
/// queue waits at `FRAGMENT_SHADER` (the sampling) and async compute at `COMPUTE_SHADER`
/// (the next write), and each frame is still verified, alone and chained.
pub(crate) fn waits_around_transfers(topo: Topo) -> Vec<vk::PipelineStageFlags2> {
    let mut s = S::new(topo);
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let img = s.img("lit", 1, 1, usage);
    let mut stages = Vec::new();
    for _ in 0..FRAMES {
        let r = s.run(vec![
            pass("light", s.c, [u(img, Access::COMPUTE_SHADER_WRITE)]),
            pass(
                "sample",
                s.g,
                [u(img, Access::FRAGMENT_SHADER_SAMPLED_READ)],
            ),
        ]);
        for qp in &r.plan.queues {
            for b in &qp.batches {
                stages.extend(b.waits.iter().map(|w| w.stages));
            }
        }
    }
    stages
}

/// The same image handed to the app's own sampling pass (`Graph::hand_off`) on a device with
/// `maintenance8`: the app may merge the handoff's barriers into its own without the
/// USE_ALL_STAGES flag, so the handoff's plan does not rely on it, and its wait before the
/// acquire stays at `ALL_COMMANDS`. Returns the handoff's waits' stages.
pub(crate) fn handoff_waits_around_transfers(topo: Topo) -> Vec<vk::PipelineStageFlags2> {
    let mut s = S::new(topo);
    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let img = s.img("lit", 1, 1, usage);
    s.run(vec![pass(
        "light",
        s.c,
        [u(img, Access::COMPUTE_SHADER_WRITE)],
    )]);
    let app = pass(
        "sample",
        s.g,
        [u(img, Access::FRAGMENT_SHADER_SAMPLED_READ)],
    );
    let r = s.run_as(Frame::HandOff(&app));
    assert!(
        (r.plan.input.queues.iter()).all(|q| !q.transfers_use_all_stages),
        "{}",
        r.plan
    );
    (r.plan.queues.iter())
        .flat_map(|qp| &qp.batches)
        .flat_map(|b| b.waits.iter().map(|w| w.stages))
        .collect()
}
