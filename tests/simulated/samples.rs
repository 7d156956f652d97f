//! Scenarios restating the frame loops of `examples/`.

use super::*;

/// Mirrors `examples/async_compute.rs`: the seed copy on graphics, then per frame `Mix` on
/// async compute (reads `state[cur]`, discards `state[1 - cur]`) and `Mix` on graphics (reads
/// `state[cur]`, discards the render target); the final `Download` and `HostRead` on graphics.
/// `exclusive`: the `--exclusive` flag (state buffers EXCLUSIVE even across families).
pub(crate) fn async_compute(topo: Topo, exclusive: bool) -> usize {
    let mut s = S::new(topo);
    let frames = 12;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;
    let bytes_ = 512 * 4;
    let concurrent = s.cross(s.g, s.c) && !exclusive;
    let state_decl = |s: &mut S, name: &str| {
        let mut d = ResourceDecl::buffer(name, bytes_, usage);
        d.concurrent = concurrent;
        s.sim.add_resource(d)
    };
    let state = [
        state_decl(&mut s, "state[0]"),
        state_decl(&mut s, "state[1]"),
    ];
    let target = s.buf("render target", bytes_, usage);
    let staging = s.buf("initial state", bytes_, vk::BufferUsageFlags::TRANSFER_SRC);
    s.run(vec![pass(
        "initial state",
        s.g,
        [
            u(staging, Access::TRANSFER_READ),
            ud(state[0], Access::TRANSFER_WRITE),
        ],
    )]);
    for frame in 0..frames {
        let cur = frame % 2;
        let r = s.run(vec![
            pass(
                "simulate step N+1",
                s.c,
                [
                    u(state[cur], Access::COMPUTE_SHADER_READ),
                    ud(state[1 - cur], Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "render frame N",
                s.g,
                [
                    u(state[cur], Access::COMPUTE_SHADER_READ),
                    ud(target, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
        ]);
        if frame < 2 {
            continue;
        }
        if s.c == s.g {
            check(&s, "one queue", &r, (1, 0, 0));
        } else if s.cross(s.c, s.g) && exclusive {
            // state[cur] moves to graphics after the step's read: a pair, and graphics waits
            // on this frame's compute batch; compute waits for the previous render's read.
            assert_eq!(releases_acquires(&s, &r, s.c, s.g), (1, 1), "{topo:?}");
            check(&s, "exclusive", &r, (2, 2, 2));
            assert_eq!(wait_kinds(&r), (1, 1), "{topo:?}\n{}", r.plan);
        } else {
            // The sample's claim: no semaphore inside a frame; each queue waits once on the
            // other's previous frame (the double buffer).
            check(&s, "overlap", &r, (2, 2, 0));
            assert_eq!(wait_kinds(&r), (0, 2), "{topo:?}\n{}", r.plan);
        }
    }
    let readback = s.buf("readback", bytes_ * 2, vk::BufferUsageFlags::TRANSFER_DST);
    s.run(vec![
        pass(
            "download",
            s.g,
            [
                u(state[frames % 2], Access::TRANSFER_READ),
                u(target, Access::TRANSFER_READ),
                ud(readback, Access::TRANSFER_WRITE),
            ],
        ),
        pass("host read", s.g, [u(readback, Access::HOST_READ)]),
    ]);
    eprintln!(
        "async_compute {topo:?} {exclusive}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    frames + 2
}

/// Mirrors `examples/streaming_upload.rs` with 3 graphs in flight: 4 staging buffers (written
/// by the host, never declared), 3 rotating device buffers; the uploads-only phase, then per
/// buffer `Upload` on transfer and `Verify` on async compute (reads the buffer, discards its
/// own range of the partial sums); then `HostRead` on async compute. `concurrent`: `--concurrent`.
pub(crate) fn streaming_upload(topo: Topo, concurrent: bool) -> usize {
    let mut s = S::new(topo);
    let (count, groups, size, in_flight) = (9usize, 4u64, 4096, 3usize);
    let staging: Vec<usize> = (0..4)
        .map(|k| {
            s.buf(
                &format!("staging {k}"),
                size,
                vk::BufferUsageFlags::TRANSFER_SRC,
            )
        })
        .collect();
    let dst_usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
    let shared = concurrent && s.cross(s.t, s.c);
    let device: Vec<usize> = (0..in_flight)
        .map(|i| {
            let mut d = ResourceDecl::buffer(&format!("device {i}"), size, dst_usage);
            d.concurrent = shared;
            s.sim.add_resource(d)
        })
        .collect();
    let partials = s.buf(
        "partial sums",
        count as u64 * groups * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    );
    let upload = |s: &S, i: usize| {
        pass(
            "upload",
            s.t,
            [
                u(staging[i % 4], Access::TRANSFER_READ),
                ud(device[i % in_flight], Access::TRANSFER_WRITE),
            ],
        )
    };
    let mut frames = 0;
    for i in std::iter::once(0).chain(0..count) {
        let r = s.run(vec![upload(&s, i)]);
        check(&s, "upload only", &r, (1, 0, 0));
        frames += 1;
    }
    for i in 0..count {
        let verify = pass(
            "verify",
            s.c,
            [
                u(device[i % in_flight], Access::COMPUTE_SHADER_READ),
                ud(partials, Access::COMPUTE_SHADER_WRITE)
                    .range(bytes(i as u64 * groups * 4, groups * 4)),
            ],
        );
        let r = s.run(vec![upload(&s, i), verify]);
        frames += 1;
        if s.t == s.c {
            check(&s, "one queue", &r, (1, 0, 0));
            continue;
        }
        let pair = usize::from(s.cross(s.t, s.c) && !shared);
        assert_eq!(
            releases_acquires(&s, &r, s.t, s.c),
            (pair, pair),
            "{topo:?}"
        );
        // Upload N+3 waits for verify N's read (from the fourth buffer on), verify N for
        // upload N; the previous uploads-only phase left its writes on transfer only.
        check(
            &s,
            "stream",
            &r,
            (2, 1 + usize::from(i >= in_flight), 2 * pair),
        );
    }
    s.run(vec![pass(
        "host read",
        s.c,
        [u(partials, Access::HOST_READ)],
    )]);
    eprintln!(
        "streaming {topo:?}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    frames + 1
}

/// Mirrors `examples/incremental.rs`: per frame, `UploadBuffer` on transfer; the app's own
/// compute dispatch on graphics through `Graph::hand_off` (reads the buffer, overwrites the
/// image), which is a plan of that one pass; then `DownloadImage::level(0)` on transfer. On
/// NVIDIA both handoffs between families are ownership transfers: the buffer to graphics for
/// the app (the library's release on transfer, the acquire in the app's command buffer), the
/// image back to transfer for the download.
pub(crate) fn incremental(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let bytes_ = 64 * 32 * 4;
    let data = s.buf(
        "app data",
        bytes_,
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
    );
    let image = s.img(
        "app image",
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC,
    );
    let cross = s.cross(s.t, s.g);
    let one_queue = s.t == s.g;
    for frame in 0..FRAMES {
        let r = s.run(vec![pass(
            "upload",
            s.t,
            [ud(data, Access::COPY_WRITE).range(bytes(0, bytes_))],
        )]);
        // From frame 1 on, the upload waits for the app's read of the previous frame's data.
        let waits = usize::from(frame > 0 && !one_queue);
        check(&s, "upload", &r, (1, waits, 0));

        let r = s.run(vec![pass(
            "app compute",
            s.g,
            [
                u(data, Access::COMPUTE_SHADER_READ),
                ud(image, Access::COMPUTE_SHADER_WRITE),
            ],
        )]);
        let app = r
            .plan
            .app_batch()
            .unwrap_or_else(|e| panic!("{topo:?}: {e}"));
        assert_eq!(Some(app.queue), r.plan_queue(s.g));
        if cross {
            // The library's release-only batch on transfer; the acquire is the app's.
            assert_eq!(releases_acquires(&s, &r, s.t, s.g), (1, 1), "{topo:?}");
            check(&s, "handoff", &r, (2, 1, 2));
        } else {
            check(&s, "handoff", &r, (1, usize::from(!one_queue), 0));
        }
        // One wait at most, on the transfer timeline: the upload (and the last download).
        assert!(app.batch.waits.len() <= 1, "{topo:?}\n{}", r.plan);
        let gf = s.family(s.g);
        assert_eq!(s.sim.state(image).unwrap()[0].1.owner, Some(gf));

        let staging = s.buf(
            "download of `app image`",
            bytes_,
            vk::BufferUsageFlags::TRANSFER_DST,
        );
        let r = s.run(vec![pass(
            "download",
            s.t,
            [
                u(image, Access::COPY_READ).range(mip(0, 1)),
                ud(staging, Access::COPY_WRITE).range(bytes(0, bytes_)),
            ],
        )]);
        if cross {
            // The image goes back to transfer: release on graphics, acquire on transfer.
            assert_eq!(releases_acquires(&s, &r, s.g, s.t), (1, 1), "{topo:?}");
            check(&s, "download", &r, (2, 1, 2));
        } else {
            check(&s, "download", &r, (1, usize::from(!one_queue), 0));
        }
    }
    eprintln!(
        "incremental {topo:?}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    3 * FRAMES
}

/// Mirrors `examples/window.rs` with `--frames 9 --screenshot`: 3 swapchain images (EXCLUSIVE,
/// COLOR_ATTACHMENT | TRANSFER_DST, undefined), 2 acquire semaphores (one per frame in flight),
/// one present semaphore per image; per frame `Animate`, `SwapchainAcquire` (binary wait
/// guarding the image), `ImageBlit::new`, `DownloadImage::level(0)` on the last frame, and
/// `SwapchainPresent` (PRESENT + binary signal), all on graphics.
pub(crate) fn window(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let frames = 9;
    let anim = s.img(
        "anim",
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED | IXFER,
    );
    let swap: Vec<usize> = (0..3)
        .map(|i| {
            s.img(
                &format!("swapchain image {i}"),
                1,
                1,
                vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST,
            )
        })
        .collect();
    for frame in 0..frames {
        let (i, slot) = (frame % 3, frame % 2);
        let mut acquire = PassDecl::new("acquire", s.g);
        acquire.waits.push(BinaryWaitDecl {
            semaphore: sem(0xa0 + slot as u64),
            guards: vec![swap[i]],
            stages: None,
        });
        let mut present = pass("present", s.g, [u(swap[i], Access::PRESENT)]);
        present.signals.push(BinarySignalDecl {
            semaphore: sem(0xb0 + i as u64),
            stages: None,
        });
        let mut passes = vec![
            pass("animate", s.g, [ud(anim, Access::COMPUTE_SHADER_WRITE)]),
            acquire,
            pass(
                "blit to swapchain",
                s.g,
                [
                    u(anim, Access::BLIT_READ).range(mip(0, 1)),
                    ud(swap[i], Access::BLIT_WRITE).range(mip(0, 1)),
                ],
            ),
        ];
        if frame + 1 == frames {
            let staging = s.buf(
                "screenshot",
                640 * 480 * 4,
                vk::BufferUsageFlags::TRANSFER_DST,
            );
            passes.push(pass(
                "screenshot",
                s.g,
                [
                    u(anim, Access::COPY_READ).range(mip(0, 1)),
                    ud(staging, Access::COPY_WRITE).range(bytes(0, 640 * 480 * 4)),
                ],
            ));
        }
        passes.push(present);
        let r = s.run(passes);
        // The acquire wait starts a batch (rule 9): animate before it, the rest after; one
        // wait (binary), no transfer, on every topology.
        check(&s, "frame", &r, (2, 1, 0));
        let b = &r.plan.queues[0].batches;
        assert!(
            matches!(b[1].waits[0].target, WaitTarget::Binary(x) if x == sem(0xa0 + slot as u64))
        );
        assert_eq!(b[1].binary_signals.len(), 1, "{topo:?}");
    }
    eprintln!(
        "window {topo:?}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    frames
}
