//! Clears and fills: [`ClearColor`], [`ClearDepthStencil`] and [`FillBuffer`].
//!
//! A clear of whole subresources declares them discarded: the old contents are not needed,
//! so the graph transitions from UNDEFINED and never transfers ownership for them.
//!
//! ```no_run
//! # fn f(graph: &vk_baton::Graph, gfx: &vk_baton::Queue, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
//! use vk_baton::ash::vk;
//! let mut clear = vk_baton_passes::ClearColor::new(img, vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] })?;
//! graph.record().insert_pass("clear", &mut clear, gfx).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::util::check_bytes;
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferRange, Declare, ImageRange, Pass, Recorder, StBuffer, StImage};

fn check_ranges(img: &StImage, ranges: &[ImageRange]) -> Result<()> {
    let d = img.desc();
    if ranges.is_empty() {
        return Err(Error::InvalidRegion(format!(
            "clear of `{}`: no ranges",
            img.name()
        )));
    }
    for (i, r) in ranges.iter().enumerate() {
        if !r.fits(d.mip_levels, d.array_layers) {
            return Err(Error::InvalidRegion(format!(
                "clear of `{}`: {r:?} does not fit {} mips x {} layers",
                img.name(),
                d.mip_levels,
                d.array_layers
            )));
        }
        if ranges[..i].iter().any(|o| o.overlaps(r)) {
            return Err(Error::InvalidRegion(format!(
                "clear of `{}`: ranges overlap",
                img.name()
            )));
        }
    }
    if !d.usage.contains(vk::ImageUsageFlags::TRANSFER_DST) {
        return Err(Error::InvalidInput(format!(
            "image `{}` lacks usage TRANSFER_DST",
            img.name()
        )));
    }
    Ok(())
}

fn whole(img: &StImage) -> ImageRange {
    ImageRange {
        base_mip: 0,
        mip_count: img.desc().mip_levels,
        base_layer: 0,
        layer_count: img.desc().array_layers,
    }
}

/// Clears mip levels and layers of a color image (`vkCmdClearColorImage`). Runs on graphics
/// or compute queues; declares the cleared ranges as discarded [`Access::CLEAR_COLOR_WRITE`]s.
///
/// ```no_run
/// # fn f(img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// use vk_baton::{ash::vk, ImageRange};
/// let clear = vk_baton_passes::ClearColor::ranges(img, vk::ClearColorValue { uint32: [1, 2, 3, 4] },
///     &[ImageRange::mip(0, 1)])?;
/// # Ok(()) }
/// ```
pub struct ClearColor {
    img: Arc<StImage>,
    value: vk::ClearColorValue,
    ranges: Vec<ImageRange>,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl std::fmt::Debug for ClearColor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: every bit pattern is a valid `[u32; 4]`.
        let bits = unsafe { self.value.uint32 };
        write!(
            f,
            "ClearColor(`{}`, {bits:#x?}, {:?})",
            self.img.name(),
            self.ranges
        )
    }
}

impl ClearColor {
    /// Clears every mip level and layer to `value`.
    ///
    /// ```no_run
    /// # fn f(img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let clear = vk_baton_passes::ClearColor::new(img, vk::ClearColorValue { float32: [1.0; 4] })?;
    /// # Ok(()) }
    /// ```
    pub fn new(img: Arc<StImage>, value: vk::ClearColorValue) -> Result<Self> {
        let r = whole(&img);
        Self::ranges(img, value, &[r])
    }

    /// Clears the given (non-overlapping) ranges to `value`. Fails for depth/stencil
    /// formats, ranges outside the image, or missing TRANSFER_DST usage.
    ///
    /// ```no_run
    /// # fn f(img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::{ash::vk, ImageRange};
    /// let clear = vk_baton_passes::ClearColor::ranges(img, vk::ClearColorValue { float32: [0.0; 4] }, &[ImageRange::mip(1, 1)])?;
    /// # Ok(()) }
    /// ```
    pub fn ranges(
        img: Arc<StImage>,
        value: vk::ClearColorValue,
        ranges: &[ImageRange],
    ) -> Result<Self> {
        if img.desc().aspect() != vk::ImageAspectFlags::COLOR {
            return Err(Error::UnsupportedFormat {
                format: img.desc().format,
                detail: "ClearColor needs a color format; use ClearDepthStencil".into(),
            });
        }
        check_ranges(&img, ranges)?;
        Ok(Self {
            generation: Generation::new(),
            img,
            value,
            ranges: ranges.to_vec(),
        })
    }
}

impl Pass for ClearColor {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        for r in &self.ranges {
            d.uses(&self.img, Access::CLEAR_COLOR_WRITE)
                .range(*r)
                .discard();
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!("{}: clear color `{}`", r.pass_name(), self.img.name());
        let ranges: Vec<vk::ImageSubresourceRange> = self
            .ranges
            .iter()
            .map(|x| x.to_vk(vk::ImageAspectFlags::COLOR))
            .collect();
        let layout = r.layout(Access::CLEAR_COLOR_WRITE);
        // SAFETY: the image is alive and the graph put the declared ranges in `layout` before
        // this pass.
        unsafe {
            r.device().cmd_clear_color_image(
                r.cmd(),
                self.img.handle(),
                layout,
                &self.value,
                &ranges,
            )
        };
        Ok(())
    }
}

