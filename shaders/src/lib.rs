//! SPIR-V of the compute shaders used by vk-baton's examples and tests.
//!
//! The GLSL sources live beside this crate (`shaders/*.comp`); `build.rs` compiles them with
//! `glslangValidator` (Debian/Ubuntu package `glslang-tools`). Library users never need it:
//! only vk-baton's own examples and tests depend on this crate.

/// `pattern.comp`: a Mandelbrot set written to `layout(set 0, binding 0, rgba8) image2D`,
/// workgroups of 8×8.
pub const PATTERN_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pattern.comp.spv"));

/// `fill.comp`: `data[i] = i * 3 + seed` into `layout(set 0, binding 0) buffer`, push constants
/// `{ uint count; uint seed; }`, workgroups of 64.
pub const FILL_COMP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fill.comp.spv"));

/// SPIR-V bytes as 32-bit words (what `vkCreateShaderModule` takes).
///
/// ```
/// let words = vk_baton_shaders::words(vk_baton_shaders::FILL_COMP);
/// assert_eq!(words[0], 0x0723_0203); // the SPIR-V magic number
/// ```
pub fn words(spirv: &[u8]) -> Vec<u32> {
    spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
