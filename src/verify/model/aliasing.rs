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
use crate::plan::TransientMemory;

impl Model {
    /// Reads execution `k`'s placements: structural violations for a placement the executor
    /// could not bind, and the segments of its transients that share memory.
    pub(super) fn read_transients(&mut self, k: usize, p: &Plan) {
        let input = &p.input;
        let t = &p.transients;
        let memory = |r: usize| -> Option<TransientMemory> { input.resources.get(r)?.transient };
        let bad = |m: &mut Model, what: String| {
            m.violations.push(structure(format!(
                "execution {k}: transient memory: {what}"
            )));
        };
        let mut placed: Vec<(usize, usize, u64, u64, bool)> = vec![];
        for pl in &t.placements {
            let Some(mem) = memory(pl.resource) else {
                bad(
                    self,
                    format!("resource {} is placed but not transient", pl.resource),
                );
                continue;
            };
            let name = &input.resources[pl.resource].name;
            let Some(heap) = t.heaps.get(pl.heap) else {
                bad(
                    self,
                    format!("`{name}` is in heap {}, which does not exist", pl.heap),
                );
                continue;
            };
            let end = pl.offset.checked_add(mem.size);
            if end.is_none_or(|e| e > heap.size) || pl.size < mem.size {
                bad(
                    self,
                    format!(
                        "`{name}` ({} bytes at {}) does not fit heap {} of {} bytes",
                        mem.size, pl.offset, pl.heap, heap.size
                    ),
                );
            }
            if mem.alignment == 0 || pl.offset % mem.alignment != 0 {
                bad(
                    self,
                    format!(
                        "`{name}` at offset {} is not aligned to {}",
                        pl.offset, mem.alignment
                    ),
                );
            }
            if heap.memory_type_bits == 0 || heap.memory_type_bits & !mem.memory_type_bits != 0 {
                bad(
                    self,
                    format!(
                        "heap {} has memory types {:#b}, `{name}` accepts only {:#b}",
                        pl.heap, heap.memory_type_bits, mem.memory_type_bits
                    ),
                );
            }
            if placed.iter().any(|x| x.0 == pl.resource) {
                bad(self, format!("`{name}` is placed twice"));
            }
            placed.push((
                pl.resource,
                pl.heap,
                pl.offset,
                pl.offset.saturating_add(mem.size),
                mem.linear,
            ));
        }
        // Passes the plan records (a culled pass is not recorded and needs no memory).
        for pass in p.order.iter().filter_map(|&i| input.passes.get(i)) {
            for u in &pass.uses {
                if memory(u.resource).is_some() && !placed.iter().any(|x| x.0 == u.resource) {
                    bad(
                        self,
                        format!(
                            "pass `{}` uses transient `{}`, which has no memory",
                            pass.name, input.resources[u.resource].name
                        ),
                    );
                }
            }
        }
        let granularity = input
            .resources
            .iter()
            .filter_map(|r| r.transient)
            .map(|m| m.buffer_image_granularity.max(1))
            .max()
            .unwrap_or(1);
        let page = |x: u64, up: bool| {
            if up {
                x.div_ceil(granularity) * granularity
            } else {
                x / granularity * granularity
            }
        };
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[..i] {
                let (bs, be) = if a.4 != b.4 {
                    (page(b.2, false), page(b.3, true))
                } else {
                    (b.2, b.3)
                };
                if a.1 != b.1 || a.0 == b.0 || !(a.2 < be && bs < a.3) {
                    continue;
                }
                for (x, y) in [(a.0, b.0), (b.0, a.0)] {
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
