//! Threads kept from one execution to the next to record on ([`crate::Graph::set_recording_threads`]).
//!
//! Starting a thread costs 10 to 30 µs, as much as recording dozens of small passes, so a
//! graph starts its recording threads once and each execution hands them tasks that borrow
//! its passes and command buffers. [`RecordingWorkers::run`] returns only once every task has
//! finished, also when the calling thread's own part panics: that is what makes lending
//! borrowed tasks to long-lived threads sound, as `std::thread::scope` does for threads it
//! starts itself.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread;

/// Work for a recording thread, borrowing from the execution for `'a`.
pub(crate) type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

/// What a task reports when it ends: `Err` holds its panic's payload.
type Done = thread::Result<()>;

/// The recording threads a graph started, idle between executions. Kept with the command
/// pools, whose lock an execution holds while recording, so one execution at a time uses
/// them.
#[derive(Default)]
pub(crate) struct RecordingWorkers {
    threads: Vec<Worker>,
}

struct Worker {
    tasks: mpsc::Sender<Task<'static>>,
    handle: Option<thread::JoinHandle<()>>,
}

/// A task and the channel it reports on; fields drop in order, so the task (and what it
/// borrows) is gone before `done` can report.
struct Reporting<'a> {
    task: Task<'a>,
    done: mpsc::Sender<Done>,
}

/// Waits, also while unwinding, until `pending` tasks have reported.
struct WaitAll {
    done: mpsc::Receiver<Done>,
    pending: usize,
    panicked: Option<Box<dyn Any + Send>>,
}

impl WaitAll {
    fn wait(&mut self) {
        while self.pending > 0 {
            // `Err`: every sender is gone, so every task has been run or dropped.
            let Ok(done) = self.done.recv() else { break };
            self.pending -= 1;
            if let Err(payload) = done {
                self.panicked.get_or_insert(payload);
            }
        }
    }
}

impl Drop for WaitAll {
    fn drop(&mut self) {
        self.wait();
    }
}

impl RecordingWorkers {
    /// Runs each of `tasks` on a kept thread of its own (starting threads as needed) and
    /// `own` on the calling thread meanwhile. Returns once all have finished: `own`'s result
    /// and the first task panic's payload, if any. If `own` panics, the panic goes on once
    /// every task has finished. A thread that cannot be started runs its task here first.
    pub(crate) fn run<R>(
        &mut self,
        tasks: Vec<Task<'_>>,
        own: impl FnOnce() -> R,
    ) -> (R, Option<Box<dyn Any + Send>>) {
        let (done, receiver) = mpsc::channel();
        let mut wait = WaitAll {
            done: receiver,
            pending: 0,
            panicked: None,
        };
        for (i, task) in tasks.into_iter().enumerate() {
            // The thread first: starting one may unwind (a panicking log backend), and then no
            // task of this round may be counted as pending that was never handed out.
            let worker = self.thread(i);
            let reporting = Reporting {
                task,
                done: done.clone(),
            };
            let boxed: Task<'_> = Box::new(move || {
                let Reporting { task, done } = reporting;
                let outcome = panic::catch_unwind(AssertUnwindSafe(task));
                let _ = done.send(outcome);
            });
            // SAFETY: the task only runs (or is dropped) before it reports on `done`, and
            // `wait` (dropped at the latest when this function returns or unwinds) blocks
            // until every task sent here has reported or been dropped unreported. So what the
            // task borrows outlives every use of it, as for `std::thread::scope`.
            let boxed: Task<'static> = unsafe { std::mem::transmute(boxed) };
            wait.pending += 1;
            match worker {
                Some(worker) => {
                    if let Err(mpsc::SendError(task)) = worker.tasks.send(boxed) {
                        task();
                    }
                }
                None => boxed(),
            }
        }
        drop(done);
        let result = own();
        wait.wait();
        (result, wait.panicked.take())
    }

    /// Kept thread `i`, started if it is not yet; `None` if it cannot be.
    fn thread(&mut self, i: usize) -> Option<&Worker> {
        while self.threads.len() <= i {
            let (tasks, receiver) = mpsc::channel::<Task<'static>>();
            let name = format!("vk-baton recording {}", self.threads.len() + 1);
            let spawned = thread::Builder::new().name(name).spawn(move || {
                for task in receiver {
                    task();
                }
            });
            match spawned {
                Ok(handle) => self.threads.push(Worker {
                    tasks,
                    handle: Some(handle),
                }),
                Err(e) => {
                    log::warn!("could not start a recording thread ({e}); recording on fewer");
                    return None;
                }
            }
        }
        self.threads.get(i)
    }
}

impl Drop for RecordingWorkers {
    fn drop(&mut self) {
        // Closing each channel ends its thread's loop.
        let handles: Vec<_> = self
            .threads
            .drain(..)
            .filter_map(|mut w| w.handle.take())
            .collect();
        for h in handles {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_borrow_and_run_on_kept_threads() {
        let mut workers = RecordingWorkers::default();
        for round in 0..3 {
            let mut seen = vec![None; 3];
            let tasks: Vec<Task<'_>> = seen
                .iter_mut()
                .map(|slot| -> Task<'_> { Box::new(move || *slot = Some(thread::current().id())) })
                .collect();
            let (own, panicked) = workers.run(tasks, || thread::current().id());
            assert!(panicked.is_none());
            let ids: Vec<_> = seen.into_iter().map(|s| s.expect("ran")).collect();
            assert!(!ids.contains(&own), "round {round}: on other threads");
            assert_eq!(
                ids,
                workers
                    .threads
                    .iter()
                    .map(|w| w.handle.as_ref().unwrap().thread().id())
                    .collect::<Vec<_>>(),
                "round {round}: the kept threads, one task each"
            );
        }
    }

    #[test]
    fn a_task_panic_comes_back_after_every_task_finished() {
        let mut workers = RecordingWorkers::default();
        let mut finished = [false; 2];
        let (a, b) = finished.split_at_mut(1);
        let tasks: Vec<Task<'_>> = vec![
            Box::new(|| panic!("planted")),
            Box::new(move || {
                thread::sleep(std::time::Duration::from_millis(20));
                a[0] = true;
            }),
            Box::new(move || b[0] = true),
        ];
        let (_, panicked) = workers.run(tasks, || ());
        let payload = panicked.expect("the task's panic");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"planted"));
        assert_eq!(finished, [true, true]);
        // The thread that panicked is still there for the next execution.
        let mut ran = false;
        let (_, panicked) = workers.run(vec![Box::new(|| ran = true)], || ());
        assert!(panicked.is_none() && ran);
    }

    #[test]
    fn a_panic_of_the_callers_part_waits_for_the_tasks() {
        let mut workers = RecordingWorkers::default();
        let mut finished = false;
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            let task: Task<'_> = Box::new(|| {
                thread::sleep(std::time::Duration::from_millis(20));
                finished = true;
            });
            workers.run(vec![task], || panic!("own"))
        }));
        assert!(caught.is_err());
        assert!(finished, "the task finished before the panic went on");
    }
}
