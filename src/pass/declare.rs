//! [`Declare`]: what a pass tells the graph it touches, one use at a time.

use super::decls::{pack_use, FrameDecls, PackedUse, UseWords, WaitDecl};
use super::ResourceIndex;
use crate::access::{Access, LayoutPolicy};
use crate::plan::{BinarySignalDecl, RenderPassLayouts, Unordered};
use crate::range::{BufferRange, ImageRange, SubRange};
use crate::resource::{Resource, StBuffer, StImage};
use ash::vk;
use std::marker::PhantomData;
use std::sync::Arc;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::UseDecl;
    use crate::Context;

    /// `Use::layout` on an attachment of an app's render pass pins the subpass's layout, and
    /// the initial and final layouts the pass did not name, in either order of the calls.
    #[test]
    fn a_pinned_layout_fills_the_render_pass_layouts_not_named() {
        use crate::ImageDesc;
        use ash::vk::ImageLayout as L;
        let ctx = Context::new_for_tests().expect("a Vulkan device (lavapipe in CI)");
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
        let desc = ImageDesc::new_2d(4, 4, vk::Format::R8G8B8A8_UNORM, usage);
        let img = ctx.image(desc, "target").unwrap();
        let declare = |f: &dyn Fn(&mut Declare<'_>)| -> UseDecl {
            let mut decls = FrameDecls::default();
            let mut index = ResourceIndex::default();
            index.start(Vec::new());
            f(&mut Declare {
                decls: &mut decls,
                index: &mut index,
                layouts: LayoutPolicy::General,
            });
            index.finish();
            decls.end_pass(0);
            let view = decls.pass(0);
            let uses: Vec<UseDecl> = view.use_decls().collect();
            uses.into_iter().next_back().expect("one use")
        };
        let a = Access::COLOR_ATTACHMENT_WRITE;
        let rp = |initial_layout, final_layout| {
            Some(RenderPassLayouts {
                initial_layout,
                final_layout,
            })
        };
        let after = declare(&|d| {
            (d.uses(&img, a).final_layout(L::SHADER_READ_ONLY_OPTIMAL))
                .layout(L::COLOR_ATTACHMENT_OPTIMAL);
        });
        let before = declare(&|d| {
            (d.uses(&img, a).layout(L::COLOR_ATTACHMENT_OPTIMAL))
                .final_layout(L::SHADER_READ_ONLY_OPTIMAL);
        });
        for u in [after, before] {
            assert_eq!(u.access.layout, L::COLOR_ATTACHMENT_OPTIMAL);
            let want = rp(L::COLOR_ATTACHMENT_OPTIMAL, L::SHADER_READ_ONLY_OPTIMAL);
            assert_eq!(u.render_pass, want);
        }
        // An initial layout the pass named stays.
        let named = declare(&|d| {
            (d.uses(&img, a).initial_layout(L::GENERAL)).layout(L::COLOR_ATTACHMENT_OPTIMAL);
        });
        let want = rp(L::GENERAL, L::COLOR_ATTACHMENT_OPTIMAL);
        assert_eq!(named.render_pass, want);
        // Not pinned, the use takes the graph's policy.
        let unpinned = declare(&|d| {
            d.uses(&img, a);
        });
        assert_eq!(unpinned.access.layout, L::GENERAL);
    }
}

/// Collects a pass's declarations; handed to [`Pass::declare`](super::Pass::declare).
///
/// Every use is one call to [`Declare::uses`]: the resource, the access, then optionally
/// [`Use::range`] (part of it), [`Use::aspect`] (depth or stencil alone) and [`Use::discard`]
/// (its old contents are not needed).
///
/// ```no_run
/// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>, buf: &std::sync::Arc<vk_baton::StBuffer>) {
/// use vk_baton::{Access, BufferRange, ImageRange};
/// d.uses(buf, Access::COPY_READ);                                   // the whole buffer
/// d.uses(img, Access::COPY_WRITE).range(ImageRange::mip(1, 1)).discard(); // mip 1, overwritten
/// d.uses(buf, Access::HOST_READ).range(BufferRange { offset: 0, size: 64 });
/// # }
/// ```
pub struct Declare<'a> {
    /// The frame's declarations, which this pass's are appended to.
    pub(crate) decls: &'a mut FrameDecls,
    pub(crate) index: &'a mut ResourceIndex,
    /// The graph's layout policy, applied to every use as it is declared.
    pub(crate) layouts: LayoutPolicy,
}

