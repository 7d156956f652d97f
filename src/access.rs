//! The access vocabulary: named ways a pass touches a resource.
//!
//! Like vk-sync, each name maps through one table to sync2 stages, access flags and the image
//! layout the access expects. Passes pick names; the planner only ever sees [`Access`] values.
//!
//! ```
//! use vk_baton::access::{Access, AccessKind};
//! let a = Access::from(AccessKind::ComputeShaderWrite);
//! assert!(a.is_write());
//! assert_eq!(a.layout, ash::vk::ImageLayout::GENERAL);
//! ```

use ash::vk;

mod stages;
pub use stages::{capabilities_for, narrow_stages, supported_stages};

/// A named access. The table in [`AccessKind::info`] maps each to stages, access flags,
/// layout, the queue capability it needs and the usage flags the resource must have.
///
/// ```
/// use vk_baton::{ash::vk, AccessKind};
/// let info = AccessKind::TransferWrite.info();
/// assert_eq!(info.layout, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
/// assert!(info.image_usage.contains(vk::ImageUsageFlags::TRANSFER_DST));
/// assert!(info.queue.is_empty()); // any queue can copy
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// `vkCmdCopy*`/`vkCmdBlit*` source.
    TransferRead,
    /// `vkCmdCopy*`/`vkCmdBlit*`/`vkCmdClear*`/`vkCmdFill*` destination.
    TransferWrite,
    /// Storage image/buffer read in a compute shader.
    ComputeShaderRead,
    /// Storage image/buffer write in a compute shader.
    ComputeShaderWrite,
    /// Storage image/buffer read and written by one compute dispatch.
    ComputeShaderReadWrite,
    /// Sampled image or uniform texel read in a vertex shader.
    VertexShaderSampledRead,
    /// Sampled image read in a fragment shader.
    FragmentShaderSampledRead,
    /// Sampled image read in a compute shader.
    ComputeShaderSampledRead,
    /// Color attachment written (load op CLEAR/DONT_CARE).
    ColorAttachmentWrite,
    /// Color attachment read and written (blending, load op LOAD).
    ColorAttachmentReadWrite,
    /// Depth/stencil attachment tested but not written.
    DepthAttachmentRead,
    /// Depth/stencil attachment tested and written.
    DepthAttachmentWrite,
    /// Vertex buffer.
    VertexBuffer,
    /// Index buffer.
    IndexBuffer,
    /// Indirect draw/dispatch arguments (`DRAW_INDIRECT`: graphics and compute queues).
    IndirectBuffer,
    /// Uniform buffer read by the vertex, fragment and compute shaders; on a compute-only
    /// queue the planner narrows it to the compute shader, and refuses it on a transfer-only
    /// one ([`narrow_stages`]).
    UniformRead,
    /// The host reads a mapped buffer after the GPU wrote it: the pass's queue makes the
    /// writes available to the host (a barrier to `HOST`), and the host reads once the
    /// execution's fence signals. Takes no queue family ownership.
    HostRead,
    /// The host writes a mapped buffer (see [`AccessKind::HostRead`] for the ordering).
    HostWrite,
    /// Handed to the presentation engine. Stages are chosen by the planner to chain from the
    /// previous access into the semaphore signal.
    Present,
    /// Anything, in GENERAL layout. Conservative: prefer a precise name.
    General,
}

/// Everything the table says about one [`AccessKind`].
///
/// ```
/// use vk_baton::{ash::vk, AccessKind};
/// let i = AccessKind::ColorAttachmentWrite.info();
/// assert_eq!(i.stages, vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT);
/// assert_eq!(i.access, vk::AccessFlags2::COLOR_ATTACHMENT_WRITE);
/// assert_eq!(i.queue, vk::QueueFlags::GRAPHICS);
/// assert!(i.buffer_usage.is_empty()); // images only
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AccessInfo {
    /// Pipeline stages that perform the access.
    pub stages: vk::PipelineStageFlags2,
    /// Memory accesses performed.
    pub access: vk::AccessFlags2,
    /// The layout an image must be in.
    pub layout: vk::ImageLayout,
    /// The queue capability needed (empty: none named here; the planner still refuses an
    /// access none of whose stages the queue supports, see [`supported_stages`]).
    pub queue: vk::QueueFlags,
    /// Usage an image must have been created with (empty: none).
    pub image_usage: vk::ImageUsageFlags,
    /// Usage a buffer must have been created with (empty: none).
    pub buffer_usage: vk::BufferUsageFlags,
}

