//! Opt-in scheduling: the passes in another order than insertion order, and culling, with the
//! same results as program order.
//!
//! Insertion order is program order, and [`plan`](super::plan) keeps it.
//! [`plan_scheduled`](super::plan_scheduled) (or
//! [`GraphBuilder::schedule`](crate::GraphBuilder::schedule)) may instead:
//!
//! - **reorder** ([`Schedule::reorder`]): move a pass past passes it does not
//!   [conflict](self#conflicts) with, so that every conflicting pair keeps its program order.
//!   Passes are taken level by level: a pass's level is one more than that of the latest
//!   earlier pass it conflicts with, so the passes of one level are independent of each other.
//!   Within a level, work another queue waits on comes first and work that waits on another
//!   queue last (waits late). The planner's batches are then regrouped: consecutive batches of
//!   a queue that end in awaited work of one level become one, which signals once that work is
//!   done rather than after each pass, and waits that an earlier wait covers go. Within each
//!   batch, a barrier command moves up into an earlier one over passes that do not need it in
//!   place (a release moves down, after the last pass that needs it). Each queue then records
//!   about one barrier command per level and batch rather than one per dependent pass, and
//!   independent work lands between a write and its first read.
//! - **fall back** ([`Schedule::fallback`], on in [`Schedule::REORDER`]): plan program order
//!   too and keep the reordered plan only where it has fewer barrier commands, batches or
//!   waits. Program-order plans are pruned of redundant barrier entries (regrouping assumes
//!   every dependency is emitted, so reordered plans are not), which can leave a frame that
//!   is already in level order with nothing to gain.
//! - **cull** ([`Schedule::cull`]): drop a pass that touches only
//!   [transient](super::ResourceDecl::transient) resources when no later kept pass uses what it
//!   writes. In a graph those are the graph's own transients
//!   ([`Graph::transient_image`](crate::Graph::transient_image),
//!   [`Graph::transient_buffer`](crate::Graph::transient_buffer)); a resource the app made
//!   outlives the graph, so a pass that uses one is kept. A culled pass is never recorded, and
//!   a transient that only culled passes use gets no place in
//!   [`Plan::transients`](super::Plan::transients): no memory is bound for it.
//!
//! The plan records the order taken in [`Plan::order`](super::Plan::order); its printout says
//! which pass moved before which, and which were culled. Pass indices stay insertion indices, so the executor
//! records [`Command::Pass`](super::Command::Pass) the same way in any order.
//!
//! # Conflicts
//!
//! Two passes conflict when they use overlapping ranges of one resource and one of them
//! writes; or reads an image in a different layout than the other; or runs on another queue
//! family while the resource is `EXCLUSIVE` (an ownership transfer). A pass that waits on or
//! signals a binary semaphore, presents, or declares no use at all conflicts with every pass:
//! it stays where it was inserted relative to all others.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{ash::vk, Access};
//! // Two independent chains on one queue, inserted chain after chain: `a0 -> a1`, `b0 -> b1`.
//! let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER)],
//!     resources: ["a", "a'", "b", "b'"].iter().map(|n| ResourceDecl::buffer(n, 64, usage)).collect(),
//!     passes: vec![
//!         PassDecl::new("a0", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
//!         PassDecl::new("a1", 0).with_use(UseDecl::new(0, Access::COPY_READ))
//!             .with_use(UseDecl::new(1, Access::COPY_WRITE)),
//!         PassDecl::new("b0", 0).with_use(UseDecl::new(2, Access::TRANSFER_WRITE)),
//!         PassDecl::new("b1", 0).with_use(UseDecl::new(2, Access::COPY_READ))
//!             .with_use(UseDecl::new(3, Access::COPY_WRITE)),
//!     ],
//! };
//! // Program order: a barrier before `a1` and another before `b1`.
//! let in_order = plan(&input).unwrap();
//! assert_eq!(in_order.order, [0, 1, 2, 3]);
//! assert_eq!(in_order.barrier_commands(), 2);
//!
//! // Reordered: both writers first, then one barrier command for both readers.
//! let scheduled = plan_scheduled(&input, Schedule::REORDER).unwrap();
//! assert_eq!(scheduled.order, [0, 2, 1, 3]);
//! assert_eq!(scheduled.barrier_commands(), 1);
//! let [Command::Pass(0), Command::Pass(2), Command::Barrier(b), Command::Pass(1), Command::Pass(3)] =
//!     &scheduled.queues[0].batches[0].commands[..] else { panic!("{scheduled}") };
//! assert_eq!(b.buffers.len(), 2);
//! assert!(scheduled.to_string().contains("pass   `b0` (moved before `a1`)"));
//! scheduled.verify().unwrap();
//! ```

