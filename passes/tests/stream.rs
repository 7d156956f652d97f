//! The streaming uploader on lavapipe, with validation and synchronization validation: many
//! uploads in one execution land exactly, images with every mip level and layer land exactly,
//! the staging ring is reused across executions and grows when it must, and bad input is an
//! error.

mod common;

use common::*;
use std::collections::VecDeque;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, StBuffer};
use vk_baton_context::Context;
use vk_baton_passes::{DownloadBuffer, DownloadImage, Error, Uploader};

/// Downloads every byte of `bufs` in one execution on the graphics queue.
fn download_all(ctx: &Context, bufs: &[Arc<StBuffer>]) -> Vec<Vec<u8>> {
    let mut downs: Vec<DownloadBuffer> = bufs
        .iter()
        .map(|b| DownloadBuffer::whole(ctx.device(), ctx.allocator(), b.clone()).unwrap())
        .collect();
    let handles: Vec<_> = downs.iter().map(|d| d.handle()).collect();
    let graph = ctx.graph().unwrap();
    let mut rec = graph.record();
    for d in downs.iter_mut() {
        rec = rec.insert_pass("down", d, ctx.graphics());
    }
    rec.finish().unwrap().execute().unwrap().wait().unwrap();
    handles.iter().map(|h| h.read().unwrap()).collect()
}