impl AccessKind {
    /// The row of the table for this name.
    pub const fn info(self) -> AccessInfo {
        use vk::AccessFlags2 as A;
        use vk::BufferUsageFlags as BU;
        use vk::ImageLayout as L;
        use vk::ImageUsageFlags as IU;
        use vk::PipelineStageFlags2 as S;
        use vk::QueueFlags as Q;
        const fn row(
            stages: S,
            access: A,
            layout: L,
            queue: Q,
            image_usage: IU,
            buffer_usage: BU,
        ) -> AccessInfo {
            AccessInfo {
                stages,
                access,
                layout,
                queue,
                image_usage,
                buffer_usage,
            }
        }
        let none_q = Q::empty();
        match self {
            Self::TransferRead => row(
                S::ALL_TRANSFER,
                A::TRANSFER_READ,
                L::TRANSFER_SRC_OPTIMAL,
                none_q,
                IU::TRANSFER_SRC,
                BU::TRANSFER_SRC,
            ),
            Self::TransferWrite => row(
                S::ALL_TRANSFER,
                A::TRANSFER_WRITE,
                L::TRANSFER_DST_OPTIMAL,
                none_q,
                IU::TRANSFER_DST,
                BU::TRANSFER_DST,
            ),
            Self::ComputeShaderRead => row(
                S::COMPUTE_SHADER,
                A::SHADER_STORAGE_READ,
                L::GENERAL,
                Q::COMPUTE,
                IU::STORAGE,
                BU::STORAGE_BUFFER,
            ),
            Self::ComputeShaderWrite => row(
                S::COMPUTE_SHADER,
                A::SHADER_STORAGE_WRITE,
                L::GENERAL,
                Q::COMPUTE,
                IU::STORAGE,
                BU::STORAGE_BUFFER,
            ),
            Self::ComputeShaderReadWrite => row(
                S::COMPUTE_SHADER,
                A::from_raw(A::SHADER_STORAGE_READ.as_raw() | A::SHADER_STORAGE_WRITE.as_raw()),
                L::GENERAL,
                Q::COMPUTE,
                IU::STORAGE,
                BU::STORAGE_BUFFER,
            ),
            Self::VertexShaderSampledRead => row(
                S::VERTEX_SHADER,
                A::SHADER_SAMPLED_READ,
                L::SHADER_READ_ONLY_OPTIMAL,
                Q::GRAPHICS,
                IU::SAMPLED,
                BU::UNIFORM_TEXEL_BUFFER,
            ),
            Self::FragmentShaderSampledRead => row(
                S::FRAGMENT_SHADER,
                A::SHADER_SAMPLED_READ,
                L::SHADER_READ_ONLY_OPTIMAL,
                Q::GRAPHICS,
                IU::SAMPLED,
                BU::UNIFORM_TEXEL_BUFFER,
            ),
            Self::ComputeShaderSampledRead => row(
                S::COMPUTE_SHADER,
                A::SHADER_SAMPLED_READ,
                L::SHADER_READ_ONLY_OPTIMAL,
                Q::COMPUTE,
                IU::SAMPLED,
                BU::UNIFORM_TEXEL_BUFFER,
            ),
            Self::ColorAttachmentWrite => row(
                S::COLOR_ATTACHMENT_OUTPUT,
                A::COLOR_ATTACHMENT_WRITE,
                L::COLOR_ATTACHMENT_OPTIMAL,
                Q::GRAPHICS,
                IU::COLOR_ATTACHMENT,
                BU::empty(),
            ),
            Self::ColorAttachmentReadWrite => row(
                S::COLOR_ATTACHMENT_OUTPUT,
                A::from_raw(A::COLOR_ATTACHMENT_READ.as_raw() | A::COLOR_ATTACHMENT_WRITE.as_raw()),
                L::COLOR_ATTACHMENT_OPTIMAL,
                Q::GRAPHICS,
                IU::COLOR_ATTACHMENT,
                BU::empty(),
            ),
            Self::DepthAttachmentRead => row(
                S::from_raw(S::EARLY_FRAGMENT_TESTS.as_raw() | S::LATE_FRAGMENT_TESTS.as_raw()),
                A::DEPTH_STENCIL_ATTACHMENT_READ,
                L::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
                Q::GRAPHICS,
                IU::DEPTH_STENCIL_ATTACHMENT,
                BU::empty(),
            ),
            Self::DepthAttachmentWrite => row(
                S::from_raw(S::EARLY_FRAGMENT_TESTS.as_raw() | S::LATE_FRAGMENT_TESTS.as_raw()),
                A::from_raw(
                    A::DEPTH_STENCIL_ATTACHMENT_READ.as_raw()
                        | A::DEPTH_STENCIL_ATTACHMENT_WRITE.as_raw(),
                ),
                L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
                Q::GRAPHICS,
                IU::DEPTH_STENCIL_ATTACHMENT,
                BU::empty(),
            ),
            Self::VertexBuffer => row(
                S::VERTEX_ATTRIBUTE_INPUT,
                A::VERTEX_ATTRIBUTE_READ,
                L::UNDEFINED,
                Q::GRAPHICS,
                IU::empty(),
                BU::VERTEX_BUFFER,
            ),
            Self::IndexBuffer => row(
                S::INDEX_INPUT,
                A::INDEX_READ,
                L::UNDEFINED,
                Q::GRAPHICS,
                IU::empty(),
                BU::INDEX_BUFFER,
            ),
            Self::IndirectBuffer => row(
                S::DRAW_INDIRECT,
                A::INDIRECT_COMMAND_READ,
                L::UNDEFINED,
                none_q,
                IU::empty(),
                BU::INDIRECT_BUFFER,
            ),
            Self::UniformRead => row(
                S::from_raw(
                    S::VERTEX_SHADER.as_raw()
                        | S::FRAGMENT_SHADER.as_raw()
                        | S::COMPUTE_SHADER.as_raw(),
                ),
                A::UNIFORM_READ,
                L::UNDEFINED,
                none_q,
                IU::empty(),
                BU::UNIFORM_BUFFER,
            ),
            Self::HostRead => row(
                S::HOST,
                A::HOST_READ,
                L::GENERAL,
                none_q,
                IU::empty(),
                BU::empty(),
            ),
            Self::HostWrite => row(
                S::HOST,
                A::HOST_WRITE,
                L::GENERAL,
                none_q,
                IU::empty(),
                BU::empty(),
            ),
            Self::Present => row(
                S::NONE,
                A::NONE,
                L::PRESENT_SRC_KHR,
                none_q,
                IU::empty(),
                BU::empty(),
            ),
            Self::General => row(
                S::from_raw(S::ALL_COMMANDS.as_raw()),
                A::from_raw(A::MEMORY_READ.as_raw() | A::MEMORY_WRITE.as_raw()),
                L::GENERAL,
                none_q,
                IU::empty(),
                BU::empty(),
            ),
        }
    }
}

