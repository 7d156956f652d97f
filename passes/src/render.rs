//! [`Render`]: draws with dynamic rendering into color and depth targets described by their
//! load and store ops.
//!
//! The pass begins and ends `vkCmdBeginRendering` from the [`ColorTarget`]s and the
//! [`DepthTarget`], sets the viewport and scissor to the render area, and calls the app's draw
//! code in between. It declares exactly what the ops imply:
//!
//! | target | declared access | old contents |
//! | --- | --- | --- |
//! | color, load op CLEAR or DONT_CARE | [`Access::COLOR_ATTACHMENT_WRITE`] | discarded when the render area covers the texels |
//! | color, load op LOAD, or blended into | [`Access::COLOR_ATTACHMENT_READ_WRITE`] | kept |
//! | resolve target | [`Access::COLOR_ATTACHMENT_WRITE`] (resolves write at `COLOR_ATTACHMENT_OUTPUT`) | discarded when the render area covers it |
//! | depth/stencil, tested and written | [`Access::DEPTH_ATTACHMENT_WRITE`] | discarded for CLEAR or DONT_CARE over the whole area |
//! | depth/stencil, read-only | [`Access::DEPTH_ATTACHMENT_READ`], load op LOAD, store op NONE | kept |
//! | depth and stencil with their own ops ([`DepthTarget::stencil`]) that make them different uses | one use per aspect, each as above, narrowed with `.aspect(DEPTH)` / `.aspect(STENCIL)` | each aspect as above |
//!
//! Each attachment's `imageLayout` in `VkRenderingAttachmentInfo` is the layout the graph
//! planned the declared access in: the access's own ([`Access::layout`]), or, for uses of one
//! aspect, that aspect's own ([`Access::layout_in`]: `DEPTH_READ_ONLY_OPTIMAL` in
//! `pDepthAttachment`, `STENCIL_ATTACHMENT_OPTIMAL` in `pStencilAttachment`, ...), or
//! `GENERAL` in a graph under [`LayoutPolicy::General`](vk_baton::access::LayoutPolicy). The
//! graph has put the image there before the pass records.
//! The buffers and textures the draw code reads are declared with [`Render::reads`]. An app that
//! records its own `vkCmdBeginRendering` does the same: declare each attachment with the row
//! above, and use the layout [`Recorder::layout`] gives that row.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, graph: &vk_baton::Graph, color: std::sync::Arc<vk_baton::StImage>,
//! #      depth: std::sync::Arc<vk_baton::StImage>, vertices: std::sync::Arc<vk_baton::StBuffer>,
//! #      pipeline: ash::vk::Pipeline) -> vk_baton_passes::Result<()> {
//! use vk_baton::{ash::vk, Access};
//! use vk_baton_passes::render::{ColorTarget, DepthTarget, Render};
//! let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: 640, height: 480 } };
//! let vb = vertices.handle();
//! let mut scene = Render::new(ctx.device(), area,
//!     vec![ColorTarget::clear(color, [0.0, 0.0, 0.0, 1.0])],
//!     Some(DepthTarget::clear(depth, 1.0)),
//!     move |r| {
//!         // SAFETY: a pipeline made for these targets' formats (`RenderFormats::of`).
//!         unsafe {
//!             r.device().cmd_bind_pipeline(r.cmd(), vk::PipelineBindPoint::GRAPHICS, pipeline);
//!             r.device().cmd_bind_vertex_buffers(r.cmd(), 0, &[vb], &[0]);
//!             r.device().cmd_draw(r.cmd(), 3, 1, 0, 0);
//!         }
//!         Ok(())
//!     })?
//!     .reads(&vertices, Access::VERTEX_BUFFER);
//! graph.record().insert_pass("scene", &mut scene, ctx.graphics()).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

mod attachments;
mod targets;
mod views;

pub use targets::{ColorTarget, DepthTarget, Load, StencilTarget, Store};

use crate::error::{Error, Result};
use ash::vk;
use attachments::{color_info, depth_infos};
use std::sync::Arc;
use targets::{check_target, covers};
use views::Views;
use vk_baton::pass::ReplayKey;
use vk_baton::plan::{Region, Unordered};
use vk_baton::{Access, Declare, ImageRange, Pass, Recorder, StBuffer, StImage};

