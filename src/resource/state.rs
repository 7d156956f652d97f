//! The tracked state behind each resource's mutex, and the copy `state()` hands out.

use super::staleness;
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
    /// [`staleness`](super::staleness) for why that is correct.
    pub(crate) fn is_stale_for(
        &self,
        planned_version: u64,
        planned_from: &[(Range<u64>, SegmentState<usize>)],
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        queues: &[Queue],
    ) -> bool {
        if self.version == planned_version {
            return false;
        }
        let to_queues = |segs: &[(Range<u64>, SegmentState<usize>)]| -> Vec<_> {
            segs.iter()
                .map(|(c, s)| (c.clone(), s.map_queue(|qi| queues[qi].clone())))
                .collect()
        };
        let stale = staleness::stale_cells(
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
    /// usual case) it is written over the current segments, reusing their vectors.
    pub(crate) fn commit_planned(
        &mut self,
        planned_version: u64,
        planned_final: &[(Range<u64>, SegmentState<usize>)],
        mut to_queues: impl FnMut(&crate::plan::Recorded<usize>) -> crate::plan::Recorded<Queue>,
    ) {
        if self.version == planned_version {
            crate::plan::refill_segments(&mut self.segments, planned_final, to_queues);
            self.version += 1;
            return;
        }
        let mut mapped = Vec::new();
        crate::plan::refill_segments(&mut mapped, planned_final, &mut to_queues);
        self.commit_execution(planned_version, mapped);
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
            staleness::merge_reads(&planned_final, &self.segments)
        };
        self.commit(segments);
    }
}
