//! [`WrittenRanges`]: the byte ranges each destination buffer gets in the batch being gathered,
//! to refuse an upload that overlaps an earlier one.
//!
//! This runs once per upload, and streams are made of many small ones (4096 pieces of 64 KiB
//! in a second), so the usual case costs no hashing and no tree walk: uploads to one buffer
//! in ascending order (the last destination is remembered, and a range after the last one is
//! appended). Anything else is a binary search.

use std::collections::HashMap;
use std::ops::Range;

/// Per destination (by id), its written ranges, sorted and disjoint.
#[derive(Debug, Default)]
pub(crate) struct WrittenRanges {
    /// (destination id, its ranges as (start, end)), in first-written order.
    lists: Vec<(u64, Vec<(u64, u64)>)>,
    /// Destination id -> index in `lists`.
    index: HashMap<u64, usize>,
    /// The index of the destination written last.
    last: Option<usize>,
    /// Emptied lists of earlier batches, for their allocations.
    spare: Vec<Vec<(u64, u64)>>,
}

impl WrittenRanges {
    /// Whether `range` (not empty) overlaps a range recorded for `dst`. `dst` becomes the
    /// destination that [`WrittenRanges::record`] records for.
    pub(crate) fn overlaps(&mut self, dst: u64, range: &Range<u64>) -> bool {
        let i = match self.last {
            Some(i) if self.lists[i].0 == dst => i,
            _ => match self.index.get(&dst) {
                Some(&i) => i,
                None => {
                    let list = self.spare.pop().unwrap_or_default();
                    self.lists.push((dst, list));
                    self.index.insert(dst, self.lists.len() - 1);
                    self.lists.len() - 1
                }
            },
        };
        self.last = Some(i);
        let list = &self.lists[i].1;
        match list.last() {
            // After everything recorded: the usual case.
            None => false,
            Some(&(_, end)) if end <= range.start => false,
            _ => {
                let at = list.partition_point(|&(start, _)| start < range.start);
                let before = at > 0 && list[at - 1].1 > range.start;
                let after = list.get(at).is_some_and(|&(start, _)| start < range.end);
                before || after
            }
        }
    }

    /// Records `range` for the destination of the last [`WrittenRanges::overlaps`], which
    /// found no overlap.
    pub(crate) fn record(&mut self, range: Range<u64>) {
        let Some((_, list)) = self.last.and_then(|i| self.lists.get_mut(i)) else {
            return;
        };
        let at = match list.last() {
            Some(&(_, end)) if end > range.start => {
                list.partition_point(|&(start, _)| start < range.start)
            }
            _ => list.len(),
        };
        list.insert(at, (range.start, range.end));
    }

    /// Forgets every range (a new batch), keeping the allocations.
    pub(crate) fn clear(&mut self) {
        for (_, mut list) in self.lists.drain(..) {
            list.clear();
            self.spare.push(list);
        }
        self.index.clear();
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `overlaps`, then `record` when it found none: what the uploader does.
    fn insert(w: &mut WrittenRanges, dst: u64, range: Range<u64>) -> bool {
        if w.overlaps(dst, &range) {
            return false;
        }
        w.record(range);
        true
    }

    #[test]
    fn ranges_of_one_destination_may_touch_but_not_overlap_in_any_order() {
        let mut w = WrittenRanges::default();
        // Ascending, touching.
        assert!(insert(&mut w, 1, 0..16));
        assert!(insert(&mut w, 1, 16..32));
        // Another destination is independent, and coming back to the first one still checks.
        assert!(insert(&mut w, 2, 8..24));
        assert!(!insert(&mut w, 1, 8..9), "inside 0..16");
        // Out of order, into the gap 64..96 between 32..64 (added next) and 96..128.
        assert!(insert(&mut w, 1, 96..128));
        assert!(insert(&mut w, 1, 32..64));
        assert!(!insert(&mut w, 1, 60..70), "overlaps the end of 32..64");
        assert!(!insert(&mut w, 1, 90..100), "overlaps the start of 96..128");
        assert!(!insert(&mut w, 1, 32..33), "same start as 32..64");
        assert!(!insert(&mut w, 1, 0..200), "covers everything");
        assert!(insert(&mut w, 1, 64..96), "exactly the gap");
        assert!(!insert(&mut w, 1, 127..128), "the last byte");
        assert!(insert(&mut w, 1, 128..129));
        assert_eq!(
            w.lists[0],
            (
                1,
                vec![(0, 16), (16, 32), (32, 64), (64, 96), (96, 128), (128, 129)]
            )
        );
        assert_eq!(w.lists[1], (2, vec![(8, 24)]));
        // A check alone records nothing.
        assert!(!w.overlaps(2, &(100..101)));
        assert_eq!(w.lists[1], (2, vec![(8, 24)]));

        // A new batch: nothing recorded, allocations kept.
        w.clear();
        assert!(w.lists.is_empty() && w.spare.len() == 2);
        assert!(insert(&mut w, 2, 0..8) && insert(&mut w, 1, 0..8));
        assert_eq!(w.lists, vec![(2, vec![(0, 8)]), (1, vec![(0, 8)])]);
    }
}
