//! Executions from several threads on one shared buffer: readers never make each other's
//! plans stale, a writer still does, and every stale plan succeeds when planned again.
//! Runs on lavapipe with validation and synchronization validation; any message fails.

mod common;

use common::*;
use std::sync::{Arc, Barrier};
use vk_baton::ash::vk;
use vk_baton::{BufferDesc, Error, ExecutionFence, Graph, Planned, Queue, StBuffer};
use vk_baton_context::Context;

const ROUNDS: usize = 200;
const SIZE: u64 = 256;
/// The shared buffer's bytes before any writer round (writer rounds write 1..=ROUNDS, all below it).
const INITIAL: u8 = 0xFF;
const _: () = assert!(ROUNDS < INITIAL as usize);

/// A device-local buffer filled with `INITIAL`, and a staging buffer for later writes.
fn shared_buffer(ctx: &Context) -> Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let x = ctx.buffer(BufferDesc::new(SIZE, usage), "shared").unwrap();
    let staging = ctx
        .buffer(
            BufferDesc::upload(SIZE, vk::BufferUsageFlags::TRANSFER_SRC),
            "init",
        )
        .unwrap();
    staging.write(0, &[INITIAL; SIZE as usize]).unwrap();
    let graph = ctx.graph().unwrap();
    let mut copy = CopyBuffer {
        src: staging,
        dst: x.clone(),
    };
    graph
        .record()
        .insert_pass("init", &mut copy, ctx.graphics())
        .finish()
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    x
}

/// Copies the shared buffer into this reader's own host-visible buffer.
struct Reader {
    copy: CopyBuffer,
    host: HostRead,
}

impl Reader {
    fn new(ctx: &Context, x: &Arc<StBuffer>, name: &str) -> Reader {
        let out = ctx
            .buffer(
                BufferDesc::readback(SIZE, vk::BufferUsageFlags::TRANSFER_DST),
                name,
            )
            .unwrap();
        Reader {
            copy: CopyBuffer {
                src: x.clone(),
                dst: out.clone(),
            },
            host: HostRead(out),
        }
    }

    fn plan<'a>(&'a mut self, graph: &'a Graph, q: &'a Queue) -> vk_baton::Result<Planned<'a>> {
        graph
            .record()
            .insert_pass("read shared", &mut self.copy, q)
            .insert_pass("host read", &mut self.host, q)
            .finish()
    }

    /// The value every byte read this round has (an error if they differ: a torn read).
    fn value(&self) -> Result<u8, String> {
        let mut out = [0u8; SIZE as usize];
        self.host.0.read(0, &mut out).map_err(|e| e.to_string())?;
        match out.iter().all(|&b| b == out[0]) {
            true => Ok(out[0]),
            false => Err(format!("a torn read: {out:?}")),
        }
    }
}

/// Writes round `k`'s value into the shared buffer through its own staging buffer.
struct Writer {
    copy: CopyBuffer,
}

impl Writer {
    fn plan<'a>(&'a mut self, graph: &'a Graph, q: &'a Queue) -> vk_baton::Result<Planned<'a>> {
        graph
            .record()
            .insert_pass("write shared", &mut self.copy, q)
            .finish()
    }
}