/// A resource the draw code reads or writes besides the targets.
enum Used {
    Buffer(Arc<StBuffer>, Access),
    /// With the layout the use is pinned to, if any ([`Render::reads_image_in`]).
    Image(Arc<StImage>, Access, Option<vk::ImageLayout>),
}

/// A pass that draws with dynamic rendering; see the [module docs](self).
pub struct Render<F> {
    area: vk::Rect2D,
    colors: Vec<ColorTarget>,
    depth: Option<DepthTarget>,
    used: Vec<Used>,
    views: Arc<Views>,
    /// The targets are written only inside the render area, which other passes' areas on
    /// them do not overlap ([`Render::disjoint_area`]).
    disjoint: bool,
    draw: F,
    /// Given by [`Render::with_replay_key`].
    replay_key: Option<ReplayKey>,
}

/// The attachment formats and sample count a pipeline that draws in a [`Render`] is made for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderFormats {
    /// One per color target, in order.
    pub colors: Vec<vk::Format>,
    /// The depth target's format if it has a depth aspect, else `UNDEFINED`.
    pub depth: vk::Format,
    /// The depth target's format if it has a stencil aspect, else `UNDEFINED`.
    pub stencil: vk::Format,
    /// Samples per texel of every target (for `VkPipelineMultisampleStateCreateInfo`).
    pub samples: vk::SampleCountFlags,
}

impl RenderFormats {
    /// The formats and sample count of these targets: what [`Render::formats`] says of a
    /// pass made with them, available before the pass, so that the pipeline its draw closure
    /// binds can be made first.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, color: std::sync::Arc<vk_baton::StImage>,
    /// #      make_pipeline: impl Fn(&vk_baton_passes::render::RenderFormats) -> ash::vk::Pipeline) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// use vk_baton_passes::render::{ColorTarget, Render, RenderFormats};
    /// let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: 64, height: 64 } };
    /// let colors = vec![ColorTarget::clear(color, [0.0; 4])];
    /// let pipeline = make_pipeline(&RenderFormats::of(&colors, None));
    /// let scene = Render::new(ctx.device(), area, colors, None, move |r| {
    ///     // SAFETY: a pipeline made for these targets' formats.
    ///     unsafe { r.device().cmd_bind_pipeline(r.cmd(), vk::PipelineBindPoint::GRAPHICS, pipeline) };
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn of(colors: &[ColorTarget], depth: Option<&DepthTarget>) -> RenderFormats {
        let (mut d, mut s) = (vk::Format::UNDEFINED, vk::Format::UNDEFINED);
        if let Some(t) = depth {
            let desc = t.image.desc();
            if desc.aspect().contains(vk::ImageAspectFlags::DEPTH) {
                d = desc.format;
            }
            if desc.aspect().contains(vk::ImageAspectFlags::STENCIL) {
                s = desc.format;
            }
        }
        let first = colors.first().map(|c| &c.image).or(depth.map(|t| &t.image));
        RenderFormats {
            colors: colors.iter().map(|c| c.image.desc().format).collect(),
            depth: d,
            stencil: s,
            samples: first.map_or(vk::SampleCountFlags::TYPE_1, |i| i.desc().samples),
        }
    }

    /// `VkPipelineRenderingCreateInfo` for a pipeline's `pNext` chain.
    ///
    /// ```
    /// use vk_baton::ash::vk;
    /// let f = vk_baton_passes::render::RenderFormats {
    ///     colors: vec![vk::Format::R8G8B8A8_UNORM], depth: vk::Format::D32_SFLOAT,
    ///     stencil: vk::Format::UNDEFINED, samples: vk::SampleCountFlags::TYPE_4 };
    /// let info = f.info();
    /// assert_eq!((info.color_attachment_count, info.depth_attachment_format), (1, vk::Format::D32_SFLOAT));
    /// ```
    pub fn info(&self) -> vk::PipelineRenderingCreateInfo<'_> {
        vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(&self.colors)
            .depth_attachment_format(self.depth)
            .stencil_attachment_format(self.stencil)
    }
}

