//! Which set binding picks when every set is busy, on tokens driven by hand: no wait lasts
//! forever. Before sets could be lost, a set whose execution failed mid-submit (its token
//! failed, never complete) kept `choose_set` polling for good.

use super::*;
use crate::completion::CompletionToken;
use std::sync::mpsc;
use std::time::Instant;

/// A device whose functions are all stubs: these tests make no Vulkan call (no token has
/// fences, no set has heaps or objects).
fn no_device() -> Arc<ash::Device> {
    // SAFETY: loading resolves nothing; a stub is only reached by calling it, which nothing
    // here does.
    Arc::new(unsafe { ash::Device::load_with(|_| std::ptr::null(), vk::Device::null()) })
}

/// [`MAX_SETS`] sets, each busy with a token of its own (set `i` bound at clock `i`, so set 0
/// is the oldest), and the tokens.
fn all_busy() -> (HeapSets, Vec<CompletionToken>) {
    let device = no_device();
    let mut sets = HeapSets::new(device.clone());
    let tokens: Vec<CompletionToken> = (0..MAX_SETS)
        .map(|_| CompletionToken::new(device.clone()))
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        sets.sets.push(HeapSet {
            user: Use::Busy(t.clone()),
            last_bound: i as u64,
            ..Default::default()
        });
    }
    (sets, tokens)
}

/// `choose_set` on another thread; fails the test if it is still waiting after 5 s (then the
/// thread is left behind, waiting).
fn choose(mut sets: HeapSets) -> (Result<usize>, HeapSets) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let chosen = sets.choose_set();
        tx.send((chosen, sets))
            .expect("the test waits for the answer");
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("choose_set still waiting after 5 s")
}

fn statuses(sets: &mut HeapSets) -> Vec<Status> {
    sets.sets.iter_mut().map(|s| s.poll().unwrap()).collect()
}

#[test]
fn sets_of_executions_that_failed_mid_submit_are_lost_and_binding_makes_a_new_one() {
    let (sets, tokens) = all_busy();
    // What `Execution::submit_once` does when a submit fails and the queues cannot be waited
    // idle: the token fails and never completes.
    for t in &tokens {
        t.set_failed();
    }
    let (chosen, mut sets) = choose(sets);
    assert_eq!(chosen.unwrap(), MAX_SETS);
    let mut want = vec![Status::Lost; MAX_SETS];
    want.push(Status::Free);
    assert_eq!(statuses(&mut sets), want);
}

#[test]
fn a_failure_while_binding_waits_ends_the_wait() {
    let (sets, tokens) = all_busy();
    let oldest = tokens[0].clone();
    let failer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        oldest.set_failed();
    });
    let (chosen, mut sets) = choose(sets);
    failer.join().unwrap();
    assert_eq!(
        chosen.unwrap(),
        MAX_SETS,
        "a new set in place of the lost one"
    );
    assert_eq!(statuses(&mut sets)[0], Status::Lost);
}

#[test]
fn binding_waits_for_the_oldest_set_and_takes_it_once_its_execution_completes() {
    let (sets, tokens) = all_busy();
    let oldest = tokens[0].clone();
    let completer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        // Submitted with no fences: complete at once.
        oldest.set_submitted(&[]);
    });
    let (chosen, mut sets) = choose(sets);
    completer.join().unwrap();
    assert_eq!(chosen.unwrap(), 0);
    assert_eq!(sets.sets.len(), MAX_SETS);
    assert_eq!(statuses(&mut sets)[1..], [Status::Busy; MAX_SETS - 1]);
}

#[test]
fn a_failure_that_settled_frees_its_set() {
    let (sets, tokens) = all_busy();
    // What every failure that put everything back does: complete, then fail.
    tokens[2].set_submitted(&[]);
    tokens[2].set_failed();
    let (chosen, mut sets) = choose(sets);
    assert_eq!(chosen.unwrap(), 2);
    assert_eq!(statuses(&mut sets)[2], Status::Free);
}

#[test]
fn sets_that_never_complete_end_the_wait_with_an_error_after_the_limit() {
    let (mut sets, _tokens) = all_busy();
    sets.wait_limit = Duration::from_millis(100);
    let start = Instant::now();
    let (chosen, mut sets) = choose(sets);
    assert!(start.elapsed() >= Duration::from_millis(100));
    match chosen {
        Err(Error::TransientSetsBusy { sets, waited }) => {
            assert_eq!((sets, waited), (MAX_SETS, Duration::from_millis(100)))
        }
        other => panic!("expected TransientSetsBusy, got {other:?}"),
    }
    assert_eq!(statuses(&mut sets), [Status::Busy; MAX_SETS]);
}

/// Three free sets whose heaps fit (none is needed): binding takes the one bound longest ago,
/// not the first, so frames in flight keep taking the sets in turn after a wait that freed
/// them (and meet the recordings made with them, with replay on).
#[test]
fn binding_takes_the_free_set_bound_longest_ago() {
    let mut sets = HeapSets::new(no_device());
    for last_bound in [5, 3, 4] {
        sets.sets.push(HeapSet {
            last_bound,
            ..Default::default()
        });
    }
    let (chosen, _) = choose(sets);
    assert_eq!(chosen.unwrap(), 1);
}

/// Binding polls the sets oldest first and stops at the first free one that fits: a set bound
/// after it (a frame still in flight) is not polled, since polling a busy set asks the driver
/// for its fences' status. Here polling would show: the newer sets' executions failed without
/// completing, which a poll turns into lost sets.
#[test]
fn binding_polls_no_set_bound_after_the_free_one_it_takes() {
    let (mut sets, tokens) = all_busy();
    sets.sets[2].user = Use::Free;
    for t in &tokens {
        t.set_failed();
    }
    let (chosen, mut sets) = choose(sets);
    assert_eq!(chosen.unwrap(), 2);
    // Sets 0 and 1, bound before set 2, were polled and found lost; set 3 was not polled.
    let users: Vec<&str> = (sets.sets.iter())
        .map(|s| match s.user {
            Use::Free => "free",
            Use::Busy(_) => "busy",
            Use::Lost => "lost",
        })
        .collect();
    assert_eq!(users, ["lost", "lost", "free", "busy"]);
    // Polled now, set 3 is lost too: the test above would have seen a poll.
    assert_eq!(sets.sets[3].poll().unwrap(), Status::Lost);
}
