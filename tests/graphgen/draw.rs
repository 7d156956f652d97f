//! What the case strategy draws: the graph's own parts, as lists and indices that any value of
//! which [`super::build::build`] turns into a valid case. Shrinking them drops graphs, passes,
//! uses and resources, and moves indices towards 0.

use super::build::build;
use super::{Case, Kind, Sizes, COMPUTE_TRANSFER, TRANSFER_ONLY};
use proptest::prelude::*;
use proptest::sample::Index;
use std::ops::RangeInclusive;
use vk_baton::ash::vk;

#[derive(Clone, Debug)]
pub(super) struct ResourceDraw {
    pub(super) kind: Kind,
    pub(super) mips: u32,
    pub(super) layers: u32,
    /// Buffer size in 16-byte chunks.
    pub(super) chunks: u64,
    pub(super) concurrent: bool,
    /// Usage bits dropped (bit i drops the kind's i-th usage flag; 0 keeps all).
    pub(super) usage_dropped: u8,
    /// Handed over by the app, last written by a transfer on this queue.
    pub(super) handed_over: Option<Index>,
}

#[derive(Clone, Debug)]
pub(super) struct UseDraw {
    pub(super) resource: Index,
    pub(super) access: Index,
    /// (base, count) of mips and of layers, or of 16-byte chunks; `None`: the whole resource.
    pub(super) range: Option<[Index; 4]>,
    pub(super) discard: bool,
}

#[derive(Clone, Debug)]
pub(super) struct PassDraw {
    pub(super) queue: Index,
    pub(super) uses: Vec<UseDraw>,
}

/// One swapchain image's acquire-draw-present in one graph.
#[derive(Clone, Debug)]
pub(super) struct SwapDraw {
    pub(super) draw_queue: Index,
    pub(super) draw_at: Index,
    pub(super) access: Index,
    pub(super) present_queue: Index,
    pub(super) present_after: Index,
}

#[derive(Clone, Debug)]
pub(super) struct GraphDraw {
    pub(super) passes: Vec<PassDraw>,
    /// Per resource index (cycled): whether and how a swapchain image is used.
    pub(super) swaps: Vec<Option<SwapDraw>>,
}

#[derive(Clone, Debug)]
pub(super) struct CaseDraw {
    /// Caps of families 1, 2, … (family 0 is graphics+compute+transfer).
    pub(super) other_families: Vec<vk::QueueFlags>,
    /// Families of queues 1, 2, … (queue 0 is on family 0).
    pub(super) other_queues: Vec<Index>,
    /// Per queue (cycled): its timeline's value before the first graph.
    pub(super) start: Vec<u64>,
    pub(super) resources: Vec<ResourceDraw>,
    pub(super) graphs: Vec<GraphDraw>,
    /// Per resource index (cycled): whether it is transient (ignored for swapchain images and
    /// resources handed over by the app).
    pub(super) transient: Vec<bool>,
}

fn resource_draw() -> impl Strategy<Value = ResourceDraw> {
    let kind = prop_oneof![
        3 => Just(Kind::Color),
        1 => Just(Kind::Depth),
        1 => Just(Kind::Swapchain),
        3 => Just(Kind::Buffer),
    ];
    (
        kind,
        1u32..=3,
        1u32..=3,
        1u64..=16,
        prop::bool::weighted(1.0 / 3.0),
        prop_oneof![3 => Just(0u8), 1 => any::<u8>()],
        prop::option::weighted(0.2, any::<Index>()),
    )
        .prop_map(
            |(kind, mips, layers, chunks, concurrent, usage_dropped, handed_over)| ResourceDraw {
                kind,
                mips,
                layers,
                chunks,
                concurrent,
                usage_dropped,
                handed_over,
            },
        )
}

fn use_draw() -> impl Strategy<Value = UseDraw> {
    (
        any::<Index>(),
        any::<Index>(),
        prop::option::of(any::<[Index; 4]>()),
        prop::bool::weighted(1.0 / 3.0),
    )
        .prop_map(|(resource, access, range, discard)| UseDraw {
            resource,
            access,
            range,
            discard,
        })
}

fn pass_draw() -> impl Strategy<Value = PassDraw> {
    (any::<Index>(), prop::collection::vec(use_draw(), 1..=3))
        .prop_map(|(queue, uses)| PassDraw { queue, uses })
}

/// Most graphs have at most this many passes (see [`graph_draw`]).
const SMALL_GRAPH: usize = 24;

fn graph_draw(passes: RangeInclusive<usize>) -> impl Strategy<Value = GraphDraw> {
    let swap = any::<[Index; 5]>().prop_map(|[q, at, a, pq, after]| SwapDraw {
        draw_queue: q,
        draw_at: at,
        access: a,
        present_queue: pq,
        present_after: after,
    });
    // Verifying costs far more than linear time in passes, so most graphs draw at most
    // SMALL_GRAPH passes and some up to the bound. Both branches shrink to the lower bound.
    let (lo, hi) = (*passes.start(), *passes.end());
    let pass_lists = prop_oneof![
        3 => prop::collection::vec(pass_draw(), lo..=SMALL_GRAPH.clamp(lo, hi)),
        1 => prop::collection::vec(pass_draw(), passes),
    ];
    (
        pass_lists,
        prop::collection::vec(prop::option::weighted(2.0 / 3.0, swap), 8),
    )
        .prop_map(|(passes, swaps)| GraphDraw { passes, swaps })
}

/// Random valid cases within `sizes`.
pub fn cases(sizes: &Sizes) -> impl Strategy<Value = Case> {
    let families = (*sizes.families.start() - 1)..=(*sizes.families.end() - 1);
    let queues = (*sizes.queues.start() - 1)..=(*sizes.queues.end() - 1);
    (
        prop::collection::vec(
            prop::sample::select(vec![COMPUTE_TRANSFER, TRANSFER_ONLY]),
            families,
        ),
        prop::collection::vec(any::<Index>(), queues),
        prop::collection::vec(prop_oneof![2 => Just(0u64), 1 => 1u64..1000], 4),
        prop::collection::vec(resource_draw(), sizes.resources.clone()),
        prop::collection::vec(graph_draw(sizes.passes.clone()), sizes.graphs.clone()),
        // Last, so that the parts above are drawn alike with and without transients.
        prop::collection::vec(
            prop::bool::weighted(if sizes.transients { 0.4 } else { 0.0 }),
            16,
        ),
    )
        .prop_map(
            |(other_families, other_queues, start, resources, graphs, transient)| {
                build(&CaseDraw {
                    other_families,
                    other_queues,
                    start,
                    resources,
                    graphs,
                    transient,
                })
            },
        )
}