impl<F: FnMut(&mut Recorder<'_>) -> vk_baton::Result<()>> Render<F> {
    /// A pass that renders into `colors` and `depth` over `area`, calling `draw` between
    /// `vkCmdBeginRendering` and `vkCmdEndRendering`, with the viewport and scissor set to
    /// `area` (depth range 0 to 1).
    ///
    /// Errors, before anything is planned: no target; a target that is not one mip level of
    /// one layer, lacks the attachment usage, or does not contain `area`; a color target on a
    /// depth/stencil format or a depth target on a color format; targets with different sample
    /// counts; a resolve target of a single-sample color target, or one whose format, sample
    /// count, usage or size does not fit; a read-only depth (or stencil) target that does not
    /// load, or stores; stencil ops of their own ([`DepthTarget::stencil`]) on a format
    /// without both depth and stencil. A target on a queue without graphics is refused by `finish()`
    /// ([`vk_baton::Error::QueueCapability`]).
    pub fn new(
        device: &ash::Device,
        area: vk::Rect2D,
        colors: Vec<ColorTarget>,
        depth: Option<DepthTarget>,
        draw: F,
    ) -> Result<Self> {
        check(area, &colors, depth.as_ref())?;
        let views = Views::new(device, &colors, depth.as_ref())?;
        Ok(Render {
            area,
            colors,
            depth,
            used: Vec::new(),
            views: Arc::new(views),
            disjoint: false,
            draw,
            replay_key: None,
        })
    }

    /// Declares that this pass draws into its targets only inside its render area, and that
    /// the passes around it that draw into the same targets keep to areas that do not overlap
    /// it: the tiles of an atlas, the views of a split screen, shadow maps packed into one
    /// image. Such passes in a row on one queue get no barrier between them: each target
    /// write is declared [`Unordered::Disjoint`] with
    /// the render area as its region, and the group is still ordered against every other use
    /// of the targets. Areas that overlap fail the graph's `finish()` with
    /// [`vk_baton::Error::UnorderedWriteOverlap`].
    ///
    /// The viewport and scissor are the render area, so the draws cannot leave it; the load
    /// and store ops touch only the render area too. A target whose old contents the pass
    /// discards (its area covers the whole target) is declared as an ordinary write: there is
    /// nothing beside it to be disjoint from.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, atlas: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// use vk_baton_passes::render::{ColorTarget, Render};
    /// // Two 256 x 256 shadow tiles side by side in one atlas.
    /// let tile = |x| vk::Rect2D { offset: vk::Offset2D { x, y: 0 }, extent: vk::Extent2D { width: 256, height: 256 } };
    /// let left = Render::new(ctx.device(), tile(0), vec![ColorTarget::load(atlas.clone())], None, |_| Ok(()))?
    ///     .disjoint_area();
    /// let right = Render::new(ctx.device(), tile(256), vec![ColorTarget::load(atlas.clone())], None, |_| Ok(()))?
    ///     .disjoint_area();
    /// # Ok(()) }
    /// ```
    pub fn disjoint_area(mut self) -> Self {
        self.disjoint = true;
        self
    }

    /// Declares that the draw code uses `buffer` with `access` (a vertex, index, indirect,
    /// uniform or storage buffer).
    pub fn reads(mut self, buffer: &Arc<StBuffer>, access: Access) -> Self {
        self.used.push(Used::Buffer(buffer.clone(), access));
        self
    }

    /// Declares that the draw code uses all of `image` with `access` (a sampled texture, a
    /// storage image).
    ///
    /// Two reads are refused, before anything is planned, since dynamic rendering cannot do
    /// them as declared:
    /// - an input attachment (`FRAGMENT_SHADER_INPUT_ATTACHMENT_READ` and its depth form):
    ///   that needs a `VkRenderPass` (see [`vk_baton::render_pass`]) or
    ///   `VK_KHR_dynamic_rendering_local_read`, which the library does not plan; sample the
    ///   image in the next pass instead;
    /// - one of this pass's own targets (a feedback loop): end the rendering and sample the
    ///   target in the next pass.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, out: std::sync::Arc<vk_baton::StImage>,
    /// #      albedo: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::{ash::vk, Access};
    /// use vk_baton_passes::render::{ColorTarget, Render};
    /// let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: 64, height: 64 } };
    /// let lighting = Render::new(ctx.device(), area, vec![ColorTarget::dont_care(out.clone())], None, |_| Ok(()))?
    ///     .reads_image(&albedo, Access::FRAGMENT_SHADER_SAMPLED_READ)?;
    /// // Sampling what this pass draws into is a feedback loop: refused.
    /// let looped = Render::new(ctx.device(), area, vec![ColorTarget::load(out.clone())], None, |_| Ok(()))?
    ///     .reads_image(&out, Access::FRAGMENT_SHADER_SAMPLED_READ);
    /// assert!(looped.is_err());
    /// # Ok(()) }
    /// ```
    pub fn reads_image(mut self, image: &Arc<StImage>, access: Access) -> Result<Self> {
        let input = [
            Access::FRAGMENT_SHADER_INPUT_ATTACHMENT_READ,
            Access::FRAGMENT_SHADER_DEPTH_INPUT_ATTACHMENT_READ,
        ];
        if input.contains(&access) {
            return Err(Error::InvalidInput(format!(
                "`{}` as an input attachment: dynamic rendering reads input attachments only \
                 with VK_KHR_dynamic_rendering_local_read, which the library does not plan; \
                 sample it in the next pass, or draw in an app VkRenderPass \
                 (vk_baton::render_pass)",
                image.name()
            )));
        }
        let targets = self
            .colors
            .iter()
            .flat_map(|c| [Some(&c.image), c.resolve.as_ref()]);
        let targets = targets.chain([self.depth.as_ref().map(|t| &t.image)]);
        if targets.flatten().any(|t| t.id() == image.id()) {
            return Err(Error::InvalidInput(format!(
                "`{}` is a target of this pass and read by its draws (a feedback loop): end the \
                 rendering and read it in the next pass",
                image.name()
            )));
        }
        self.used.push(Used::Image(image.clone(), access, None));
        Ok(self)
    }

    /// As [`Render::reads_image`], with the image in `layout` whatever the graph's
    /// [`LayoutPolicy`](vk_baton::access::LayoutPolicy) ([`Use::layout`](vk_baton::pass::Use::layout)):
    /// for draw code whose descriptor sets were written before the frame.
    ///
    /// ```no_run
    /// # fn f<F>(pass: vk_baton_passes::Render<F>, albedo: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()>
    /// # where F: FnMut(&mut vk_baton::Recorder<'_>) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk::ImageLayout as L, Access};
    /// // The material's set, written once, says SHADER_READ_ONLY_OPTIMAL.
    /// let pass = pass.reads_image_in(&albedo, Access::FRAGMENT_SHADER_SAMPLED_READ, L::SHADER_READ_ONLY_OPTIMAL)?;
    /// # Ok(()) }
    /// ```
    pub fn reads_image_in(
        self,
        image: &Arc<StImage>,
        access: Access,
        layout: vk::ImageLayout,
    ) -> Result<Self> {
        let mut pass = self.reads_image(image, access)?;
        if let Some(Used::Image(_, _, pinned)) = pass.used.last_mut() {
            *pinned = Some(layout);
        }
        Ok(pass)
    }

    /// The same pass, whose recordings a graph with replay on may submit again while its key
    /// is `key` ([`Pass::replay_key`]). The pass's own commands (the rendering's begin and
    /// end, its viewport and scissor) depend only on what it was made with and on the views
    /// the graph binds; the draw closure is what the key vouches for, as
    /// [`vk_baton::pass::FnPass::with_replay_key`] says: making the key is the `unsafe` step.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context, color: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// use vk_baton::pass::Generation;
    /// use vk_baton_passes::render::{ColorTarget, Render};
    /// let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: vk::Extent2D { width: 64, height: 64 } };
    /// // The key is fixed when the pass is made: a pass whose draws change is made anew (with
    /// // a new generation, kept beside the pipelines the closure draws with).
    /// let pipelines = Generation::new();
    /// // SAFETY (example): the closure records the same draws, with objects that outlive the
    /// // recordings, for as long as this pass lives.
    /// let key = unsafe { pipelines.key() };
    /// let clear = Render::new(ctx.device(), area, vec![ColorTarget::clear(color, [0.0; 4])], None, |_| Ok(()))?
    ///     .with_replay_key(key);
    /// # Ok(()) }
    /// ```
    pub fn with_replay_key(mut self, key: ReplayKey) -> Self {
        self.replay_key = Some(key);
        self
    }

    /// The formats and sample count to make the pipelines for; [`RenderFormats::of`] says
    /// the same of the targets before the pass is made.
    pub fn formats(&self) -> RenderFormats {
        RenderFormats::of(&self.colors, self.depth.as_ref())
    }
}

