//! Transient resources: images and buffers whose contents live only inside one execution, so
//! that two of them whose uses never overlap in time can share memory.
//!
//! A resource is transient when its declaration carries [`TransientMemory`] (its memory
//! requirements, see [`ResourceDecl::transient`](crate::plan::ResourceDecl::transient)). The
//! planner then decides, as pure functions of the plan, with the placement that the crate's
//! `transients` feature gives it (`src/transients/placement/`; without that feature the
//! planner refuses transients):
//!
//! 1. **Lifetimes** (`lifetime.rs`): where each transient is used, as [`UseSite`]s (queue,
//!    batch, command), and which transients are *ordered*: every use of one happens-before the
//!    first use of the other, through submission order on one queue or a semaphore wait the
//!    plan already has. The first use of a transient is a write of all of it
//!    (`validate.rs` refuses anything else), and every later use is ordered after
//!    that write, so the first use stands for all of them.
//! 2. **Placement** (`fit.rs`): offsets in heaps, largest first into the best-fitting
//!    gap among the transients it is not ordered with (and three other greedy rules, keeping
//!    whichever needs least memory). Only ordered transients share memory, so aliasing never
//!    needs a semaphore the plan lacks.
//! 3. **Aliasing dependencies**: the planner plans again with each transient's first use
//!    ordered after the last uses of the earlier transients under its memory, as if they were
//!    one resource: a barrier on the same queue (the source scope is the earlier transient's
//!    last stages and writes; the image transitions from `UNDEFINED`), a widened semaphore
//!    wait and signal across queues. The contents are discarded, so no queue family ownership
//!    transfer is needed even for `EXCLUSIVE` resources (contract rule 6).
//! 4. **Bounds** (`bound.rs`): the memory a placement needs can be compared with a live-set
//!    lower bound, the heaviest set of pairwise unordered transients.
//!
//! [`Plan`]'s `Display` shows where the transients are: the heaps, and per
//! transient its bytes, its first and last uses and the transients whose memory it takes; then
//! the totals against the lower bound.
//!
//! The example plans three transients on one queue: `a` is last read before `b` and `c` are
//! written, so one of them takes `a`'s memory.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{ash::vk, Access};
//! let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
//! let transient = |name: &str| ResourceDecl::image(name, 1, 1, usage)
//!     .transient(TransientMemory::image(1 << 20, 1 << 16, 0b11));
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
//!     resources: vec![transient("a"), transient("b"), transient("c")],
//!     passes: vec![
//!         PassDecl::new("draw a", 0).with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)),
//!         PassDecl::new("a to b", 0)
//!             .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ))
//!             .with_use(UseDecl::new(1, Access::COLOR_ATTACHMENT_WRITE)),
//!         PassDecl::new("b to c", 0)
//!             .with_use(UseDecl::new(1, Access::FRAGMENT_SHADER_SAMPLED_READ))
//!             .with_use(UseDecl::new(2, Access::COLOR_ATTACHMENT_WRITE)),
//!     ],
//! };
//! let plan = plan(&input).unwrap();
//! let t = &plan.transients;
//! // Two megabytes instead of three: `c` reuses `a`'s memory.
//! assert_eq!((t.total_size(), t.unaliased_size, t.lower_bound), (2 << 20, 3 << 20, 2 << 20));
//! let c = t.placement(2).unwrap();
//! assert_eq!((c.heap, c.offset), (t.placement(0).unwrap().heap, t.placement(0).unwrap().offset));
//! assert_eq!(c.after, vec![0]);
//! // `c`'s first use waits for `a`'s last read (fragment shader), then leaves UNDEFINED.
//! let cmds = &plan.queues[0].batches[0].commands;
//! let Command::Barrier(before_c) = &cmds[cmds.len() - 2] else { panic!("{plan}") };
//! let alias = before_c.images.iter().find(|b| b.resource == 2).unwrap();
//! assert_eq!(alias.old_layout, vk::ImageLayout::UNDEFINED);
//! assert!(alias.scopes.src_stages.contains(vk::PipelineStageFlags2::FRAGMENT_SHADER));
//! plan.verify().unwrap();
//! println!("{plan}");
//! ```

pub use super::input::TransientMemory;
pub use super::output::{TransientHeap, TransientPlacement, TransientPlan, UseSite};

use super::{Plan, PlanInput, QueuePlan};
use crate::error::{Error, Result};
use std::fmt;

