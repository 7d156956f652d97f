//! The access vocabulary: named ways a pass touches a resource.
//!
//! Like vk-sync, every name is one row of one table, [`ACCESS_TABLE`]: the sync2 stages and
//! access flags, the image layout, the queue capability the command needs and the usage flags
//! the resource must have. Each row is also an [`Access`] constant of the same name, which is
//! what passes declare and what the planner sees.
//!
//! ```
//! use vk_baton::{access::ACCESS_TABLE, ash::vk, Access};
//! // A fragment shader sampling an image: SHADER_READ_ONLY_OPTIMAL, image usage SAMPLED.
//! let a = Access::FRAGMENT_SHADER_SAMPLED_READ;
//! assert!(!a.is_write());
//! assert_eq!(a.layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
//! // Graphics stages: only a graphics queue runs it (the stage rule, `supported_stages`).
//! assert!(a.runs_on(vk::QueueFlags::GRAPHICS) && !a.runs_on(vk::QueueFlags::COMPUTE));
//! // The constant is a row of the table, found by its name.
//! assert_eq!(a.name(), Some("FRAGMENT_SHADER_SAMPLED_READ"));
//! assert!(ACCESS_TABLE.iter().any(|row| row.access() == a));
//! ```
//!
//! Whatever the table lacks, build with [`Access::raw`].

use ash::vk;

mod features;
mod layouts;
mod stages;
mod table;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_features;

pub use features::DeviceFeatures;
pub use layouts::LayoutPolicy;
pub use stages::{capabilities_for, narrow_stages, supported_stages};
pub use table::{AccessRow, ACCESS_TABLE};

/// Stages + access flags + the layout an image must be in: one access as the planner sees it.
///
/// Take one from the table (the constants such as [`Access::TRANSFER_WRITE`], or
/// [`AccessRow::access`]) or build one from raw flags with [`Access::raw`].
///
/// ```
/// use vk_baton::{ash::vk, Access};
/// let blend = Access::COLOR_ATTACHMENT_READ_WRITE;
/// assert!(blend.is_write());
/// assert_eq!(blend.write_bits(), vk::AccessFlags2::COLOR_ATTACHMENT_WRITE);
/// assert_eq!(blend.layout, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
/// assert_eq!(blend.queue_capabilities(), vk::QueueFlags::GRAPHICS);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Pipeline stages that perform the access.
    pub stages: vk::PipelineStageFlags2,
    /// Memory accesses performed.
    pub access: vk::AccessFlags2,
    /// The image layout the access needs (ignored for buffers).
    pub layout: vk::ImageLayout,
    /// What the command needs of the queue beyond its stages: any one of these capabilities
    /// (empty: the stages decide, see [`Access::runs_on`]). A blit's stage runs on transfer
    /// queues, but `vkCmdBlitImage` needs a graphics queue: [`Access::BLIT_READ`] says so here.
    pub queue: vk::QueueFlags,
    /// Image usage the access needs.
    pub image_usage: vk::ImageUsageFlags,
    /// Buffer usage the access needs.
    pub buffer_usage: vk::BufferUsageFlags,
}

/// Access flag bits that write memory.
const WRITE_BITS: vk::AccessFlags2 = vk::AccessFlags2::from_raw(
    vk::AccessFlags2::SHADER_WRITE.as_raw()
        | vk::AccessFlags2::SHADER_STORAGE_WRITE.as_raw()
        | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE.as_raw()
        | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw()
        | vk::AccessFlags2::TRANSFER_WRITE.as_raw()
        | vk::AccessFlags2::HOST_WRITE.as_raw()
        | vk::AccessFlags2::MEMORY_WRITE.as_raw()
        | vk::AccessFlags2::ACCELERATION_STRUCTURE_WRITE_KHR.as_raw()
        | vk::AccessFlags2::TRANSFORM_FEEDBACK_WRITE_EXT.as_raw()
        | vk::AccessFlags2::TRANSFORM_FEEDBACK_COUNTER_WRITE_EXT.as_raw()
        | vk::AccessFlags2::COMMAND_PREPROCESS_WRITE_NV.as_raw()
        | vk::AccessFlags2::VIDEO_DECODE_WRITE_KHR.as_raw()
        | vk::AccessFlags2::VIDEO_ENCODE_WRITE_KHR.as_raw()
        | vk::AccessFlags2::MICROMAP_WRITE_EXT.as_raw()
        | vk::AccessFlags2::OPTICAL_FLOW_WRITE_NV.as_raw(),
);