/// Every check of [`Render::new`].
fn check(area: vk::Rect2D, colors: &[ColorTarget], depth: Option<&DepthTarget>) -> Result<()> {
    if colors.is_empty() && depth.is_none() {
        return Err(Error::InvalidInput("a render pass with no target".into()));
    }
    let samples = RenderFormats::of(colors, depth).samples;
    for c in colors {
        if c.image.desc().aspect() != vk::ImageAspectFlags::COLOR {
            return Err(Error::UnsupportedFormat {
                format: c.image.desc().format,
                detail: format!(
                    "color target `{}` has a depth/stencil format",
                    c.image.name()
                ),
            });
        }
        check_target(
            "color target",
            &c.image,
            c.subresource,
            area,
            vk::ImageUsageFlags::COLOR_ATTACHMENT,
        )?;
        if let Some(r) = &c.resolve {
            check_resolve(c, r, area)?;
        }
    }
    if let Some(t) = depth {
        if t.image
            .desc()
            .aspect()
            .contains(vk::ImageAspectFlags::COLOR)
        {
            return Err(Error::UnsupportedFormat {
                format: t.image.desc().format,
                detail: format!("depth target `{}` has a color format", t.image.name()),
            });
        }
        check_target(
            "depth target",
            &t.image,
            t.subresource,
            area,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
        )?;
        check_depth_ops(t)?;
    }
    let targets = colors
        .iter()
        .map(|c| &c.image)
        .chain(depth.map(|t| &t.image));
    if let Some(other) = targets.clone().find(|i| i.desc().samples != samples) {
        return Err(Error::InvalidInput(format!(
            "target `{}` has {:?} samples, the others {samples:?}",
            other.name(),
            other.desc().samples
        )));
    }
    Ok(())
}

