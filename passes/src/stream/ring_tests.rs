//! Unit tests of the staging ring's allocation rule, without a GPU.

use super::*;

/// A batch still in flight: its lease and the bytes it holds.
type LiveBatch = (Arc<BatchLease>, Vec<(u64, u64)>);

/// `ring_alloc` on a ring of `size` bytes with live `spans` (each of its own batch) and
/// `head`.
fn alloc_in(spans: &[(u64, u64)], head: u64, size: u64, n: u64, align: u64) -> Option<u64> {
    let leases: Vec<Arc<BatchLease>> = spans.iter().map(|_| Arc::new(BatchLease)).collect();
    let mut spans: VecDeque<Span> = spans
        .iter()
        .zip(&leases)
        .map(|(&(start, end), l)| Span {
            start,
            end,
            lease: Arc::downgrade(l),
        })
        .collect();
    let mut head = head;
    ring_alloc(&mut spans, &mut head, size, n, align, &Arc::new(BatchLease))
}

#[test]
fn ring_allocation_wraps_and_respects_the_tail() {
    // Empty: at 0.
    assert_eq!(alloc_in(&[], 0, 100, 10, 16), Some(0));
    // After head, aligned.
    assert_eq!(alloc_in(&[(0, 10)], 10, 100, 10, 16), Some(16));
    // No room after head: wraps to 0 when the tail leaves room.
    assert_eq!(alloc_in(&[(40, 90)], 90, 100, 30, 16), Some(0));
    assert_eq!(alloc_in(&[(20, 90)], 90, 100, 30, 16), None);
    // Wrapped: room only between head and tail.
    assert_eq!(alloc_in(&[(60, 100), (0, 10)], 10, 100, 40, 16), Some(16));
    assert_eq!(alloc_in(&[(60, 100), (0, 10)], 10, 100, 45, 16), None);
    // Larger than the ring, or empty.
    assert_eq!(alloc_in(&[], 0, 100, 101, 1), None);
    assert_eq!(alloc_in(&[], 0, 100, 0, 1), None);
    // Overflow is None, not a panic.
    assert_eq!(alloc_in(&[(0, 10)], 10, u64::MAX, u64::MAX, 16), None);
}

#[test]
fn spans_of_one_batch_merge_and_of_two_batches_do_not() {
    let (a, b) = (Arc::new(BatchLease), Arc::new(BatchLease));
    let (mut spans, mut head) = (VecDeque::new(), 0);
    assert_eq!(ring_alloc(&mut spans, &mut head, 1000, 10, 16, &a), Some(0));
    assert_eq!(
        ring_alloc(&mut spans, &mut head, 1000, 10, 16, &a),
        Some(16)
    );
    assert_eq!(
        ring_alloc(&mut spans, &mut head, 1000, 10, 16, &b),
        Some(32)
    );
    let got: Vec<(u64, u64)> = spans.iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(got, vec![(0, 26), (32, 42)]);
    assert_eq!(head, 42);
}

/// Random batches of random uploads, finished in random order: live spans never overlap,
/// stay inside the ring, respect the alignment, and every allocation that fails would not
/// have fit in the free space the ring rule may use.
#[test]
fn random_batches_never_share_bytes() {
    const SIZE: u64 = 4096;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let (mut spans, mut head) = (VecDeque::new(), 0u64);
    let mut live: Vec<LiveBatch> = Vec::new();
    let (mut placed, mut refused) = (0, 0);
    for _ in 0..2000 {
        // Finish random batches (not necessarily the oldest), keeping up to 6 in flight.
        let keep = next(7) as usize;
        while live.len() > keep {
            let i = next(live.len() as u64) as usize;
            live.swap_remove(i);
        }
        reclaim_spans(&mut spans, &mut head);
        let lease = Arc::new(BatchLease);
        let mut taken = Vec::new();
        for _ in 0..1 + next(4) {
            let (size, align) = (1 + next(700), [1, 4, 16, 48][next(4) as usize]);
            match ring_alloc(&mut spans, &mut head, SIZE, size, align, &lease) {
                Some(start) => {
                    placed += 1;
                    assert_eq!(start % align, 0);
                    assert!(start + size <= SIZE);
                    for (_, other) in &live {
                        for &(s, e) in other {
                            assert!(start + size <= s || e <= start, "overlap");
                        }
                    }
                    for &(s, e) in &taken {
                        assert!(start + size <= s || e <= start, "overlap in a batch");
                    }
                    taken.push((start, start + size));
                }
                None => refused += 1,
            }
        }
        live.push((lease, taken));
    }
    // The test exercised both outcomes.
    assert!(
        placed > 1000 && refused > 100,
        "{placed} placed, {refused} refused"
    );
}
