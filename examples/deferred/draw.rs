//! What each of the deferred sample's raster passes records between `vkCmdBeginRendering` and
//! `vkCmdEndRendering`: plain functions of a command buffer, the pipelines, the scene and the
//! buffers they read. The library's `Render` passes call them from their draw closures; a
//! hand-written version of the frame calls them between its own barriers and
//! `vkCmdBeginRendering` (targets of the formats in [`Formats`](super::pipelines::Formats),
//! viewport and scissor over the whole target).
//!
//! # Safety (every function)
//!
//! `cmd` is recording, inside a rendering whose targets have the formats the pipeline was made
//! for, with the viewport and scissor set; the pipelines, the scene's buffers and the buffers
//! passed are alive until the commands complete, and what they read was made visible to the
//! stages that read it (the vertex input, index input, vertex shader and draw-indirect stages).

use super::pipelines::Pipelines;
use super::scene::{Scene, DRAW_STRIDE};
use vk_baton::ash::{self, vk};

/// The push constants of every raster pipeline: the target's size, the frame, and the view
/// (0: the camera, 1: the sun's shadow map).
pub fn push(size: [u32; 2], frame: u32, view: u32) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (i, v) in [size[0], size[1], frame, view].into_iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    out
}

/// Binds `pipeline`, the instances, the mesh buffers and the push constants.
///
/// # Safety
///
/// See the [module docs](self).
unsafe fn bind(
    dev: &ash::Device,
    cmd: vk::CommandBuffer,
    p: &Pipelines,
    scene: &Scene,
    pipeline: vk::Pipeline,
    push: &[u8; 16],
) {
    // SAFETY: the caller's promise.
    unsafe {
        dev.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
        dev.cmd_bind_descriptor_sets(
            cmd,
            vk::PipelineBindPoint::GRAPHICS,
            p.layout,
            0,
            &[p.set],
            &[],
        );
        dev.cmd_push_constants(
            cmd,
            p.layout,
            vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
            0,
            push,
        );
        dev.cmd_bind_vertex_buffers(cmd, 0, &[scene.vertices.handle()], &[0]);
        dev.cmd_bind_index_buffer(cmd, scene.indices.handle(), 0, vk::IndexType::UINT32);
    }
}

/// The sun's shadow map: every opaque instance, depth only, not culled (what the camera does
/// not see may still cast a shadow into view).
///
/// # Safety
///
/// See the [module docs](self).
pub unsafe fn shadow(
    dev: &ash::Device,
    cmd: vk::CommandBuffer,
    p: &Pipelines,
    scene: &Scene,
    size: [u32; 2],
) {
    // SAFETY: the caller's promise.
    unsafe {
        bind(dev, cmd, p, scene, p.shadow, &push(size, 0, 1));
        for (i, m) in scene.opaque_meshes.iter().enumerate() {
            dev.cmd_draw_indexed(
                cmd,
                m.index_count,
                1,
                m.first_index,
                m.vertex_offset,
                i as u32,
            );
        }
    }
}

/// The opaque instances the culling kept, from the `VkDrawIndexedIndirectCommand`s in
/// `draws` (one per opaque instance), with `pipeline` (`gbuffer` or `forward_depth`).
///
/// # Safety
///
/// See the [module docs](self); the culling's writes to `draws` are visible to
/// `DRAW_INDIRECT`; `multi_draw` only where the device has the multiDrawIndirect feature.
#[allow(clippy::too_many_arguments)]
pub unsafe fn culled(
    dev: &ash::Device,
    cmd: vk::CommandBuffer,
    p: &Pipelines,
    scene: &Scene,
    pipeline: vk::Pipeline,
    draws: vk::Buffer,
    size: [u32; 2],
    multi_draw: bool,
) {
    // SAFETY: the caller's promise.
    unsafe {
        bind(dev, cmd, p, scene, pipeline, &push(size, 0, 0));
        if multi_draw {
            dev.cmd_draw_indexed_indirect(cmd, draws, 0, scene.opaque, DRAW_STRIDE);
        } else {
            for i in 0..scene.opaque {
                let offset = (i * DRAW_STRIDE) as u64;
                dev.cmd_draw_indexed_indirect(cmd, draws, offset, 1, DRAW_STRIDE);
            }
        }
    }
}

/// The transparent instances, in the order the scene lists them, blended (premultiplied) over
/// what the layer holds, tested against the opaque depth (read-only).
///
/// # Safety
///
/// See the [module docs](self).
pub unsafe fn transparent(
    dev: &ash::Device,
    cmd: vk::CommandBuffer,
    p: &Pipelines,
    scene: &Scene,
    size: [u32; 2],
) {
    // SAFETY: the caller's promise.
    unsafe {
        bind(dev, cmd, p, scene, p.transparent, &push(size, 0, 0));
        for (i, m) in scene.transparent.iter().enumerate() {
            let instance = scene.opaque + i as u32;
            dev.cmd_draw_indexed(
                cmd,
                m.index_count,
                1,
                m.first_index,
                m.vertex_offset,
                instance,
            );
        }
    }
}

/// The UI overlay: eight rectangles from the shader's constants, alpha-blended.
///
/// # Safety
///
/// See the [module docs](self).
pub unsafe fn ui(dev: &ash::Device, cmd: vk::CommandBuffer, p: &Pipelines, size: [u32; 2]) {
    // SAFETY: the caller's promise (the UI pipeline reads no buffer).
    unsafe {
        dev.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, p.ui);
        dev.cmd_push_constants(
            cmd,
            p.layout,
            vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT,
            0,
            &push(size, 0, 0),
        );
        dev.cmd_draw(cmd, 6 * 8, 1, 0, 0);
    }
}
