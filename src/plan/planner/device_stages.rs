//! The stage masks of semaphores, which never hold `HOST`.
//!
//! `HOST` is no stage of a queue: a semaphore signalled "at HOST" waits for nothing the host
//! does, and one waited on "at HOST" guards nothing (the Vulkan spec forbids it in
//! `VkSemaphoreSubmitInfo::stageMask`). A host access is ordered by fences and by the order
//! of the host's own calls: the app waits for an execution's fence before it touches what the
//! execution wrote, and touches it before it submits the work that comes next. So every mask
//! the planner puts on a semaphore is a [`DeviceStages`], which drops `HOST` when it is made
//! ([`Dep::new`] makes each dependency's masks one).

use super::*;

/// A semaphore signal's or wait's stage mask: device stages only, never `HOST`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct DeviceStages(vk::PipelineStageFlags2);

impl DeviceStages {
    pub(super) const ALL_COMMANDS: Self = Self(vk::PipelineStageFlags2::ALL_COMMANDS);

    /// `stages` without `HOST`.
    pub(super) fn of(stages: vk::PipelineStageFlags2) -> Self {
        Self(stages & !vk::PipelineStageFlags2::HOST)
    }

    /// `stages` without `HOST`, or `ALL_COMMANDS` where nothing is left: a semaphore that
    /// must order something, with no device stage named, orders all of it.
    pub(super) fn or_all(stages: vk::PipelineStageFlags2) -> Self {
        let s = Self::of(stages);
        if s.is_empty() {
            Self::ALL_COMMANDS
        } else {
            s
        }
    }

    pub(super) fn get(self) -> vk::PipelineStageFlags2 {
        self.0
    }

    pub(super) fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn contains(self, other: Self) -> bool {
        self.0.contains(other.0)
    }
}

impl std::ops::BitOr for DeviceStages {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for DeviceStages {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

impl Dep {
    /// A dependency of a node on `queue`'s work `at` that ran at `src` stages, which the
    /// waiting node needs at `wait` stages (`ALL_COMMANDS` where only `HOST` is named).
    ///
    /// `HOST` leaves `src`: the host's access is the last use of its graph (`validate`
    /// refuses the rest), so it belongs to an earlier execution, which the app waited for
    /// before the host touched the resource, and the host touched it before this graph was
    /// submitted. The wait on that execution's value stays for its device work; the host's
    /// stage would only widen a signal of this graph that another wait shares.
    pub(super) fn new(
        queue: usize,
        at: At,
        wait: vk::PipelineStageFlags2,
        src: vk::PipelineStageFlags2,
    ) -> Self {
        Self {
            queue,
            at,
            wait_stages: DeviceStages::or_all(wait),
            src_stages: DeviceStages::of(src),
        }
    }
}

/// Whether no semaphore signal or wait of `queues` names `HOST`: what every plan holds, by
/// [`DeviceStages`]; checked in debug builds on each plan the planner returns.
pub(super) fn no_host_on_semaphores(queues: &[QueuePlan]) -> bool {
    let host = |s: vk::PipelineStageFlags2| s.intersects(vk::PipelineStageFlags2::HOST);
    queues.iter().flat_map(|q| &q.batches).all(|b| {
        !b.signal.is_some_and(host)
            && !b.waits.iter().any(|w| host(w.stages))
            && !b.binary_signals.iter().any(|&(_, s)| host(s))
    })
}