/// Clears mip levels and layers of a depth and/or stencil image
/// (`vkCmdClearDepthStencilImage`). Runs on graphics queues; clears every aspect the format
/// has, so the cleared ranges are declared discarded.
///
/// ```no_run
/// # fn f(depth: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// use vk_baton::ash::vk;
/// let clear = vk_baton_passes::ClearDepthStencil::new(depth, vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 })?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ClearDepthStencil {
    img: Arc<StImage>,
    value: vk::ClearDepthStencilValue,
    ranges: Vec<ImageRange>,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl ClearDepthStencil {
    /// Clears every mip level and layer.
    ///
    /// ```no_run
    /// # fn f(depth: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::ash::vk;
    /// let clear = vk_baton_passes::ClearDepthStencil::new(depth, vk::ClearDepthStencilValue { depth: 0.0, stencil: 0 })?;
    /// # Ok(()) }
    /// ```
    pub fn new(img: Arc<StImage>, value: vk::ClearDepthStencilValue) -> Result<Self> {
        let r = whole(&img);
        Self::ranges(img, value, &[r])
    }

    /// Clears the given (non-overlapping) ranges. Fails for color formats, a depth value
    /// outside `0.0..=1.0`, ranges outside the image, or missing TRANSFER_DST usage.
    ///
    /// ```no_run
    /// # fn f(depth: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// use vk_baton::{ash::vk, ImageRange};
    /// let clear = vk_baton_passes::ClearDepthStencil::ranges(depth, vk::ClearDepthStencilValue { depth: 0.5, stencil: 7 }, &[ImageRange::mip(0, 1)])?;
    /// # Ok(()) }
    /// ```
    pub fn ranges(
        img: Arc<StImage>,
        value: vk::ClearDepthStencilValue,
        ranges: &[ImageRange],
    ) -> Result<Self> {
        if img.desc().aspect() == vk::ImageAspectFlags::COLOR {
            return Err(Error::UnsupportedFormat {
                format: img.desc().format,
                detail: "ClearDepthStencil needs a depth/stencil format; use ClearColor".into(),
            });
        }
        if !(0.0..=1.0).contains(&value.depth) {
            return Err(Error::InvalidInput(format!(
                "depth clear value {} is outside 0.0..=1.0",
                value.depth
            )));
        }
        check_ranges(&img, ranges)?;
        Ok(Self {
            generation: Generation::new(),
            img,
            value,
            ranges: ranges.to_vec(),
        })
    }
}

impl Pass for ClearDepthStencil {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        for r in &self.ranges {
            d.uses(&self.img, Access::CLEAR_DEPTH_STENCIL_WRITE)
                .range(*r)
                .discard();
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: clear depth/stencil `{}`",
            r.pass_name(),
            self.img.name()
        );
        let aspect = self.img.desc().aspect();
        let ranges: Vec<vk::ImageSubresourceRange> =
            self.ranges.iter().map(|x| x.to_vk(aspect)).collect();
        let layout = r.layout(Access::CLEAR_DEPTH_STENCIL_WRITE);
        // SAFETY: the image is alive and the graph put the declared ranges in `layout` before
        // this pass.
        unsafe {
            r.device().cmd_clear_depth_stencil_image(
                r.cmd(),
                self.img.handle(),
                layout,
                &self.value,
                &ranges,
            )
        };
        Ok(())
    }
}

/// Fills a byte range of a buffer with a repeated 32-bit word (`vkCmdFillBuffer`). Works on
/// any queue; declares the range as a discarded TRANSFER_WRITE.
///
/// ```no_run
/// # fn f(b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
/// let fill = vk_baton_passes::FillBuffer::range(b, 64, 128, 0xdead_beef)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FillBuffer {
    buf: Arc<StBuffer>,
    range: BufferRange,
    data: u32,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl FillBuffer {
    /// Fills the whole buffer (its size must be a multiple of 4).
    ///
    /// ```no_run
    /// # fn f(b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let zero = vk_baton_passes::FillBuffer::whole(b, 0)?;
    /// # Ok(()) }
    /// ```
    pub fn whole(buf: Arc<StBuffer>, data: u32) -> Result<Self> {
        let size = buf.size();
        Self::range(buf, 0, size, data)
    }

    /// Fills `size` bytes from `offset`; both must be multiples of 4 and lie in the buffer.
    ///
    /// ```no_run
    /// # fn f(b: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
    /// let fill = vk_baton_passes::FillBuffer::range(b, 0, 16, 7)?;
    /// # Ok(()) }
    /// ```
    pub fn range(buf: Arc<StBuffer>, offset: u64, size: u64, data: u32) -> Result<Self> {
        if offset % 4 != 0 || size % 4 != 0 {
            return Err(Error::InvalidRegion(format!(
                "FillBuffer: offset {offset} and size {size} must be multiples of 4"
            )));
        }
        check_bytes("FillBuffer", offset, size, buf.size())?;
        if !buf
            .desc()
            .usage
            .contains(vk::BufferUsageFlags::TRANSFER_DST)
        {
            return Err(Error::InvalidInput(format!(
                "buffer `{}` lacks usage TRANSFER_DST",
                buf.name()
            )));
        }
        Ok(Self {
            generation: Generation::new(),
            buf,
            range: BufferRange { offset, size },
            data,
        })
    }
}

impl Pass for FillBuffer {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        // vkCmdFillBuffer is a "transfer" command: the transfer stages, not only CLEAR.
        d.uses(&self.buf, Access::TRANSFER_WRITE)
            .range(self.range)
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: fill `{}` {:?} with {:#x}",
            r.pass_name(),
            self.buf.name(),
            self.range,
            self.data
        );
        // SAFETY: the buffer is alive, the range was checked (aligned, inside), and the graph
        // ordered it before this pass.
        unsafe {
            r.device().cmd_fill_buffer(
                r.cmd(),
                self.buf.handle(),
                self.range.offset,
                self.range.size,
                self.data,
            )
        };
        Ok(())
    }
}
