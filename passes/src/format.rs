//! [`FormatSupport`]: format feature queries for passes that need them (blits, mipmaps).
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context) -> vk_baton_passes::Result<()> {
//! use vk_baton::ash::vk;
//! let support = vk_baton_passes::FormatSupport::new(ctx.instance(), ctx.physical_device());
//! let f = support.features(vk::Format::R8G8B8A8_UNORM, vk::ImageTiling::OPTIMAL);
//! assert!(f.contains(vk::FormatFeatureFlags::BLIT_SRC));
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use vk_baton::ImageDesc;

/// Queries `vkGetPhysicalDeviceFormatProperties` for one physical device. Cheap to clone.
///
/// ```no_run
/// # fn f(instance: &ash::Instance, pd: ash::vk::PhysicalDevice) {
/// let support = vk_baton_passes::FormatSupport::new(instance, pd);
/// # }
/// ```
#[derive(Clone)]
pub struct FormatSupport {
    instance: ash::Instance,
    physical_device: vk::PhysicalDevice,
}

impl std::fmt::Debug for FormatSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FormatSupport({:?})", self.physical_device)
    }
}

impl FormatSupport {
    /// Format queries on `physical_device` of `instance`.
    ///
    /// ```no_run
    /// # fn f(ctx: &vk_baton_context::Context) {
    /// let support = vk_baton_passes::FormatSupport::new(ctx.instance(), ctx.physical_device());
    /// # }
    /// ```
    pub fn new(instance: &ash::Instance, physical_device: vk::PhysicalDevice) -> Self {
        Self {
            instance: instance.clone(),
            physical_device,
        }
    }

    /// The format's properties.
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport) {
    /// let p = s.properties(ash::vk::Format::D32_SFLOAT);
    /// # }
    /// ```
    pub fn properties(&self, format: vk::Format) -> vk::FormatProperties {
        // SAFETY: a plain query on a live physical device of a live instance.
        unsafe {
            self.instance
                .get_physical_device_format_properties(self.physical_device, format)
        }
    }

    /// The features of `format` with `tiling` (optimal or linear).
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport) {
    /// use ash::vk;
    /// let f = s.features(vk::Format::R8G8B8A8_UNORM, vk::ImageTiling::OPTIMAL);
    /// # }
    /// ```
    pub fn features(&self, format: vk::Format, tiling: vk::ImageTiling) -> vk::FormatFeatureFlags {
        let p = self.properties(format);
        if tiling == vk::ImageTiling::LINEAR {
            p.linear_tiling_features
        } else {
            p.optimal_tiling_features
        }
    }

    /// `Ok(())` when `format` with `tiling` has every feature in `needed`, otherwise
    /// [`Error::FormatNotSupported`] naming the missing bits and `what` needed them.
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport) -> vk_baton_passes::Result<()> {
    /// use ash::vk;
    /// s.require(vk::Format::R8G8B8A8_UNORM, vk::ImageTiling::OPTIMAL, vk::FormatFeatureFlags::STORAGE_IMAGE, "my compute pass")?;
    /// # Ok(()) }
    /// ```
    pub fn require(
        &self,
        format: vk::Format,
        tiling: vk::ImageTiling,
        needed: vk::FormatFeatureFlags,
        what: &'static str,
    ) -> Result<()> {
        require_features(format, tiling, self.features(format, tiling), needed, what)
    }

    /// Checks that a blit from an image like `src` to one like `dst` with `filter` is
    /// supported: BLIT_SRC and BLIT_DST, SAMPLED_IMAGE_FILTER_LINEAR for a linear filter,
    /// matching depth/stencil formats with a nearest filter, and no mixing of integer and
    /// non-integer formats.
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport, a: &vk_baton::StImage, b: &vk_baton::StImage) -> vk_baton_passes::Result<()> {
    /// s.check_blit(a.desc(), b.desc(), ash::vk::Filter::LINEAR)?;
    /// # Ok(()) }
    /// ```
    pub fn check_blit(&self, src: &ImageDesc, dst: &ImageDesc, filter: vk::Filter) -> Result<()> {
        check_blit(
            src,
            self.features(src.format, src.tiling),
            dst,
            self.features(dst.format, dst.tiling),
            filter,
        )
    }
}

pub(crate) fn require_features(
    format: vk::Format,
    tiling: vk::ImageTiling,
    has: vk::FormatFeatureFlags,
    needed: vk::FormatFeatureFlags,
    what: &'static str,
) -> Result<()> {
    let missing = needed & !has;
    if missing.is_empty() {
        Ok(())
    } else {
        log::warn!("{what}: {format:?} ({tiling:?}) lacks {missing:?}");
        Err(Error::FormatNotSupported {
            format,
            tiling,
            missing,
            what,
        })
    }
}

#[derive(PartialEq, Eq, Debug, Clone, Copy)]
enum Numeric {
    Uint,
    Sint,
    Float,
}

fn numeric(format: vk::Format) -> Numeric {
    let name = format!("{format:?}");
    if name.contains("_UINT") {
        Numeric::Uint
    } else if name.contains("_SINT") {
        Numeric::Sint
    } else {
        Numeric::Float
    }
}