#[test]
fn many_small_buffer_uploads_land_exactly_in_one_execution() {
    let ctx = ctx();
    let sizes = [4096u64, 10_000, 777];
    let bufs: Vec<Arc<StBuffer>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| buffer(&ctx, s, &format!("dst {i}")))
        .collect();
    let mut up = Uploader::new(ctx.device(), ctx.allocator(), 1 << 20).unwrap();
    let mut want: Vec<Vec<u8>> = sizes.iter().map(|&s| vec![0u8; s as usize]).collect();
    // Tile every buffer with pieces of 1..=97 bytes, interleaving the buffers so that one
    // staging chunk feeds all three destinations.
    let mut next = vec![0u64; bufs.len()];
    let mut uploads = 0;
    let mut seed = 7u64;
    while next.iter().zip(&sizes).any(|(n, s)| n < s) {
        for (i, b) in bufs.iter().enumerate() {
            if next[i] >= sizes[i] {
                continue;
            }
            seed += 1;
            let len = (1 + seed * 31 % 97).min(sizes[i] - next[i]);
            let data = random_bytes(len as usize, seed);
            up.buffer(b, next[i], &data).unwrap();
            want[i][next[i] as usize..(next[i] + len) as usize].copy_from_slice(&data);
            next[i] += len;
            uploads += 1;
        }
    }
    assert!(uploads > 300, "{uploads} uploads");
    assert_eq!(up.pending(), uploads);
    let mut batch = up.flush_pass();
    assert_eq!(batch.len(), uploads);
    assert_eq!(batch.bytes(), sizes.iter().sum::<u64>());
    assert_eq!(up.pending(), 0);
    let ticket = batch.ticket();
    assert!(matches!(ticket.check(), Err(Error::NotExecuted(_))));
    let graph = ctx.graph().unwrap();
    let planned = graph
        .record()
        .insert_pass("uploads", &mut batch, ctx.transfer())
        .finish()
        .unwrap();
    // One pass, one command buffer for all the uploads.
    assert_eq!(planned.to_string().matches("pass   `uploads`").count(), 1);
    planned.execute().unwrap().wait().unwrap();
    ticket.check().unwrap();
    assert!(ticket.is_complete());
    assert_eq!(up.staging_buffers(), 1);
    let got = download_all(&ctx, &bufs);
    assert_eq!(got, want);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn image_uploads_land_in_every_mip_level_and_layer() {
    let ctx = ctx();
    let a = image(&ctx, 37, 19, vk::Format::R8G8B8A8_UNORM, 6, 3, "a");
    let b = image(&ctx, 16, 8, vk::Format::R16G16B16A16_SFLOAT, 5, 2, "b");
    let side = buffer(&ctx, 7, "side");
    let mut up = Uploader::new(ctx.device(), ctx.allocator(), 4096).unwrap();
    // 7 bytes first, so the images' staging bytes must be realigned.
    let side_data = random_bytes(7, 1);
    up.buffer(&side, 0, &side_data).unwrap();
    let na = Uploader::packed_image_size(&a).unwrap() as usize;
    let nb = Uploader::packed_image_size(&b).unwrap() as usize;
    let (da, db) = (random_bytes(na, 2), random_bytes(nb, 3));
    up.image(&a, &da).unwrap();
    up.image_with(&b, |bytes| bytes.copy_from_slice(&db))
        .unwrap();
    // More than the initial 4 KiB: the ring grew.
    assert!(up.staging_buffers() > 1);
    let mut batch = up.flush_pass();
    assert_eq!(batch.len(), 3);
    let mut down_a = DownloadImage::all_levels(ctx.device(), ctx.allocator(), a.clone()).unwrap();
    let mut down_b = DownloadImage::all_levels(ctx.device(), ctx.allocator(), b.clone()).unwrap();
    let mut down_s = DownloadBuffer::whole(ctx.device(), ctx.allocator(), side.clone()).unwrap();
    let (ha, hb, hs) = (down_a.handle(), down_b.handle(), down_s.handle());
    let graph = ctx.graph().unwrap();
    graph
        .record()
        .insert_pass("uploads", &mut batch, ctx.transfer())
        .insert_pass("down a", &mut down_a, ctx.graphics())
        .insert_pass("down b", &mut down_b, ctx.graphics())
        .insert_pass("down side", &mut down_s, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(ha.read().unwrap(), da);
    assert_eq!(hb.read().unwrap(), db);
    assert_eq!(hs.read().unwrap(), side_data);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn the_ring_is_reused_across_executions_and_grows_when_it_must() {
    let ctx = ctx();
    const PIECE: u64 = 64 << 10;
    const PIECES: u64 = 4;
    let dsts: Vec<Arc<StBuffer>> = (0..3)
        .map(|i| buffer(&ctx, PIECE * PIECES, &format!("dst {i}")))
        .collect();
    // Room for four batches of 256 KiB; at most two are in flight.
    let mut up = Uploader::new(ctx.device(), ctx.allocator(), 4 * PIECE * PIECES).unwrap();
    let initial = up.capacity();
    let graph = ctx.graph().unwrap();
    let mut in_flight = VecDeque::new();
    let mut last = Vec::new();
    for n in 0..24u64 {
        if in_flight.len() == 2 {
            let f: vk_baton::ExecutionFence = in_flight.pop_front().unwrap();
            f.wait().unwrap();
        }
        let dst = &dsts[(n % 3) as usize];
        last = random_bytes((PIECE * PIECES) as usize, 100 + n);
        for p in 0..PIECES {
            let s = (p * PIECE) as usize..((p + 1) * PIECE) as usize;
            up.buffer(dst, p * PIECE, &last[s]).unwrap();
        }
        let mut batch = up.flush_pass();
        let fence = graph
            .record()
            .insert_pass("uploads", &mut batch, ctx.transfer())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        in_flight.push_back(fence);
        // Steady state: no growth, one staging buffer.
        assert_eq!(up.capacity(), initial, "batch {n}");
        assert_eq!(up.staging_buffers(), 1, "batch {n}");
    }
    for f in in_flight.drain(..) {
        f.wait().unwrap();
    }
    let got = download_all(&ctx, &[dsts[(23 % 3) as usize].clone()]);
    assert_eq!(got[0], last);
    up.reclaim();
    assert_eq!(up.in_use(), 0);

    // Five batches in flight need more than the four the ring holds: it grows.
    let mut fences = Vec::new();
    let mut batches = Vec::new();
    for n in 0..5u64 {
        let dst = &dsts[(n % 3) as usize];
        up.buffer(dst, 0, &random_bytes((PIECE * PIECES) as usize, n))
            .unwrap();
        batches.push(up.flush_pass());
    }
    assert_eq!(up.staging_buffers(), 2);
    assert!(up.capacity() > initial);
    for (n, mut batch) in batches.into_iter().enumerate() {
        let fence = graph
            .record()
            .insert_pass("uploads", &mut batch, ctx.transfer())
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fences.push((n, fence, batch));
    }
    for (_, f, _) in &fences {
        f.wait().unwrap();
    }
    // The passes still hold their bytes; dropping them frees everything.
    up.reclaim();
    assert!(up.in_use() > 0);
    drop(fences);
    up.reclaim();
    assert_eq!(up.in_use(), 0);
    drop(graph);
    assert_clean(&ctx);
}

#[test]
fn a_batch_dropped_unrecorded_frees_its_bytes() {
    let ctx = ctx();
    let dst = buffer(&ctx, 1024, "dst");
    let mut up = Uploader::new(ctx.device(), ctx.allocator(), 4096).unwrap();
    up.buffer(&dst, 0, &[1u8; 1024]).unwrap();
    let batch = up.flush_pass();
    up.reclaim();
    assert_eq!(up.in_use(), 1024);
    let ticket = batch.ticket();
    drop(batch);
    up.reclaim();
    assert_eq!(up.in_use(), 0);
    assert!(matches!(ticket.check(), Err(Error::NotExecuted(_))));
    assert!(!ticket.is_complete());
    assert_clean(&ctx);
}

#[test]
fn bad_input_is_an_error_and_stages_nothing() {
    let ctx = ctx();
    let dst = buffer(&ctx, 1024, "dst");
    let no_dst = ctx
        .buffer(
            BufferDesc::new(64, vk::BufferUsageFlags::TRANSFER_SRC),
            "no dst",
        )
        .unwrap();
    let img = image(&ctx, 8, 8, vk::Format::R8G8B8A8_UNORM, 4, 1, "img");
    assert!(matches!(
        Uploader::new(ctx.device(), ctx.allocator(), 0),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        Uploader::with_max_capacity(ctx.device(), ctx.allocator(), 4096, 1024),
        Err(Error::InvalidInput(_))
    ));
    let mut up = Uploader::with_max_capacity(ctx.device(), ctx.allocator(), 2048, 4096).unwrap();
    let e = |r: vk_baton_passes::Result<()>| r.expect_err("must fail");
    assert!(matches!(e(up.buffer(&dst, 0, &[])), Error::InvalidInput(_)));
    assert!(matches!(
        e(up.buffer(&dst, 1000, &[0; 25])),
        Error::InvalidRegion(_)
    ));
    assert!(matches!(
        e(up.buffer(&dst, u64::MAX, &[0; 2])),
        Error::InvalidRegion(_)
    ));
    assert!(matches!(
        e(up.buffer(&no_dst, 0, &[0; 4])),
        Error::InvalidInput(_)
    ));
    up.buffer(&dst, 100, &[1; 100]).unwrap();
    // Overlapping an earlier upload of the batch, from either side.
    assert!(matches!(
        e(up.buffer(&dst, 150, &[0; 10])),
        Error::InvalidRegion(_)
    ));
    assert!(matches!(
        e(up.buffer(&dst, 50, &[0; 51])),
        Error::InvalidRegion(_)
    ));
    up.buffer(&dst, 200, &[2; 10]).unwrap(); // touching is fine
    up.buffer(&dst, 0, &[3; 100]).unwrap();
    // Images: wrong size, twice in a batch, regions reading past the data.
    let n = Uploader::packed_image_size(&img).unwrap() as usize;
    assert_eq!(n, (64 + 16 + 4 + 1) * 4);
    assert!(matches!(
        e(up.image(&img, &vec![0; n - 1])),
        Error::InvalidInput(_)
    ));
    up.image(&img, &vec![9; n]).unwrap();
    assert!(matches!(
        e(up.image(&img, &vec![9; n])),
        Error::InvalidRegion(_)
    ));
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: 8,
            height: 8,
            depth: 1,
        },
    };
    let img2 = image(&ctx, 8, 8, vk::Format::R8G8B8A8_UNORM, 1, 1, "img2");
    assert!(matches!(
        e(up.image_regions(&img2, &[0; 255], &[region])),
        Error::InvalidRegion(_)
    ));
    assert!(matches!(
        e(up.image_regions(
            &img2,
            &[0; 256],
            &[vk::BufferImageCopy {
                image_subresource: vk::ImageSubresourceLayers {
                    mip_level: 1,
                    ..region.image_subresource
                },
                ..region
            }]
        )),
        Error::InvalidRegion(_)
    ));
    assert_eq!(up.pending(), 4);
    // Oversize: more than the ring may ever hold.
    let big = buffer(&ctx, 8192, "big");
    assert!(matches!(
        e(up.buffer(&big, 0, &[0; 5000])),
        Error::StagingFull {
            requested: 5000,
            max_capacity: 4096,
            ..
        }
    ));
    // Full: the pending batch holds its bytes, and the ring may not grow enough.
    let held = up.in_use();
    assert!(held > 0);
    assert!(matches!(
        e(up.buffer(&big, 0, &[0; 3000])),
        Error::StagingFull { .. }
    ));
    assert_eq!(up.pending(), 4);
    // Once the batch is gone, the idle 2 KiB chunk makes way for one of 4 KiB.
    drop(up.flush_pass());
    up.buffer(&big, 0, &[0; 3000]).unwrap();
    assert_eq!((up.staging_buffers(), up.capacity()), (1, 4096));
    assert_clean(&ctx);
}

