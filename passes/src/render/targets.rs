//! What a [`Render`](super::Render) draws into: [`ColorTarget`], [`DepthTarget`], their
//! [`Load`] and [`Store`] ops, and the checks that make a bad description an error before
//! anything is planned.

use crate::error::{Error, Result};
use crate::util::mip_extent;
use ash::vk;
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::{Access, ImageRange, StImage};

/// What an attachment holds when the rendering begins.
#[derive(Clone, Copy, Debug)]
pub enum Load<C> {
    /// The old contents, read (`VK_ATTACHMENT_LOAD_OP_LOAD`).
    Load,
    /// Cleared to this value (`CLEAR`): old contents not needed.
    Clear(C),
    /// Undefined (`DONT_CARE`): old contents not needed, every texel of the render area drawn.
    DontCare,
}

/// What happens to an attachment's contents when the rendering ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// Written to memory (`STORE`): a write of the render area.
    Store,
    /// Undefined afterwards (`DONT_CARE`): still a write of the render area.
    DontCare,
    /// Left untouched (`NONE`, Vulkan 1.3): no write. Only for attachments nothing writes,
    /// such as a read-only depth buffer.
    None,
}

impl Store {
    pub(super) fn op(self) -> vk::AttachmentStoreOp {
        match self {
            Store::Store => vk::AttachmentStoreOp::STORE,
            Store::DontCare => vk::AttachmentStoreOp::DONT_CARE,
            Store::None => vk::AttachmentStoreOp::NONE,
        }
    }
}

impl<C> Load<C> {
    pub(super) fn op(&self) -> vk::AttachmentLoadOp {
        match self {
            Load::Load => vk::AttachmentLoadOp::LOAD,
            Load::Clear(_) => vk::AttachmentLoadOp::CLEAR,
            Load::DontCare => vk::AttachmentLoadOp::DONT_CARE,
        }
    }

    /// Whether the old contents are read.
    pub(super) fn reads(&self) -> bool {
        matches!(self, Load::Load)
    }
}

/// A color attachment: one mip level of one layer of an image, its ops, whether the pipeline
/// blends into it, and where a multisampled one resolves to.
///
/// ```no_run
/// # fn f(msaa: std::sync::Arc<vk_baton::StImage>, out: std::sync::Arc<vk_baton::StImage>) {
/// use vk_baton_passes::render::{ColorTarget, Store};
/// // Cleared to black, resolved into `out`; the multisampled texels are not kept.
/// let color = ColorTarget::clear(msaa, [0.0, 0.0, 0.0, 1.0]).resolve_into(out).store(Store::DontCare);
/// # }
/// ```
#[derive(Clone)]
pub struct ColorTarget {
    /// The image.
    pub image: Arc<StImage>,
    /// The mip level and layer drawn into (one of each).
    pub subresource: ImageRange,
    /// The load op.
    pub load: Load<vk::ClearColorValue>,
    /// The store op.
    pub store: Store,
    /// Whether the pipeline blends into it (reads what is there).
    pub blend: bool,
    /// The single-sample image (mip 0, layer 0) a multisampled target resolves into, at the
    /// end of the rendering, over the render area.
    pub resolve: Option<Arc<StImage>>,
}

impl std::fmt::Debug for ColorTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The clear value is a union: the op is shown, not the value.
        f.debug_struct("ColorTarget")
            .field("image", &self.image.name())
            .field("subresource", &self.subresource)
            .field("load", &self.load.op())
            .field("store", &self.store)
            .field("blend", &self.blend)
            .field("resolve", &self.resolve.as_ref().map(|r| r.name()))
            .finish()
    }
}

impl ColorTarget {
    fn new(image: Arc<StImage>, load: Load<vk::ClearColorValue>) -> Self {
        ColorTarget {
            image,
            subresource: ImageRange::subresource(0, 0),
            load,
            store: Store::Store,
            blend: false,
            resolve: None,
        }
    }

    /// Cleared to `rgba` (float formats; see [`ColorTarget::clear_value`] for others), stored.
    pub fn clear(image: Arc<StImage>, rgba: [f32; 4]) -> Self {
        Self::new(image, Load::Clear(vk::ClearColorValue { float32: rgba }))
    }

    /// Cleared to `value`, stored.
    pub fn clear_value(image: Arc<StImage>, value: vk::ClearColorValue) -> Self {
        Self::new(image, Load::Clear(value))
    }

    /// Loaded (drawn over), stored.
    pub fn load(image: Arc<StImage>) -> Self {
        Self::new(image, Load::Load)
    }

    /// Not loaded: every texel of the render area is drawn.
    pub fn dont_care(image: Arc<StImage>) -> Self {
        Self::new(image, Load::DontCare)
    }

    /// The pipeline blends into this target.
    pub fn blending(mut self) -> Self {
        self.blend = true;
        self
    }

    /// With this store op.
    pub fn store(mut self, store: Store) -> Self {
        self.store = store;
        self
    }

    /// Resolves into `target` (single-sample, same format) at the end of the rendering.
    pub fn resolve_into(mut self, target: Arc<StImage>) -> Self {
        self.resolve = Some(target);
        self
    }