/// A resource a pass can declare a use of: an image (`&Arc<StImage>`, ranges are
/// [`ImageRange`]s), a buffer (`&Arc<StBuffer>`, ranges are [`BufferRange`]s), or either
/// ([`Resource`], ranges are [`SubRange`]s, checked when the graph plans).
///
/// ```compile_fail
/// # fn f(d: &mut vk_baton::Declare<'_>, buf: &std::sync::Arc<vk_baton::StBuffer>) {
/// use vk_baton::{Access, ImageRange};
/// // A buffer takes a byte range, not mip levels: this does not compile.
/// d.uses(buf, Access::COPY_READ).range(ImageRange::mip(0, 1));
/// # }
/// ```
pub trait UseTarget: sealed::Sealed {
    /// The kind of range that selects part of the resource.
    type Range;
}

mod sealed {
    use super::*;

    /// How a [`UseTarget`] becomes a declared use (private: only this crate's resources).
    pub trait Sealed {
        fn id(&self) -> u64;
        fn resource(&self) -> Resource;
        fn sub_range(range: <Self as UseTarget>::Range) -> SubRange
        where
            Self: UseTarget;
    }

    impl Sealed for Arc<StImage> {
        fn id(&self) -> u64 {
            StImage::id(self)
        }
        fn resource(&self) -> Resource {
            Resource::Image(self.clone())
        }
        fn sub_range(range: ImageRange) -> SubRange {
            SubRange::Image(range)
        }
    }

    impl Sealed for Arc<StBuffer> {
        fn id(&self) -> u64 {
            StBuffer::id(self)
        }
        fn resource(&self) -> Resource {
            Resource::Buffer(self.clone())
        }
        fn sub_range(range: BufferRange) -> SubRange {
            SubRange::Buffer(range)
        }
    }

    impl Sealed for Resource {
        fn id(&self) -> u64 {
            Resource::id(self)
        }
        fn resource(&self) -> Resource {
            self.clone()
        }
        fn sub_range(range: SubRange) -> SubRange {
            range
        }
    }
}

impl UseTarget for Arc<StImage> {
    type Range = ImageRange;
}

impl UseTarget for Arc<StBuffer> {
    type Range = BufferRange;
}

impl UseTarget for Resource {
    type Range = SubRange;
}

/// The use [`Declare::uses`] just declared, to narrow it: [`Use::range`], [`Use::aspect`],
/// [`Use::discard`].
/// The use is declared already; dropping this changes nothing.
///
/// ```no_run
/// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
/// use vk_baton::{Access, ImageRange};
/// d.uses(img, Access::BLIT_READ).range(ImageRange::mip(0, 1));
/// # }
/// ```
pub struct Use<'d, T: UseTarget + ?Sized> {
    /// The frame's declarations, whose last use this is.
    decls: &'d mut FrameDecls,
    /// Which of the render pass's `initialLayout` and `finalLayout` the pass named; the other
    /// is the subpass's layout, which [`Use::layout`] may still change.
    named: RenderPassNamed,
    target: PhantomData<fn(&T)>,
}

/// Whether [`Use::initial_layout`] and [`Use::final_layout`] were called on a use.
#[derive(Clone, Copy, Default)]
struct RenderPassNamed {
    initial: bool,
    last: bool,
}

