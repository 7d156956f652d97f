//! [`UseDecl`]: one declared use of a resource by a pass, and the layouts an app's own
//! `VkRenderPass` moves an attachment through ([`RenderPassLayouts`]).

#[cfg(doc)]
use super::PlanInput;
use super::{ResourceKind, Unordered};
use crate::access::Access;
use crate::range::SubRange;
use ash::vk;

/// One declared use of a resource by a pass.
///
/// ```
/// use vk_baton::{plan::UseDecl, Access, BufferRange, SubRange};
/// let u = UseDecl::new(2, Access::TRANSFER_WRITE)
///     .range(SubRange::Buffer(BufferRange { offset: 64, size: 64 }))
///     .discard();
/// assert_eq!(u.resource, 2);
/// assert!(u.access.is_write() && u.discard);
/// assert_eq!(u.range, Some(SubRange::Buffer(BufferRange { offset: 64, size: 64 })));
/// assert!(u.aspect.is_empty()); // every aspect (buffers have none)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UseDecl {
    /// Index into [`PlanInput::resources`].
    pub resource: usize,
    /// How the pass touches it.
    pub access: Access,
    /// Which part; `None` is the whole resource.
    pub range: Option<SubRange>,
    /// Which aspects of an image; empty is every aspect of its format. Only DEPTH or STENCIL
    /// of a format with both narrows anything (see [`UseDecl::aspect`]); buffers take none.
    pub aspect: vk::ImageAspectFlags,
    /// The pass overwrites every byte of the range without reading it: old contents are not
    /// needed, so there is no ownership transfer and images transition from UNDEFINED.
    pub discard: bool,
    /// `Some`: an attachment of the app's own `VkRenderPass`, which moves the image from its
    /// `initialLayout` to the subpass's layout (`access.layout`) and on to its `finalLayout`
    /// itself ([`UseDecl::render_pass`]).
    pub render_pass: Option<RenderPassLayouts>,
    /// `Some`: a write that needs no barrier between it and the unordered writes of the same
    /// kind just before it ([`UseDecl::unordered`]).
    pub unordered: Option<Unordered>,
}

/// The layouts a `VkRenderPass` moves one attachment through on its own: the
/// `VkAttachmentDescription`'s `initialLayout` and `finalLayout`. The layout of the subpass
/// that uses it is the use's [`Access::layout`].
///
/// ```
/// use vk_baton::{ash::vk, plan::{RenderPassLayouts, UseDecl}, Access};
/// let drawn = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).render_pass(RenderPassLayouts {
///     initial_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
///     final_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
/// });
/// assert_eq!(drawn.layout_before(), vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
/// assert_eq!(drawn.layout_after(), vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
/// // A read-only depth attachment the render pass moves on to another layout: a transition,
/// // so a write as far as hazards go.
/// let depth = UseDecl::new(1, Access::DEPTH_ATTACHMENT_READ).render_pass(RenderPassLayouts {
///     initial_layout: vk::ImageLayout::DEPTH_STENCIL_READ_ONLY_OPTIMAL,
///     final_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
/// });
/// assert!(!depth.access.is_write() && depth.writes());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderPassLayouts {
    /// `initialLayout`: the layout the graph leaves the image in before the pass. UNDEFINED
    /// (the render pass takes the image in any layout and discards its contents) makes the use
    /// a discard: the graph moves the image from UNDEFINED to the subpass's layout.
    pub initial_layout: vk::ImageLayout,
    /// `finalLayout`: the layout the render pass leaves the image in, which the graph tracks
    /// from then on.
    pub final_layout: vk::ImageLayout,
}

impl UseDecl {
    /// A use of the whole resource.
    pub fn new(resource: usize, access: Access) -> Self {
        Self {
            resource,
            access,
            range: None,
            aspect: vk::ImageAspectFlags::empty(),
            discard: false,
            render_pass: None,
            unordered: None,
        }
    }

    /// The same use, a write that needs no ordering against the unordered writes of the same
    /// kind just before it: see [`Unordered`] for the groups this makes and what is checked.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// // Two passes draw into the left and right halves of one atlas, then one pass samples it.
    /// let half = |x| Unordered::Disjoint(Region::texels([x, 0, 0], [512, 1024, 1]));
    /// let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    ///     resources: vec![ResourceDecl::image("atlas", 1, 1, usage)],
    ///     passes: vec![
    ///         PassDecl::new("left", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).unordered(half(0))),
    ///         PassDecl::new("right", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE).unordered(half(512))),
    ///         PassDecl::new("sample", 0).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    ///     ],
    /// };
    /// let plan = plan(&input).unwrap();
    /// // `left` moves the atlas to GENERAL; `right` follows with no barrier of its own.
    /// let commands = &plan.queues[0].batches[0].commands;
    /// let [Command::Barrier(_), Command::Pass(0), Command::Pass(1), Command::Barrier(_), Command::Pass(2)] = &commands[..] else { panic!("{plan}") };
    /// // Halves that overlap are refused.
    /// let mut wrong = input.clone();
    /// wrong.passes[1].uses[0].unordered = Some(half(256));
    /// assert!(matches!(vk_baton::plan::plan(&wrong), Err(vk_baton::Error::UnorderedWriteOverlap { .. })));
    /// ```
    pub fn unordered(mut self, unordered: Unordered) -> Self {
        self.unordered = Some(unordered);
        self
    }

