//! The stencil row of the matrix, with no Vulkan objects: stencil written apart from depth on
//! one D32_SFLOAT_S8_UINT image, and the reads of either aspect.
//!
//! - **Write** (`Write::StencilAttachment`): a base pass clears both aspects and writes depth
//!   `k / 256` per pixel (from the source's word `k << 8 | r`); then a pass tests depth
//!   read-only (`DEPTH_READ_ONLY_OPTIMAL`) while it clears the stencil to a per-case value and
//!   draws each point with its own stencil reference `r` (op REPLACE): the stencil takes `r`
//!   where the point (depth 1/2) is nearer than the pixel's depth (`k > 128`), and keeps the
//!   clear value elsewhere. Two uses, one per aspect: depth read, stencil written (its old
//!   contents discarded: cleared over the whole area).
//! - **Reads**: a stencil test (eight draws, EQUAL on one bit each, adding that bit into the
//!   red of a case-coloured target) against both aspects read-only; a depth test against the
//!   depth aspect alone (the stencil plane, just written, is not touched: no barrier at all
//!   between the write and this read on one queue); a copy of the stencil aspect
//!   (`DEPTH_STENCIL_COPY_READ` narrowed to STENCIL, 64 bytes); sampled reads of the stencil
//!   aspect (a STENCIL view, `utexture2D`) in the fragment shader and in compute, narrowed to
//!   STENCIL. The middle read across families reads both aspects.

use super::cases::*;
use vk_baton::ash::vk;
use vk_baton::Access;

/// Depth steps above which the point (at depth 128 / 256) passes the LESS test.
pub const POINT_DEPTH_STEP: u32 = 128;

/// A source word: depth step `k` in bits 8..16, the point's stencil reference in 0..8.
pub fn source_word(r: &mut dyn FnMut() -> u32) -> u32 {
    (r() % 256) << 8 | (r() & 0xff)
}

/// The stencil the write clears to (kept where the depth test fails).
pub fn clear_stencil(p: &Pair) -> u32 {
    (clear_color(p) >> 8) & 0xff
}

/// What the image holds after the write, for source word `w`: the depth step, and the
/// reference where the point passed the depth test, else the cleared stencil.
pub fn written(p: &Pair, w: u32) -> u32 {
    let k = w >> 8;
    let s = if k > POINT_DEPTH_STEP {
        w & 0xff
    } else {
        clear_stencil(p)
    };
    k << 8 | s
}

/// The colour the stencil test's target is cleared to: the case's, with red 0 (the eight
/// bit draws add the stencil value there).
pub fn test_clear(p: &Pair) -> u32 {
    clear_color(p) & 0xffff_ff00
}

/// What a read gives back from an image holding `c` (`k << 8 | s` per pixel).
pub fn expected(p: &Pair, c: &[u32]) -> Vec<u32> {
    let s = |i: usize| c[i] & 0xff;
    match p.read {
        Read::StencilTest => (0..WORDS).map(|i| test_clear(p) | s(i)).collect(),
        // The depth test counts the 255 depths (j + 0.5) / 256 below k / 256: k of them.
        Read::DepthTest => c.iter().map(|w| w >> 8).collect(),
        // 64 stencil bytes, packed, in the first 16 words; the rest as the host zeroed them.
        Read::Copy => (0..WORDS)
            .map(|w| match w < WORDS / 4 {
                true => (0..4).map(|b| s(4 * w + b) << (8 * b)).sum(),
                false => 0,
            })
            .collect(),
        _ => (0..WORDS).map(s).collect(),
    }
}

/// The aspect a read of the stencil row is narrowed to (empty: both).
pub fn read_aspect(read: Read) -> vk::ImageAspectFlags {
    match read {
        Read::StencilTest => vk::ImageAspectFlags::empty(),
        Read::DepthTest => vk::ImageAspectFlags::DEPTH,
        _ => vk::ImageAspectFlags::STENCIL,
    }
}

/// Narrows the read's use of the data to its aspect.
pub fn narrow_read(p: &Pair, read: &mut PassSpec) {
    if p.kind() != Kind::Stencil {
        return;
    }
    for u in read.uses.iter_mut().filter(|u| u.slot == Slot::Data) {
        u.aspect = read_aspect(p.read);
    }
}

/// The write's passes: the base (both aspects, depth written from the source), then the
/// stencil write with depth tested read-only (a restatement of what `Render` declares for
/// `DepthTarget::read_only(..).stencil(StencilTarget::clear(..))`).
pub fn write_passes(p: &Pair) -> Vec<PassSpec> {
    use Slot::*;
    let base = spec(
        p,
        "base",
        Role::Writer,
        Rec::Base,
        &[
            (Data, Access::DEPTH_ATTACHMENT_WRITE, true),
            (Src, Access::FRAGMENT_SHADER_STORAGE_READ, false),
        ],
    );
    let mut write = spec(p, "write", Role::Writer, Rec::Write(p.write), &[]);
    let aspects = [
        (
            Access::DEPTH_ATTACHMENT_READ,
            false,
            vk::ImageAspectFlags::DEPTH,
        ),
        (
            Access::DEPTH_ATTACHMENT_WRITE,
            true,
            vk::ImageAspectFlags::STENCIL,
        ),
    ];
    for (access, discard, aspect) in aspects {
        write.uses.push(UseSpec {
            slot: Data,
            access,
            discard,
            aspect,
        });
    }
    vec![base, write]
}
