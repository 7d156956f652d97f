//! The error type.

use ash::vk;

/// Everything vk-baton can fail with. Planning errors name the pass and resource at fault;
/// nothing is submitted and no resource state changes when one is returned.
///
/// ```
/// use vk_baton::plan::{plan, PassDecl, PlanInput};
/// use vk_baton::Error;
/// // A pass naming a queue the graph does not have.
/// let input = PlanInput { passes: vec![PassDecl::new("blur", 3)], ..Default::default() };
/// let err = plan(&input).unwrap_err();
/// assert!(matches!(err, Error::InvalidInput(_)));
/// assert!(err.to_string().contains("blur"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The call.
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// The device was lost; the GPU work's outcome is unknown. Resources stay alive.
    #[error("the Vulkan device was lost")]
    DeviceLost,
    /// A pass declares one resource twice with overlapping writes or different layouts.
    #[error(
        "pass `{pass}` declares `{resource}` twice with overlapping writes or different layouts \
         (an attachment that the same pass also samples is a feedback loop: read it in the next \
         pass; uses of different mips, layers or aspects do not overlap)"
    )]
    ConflictingUses {
        /// The pass.
        pass: String,
        /// The resource.
        resource: String,
    },
    /// An ordinary read between two unordered writes of the same kind to the same part of a
    /// resource (`plan::Unordered`): the read would see the group half done, which is the
    /// order its writes declared irrelevant.
    #[error(
        "pass `{then}` writes `{resource}` unordered after pass `{first}` did, but pass \
         `{between}` reads it in between and would see the unordered writes half done: read \
         after the last of them, or make the later writes ordinary"
    )]
    UnorderedWriteInterrupted {
        /// The resource.
        resource: String,
        /// The pass of the unordered write before the read.
        first: String,
        /// The pass of the read.
        between: String,
        /// The pass of the unordered write after it.
        then: String,
    },
    /// Two unordered writes of one group declare disjoint regions that overlap
    /// (`plan::Unordered::Disjoint`).
    #[error(
        "passes `{first}` and `{second}` write `{resource}` unordered as disjoint, but their \
         regions overlap: {detail}"
    )]
    UnorderedWriteOverlap {
        /// The resource.
        resource: String,
        /// The earlier pass.
        first: String,
        /// The later pass.
        second: String,
        /// The two regions.
        detail: String,
    },
    /// A queue, resource or semaphore belongs to another `VkDevice`.
    #[error("{what} belongs to another VkDevice than the graph")]
    ForeignDevice {
        /// What was foreign.
        what: String,
    },
    /// The queue's family lacks a capability the access needs.
    #[error("pass `{pass}` uses `{resource}` in a way that needs {needs:?}, but queue `{queue}` only has {has:?}")]
    QueueCapability {
        /// The pass.
        pass: String,
        /// The resource.
        resource: String,
        /// The queue.
        queue: String,
        /// What the access needs.
        needs: vk::QueueFlags,
        /// What the family has.
        has: vk::QueueFlags,
    },
    /// The access needs a device feature that the graph was not told is enabled
    /// ([`Access::device_features`](crate::Access::device_features),
    /// [`Graph::set_device_features`](crate::Graph::set_device_features)).
    #[error("pass `{pass}` uses `{resource}` as {access}, which needs the device feature {feature}: enable it on the device and say so with Graph::set_device_features")]
    FeatureNotEnabled {
        /// The pass.
        pass: String,
        /// The resource.
        resource: String,
        /// The access, by its name in the table (or its flags).
        access: String,
        /// The first missing feature, by its name in the specification (`meshShader`).
        feature: &'static str,
    },
    /// The resource was not created with the usage flags the access needs.
    #[error("pass `{pass}` uses `{resource}` in a way its usage flags do not allow: {detail}")]
    UsageNotAllowed {
        /// The pass.
        pass: String,
        /// The resource.
        resource: String,
        /// The missing flags.
        detail: String,
    },
    /// A declared range lies outside the resource (or is empty, or of the wrong kind).
    #[error("pass `{pass}` declares a range outside `{resource}`: {detail}")]
    RangeOutOfBounds {
        /// The pass.
        pass: String,
        /// The resource.
        resource: String,
        /// The range.
        detail: String,
    },
    /// An ownership transfer needs a release on a family the graph has no queue of.
    #[error("pass `{pass}` needs `{resource}`, owned by queue family {family}, but the graph has no queue of that family to release it on")]
    NoQueueForRelease {
        /// The resource.
        resource: String,
        /// The owning family.
        family: u32,
        /// The pass.
        pass: String,
    },
    /// A resource's state changed between `finish()` and `execute()` (another graph ran).
    #[error("`{resource}` changed state after this plan was made; plan again")]
    StalePlan {
        /// The resource.
        resource: String,
    },
    /// Declarations the planner cannot use (an index out of range).
    #[error("invalid plan input: {0}")]
    InvalidInput(String),
    /// An argument to a resource or queue function is invalid (a zero size, a range outside
    /// a buffer, host access to a buffer that is not mapped). Nothing was created or changed.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let e = Error::InvalidArgument("buffer `mesh`: size 0".into());
    /// assert_eq!(e.to_string(), "invalid argument: buffer `mesh`: size 0");
    /// ```
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The Vulkan environment lacks something the library needs: no loader, no suitable
    /// device, no graphics queue family, a requested validation layer is not installed, or
    /// the device given to [`crate::Graph::new`] or [`crate::Queue::new`] is below Vulkan 1.3
    /// or lacks an entry point the library records with (an instance created with
    /// `apiVersion` 1.0 hides them). The message says what to install or change.
    #[error("the Vulkan environment is not usable: {0}")]
    Environment(String),
    /// The host asked for a mapped buffer's bytes while GPU work that uses them may still be
    /// running: a write (or, for host writes, a read) by the GPU is not known complete. Wait
    /// for the execution's fence and try again.
    ///
    /// It does not come at once: unless the host saw the execution's fence signalled,
    /// [`StBuffer::read`](crate::StBuffer::read), [`StBuffer::write`](crate::StBuffer::write)
    /// and the mapped slices first wait up to 100 ms for the work's queue timeline to reach
    /// it, so work that completes meanwhile is not refused.
    #[error("`{resource}` is still in use by GPU work that has not completed")]
    InUseByGpu {
        /// The resource.
        resource: String,
    },
    /// The GPU has not finished yet (e.g. reading a download before its fence completes).
    #[error("the GPU work has not completed yet")]
    NotReady,
    /// Every heap set a graph binds transients to was still used by an earlier execution
    /// after waiting `waited` for the oldest: GPU work that does not finish (it waits on a
    /// semaphore nobody signals), or more executions in flight than the graph keeps sets for.
    /// The execution failed before recording; nothing was submitted and no state changed.
    /// Wait for an earlier execution's fence, then execute again.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let e = Error::TransientSetsBusy { sets: 4, waited: std::time::Duration::from_secs(10) };
    /// assert!(e.to_string().starts_with("all 4 transient heap sets are still in use after 10s"));
    /// ```
    #[error("all {sets} transient heap sets are still in use after {waited:?}: wait for an earlier execution's fence (does its GPU work wait on a semaphore that is never signalled?)")]
    TransientSetsBusy {
        /// The sets the graph keeps.
        sets: usize,
        /// How long binding waited for the oldest.
        waited: std::time::Duration,
    },
    /// A frame's transients need more memory than the graph's budget
    /// (`Graph::set_transient_budget`, feature "transients"): refused when the
    /// frame is planned (`finish()`, a held plan's re-plan) or, for a held plan, when it
    /// executes, before any memory is allocated. Names the bytes needed (the heaps, as they
    /// would be allocated), the budget, and the largest transients.
    ///
    /// The plan already shares memory between every two transients it orders one after the
    /// other; to need less, order more of them (a pass order that finishes with one before
    /// the next starts), make them smaller, or raise the budget.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let e = Error::TransientBudget { need: 3 << 20, budget: 2 << 20, largest: "bloom: 2097152 bytes".into() };
    /// assert!(e.to_string().starts_with("the frame's transients need 3145728 bytes, over the graph's transient budget of 2097152 bytes"));
    /// ```
    #[error("the frame's transients need {need} bytes, over the graph's transient budget of {budget} bytes (largest: {largest}); Graph::set_transient_budget")]
    TransientBudget {
        /// Bytes of the heaps the frame's transients need.
        need: u64,
        /// The graph's budget.
        budget: u64,
        /// The largest transients (at most three), with their bytes.
        largest: String,
    },
    /// The execution failed before its work reached the GPU (a recording error, a stale
    /// plan, a failed submit): its results will never appear.
    #[error("the execution failed before its work reached the GPU")]
    NotExecuted,
    /// A pass's [`crate::Pass::record`] returned an error. The executor wraps whatever the pass
    /// returned, so the error always names the pass; nothing was submitted.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let e = Error::Record { pass: "blur".into(), source: Box::new(Error::PassFailed("no pipeline".into())) };
    /// assert_eq!(e.to_string(), "pass `blur` failed to record: no pipeline");
    /// ```
    #[error("pass `{pass}` failed to record: {source}")]
    Record {
        /// The pass, as named in `insert_pass`.
        pass: String,
        /// What the pass returned.
        source: Box<Error>,
    },
    /// A pass's own failure, with its reason: return it from [`crate::Pass::record`] when no
    /// other variant fits (the executor wraps it in [`Error::Record`], naming the pass).
    #[error("{0}")]
    PassFailed(String),
    /// A pass's own error type, kept whole as the source (the stock passes return theirs
    /// this way): downcast it to the pass crate's error to inspect it.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "shader.spv");
    /// let e = Error::Pass(Box::new(io));
    /// assert_eq!(e.to_string(), "shader.spv");
    /// let Error::Pass(source) = &e else { unreachable!() };
    /// assert!(source.downcast_ref::<std::io::Error>().is_some());
    /// ```
    #[error("{0}")]
    Pass(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Memory for a resource could not be had: the allocator or the driver ran out, or no
    /// memory type fits. Names the resource and the bytes asked for. For a graph's transient
    /// heap, `resource` names the heap, each transient placed in it with its bytes, and the
    /// heap's bytes in all: ``cannot allocate 8192 bytes for `transient heap 0 (gbuffer: 4096
    /// bytes, bloom: 4096 bytes; 8192 bytes in all)` ``.
    ///
    /// ```
    /// use vk_baton::{ash::vk, Error};
    /// let e = Error::allocation("mesh", 1 << 40, Error::vk("vkCreateBuffer", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY));
    /// assert!(e.to_string().starts_with("cannot allocate 1099511627776 bytes for `mesh`: vkCreateBuffer failed"));
    /// ```
    #[error("cannot allocate {size} bytes for `{resource}`: {source}")]
    Allocation {
        /// The resource's name.
        resource: String,
        /// The bytes asked for (the buffer's size, or the memory requirement).
        size: u64,
        /// Why: [`Error::Allocator`] or a [`Error::Vulkan`] out-of-memory result.
        source: Box<Error>,
    },
    /// gpu-allocator failed (on its own, or as the cause of an [`Error::Allocation`]).
    #[error("gpu-allocator: {0}")]
    Allocator(#[from] gpu_allocator::AllocationError),
    /// The synchronization verifier found violations in a plan: each one, as found. Only
    /// debug builds with the feature `verify` check plans in `finish()`.
    #[error("the plan violates synchronization rules:\n{}", crate::violation::lines(.0))]
    Verification(Vec<crate::violation::Violation>),
}

impl Error {
    /// Maps a failed Vulkan call; `ERROR_DEVICE_LOST` becomes [`Error::DeviceLost`].
    ///
    /// ```
    /// use vk_baton::{ash::vk, Error};
    /// let e = Error::vk("vkQueueSubmit2", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
    /// assert_eq!(e.to_string(), format!("vkQueueSubmit2 failed: {}", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY));
    /// assert!(matches!(Error::vk("vkWaitForFences", vk::Result::ERROR_DEVICE_LOST), Error::DeviceLost));
    /// ```
    pub fn vk(call: &'static str, result: vk::Result) -> Self {
        match result {
            vk::Result::ERROR_DEVICE_LOST => Self::DeviceLost,
            result => Self::Vulkan { call, result },
        }
    }

    /// An [`Error::Allocation`] for `size` bytes of `resource`, caused by `source`.
    ///
    /// ```
    /// use vk_baton::Error;
    /// let e = Error::allocation("staging", 64, Error::Allocator(gpu_allocator::AllocationError::OutOfMemory));
    /// assert!(matches!(e, Error::Allocation { size: 64, .. }));
    /// ```
    pub fn allocation(resource: &str, size: u64, source: Error) -> Self {
        Self::Allocation {
            resource: resource.to_owned(),
            size,
            source: Box::new(source),
        }
    }
}

/// `Result<T, vk_baton::Error>`.
///
/// ```
/// use vk_baton::{Error, Result};
/// fn layers(n: u32) -> Result<u32> {
///     if n == 0 {
///         return Err(Error::InvalidArgument("an image needs at least one layer".into()));
///     }
///     Ok(n)
/// }
/// assert_eq!(layers(6).unwrap(), 6);
/// assert!(matches!(layers(0), Err(Error::InvalidArgument(_))));
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_loss_is_its_own_error() {
        assert!(matches!(
            Error::vk("vkWaitForFences", vk::Result::ERROR_DEVICE_LOST),
            Error::DeviceLost
        ));
        assert!(matches!(
            Error::vk("vkQueueSubmit2", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            Error::Vulkan { .. }
        ));
    }
}