    /// The same use, by an attachment of the app's own `VkRenderPass` with these
    /// `initialLayout` and `finalLayout` (see [`RenderPassLayouts`]).
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///     resources: vec![ResourceDecl::image("target", 1, 1, usage)],
    ///     passes: vec![
    ///         PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE)
    ///             .discard()
    ///             .render_pass(RenderPassLayouts {
    ///                 initial_layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
    ///                 final_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
    ///             })),
    ///         PassDecl::new("sample", 0).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    ///     ],
    /// };
    /// let plan = plan(&input).unwrap();
    /// // The render pass left it in SHADER_READ_ONLY_OPTIMAL: the barrier before `sample` only
    /// // orders, it does not transition again.
    /// let Command::Barrier(b) = &plan.queues[0].batches[0].commands[2] else { panic!("{plan}") };
    /// assert_eq!(b.images[0].old_layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    /// assert_eq!(b.images[0].new_layout, vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL);
    /// ```
    pub fn render_pass(mut self, layouts: RenderPassLayouts) -> Self {
        self.render_pass = Some(layouts);
        self
    }

    /// The layout the graph moves an image to before the pass: the render pass's
    /// `initialLayout` if it names one, else the access's layout.
    pub fn layout_before(&self) -> vk::ImageLayout {
        match self.render_pass {
            Some(rp) if rp.initial_layout != vk::ImageLayout::UNDEFINED => rp.initial_layout,
            _ => self.access.layout,
        }
    }

    /// The layout an image is in after the pass: the render pass's `finalLayout`, else the
    /// access's layout.
    pub fn layout_after(&self) -> vk::ImageLayout {
        self.render_pass
            .map_or(self.access.layout, |rp| rp.final_layout)
    }

    /// Whether the pass does not need the old contents: [`UseDecl::discard`], or a render
    /// pass whose `initialLayout` is UNDEFINED.
    pub fn discards(&self) -> bool {
        self.discard
            || self
                .render_pass
                .is_some_and(|rp| rp.initial_layout == vk::ImageLayout::UNDEFINED)
    }

    /// Whether the use writes as far as hazards go: its access writes, or its render pass
    /// changes the image's layout (a layout transition is a write).
    pub fn writes(&self) -> bool {
        self.access.is_write() || self.render_pass_transitions()
    }