/// Stages + access flags + the layout an image must be in: one access as the planner sees it.
///
/// Build one from a name (`Access::from(AccessKind::TransferWrite)`, or the constants such as
/// [`Access::TRANSFER_WRITE`]) or from raw flags with [`Access::raw`].
///
/// ```
/// use vk_baton::{ash::vk, Access, AccessKind};
/// assert_eq!(Access::from(AccessKind::TransferWrite), Access::TRANSFER_WRITE);
/// let blend = Access::COLOR_ATTACHMENT_READ_WRITE;
/// assert!(blend.is_write());
/// assert_eq!(blend.write_bits(), vk::AccessFlags2::COLOR_ATTACHMENT_WRITE);
/// assert_eq!(blend.layout, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Pipeline stages that perform the access.
    pub stages: vk::PipelineStageFlags2,
    /// Memory accesses performed.
    pub access: vk::AccessFlags2,
    /// The image layout the access needs (ignored for buffers).
    pub layout: vk::ImageLayout,
    /// Queue capabilities the access needs.
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
        | vk::AccessFlags2::COMMAND_PREPROCESS_WRITE_NV.as_raw(),
);

impl Access {
    /// Transfer source (`TRANSFER_SRC_OPTIMAL`).
    pub const TRANSFER_READ: Self = Self::named(AccessKind::TransferRead);
    /// Transfer destination (`TRANSFER_DST_OPTIMAL`).
    pub const TRANSFER_WRITE: Self = Self::named(AccessKind::TransferWrite);
    /// Storage read in a compute shader (`GENERAL`).
    pub const COMPUTE_SHADER_READ: Self = Self::named(AccessKind::ComputeShaderRead);
    /// Storage write in a compute shader (`GENERAL`).
    pub const COMPUTE_SHADER_WRITE: Self = Self::named(AccessKind::ComputeShaderWrite);
    /// Storage read and write in a compute shader (`GENERAL`).
    pub const COMPUTE_SHADER_READ_WRITE: Self = Self::named(AccessKind::ComputeShaderReadWrite);
    /// Sampled read in a vertex shader.
    pub const VERTEX_SHADER_SAMPLED_READ: Self = Self::named(AccessKind::VertexShaderSampledRead);
    /// Sampled read in a fragment shader.
    pub const FRAGMENT_SHADER_SAMPLED_READ: Self =
        Self::named(AccessKind::FragmentShaderSampledRead);
    /// Sampled read in a compute shader.
    pub const COMPUTE_SHADER_SAMPLED_READ: Self = Self::named(AccessKind::ComputeShaderSampledRead);
    /// Color attachment write.
    pub const COLOR_ATTACHMENT_WRITE: Self = Self::named(AccessKind::ColorAttachmentWrite);
    /// Color attachment read and write.
    pub const COLOR_ATTACHMENT_READ_WRITE: Self = Self::named(AccessKind::ColorAttachmentReadWrite);
    /// Depth attachment read-only.
    pub const DEPTH_ATTACHMENT_READ: Self = Self::named(AccessKind::DepthAttachmentRead);
    /// Depth attachment read and write.
    pub const DEPTH_ATTACHMENT_WRITE: Self = Self::named(AccessKind::DepthAttachmentWrite);
    /// Vertex buffer.
    pub const VERTEX_BUFFER: Self = Self::named(AccessKind::VertexBuffer);
    /// Index buffer.
    pub const INDEX_BUFFER: Self = Self::named(AccessKind::IndexBuffer);
    /// Indirect arguments.
    pub const INDIRECT_BUFFER: Self = Self::named(AccessKind::IndirectBuffer);
    /// Uniform buffer read.
    pub const UNIFORM_READ: Self = Self::named(AccessKind::UniformRead);
    /// Host read of a mapped buffer.
    pub const HOST_READ: Self = Self::named(AccessKind::HostRead);
    /// Host write of a mapped buffer.
    pub const HOST_WRITE: Self = Self::named(AccessKind::HostWrite);
    /// Presentation (`PRESENT_SRC_KHR`).
    pub const PRESENT: Self = Self::named(AccessKind::Present);
    /// Anything, `GENERAL` layout.
    pub const GENERAL: Self = Self::named(AccessKind::General);