/// Where transients go: the planner's one seam for the `transients` feature, which implements
/// it in `src/transients/placement/`. The planner is given one (or none) as an argument and
/// calls it between its two runs (see [`plan_scheduled`](super::plan_scheduled)).
pub(crate) trait Place {
    /// Refuses transients that cannot be planned. Runs after the planner's own validation, so
    /// indices and ranges are known to be in bounds.
    fn validate(&self, input: &PlanInput) -> Result<()>;

    /// Places the transients of `input` from a plan made without aliasing (`queues`): the
    /// heaps and offsets, and what the planner must order because of them.
    fn place(&self, input: &PlanInput, queues: &[QueuePlan]) -> (TransientPlan, Aliasing);

    /// Fills the use sites of `plan`'s placements from the final plan's batches.
    fn sites(&self, plan: &mut TransientPlan, input: &PlanInput, queues: &[QueuePlan]);

    /// Checks what the executor relies on of the finished plan: it places exactly the
    /// transients its recorded passes use, each once. A kept or held plan keeps its
    /// placements, so one check per plan made covers every execution of it.
    fn check(&self, plan: &Plan) -> Result<()>;
}

/// Refuses the transients of `input` that `place` cannot plan, and every transient when there
/// is no placement (a build without the `transients` feature).
pub(super) fn validate(input: &PlanInput, place: Option<&dyn Place>) -> Result<()> {
    match place {
        Some(place) => place.validate(input),
        None if any(input) => Err(Error::InvalidInput(
            "transient resources need vk-baton's `transients` feature".into(),
        )),
        None => Ok(()),
    }
}

/// What the planner needs to order aliased transients: per resource, the pass of its first use
/// and the transients it must be ordered after.
#[derive(Clone, Debug, Default)]
pub(crate) struct Aliasing {
    /// Per resource: the transients (resource indices) whose last uses its first use follows.
    pub(crate) after: Vec<Vec<usize>>,
    /// Per resource: the first pass that uses it.
    pub(crate) first_pass: Vec<Option<usize>>,
}

impl Aliasing {
    /// The transients that `r`'s use by `pass` must be ordered after: none unless that is
    /// `r`'s first use.
    pub(super) fn after_first_use(&self, r: usize, pass: usize) -> &[usize] {
        match self.first_pass.get(r) {
            Some(&Some(p)) if p == pass => &self.after[r],
            _ => &[],
        }
    }
}

/// Whether any resource of `input` is transient.
pub(crate) fn any(input: &PlanInput) -> bool {
    input.resources.iter().any(|r| r.transient.is_some())
}

impl TransientPlan {
    /// Writes the placements as `Plan`'s `Display` shows them (nothing without transients).
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, input: &PlanInput) -> fmt::Result {
        if self.placements.is_empty() {
            return Ok(());
        }
        let rname = |r: usize| input.resources.get(r).map_or("?", |r| r.name.as_str());
        let site = |u: &UseSite| {
            let pass = input.passes.get(u.pass).map_or("?", |p| p.name.as_str());
            let queue = input.queues.get(u.queue).map_or("?", |q| q.name.as_str());
            format!(
                "`{pass}` (`{queue}` batch {} command {})",
                u.batch, u.command
            )
        };
        writeln!(
            f,
            "transient memory: {} bytes in {} heap(s); without aliasing {}, live-set lower bound {}",
            self.total_size(),
            self.heaps.len(),
            self.unaliased_size,
            self.lower_bound
        )?;
        for (h, heap) in self.heaps.iter().enumerate() {
            writeln!(
                f,
                "  heap {h}: {} bytes, alignment {}, memory types {:#b}",
                heap.size, heap.alignment, heap.memory_type_bits
            )?;
            let mut here: Vec<_> = self.placements.iter().filter(|p| p.heap == h).collect();
            here.sort_by_key(|p| (p.offset, p.resource));
            for p in here {
                let last: Vec<String> = p.last_uses.iter().map(site).collect();
                write!(
                    f,
                    "    `{}` bytes {}..{}: first {}, last {}",
                    rname(p.resource),
                    p.offset,
                    p.offset + p.size,
                    site(&p.first_use),
                    last.join(", ")
                )?;
                if !p.after.is_empty() {
                    let after: Vec<String> =
                        p.after.iter().map(|&a| format!("`{}`", rname(a))).collect();
                    write!(f, "; after {}", after.join(", "))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
