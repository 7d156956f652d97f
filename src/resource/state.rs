//! The tracked state behind each resource's mutex, the copy `state()` hands out, and the
//! staleness rule: when a plan made from an earlier state may still run.
//!
//! # Staleness
//!
//! When a plan made before another execution ran is still correct to execute, and the state
//! it then leaves behind.
//!
//! A plan is computed from a snapshot of each resource's state (`planned_from`) and ends in
//! `planned_final`. If other executions committed in between, the resource is now in `now`.
//! Per cell, the plan still holds when one of these is true:
//!
//! - nothing changed there (`now == planned_from`);
//! - the change only **added reads** (layout, contents, owner and last write are the same, and
//!   every read of `planned_from`, and every place the write was visible, is still covered),
//!   and this plan only **reads** there (its final layout, contents, owner and last write are
//!   those of `planned_from`).
//!
//! Why that is enough: a read is ordered after the last write only, never after other reads
//! (rule 1 of the contract), and that write is unchanged, so every barrier and semaphore wait
//! the plan holds for its reads is still exactly right. A plan that writes, transitions a
//! layout or transfers ownership must wait for every read since the last write; it did not
//! see the new ones, so it is stale. Any other change (a write, a layout or ownership change,
//! a discard, the app declaring a state) also makes the plan stale.
//!
//! When such a plan executes, the new state keeps the reads that happened in between: per
//! cell where the plan only read, its final reads are merged with the current ones (per queue,
//! the later timeline value and the union of stages and accesses; later values on one queue
//! signal after everything earlier on it). So after readers A and B both run, in either
//! order, the state names both, and a later writer waits for both. The places where the write
//! was made visible are merged the same way: each was made so by a barrier already submitted
//! on its queue, which every later submission there follows.

use crate::plan::SegmentState;
use crate::queue::Queue;
use ash::vk;
use std::ops::Range;

/// A copy of a resource's tracked state, from `state()`.
///
/// ```no_run
/// # fn f(img: &vk_baton::StImage) {
/// let s = img.state();
/// if let Some(layout) = s.layout() { println!("the whole image is in {layout:?}"); }
/// for (cells, seg) in &s.segments { println!("{cells:?}: {:?}, owner {:?}", seg.layout, seg.owner); }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StateSnapshot {
    /// Per cell range, its state. An image's cells are
    /// `(mip * array_layers + layer) * planes + plane`, where a format with depth and stencil
    /// has two planes (0: depth, 1: stencil, each with its own layout and last accesses) and
    /// any other format one; a buffer's are its bytes.
    pub segments: Vec<(Range<u64>, SegmentState<Queue>)>,
    /// Bumped every time a graph or the app changes the state (reads included).
    pub version: u64,
}

impl StateSnapshot {
    fn uniform<T: PartialEq + Copy>(&self, f: impl Fn(&SegmentState<Queue>) -> T) -> Option<T> {
        let first = f(&self.segments.first()?.1);
        self.segments
            .iter()
            .all(|(_, s)| f(s) == first)
            .then_some(first)
    }

    /// The layout of the whole resource, if every part is in the same one.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let l = img.state().layout();
    /// # }
    /// ```
    pub fn layout(&self) -> Option<vk::ImageLayout> {
        self.uniform(|s| s.layout)
    }

    /// The owning family of the whole resource, if every part has the same (`Some(None)`:
    /// no owner anywhere).
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let owner = img.state().owner();
    /// # }
    /// ```
    pub fn owner(&self) -> Option<Option<u32>> {
        self.uniform(|s| s.owner)
    }

    /// Whether every part's contents are defined.
    ///
    /// ```no_run
    /// # fn f(img: &vk_baton::StImage) {
    /// let ok = img.state().defined();
    /// # }
    /// ```
    pub fn defined(&self) -> bool {
        self.segments.iter().all(|(_, s)| s.defined)
    }
}

/// The version [`Tracked::commit_planned`] reports when the state was merged with other
/// executions' reads, so it is not the plan's final state alone. No commit gives it.
pub(crate) const MERGED: u64 = u64::MAX;

/// The tracked state behind a resource's mutex.
#[derive(Debug)]
pub(crate) struct Tracked {
    pub(crate) segments: Vec<(Range<u64>, SegmentState<Queue>)>,
    pub(crate) version: u64,
}