/// One round of one thread. `attempt` plans, waits at the gate it is given (only on the
/// first attempt: every thread plans before any executes), and executes. Stale plans are
/// planned again. Returns how many were stale.
fn round(
    gate: &Barrier,
    mut attempt: impl FnMut(Option<&Barrier>) -> vk_baton::Result<ExecutionFence>,
) -> Result<usize, String> {
    let mut gate = Some(gate);
    let mut stale = 0;
    loop {
        match attempt(gate.take()) {
            Ok(fence) => {
                fence.wait().map_err(|e| e.to_string())?;
                return Ok(stale);
            }
            Err(Error::StalePlan { .. }) if stale < 100 => stale += 1,
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Plans with `plan`, meets the others at `gate` if given, then executes.
fn plan_meet_execute(
    plan: vk_baton::Result<Planned<'_>>,
    gate: Option<&Barrier>,
) -> vk_baton::Result<ExecutionFence> {
    if let Some(g) = gate {
        g.wait();
    }
    plan?.execute()
}

/// Runs `ROUNDS` rounds of a thread; a failure skips the work but keeps meeting the others
/// at both barriers, so one failing thread cannot hang the rest.
fn rounds(
    gate: &Barrier,
    done: &Barrier,
    mut each: impl FnMut(usize, &Barrier) -> Result<usize, String>,
) -> Result<usize, String> {
    let mut stale = 0;
    let mut failure = None;
    for k in 0..ROUNDS {
        if failure.is_none() {
            match each(k, gate) {
                Ok(n) => stale += n,
                Err(e) => failure = Some(format!("round {k}: {e}")),
            }
        } else {
            gate.wait();
        }
        done.wait();
    }
    failure.map_or(Ok(stale), Err)
}

/// Reader thread body: returns (stale plans, values read per round).
fn reader_thread(
    ctx: &Context,
    x: &Arc<StBuffer>,
    name: &str,
    gate: &Barrier,
    done: &Barrier,
) -> Result<(usize, Vec<u8>), String> {
    let graph = ctx.graph().unwrap();
    let mut reader = Reader::new(ctx, x, name);
    let mut seen = Vec::with_capacity(ROUNDS);
    let stale = rounds(gate, done, |_, gate| {
        let n = round(gate, |g| {
            plan_meet_execute(reader.plan(&graph, ctx.graphics()), g)
        })?;
        seen.push(reader.value()?);
        Ok(n)
    })?;
    Ok((stale, seen))
}

/// Values a reader saw never go back (each read is ordered after the writes before it) and
/// are each the initial value or one a writer round wrote.
fn assert_monotonic(seen: &[u8], writer: bool) {
    assert_eq!(seen.len(), ROUNDS);
    let rank = |v: u8| if v == INITIAL { 0 } else { v as usize };
    for w in seen.windows(2) {
        assert!(
            rank(w[0]) <= rank(w[1]),
            "a read went back in time: {seen:?}"
        );
    }
    for &v in seen {
        let ok = v == INITIAL || (writer && (1..=ROUNDS).contains(&(v as usize)));
        assert!(ok, "read a value no one wrote: {v}");
    }
}

#[test]
fn readers_never_make_each_other_stale() {
    let ctx = ctx();
    let x = shared_buffer(&ctx);
    let (gate, done) = (Barrier::new(2), Barrier::new(2));
    let results: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = ["reader 0", "reader 1"]
            .into_iter()
            .map(|name| {
                let (ctx, x, gate, done) = (&ctx, &x, &gate, &done);
                s.spawn(move || reader_thread(ctx, x, name, gate, done))
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for r in results {
        let (stale, seen) = r.unwrap();
        // Both plans of every round were made before either executed: under a rule where
        // any state change makes a plan stale, one of the two would be stale every round.
        assert_eq!(stale, 0);
        assert_monotonic(&seen, false);
        assert!(seen.iter().all(|&v| v == INITIAL));
    }
    // The last write is still the initial copy, and the reads since are remembered.
    let st = x.state();
    assert_eq!(st.segments.len(), 1, "{st:?}");
    let seg = &st.segments[0].1;
    assert!(seg.write.is_some() && !seg.reads.is_empty(), "{seg:?}");
    assert!(seg.reads[0]
        .access
        .contains(vk::AccessFlags2::TRANSFER_READ));
    assert_clean(&ctx);
}

#[test]
fn a_writer_makes_plans_stale_and_they_succeed_when_planned_again() {
    let ctx = ctx();
    let x = shared_buffer(&ctx);
    let (gate, done) = (Barrier::new(3), Barrier::new(3));
    let (readers, writer_stale) = std::thread::scope(|s| {
        let readers: Vec<_> = ["reader 0", "reader 1"]
            .into_iter()
            .map(|name| {
                let (ctx, x, gate, done) = (&ctx, &x, &gate, &done);
                s.spawn(move || reader_thread(ctx, x, name, gate, done))
            })
            .collect();
        let writer = s.spawn(|| {
            let graph = ctx.graph().unwrap();
            let staging = ctx
                .buffer(
                    BufferDesc::upload(SIZE, vk::BufferUsageFlags::TRANSFER_SRC),
                    "writer staging",
                )
                .unwrap();
            let mut writer = Writer {
                copy: CopyBuffer {
                    src: staging.clone(),
                    dst: x.clone(),
                },
            };
            rounds(&gate, &done, |k, gate| {
                // The previous round's copy from staging has completed (its fence was waited).
                staging
                    .write(0, &[(k + 1) as u8; SIZE as usize])
                    .map_err(|e| e.to_string())?;
                round(gate, |g| {
                    plan_meet_execute(writer.plan(&graph, ctx.graphics()), g)
                })
            })
        });
        let readers: Vec<_> = readers.into_iter().map(|t| t.join().unwrap()).collect();
        (readers, writer.join().unwrap())
    });
    let writer_stale = writer_stale.unwrap();
    let mut reader_stale = 0;
    for r in readers {
        let (stale, seen) = r.unwrap();
        reader_stale += stale;
        assert_monotonic(&seen, true);
    }
    // Every round, all three plans start from one state, so whichever of them runs after the
    // writer, or the writer itself after a reader, is stale: at least one per round.
    assert!(
        reader_stale + writer_stale >= ROUNDS,
        "{reader_stale} + {writer_stale} stale plans in {ROUNDS} rounds"
    );
    // The shared buffer holds what the writer wrote last.
    let graph = ctx.graph().unwrap();
    let mut last = Reader::new(&ctx, &x, "final");
    last.plan(&graph, ctx.graphics())
        .unwrap()
        .execute()
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(last.value(), Ok(ROUNDS as u8));
    assert_clean(&ctx);
}
