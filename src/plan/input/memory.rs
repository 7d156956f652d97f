//! What a transient resource declares: the memory it needs.

/// The memory a transient resource needs, as `vkGetImageMemoryRequirements` or
/// `vkGetBufferMemoryRequirements` report it, and how it may sit next to other resources.
///
/// ```
/// use vk_baton::plan::TransientMemory;
/// // A 1080p RGBA16F render target: optimal tiling.
/// let hdr = TransientMemory::image(1920 * 1080 * 8, 65536, 0b0110);
/// assert!(!hdr.linear);
/// // A storage buffer: linear, next to optimal images only 1 KiB pages apart.
/// let tiles = TransientMemory::buffer(4096, 256, 0b0111).with_granularity(1024);
/// assert!(tiles.linear && tiles.buffer_image_granularity == 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransientMemory {
    /// `VkMemoryRequirements::size`.
    pub size: u64,
    /// `VkMemoryRequirements::alignment` (a power of two).
    pub alignment: u64,
    /// `VkMemoryRequirements::memoryTypeBits`: the memory types it may be bound to.
    pub memory_type_bits: u32,
    /// A buffer or a linear-tiling image (`true`), or an optimal-tiling image (`false`). A
    /// linear and an optimal resource closer than
    /// [`buffer_image_granularity`](Self::buffer_image_granularity) alias.
    pub linear: bool,
    /// The device's `VkPhysicalDeviceLimits::bufferImageGranularity` (a power of two; 1 when
    /// linear and optimal resources never share memory). The planner uses the largest given.
    pub buffer_image_granularity: u64,
}

impl TransientMemory {
    /// An optimal-tiling image's requirements (granularity 1: see
    /// [`with_granularity`](Self::with_granularity)).
    pub fn image(size: u64, alignment: u64, memory_type_bits: u32) -> Self {
        Self {
            size,
            alignment,
            memory_type_bits,
            linear: false,
            buffer_image_granularity: 1,
        }
    }

    /// A buffer's requirements (linear; granularity 1: see
    /// [`with_granularity`](Self::with_granularity)).
    pub fn buffer(size: u64, alignment: u64, memory_type_bits: u32) -> Self {
        Self {
            linear: true,
            ..Self::image(size, alignment, memory_type_bits)
        }
    }

    /// The same requirements on a device whose `bufferImageGranularity` is `granularity`.
    pub fn with_granularity(mut self, granularity: u64) -> Self {
        self.buffer_image_granularity = granularity;
        self
    }
}
