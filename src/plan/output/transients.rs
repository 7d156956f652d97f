//! Where the plan puts its transients (see the [`transient` module](crate::plan::transient)).

/// Where the plan puts its transients: heaps to allocate and an offset in one for each.
///
/// The executor allocates each heap (`size` bytes of a memory type among
/// `memory_type_bits`, aligned to `alignment`), binds each transient at its placement and
/// records the plan, whose barriers and semaphores already order every transient after the
/// ones whose memory it reuses. The memory belongs to one execution: it may serve another only
/// once that execution's fence has signalled.
///
/// See the [module example](crate::plan::transient).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransientPlan {
    /// The heaps, each one allocation.
    pub heaps: Vec<TransientHeap>,
    /// One per transient that a pass uses, in resource order.
    pub placements: Vec<TransientPlacement>,
    /// The memory without aliasing: the sum of the placed transients' sizes.
    pub unaliased_size: u64,
    /// The live-set lower bound: the largest sum of sizes of transients that are pairwise
    /// unordered (no use of one happens-before every use of the other, counting every chain of
    /// semaphores and submission order in the plan). Those need disjoint memory in any
    /// placement that keeps this plan's order, so no such placement needs less. Alignment
    /// padding is not counted: the bound is exact for sizes that are multiples of their
    /// alignment, as drivers report them.
    pub lower_bound: u64,
}

/// One memory allocation that transients are bound into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransientHeap {
    /// Bytes.
    pub size: u64,
    /// The largest alignment of the transients in it.
    pub alignment: u64,
    /// The memory types every transient in it accepts (never empty).
    pub memory_type_bits: u32,
}

/// Where one transient's memory is, and when it is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransientPlacement {
    /// Index into [`PlanInput::resources`](crate::plan::PlanInput::resources).
    pub resource: usize,
    /// Index into [`TransientPlan::heaps`].
    pub heap: usize,
    /// Byte offset in the heap (a multiple of the transient's alignment).
    pub offset: u64,
    /// Bytes, from [`TransientMemory::size`](crate::plan::TransientMemory::size).
    pub size: u64,
    /// Its first use, which writes all of it.
    pub first_use: UseSite,
    /// Its last use on each queue that uses it, in queue order.
    pub last_uses: Vec<UseSite>,
    /// The transients whose memory (under this one's) it reuses and whose last uses its first
    /// use is ordered after. An earlier transient wholly covered by a later one in that list
    /// is left out: ordering after the later one orders after both.
    pub after: Vec<usize>,
}

/// Where a pass is recorded in the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UseSite {
    /// Index into [`PlanInput::passes`](crate::plan::PlanInput::passes).
    pub pass: usize,
    /// Index into [`Plan::queues`](crate::plan::Plan::queues).
    pub queue: usize,
    /// Batch index on that queue.
    pub batch: usize,
    /// Index into that batch's commands.
    pub command: usize,
}

impl TransientPlan {
    /// The memory all heaps take.
    pub fn total_size(&self) -> u64 {
        self.heaps.iter().map(|h| h.size).sum()
    }

    /// The placement of resource `r`, if it is a transient that a pass uses.
    pub fn placement(&self, r: usize) -> Option<&TransientPlacement> {
        self.placements.iter().find(|p| p.resource == r)
    }
}