impl Tracked {
    pub(super) fn new(cells: u64, state: SegmentState<Queue>) -> Self {
        Self {
            segments: vec![(0..cells, state)],
            version: 0,
        }
    }

    pub(super) fn snapshot(&self) -> StateSnapshot {
        StateSnapshot {
            segments: self.segments.clone(),
            version: self.version,
        }
    }

    /// Replaces the state and bumps the version.
    pub(crate) fn commit(&mut self, segments: Vec<(Range<u64>, SegmentState<Queue>)>) {
        self.segments = segments;
        self.version += 1;
    }

    /// Whether a plan made when the state was at `planned_version`, from `planned_from`
    /// (its initial state) to `planned_final` (its final state, in the plan's queue indices,
    /// which `queues` maps to queues) must not run on the state as it is now. Executions that
    /// only added reads where this plan only reads leave it runnable; see
    /// the [module docs](self#staleness) for why that is correct.
    #[inline]
    pub(crate) fn is_stale_for(
        &self,
        planned_version: u64,
        planned_from: &[(Range<u64>, SegmentState<usize>)],
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        queues: &[Queue],
    ) -> bool {
        self.version != planned_version && self.changed_since(planned_from, planned_final, queues)
    }

    /// [`Tracked::is_stale_for`] once the version moved on: whether the changes since matter.
    #[inline(never)]
    fn changed_since(
        &self,
        planned_from: &[(Range<u64>, SegmentState<usize>)],
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        queues: &[Queue],
    ) -> bool {
        let to_queues = |segs: &[(Range<u64>, SegmentState<usize>)]| -> Vec<_> {
            segs.iter()
                .map(|(c, s)| (c.clone(), s.map_queue(|qi| queues[qi].clone())))
                .collect()
        };
        let stale = stale_cells(
            &to_queues(planned_from),
            &self.segments,
            &to_queues(planned_final),
        );
        if let Some(cells) = &stale {
            log::debug!("plan stale: cells {cells:?} changed since it was made");
        }
        stale.is_some()
    }

    /// Commits an execution's final state as [`Tracked::commit_execution`] does, with each
    /// recorded access mapped by `to_queues`. When nothing was committed since planning (the
    /// usual case) it is written over the current segments, reusing their vectors; the new
    /// version is returned then, [`MERGED`] otherwise.
    pub(crate) fn commit_planned<'q>(
        &mut self,
        planned_version: u64,
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        mut to_queues: impl FnMut(&usize, Option<u64>) -> (&'q Queue, Option<u64>),
    ) -> u64 {
        if self.version == planned_version {
            crate::plan::refill_segments(&mut self.segments, planned_final, to_queues);
            self.version += 1;
            return self.version;
        }
        let mut mapped = Vec::new();
        crate::plan::refill_segments(&mut mapped, planned_final, &mut to_queues);
        self.commit_execution(planned_version, mapped);
        MERGED
    }

    /// Commits an execution's final state over the state the same plan's last execution left
    /// (the executor's `AtRest`): that is the same final state with other values, so only the
    /// values are written, "this execution" read as `last` of its queue. Falls back to
    /// [`Tracked::commit_planned`] if the shapes differ (they never should).
    #[inline]
    pub(crate) fn commit_at_rest<'q>(
        &mut self,
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        last: impl Fn(usize) -> u64,
        to_queues: impl FnMut(&usize, Option<u64>) -> (&'q Queue, Option<u64>),
    ) -> u64 {
        let value =
            |f: &crate::plan::Recorded<usize>| Some(f.value.unwrap_or_else(|| last(f.queue)));
        // A shape that differs falls back to the full commit, which overwrites whatever this
        // loop wrote before it found out.
        let mut same_shape = self.segments.len() == planned_final.len();
        for ((_, now), (_, fin)) in self.segments.iter_mut().zip(planned_final) {
            match (&mut now.write, &fin.write) {
                (Some(n), Some(f)) => n.value = value(f),
                (None, None) => {}
                _ => same_shape = false,
            }
            same_shape &= now.reads.len() == fin.reads.len();
            for (n, f) in now.reads.iter_mut().zip(&fin.reads) {
                n.value = value(f);
            }
        }
        if !same_shape {
            debug_assert!(false, "a state at rest has its plan's final shape");
            return self.commit_planned(self.version, planned_final, to_queues);
        }
        self.version += 1;
        self.version
    }

