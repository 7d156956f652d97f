//! Recording on several threads ([`vk_baton::Graph::set_recording_threads`]): a large frame
//! recorded on 4 threads gives, bit for bit, what it gives on one, with labels and GPU timings
//! per pass; a pass's error or panic on another thread comes back as on the calling thread and
//! leaves the graph working; with replay on, a frame recorded on threads replays. Validation
//! and synchronization validation are on (any message fails), and on one thread as on
//! several.

mod common;

use common::*;
use std::collections::HashSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use vk_baton::ash::vk;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferDesc, Declare, Error, Graph, Pass, Recorder, StBuffer};
use vk_baton_context::Context;

/// Ring buffers the passes shift through.
const RING: usize = 8;
/// Bytes per ring buffer.
const SIZE: u64 = 256;
/// Passes per frame: the frame the test calls large.
const PASSES: usize = 240;

/// What a [`Shift`] pass does besides shifting.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Then {
    Fine,
    Fail,
    Panic,
}

/// Pass `k`: copies `src[0..SIZE-4]` to `dst[4..SIZE]` and writes `k` into `dst[0..4]`, so the
/// ring ends up holding the last passes' numbers in the order they ran. Notes the thread that
/// recorded it.
struct Shift {
    src: Arc<StBuffer>,
    dst: Arc<StBuffer>,
    k: u32,
    then: Then,
    threads: Arc<Mutex<HashSet<ThreadId>>>,
    generation: Generation,
}

impl Pass for Shift {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        self.threads
            .lock()
            .unwrap()
            .insert(std::thread::current().id());
        match self.then {
            Then::Fine => {}
            Then::Fail => return Err(Error::PassFailed(format!("planted {}", self.k))),
            Then::Panic => panic!("planted panic in `{}`", r.pass_name()),
        }
        let region = vk::BufferCopy {
            src_offset: 0,
            dst_offset: 4,
            size: SIZE - 4,
        };
        // SAFETY: both buffers are alive and in the declared states; the two writes to `dst`
        // touch disjoint bytes.
        unsafe {
            let d = r.device();
            d.cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region]);
            d.cmd_update_buffer(r.cmd(), self.dst.handle(), 0, &self.k.to_le_bytes());
        }
        Ok(())
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name only the two buffers, which the pass keeps alive, and
        // its fields never change.
        Some(unsafe { self.generation.key() })
    }
}

/// The ring, a readback buffer holding all of it, and the thread log.
struct Frame {
    ring: Vec<Arc<StBuffer>>,
    readback: Arc<StBuffer>,
    threads: Arc<Mutex<HashSet<ThreadId>>>,
}

impl Frame {
    fn new(ctx: &Context) -> Frame {
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let ring = (0..RING)
            .map(|i| {
                let b = ctx
                    .buffer(BufferDesc::new(SIZE, usage), &format!("ring {i}"))
                    .unwrap();
                b
            })
            .collect();
        let readback = ctx
            .buffer(
                BufferDesc::readback(SIZE * RING as u64, vk::BufferUsageFlags::TRANSFER_DST),
                "readback",
            )
            .unwrap();
        Frame {
            ring,
            readback,
            threads: Default::default(),
        }
    }

    fn shifts(&self, then: impl Fn(usize) -> Then) -> Vec<Shift> {
        (0..PASSES)
            .map(|k| Shift {
                src: self.ring[k % RING].clone(),
                dst: self.ring[(k + 1) % RING].clone(),
                k: k as u32 + 1,
                then: then(k),
                threads: self.threads.clone(),
                generation: Generation::new(),
            })
            .collect()
    }