/// How [`plan_scheduled`](super::plan_scheduled) orders the passes; see the
/// [module docs](self). The default is [`Schedule::PROGRAM_ORDER`]: every pass, in insertion
/// order, exactly as [`plan`](super::plan).
///
/// ```
/// use vk_baton::plan::Schedule;
/// assert_eq!(Schedule::default(), Schedule::PROGRAM_ORDER);
/// let s = Schedule::REORDER.with_culling();
/// assert!(s.reorder && s.cull);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Move passes past passes they do not conflict with, and join barrier commands.
    pub reorder: bool,
    /// Drop passes that touch only transient resources and whose writes no later kept pass
    /// uses.
    pub cull: bool,
    /// When reordering: plan program order too and keep it unless the reordered plan has
    /// fewer barrier commands, or as many and fewer batches or waits. Program-order plans are
    /// pruned of redundant barrier entries and reordered ones are not, so on a frame that is
    /// already in level order the program-order plan records less. Costs a second planning.
    pub fallback: bool,
}

impl Schedule {
    /// Insertion order, every pass.
    pub const PROGRAM_ORDER: Schedule = Schedule {
        reorder: false,
        cull: false,
        fallback: false,
    };
    /// Reordered for fewer barrier commands and more overlap, falling back to program order
    /// where that saves nothing ([`Schedule::fallback`]); every pass kept.
    pub const REORDER: Schedule = Schedule {
        reorder: true,
        cull: false,
        fallback: true,
    };

    /// The same schedule, always keeping the reordered plan (no [`Schedule::fallback`]).
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// // `b` does not depend on `a`: reordering may put it first, but there is no barrier to
    /// // save, so the planner keeps program order unless told otherwise.
    /// let usage = vk::BufferUsageFlags::TRANSFER_DST;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("a", 64, usage), ResourceDecl::buffer("b", 64, usage)],
    ///     passes: vec![
    ///         PassDecl::new("write a", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("write a again", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("write b", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
    ///     ],
    /// };
    /// assert_eq!(plan_scheduled(&input, Schedule::REORDER).unwrap().order, [0, 1, 2]);
    /// let always = Schedule::REORDER.without_fallback();
    /// assert_eq!(plan_scheduled(&input, always).unwrap().order, [0, 2, 1]);
    /// ```
    pub const fn without_fallback(self) -> Schedule {
        Schedule {
            fallback: false,
            ..self
        }
    }

    /// The same schedule, also culling.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
    ///     resources: vec![
    ///         ResourceDecl::buffer("scratch", 64, usage).transient(TransientMemory::buffer(64, 4, 1)),
    ///         ResourceDecl::buffer("out", 64, usage),
    ///     ],
    ///     passes: vec![
    ///         PassDecl::new("fill scratch", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("fill out", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
    ///     ],
    /// };
    /// // Nobody reads `scratch`, which does not outlive the graph: its pass is dropped.
    /// let culled = plan_scheduled(&input, Schedule::PROGRAM_ORDER.with_culling()).unwrap();
    /// assert_eq!(culled.order, [1]);
    /// assert_eq!(culled.culled(), [0]);
    /// assert!(culled.to_string().contains("culled `fill scratch`"));
    /// // No pass left uses `scratch`: it gets no memory.
    /// assert!(culled.transients.placements.is_empty());
    /// // `out` is the app's: its pass stays, though nobody reads `out` in this graph. Without
    /// // culling, every pass stays.
    /// assert_eq!(plan(&input).unwrap().order, [0, 1]);
    /// ```
    pub const fn with_culling(self) -> Schedule {
        Schedule { cull: true, ..self }
    }
}
