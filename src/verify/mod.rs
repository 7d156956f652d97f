//! An independent checker of the synchronization a [`Plan`] emits.
//!
//! The verifier reads a plan exactly as the executor submits it (per queue, batches in order:
//! semaphore waits, then `vkCmdPipelineBarrier2` commands and passes, then semaphore signals)
//! and decides, from the Vulkan specification's definitions and nothing the planner computes,
//! whether every pair of conflicting accesses is correctly ordered:
//!
//! - **Execution dependency chains** through barrier first and second synchronization scopes in
//!   submission order (across batches and executions), and through semaphore signal/wait
//!   operations (a signal's first scope includes earlier signals; a timeline wait for `w` is
//!   satisfied by the first signal reaching `w`).
//! - **Memory dependencies**: writes made available by a command whose first access scope holds
//!   them, and visible through one whose second access scope holds the later access, chained.
//! - **Image layouts**: each access finds the image in the layout it declares; each transition's
//!   old layout is the current one or `UNDEFINED`, and `UNDEFINED` discards contents that a
//!   later access still needs.
//! - **Queue family ownership** of `EXCLUSIVE` resources: contents are used only by the owning
//!   family (or, with `maintenance9`, by a family that implicitly acquires contents the
//!   feature keeps: buffers, and images without attachment usage going to a family in the
//!   owner's `optimalImageTransferToQueueFamilies`); every release has a matching acquire
//!   (same families, layouts and range) ordered after it through a semaphore.
//!
//! See `check.rs` for the precise rules. Stage masks meet only on shared atomic bits (after
//! expanding `ALL_COMMANDS`, `ALL_GRAPHICS`, `ALL_TRANSFER`, ... and sync2 `TOP`/`BOTTOM`);
//! logically earlier/later stages are not inferred, which can only make the verifier stricter.
//!
//! Ownership transfer barriers are read as the executor records them: without
//! `VK_DEPENDENCY_QUEUE_FAMILY_OWNERSHIP_TRANSFER_USE_ALL_STAGES_BIT_KHR`, so a release is not
//! in its barrier's second scope and an acquire not in its barrier's first scope. A release is
//! then ordered before a semaphore signal (or a later barrier) only by one whose first scope is
//! all stages (`ALL_COMMANDS`), and an acquire after a semaphore wait (or an earlier barrier) only
//! by one whose second scope is all stages.
//!
//! ```
//! use vk_baton::plan::*;
//! use vk_baton::{Access, ash::vk};
//! let input = PlanInput {
//!     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
//!     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
//!     passes: vec![
//!         PassDecl::new("write", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
//!         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
//!     ],
//! };
//! let mut plan = plan(&input).unwrap();
//! assert!(plan.verify().is_ok());
//!
//! // Drop the barrier between the passes: the verifier names the hazard.
//! let cmds = &mut plan.queues[0].batches[0].commands;
//! let at = cmds.iter().rposition(|c| matches!(c, Command::Barrier(_))).unwrap();
//! cmds.remove(at);
//! let errors = plan.verify().unwrap_err();
//! assert!(errors.iter().any(|v| v.to_string().contains("pass `write`")));
//! ```

mod check;
mod flags;
mod model;
pub mod simulate;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_across_graphs;
#[cfg(test)]
mod tests_unordered;

use crate::plan::{Plan, TimelineValues, WaitTarget};

pub use crate::violation::{Actor, HazardKind, Violation};

