//! The queues a simulation plans for.

use super::SimError;
use crate::plan::QueueDecl;
use ash::vk;

/// The device's queues as the executor sees them: distinct `VkQueue`s, and roles mapped onto
/// them. [`Topology::queue`] gives the index that [`PassDecl::queue`](crate::plan::PassDecl::queue) takes.
///
/// ```
/// use vk_baton::{ash::vk, verify::simulate::Topology};
/// let t = Topology::single_family();
/// // Like lavapipe: every role is the same VkQueue.
/// assert_eq!(t.queue("graphics"), t.queue("transfer"));
/// let t = Topology::new()
///     .with_family(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER, 1)
///     .with_family(vk::QueueFlags::TRANSFER, 1)
///     .with_queue("graphics", 0).unwrap()
///     .with_queue("copy", 1).unwrap()
///     .with_alias("transfer", "copy").unwrap();
/// assert_eq!(t.queue("transfer"), Some(1));
/// assert!(Topology::new().with_queue("x", 0).is_err()); // no family 0
/// ```
#[derive(Clone, Debug, Default)]
pub struct Topology {
    families: Vec<(vk::QueueFlags, u32)>,
    queues: Vec<QueueDecl>,
    roles: Vec<(String, usize)>,
}

const GCT: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);
const CT: vk::QueueFlags =
    vk::QueueFlags::from_raw(vk::QueueFlags::COMPUTE.as_raw() | vk::QueueFlags::TRANSFER.as_raw());

impl Topology {
    /// No families, no queues.
    pub fn new() -> Self {
        Self::default()
    }

    /// An NVIDIA H100: family 0 graphics+compute+transfer (16 queues), family 1 transfer-only
    /// (2), family 2 compute+transfer (8). Queues `graphics` (family 0), `transfer` (1) and
    /// `async_compute` (2), in that order, as `Context` picks them.
    pub fn nvidia() -> Self {
        let t = Self::new()
            .with_family(GCT, 16)
            .with_family(vk::QueueFlags::TRANSFER, 2)
            .with_family(CT, 8);
        t.with_queue("graphics", 0)
            .and_then(|t| t.with_queue("transfer", 1))
            .and_then(|t| t.with_queue("async_compute", 2))
            .expect("a valid preset")
    }

    /// One graphics+compute+transfer family with one queue, like lavapipe: `graphics`, with
    /// `async_compute` and `transfer` as other names for it.
    pub fn single_family() -> Self {
        Self::new()
            .with_family(GCT, 1)
            .with_queue("graphics", 0)
            .and_then(|t| t.with_alias("async_compute", "graphics"))
            .and_then(|t| t.with_alias("transfer", "graphics"))
            .expect("a valid preset")
    }

    /// One graphics+compute+transfer family with two queues: `graphics` and `async_compute`,
    /// with `transfer` another name for `async_compute` (semaphores, never a transfer).
    pub fn two_queues_of_one_family() -> Self {
        Self::new()
            .with_family(GCT, 2)
            .with_queue("graphics", 0)
            .and_then(|t| t.with_queue("async_compute", 0))
            .and_then(|t| t.with_alias("transfer", "async_compute"))
            .expect("a valid preset")
    }

    /// Adds the next family (its index is the number of families before it) with `count`
    /// queues.
    pub fn with_family(mut self, caps: vk::QueueFlags, count: u32) -> Self {
        self.families.push((caps, count));
        self
    }

    /// Adds a distinct `VkQueue` named `name`, the next one of `family`.
    pub fn with_queue(mut self, name: &str, family: u32) -> Result<Self, SimError> {
        let Some(&(caps, count)) = self.families.get(family as usize) else {
            return Err(SimError::Topology(format!(
                "queue `{name}`: no family {family}"
            )));
        };
        let used = self.queues.iter().filter(|q| q.family == family).count();
        if used as u32 >= count {
            return Err(SimError::Topology(format!(
                "queue `{name}`: family {family} has only {count} queue(s)"
            )));
        }
        self.check_new(name)?;
        self.queues.push(QueueDecl::new(name, family, caps));
        self.roles.push((name.into(), self.queues.len() - 1));
        Ok(self)
    }

    /// Makes `name` another name for the queue called `of` (one `VkQueue`, one timeline).
    pub fn with_alias(mut self, name: &str, of: &str) -> Result<Self, SimError> {
        let q = self
            .queue_index(of)
            .ok_or_else(|| SimError::Topology(format!("alias `{name}`: no queue `{of}`")))?;
        self.check_new(name)?;
        self.roles.push((name.into(), q));
        Ok(self)
    }

    fn check_new(&self, name: &str) -> Result<(), SimError> {
        match self.queue_index(name) {
            Some(_) => Err(SimError::Topology(format!("`{name}` is named twice"))),
            None => Ok(()),
        }
    }

    fn queue_index(&self, name: &str) -> Option<usize> {
        self.roles.iter().find(|r| r.0 == name).map(|r| r.1)
    }

    /// The queue a role names, as the index [`PassDecl::queue`](crate::plan::PassDecl::queue) takes.
    pub fn queue(&self, name: &str) -> Option<usize> {
        self.queue_index(name)
    }

    /// The same device with `maintenance8` enabled: every queue's ownership transfers use
    /// all stages ([`QueueDecl::transfers_use_all_stages`]), as a graph plans them when told
    /// of the feature.
    ///
    /// ```
    /// use vk_baton::verify::simulate::Topology;
    /// let t = Topology::nvidia().with_transfers_using_all_stages();
    /// assert!(t.queues().iter().all(|q| q.transfers_use_all_stages));
    /// ```
    pub fn with_transfers_using_all_stages(mut self) -> Self {
        for q in &mut self.queues {
            q.transfers_use_all_stages = true;
        }
        self
    }

    /// The same device with `maintenance9` enabled, each family's
    /// `optimalImageTransferToQueueFamilies` being `optimal_image_transfers`
    /// ([`QueueDecl::maintenance9`]): buffers, and images without attachment usage going to a
    /// family in the mask, change families without ownership transfers.
    ///
    /// ```
    /// use vk_baton::verify::simulate::Topology;
    /// let t = Topology::nvidia().with_maintenance9(0b111);
    /// assert!(t.queues().iter().all(|q| q.maintenance9 == Some(0b111)));
    /// ```
    pub fn with_maintenance9(mut self, optimal_image_transfers: u32) -> Self {
        for q in &mut self.queues {
            q.maintenance9 = Some(optimal_image_transfers);
        }
        self
    }

    /// The distinct queues, by index.
    pub fn queues(&self) -> &[QueueDecl] {
        &self.queues
    }
}