    /// Draws into mip level `mip` of layer `layer`.
    pub fn at(mut self, mip: u32, layer: u32) -> Self {
        self.subresource = ImageRange::subresource(mip, layer);
        self
    }

    /// What the rendering does to the target: a write, a read too when the old contents are
    /// loaded or blended into.
    pub(super) fn access(&self) -> Access {
        if self.load.reads() || self.blend {
            Access::COLOR_ATTACHMENT_READ_WRITE
        } else {
            Access::COLOR_ATTACHMENT_WRITE
        }
    }
}

/// The depth/stencil attachment: one mip level of one layer, its ops, and whether it is only
/// tested (read-only: `DEPTH_STENCIL_READ_ONLY_OPTIMAL`, load op LOAD, store op NONE). The
/// stencil aspect of a depth/stencil format follows the depth aspect, unless
/// [`DepthTarget::stencil`] gives it its own ops.
///
/// ```no_run
/// # fn f(depth: std::sync::Arc<vk_baton::StImage>) {
/// use vk_baton_passes::render::{DepthTarget, StencilTarget};
/// let prepass = DepthTarget::clear(depth.clone(), 1.0); // written
/// let transparent = DepthTarget::read_only(depth.clone()); // tested, not written
/// // Decals: depth tested read-only, stencil cleared to 0 and written where a decal lands.
/// let decals = DepthTarget::read_only(depth).stencil(StencilTarget::clear(0));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct DepthTarget {
    /// The image (a depth, stencil or depth/stencil format).
    pub image: Arc<StImage>,
    /// The mip level and layer drawn into (one of each).
    pub subresource: ImageRange,
    /// The load op, for depth (and stencil, unless [`DepthTarget::stencil_ops`] is set).
    pub load: Load<vk::ClearDepthStencilValue>,
    /// The store op, for depth (and stencil, unless [`DepthTarget::stencil_ops`] is set).
    pub store: Store,
    /// Tested only: the pipeline writes neither depth nor stencil (nor depth alone, with
    /// [`DepthTarget::stencil_ops`]).
    pub read_only: bool,
    /// The stencil aspect's own ops, for a format with depth and stencil; `None`: as depth.
    pub stencil_ops: Option<StencilTarget>,
}

/// The stencil aspect's own ops in a [`DepthTarget`] of a depth/stencil format. Where they
/// make it a different access than depth (one is read-only, or one discards its old contents),
/// the pass declares one use per aspect, and each attachment is in its aspect's own layout
/// (`DEPTH_READ_ONLY_OPTIMAL`, `STENCIL_ATTACHMENT_OPTIMAL`, ...): the device needs the
/// `separateDepthStencilLayouts` feature, which `vk_baton_context::Context` enables where supported.
#[derive(Clone, Copy, Debug)]
pub struct StencilTarget {
    /// The load op (a clear takes this stencil value).
    pub load: Load<u32>,
    /// The store op.
    pub store: Store,
    /// Tested only: the pipeline writes no stencil (load op LOAD, store op NONE).
    pub read_only: bool,
}

impl StencilTarget {
    /// Cleared to `value`, written, stored.
    pub fn clear(value: u32) -> Self {
        StencilTarget {
            load: Load::Clear(value),
            store: Store::Store,
            read_only: false,
        }
    }

    /// Loaded, tested and written, stored.
    pub fn load() -> Self {
        StencilTarget {
            load: Load::Load,
            ..Self::clear(0)
        }
    }

    /// Loaded and tested only: load op LOAD, store op NONE.
    pub fn read_only() -> Self {
        StencilTarget {
            store: Store::None,
            read_only: true,
            ..Self::load()
        }
    }

    /// With this store op.
    pub fn store(mut self, store: Store) -> Self {
        self.store = store;
        self
    }
}

impl DepthTarget {
    /// Cleared to `depth` (and stencil 0), stored.
    pub fn clear(image: Arc<StImage>, depth: f32) -> Self {
        DepthTarget {
            image,
            subresource: ImageRange::subresource(0, 0),
            load: Load::Clear(vk::ClearDepthStencilValue { depth, stencil: 0 }),
            store: Store::Store,
            read_only: false,
            stencil_ops: None,
        }
    }

    /// Loaded, tested and written, stored.
    pub fn load(image: Arc<StImage>) -> Self {
        DepthTarget {
            load: Load::Load,
            ..Self::clear(image, 0.0)
        }
    }

    /// Loaded and tested only: load op LOAD, store op NONE, in
    /// `DEPTH_STENCIL_READ_ONLY_OPTIMAL` (the pipeline must not write depth or stencil). Under
    /// [`LayoutPolicy::General`] the target is in `GENERAL`, a layout that does not forbid
    /// writes: a pipeline that writes depth anyway is then a hazard that validation no longer
    /// reports.
    pub fn read_only(image: Arc<StImage>) -> Self {
        DepthTarget {
            store: Store::None,
            read_only: true,
            ..Self::load(image)
        }
    }

    /// With this store op.
    pub fn store(mut self, store: Store) -> Self {
        self.store = store;
        self
    }