/// Checks one or more consecutive executions.
///
/// Execution `k + 1`'s initial resource states must be execution `k`'s
/// [`Plan::resolved_final_states`], and its values must come after execution `k`'s (one
/// `last_signalled` array across all of them). The queue lists must be the same: a queue index
/// is its identity. Only the first execution's initial states are read; later ones are the
/// earlier executions' own operations, which the verifier sees.
///
/// ```
/// use vk_baton::plan::*;
/// use vk_baton::{Access, ash::vk};
/// let mut input = PlanInput {
///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
///                  QueueDecl::new("copy", 1, vk::QueueFlags::TRANSFER)],
///     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
///     passes: vec![PassDecl::new("upload", 1).with_use(UseDecl::new(0, Access::TRANSFER_WRITE))],
/// };
/// let mut last = [0u64; 2];
/// let first = plan(&input).unwrap();
/// let v1 = first.assign_values(&mut last);
/// for (r, s) in input.resources.iter_mut().zip(first.resolved_final_states(&v1)) {
///     r.initial = s;
/// }
/// input.passes = vec![PassDecl::new("use", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))];
/// let second = plan(&input).unwrap();
/// let v2 = second.assign_values(&mut last);
/// vk_baton::verify::verify(&[(&first, &v1), (&second, &v2)]).unwrap();
/// ```
pub fn verify(executions: &[(&Plan, &TimelineValues)]) -> Result<(), Vec<Violation>> {
    if executions.is_empty() {
        return Ok(());
    }
    let m = model::Model::build(executions);
    let mut v = m.violations.clone();
    if v.is_empty()
        || v.iter()
            .all(|x| x.kind != HazardKind::Structure || !x.missing.contains("same queues"))
    {
        v.extend(check::run(&m));
    }
    if v.is_empty() {
        Ok(())
    } else {
        Err(v)
    }
}

impl Plan {
    /// Checks this plan as one execution, assuming each queue's timeline has already been
    /// given every value the plan's initial states and waits name (the least the plan can
    /// have been made from). [`GraphBuilder::finish`](crate::GraphBuilder::finish) checks with
    /// the queues' real values instead, through [`Plan::verify_from`].
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{Access, ash::vk};
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///     resources: vec![ResourceDecl::image("rt", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT)],
    ///     passes: vec![PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).discard())],
    /// };
    /// plan(&input).unwrap().verify().unwrap();
    /// ```
    pub fn verify(&self) -> Result<(), Vec<Violation>> {
        self.verify_from(&self.named_values())
    }

    /// Checks this plan as one execution that starts with queue `q`'s timeline at
    /// `last_signalled[q]`: the values [`Plan::assign_values`] would be given.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{Access, ash::vk};
    /// let gfx = QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE);
    /// let compute = QueueDecl::new("compute", 2, vk::QueueFlags::COMPUTE);
    /// // An earlier graph left `buf` written on the compute queue at its timeline value 100.
    /// let written = SegmentState {
    ///     layout: vk::ImageLayout::UNDEFINED, defined: true, owner: None,
    ///     write: Some(Recorded { queue: 1, value: Some(100),
    ///         stages: vk::PipelineStageFlags2::COMPUTE_SHADER, access: vk::AccessFlags2::SHADER_STORAGE_WRITE }),
    ///     reads: vec![], visible: vec![],
    /// };
    /// let input = PlanInput {
    ///     queues: vec![gfx, compute],
    ///     resources: vec![ResourceDecl::buffer("buf", 64, vk::BufferUsageFlags::STORAGE_BUFFER)
    ///         .concurrent()
    ///         .with_state(written)],
    ///     passes: vec![PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))],
    /// };
    /// let p = plan(&input).unwrap();
    /// // Graphics waits for compute's value 100, which the timeline had been given.
    /// p.verify_from(&[0, 100]).unwrap();
    /// // A compute timeline that has not reached 100 yet cannot have made this state.
    /// assert!(p.verify_from(&[0, 7]).is_err());
    /// ```
    pub fn verify_from(&self, last_signalled: &[u64]) -> Result<(), Vec<Violation>> {
        let mut last = last_signalled.to_vec();
        last.resize(self.queues.len(), 0);
        let values = self.assign_values(&mut last);
        verify(&[(self, &values)])
    }

    /// Per queue, the highest timeline value named by an initial state or a wait.
    fn named_values(&self) -> Vec<u64> {
        let mut named = vec![0u64; self.queues.len()];
        let mut note = |q: usize, v: Option<u64>| {
            if let (Some(n), Some(v)) = (named.get_mut(q), v) {
                *n = (*n).max(v);
            }
        };
        for r in &self.input.resources {
            for (_, s) in &r.initial {
                for rec in s.write.iter().chain(&s.reads) {
                    note(rec.queue, rec.value);
                }
            }
        }
        for b in self.queues.iter().flat_map(|q| &q.batches) {
            for w in &b.waits {
                if let WaitTarget::Value { queue, value } = w.target {
                    note(queue, Some(value));
                }
            }
        }
        named
    }
}