/// A read-only aspect loads and stores nothing; stencil ops of their own need both aspects.
fn check_depth_ops(t: &DepthTarget) -> Result<()> {
    let read_only_ok =
        |read_only: bool, loads: bool, store: Store| !read_only || (loads && store == Store::None);
    if !read_only_ok(t.read_only, t.load.reads(), t.store) {
        return Err(Error::InvalidInput(format!(
            "read-only depth target `{}`: a read-only target loads (LOAD) and stores nothing \
             (NONE); CLEAR, DONT_CARE and a store op STORE or DONT_CARE write it",
            t.image.name()
        )));
    }
    if let Some(s) = t.stencil_ops {
        let both = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
        if t.image.desc().aspect() != both {
            return Err(Error::InvalidInput(format!(
                "depth target `{}` ({:?}): stencil ops of their own need a format with depth \
                 and stencil",
                t.image.name(),
                t.image.desc().format
            )));
        }
        if !read_only_ok(s.read_only, s.load.reads(), s.store) {
            return Err(Error::InvalidInput(format!(
                "read-only stencil of depth target `{}`: it loads (LOAD) and stores nothing \
                 (NONE)",
                t.image.name()
            )));
        }
    }
    Ok(())
}

fn check_resolve(c: &ColorTarget, r: &StImage, area: vk::Rect2D) -> Result<()> {
    let (src, dst) = (c.image.desc(), r.desc());
    let why = if src.samples == vk::SampleCountFlags::TYPE_1 {
        Some("the color target has one sample: there is nothing to resolve".to_owned())
    } else if dst.samples != vk::SampleCountFlags::TYPE_1 {
        Some(format!(
            "the resolve target has {:?} samples, not one",
            dst.samples
        ))
    } else if dst.format != src.format {
        Some(format!(
            "formats differ: {:?} into {:?}",
            src.format, dst.format
        ))
    } else {
        None
    };
    if let Some(why) = why {
        return Err(Error::InvalidInput(format!(
            "resolve of `{}` into `{}`: {why}",
            c.image.name(),
            r.name()
        )));
    }
    check_target(
        "resolve target",
        r,
        ImageRange::subresource(0, 0),
        area,
        vk::ImageUsageFlags::COLOR_ATTACHMENT,
    )
}