    /// Runs one frame: a clear of the ring, the shifts (every 60th inserted as a pass that is
    /// not `Send`), a copy of the ring into the readback buffer. Returns the execution's GPU
    /// timings' pass names in recording order, or the error.
    fn run(
        &self,
        ctx: &Context,
        graph: &Graph,
        then: impl Fn(usize) -> Then,
    ) -> Result<Vec<String>, Error> {
        let q = ctx.graphics();
        let ring = self.ring.clone();
        let mut shifts = self.shifts(then);
        let mut b = graph.record().insert_fn(
            "clear",
            q,
            {
                let ring = ring.clone();
                move |d: &mut Declare<'_>| {
                    for r in &ring {
                        d.uses(r, Access::TRANSFER_WRITE).discard();
                    }
                }
            },
            move |r| {
                for buf in &ring {
                    // SAFETY: the buffer is alive and in the declared state.
                    unsafe {
                        r.device()
                            .cmd_fill_buffer(r.cmd(), buf.handle(), 0, vk::WHOLE_SIZE, 0)
                    };
                }
                Ok(())
            },
        );
        for (k, s) in shifts.iter_mut().enumerate() {
            let name = format!("shift {k}");
            b = if k % 60 == 59 {
                b.insert_pass(name, s, q)
            } else {
                b.insert_send_pass(name, s, q)
            };
        }
        let (ring, readback) = (self.ring.clone(), self.readback.clone());
        let mut host = HostRead(self.readback.clone());
        let fence = b
            .insert_send_fn(
                "read back",
                q,
                {
                    let (ring, readback) = (ring.clone(), readback.clone());
                    move |d: &mut Declare<'_>| {
                        ring.iter().for_each(|r| {
                            d.uses(r, Access::TRANSFER_READ);
                        });
                        d.uses(&readback, Access::TRANSFER_WRITE).discard();
                    }
                },
                move |r| {
                    for (i, buf) in ring.iter().enumerate() {
                        let region = vk::BufferCopy {
                            src_offset: 0,
                            dst_offset: i as u64 * SIZE,
                            size: SIZE,
                        };
                        // SAFETY: both buffers are alive and in the declared states.
                        unsafe {
                            r.device().cmd_copy_buffer(
                                r.cmd(),
                                buf.handle(),
                                readback.handle(),
                                &[region],
                            )
                        };
                    }
                    Ok(())
                },
            )
            .insert_pass("host", &mut host, q)
            .finish()?
            .execute()?;
        fence.wait()?;
        let timings = fence.take_gpu_timings().expect("timed, and complete");
        Ok(timings
            .passes()
            .iter()
            .map(|p| p.pass().to_owned())
            .collect())
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; (SIZE * RING as u64) as usize];
        self.readback.read(0, &mut out).unwrap();
        out
    }

    /// The threads that recorded the shifts since the last call.
    fn recorders(&self) -> usize {
        let mut t = self.threads.lock().unwrap();
        let n = t.len();
        t.clear();
        n
    }
}

fn timed_graph(ctx: &Context) -> Graph {
    let graph = ctx.graph().unwrap();
    graph.set_gpu_timings(Some(ctx.timestamp_support()));
    graph
}

#[test]
fn a_large_frame_on_four_threads_matches_one_thread_bit_for_bit() {
    let ctx = ctx();
    let frame = Frame::new(&ctx);

    let single = timed_graph(&ctx);
    let names_single = frame.run(&ctx, &single, |_| Then::Fine).unwrap();
    let expected = frame.bytes();
    assert_eq!(frame.recorders(), 1, "threads off: the calling thread only");
    // The last pass's buffer holds the numbers of the passes before it, newest first: proof
    // that they ran in order.
    let last = |ring: usize, word: usize| {
        let at = ring * SIZE as usize + 4 * word;
        u32::from_le_bytes(expected[at..at + 4].try_into().unwrap())
    };
    for word in 0..SIZE as usize / 4 {
        assert_eq!(
            last(PASSES % RING, word),
            (PASSES - word) as u32,
            "word {word}"
        );
    }
    assert_eq!(names_single.len(), PASSES + 3);

    let threaded = timed_graph(&ctx);
    threaded.set_recording_threads(4);
    threaded.set_min_passes_per_recording_thread(8);
    for round in 0..3 {
        // Round 0 plans; the later ones reuse the plan (and recycle the threads' pools).
        let names = frame.run(&ctx, &threaded, |_| Then::Fine).unwrap();
        assert_eq!(frame.bytes(), expected, "round {round}");
        assert_eq!(
            frame.recorders(),
            4,
            "round {round}: every thread recorded shifts"
        );
        assert_eq!(
            names, names_single,
            "one timing per pass, in recording order"
        );
        assert_clean(&ctx);
    }
    drop((single, threaded));
    assert_clean(&ctx);
}

#[test]
fn a_failing_pass_on_another_thread_is_the_executions_error() {
    let ctx = ctx();
    let frame = Frame::new(&ctx);
    let graph = timed_graph(&ctx);
    graph.set_recording_threads(4);
    graph.set_min_passes_per_recording_thread(8);
    let states = || frame.ring.iter().map(|b| b.state()).collect::<Vec<_>>();
    let before = states();
    // Shifts 50 and 75 fail, on other threads: 50 on thread 3 (the last chunk of the first
    // run), 75 on thread 1 (the second chunk of the second run), which is joined first. The
    // error is the first in recording order, as on one thread.
    let err = frame
        .run(&ctx, &graph, |k| {
            if k == 50 || k == 75 {
                Then::Fail
            } else {
                Then::Fine
            }
        })
        .expect_err("the pass fails");
    assert_eq!(
        err.to_string(),
        "pass `shift 50` failed to record: planted 51"
    );
    assert_eq!(frame.recorders(), 4);
    assert_eq!(states(), before, "nothing was committed");

    // The graph works on, with the same command buffers, and gives the right result.
    let single = timed_graph(&ctx);
    frame.run(&ctx, &single, |_| Then::Fine).unwrap();
    let expected = frame.bytes();
    frame.run(&ctx, &graph, |_| Then::Fine).unwrap();
    assert_eq!(frame.bytes(), expected);
    drop((single, graph));
    assert_clean(&ctx);
}

