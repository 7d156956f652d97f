//! Recording the pieces of one execution on the graph's recording threads: each pass handed
//! by reference to the thread that records it, and the executor's recording loop run for
//! each thread's pieces on that thread ([`SpreadWork::record`]).

use super::RecordingThreads;
use crate::error::{Error, Result};
use crate::extensions::{PassSource, SpreadWork};
use crate::pass::{Pass, PassEntry};
use crate::queue::Queue;
use parking_lot::Mutex;
use std::any::Any;

/// What a thread's recording keeps alive.
type Keep = Vec<Box<dyn Any + Send + Sync>>;

/// How a thread's recording ended: on an error, the index of the piece it failed in.
type ThreadOutcome = std::result::Result<(), (usize, Error)>;

impl RecordingThreads {
    /// Records the pieces of `work` on the graph's recording threads, each pass by the thread
    /// its piece names. On an error, the first in recording order, as one thread would have
    /// met it; a thread's panic goes on once every thread has stopped.
    pub(super) fn record_spread(
        &mut self,
        threads: usize,
        passes: &mut [PassEntry<'_>],
        work: &dyn SpreadWork,
        keep: &mut Keep,
    ) -> Result<()> {
        let HandedOut {
            names,
            queues,
            mut main,
            workers,
        } = hand_out(work, passes, threads)?;
        let mut keeps: Vec<Keep> = (1..threads)
            .map(|_| self.spare_keeps.pop().unwrap_or_default())
            .collect();
        let (names, queues) = (&names[..], &queues[..]);
        let pool = (self.pool(threads))
            .map_err(|e| Error::InvalidInput(format!("no recording threads: {e}")))?;
        // Per recording thread but the calling one: its outcome, once it has run.
        let mut outcomes: Vec<Option<ThreadOutcome>> = (1..threads).map(|_| None).collect();
        // What each of the pool's threads takes: its passes, its list of objects to keep
        // alive, and where its outcome goes.
        let slots: Vec<_> = (workers.into_iter().zip(keeps.iter_mut()))
            .zip(outcomes.iter_mut())
            .map(|((list, keep), outcome)| Mutex::new(Some((list, keep, outcome))))
            .collect();
        // The calling thread records its own pieces (its passes need not be `Send`) while
        // each of the pool's threads records those of one recording thread; the scope returns
        // once all have, and a panic in any goes on from here after that.
        let main = pool.in_place_scope(|scope| {
            scope.spawn_broadcast(|_, thread| {
                let w = thread.index();
                let Some((mut list, keep, outcome)) = slots.get(w).and_then(|s| s.lock().take())
                else {
                    return;
                };
                let list = list
                    .iter_mut()
                    .map(|(i, p)| (*i, &mut **p as &mut dyn Pass));
                let mut handed = Handed {
                    list,
                    names,
                    queues,
                };
                *outcome = Some(work.record(w + 1, &mut handed, keep));
            });
            let list = main
                .iter_mut()
                .map(|(i, p)| (*i, &mut **p as &mut dyn Pass));
            let mut handed = Handed {
                list,
                names,
                queues,
            };
            work.record(0, &mut handed, keep)
        });
        drop(slots);
        for mut kept in keeps {
            keep.append(&mut kept);
            if self.spare_keeps.len() < threads {
                self.spare_keeps.push(kept);
            }
        }
        first_failure(main, outcomes.into_iter().flatten())
    }
}

/// The passes handed to one thread, in the order it records them, with every pass's name and
/// queue (barrier labels name neighbours recorded elsewhere).
struct Handed<'l, I> {
    list: I,
    names: &'l [&'l str],
    queues: &'l [&'l Queue],
}

impl<'l, I> PassSource for Handed<'l, I>
where
    I: Iterator<Item = (usize, &'l mut (dyn Pass + 'l))>,
{
    fn name(&self, p: usize) -> &str {
        self.names[p]
    }

    fn pass(&mut self, p: usize) -> Result<(&mut dyn Pass, &str, &Queue)> {
        let Some((_, pass)) = self.list.next().filter(|(i, _)| *i == p) else {
            return Err(Error::InvalidInput(format!(
                "pass `{}` was not handed to its recording thread",
                self.names[p]
            )));
        };
        Ok((pass, self.names[p], self.queues[p]))
    }
}

/// The passes of an execution, each handed by reference to the thread that records it, in
/// the order that thread records them; with every pass's name and queue, which all threads
/// read.
struct HandedOut<'l, 'p> {
    names: Vec<&'l str>,
    queues: Vec<&'l Queue>,
    main: Vec<(usize, &'l mut (dyn Pass + 'p))>,
    /// Per recording thread but the calling one.
    workers: Vec<Vec<(usize, &'l mut (dyn Pass + Send + 'p))>>,
}

/// Hands each pass of `passes` to the thread whose piece records it. Only `Send` passes go
/// to other threads; the plan records each pass once.
fn hand_out<'l, 'p>(
    work: &dyn SpreadWork,
    passes: &'l mut [PassEntry<'p>],
    threads: usize,
) -> Result<HandedOut<'l, 'p>> {
    let mut out = HandedOut {
        names: Vec::with_capacity(passes.len()),
        queues: Vec::with_capacity(passes.len()),
        main: Vec::new(),
        workers: (1..threads).map(|_| Vec::new()).collect(),
    };
    let mut local: Vec<Option<&'l mut (dyn Pass + 'p)>> = Vec::with_capacity(passes.len());
    let mut sendable: Vec<Option<&'l mut (dyn Pass + Send + 'p)>> =
        Vec::with_capacity(passes.len());
    for PassEntry { name, pass, queue } in passes.iter_mut() {
        let (name, queue): (&str, &Queue) = (name, queue);
        out.names.push(name);
        out.queues.push(queue);
        if pass.is_send() {
            local.push(None);
            sendable.push(pass.as_send());
        } else {
            local.push(Some(&mut **pass));
            sendable.push(None);
        }
    }
    let mut twice = false;
    work.each_pass(&mut |thread, i| {
        if thread == 0 {
            let send = || sendable[i].take().map(|p| p as &mut (dyn Pass + 'p));
            match local[i].take().or_else(send) {
                Some(pass) => out.main.push((i, pass)),
                None => twice = true,
            }
        } else {
            match sendable[i].take() {
                Some(pass) => out.workers[thread - 1].push((i, pass)),
                None => twice = true,
            }
        }
    });
    if twice {
        return Err(Error::InvalidInput("a plan records a pass twice".into()));
    }
    Ok(out)
}

/// The outcome of a spread recording: the first error in recording order, as one thread
/// would have met it.
fn first_failure(main: ThreadOutcome, outcomes: impl Iterator<Item = ThreadOutcome>) -> Result<()> {
    let mut failed = main.err();
    for e in outcomes.filter_map(|o| o.err()) {
        if failed.as_ref().is_none_or(|f| e.0 < f.0) {
            failed = Some(e);
        }
    }
    match failed {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}