/// The pure part of [`FormatSupport::check_blit`], given both formats' features.
pub(crate) fn check_blit(
    src: &ImageDesc,
    src_features: vk::FormatFeatureFlags,
    dst: &ImageDesc,
    dst_features: vk::FormatFeatureFlags,
    filter: vk::Filter,
) -> Result<()> {
    let mut src_needed = vk::FormatFeatureFlags::BLIT_SRC;
    if filter == vk::Filter::LINEAR {
        src_needed |= vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
    } else if filter != vk::Filter::NEAREST {
        return Err(Error::InvalidInput(format!(
            "blit filter {filter:?} is not supported (use NEAREST or LINEAR)"
        )));
    }
    require_features(
        src.format,
        src.tiling,
        src_features,
        src_needed,
        "a blit source",
    )?;
    require_features(
        dst.format,
        dst.tiling,
        dst_features,
        vk::FormatFeatureFlags::BLIT_DST,
        "a blit destination",
    )?;
    if src.samples != vk::SampleCountFlags::TYPE_1 || dst.samples != vk::SampleCountFlags::TYPE_1 {
        return Err(Error::InvalidInput(
            "blits need single-sampled images".into(),
        ));
    }
    let depth = |d: &ImageDesc| d.aspect() != vk::ImageAspectFlags::COLOR;
    if depth(src) || depth(dst) {
        if src.format != dst.format {
            return Err(Error::UnsupportedFormat {
                format: dst.format,
                detail: format!(
                    "a depth/stencil blit needs the same format on both sides (source {:?})",
                    src.format
                ),
            });
        }
        if filter != vk::Filter::NEAREST {
            return Err(Error::UnsupportedFormat {
                format: src.format,
                detail: "depth/stencil blits must use the NEAREST filter".into(),
            });
        }
    }
    let (a, b) = (numeric(src.format), numeric(dst.format));
    if (a == Numeric::Float) != (b == Numeric::Float) || (a != Numeric::Float && a != b) {
        return Err(Error::UnsupportedFormat {
            format: dst.format,
            detail: format!("cannot blit between {:?} and {:?} (integer formats blit only to the same signedness)", src.format, dst.format),
        });
    }
    if a != Numeric::Float && filter == vk::Filter::LINEAR {
        return Err(Error::UnsupportedFormat {
            format: src.format,
            detail: "integer formats cannot be blitted with a LINEAR filter".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::FormatFeatureFlags as F;

    fn desc(format: vk::Format) -> ImageDesc {
        ImageDesc::new_2d(
            4,
            4,
            format,
            vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST,
        )
    }

    #[test]
    fn blit_needs_blit_features() {
        let rgba = desc(vk::Format::R8G8B8A8_UNORM);
        let all = F::BLIT_SRC | F::BLIT_DST | F::SAMPLED_IMAGE_FILTER_LINEAR;
        assert!(check_blit(&rgba, all, &rgba, all, vk::Filter::LINEAR).is_ok());
        let e = check_blit(&rgba, F::BLIT_DST, &rgba, all, vk::Filter::NEAREST).unwrap_err();
        assert!(
            matches!(e, Error::FormatNotSupported { missing, .. } if missing == F::BLIT_SRC),
            "{e}"
        );
        let e = check_blit(&rgba, F::BLIT_SRC, &rgba, all, vk::Filter::LINEAR).unwrap_err();
        assert!(
            matches!(e, Error::FormatNotSupported { missing, .. } if missing == F::SAMPLED_IMAGE_FILTER_LINEAR)
        );
        let e = check_blit(&rgba, all, &rgba, F::BLIT_SRC, vk::Filter::NEAREST).unwrap_err();
        assert!(matches!(e, Error::FormatNotSupported { missing, .. } if missing == F::BLIT_DST));
    }

    #[test]
    fn blit_format_classes() {
        let all = F::BLIT_SRC | F::BLIT_DST | F::SAMPLED_IMAGE_FILTER_LINEAR;
        let unorm = desc(vk::Format::R8G8B8A8_UNORM);
        let uint = desc(vk::Format::R8G8B8A8_UINT);
        let sint = desc(vk::Format::R8G8B8A8_SINT);
        let depth = desc(vk::Format::D32_SFLOAT);
        assert!(check_blit(&unorm, all, &uint, all, vk::Filter::NEAREST).is_err());
        assert!(check_blit(&uint, all, &sint, all, vk::Filter::NEAREST).is_err());
        assert!(check_blit(&uint, all, &uint, all, vk::Filter::NEAREST).is_ok());
        assert!(check_blit(&uint, all, &uint, all, vk::Filter::LINEAR).is_err());
        assert!(check_blit(&depth, all, &depth, all, vk::Filter::NEAREST).is_ok());
        assert!(check_blit(&depth, all, &depth, all, vk::Filter::LINEAR).is_err());
        assert!(check_blit(&depth, all, &unorm, all, vk::Filter::NEAREST).is_err());
    }
}