#[test]
fn a_panic_on_another_thread_reaches_the_caller_and_leaves_the_graph_working() {
    let ctx = ctx();
    let frame = Frame::new(&ctx);
    let graph = timed_graph(&ctx);
    graph.set_recording_threads(4);
    graph.set_min_passes_per_recording_thread(8);
    let states = || frame.ring.iter().map(|b| b.state()).collect::<Vec<_>>();
    let before = states();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        frame.run(&ctx, &graph, |k| {
            if k == 200 {
                Then::Panic
            } else {
                Then::Fine
            }
        })
    }));
    let payload = caught.expect_err("the pass's panic reaches the caller");
    let message = payload
        .downcast_ref::<String>()
        .expect("the pass's own panic payload");
    assert_eq!(message, "planted panic in `shift 200`");
    assert_eq!(frame.recorders(), 4);
    assert_eq!(states(), before, "nothing was committed");

    let single = timed_graph(&ctx);
    frame.run(&ctx, &single, |_| Then::Fine).unwrap();
    let expected = frame.bytes();
    frame.run(&ctx, &graph, |_| Then::Fine).unwrap();
    assert_eq!(frame.bytes(), expected);
    drop((single, graph));
    assert_clean(&ctx);
}

/// Clears the ring, or copies it into the readback buffer: the frame's first and last passes
/// as replayable passes.
struct Ends {
    ring: Vec<Arc<StBuffer>>,
    readback: Option<Arc<StBuffer>>,
    generation: Generation,
}

impl Pass for Ends {
    fn declare(&self, d: &mut Declare<'_>) {
        match &self.readback {
            None => self.ring.iter().for_each(|r| {
                d.uses(r, Access::TRANSFER_WRITE).discard();
            }),
            Some(readback) => {
                self.ring.iter().for_each(|r| {
                    d.uses(r, Access::TRANSFER_READ);
                });
                d.uses(readback, Access::TRANSFER_WRITE).discard();
            }
        }
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        for (i, buf) in self.ring.iter().enumerate() {
            let (d, cmd) = (r.device(), r.cmd());
            // SAFETY: the buffers are alive and in the declared states.
            unsafe {
                match &self.readback {
                    None => d.cmd_fill_buffer(cmd, buf.handle(), 0, vk::WHOLE_SIZE, 0),
                    Some(readback) => {
                        let at = i as u64 * SIZE;
                        let region = vk::BufferCopy::default().dst_offset(at).size(SIZE);
                        d.cmd_copy_buffer(cmd, buf.handle(), readback.handle(), &[region])
                    }
                }
            }
        }
        Ok(())
    }
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the commands name only the pass's buffers, which it keeps alive.
        Some(unsafe { self.generation.key() })
    }
}

/// With replay on, a frame recorded on four threads keeps its pieces and replays them: the
/// same bytes, the same per-pass timings, and no thread records again.
#[test]
fn a_frame_recorded_on_threads_replays() {
    let ctx = ctx();
    let frame = Frame::new(&ctx);
    let expected = {
        let single = timed_graph(&ctx);
        frame.run(&ctx, &single, |_| Then::Fine).unwrap();
        frame.recorders();
        frame.bytes()
    };
    let graph = timed_graph(&ctx);
    graph.set_recording_threads(4);
    graph.set_min_passes_per_recording_thread(8);
    graph.set_replay(true);
    let q = ctx.graphics();
    let mut shifts = frame.shifts(|_| Then::Fine);
    let ends = |readback: Option<Arc<StBuffer>>| Ends {
        ring: frame.ring.clone(),
        readback,
        generation: Generation::new(),
    };
    let (mut clear, mut copy) = (ends(None), ends(Some(frame.readback.clone())));
    let mut host = HostRead(frame.readback.clone());
    let mut replays = String::new();
    for round in 0..6 {
        frame
            .readback
            .write(0, &vec![0xee; (SIZE * RING as u64) as usize])
            .unwrap();
        let mut b = graph.record().insert_send_pass("clear", &mut clear, q);
        for (k, s) in shifts.iter_mut().enumerate() {
            b = b.insert_send_pass(format!("shift {k}"), s, q);
        }
        let b = b.insert_send_pass("read back", &mut copy, q);
        let fence = b
            .insert_pass("host", &mut host, q)
            .finish()
            .unwrap()
            .execute()
            .unwrap();
        fence.wait().unwrap();
        assert_eq!(frame.bytes(), expected, "round {round}");
        let timings = fence.take_gpu_timings().expect("timed");
        assert_eq!(timings.passes().len(), PASSES + 3, "round {round}");
        let recorders = frame.recorders();
        if fence.replayed() {
            assert_eq!(recorders, 0, "round {round}: a replay records nothing");
            replays.push('R');
        } else {
            assert_eq!(recorders, 4, "round {round}: every thread recorded shifts");
            replays.push('-');
        }
    }
    // The single-thread run already left the ring written: the first frame plans for the
    // states every later frame finds, and records once.
    assert_eq!(replays, "-RRRRR");
    drop(graph);
    assert_clean(&ctx);
}
