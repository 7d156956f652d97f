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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::plan::{
        plan, PassDecl, PlanInput, QueueDecl, ResourceDecl, TransientMemory, UseDecl,
    };
    use ash::vk;

    /// `a` (1000 bytes), then `b` (3000) written from `a`, then `c` (1000) from `b`: `c` takes
    /// `a`'s memory, so the plan's heap holds `b` and one of `a` and `c`.
    fn chain() -> Plan {
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
        let image = |name: &str, size: u64| {
            ResourceDecl::image(name, 1, 1, usage).transient(TransientMemory::image(size, 8, 1))
        };
        let read = Access::FRAGMENT_SHADER_SAMPLED_READ;
        let write = Access::COLOR_ATTACHMENT_WRITE;
        let input = PlanInput {
            queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
            resources: vec![image("a", 1000), image("b", 3000), image("c", 1000)],
            passes: vec![
                PassDecl::new("draw a", 0).with_use(UseDecl::new(0, write)),
                PassDecl::new("a to b", 0)
                    .with_use(UseDecl::new(0, read))
                    .with_use(UseDecl::new(1, write)),
                PassDecl::new("b to c", 0)
                    .with_use(UseDecl::new(1, read))
                    .with_use(UseDecl::new(2, write)),
            ],
        };
        plan(&input).unwrap()
    }

    fn sizes(plan: &Plan, aliasing: bool, granularity: u64) -> Vec<u64> {
        let needs = heap_needs(plan, aliasing, granularity);
        needs.map(|n| n.unwrap().size).collect()
    }

    /// With aliasing, the plan's heaps; without, one per transient; each in whole pages.
    #[test]
    fn heaps_are_the_plans_or_one_per_transient_in_whole_pages() {
        let plan = chain();
        assert_eq!(plan.transients.total_size(), 4000, "{plan}");
        assert_eq!(sizes(&plan, true, 1), vec![4000]);
        assert_eq!(sizes(&plan, true, 1024), vec![4096]);
        assert_eq!(sizes(&plan, false, 1024), vec![1024, 3072, 1024]);
        let places: Vec<_> = places(&plan, false).collect();
        assert_eq!(places, vec![(0, 0), (1, 0), (2, 0)]);
    }

    /// Over the budget: the need, the budget and the largest transients first.
    #[test]
    fn a_need_over_the_budget_names_both_and_the_largest_transients() {
        let plan = chain();
        let rules = |budget| Rules {
            aliasing: true,
            budget,
        };
        assert!(check_budget(4000, rules(None), &plan).is_ok());
        assert!(check_budget(4000, rules(Some(4000)), &plan).is_ok());
        let e = check_budget(4000, rules(Some(3999)), &plan).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the frame's transients need 4000 bytes, over the graph's transient budget of 3999 \
             bytes (largest: b: 3000 bytes, a: 1000 bytes, c: 1000 bytes); \
             Graph::set_transient_budget"
        );
    }
}
