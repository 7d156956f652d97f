//! Mirrors the image stream of `examples/streaming_upload.rs` with its consumer, 3 batches in
//! flight: per batch, one `UploadBatch` on transfer (every mip of each image of the slot,
//! discarded), then on async compute one `CopyImageToBuffer` per image into its part of the
//! slot's data buffer, `Verify` (reads the data, discards the slot's partial sums) and
//! `HostRead`. The copies back take their images in one barrier command (on NVIDIA: all the
//! acquires) and run back to back, as the hand-written side records them.

use super::*;
use vk_baton::plan::Command;

pub(crate) fn streaming_images(topo: Topo) -> usize {
    let mut s = S::new(topo);
    let (per_batch, in_flight, mips, batches) = (4usize, 3usize, 3u32, 9usize);
    let level_bytes = [64u64, 16, 4];
    let item = level_bytes.iter().sum::<u64>();
    let images: Vec<Vec<usize>> = (0..in_flight)
        .map(|k| {
            (0..per_batch)
                .map(|p| s.img(&format!("image {k}.{p}"), mips, 1, IXFER))
                .collect()
        })
        .collect();
    let data: Vec<usize> = (0..in_flight)
        .map(|k| {
            s.buf(
                &format!("data {k}"),
                item * per_batch as u64,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
            )
        })
        .collect();
    let groups = 4u64;
    let partials = s.buf(
        "partial sums",
        in_flight as u64 * groups * 4,
        vk::BufferUsageFlags::STORAGE_BUFFER,
    );
    let mut frames = 0;
    for b in 0..batches {
        let k = b % in_flight;
        let mut passes = vec![pass(
            "upload",
            s.t,
            images[k].iter().map(|&i| ud(i, Access::COPY_WRITE)),
        )];
        for (p, &i) in images[k].iter().enumerate() {
            passes.push(pass(
                "copy back",
                s.c,
                [
                    u(i, Access::COPY_READ),
                    ud(data[k], Access::COPY_WRITE).range(bytes(p as u64 * item, item)),
                ],
            ));
        }
        passes.push(pass(
            "verify",
            s.c,
            [
                u(data[k], Access::COMPUTE_SHADER_READ),
                ud(partials, Access::COMPUTE_SHADER_WRITE)
                    .range(bytes(k as u64 * groups * 4, groups * 4)),
            ],
        ));
        passes.push(pass(
            "host read",
            s.c,
            [u(partials, Access::HOST_READ).range(bytes(k as u64 * groups * 4, groups * 4))],
        ));
        let r = s.run(passes);
        frames += 1;
        // Batches, waits (transfer waits for the copies back of the batch before last on its
        // slot; compute for this upload) and ownership-transfer barriers (a release and an
        // acquire per image).
        let cross = s.cross(s.t, s.c);
        let want = if s.t == s.c {
            (1, 0, 0)
        } else {
            (
                2,
                1 + usize::from(b >= in_flight),
                2 * per_batch * usize::from(cross),
            )
        };
        check(&s, "images", &r, want);
        // The copies back run one after the other with no barrier command between them, after
        // one command that prepares (acquires) every image.
        let pq = r.plan_queue(s.c).expect("the consumer's queue");
        let commands: Vec<&Command> = r.plan.queues[pq]
            .batches
            .iter()
            .flat_map(|b| &b.commands)
            .collect();
        let first = commands
            .iter()
            .position(|c| matches!(c, Command::Pass(1)))
            .expect("the first copy back");
        for (k, c) in commands[first..=first + per_batch].iter().enumerate() {
            let want = if k < per_batch { Some(1 + k) } else { None };
            let got = match c {
                Command::Pass(i) => Some(*i),
                _ => None,
            };
            assert_eq!(got, want, "{topo:?} frame {b}\n{}", r.plan);
        }
        let Command::Barrier(prepare) = commands[first - 1] else {
            panic!(
                "{topo:?} frame {b}: no barrier before the copies back\n{}",
                r.plan
            );
        };
        assert_eq!(prepare.images.len(), per_batch, "{topo:?}\n{}", r.plan);
        assert!(
            prepare
                .images
                .iter()
                .all(|i| i.new_layout == vk::ImageLayout::TRANSFER_SRC_OPTIMAL
                    && i.scopes.families.is_some() == cross),
            "{topo:?}\n{}",
            r.plan
        );
        // Upload: a transition command and, across families, the release command; consumer:
        // the images, the data for the shader, the partial sums for the host.
        let on_transfer = if s.t == s.c {
            0
        } else {
            1 + usize::from(cross)
        };
        assert_eq!(
            r.plan.barrier_commands(),
            on_transfer + 3 + usize::from(s.t == s.c),
            "{topo:?}\n{}",
            r.plan
        );
    }
    eprintln!(
        "streaming images {topo:?}: {} {}",
        s.reuse_pattern(),
        s.rest_pattern()
    );
    frames
}