impl<T: UseTarget + ?Sized> Use<'_, T> {
    /// The use this is: the frame's last.
    fn last(&mut self) -> &mut PackedUse {
        self.decls.uses.last_mut().expect("a use was declared")
    }

    /// Only this part of the resource (mip levels and layers of an image, bytes of a
    /// buffer); without it, the use covers the whole resource.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, b: &std::sync::Arc<vk_baton::StBuffer>) {
    /// use vk_baton::{Access, BufferRange};
    /// d.uses(b, Access::COMPUTE_SHADER_UNIFORM_READ).range(BufferRange { offset: 256, size: 64 });
    /// # }
    /// ```
    pub fn range(self, range: T::Range) -> Self {
        self.decls.last_extras().range = Some(T::sub_range(range));
        self
    }

    /// Only `aspect` of an image (DEPTH or STENCIL of a depth/stencil format); without it,
    /// the use covers every aspect. The two aspects of a format with both are tracked apart,
    /// each with its own layout and last accesses, so one pass may test depth read-only while
    /// it writes stencil (decals, stencil-masked lighting): two uses, one per aspect. A use
    /// on one aspect takes that aspect's layout ([`Access::layout_in`]), which the pass names
    /// in its `VkRenderingAttachmentInfo`.
    ///
    /// A barrier on one aspect of an image with both needs the device feature
    /// `separateDepthStencilLayouts` (Vulkan 1.2; `vk_baton_context::Context` enables it
    /// where supported). An aspect the format lacks, or one on a buffer, fails the graph's
    /// `finish()` with [`Error::InvalidInput`](crate::Error::InvalidInput).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, ds: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{ash::vk, Access};
    /// // Depth tested, not written; stencil written where a decal lands.
    /// d.uses(ds, Access::DEPTH_ATTACHMENT_READ).aspect(vk::ImageAspectFlags::DEPTH);
    /// d.uses(ds, Access::DEPTH_ATTACHMENT_WRITE).aspect(vk::ImageAspectFlags::STENCIL);
    /// # }
    /// ```
    pub fn aspect(mut self, aspect: vk::ImageAspectFlags) -> Self {
        self.last().set_aspect(aspect);
        self
    }

    /// Promises that the pass overwrites all of the used part without reading it: its old
    /// contents are not needed (no ownership transfer; an image moves from `UNDEFINED`).
    /// A discard on an access that only reads (a read-only depth test, a sampled read) is
    /// refused at `finish()` with [`Error::InvalidInput`](crate::Error::InvalidInput).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// d.uses(img, vk_baton::Access::COLOR_ATTACHMENT_WRITE).discard();
    /// # }
    /// ```
    pub fn discard(mut self) -> Self {
        self.last().set_discard();
        self
    }

    /// Declares a write that needs no barrier between it and the unordered writes of the same
    /// kind just before it: tiles of one image written by separate passes
    /// ([`Unordered::Disjoint`]), or counters that several passes add to with atomics
    /// ([`Unordered::Atomic`]). The group is still ordered against every other use. See
    /// [`Unordered`] for the rules and what is checked.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, atlas: &std::sync::Arc<vk_baton::StImage>, bins: &std::sync::Arc<vk_baton::StBuffer>) {
    /// use vk_baton::{plan::{Region, Unordered}, Access};
    /// // This pass writes the top-left 256 x 256 tile only.
    /// let tile = Region::texels([0, 0, 0], [256, 256, 1]);
    /// d.uses(atlas, Access::COMPUTE_SHADER_WRITE).unordered(Unordered::Disjoint(tile));
    /// // And adds to the histogram with atomicAdd.
    /// d.uses(bins, Access::COMPUTE_SHADER_READ_WRITE).unordered(Unordered::Atomic);
    /// # }
    /// ```
    pub fn unordered(self, unordered: Unordered) -> Self {
        self.decls.last_extras().unordered = Some(unordered);
        self
    }
}

