//! How a plan's transients become heaps: the plan's own heaps where transients share memory,
//! one heap per transient where they do not ([`crate::Graph::set_transient_aliasing`]), each
//! in whole `bufferImageGranularity` pages; and the graph's budget for them
//! ([`crate::Graph::set_transient_budget`]), checked against the same heaps.

use crate::error::{Error, Result};
use crate::plan::Plan;

/// How a graph lays its transients out.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rules {
    /// Off: every transient gets memory of its own.
    pub(crate) aliasing: bool,
    /// The most bytes one execution's heaps may take.
    pub(crate) budget: Option<u64>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            aliasing: true,
            budget: None,
        }
    }
}

/// A heap an execution needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HeapNeed {
    pub(super) size: u64,
    pub(super) alignment: u64,
    pub(super) memory_type_bits: u32,
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// The heaps `plan` needs under `aliasing`, in order, each sized and aligned to whole pages of
/// `granularity`: whatever shares the allocator's blocks with a heap never shares a page with
/// it, linear or not. Without aliasing, heap `i` is the `i`th placement's. Allocates nothing.
pub(super) fn heap_needs(
    plan: &Plan,
    aliasing: bool,
    granularity: u64,
) -> impl Iterator<Item = Result<HeapNeed>> + '_ {
    let t = &plan.transients;
    let shared = t.heaps.iter().filter(move |_| aliasing).map(|h| {
        Ok(HeapNeed {
            size: h.size,
            alignment: h.alignment,
            memory_type_bits: h.memory_type_bits,
        })
    });
    let own = t.placements.iter().filter(move |_| !aliasing).map(|p| {
        let resource = plan.input.resources.get(p.resource);
        let m = resource.and_then(|r| r.transient).ok_or_else(|| {
            Error::InvalidInput(format!("resource {} is not transient", p.resource))
        })?;
        Ok(HeapNeed {
            size: m.size,
            alignment: m.alignment,
            memory_type_bits: m.memory_type_bits,
        })
    });
    let g = granularity.max(1);
    shared.chain(own).map(move |n| {
        n.map(|n| HeapNeed {
            size: round_up(n.size.max(1), g),
            alignment: n.alignment.max(g),
            ..n
        })
    })
}

/// Where each placement of `plan` goes under `aliasing`: (heap, offset), in placement order.
pub(super) fn places(plan: &Plan, aliasing: bool) -> impl Iterator<Item = (usize, u64)> + '_ {
    let placements = plan.transients.placements.iter().enumerate();
    placements.map(move |(i, p)| match aliasing {
        true => (p.heap, p.offset),
        false => (i, 0),
    })
}

/// `Ok` when heaps of `need` bytes in all fit `rules`' budget; otherwise
/// [`Error::TransientBudget`], naming the largest transients of `plan`.
pub(super) fn check_budget(need: u64, rules: Rules, plan: &Plan) -> Result<()> {
    let Some(budget) = rules.budget.filter(|b| need > *b) else {
        return Ok(());
    };
    let mut largest: Vec<_> = plan.transients.placements.iter().collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.size));
    let named: Vec<String> = largest
        .iter()
        .take(3)
        .map(|p| {
            let name = plan
                .input
                .resources
                .get(p.resource)
                .map_or("?", |r| &r.name);
            format!("{name}: {} bytes", p.size)
        })
        .collect();
    Err(Error::TransientBudget {
        need,
        budget,
        largest: named.join(", "),
    })
}
