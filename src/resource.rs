//! State-tracked images and buffers: [`StImage`] and [`StBuffer`], used as `Arc`s.
//!
//! Each holds its handle, its description and its tracked state: per cell (image: `mip *
//! array_layers + layer`; buffer: byte), the layout, whether the contents are defined, the
//! owning queue family, and the last write plus the reads since, each as a queue and timeline
//! value. Graphs read that state when they plan and write it back when they execute.
//!
//! ```no_run
//! # fn f(device: &ash::Device, alloc: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
//! use std::sync::Arc;
//! use vk_baton::{ash::vk, ImageDesc, StImage};
//! let desc = ImageDesc::storage_2d(256, 256, vk::Format::R8G8B8A8_UNORM).mips(4);
//! let img = Arc::new(StImage::new(device, alloc, desc, "mandelbrot")?);
//! assert_eq!(img.state().layout(), Some(vk::ImageLayout::UNDEFINED));
//! # Ok(()) }
//! ```

use ash::vk;
use parking_lot::Mutex;
use std::sync::Arc;

mod buffer;
mod declare_access;
mod desc;
mod handle;
mod host;
mod image;
mod memory;
mod staleness;
mod state;
mod transient;

pub use buffer::StBuffer;
pub use desc::{BufferDesc, Destroy, ImageDesc, ResourceState, Sharing};
pub use host::{HostMapping, HostMemory};
pub use image::StImage;
pub use memory::SharedAllocator;
pub use state::StateSnapshot;
pub(crate) use state::Tracked;
#[cfg(feature = "transients")]
pub(crate) use transient::{create_buffer, create_image, create_view, name_object};

/// An image or a buffer, for code that handles both.
///
/// ```no_run
/// # fn f(img: std::sync::Arc<vk_baton::StImage>) {
/// let r = vk_baton::Resource::Image(img);
/// println!("{}", r.name());
/// # }
/// ```
#[derive(Clone, Debug)]
pub enum Resource {
    /// An image.
    Image(Arc<StImage>),
    /// A buffer.
    Buffer(Arc<StBuffer>),
}

impl Resource {
    /// The resource's unique id.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let id = r.id();
    /// # }
    /// ```
    pub fn id(&self) -> u64 {
        match self {
            Resource::Image(i) => i.id(),
            Resource::Buffer(b) => b.id(),
        }
    }

    /// Number of state-tracking cells: mip levels × array layers, or bytes.
    pub(crate) fn cells(&self) -> u64 {
        match self {
            Resource::Image(i) => i.desc().cells(),
            Resource::Buffer(b) => b.size(),
        }
    }

    /// The debug name.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// println!("{}", r.name());
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        match self {
            Resource::Image(i) => i.name(),
            Resource::Buffer(b) => b.name(),
        }
    }

    /// The `VkDevice` it belongs to.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let d = r.device_handle();
    /// # }
    /// ```
    pub fn device_handle(&self) -> vk::Device {
        match self {
            Resource::Image(i) => i.device_handle(),
            Resource::Buffer(b) => b.device_handle(),
        }
    }

    /// A copy of the tracked state.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Resource) {
    /// let s = r.state();
    /// # }
    /// ```
    pub fn state(&self) -> StateSnapshot {
        self.tracked().lock().snapshot()
    }

    pub(crate) fn tracked(&self) -> &Mutex<Tracked> {
        match self {
            Resource::Image(i) => i.tracked(),
            Resource::Buffer(b) => b.tracked(),
        }
    }
}
