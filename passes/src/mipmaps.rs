//! [`GenerateMipmaps`]: fills mip levels 1.. of an image from level 0 with a chain of blits.
//!
//! What the graph sees (the declared uses, which are also the state the pass leaves):
//!
//! - level 0, every layer: [`Access::BLIT_READ`] (TRANSFER_SRC_OPTIMAL);
//! - levels 1.., every layer: [`Access::MIP_CHAIN_BLIT_READ_WRITE`] (read and written at the
//!   BLIT stage, left in TRANSFER_SRC_OPTIMAL), old contents discarded.
//!
//! So every level ends in TRANSFER_SRC_OPTIMAL (GENERAL under
//! [`LayoutPolicy::General`](vk_baton::access::LayoutPolicy)), and the next user's barrier
//! chains from the BLIT stage with TRANSFER_WRITE as the write to make available. Inside the
//! pass, each level goes TRANSFER_SRC → (discarded) TRANSFER_DST_OPTIMAL before it is written
//! and back to TRANSFER_SRC_OPTIMAL after, with the pass's own barriers on that level alone;
//! the transition of level *i* back to SRC and of level *i+1* to DST share one barrier
//! command. Under `General` these barriers change no layout but still order each write before
//! the next blit reads it.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
//! use vk_baton::ash::vk;
//! let support = vk_baton_passes::FormatSupport::new(ctx.instance(), ctx.physical_device());
//! let mut mips = vk_baton_passes::GenerateMipmaps::new(&support, img, vk::Filter::LINEAR)?;
//! let graph = ctx.graph()?;
//! graph.record().insert_pass("mips", &mut mips, ctx.graphics()).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::blit::level_blit;
use crate::error::{Error, Result};
use crate::format::FormatSupport;
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, Declare, ImageRange, Pass, Recorder, StImage};

/// Generates every mip level of an image from level 0 (all layers), by blits.
///
/// ```no_run
/// # fn f(s: &vk_baton_passes::FormatSupport, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// let mips = vk_baton_passes::GenerateMipmaps::new(s, img, ash::vk::Filter::LINEAR)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct GenerateMipmaps {
    img: Arc<StImage>,
    filter: vk::Filter,
    /// Its replay key: see [`Pass::replay_key`].
    generation: Generation,
}

impl GenerateMipmaps {
    /// Checks the format (BLIT_SRC, BLIT_DST, and linear filtering for a LINEAR filter), the
    /// usage (TRANSFER_SRC and TRANSFER_DST) and that the image has at least two levels.
    ///
    /// ```no_run
    /// # fn f(s: &vk_baton_passes::FormatSupport, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
    /// let mips = vk_baton_passes::GenerateMipmaps::new(s, img, ash::vk::Filter::NEAREST)?;
    /// # Ok(()) }
    /// ```
    pub fn new(support: &FormatSupport, img: Arc<StImage>, filter: vk::Filter) -> Result<Self> {
        let d = img.desc();
        if d.mip_levels < 2 {
            return Err(Error::InvalidInput(format!(
                "GenerateMipmaps: `{}` has only one mip level",
                img.name()
            )));
        }
        if d.image_type != vk::ImageType::TYPE_2D {
            return Err(Error::InvalidInput(format!(
                "GenerateMipmaps: `{}` is not a 2D image",
                img.name()
            )));
        }
        let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        if !d.usage.contains(usage) {
            return Err(Error::InvalidInput(format!(
                "GenerateMipmaps: `{}` needs usage TRANSFER_SRC | TRANSFER_DST",
                img.name()
            )));
        }
        support.check_blit(d, d, filter)?;
        Ok(Self {
            img,
            filter,
            generation: Generation::new(),
        })
    }
}

fn level_barrier(
    img: &StImage,
    level: u32,
    old: vk::ImageLayout,
    new: vk::ImageLayout,
    dst_access: vk::AccessFlags2,
) -> vk::ImageMemoryBarrier2<'static> {
    let d = img.desc();
    vk::ImageMemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::BLIT)
        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::BLIT)
        .dst_access_mask(dst_access)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(img.handle())
        .subresource_range(ImageRange::mip(level, d.array_layers).to_vk(d.aspect()))
}

impl Pass for GenerateMipmaps {
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pass's fields are set when it is made and never change, and its
        // commands name only the resources it declares (the graph checks their identity).
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        let desc = self.img.desc();
        d.uses(&self.img, Access::BLIT_READ)
            .range(ImageRange::mip(0, desc.array_layers));
        d.uses(&self.img, Access::MIP_CHAIN_BLIT_READ_WRITE)
            .range(ImageRange {
                base_mip: 1,
                mip_count: desc.mip_levels - 1,
                base_layer: 0,
                layer_count: desc.array_layers,
            })
            .discard();
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let desc = self.img.desc().clone();
        let levels = desc.mip_levels;
        log::trace!(
            "{}: {} mip levels of `{}`",
            r.pass_name(),
            levels,
            self.img.name()
        );
        let dev = r.device().clone();
        let cmd = r.cmd();
        let barrier = |b: &[vk::ImageMemoryBarrier2<'_>]| {
            // SAFETY: the image is alive; the barriers cover only its levels 1.., which the
            // graph left in `src` (old contents discarded) and which only this pass touches
            // until it ends.
            unsafe {
                dev.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().image_memory_barriers(b),
                )
            };
        };
        // TRANSFER_SRC/DST_OPTIMAL, or both GENERAL under the graph's layout policy: then
        // the barriers below change no layout but still order each level's write before
        // the next blit reads it.
        let (src, dst) = (
            r.layout(Access::MIP_CHAIN_BLIT_READ_WRITE),
            r.layout(Access::BLIT_WRITE),
        );
        for level in 1..levels {
            // Level `level` becomes a blit destination (its old contents are discarded);
            // the level just written becomes a blit source.
            let to_dst = level_barrier(
                &self.img,
                level,
                vk::ImageLayout::UNDEFINED,
                dst,
                vk::AccessFlags2::TRANSFER_WRITE,
            );
            if level == 1 {
                barrier(&[to_dst]);
            } else {
                let back = level_barrier(
                    &self.img,
                    level - 1,
                    dst,
                    src,
                    vk::AccessFlags2::TRANSFER_READ,
                );
                barrier(&[back, to_dst]);
            }
            let region = level_blit(&desc, level);
            // SAFETY: level-1 is in `src` (declared for level 0, moved back above for the
            // others) and `level` in `dst`; the format and filter were checked at
            // construction.
            unsafe {
                r.device().cmd_blit_image(
                    r.cmd(),
                    self.img.handle(),
                    src,
                    self.img.handle(),
                    dst,
                    &[region],
                    self.filter,
                )
            };
        }
        // The last level back to the declared layout; its writes visible to blit reads and
        // writes, as declared.
        barrier(&[level_barrier(
            &self.img,
            levels - 1,
            dst,
            src,
            vk::AccessFlags2::TRANSFER_READ | vk::AccessFlags2::TRANSFER_WRITE,
        )]);
        Ok(())
    }
}