    /// The access a name stands for.
    pub const fn named(kind: AccessKind) -> Self {
        let i = kind.info();
        Self {
            stages: i.stages,
            access: i.access,
            layout: i.layout,
            queue: i.queue,
            image_usage: i.image_usage,
            buffer_usage: i.buffer_usage,
        }
    }

    /// An access from raw sync2 flags, for whatever the table lacks. No queue capability or
    /// usage check is derived from raw flags.
    ///
    /// ```
    /// use ash::vk;
    /// use vk_baton::Access;
    /// let a = Access::raw(vk::PipelineStageFlags2::FRAGMENT_SHADER,
    ///                     vk::AccessFlags2::INPUT_ATTACHMENT_READ,
    ///                     vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
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
    pub const fn with_layout(mut self, layout: vk::ImageLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Whether the access writes memory.
    pub const fn is_write(&self) -> bool {
        self.access.as_raw() & WRITE_BITS.as_raw() != 0
    }

    /// Only the write bits of the access flags (what a later barrier must make available).
    pub const fn write_bits(&self) -> vk::AccessFlags2 {
        vk::AccessFlags2::from_raw(self.access.as_raw() & WRITE_BITS.as_raw())
    }
}

impl From<AccessKind> for Access {
    fn from(kind: AccessKind) -> Self {
        Self::named(kind)
    }
}

/// Only the write bits of `flags`.
pub const fn write_bits_of(flags: vk::AccessFlags2) -> vk::AccessFlags2 {
    vk::AccessFlags2::from_raw(flags.as_raw() & WRITE_BITS.as_raw())
}

/// Whether `flags` contain a write bit.
pub const fn is_write_flags(flags: vk::AccessFlags2) -> bool {
    flags.as_raw() & WRITE_BITS.as_raw() != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_are_classified() {
        assert!(Access::TRANSFER_WRITE.is_write());
        assert!(!Access::TRANSFER_READ.is_write());
        assert!(Access::COMPUTE_SHADER_READ_WRITE.is_write());
        assert!(!Access::FRAGMENT_SHADER_SAMPLED_READ.is_write());
        assert!(!Access::PRESENT.is_write());
        assert_eq!(
            Access::COLOR_ATTACHMENT_READ_WRITE.write_bits(),
            vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
        );
    }

    #[test]
    fn table_layouts() {
        assert_eq!(
            Access::TRANSFER_READ.layout,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL
        );
        assert_eq!(
            Access::FRAGMENT_SHADER_SAMPLED_READ.layout,
            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL
        );
        assert_eq!(Access::PRESENT.layout, vk::ImageLayout::PRESENT_SRC_KHR);
        assert_eq!(
            Access::COLOR_ATTACHMENT_WRITE.queue,
            vk::QueueFlags::GRAPHICS
        );
    }
}
