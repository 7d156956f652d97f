//! Rows for transfers, compute, vertex and fragment shaders, attachments, fixed-function
//! buffer reads, the host and present.

use super::*;

const SHADERS: S = st(&[S::VERTEX_SHADER, S::FRAGMENT_SHADER, S::COMPUTE_SHADER]);
const FRAGMENT_TESTS: S = st(&[S::EARLY_FRAGMENT_TESTS, S::LATE_FRAGMENT_TESTS]);

access_table! {
    enum Row;
    const ROWS;
    // --- Transfers --------------------------------------------------------------------------
    /// Any transfer command's source (copy, blit, resolve): `TRANSFER_SRC_OPTIMAL`. Prefer
    /// the precise [`Access::COPY_READ`] or [`Access::BLIT_READ`].
    ///
    /// - stages: `ALL_TRANSFER`
    /// - access: `TRANSFER_READ`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    TRANSFER_READ { stages: S::ALL_TRANSFER, access: A::TRANSFER_READ,
        layout: L::TRANSFER_SRC_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::TRANSFER_SRC, buffer_usage: BU::TRANSFER_SRC }
    /// Any transfer command's destination (copy, blit, clear, fill, update):
    /// `TRANSFER_DST_OPTIMAL`. `vkCmdFillBuffer` and `vkCmdUpdateBuffer` use this one.
    ///
    /// - stages: `ALL_TRANSFER`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    TRANSFER_WRITE { stages: S::ALL_TRANSFER, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::TRANSFER_DST, buffer_usage: BU::TRANSFER_DST }
    /// `vkCmdCopy*` source, at the COPY stage.
    ///
    /// - stages: `COPY`
    /// - access: `TRANSFER_READ`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    COPY_READ { stages: S::COPY, access: A::TRANSFER_READ,
        layout: L::TRANSFER_SRC_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::TRANSFER_SRC, buffer_usage: BU::TRANSFER_SRC }
    /// `vkCmdCopy*` destination, at the COPY stage.
    ///
    /// - stages: `COPY`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    COPY_WRITE { stages: S::COPY, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::TRANSFER_DST, buffer_usage: BU::TRANSFER_DST }
    /// The image of a copy from a depth/stencil image's aspect to a buffer: graphics queues
    /// only (`vkCmdCopyImageToBuffer`'s valid usage).
    ///
    /// - stages: `COPY`
    /// - access: `TRANSFER_READ`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    DEPTH_STENCIL_COPY_READ { stages: S::COPY, access: A::TRANSFER_READ,
        layout: L::TRANSFER_SRC_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_SRC, buffer_usage: NO_BUFFER }
    /// The image of a copy from a buffer to a depth/stencil image's aspect: graphics queues
    /// only (`vkCmdCopyBufferToImage`'s valid usage).
    ///
    /// - stages: `COPY`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    DEPTH_STENCIL_COPY_WRITE { stages: S::COPY, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_DST, buffer_usage: NO_BUFFER }
    /// `vkCmdBlitImage` source: graphics queues only.
    ///
    /// - stages: `BLIT`
    /// - access: `TRANSFER_READ`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    BLIT_READ { stages: S::BLIT, access: A::TRANSFER_READ,
        layout: L::TRANSFER_SRC_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_SRC, buffer_usage: NO_BUFFER }
    /// `vkCmdBlitImage` destination: graphics queues only.
    ///
    /// - stages: `BLIT`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    BLIT_WRITE { stages: S::BLIT, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_DST, buffer_usage: NO_BUFFER }
    /// Mip levels a pass blits into and then blits from, one after the other (mipmap
    /// generation): the pass moves each level from `TRANSFER_DST_OPTIMAL` to
    /// `TRANSFER_SRC_OPTIMAL` itself, and leaves them all in `TRANSFER_SRC_OPTIMAL`.
    ///
    /// - stages: `BLIT`
    /// - access: `TRANSFER_READ | TRANSFER_WRITE`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    MIP_CHAIN_BLIT_READ_WRITE { stages: S::BLIT, access: ac(&[A::TRANSFER_READ, A::TRANSFER_WRITE]),
        layout: L::TRANSFER_SRC_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: iu(&[IU::TRANSFER_SRC, IU::TRANSFER_DST]), buffer_usage: NO_BUFFER }
    /// `vkCmdResolveImage` source: graphics queues only.
    ///
    /// - stages: `RESOLVE`
    /// - access: `TRANSFER_READ`
    /// - layout: `TRANSFER_SRC_OPTIMAL`
    RESOLVE_READ { stages: S::RESOLVE, access: A::TRANSFER_READ,
        layout: L::TRANSFER_SRC_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_SRC, buffer_usage: NO_BUFFER }
    /// `vkCmdResolveImage` destination: graphics queues only.
    ///
    /// - stages: `RESOLVE`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    RESOLVE_WRITE { stages: S::RESOLVE, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_DST, buffer_usage: NO_BUFFER }
    /// `vkCmdClearColorImage`: graphics or compute queues.
    ///
    /// - stages: `CLEAR`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    CLEAR_COLOR_WRITE { stages: S::CLEAR, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: qf(&[Q::GRAPHICS, Q::COMPUTE]),
        image_usage: IU::TRANSFER_DST, buffer_usage: NO_BUFFER }
    /// `vkCmdClearDepthStencilImage`: graphics queues only.
    ///
    /// - stages: `CLEAR`
    /// - access: `TRANSFER_WRITE`
    /// - layout: `TRANSFER_DST_OPTIMAL`
    CLEAR_DEPTH_STENCIL_WRITE { stages: S::CLEAR, access: A::TRANSFER_WRITE,
        layout: L::TRANSFER_DST_OPTIMAL, queue: Q::GRAPHICS,
        image_usage: IU::TRANSFER_DST, buffer_usage: NO_BUFFER }

    // --- Compute shaders --------------------------------------------------------------------
    /// Storage image or buffer read in a compute shader (`GENERAL`).
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    COMPUTE_SHADER_READ { stages: S::COMPUTE_SHADER, access: A::SHADER_STORAGE_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer written in a compute shader (`GENERAL`).
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    COMPUTE_SHADER_WRITE { stages: S::COMPUTE_SHADER, access: A::SHADER_STORAGE_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer read and written by one compute dispatch (`GENERAL`).
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `SHADER_STORAGE_READ | SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    COMPUTE_SHADER_READ_WRITE { stages: S::COMPUTE_SHADER,
        access: ac(&[A::SHADER_STORAGE_READ, A::SHADER_STORAGE_WRITE]),
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Sampled image or uniform texel buffer read in a compute shader.
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    COMPUTE_SHADER_SAMPLED_READ { stages: S::COMPUTE_SHADER, access: A::SHADER_SAMPLED_READ,
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in a compute shader.
    ///
    /// - stages: `COMPUTE_SHADER`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    COMPUTE_SHADER_UNIFORM_READ { stages: S::COMPUTE_SHADER, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }

    // --- Vertex and fragment shaders --------------------------------------------------------
    /// Sampled image or uniform texel buffer read in a vertex shader.
    ///
    /// - stages: `VERTEX_SHADER`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    VERTEX_SHADER_SAMPLED_READ { stages: S::VERTEX_SHADER, access: A::SHADER_SAMPLED_READ,
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in a vertex shader.
    ///
    /// - stages: `VERTEX_SHADER`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    VERTEX_SHADER_UNIFORM_READ { stages: S::VERTEX_SHADER, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }
    /// Storage image or buffer read in a vertex shader (`GENERAL`).
    ///
    /// - stages: `VERTEX_SHADER`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    VERTEX_SHADER_STORAGE_READ { stages: S::VERTEX_SHADER, access: A::SHADER_STORAGE_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer written in a vertex shader (`GENERAL`; the device feature
    /// `vertexPipelineStoresAndAtomics`).
    ///
    /// - stages: `VERTEX_SHADER`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    VERTEX_SHADER_STORAGE_WRITE { stages: S::VERTEX_SHADER, access: A::SHADER_STORAGE_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Sampled image or uniform texel buffer read in a fragment shader.
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `SHADER_SAMPLED_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    FRAGMENT_SHADER_SAMPLED_READ { stages: S::FRAGMENT_SHADER, access: A::SHADER_SAMPLED_READ,
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::SAMPLED, buffer_usage: BU::UNIFORM_TEXEL_BUFFER }
    /// Uniform buffer read in a fragment shader.
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    FRAGMENT_SHADER_UNIFORM_READ { stages: S::FRAGMENT_SHADER, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }
    /// Storage image or buffer read in a fragment shader (`GENERAL`).
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `SHADER_STORAGE_READ`
    /// - layout: `GENERAL`
    FRAGMENT_SHADER_STORAGE_READ { stages: S::FRAGMENT_SHADER, access: A::SHADER_STORAGE_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer written in a fragment shader (`GENERAL`; the device feature
    /// `fragmentStoresAndAtomics`).
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    FRAGMENT_SHADER_STORAGE_WRITE { stages: S::FRAGMENT_SHADER, access: A::SHADER_STORAGE_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// Storage image or buffer read and written in a fragment shader (`GENERAL`), e.g.
    /// order-independent transparency lists.
    ///
    /// - stages: `FRAGMENT_SHADER`
    /// - access: `SHADER_STORAGE_READ | SHADER_STORAGE_WRITE`
    /// - layout: `GENERAL`
    FRAGMENT_SHADER_STORAGE_READ_WRITE { stages: S::FRAGMENT_SHADER,
        access: ac(&[A::SHADER_STORAGE_READ, A::SHADER_STORAGE_WRITE]),
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: IU::STORAGE, buffer_usage: BU::STORAGE_BUFFER }
    /// A color input attachment of a `VkRenderPass`, read in a fragment shader
    /// (`SHADER_READ_ONLY_OPTIMAL`), with its load op: the attachment is loaded (load op LOAD,
    /// a `COLOR_ATTACHMENT_READ` at `COLOR_ATTACHMENT_OUTPUT`) and not stored (store op
    /// `NONE`: STORE and DONT_CARE are writes). Dynamic rendering reads input attachments only
    /// with `VK_KHR_dynamic_rendering_local_read`, which vk-baton does not plan for: there,
    /// end the rendering and sample the image in the next pass instead.
    ///
    /// - stages: `FRAGMENT_SHADER | COLOR_ATTACHMENT_OUTPUT`
    /// - access: `INPUT_ATTACHMENT_READ | COLOR_ATTACHMENT_READ`
    /// - layout: `SHADER_READ_ONLY_OPTIMAL`
    FRAGMENT_SHADER_INPUT_ATTACHMENT_READ {
        stages: st(&[S::FRAGMENT_SHADER, S::COLOR_ATTACHMENT_OUTPUT]),
        access: ac(&[A::INPUT_ATTACHMENT_READ, A::COLOR_ATTACHMENT_READ]),
        layout: L::SHADER_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::INPUT_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// A depth/stencil input attachment of a `VkRenderPass`, read in a fragment shader
    /// (`DEPTH_STENCIL_READ_ONLY_OPTIMAL`), with its load op LOAD (a depth/stencil attachment
    /// read in the fragment tests) and store op `NONE`; see
    /// [`Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ`].
    ///
    /// - stages: `FRAGMENT_SHADER | EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS`
    /// - access: `INPUT_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_READ`
    /// - layout: `DEPTH_STENCIL_READ_ONLY_OPTIMAL`
    FRAGMENT_SHADER_DEPTH_INPUT_ATTACHMENT_READ { stages: st(&[S::FRAGMENT_SHADER, FRAGMENT_TESTS]),
        access: ac(&[A::INPUT_ATTACHMENT_READ, A::DEPTH_STENCIL_ATTACHMENT_READ]),
        layout: L::DEPTH_STENCIL_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::INPUT_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// Uniform buffer read by the vertex, fragment and compute shaders; on a compute-only
    /// queue the planner narrows it to the compute shader, and refuses it on a transfer-only
    /// one ([`narrow_stages`](crate::access::narrow_stages)). Prefer a per-stage row.
    ///
    /// - stages: `VERTEX_SHADER | FRAGMENT_SHADER | COMPUTE_SHADER`
    /// - access: `UNIFORM_READ`
    /// - layout: none (buffers only)
    UNIFORM_READ { stages: SHADERS, access: A::UNIFORM_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::UNIFORM_BUFFER }

    // --- Attachments ------------------------------------------------------------------------
    /// Color attachment written (load op CLEAR or DONT_CARE, store op STORE or DONT_CARE), or a
    /// multisample resolve target (resolves write at `COLOR_ATTACHMENT_OUTPUT`).
    ///
    /// - stages: `COLOR_ATTACHMENT_OUTPUT`
    /// - access: `COLOR_ATTACHMENT_WRITE`
    /// - layout: `COLOR_ATTACHMENT_OPTIMAL`
    COLOR_ATTACHMENT_WRITE { stages: S::COLOR_ATTACHMENT_OUTPUT, access: A::COLOR_ATTACHMENT_WRITE,
        layout: L::COLOR_ATTACHMENT_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::COLOR_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// Color attachment read and written (load op LOAD, or blending).
    ///
    /// - stages: `COLOR_ATTACHMENT_OUTPUT`
    /// - access: `COLOR_ATTACHMENT_READ | COLOR_ATTACHMENT_WRITE`
    /// - layout: `COLOR_ATTACHMENT_OPTIMAL`
    COLOR_ATTACHMENT_READ_WRITE { stages: S::COLOR_ATTACHMENT_OUTPUT,
        access: ac(&[A::COLOR_ATTACHMENT_READ, A::COLOR_ATTACHMENT_WRITE]),
        layout: L::COLOR_ATTACHMENT_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::COLOR_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// Depth/stencil attachment tested but not written (`DEPTH_STENCIL_READ_ONLY_OPTIMAL`):
    /// load op LOAD and store op `NONE` (store ops STORE and DONT_CARE are writes).
    ///
    /// - stages: `EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS`
    /// - access: `DEPTH_STENCIL_ATTACHMENT_READ`
    /// - layout: `DEPTH_STENCIL_READ_ONLY_OPTIMAL`
    DEPTH_ATTACHMENT_READ { stages: FRAGMENT_TESTS, access: A::DEPTH_STENCIL_ATTACHMENT_READ,
        layout: L::DEPTH_STENCIL_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::DEPTH_STENCIL_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// Depth/stencil attachment tested and written (`DEPTH_STENCIL_ATTACHMENT_OPTIMAL`), with
    /// any load and store op.
    ///
    /// - stages: `EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS`
    /// - access: `DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE`
    /// - layout: `DEPTH_STENCIL_ATTACHMENT_OPTIMAL`
    DEPTH_ATTACHMENT_WRITE { stages: FRAGMENT_TESTS,
        access: ac(&[A::DEPTH_STENCIL_ATTACHMENT_READ, A::DEPTH_STENCIL_ATTACHMENT_WRITE]),
        layout: L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL, queue: ANY_QUEUE,
        image_usage: IU::DEPTH_STENCIL_ATTACHMENT, buffer_usage: NO_BUFFER }
    /// Depth/stencil tested read-only and sampled by the fragment shader in the same pass
    /// (`DEPTH_STENCIL_READ_ONLY_OPTIMAL`): soft particles, decals.
    ///
    /// - stages: `FRAGMENT_SHADER | EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS`
    /// - access: `DEPTH_STENCIL_ATTACHMENT_READ | SHADER_SAMPLED_READ`
    /// - layout: `DEPTH_STENCIL_READ_ONLY_OPTIMAL`
    DEPTH_READ_ONLY_SAMPLED { stages: st(&[FRAGMENT_TESTS, S::FRAGMENT_SHADER]),
        access: ac(&[A::DEPTH_STENCIL_ATTACHMENT_READ, A::SHADER_SAMPLED_READ]),
        layout: L::DEPTH_STENCIL_READ_ONLY_OPTIMAL, queue: ANY_QUEUE,
        image_usage: iu(&[IU::DEPTH_STENCIL_ATTACHMENT, IU::SAMPLED]), buffer_usage: NO_BUFFER }

    // --- Fixed-function buffer reads --------------------------------------------------------
    /// Vertex buffer.
    ///
    /// - stages: `VERTEX_ATTRIBUTE_INPUT`
    /// - access: `VERTEX_ATTRIBUTE_READ`
    /// - layout: none (buffers only)
    VERTEX_BUFFER { stages: S::VERTEX_ATTRIBUTE_INPUT, access: A::VERTEX_ATTRIBUTE_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::VERTEX_BUFFER }
    /// Index buffer.
    ///
    /// - stages: `INDEX_INPUT`
    /// - access: `INDEX_READ`
    /// - layout: none (buffers only)
    INDEX_BUFFER { stages: S::INDEX_INPUT, access: A::INDEX_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::INDEX_BUFFER }
    /// Indirect draw or dispatch arguments (`DRAW_INDIRECT`: graphics and compute queues).
    ///
    /// - stages: `DRAW_INDIRECT`
    /// - access: `INDIRECT_COMMAND_READ`
    /// - layout: none (buffers only)
    INDIRECT_BUFFER { stages: S::DRAW_INDIRECT, access: A::INDIRECT_COMMAND_READ,
        layout: L::UNDEFINED, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: BU::INDIRECT_BUFFER }

    // --- Outside the queue ------------------------------------------------------------------
    /// The host reads a mapped buffer after the GPU wrote it: the pass's queue makes the
    /// writes available to the host (a barrier to `HOST`), and the host reads once the
    /// execution's fence signals. Takes no queue family ownership. The last use of the
    /// resource in its graph: a later pass that uses it is refused (it would run before the
    /// host access); use it again in the next graph.
    ///
    /// - stages: `HOST`
    /// - access: `HOST_READ`
    /// - layout: `GENERAL`
    HOST_READ { stages: S::HOST, access: A::HOST_READ,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: NO_BUFFER }
    /// The host writes a mapped buffer (see [`Access::HOST_READ`] for the ordering); likewise
    /// the last use of the resource in its graph.
    ///
    /// - stages: `HOST`
    /// - access: `HOST_WRITE`
    /// - layout: `GENERAL`
    HOST_WRITE { stages: S::HOST, access: A::HOST_WRITE,
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: NO_BUFFER }
    /// Handed to the presentation engine (`PRESENT_SRC_KHR`; images only). Stages are chosen
    /// by the planner to chain from the previous access into the semaphore signal. The last
    /// use of the image in its graph: it is the presentation engine's until acquired again.
    ///
    /// - stages: ``
    /// - access: ``
    /// - layout: `PRESENT_SRC_KHR`
    PRESENT { stages: S::NONE, access: A::NONE,
        layout: L::PRESENT_SRC_KHR, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: NO_BUFFER }
    /// Anything, in `GENERAL` layout. Conservative: prefer a precise name.
    ///
    /// - stages: `ALL_COMMANDS`
    /// - access: `MEMORY_READ | MEMORY_WRITE`
    /// - layout: `GENERAL`
    GENERAL { stages: S::ALL_COMMANDS, access: ac(&[A::MEMORY_READ, A::MEMORY_WRITE]),
        layout: L::GENERAL, queue: ANY_QUEUE,
        image_usage: NO_IMAGE, buffer_usage: NO_BUFFER }
}