impl Use<'_, Arc<StImage>> {
    /// The use is in `layout`, whatever the graph's [`LayoutPolicy`]: for a pass whose
    /// descriptors were written before the frame, naming a layout the graph cannot change.
    /// For an attachment of the app's own `VkRenderPass` it is the subpass's layout, and the
    /// render pass's initial or final layout where [`Use::initial_layout`] or
    /// [`Use::final_layout`] does not name another.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{ash::vk::ImageLayout as L, Access};
    /// // The descriptor set, written once, says SHADER_READ_ONLY_OPTIMAL.
    /// d.uses(img, Access::FRAGMENT_SHADER_SAMPLED_READ).layout(L::SHADER_READ_ONLY_OPTIMAL);
    /// # }
    /// ```
    pub fn layout(mut self, layout: vk::ImageLayout) -> Self {
        self.last().set_layout(layout);
        let rp = self
            .decls
            .last_extras_if_any()
            .and_then(|e| e.render_pass.as_mut());
        if let Some(rp) = rp {
            if !self.named.initial {
                rp.initial_layout = layout;
            }
            if !self.named.last {
                rp.final_layout = layout;
            }
        }
        self
    }

    /// The image is an attachment of the app's own `VkRenderPass`, whose
    /// `VkAttachmentDescription::initialLayout` is `layout`: the graph leaves the image in
    /// `layout` before the pass (from UNDEFINED, if the use [discards](Use::discard)), and the
    /// render pass moves it on to the subpass's layout (the access's under the graph's
    /// [`LayoutPolicy`]: make the render pass with [`LayoutPolicy::layout`]) itself. An
    /// `initialLayout` of UNDEFINED (any layout, contents discarded) makes the use a discard.
    /// Without [`Use::final_layout`], the render pass leaves the image in the subpass's layout.
    /// The access must say what the attachment's ops do: a store op STORE or DONT_CARE writes,
    /// so a read-only attachment has store op NONE.
    ///
    /// Give the render pass the dependencies of [`crate::render_pass::external_dependencies`]
    /// so that its own transitions chain with the graph's barriers.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, color: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{ash::vk::ImageLayout as L, Access};
    /// // initialLayout UNDEFINED, load op CLEAR, finalLayout SHADER_READ_ONLY_OPTIMAL.
    /// d.uses(color, Access::COLOR_ATTACHMENT_WRITE)
    ///     .initial_layout(L::UNDEFINED)
    ///     .final_layout(L::SHADER_READ_ONLY_OPTIMAL);
    /// # }
    /// ```
    pub fn initial_layout(mut self, layout: vk::ImageLayout) -> Self {
        self.named.initial = true;
        self.render_pass_layouts().initial_layout = layout;
        self
    }

    /// The image is an attachment of the app's own `VkRenderPass`, whose
    /// `VkAttachmentDescription::finalLayout` is `layout`: after the pass the graph tracks the
    /// image in `layout`, and does not transition it again. Where the render pass changes the
    /// layout, the use counts as a write (a layout transition is one) even if its access only
    /// reads. Without [`Use::initial_layout`], the render pass's `initialLayout` is the
    /// subpass's layout (the access's).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, target: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{ash::vk::ImageLayout as L, Access};
    /// // initialLayout COLOR_ATTACHMENT_OPTIMAL, finalLayout PRESENT_SRC_KHR.
    /// d.uses(target, Access::COLOR_ATTACHMENT_WRITE).final_layout(L::PRESENT_SRC_KHR);
    /// # }
    /// ```
    pub fn final_layout(mut self, layout: vk::ImageLayout) -> Self {
        self.named.last = true;
        self.render_pass_layouts().final_layout = layout;
        self
    }

    /// The use's render-pass layouts, both the subpass's layout (the access's) until set.
    fn render_pass_layouts(&mut self) -> &mut RenderPassLayouts {
        let subpass = self.last().layout();
        (self.decls.last_extras().render_pass).get_or_insert(RenderPassLayouts {
            initial_layout: subpass,
            final_layout: subpass,
        })
    }
}

