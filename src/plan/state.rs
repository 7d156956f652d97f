//! The tracked state of one segment of a resource (a run of image cells or buffer bytes).
//!
//! It is what rule 8 of the contract needs to carry across graphs: the layout, whether the
//! contents mean anything, the owning family, and the last write plus the reads since, each
//! with the queue and timeline value to wait on and the stages and accesses to chain from,
//! and the stages and accesses an earlier barrier already made that write visible to.

use ash::vk;
use std::borrow::Borrow;

/// One access remembered for later synchronization.
///
/// ```
/// use vk_baton::{ash::vk, plan::{Recorded, SegmentState}};
/// // A compute write on queue 0 whose batch signals timeline value 7.
/// let w = Recorded {
///     queue: 0usize,
///     value: Some(7),
///     stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
///     access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
/// };
/// let s = SegmentState { defined: true, write: Some(w), ..SegmentState::default() };
/// assert_eq!(s.write.unwrap().value, Some(7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded<Q> {
    /// The queue it ran on.
    pub queue: Q,
    /// The queue's timeline value that is signalled once it is done. `None` inside a plan's
    /// final state means "this execution's last value on that queue". `Some(0)` means nothing
    /// to wait for (the app synchronized its own work).
    pub value: Option<u64>,
    /// Its pipeline stages.
    pub stages: vk::PipelineStageFlags2,
    /// Its access flags (for a write, the ones a later barrier must make available).
    pub access: vk::AccessFlags2,
}

/// The state of one segment.
///
/// ```
/// use vk_baton::{ash::vk, plan::SegmentState};
/// let fresh = SegmentState::<usize>::default();
/// assert_eq!(fresh.layout, vk::ImageLayout::UNDEFINED);
/// assert!(!fresh.defined && fresh.owner.is_none());
/// assert!(fresh.write.is_none() && fresh.reads.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentState<Q> {
    /// Current image layout (`UNDEFINED` for buffers and fresh images).
    pub layout: vk::ImageLayout,
    /// Whether the contents mean anything. Undefined contents need no ownership transfer.
    pub defined: bool,
    /// The queue family that owns an EXCLUSIVE resource, if any has used it.
    pub owner: Option<u32>,
    /// The last write (or layout transition / ownership transfer, which count as writes).
    pub write: Option<Recorded<Q>>,
    /// Reads since that write, at most one entry per queue.
    pub reads: Vec<Recorded<Q>>,
    /// Where a barrier (or the transition or acquire that is the write) has already made
    /// `write` visible. A later use on that queue, in those stages, with those accesses, is in
    /// that barrier's second scope (submission order spans submits), so it needs no barrier of
    /// its own: "reads in the same layout get no barrier", across graphs too. Cleared by the
    /// next write.
    pub visible: Vec<Visible<Q>>,
}

/// Stages and accesses on one queue that a segment's last write was made visible to.
///
/// ```
/// use vk_baton::{ash::vk, plan::{SegmentState, Visible}};
/// // An upload, then a barrier to the fragment shader's sampled reads on queue 0.
/// let s = SegmentState {
///     layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
///     defined: true,
///     visible: vec![Visible {
///         queue: 0usize,
///         stages: vk::PipelineStageFlags2::FRAGMENT_SHADER,
///         access: vk::AccessFlags2::SHADER_SAMPLED_READ,
///     }],
///     ..SegmentState::default()
/// };
/// assert_eq!(s.visible[0].queue, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visible<Q> {
    /// The queue whose later work sees the write.
    pub queue: Q,
    /// The stages that see it.
    pub stages: vk::PipelineStageFlags2,
    /// The accesses that see it.
    pub access: vk::AccessFlags2,
}

impl<Q> Default for SegmentState<Q> {
    fn default() -> Self {
        Self {
            layout: vk::ImageLayout::UNDEFINED,
            defined: false,
            owner: None,
            write: None,
            reads: Vec::new(),
            visible: Vec::new(),
        }
    }
}