impl<F: FnMut(&mut Recorder<'_>) -> vk_baton::Result<()>> Pass for Render<F> {
    fn replay_key(&self) -> Option<ReplayKey> {
        self.replay_key
    }

    fn declare(&self, d: &mut Declare<'_>) {
        let area = self.area;
        // A discard is an ordinary write; so is a use that only reads.
        let narrow = |u: vk_baton::pass::Use<'_, Arc<StImage>>, discard: bool, writes: bool| {
            if discard {
                u.discard();
            } else if self.disjoint && writes {
                u.unordered(Unordered::Disjoint(area_region(area)));
            }
        };
        for c in &self.colors {
            let u = d.uses(&c.image, c.access()).range(c.subresource);
            narrow(
                u,
                !c.load.reads() && covers(area, &c.image, c.subresource),
                true,
            );
            if let Some(r) = &c.resolve {
                let whole = ImageRange::subresource(0, 0);
                let u = d.uses(r, Access::COLOR_ATTACHMENT_WRITE).range(whole);
                narrow(u, covers(area, r, whole), true);
            }
        }
        if let Some(t) = &self.depth {
            for (access, aspect, discard) in t.uses(covers(area, &t.image, t.subresource)) {
                let u = d.uses(&t.image, access).range(t.subresource).aspect(aspect);
                narrow(u, discard, access.is_write());
            }
        }
        for used in &self.used {
            match used {
                Used::Buffer(b, a) => {
                    d.uses(b, *a);
                }
                Used::Image(i, a, None) => {
                    d.uses(i, *a);
                }
                Used::Image(i, a, Some(layout)) => {
                    d.uses(i, *a).layout(*layout);
                }
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let views = self
            .views
            .for_execution(&self.colors, self.depth.as_ref())?;
        // The views live until this execution completes, even if the pass is dropped first.
        r.keep_alive(self.views.clone());
        let colors: Vec<vk::RenderingAttachmentInfo<'_>> = self
            .colors
            .iter()
            .zip(&views.colors)
            .map(|(c, &(view, resolve))| color_info(c, (view, resolve), r.layout_policy()))
            .collect();
        let area = self.area;
        let depth = self.depth.as_ref().zip(views.depth).map(|(t, view)| {
            let covered = covers(area, &t.image, t.subresource);
            depth_infos(t, view, (covered, r.layout_policy()))
        });
        let aspect = self.depth.as_ref().map(|t| t.image.desc().aspect());
        let has = |a: vk::ImageAspectFlags| aspect.is_some_and(|x| x.contains(a));
        let mut info = vk::RenderingInfo::default()
            .render_area(self.area)
            .layer_count(1)
            .color_attachments(&colors);
        if let Some((depth, stencil)) = &depth {
            if has(vk::ImageAspectFlags::DEPTH) {
                info = info.depth_attachment(depth);
            }
            if has(vk::ImageAspectFlags::STENCIL) {
                info = info.stencil_attachment(stencil);
            }
        }
        let a = self.area;
        let viewport = vk::Viewport {
            x: a.offset.x as f32,
            y: a.offset.y as f32,
            width: a.extent.width as f32,
            height: a.extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        // The pass's own handle to the device: `r` goes to the draw code in between.
        let (device, cmd) = (&self.views.device, r.cmd());
        // SAFETY: recording; the graph put every target in the layout its access takes under
        // the graph's layout policy (the layouts used here), and the views are alive until
        // the execution completes.
        unsafe {
            device.cmd_begin_rendering(cmd, &info);
            device.cmd_set_viewport(cmd, 0, &[viewport]);
            device.cmd_set_scissor(cmd, 0, &[a]);
        }
        let drawn = (self.draw)(r);
        // SAFETY: closes the rendering begun above, whatever the draw code returned.
        unsafe { device.cmd_end_rendering(cmd) };
        drawn
    }
}

/// The texels of `area` in one layer.
fn area_region(area: vk::Rect2D) -> Region {
    // `check_target` refused areas outside the targets: the offsets are not negative.
    let (x, y) = (area.offset.x.max(0) as u32, area.offset.y.max(0) as u32);
    Region::texels([x, y, 0], [area.extent.width, area.extent.height, 1])
}
