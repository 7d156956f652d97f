//! The image views a [`Render`](super::Render) draws through.
//!
//! An app's image keeps its `VkImage` for life, so its view is made once, with the pass. A
//! transient's `VkImage` may be another object in each execution in flight; the graph makes a
//! view of the whole image with it, which the pass takes at record time. Executions keep the
//! [`Views`] alive (`Recorder::keep_alive`) until their GPU work completes, so dropping the pass
//! destroys no view a pending execution uses.

use super::{ColorTarget, DepthTarget};
use crate::error::{Error, Result};
use ash::vk;
use vk_baton::{ImageRange, StImage};

/// The views the pass made (`None` where the target is a transient), per color target (and
/// its resolve target), and for the depth target.
pub(super) struct Views {
    pub(super) device: ash::Device,
    colors: Vec<(Option<vk::ImageView>, Option<vk::ImageView>)>,
    depth: Option<vk::ImageView>,
}

/// The views one execution draws through.
pub(super) struct ExecutionViews {
    /// Per color target: its view and its resolve target's.
    pub(super) colors: Vec<(vk::ImageView, Option<vk::ImageView>)>,
    pub(super) depth: Option<vk::ImageView>,
}

impl Views {
    /// Makes the views of the targets that are not transients.
    pub(super) fn new(
        device: &ash::Device,
        colors: &[ColorTarget],
        depth: Option<&DepthTarget>,
    ) -> Result<Views> {
        let mut views = Views {
            device: device.clone(),
            colors: Vec::with_capacity(colors.len()),
            depth: None,
        };
        // On an error, `views` drops and destroys what was made so far.
        for c in colors {
            let own = make(device, &c.image, c.subresource)?;
            views.colors.push((own, None));
            if let Some(r) = &c.resolve {
                let resolve = make(device, r, ImageRange::subresource(0, 0))?;
                if let Some(last) = views.colors.last_mut() {
                    last.1 = resolve;
                }
            }
        }
        if let Some(t) = depth {
            views.depth = make(device, &t.image, t.subresource)?;
        }
        Ok(views)
    }

    /// The views of this execution: the pass's own, and the graph's for transients.
    pub(super) fn for_execution(
        &self,
        colors: &[ColorTarget],
        depth: Option<&DepthTarget>,
    ) -> vk_baton::Result<ExecutionViews> {
        let mut out = ExecutionViews {
            colors: Vec::with_capacity(colors.len()),
            depth: None,
        };
        for (c, (own, own_resolve)) in colors.iter().zip(&self.colors) {
            let view = pick(*own, &c.image)?;
            let resolve = match &c.resolve {
                Some(r) => Some(pick(*own_resolve, r)?),
                None => None,
            };
            out.colors.push((view, resolve));
        }
        if let Some(t) = depth {
            out.depth = Some(pick(self.depth, &t.image)?);
        }
        Ok(out)
    }
}

impl Drop for Views {
    fn drop(&mut self) {
        let made = self
            .colors
            .iter()
            .flat_map(|(a, b)| [*a, *b])
            .chain([self.depth])
            .flatten();
        for view in made {
            // SAFETY: made by `make` on this device; every execution that drew through it
            // kept `self` alive until it completed, so nothing uses it any more.
            unsafe { self.device.destroy_image_view(view, None) };
        }
    }
}

/// The view to draw through: the pass's own, or the one the graph made for a transient in
/// this execution.
fn pick(own: Option<vk::ImageView>, image: &StImage) -> vk_baton::Result<vk::ImageView> {
    match own {
        Some(v) => Ok(v),
        None => image.view().ok_or_else(|| {
            vk_baton::Error::PassFailed(format!(
                "transient render target `{}` has no view: it is bound only while its graph \
                 records",
                image.name()
            ))
        }),
    }
}

/// A 2D view of one subresource of `image`, with every aspect of its format; `None` for a
/// transient (the graph makes its view per execution).
fn make(
    device: &ash::Device,
    image: &StImage,
    subresource: ImageRange,
) -> Result<Option<vk::ImageView>> {
    if image.is_transient() {
        return Ok(None);
    }
    let d = image.desc();
    let info = vk::ImageViewCreateInfo::default()
        .image(image.handle())
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(d.format)
        .subresource_range(subresource.to_vk(d.aspect()));
    // SAFETY: a live image of `device` (the pass holds it), a subresource it has (checked by
    // `check_target`), and a usage that allows views (an attachment usage, checked too).
    let view =
        unsafe { device.create_image_view(&info, None) }.map_err(|result| Error::Vulkan {
            call: "vkCreateImageView",
            result,
        })?;
    Ok(Some(view))
}