    /// Whether the use's render pass moves the image through more than one layout: from
    /// `initialLayout` to the subpass's layout, or from there to `finalLayout`.
    pub fn render_pass_transitions(&self) -> bool {
        self.render_pass.is_some_and(|rp| {
            rp.initial_layout != self.access.layout || self.access.layout != rp.final_layout
        })
    }
    /// The same use, limited to `range`.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access, BufferRange, SubRange};
    /// // One queue: `fill` writes a 256-byte buffer, `read` reads its first 64 bytes.
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER)],
    ///     passes: vec![
    ///         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ)
    ///             .range(SubRange::Buffer(BufferRange { offset: 0, size: 64 }))),
    ///     ],
    /// };
    /// let plan = plan(&input).unwrap();
    /// // One batch: `fill`, one barrier command, `read`.
    /// let commands = &plan.queues[0].batches[0].commands;
    /// let [Command::Pass(0), Command::Barrier(b), Command::Pass(1)] = &commands[..] else { panic!("{plan}") };
    /// // The barrier covers only the bytes `read` reads, and makes the transfer write available
    /// // and visible to the compute shader.
    /// assert!(b.images.is_empty());
    /// assert_eq!(b.buffers.len(), 1);
    /// assert_eq!(b.buffers[0].resource, 0);
    /// assert_eq!(b.buffers[0].range, BufferRange { offset: 0, size: 64 });
    /// assert_eq!(b.buffers[0].scopes, Scopes {
    ///     src_stages: vk::PipelineStageFlags2::ALL_TRANSFER,
    ///     src_access: vk::AccessFlags2::TRANSFER_WRITE,
    ///     dst_stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
    ///     dst_access: vk::AccessFlags2::SHADER_STORAGE_READ,
    ///     families: None,
    /// });
    /// ```
    pub fn range(mut self, range: SubRange) -> Self {
        self.range = Some(range);
        self
    }
    /// The same use, promising to overwrite the whole range.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let first_old_layout = |u: UseDecl| {
    ///     let state = SegmentState::handed_over(vk::ImageLayout::GENERAL, Some(0), None);
    ///     let input = PlanInput {
    ///         queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///         resources: vec![ResourceDecl::image("target", 1, 1, vk::ImageUsageFlags::COLOR_ATTACHMENT).with_state(state)],
    ///         passes: vec![PassDecl::new("draw", 0).with_use(u)],
    ///     };
    ///     let plan = plan(&input).unwrap();
    ///     let Command::Barrier(b) = &plan.queues[0].batches[0].commands[0] else { unreachable!() };
    ///     b.images[0].old_layout
    /// };
    /// let write = UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE);
    /// // Old contents kept: a GENERAL -> COLOR_ATTACHMENT_OPTIMAL transition.
    /// assert_eq!(first_old_layout(write), vk::ImageLayout::GENERAL);
    /// // Discarded: the transition starts from UNDEFINED.
    /// assert_eq!(first_old_layout(write.discard()), vk::ImageLayout::UNDEFINED);
    /// ```
    pub fn discard(mut self) -> Self {
        self.discard = true;
        self
    }

    /// The same use, limited to `aspect` of an image: DEPTH or STENCIL of a format with both
    /// is tracked apart from the other, with its own layout ([`Access::layout_in`]) and last
    /// accesses. A decal pass tests depth read-only while it writes stencil.
    ///
    /// An aspect the format lacks, or any aspect on a buffer, is refused
    /// ([`Error::InvalidInput`](crate::Error::InvalidInput)). A barrier on one aspect of a
    /// two-aspect image needs the device's `separateDepthStencilLayouts` feature (Vulkan 1.2,
    /// which `vk_baton_context::Context` enables where supported).
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// use vk::ImageAspectFlags as A;
    /// let ds = ResourceDecl::image("depth", 1, 1, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
    ///     .aspect(A::DEPTH | A::STENCIL);
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS)],
    ///     resources: vec![ds],
    ///     passes: vec![
    ///         PassDecl::new("prepass", 0).with_use(UseDecl::new(0, Access::DEPTH_ATTACHMENT_WRITE).discard()),
    ///         PassDecl::new("decals", 0)
    ///             .with_use(UseDecl::new(0, Access::DEPTH_ATTACHMENT_READ).aspect(A::DEPTH))
    ///             .with_use(UseDecl::new(0, Access::DEPTH_ATTACHMENT_WRITE).aspect(A::STENCIL)),
    ///     ],
    /// };
    /// let planned = plan(&input).unwrap();
    /// let Command::Barrier(b) = &planned.queues[0].batches[0].commands[2] else { panic!("{planned}") };
    /// // Depth becomes read-only; stencil stays writable, each in its own layout.
    /// let layouts: Vec<_> = b.images.iter().map(|i| (i.aspect, i.new_layout)).collect();
    /// assert_eq!(layouts, [
    ///     (A::DEPTH, vk::ImageLayout::DEPTH_READ_ONLY_OPTIMAL),
    ///     (A::STENCIL, vk::ImageLayout::STENCIL_ATTACHMENT_OPTIMAL),
    /// ]);
    /// // Narrowing to an aspect the image lacks is refused.
    /// let mut color = input.clone();
    /// color.resources[0] = ResourceDecl::image("c", 1, 1, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT);
    /// assert!(matches!(plan(&color), Err(vk_baton::Error::InvalidInput(_))));
    /// ```
    pub fn aspect(mut self, aspect: vk::ImageAspectFlags) -> Self {
        self.aspect = aspect;
        self
    }

    /// The same use, its access in the layout it takes on a resource of `kind`: the access's,
    /// or, narrowed to one plane of a depth/stencil image, that aspect's own
    /// ([`Access::layout_in`]).
    pub(crate) fn on_plane(&self, kind: &ResourceKind) -> UseDecl {
        match kind.grid().and_then(|g| g.narrowed(self.aspect)) {
            Some(a) => {
                // A render pass's layouts name the aspect's own layout too (the defaults are
                // the access's combined layout).
                let on = |l: vk::ImageLayout| self.access.with_layout(l).layout_in(a);
                UseDecl {
                    access: self.access.with_layout(self.access.layout_in(a)),
                    render_pass: self.render_pass.map(|rp| RenderPassLayouts {
                        initial_layout: on(rp.initial_layout),
                        final_layout: on(rp.final_layout),
                    }),
                    ..*self
                }
            }
            None => *self,
        }
    }
}