impl Access {
    /// An access from raw sync2 flags, for whatever the table lacks. No queue capability or
    /// usage check is derived from raw flags (the planner still applies the stage rule).
    ///
    /// ```
    /// use ash::vk;
    /// use vk_baton::Access;
    /// // A mesh shader reading a storage buffer.
    /// let a = Access::raw(vk::PipelineStageFlags2::MESH_SHADER_EXT,
    ///                     vk::AccessFlags2::SHADER_STORAGE_READ,
    ///                     vk::ImageLayout::UNDEFINED);
    /// assert!(!a.is_write());
    /// ```
    pub const fn raw(
        stages: vk::PipelineStageFlags2,
        access: vk::AccessFlags2,
        layout: vk::ImageLayout,
    ) -> Self {
        Self {
            stages,
            access,
            layout,
            queue: vk::QueueFlags::empty(),
            image_usage: vk::ImageUsageFlags::empty(),
            buffer_usage: vk::BufferUsageFlags::empty(),
        }
    }

    /// The same access with a different expected image layout.
    ///
    /// ```
    /// use vk_baton::{ash::vk, Access};
    /// let a = Access::COMPUTE_SHADER_SAMPLED_READ.with_layout(vk::ImageLayout::GENERAL);
    /// assert_eq!(a.stages, vk::PipelineStageFlags2::COMPUTE_SHADER);
    /// ```
    pub const fn with_layout(mut self, layout: vk::ImageLayout) -> Self {
        self.layout = layout;
        self
    }

    /// The layout this access takes on `aspect` alone: a use narrowed to DEPTH or STENCIL of
    /// a depth/stencil image (`Use::aspect`, `UseDecl::aspect`) moves that aspect to its own
    /// layout, `DEPTH_STENCIL_ATTACHMENT_OPTIMAL` becoming `DEPTH_ATTACHMENT_OPTIMAL` or
    /// `STENCIL_ATTACHMENT_OPTIMAL`, and `DEPTH_STENCIL_READ_ONLY_OPTIMAL` becoming
    /// `DEPTH_READ_ONLY_OPTIMAL` or `STENCIL_READ_ONLY_OPTIMAL`. Any other layout, and any
    /// other aspect mask (both aspects, COLOR), is [`Access::layout`](Self::layout) unchanged.
    ///
    /// A pass that records `vkCmdBeginRendering` names these layouts in its attachments. A
    /// decal pass tests depth without writing it and writes stencil:
    ///
    /// ```
    /// use vk_baton::{ash::vk, Access};
    /// use vk::ImageAspectFlags as A;
    /// let (depth, stencil) = (Access::DEPTH_ATTACHMENT_READ, Access::DEPTH_ATTACHMENT_WRITE);
    /// let view = vk::ImageView::null(); // a view of both aspects of the D24_UNORM_S8_UINT image
    /// let depth_attachment = vk::RenderingAttachmentInfo::default()
    ///     .image_view(view)
    ///     .image_layout(depth.layout_in(A::DEPTH))
    ///     .load_op(vk::AttachmentLoadOp::LOAD)
    ///     .store_op(vk::AttachmentStoreOp::NONE);
    /// let stencil_attachment = vk::RenderingAttachmentInfo::default()
    ///     .image_view(view)
    ///     .image_layout(stencil.layout_in(A::STENCIL))
    ///     .load_op(vk::AttachmentLoadOp::CLEAR)
    ///     .store_op(vk::AttachmentStoreOp::STORE);
    /// assert_eq!(depth_attachment.image_layout, vk::ImageLayout::DEPTH_READ_ONLY_OPTIMAL);
    /// assert_eq!(stencil_attachment.image_layout, vk::ImageLayout::STENCIL_ATTACHMENT_OPTIMAL);
    /// // Both aspects together keep the combined layout.
    /// assert_eq!(stencil.layout_in(A::DEPTH | A::STENCIL), vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
    /// ```
    pub const fn layout_in(&self, aspect: vk::ImageAspectFlags) -> vk::ImageLayout {
        use vk::ImageLayout as L;
        let depth = aspect.as_raw() == vk::ImageAspectFlags::DEPTH.as_raw();
        let stencil = aspect.as_raw() == vk::ImageAspectFlags::STENCIL.as_raw();
        match self.layout {
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL if depth => L::DEPTH_ATTACHMENT_OPTIMAL,
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL if stencil => L::STENCIL_ATTACHMENT_OPTIMAL,
            L::DEPTH_STENCIL_READ_ONLY_OPTIMAL if depth => L::DEPTH_READ_ONLY_OPTIMAL,
            L::DEPTH_STENCIL_READ_ONLY_OPTIMAL if stencil => L::STENCIL_READ_ONLY_OPTIMAL,
            other => other,
        }
    }