    /// Commits an execution's final state (planned at `planned_version`, and found not stale
    /// by [`Tracked::is_stale_for`]), keeping the reads other executions committed since.
    pub(crate) fn commit_execution(
        &mut self,
        planned_version: u64,
        planned_final: Vec<(Range<u64>, SegmentState<Queue>)>,
    ) {
        let segments = if self.version == planned_version {
            planned_final
        } else {
            merge_reads(&planned_final, &self.segments)
        };
        self.commit(segments);
    }
}

use crate::plan::Recorded;

type Segments<Q> = [(Range<u64>, SegmentState<Q>)];

/// The first cells where a plan from `planned_from`, ending in `planned_final`, may not run
/// on the state `now`; `None` when it may.
pub(crate) fn stale_cells<Q: PartialEq>(
    planned_from: &Segments<Q>,
    now: &Segments<Q>,
    planned_final: &Segments<Q>,
) -> Option<Range<u64>> {
    let Some(pieces) = overlay([planned_from, now, planned_final]) else {
        // Different extents cannot come from one resource; refuse rather than guess.
        return Some(extent(now));
    };
    pieces.into_iter().find_map(|(cells, [from, now, fin])| {
        let holds = from == now
            || (same_but_reads(from, now)
                && covers(&now.reads, &from.reads)
                && from.visible.iter().all(|v| now.visible.contains(v))
                && same_but_reads(from, fin));
        (!holds).then_some(cells)
    })
}

/// `planned_final` with the reads of `now` added where the plan left the rest of the state
/// as it is now (where it only read). Call it only when [`stale_cells`] found nothing.
pub(crate) fn merge_reads<Q: PartialEq + Clone>(
    planned_final: &Segments<Q>,
    now: &Segments<Q>,
) -> Vec<(Range<u64>, SegmentState<Q>)> {
    let Some(pieces) = overlay([planned_final, now]) else {
        return planned_final.to_vec();
    };
    let mut out: Vec<(Range<u64>, SegmentState<Q>)> = Vec::with_capacity(pieces.len());
    for (cells, [fin, now]) in pieces {
        let mut s = fin.clone();
        if same_but_reads(fin, now) {
            for r in &now.reads {
                add_read(&mut s.reads, r);
            }
            for v in &now.visible {
                if !s.visible.contains(v) {
                    s.visible.push(v.clone());
                }
            }
        }
        match out.last_mut() {
            Some((last, prev)) if *prev == s => last.end = cells.end,
            _ => out.push((cells, s)),
        }
    }
    out
}

/// Everything but the reads and where the write is visible: what a plan's transitions and
/// transfers depend on.
fn same_but_reads<Q: PartialEq>(a: &SegmentState<Q>, b: &SegmentState<Q>) -> bool {
    a.layout == b.layout && a.defined == b.defined && a.owner == b.owner && a.write == b.write
}

/// Whether every read of `before` is still recorded in `now` (same queue, a value at least
/// as late, the same stages and accesses or more).
fn covers<Q: PartialEq>(now: &[Recorded<Q>], before: &[Recorded<Q>]) -> bool {
    before.iter().all(|b| {
        now.iter().any(|n| {
            n.queue == b.queue
                && n.value >= b.value
                && n.stages.contains(b.stages)
                && n.access.contains(b.access)
        })
    })
}

/// Adds one read, keeping at most one entry per queue.
fn add_read<Q: PartialEq + Clone>(reads: &mut Vec<Recorded<Q>>, r: &Recorded<Q>) {
    match reads.iter_mut().find(|x| x.queue == r.queue) {
        Some(x) => {
            x.value = x.value.max(r.value);
            x.stages |= r.stages;
            x.access |= r.access;
        }
        None => reads.push(r.clone()),
    }
}

fn extent<Q>(s: &Segments<Q>) -> Range<u64> {
    match (s.first(), s.last()) {
        (Some(a), Some(b)) => a.0.start..b.0.end,
        _ => 0..0,
    }
}