    /// Gives the stencil aspect (of a format with depth and stencil) its own ops; the depth
    /// aspect keeps this target's. A read-only depth test with a stencil write is a decal or
    /// stencil-masked lighting pass.
    ///
    /// ```no_run
    /// # fn f(ds: std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton_passes::render::{DepthTarget, StencilTarget};
    /// let decals = DepthTarget::read_only(ds).stencil(StencilTarget::load());
    /// # }
    /// ```
    pub fn stencil(mut self, stencil: StencilTarget) -> Self {
        self.stencil_ops = Some(stencil);
        self
    }

    /// The depth aspect's access (and the stencil's, unless it has its own ops).
    pub(super) fn access(&self) -> Access {
        attachment_access(self.read_only)
    }

    /// The uses to declare: one of every aspect, or, where the stencil's own ops make it
    /// another access (or another discard) than depth, one per aspect. Each with whether it
    /// discards the old contents (given whether the render area covers the target).
    pub(super) fn uses(&self, covered: bool) -> Vec<(Access, vk::ImageAspectFlags, bool)> {
        let depth = (self.access(), !self.load.reads() && covered);
        match self.stencil_ops {
            Some(s) => {
                let stencil = (attachment_access(s.read_only), !s.load.reads() && covered);
                if stencil == depth {
                    vec![(depth.0, vk::ImageAspectFlags::empty(), depth.1)]
                } else {
                    vec![
                        (depth.0, vk::ImageAspectFlags::DEPTH, depth.1),
                        (stencil.0, vk::ImageAspectFlags::STENCIL, stencil.1),
                    ]
                }
            }
            None => vec![(depth.0, vk::ImageAspectFlags::empty(), depth.1)],
        }
    }

    /// The depth attachment's and the stencil attachment's layouts, as [`DepthTarget::uses`]
    /// declares them under the graph's `policy`: each aspect's own where the uses are apart
    /// ([`LayoutPolicy::layout_in`]).
    pub(super) fn layouts(
        &self,
        covered: bool,
        policy: LayoutPolicy,
    ) -> (vk::ImageLayout, vk::ImageLayout) {
        let uses = self.uses(covered);
        let layout_of = |aspect: vk::ImageAspectFlags| {
            uses.iter()
                .find(|(_, a, _)| a.is_empty() || *a == aspect)
                .map_or(vk::ImageLayout::UNDEFINED, |(access, a, _)| {
                    policy.layout_in(*access, *a)
                })
        };
        (
            layout_of(vk::ImageAspectFlags::DEPTH),
            layout_of(vk::ImageAspectFlags::STENCIL),
        )
    }
}

fn attachment_access(read_only: bool) -> Access {
    if read_only {
        Access::DEPTH_ATTACHMENT_READ
    } else {
        Access::DEPTH_ATTACHMENT_WRITE
    }
}

/// Whether `area` covers all of `subresource` of `image`: then what the rendering writes
/// without loading replaces the old contents.
pub(super) fn covers(area: vk::Rect2D, image: &StImage, subresource: ImageRange) -> bool {
    let e = mip_extent(image.desc().extent, subresource.base_mip);
    area.offset.x == 0
        && area.offset.y == 0
        && area.extent.width == e.width
        && area.extent.height == e.height
}

/// Checks that `subresource` is one mip level of one layer of `image`, that `area` lies inside
/// it, and that `image` has `usage`; `what` names the attachment for the message.
pub(super) fn check_target(
    what: &str,
    image: &StImage,
    subresource: ImageRange,
    area: vk::Rect2D,
    usage: vk::ImageUsageFlags,
) -> Result<()> {
    let d = image.desc();
    if subresource.mip_count != 1
        || subresource.layer_count != 1
        || !subresource.fits(d.mip_levels, d.array_layers)
    {
        return Err(Error::InvalidRegion(format!(
            "{what} `{}`: {subresource:?} is not one mip level of one layer of {} mips x {} \
             layers",
            image.name(),
            d.mip_levels,
            d.array_layers
        )));
    }
    let e = mip_extent(d.extent, subresource.base_mip);
    let inside = |offset: i32, size: u32, limit: u32| {
        offset >= 0 && size > 0 && (offset as u64 + size as u64) <= limit as u64
    };
    if !inside(area.offset.x, area.extent.width, e.width)
        || !inside(area.offset.y, area.extent.height, e.height)
    {
        return Err(Error::InvalidRegion(format!(
            "{what} `{}`: the render area {area:?} is empty or outside its {}x{} texels",
            image.name(),
            e.width,
            e.height
        )));
    }
    if !d.usage.contains(usage) {
        return Err(Error::InvalidInput(format!(
            "{what} `{}` lacks usage {usage:?}",
            image.name()
        )));
    }
    if image.is_transient() && (d.mip_levels, d.array_layers) != (1, 1) {
        return Err(Error::InvalidInput(format!(
            "{what} `{}`: a transient render target has one mip level and one layer (the graph \
             makes one view of it, of the whole image)",
            image.name()
        )));
    }
    Ok(())
}
