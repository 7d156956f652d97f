//! What a [`Schedule`](crate::plan::Schedule) did to a plan: the passes it culled and those it
//! moved before others.

use super::Plan;

impl Plan {
    /// The passes culled: in [`Plan::input`] but not in [`Plan::order`], in program order.
    ///
    /// See [`Schedule::with_culling`](crate::plan::Schedule::with_culling).
    pub fn culled(&self) -> Vec<usize> {
        let mut taken = vec![false; self.input.passes.len()];
        for &i in &self.order {
            if let Some(t) = taken.get_mut(i) {
                *t = true;
            }
        }
        (0..taken.len()).filter(|&i| !taken[i]).collect()
    }

    /// Per pass, the earliest pass inserted before it that it now comes before (what the
    /// printout calls "moved before"); `None` for passes that kept their place, or were culled.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("a", 64, usage), ResourceDecl::buffer("b", 64, usage)],
    ///     passes: vec![
    ///         PassDecl::new("write a", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("read a", 0).with_use(UseDecl::new(0, Access::TRANSFER_READ)),
    ///         PassDecl::new("write b", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
    ///     ],
    /// };
    /// // Without the fallback: moving `write b` saves no barrier, so `REORDER` keeps program
    /// // order.
    /// let p = plan_scheduled(&input, Schedule::REORDER.without_fallback()).unwrap();
    /// // `write b` depends on nothing: it joins `write a` before the barrier `read a` needs.
    /// assert_eq!(p.order, [0, 2, 1]);
    /// assert_eq!(p.moved_before(), [None, None, Some(1)]);
    /// ```
    pub fn moved_before(&self) -> Vec<Option<usize>> {
        let n = self.input.passes.len();
        let mut rank = vec![usize::MAX; n];
        for (k, &i) in self.order.iter().enumerate() {
            if let Some(r) = rank.get_mut(i) {
                *r = k;
            }
        }
        (0..n)
            .map(|i| {
                if rank[i] == usize::MAX {
                    return None;
                }
                (0..i).find(|&j| rank[j] != usize::MAX && rank[j] > rank[i])
            })
            .collect()
    }
}