/// Cuts `N` segment lists at every boundary of any of them: the pieces in order, each with
/// the state each list has there. `None` if the lists are not contiguous over one extent.
#[allow(clippy::type_complexity)]
fn overlay<Q, const N: usize>(
    lists: [&Segments<Q>; N],
) -> Option<Vec<(Range<u64>, [&SegmentState<Q>; N])>> {
    let start = lists[0].first()?.0.start;
    let mut at = start;
    let mut idx = [0usize; N];
    let mut out = Vec::new();
    while idx[0] < lists[0].len() {
        let mut end = u64::MAX;
        for (k, l) in lists.iter().enumerate() {
            let (cells, _) = l.get(idx[k])?;
            if cells.start > at || cells.end <= at {
                return None;
            }
            end = end.min(cells.end);
        }
        out.push((at..end, std::array::from_fn(|k| &lists[k][idx[k]].1)));
        for (k, l) in lists.iter().enumerate() {
            if l[idx[k]].0.end == end {
                idx[k] += 1;
            }
        }
        at = end;
    }
    lists
        .iter()
        .zip(idx)
        .all(|(l, i)| i == l.len())
        .then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;

    const READ: (vk::PipelineStageFlags2, vk::AccessFlags2) = (
        vk::PipelineStageFlags2::COPY,
        vk::AccessFlags2::TRANSFER_READ,
    );
    const SAMPLE: (vk::PipelineStageFlags2, vk::AccessFlags2) = (
        vk::PipelineStageFlags2::FRAGMENT_SHADER,
        vk::AccessFlags2::SHADER_SAMPLED_READ,
    );

    fn rec(
        queue: usize,
        value: Option<u64>,
        (stages, access): (vk::PipelineStageFlags2, vk::AccessFlags2),
    ) -> Recorded<usize> {
        Recorded {
            queue,
            value,
            stages,
            access,
        }
    }

    /// Written on queue 0 at value 5, in GENERAL, owned by family 0, with these reads.
    fn written(reads: Vec<Recorded<usize>>) -> SegmentState<usize> {
        SegmentState {
            layout: vk::ImageLayout::GENERAL,
            defined: true,
            owner: Some(0),
            write: Some(rec(
                0,
                Some(5),
                (
                    vk::PipelineStageFlags2::COPY,
                    vk::AccessFlags2::TRANSFER_WRITE,
                ),
            )),
            reads,
            visible: vec![],
        }
    }

    fn whole(s: SegmentState<usize>) -> Vec<(Range<u64>, SegmentState<usize>)> {
        vec![(0..16, s)]
    }

    #[test]
    fn unchanged_state_is_never_stale() {
        let from = whole(written(vec![]));
        let fin = whole(SegmentState::default());
        assert_eq!(stale_cells(&from, &from, &fin), None);
    }

    #[test]
    fn another_reader_does_not_make_a_reading_plan_stale() {
        // Planned: queue 0 reads (final read value None: "this execution").
        let from = whole(written(vec![]));
        let fin = whole(written(vec![rec(0, None, READ)]));
        // Meanwhile queue 1 read at value 3.
        let now = whole(written(vec![rec(1, Some(3), SAMPLE)]));
        assert_eq!(stale_cells(&from, &now, &fin), None);
        // The committed state names both reads, so a later writer waits for both.
        assert_eq!(
            merge_reads(&fin, &now),
            whole(written(vec![rec(0, None, READ), rec(1, Some(3), SAMPLE)]))
        );
    }

    #[test]
    fn reads_on_one_queue_merge_into_the_later_value_and_all_stages() {
        // Both executions started from a copy read on queue 0 at value 6. The other one
        // sampled on queue 0 at 7 (its planner folded that into the queue's entry); this
        // one copies again, at 9.
        let both = (READ.0 | SAMPLE.0, READ.1 | SAMPLE.1);
        let from = whole(written(vec![rec(0, Some(6), READ)]));
        let now = whole(written(vec![rec(0, Some(7), both)]));
        let fin = whole(written(vec![rec(0, Some(9), READ)]));
        assert_eq!(stale_cells(&from, &now, &fin), None);
        assert_eq!(
            merge_reads(&fin, &now),
            whole(written(vec![rec(0, Some(9), both)]))
        );
        // A read entry that lost stages is not a reads-only change.
        let shrunk = whole(written(vec![rec(0, Some(7), SAMPLE)]));
        assert_eq!(stale_cells(&from, &shrunk, &fin), Some(0..16));
    }

    #[test]
    fn a_writing_plan_is_stale_after_another_read() {
        // The plan writes: its write would not wait for the new read.
        let from = whole(written(vec![]));
        let mut fin = written(vec![]);
        fin.write = Some(rec(
            0,
            None,
            (
                vk::PipelineStageFlags2::COPY,
                vk::AccessFlags2::TRANSFER_WRITE,
            ),
        ));
        let now = whole(written(vec![rec(1, Some(3), SAMPLE)]));
        assert_eq!(stale_cells(&from, &now, &whole(fin)), Some(0..16));
    }

    #[test]
    fn a_layout_transition_or_ownership_change_in_the_plan_is_stale_after_another_read() {
        let from = whole(written(vec![]));
        let now = whole(written(vec![rec(1, Some(3), SAMPLE)]));
        let mut moved = written(vec![rec(0, None, READ)]);
        moved.layout = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
        assert_eq!(stale_cells(&from, &now, &whole(moved)), Some(0..16));
        let mut acquired = written(vec![rec(0, None, READ)]);
        acquired.owner = Some(1);
        assert_eq!(stale_cells(&from, &now, &whole(acquired)), Some(0..16));
    }

    #[test]
    fn a_reading_plan_is_stale_after_a_write_a_transition_an_ownership_change_or_a_discard() {
        let from = whole(written(vec![]));
        let fin = whole(written(vec![rec(0, None, READ)]));
        let mut w = written(vec![]);
        w.write = Some(rec(
            1,
            Some(8),
            (
                vk::PipelineStageFlags2::COPY,
                vk::AccessFlags2::TRANSFER_WRITE,
            ),
        ));
        let mut layout = written(vec![]);
        layout.layout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
        let mut owner = written(vec![]);
        owner.owner = Some(2);
        let mut undefined = written(vec![]);
        undefined.defined = false;
        for now in [w, layout, owner, undefined, SegmentState::default()] {
            assert_eq!(
                stale_cells(&from, &whole(now.clone()), &fin),
                Some(0..16),
                "{now:?}"
            );
        }
    }

    #[test]
    fn lost_reads_make_a_plan_stale() {
        // The app declared the same write again, forgetting a read: not a reads-only change.
        let from = whole(written(vec![rec(1, Some(3), SAMPLE)]));
        let fin = whole(written(vec![rec(1, Some(3), SAMPLE), rec(0, None, READ)]));
        let now = whole(written(vec![rec(0, Some(4), READ)]));
        assert_eq!(stale_cells(&from, &now, &fin), Some(0..16));
    }

    #[test]
    fn cells_are_judged_apart() {
        // The plan reads bytes 0..8 and writes 8..16; another reader read 0..4 only.
        let from = whole(written(vec![]));
        let mut w = written(vec![]);
        w.write = Some(rec(
            0,
            None,
            (
                vk::PipelineStageFlags2::COPY,
                vk::AccessFlags2::TRANSFER_WRITE,
            ),
        ));
        let fin = vec![
            (0..8, written(vec![rec(0, None, READ)])),
            (8..16, w.clone()),
        ];
        let now = vec![
            (0..4, written(vec![rec(1, Some(3), SAMPLE)])),
            (4..16, written(vec![])),
        ];
        assert_eq!(stale_cells(&from, &now, &fin), None);
        assert_eq!(
            merge_reads(&fin, &now),
            vec![
                (
                    0..4,
                    written(vec![rec(0, None, READ), rec(1, Some(3), SAMPLE)])
                ),
                (4..8, written(vec![rec(0, None, READ)])),
                (8..16, w),
            ]
        );
        // A read of the bytes the plan writes makes it stale, and names them.
        let now = vec![
            (0..10, written(vec![])),
            (10..12, written(vec![rec(1, Some(3), SAMPLE)])),
            (12..16, written(vec![])),
        ];
        assert_eq!(stale_cells(&from, &now, &fin), Some(10..12));
    }

    #[test]
    fn mismatched_extents_are_stale() {
        let from = whole(written(vec![]));
        let now = vec![(0..8, written(vec![]))];
        assert_eq!(stale_cells(&from, &now, &from), Some(0..8));
    }
}
