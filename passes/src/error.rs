//! The error type of the stock passes.

use ash::vk;

/// Everything a stock pass can fail with, as values: nothing in this crate panics on bad
/// input.
///
/// ```
/// use vk_baton_passes::Error;
/// let e = Error::NotReady;
/// assert!(e.to_string().contains("not completed"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error from the core crate (planning, allocation, a Vulkan call it made).
    #[error(transparent)]
    Core(#[from] vk_baton::Error),
    /// A Vulkan call made by a pass failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The call.
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// The format lacks a feature the pass needs (for example `BLIT_SRC`, `BLIT_DST` or
    /// `SAMPLED_IMAGE_FILTER_LINEAR` for a blit).
    #[error("format {format:?} with {tiling:?} tiling lacks {missing:?}, which {what} needs")]
    FormatNotSupported {
        /// The format.
        format: vk::Format,
        /// The tiling the image uses.
        tiling: vk::ImageTiling,
        /// The missing feature bits.
        missing: vk::FormatFeatureFlags,
        /// What needed them.
        what: &'static str,
    },
    /// The pass cannot work with this format at all (e.g. a copy of a compressed format
    /// whose texel size this crate does not know, or a blit between depth and color).
    #[error("unsupported format {format:?}: {detail}")]
    UnsupportedFormat {
        /// The format.
        format: vk::Format,
        /// Why.
        detail: String,
    },
    /// A region lies outside a resource, is empty, or is otherwise invalid.
    #[error("invalid region: {0}")]
    InvalidRegion(String),
    /// An argument is invalid (size mismatch, missing usage flag, empty data...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A download was read before the graph holding its pass was executed.
    #[error("the download `{0}` has not been executed yet")]
    NotExecuted(String),
    /// A download was read before its GPU work completed: no stale data is ever returned.
    #[error("the GPU work has not completed yet")]
    NotReady,
    /// An object the GPU may still use was asked to change (e.g. rebinding a compute pass's
    /// descriptors while an execution that uses them is pending).
    #[error("`{0}` is still in use by a pending execution")]
    InUse(String),
    /// A swapchain frame slot was reused before the execution that last used it completed.
    #[error("frame slot {slot} is still in flight: wait for the fence of the frame that used it")]
    FrameInFlight {
        /// The frame-in-flight slot.
        slot: usize,
    },
    /// The [`Uploader`](crate::Uploader)'s staging ring has no room for an upload and may not
    /// grow past its maximum capacity: wait for earlier batches' executions (or drop their
    /// passes), raise the maximum, or split the upload.
    #[error("staging ring full: {requested} bytes requested, {in_use} of {capacity} bytes in use, at most {max_capacity} bytes allowed")]
    StagingFull {
        /// The bytes the upload needs.
        requested: u64,
        /// Bytes held by batches whose executions have not finished.
        in_use: u64,
        /// The ring's current total capacity.
        capacity: u64,
        /// The most the ring may grow to.
        max_capacity: u64,
    },
    /// A swapchain call was made in the wrong order (e.g. presenting an image not acquired).
    #[error("swapchain misuse: {0}")]
    Swapchain(String),
}

impl Error {
    /// Maps a failed Vulkan call.
    ///
    /// ```
    /// use vk_baton_passes::Error;
    /// use ash::vk;
    /// let e = Error::vk("vkCreatePipeline", vk::Result::ERROR_OUT_OF_HOST_MEMORY);
    /// assert!(matches!(e, Error::Vulkan { .. }));
    /// ```
    pub fn vk(call: &'static str, result: vk::Result) -> Self {
        match result {
            vk::Result::ERROR_DEVICE_LOST => Self::Core(vk_baton::Error::DeviceLost),
            result => Self::Vulkan { call, result },
        }
    }
}

impl From<gpu_allocator::AllocationError> for Error {
    fn from(e: gpu_allocator::AllocationError) -> Self {
        Self::Core(e.into())
    }
}

/// How a stock pass's error reaches [`vk_baton::Pass::record`]'s caller: core errors and
/// failed Vulkan calls as themselves, everything else whole as [`vk_baton::Error::Pass`], so
/// it can be downcast back.
///
/// ```
/// use vk_baton_passes::Error;
/// let core: vk_baton::Error = Error::InvalidRegion("row 9 of 8".into()).into();
/// let vk_baton::Error::Pass(source) = &core else { panic!("{core:?}") };
/// assert!(matches!(source.downcast_ref::<Error>(), Some(Error::InvalidRegion(_))));
/// ```
impl From<Error> for vk_baton::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Core(e) => e,
            Error::Vulkan { call, result } => vk_baton::Error::vk(call, result),
            other => vk_baton::Error::Pass(Box::new(other)),
        }
    }
}

/// `Result<T, vk_baton_passes::Error>`.
///
/// ```
/// use vk_baton_passes::{Error, Result};
/// fn check_data(data: &[u8]) -> Result<usize> {
///     if data.is_empty() {
///         return Err(Error::InvalidInput("empty data".into()));
///     }
///     Ok(data.len())
/// }
/// assert_eq!(check_data(&[1, 2, 3]).unwrap(), 3);
/// assert!(matches!(check_data(&[]), Err(Error::InvalidInput(_))));
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