impl<Q: Copy> SegmentState<Q> {
    /// A segment the app hands over: its contents are defined, it is in `layout`, owned by
    /// `owner`, and was last written by `stages`/`access` on `queue` (its own work, already
    /// ordered by submission order or the app's own semaphores, so nothing is waited on).
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::SegmentState};
    /// let s = SegmentState::handed_over(
    ///     vk::ImageLayout::TRANSFER_DST_OPTIMAL,
    ///     Some(0),
    ///     Some((0usize, vk::PipelineStageFlags2::ALL_TRANSFER, vk::AccessFlags2::TRANSFER_WRITE)),
    /// );
    /// assert!(s.defined);
    /// // The app ordered its own work: nothing to wait on (value 0), only stages to chain from.
    /// let w = s.write.unwrap();
    /// assert_eq!(w.value, Some(0));
    /// assert_eq!(w.access, vk::AccessFlags2::TRANSFER_WRITE);
    /// ```
    pub fn handed_over(
        layout: vk::ImageLayout,
        owner: Option<u32>,
        last: Option<(Q, vk::PipelineStageFlags2, vk::AccessFlags2)>,
    ) -> Self {
        Self {
            layout,
            defined: true,
            owner,
            write: last.map(|(queue, stages, access)| Recorded {
                queue,
                value: Some(0),
                stages,
                access,
            }),
            reads: Vec::new(),
            visible: Vec::new(),
        }
    }

    /// The same state with every queue mapped through `f`.
    ///
    /// ```
    /// use vk_baton::{ash::vk, plan::SegmentState};
    /// let s = SegmentState::handed_over(
    ///     vk::ImageLayout::GENERAL,
    ///     Some(1),
    ///     Some((2usize, vk::PipelineStageFlags2::COMPUTE_SHADER, vk::AccessFlags2::SHADER_STORAGE_WRITE)),
    /// );
    /// // From indices into one graph's queue list to queue names.
    /// let names = ["graphics", "transfer", "compute"];
    /// let named = s.map_queue(|q| names[q]);
    /// assert_eq!(named.write.unwrap().queue, "compute");
    /// assert_eq!(named.layout, s.layout);
    /// ```
    pub fn map_queue<R>(&self, mut f: impl FnMut(Q) -> R) -> SegmentState<R> {
        let mut rec = |r: &Recorded<Q>| Recorded {
            queue: f(r.queue),
            value: r.value,
            stages: r.stages,
            access: r.access,
        };
        let write = self.write.as_ref().map(&mut rec);
        let reads = self.reads.iter().map(&mut rec).collect();
        SegmentState {
            layout: self.layout,
            defined: self.defined,
            owner: self.owner,
            write,
            reads,
            visible: (self.visible.iter())
                .map(|v| Visible {
                    queue: f(v.queue),
                    stages: v.stages,
                    access: v.access,
                })
                .collect(),
        }
    }
}

/// Overwrites `dst` with `src`, each recorded queue and its timeline value mapped by `f`
/// (`None` for a [`Visible`] entry, which has no value; its mapped value is ignored), reusing
/// `dst`'s vectors: no allocation once `dst` has grown. How lowering snapshots a resource's
/// state and how the executor commits one, frame after frame. Inlined, so that `f` (one call
/// per recorded access, per resource, per frame) is inlined too.
///
/// `f` may hand back a borrowed queue (`&Queue`): it is cloned only into a slot that holds
/// another queue, so a steady state's queue handles are compared, not cloned and dropped.
#[inline]
pub(crate) fn refill_segments<A, B, R, F>(
    dst: &mut Vec<(std::ops::Range<u64>, SegmentState<B>)>,
    src: &[(std::ops::Range<u64>, SegmentState<A>)],
    mut f: F,
) where
    B: Clone + PartialEq,
    R: Borrow<B>,
    F: FnMut(&A, Option<u64>) -> (R, Option<u64>),
{
    let rec = |r: &Recorded<A>, slot: Option<&mut Recorded<B>>, f: &mut F| {
        let (queue, value) = f(&r.queue, r.value);
        match slot {
            Some(d) => {
                assign(&mut d.queue, queue.borrow());
                d.value = value;
                d.stages = r.stages;
                d.access = r.access;
                None
            }
            None => Some(Recorded {
                queue: queue.borrow().clone(),
                value,
                stages: r.stages,
                access: r.access,
            }),
        }
    };
    dst.truncate(src.len());
    for (i, (cells, s)) in src.iter().enumerate() {
        if i == dst.len() {
            dst.push((cells.clone(), SegmentState::default()));
        }
        let (dc, ds) = &mut dst[i];
        dc.clone_from(cells);
        ds.layout = s.layout;
        ds.defined = s.defined;
        ds.owner = s.owner;
        match (&s.write, &mut ds.write) {
            (Some(w), Some(d)) => drop(rec(w, Some(d), &mut f)),
            (w, d) => *d = w.as_ref().and_then(|w| rec(w, None, &mut f)),
        }
        overwrite(&mut ds.reads, &s.reads, |r, slot| rec(r, slot, &mut f));
        overwrite(&mut ds.visible, &s.visible, |v, slot| {
            let (queue, _) = f(&v.queue, None);
            match slot {
                Some(d) => {
                    assign(&mut d.queue, queue.borrow());
                    d.stages = v.stages;
                    d.access = v.access;
                    None
                }
                None => Some(Visible {
                    queue: queue.borrow().clone(),
                    stages: v.stages,
                    access: v.access,
                }),
            }
        });
    }
}

/// `*dst = src`, cloning only when they differ.
#[inline]
fn assign<B: Clone + PartialEq>(dst: &mut B, src: &B) {
    if dst != src {
        dst.clone_from(src);
    }
}

/// Overwrites `dst` with `src` mapped by `f`, element by element: a steady state's vectors
/// keep their length, so nothing is cleared, grown or moved. `f` writes into an existing
/// element in place (returning `None`), or makes a new one.
#[inline]
fn overwrite<S, D>(
    dst: &mut Vec<D>,
    src: &[S],
    mut f: impl FnMut(&S, Option<&mut D>) -> Option<D>,
) {
    dst.truncate(src.len());
    for (k, s) in src.iter().enumerate() {
        match dst.get_mut(k) {
            Some(slot) => {
                f(s, Some(slot));
            }
            None => dst.extend(f(s, None)),
        }
    }
}
