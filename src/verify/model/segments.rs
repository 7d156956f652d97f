//! The universe of named stage and access bits, and the segments: each resource is cut at
//! every cell where an initial state, a use or a barrier begins or ends, so that every op and
//! barrier covers a segment whole or not at all.

use super::*;
use crate::plan::BarrierCmd;

/// Maps a resource and cell intervals to the segments they cover.
pub(super) type SegsOf = dyn Fn(usize, &[Range<u64>], &[Seg]) -> Vec<usize>;

/// Per resource: the cells where a segment begins or ends.
pub(super) struct Bounds(Vec<BTreeSet<u64>>);

impl Bounds {
    /// Each resource's own bounds: its first cell and its end.
    pub(super) fn new(kinds: &[ResourceKind]) -> Self {
        Bounds(
            kinds
                .iter()
                .map(|k| [0, k.cells()].into_iter().collect())
                .collect(),
        )
    }

    fn add(&mut self, r: usize, cells: &[Range<u64>]) {
        for c in cells {
            self.0[r].insert(c.start);
            self.0[r].insert(c.end);
        }
    }
}

impl Model {
    /// Notes the bits and bounds of the initial states of `first`.
    pub(super) fn read_initial_bounds(&mut self, first: &PlanInput, bounds: &mut Bounds) {
        for (r, res) in first.resources.iter().enumerate() {
            for (c, s) in &res.initial {
                bounds.add(r, std::slice::from_ref(c));
                for rec in s.write.iter().chain(&s.reads) {
                    self.universe.note_stages(rec.stages);
                    self.universe.note_access(rec.access);
                }
            }
        }
    }

    /// Notes the bits and bounds of plan `p`: its passes' uses, its semaphores' stage masks
    /// and its barriers.
    pub(super) fn read_plan_bounds(&mut self, p: &Plan, bounds: &mut Bounds) {
        for pass in &p.input.passes {
            for us in &pass.uses {
                self.universe.note_stages(us.access.stages);
                self.universe.note_access(us.access.access);
                if let Some(c) = self
                    .res_kinds
                    .get(us.resource)
                    .and_then(|k| use_cells(k, us.range, us.aspect))
                {
                    bounds.add(us.resource, &c);
                }
            }
        }
        for b in p.queues.iter().flat_map(|q| &q.batches) {
            let u = &mut self.universe;
            for w in &b.waits {
                u.note_stages(w.stages);
            }
            if let Some(s) = b.signal {
                u.note_stages(s);
            }
            for (_, s) in &b.binary_signals {
                u.note_stages(*s);
            }
            for c in &b.commands {
                if let Command::Barrier(bc) = c {
                    self.read_barrier_bounds(bc, bounds);
                }
            }
        }
    }

    /// Notes the bits and bounds of barrier command `bc`. A barrier on a resource that does
    /// not exist, or on cells it does not have, adds none (reading its entries reports it).
    fn read_barrier_bounds(&mut self, bc: &BarrierCmd, bounds: &mut Bounds) {
        let scopes = bc
            .images
            .iter()
            .map(|i| &i.scopes)
            .chain(bc.buffers.iter().map(|b| &b.scopes));
        for s in scopes {
            self.universe.note_stages(s.src_stages | s.dst_stages);
            self.universe.note_access(s.src_access | s.dst_access);
        }
        for i in &bc.images {
            let kind = self.res_kinds.get(i.resource);
            let range = Some(SubRange::Image(i.range));
            if let Some(c) = kind.and_then(|k| use_cells(k, range, i.aspect)) {
                bounds.add(i.resource, &c);
            }
        }
        for b in &bc.buffers {
            if b.resource < self.res_kinds.len() {
                bounds.add(b.resource, &[b.range.bytes()]);
            }
        }
    }

    /// Cuts every resource into segments at its `bounds` (those within the resource).
    pub(super) fn cut_segments(&mut self, bounds: &Bounds) {
        let mut res_segs: Vec<Vec<usize>> = vec![];
        for (r, b) in bounds.0.iter().enumerate() {
            let pts: Vec<u64> = b
                .iter()
                .copied()
                .filter(|&x| x <= self.res_kinds[r].cells())
                .collect();
            let mut ids = vec![];
            for w in pts.windows(2) {
                ids.push(self.segs.len());
                self.segs.push(Seg { cells: w[0]..w[1] });
            }
            res_segs.push(ids);
        }
        self.res_segs = res_segs;
    }

    /// The segments of resource `r` that `cells` cover.
    pub(super) fn segs_of(&self, r: usize, cells: &[Range<u64>]) -> Vec<usize> {
        covered_segs(&self.res_segs, &self.segs, r, cells)
    }
}

/// The segments of resource `r` (its segments: `res_segs[r]`, among `segs`) that `cells`
/// cover.
fn covered_segs(
    res_segs: &[Vec<usize>],
    segs: &[Seg],
    r: usize,
    cells: &[Range<u64>],
) -> Vec<usize> {
    res_segs[r]
        .iter()
        .copied()
        .filter(|&g| {
            cells
                .iter()
                .any(|c| c.start <= segs[g].cells.start && segs[g].cells.end <= c.end)
        })
        .collect()
}

/// [`Model::segs_of`] for the segments cut now, to pass along while the model changes.
pub(super) fn segs_of_owned(res_segs: &[Vec<usize>]) -> Box<SegsOf> {
    let res_segs = res_segs.to_vec();
    Box::new(move |r: usize, cells: &[Range<u64>], segs: &[Seg]| {
        covered_segs(&res_segs, segs, r, cells)
    })
}