impl Declare<'_> {
    /// Declares that the pass uses `resource` with `access`: the whole resource, its contents
    /// kept, unless [`Use::range`] or [`Use::discard`] follow. An image use is in the layout
    /// the graph's [`LayoutPolicy`] gives `access`, which the pass records with
    /// ([`Recorder::layout`](crate::Recorder::layout)).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, src: &std::sync::Arc<vk_baton::StBuffer>, dst: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::Access;
    /// d.uses(src, Access::COPY_READ);
    /// d.uses(dst, Access::COPY_WRITE).discard();
    /// # }
    /// ```
    // Always inlined: with the access a constant of the pass's code, packing the use folds
    // into a few stores.
    #[inline(always)]
    pub fn uses<T: UseTarget + ?Sized>(&mut self, resource: &T, access: Access) -> Use<'_, T> {
        let index = self.index.index_of(sealed::Sealed::id(resource), || {
            sealed::Sealed::resource(resource)
        });
        let use_ = pack_use(index, self.layouts.apply(access));
        self.decls.uses.push(use_);
        Use {
            decls: self.decls,
            named: RenderPassNamed::default(),
            target: PhantomData,
        }
    }

    /// Waits on a binary semaphore before the pass (e.g. swapchain acquire). `guards` is the
    /// image whose contents the semaphore makes ready (the acquired swapchain image): its state
    /// becomes "undefined, ready after this wait", and the wait's stage mask becomes the
    /// stages of its first use.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, acquired: ash::vk::Semaphore, sc: &std::sync::Arc<vk_baton::StImage>) {
    /// // SAFETY: `acquired` was passed to the vkAcquireNextImageKHR that returned `sc`.
    /// unsafe { d.wait_binary(acquired, Some(sc)) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device that stays alive until the execution completes, and by
    /// the time the graph executes, a signal of it has been submitted (or an acquire will
    /// signal it) that no other wait consumes. `guards`, if any, is the image that signal
    /// makes ready.
    pub unsafe fn wait_binary(
        &mut self,
        semaphore: vk::Semaphore,
        guards: Option<&Arc<StImage>>,
    ) -> &mut Self {
        if let Some(g) = guards {
            let index = self.index.index_of(g.id(), || Resource::Image(g.clone()));
            self.decls.guards.push(index);
        }
        let wait = WaitDecl::new(semaphore, None, self.decls.guards.len());
        self.decls.waits.push(wait);
        self
    }

    /// Waits on a binary semaphore with an explicit stage mask (an external producer); a mask
    /// with `HOST` is refused at `finish()` (Vulkan forbids it on a semaphore).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, sem: ash::vk::Semaphore) {
    /// // SAFETY: the app submitted work that signals `sem` before executing the graph.
    /// unsafe { d.wait_binary_at(sem, ash::vk::PipelineStageFlags2::COMPUTE_SHADER) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`Declare::wait_binary`].
    pub unsafe fn wait_binary_at(
        &mut self,
        semaphore: vk::Semaphore,
        stages: vk::PipelineStageFlags2,
    ) -> &mut Self {
        let wait = WaitDecl::new(semaphore, Some(stages), self.decls.guards.len());
        self.decls.waits.push(wait);
        self
    }

    /// Signals a binary semaphore after the pass (e.g. for present). The signal's stage mask
    /// covers the pass's own uses.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, render_done: ash::vk::Semaphore) {
    /// // SAFETY: `render_done` is unsignalled; the present that waits on it comes later.
    /// unsafe { d.signal_binary(render_done) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device that stays alive until the execution completes, and
    /// when the graph executes it is unsignalled with no signal pending (every earlier signal
    /// has been waited on).
    pub unsafe fn signal_binary(&mut self, semaphore: vk::Semaphore) -> &mut Self {
        let stages = None;
        self.decls
            .signals
            .push(BinarySignalDecl { semaphore, stages });
        self
    }

    /// Signals a binary semaphore after the pass with an explicit stage mask; a mask with
    /// `HOST` is refused at `finish()` (Vulkan forbids it on a semaphore).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, sem: ash::vk::Semaphore) {
    /// // SAFETY: `sem` is unsignalled, and waited on after the graph.
    /// unsafe { d.signal_binary_at(sem, ash::vk::PipelineStageFlags2::ALL_COMMANDS) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`Declare::signal_binary`].
    pub unsafe fn signal_binary_at(
        &mut self,
        semaphore: vk::Semaphore,
        stages: vk::PipelineStageFlags2,
    ) -> &mut Self {
        let stages = Some(stages);
        self.decls
            .signals
            .push(BinarySignalDecl { semaphore, stages });
        self
    }
}
