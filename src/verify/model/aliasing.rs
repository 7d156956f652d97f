//! Memory aliasing between transients: the placements of each execution, checked on their own
//! terms (heap, bounds, alignment, memory types), and which segments share memory.
//!
//! Two transients share memory when their byte ranges in one heap meet, or, for a linear and
//! an optimal-tiling one, when they touch one `bufferImageGranularity` page ("the granularity
//! at which buffer or linear image resources, and optimal image resources can be bound to
//! adjacent offsets in the same VkDeviceMemory object without aliasing"). Where in its memory
//! each mip level or byte range lies is not known, so every segment of one shares memory with
//! every segment of the other. Transient memory belongs to one execution.

use super::*;
use crate::plan::{PlanInput, TransientMemory, TransientPlacement};

/// Where one transient's memory lies in one execution.
struct Placed {
    resource: usize,
    heap: usize,
    /// Its bytes in the heap: `start..end`.
    start: u64,
    end: u64,
    /// A buffer or a linear image (else an optimal-tiling image).
    linear: bool,
}

/// The memory needs of resource `r`, if it is transient.
fn memory_of(input: &PlanInput, r: usize) -> Option<TransientMemory> {
    input.resources.get(r)?.transient
}

impl Model {
    /// Reads execution `k`'s placements: structural violations for a placement the executor
    /// could not bind, and the segments of its transients that share memory.
    pub(super) fn read_transients(&mut self, k: usize, p: &Plan) {
        let mut placed: Vec<Placed> = vec![];
        for pl in &p.transients.placements {
            if let Some(at) = self.check_placement(k, p, pl, &placed) {
                placed.push(at);
            }
        }
        self.check_recorded_transients_placed(k, p, &placed);
        self.note_aliases(k, &p.input, &placed);
    }

    /// A structural violation: execution `k`'s transient memory is not as the executor needs.
    fn bad_transient_memory(&mut self, k: usize, what: String) {
        self.violations.push(structure(format!(
            "execution {k}: transient memory: {what}"
        )));
    }

    /// Placement `pl` of execution `k`, after those `placed` so far: it must place a transient
    /// once, in a heap that exists, within the heap, aligned, and in a memory type the
    /// transient accepts. Where it is: `None` when there is no transient or no heap to read.
    fn check_placement(
        &mut self,
        k: usize,
        p: &Plan,
        pl: &TransientPlacement,
        placed: &[Placed],
    ) -> Option<Placed> {
        let input = &p.input;
        let Some(mem) = memory_of(input, pl.resource) else {
            let what = format!("resource {} is placed but not transient", pl.resource);
            self.bad_transient_memory(k, what);
            return None;
        };
        let name = &input.resources[pl.resource].name;
        let Some(heap) = p.transients.heaps.get(pl.heap) else {
            let what = format!("`{name}` is in heap {}, which does not exist", pl.heap);
            self.bad_transient_memory(k, what);
            return None;
        };
        let end = pl.offset.checked_add(mem.size);
        if end.is_none_or(|e| e > heap.size) || pl.size < mem.size {
            let what = format!(
                "`{name}` ({} bytes at {}) does not fit heap {} of {} bytes",
                mem.size, pl.offset, pl.heap, heap.size
            );
            self.bad_transient_memory(k, what);
        }
        if mem.alignment == 0 || pl.offset % mem.alignment != 0 {
            let what = format!(
                "`{name}` at offset {} is not aligned to {}",
                pl.offset, mem.alignment
            );
            self.bad_transient_memory(k, what);
        }
        if heap.memory_type_bits == 0 || heap.memory_type_bits & !mem.memory_type_bits != 0 {
            let what = format!(
                "heap {} has memory types {:#b}, `{name}` accepts only {:#b}",
                pl.heap, heap.memory_type_bits, mem.memory_type_bits
            );
            self.bad_transient_memory(k, what);
        }
        if placed.iter().any(|x| x.resource == pl.resource) {
            self.bad_transient_memory(k, format!("`{name}` is placed twice"));
        }
        Some(Placed {
            resource: pl.resource,
            heap: pl.heap,
            start: pl.offset,
            end: pl.offset.saturating_add(mem.size),
            linear: mem.linear,
        })
    }

    /// Every transient that a pass the plan records uses must have memory (a culled pass is
    /// not recorded and needs none).
    fn check_recorded_transients_placed(&mut self, k: usize, p: &Plan, placed: &[Placed]) {
        let input = &p.input;
        for pass in p.order.iter().filter_map(|&i| input.passes.get(i)) {
            for u in &pass.uses {
                let has_memory = placed.iter().any(|x| x.resource == u.resource);
                if memory_of(input, u.resource).is_some() && !has_memory {
                    let what = format!(
                        "pass `{}` uses transient `{}`, which has no memory",
                        pass.name, input.resources[u.resource].name
                    );
                    self.bad_transient_memory(k, what);
                }
            }
        }
    }

    /// Notes which transients of execution `k` share memory: those whose bytes in one heap
    /// meet, rounded out to whole `bufferImageGranularity` pages between a linear and an
    /// optimal-tiling one.
    fn note_aliases(&mut self, k: usize, input: &PlanInput, placed: &[Placed]) {
        let granularity = input
            .resources
            .iter()
            .filter_map(|r| r.transient)
            .map(|m| m.buffer_image_granularity.max(1))
            .max()
            .unwrap_or(1);
        let page_start = |x: u64| x / granularity * granularity;
        let page_end = |x: u64| x.div_ceil(granularity) * granularity;
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[..i] {
                let (bs, be) = if a.linear != b.linear {
                    (page_start(b.start), page_end(b.end))
                } else {
                    (b.start, b.end)
                };
                if a.heap != b.heap || a.resource == b.resource || !(a.start < be && bs < a.end) {
                    continue;
                }
                self.note_shared_memory(k, a.resource, b.resource);
            }
        }
    }

    /// Transients `a` and `b` share memory in execution `k`: every segment of each aliases
    /// every segment of the other (where in its memory each lies is not known).
    fn note_shared_memory(&mut self, k: usize, a: usize, b: usize) {
        for (x, y) in [(a, b), (b, a)] {
            if x >= self.res_segs.len() || y >= self.res_segs.len() {
                continue;
            }
            for &g in &self.res_segs[x] {
                self.aliases
                    .entry((k, g))
                    .or_default()
                    .extend(self.res_segs[y].iter().copied());
            }
        }
    }

    /// The segments of other transients that share memory with an entry on `segs` of resource
    /// `r` in execution `k`: those of every transient aliasing `r` when the entry covers all of
    /// `r` (its scope then holds all of `r`'s memory), else none.
    pub(super) fn alias_segs(&self, k: usize, r: usize, segs: &[usize]) -> Vec<usize> {
        let whole = self
            .res_segs
            .get(r)
            .is_some_and(|all| !all.is_empty() && all.iter().all(|g| segs.contains(g)));
        if !whole {
            return vec![];
        }
        let mut out: Vec<usize> = segs
            .iter()
            .filter_map(|&g| self.aliases.get(&(k, g)))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