    /// The name of the table row this access is, if it is one.
    ///
    /// ```
    /// use vk_baton::{ash::vk, Access};
    /// assert_eq!(Access::BLIT_WRITE.name(), Some("BLIT_WRITE"));
    /// assert_eq!(Access::BLIT_WRITE.with_layout(vk::ImageLayout::GENERAL).name(), None);
    /// ```
    pub fn name(&self) -> Option<&'static str> {
        ACCESS_TABLE
            .iter()
            .find(|row| row.access() == *self)
            .map(|row| row.name)
    }

    /// Whether a queue with capabilities `caps` can perform the access: the command's own
    /// requirement ([`Access::queue`]) and at least one of its stages ([`supported_stages`]).
    /// The planner refuses a use on a queue where this is false.
    ///
    /// ```
    /// use vk_baton::{ash::vk::QueueFlags as Q, Access};
    /// assert!(Access::COPY_WRITE.runs_on(Q::TRANSFER));
    /// assert!(!Access::BLIT_WRITE.runs_on(Q::TRANSFER)); // vkCmdBlitImage: graphics only
    /// assert!(Access::CLEAR_COLOR_WRITE.runs_on(Q::COMPUTE));
    /// // A uniform read by vertex, fragment or compute shaders: a compute queue has one.
    /// assert!(Access::UNIFORM_READ.runs_on(Q::COMPUTE));
    /// ```
    pub const fn runs_on(&self, caps: vk::QueueFlags) -> bool {
        (self.queue.is_empty() || caps.intersects(self.queue))
            && (self.stages.is_empty() || !narrow_stages(self.stages, caps).is_empty())
    }

    /// The queue capabilities of which any one lets a queue perform the access (empty: every
    /// queue can): the command's requirement narrowed by its stages'.
    ///
    /// ```
    /// use vk_baton::{ash::vk::QueueFlags as Q, Access};
    /// assert_eq!(Access::COPY_READ.queue_capabilities(), Q::GRAPHICS | Q::COMPUTE | Q::TRANSFER);
    /// assert_eq!(Access::CLEAR_COLOR_WRITE.queue_capabilities(), Q::GRAPHICS | Q::COMPUTE);
    /// assert_eq!(Access::COMPUTE_SHADER_WRITE.queue_capabilities(), Q::COMPUTE);
    /// assert_eq!(Access::HOST_READ.queue_capabilities(), Q::empty());
    /// ```
    pub const fn queue_capabilities(&self) -> vk::QueueFlags {
        let by_stages = capabilities_for(self.stages);
        if self.queue.is_empty() {
            by_stages
        } else if by_stages.is_empty() {
            self.queue
        } else {
            vk::QueueFlags::from_raw(self.queue.as_raw() & by_stages.as_raw())
        }
    }

    /// Whether the access writes memory.
    ///
    /// ```
    /// use vk_baton::Access;
    /// assert!(Access::TRANSFER_WRITE.is_write() && !Access::TRANSFER_READ.is_write());
    /// ```
    pub const fn is_write(&self) -> bool {
        is_write_flags(self.access)
    }

    /// Only the write bits of the access flags (what a later barrier must make available).
    ///
    /// ```
    /// use vk_baton::{ash::vk, Access};
    /// let rw = Access::COMPUTE_SHADER_READ_WRITE;
    /// assert_eq!(rw.write_bits(), vk::AccessFlags2::SHADER_STORAGE_WRITE);
    /// ```
    pub const fn write_bits(&self) -> vk::AccessFlags2 {
        write_bits_of(self.access)
    }
}

/// Only the write bits of `flags`.
///
/// ```
/// use vk_baton::{access::write_bits_of, ash::vk::AccessFlags2 as A};
/// assert_eq!(write_bits_of(A::TRANSFER_READ | A::TRANSFER_WRITE), A::TRANSFER_WRITE);
/// ```
pub const fn write_bits_of(flags: vk::AccessFlags2) -> vk::AccessFlags2 {
    vk::AccessFlags2::from_raw(flags.as_raw() & WRITE_BITS.as_raw())
}

/// Whether `flags` contain a write bit.
///
/// ```
/// use vk_baton::{access::is_write_flags, ash::vk::AccessFlags2 as A};
/// assert!(is_write_flags(A::MEMORY_WRITE) && !is_write_flags(A::SHADER_SAMPLED_READ));
/// ```
pub const fn is_write_flags(flags: vk::AccessFlags2) -> bool {
    flags.as_raw() & WRITE_BITS.as_raw() != 0
}