#[test]
#[ignore = "needs several queue families (run on the NVIDIA machine)"]
fn one_release_barrier_hands_every_upload_of_a_batch_to_another_family() {
    use vk_baton::plan::Command;
    let ctx = ctx();
    let (tf, gf) = (ctx.transfer().family(), ctx.graphics().family());
    assert_ne!(
        tf,
        gf,
        "no dedicated transfer family on {}",
        ctx.device_name()
    );
    let bufs: Vec<Arc<StBuffer>> = (0..8)
        .map(|i| buffer(&ctx, 16 * 1024, &format!("dst {i}")))
        .collect();
    let img = image(&ctx, 64, 32, vk::Format::R8G8B8A8_UNORM, 7, 2, "img");
    let mut up = Uploader::new(ctx.device(), ctx.allocator(), 1 << 20).unwrap();
    let mut want = Vec::new();
    for (i, b) in bufs.iter().enumerate() {
        let data = random_bytes(16 * 1024, i as u64);
        for p in 0..16 {
            up.buffer(
                b,
                p * 1024,
                &data[(p * 1024) as usize..((p + 1) * 1024) as usize],
            )
            .unwrap();
        }
        want.push(data);
    }
    let texels = random_bytes(Uploader::packed_image_size(&img).unwrap() as usize, 99);
    up.image(&img, &texels).unwrap();
    let mut batch = up.flush_pass();
    let mut downs: Vec<DownloadBuffer> = bufs
        .iter()
        .map(|b| DownloadBuffer::whole(ctx.device(), ctx.allocator(), b.clone()).unwrap())
        .collect();
    let mut down_img =
        DownloadImage::all_levels(ctx.device(), ctx.allocator(), img.clone()).unwrap();
    let handles: Vec<_> = downs.iter().map(|d| d.handle()).collect();
    let h_img = down_img.handle();
    let graph = ctx.graph().unwrap();
    let mut rec = graph
        .record()
        .insert_pass("uploads", &mut batch, ctx.transfer());
    for d in downs.iter_mut() {
        rec = rec.insert_pass("down", d, ctx.graphics());
    }
    rec = rec.insert_pass("down img", &mut down_img, ctx.graphics());
    let planned = rec.finish().unwrap();
    // On the transfer queue: the upload pass, then ONE barrier command releasing every
    // destination to the graphics family.
    let q = planned
        .queues()
        .iter()
        .position(|q| q == ctx.transfer())
        .expect("the transfer queue is in the plan");
    let commands: Vec<&Command> = planned.plan().queues[q]
        .batches
        .iter()
        .flat_map(|b| &b.commands)
        .collect();
    let pass_at = commands
        .iter()
        .position(|c| matches!(c, Command::Pass(_)))
        .expect("the upload pass");
    let after = &commands[pass_at + 1..];
    assert_eq!(after.len(), 1, "{}", planned);
    let Command::Barrier(release) = after[0] else {
        panic!("not a barrier after the uploads: {planned}");
    };
    assert_eq!(release.buffers.len(), bufs.len(), "{planned}");
    assert!(!release.images.is_empty(), "{planned}");
    for s in release
        .buffers
        .iter()
        .map(|b| b.scopes)
        .chain(release.images.iter().map(|i| i.scopes))
    {
        assert_eq!(s.families, Some((tf, gf)), "{planned}");
    }
    planned.execute().unwrap().wait().unwrap();
    for (h, w) in handles.iter().zip(&want) {
        assert_eq!(&h.read().unwrap(), w);
    }
    assert_eq!(h_img.read().unwrap(), texels);
    drop(graph);
    assert_clean(&ctx);
}
