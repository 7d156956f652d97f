//! Frames recorded once and submitted again (`Graph::set_replay`): a steady frame whose
//! inputs the host changes every frame replays its recording with the data right, and every
//! cause of recording again (a pass's key, labels, the app's invalidation, a state not at
//! rest, another plan, a resource made anew, a pass with no key) records once and then
//! replays again. Validation on, any message fails.

mod common;

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferDesc, Declare, Pass, Recorder, StBuffer};
use vk_baton_context::Context;

const SIZE: u64 = 256;
const WORDS: usize = (SIZE / 4) as usize;

/// Copies all of `src` into `dst`; replayable while its generation stays.
struct Copy {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    generation: Generation,
}

impl Copy {
    fn new(src: &Arc<StBuffer>, dst: &Arc<StBuffer>) -> Self {
        let (src, dst) = (src.clone(), dst.clone());
        let generation = Generation::new();
        Copy {
            src,
            dst,
            generation,
        }
    }
}

impl Pass for Copy {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::COPY_READ);
        d.uses(&self.dst, Access::COPY_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy::default().size(SIZE);
        // SAFETY: `cmd` is recording; both buffers are alive, SIZE long, in the declared states.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name only the two buffers, which the pass keeps alive, and
        // change only with them (a new pass, a new generation).
        Some(unsafe { self.generation.key() })
    }
}

/// The host reads `buf` after the GPU; records nothing, so its key never changes.
struct HostRead(Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }
    fn record(&mut self, _: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: it records no command.
        Some(unsafe { ReplayKey::new(0) })
    }
}

/// The frame: the host's `input` copied into device-local `mid`, `mid` into the readback
/// buffer `out`, and the host's read of `out`.
struct Frame {
    input: Arc<StBuffer>,
    out: Arc<StBuffer>,
    upload: Copy,
    download: Copy,
    read: HostRead,
}

fn buffer(ctx: &Context, desc: BufferDesc, name: &str) -> Arc<StBuffer> {
    ctx.buffer(desc, name).unwrap()
}

impl Frame {
    fn new(ctx: &Context) -> Self {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let input = buffer(ctx, BufferDesc::upload(SIZE, usage), "input");
        let mid = buffer(ctx, BufferDesc::new(SIZE, usage), "mid");
        let out = buffer(ctx, BufferDesc::readback(SIZE, usage), "out");
        Frame {
            upload: Copy::new(&input, &mid),
            download: Copy::new(&mid, &out),
            read: HostRead(out.clone()),
            input,
            out,
        }
    }

    fn write(&self, n: u32) {
        write(&self.input, n);
    }

    fn check(&self, n: u32) {
        check(&self.out, n);
    }

    /// Runs frame `n` through the builder and waits: whether it replayed.
    fn run(&mut self, graph: &vk_baton::Graph, q: &vk_baton::Queue, n: u32) -> bool {
        self.write(n);
        let fence = graph
            .record()
            .insert_pass("upload", &mut self.upload, q)
            .insert_pass("download", &mut self.download, q)
            .insert_pass("read", &mut self.read, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        self.check(n);
        fence.replayed()
    }
}

/// Frame `n`'s words.
fn words(n: u32) -> Vec<u8> {
    (0..WORDS as u32)
        .flat_map(|i| (n.wrapping_mul(0x9e37_79b9) ^ i).to_le_bytes())
        .collect()
}

/// Writes frame `n`'s words into `input`.
fn write(input: &StBuffer, n: u32) {
    input.write(0, &words(n)).unwrap();
}

/// Asserts that `out` holds frame `n`'s words.
fn check(out: &StBuffer, n: u32) {
    let mut bytes = vec![0u8; SIZE as usize];
    out.read(0, &mut bytes).unwrap();
    assert!(
        bytes == words(n),
        "frame {n}: out is not what the host wrote"
    );
}

#[test]
fn a_steady_frame_replays_while_the_host_changes_its_input() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut frame = Frame::new(&ctx);
    let replayed: Vec<bool> = (1..=1000).map(|n| frame.run(&graph, &q, n)).collect();
    // Frame 1 records (its plan starts from undefined contents); frame 2 finds the states
    // frame 1 left, which plans differently, and records again; frame 3 is at rest on that
    // plan, whose recording is idle (waited for): from then on every frame replays it.
    let first = replayed.iter().position(|&r| r);
    assert_eq!(first, Some(2), "{:?}", &replayed[..8]);
    assert_eq!(replayed.iter().filter(|&&r| r).count(), 998);
    drop(graph);
    common::assert_clean(&ctx);
}

#[test]
fn a_held_plan_counts_its_replays() {
    let ctx = common::ctx();
    let graph = ctx.graph().unwrap();
    graph.set_replay(true);
    let q = ctx.graphics().clone();
    let mut f = Frame::new(&ctx);
    let (input, out) = (f.input.clone(), f.out.clone());
    let mut held = graph
        .record()
        .insert_pass("upload", &mut f.upload, &q)
        .insert_pass("download", &mut f.download, &q)
        .insert_pass("read", &mut f.read, &q)
        .finish()
        .unwrap()
        .hold();
    for n in 1..=1000 {
        write(&input, n);
        held.execute().unwrap().wait().unwrap();
        check(&out, n);
    }
    // As the builder's frames: frames 1 and 2 record, the rest replay.
    assert_eq!((held.replanned(), held.replayed()), (1, 998));
    drop(held);
    drop(graph);
    common::assert_clean(&ctx);
}
