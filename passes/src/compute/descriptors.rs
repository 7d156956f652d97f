//! The descriptors of a [`ComputeDispatch`]: the pool, the views of its images, the writes,
//! and [`FrameSet`], the set an execution writes for itself when a binding is transient.
//!
//! A transient's `VkBuffer` or `VkImage` exists only while its graph records an execution
//! (null before the first), and each execution in flight may bind it to another object. A set
//! written once at build time cannot follow that, and a set a pending execution uses must not
//! be rewritten. So a pass with a transient binding writes a fresh set in every
//! [`Pass::record`](vk_baton::Pass::record), from the handles bound for that execution,
//! with views of its transient images made there too; the execution keeps the [`FrameSet`]
//! alive until its GPU work completes, and dropping it destroys those views and hands the
//! reset pool back for the next execution.

use super::{Binding, ComputeDispatch, Objects, Resource};
use crate::error::{Error, Result};
use ash::vk;
use std::sync::Arc;
use vk_baton::pass::Use;
use vk_baton::{ImageDesc, ImageRange, StImage};

impl Binding {
    /// Whether the bound buffer or image is a graph's transient.
    pub(super) fn is_transient(&self) -> bool {
        match &self.resource {
            Resource::Buffer { buffer, .. } => buffer.is_transient(),
            Resource::StorageImage { image, .. } | Resource::Sampled { image, .. } => {
                image.is_transient()
            }
        }
    }

    /// The image, the range its view covers (one mip level, every layer, for a storage image;
    /// everything for a sampled one) and the one aspect it shows; `None` for a buffer.
    pub(super) fn view_range(&self) -> Option<(&StImage, ImageRange, vk::ImageAspectFlags)> {
        match &self.resource {
            Resource::Buffer { .. } => None,
            Resource::StorageImage { image, level, .. } => Some((
                image,
                ImageRange::mip(*level, image.desc().array_layers),
                default_view_aspect(image.desc()),
            )),
            Resource::Sampled { image, aspect, .. } => {
                let d = image.desc();
                let all = ImageRange {
                    base_mip: 0,
                    mip_count: d.mip_levels,
                    base_layer: 0,
                    layer_count: d.array_layers,
                };
                Some((image, all, *aspect))
            }
        }
    }
}

/// The aspect a view of an image of `desc` shows unless the pass is told another: DEPTH for
/// a format with depth (a descriptor's view has one aspect: VUID-VkDescriptorImageInfo-
/// imageView-01976), otherwise the format's own (COLOR, or STENCIL of a stencil-only format).
pub(super) fn default_view_aspect(desc: &ImageDesc) -> vk::ImageAspectFlags {
    let all = desc.aspect();
    if all.contains(vk::ImageAspectFlags::DEPTH) {
        vk::ImageAspectFlags::DEPTH
    } else {
        all
    }
}

/// Narrows a use of `image` to the aspect its view shows, where that is not every aspect:
/// the pass reads the depth of a depth/stencil image, and the stencil stays free for others.
pub(super) fn narrow_to_view<'d>(
    u: Use<'d, Arc<StImage>>,
    image: &StImage,
    aspect: vk::ImageAspectFlags,
) -> Use<'d, Arc<StImage>> {
    if aspect == image.desc().aspect() {
        u
    } else {
        u.aspect(aspect)
    }
}

pub(super) fn dtype(r: &Resource) -> vk::DescriptorType {
    match r {
        Resource::Buffer { .. } => vk::DescriptorType::STORAGE_BUFFER,
        Resource::StorageImage { .. } => vk::DescriptorType::STORAGE_IMAGE,
        Resource::Sampled { .. } => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
    }
}

/// A pool with room for exactly one set of `bindings`.
pub(super) fn create_pool(
    device: &ash::Device,
    bindings: &[Binding],
) -> Result<vk::DescriptorPool> {
    let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
    for x in bindings {
        let ty = dtype(&x.resource);
        match sizes.iter_mut().find(|s| s.ty == ty) {
            Some(s) => s.descriptor_count += 1,
            None => sizes.push(vk::DescriptorPoolSize {
                ty,
                descriptor_count: 1,
            }),
        }
    }
    let info = vk::DescriptorPoolCreateInfo::default()
        .max_sets(1)
        .pool_sizes(&sizes);
    // SAFETY: valid create info on a live device; the caller destroys the pool.
    unsafe { device.create_descriptor_pool(&info, None) }
        .map_err(|e| Error::vk("vkCreateDescriptorPool", e))
}

/// The one set `pool` has room for, of layout `layout`.
pub(super) fn allocate_set(
    device: &ash::Device,
    pool: vk::DescriptorPool,
    layout: vk::DescriptorSetLayout,
) -> Result<vk::DescriptorSet> {
    let layouts = [layout];
    let info = vk::DescriptorSetAllocateInfo::default()
        .descriptor_pool(pool)
        .set_layouts(&layouts);
    // SAFETY: the pool is empty and sized for one set of this layout's bindings.
    let sets = unsafe { device.allocate_descriptor_sets(&info) }
        .map_err(|e| Error::vk("vkAllocateDescriptorSets", e))?;
    Ok(sets[0])
}

/// A view of `range` of `image`'s current `VkImage`; the caller destroys it.
pub(super) fn create_view(
    device: &ash::Device,
    image: &StImage,
    range: ImageRange,
    aspect: vk::ImageAspectFlags,
) -> Result<vk::ImageView> {
    if image.handle() == vk::Image::null() {
        return Err(unbound(image.name()));
    }
    let d = image.desc();
    let view_type = match (d.image_type, range.layer_count > 1) {
        (vk::ImageType::TYPE_1D, false) => vk::ImageViewType::TYPE_1D,
        (vk::ImageType::TYPE_1D, true) => vk::ImageViewType::TYPE_1D_ARRAY,
        (vk::ImageType::TYPE_3D, _) => vk::ImageViewType::TYPE_3D,
        (_, false) => vk::ImageViewType::TYPE_2D,
        (_, true) => vk::ImageViewType::TYPE_2D_ARRAY,
    };
    let info = vk::ImageViewCreateInfo::default()
        .image(image.handle())
        .view_type(view_type)
        .format(d.format)
        .subresource_range(range.to_vk(aspect));
    // SAFETY: a live image of this device (its handle is not null: an app's image, or a
    // transient bound for the execution being recorded) and a range inside it.
    unsafe { device.create_image_view(&info, None) }.map_err(|e| Error::vk("vkCreateImageView", e))
}

/// A resource without a Vulkan object: a transient outside the recording of an execution.
fn unbound(name: &str) -> Error {
    Error::InvalidInput(format!(
        "`{name}` has no Vulkan object: a transient is bound only while its graph records an \
         execution"
    ))
}

/// Writes every binding into `set`: buffers from their current handles, images with
/// `views[i]` for binding `i`, sampled images with their own sampler or `sampler`, in
/// `sampled_layout`.
pub(super) fn write_set(
    device: &ash::Device,
    set: vk::DescriptorSet,
    bindings: &[Binding],
    views: &[vk::ImageView],
    (sampler, sampled_layout): (vk::Sampler, vk::ImageLayout),
) -> Result<()> {
    // Built first, and not grown after: the writes point into them.
    let mut buffer_infos = Vec::with_capacity(bindings.len());
    let mut image_infos = Vec::with_capacity(bindings.len());
    for (x, &view) in bindings.iter().zip(views) {
        match &x.resource {
            Resource::Buffer { buffer, range, .. } => {
                if buffer.handle() == vk::Buffer::null() {
                    return Err(unbound(buffer.name()));
                }
                buffer_infos.push((
                    x.binding,
                    [vk::DescriptorBufferInfo {
                        buffer: buffer.handle(),
                        offset: range.offset,
                        range: range.size,
                    }],
                ));
            }
            Resource::StorageImage { .. } => image_infos.push((
                x.binding,
                vk::DescriptorType::STORAGE_IMAGE,
                [vk::DescriptorImageInfo {
                    sampler: vk::Sampler::null(),
                    image_view: view,
                    image_layout: vk::ImageLayout::GENERAL,
                }],
            )),
            Resource::Sampled { sampler: own, .. } => image_infos.push((
                x.binding,
                vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                [vk::DescriptorImageInfo {
                    sampler: own.unwrap_or(sampler),
                    image_view: view,
                    image_layout: sampled_layout,
                }],
            )),
        }
    }
    let mut writes: Vec<vk::WriteDescriptorSet<'_>> = Vec::with_capacity(bindings.len());
    for (binding, info) in &buffer_infos {
        writes.push(
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(*binding)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info),
        );
    }
    for (binding, ty, info) in &image_infos {
        writes.push(
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(*binding)
                .descriptor_type(*ty)
                .image_info(info),
        );
    }
    // SAFETY: no command buffer uses the set yet (it was just allocated); every buffer is
    // live (checked not null) and every view was made for these bindings.
    unsafe { device.update_descriptor_sets(&writes, &[]) };
    Ok(())
}

/// The descriptor set one execution of a pass with transient bindings wrote for itself, with
/// the views of its transient images. Kept alive by the execution until its GPU work
/// completes; dropping it destroys the views and hands the reset pool back to the pass.
pub(super) struct FrameSet {
    objects: Arc<Objects>,
    pool: vk::DescriptorPool,
    pub(super) set: vk::DescriptorSet,
    views: Vec<vk::ImageView>,
}

impl FrameSet {
    /// Allocates a set (from a pool an earlier execution handed back, or a new one) and
    /// writes every binding of `pass` from the handles bound for the execution being recorded.
    pub(super) fn new(pass: &ComputeDispatch) -> Result<FrameSet> {
        let o = &pass.objects;
        let spare = o.spare_pools.lock().pop();
        let pool = match spare {
            Some(pool) => pool,
            None => create_pool(&o.device, &pass.bindings)?,
        };
        // From here on, an error drops `frame`, which destroys what it holds.
        let mut frame = FrameSet {
            objects: o.clone(),
            pool,
            set: vk::DescriptorSet::null(),
            views: Vec::new(),
        };
        frame.set = allocate_set(&o.device, pool, o.set_layout)?;
        let mut views = o.views.clone();
        for (i, b) in pass.bindings.iter().enumerate() {
            if let Some((image, range, aspect)) = b.view_range().filter(|_| b.is_transient()) {
                let view = create_view(&o.device, image, range, aspect)?;
                frame.views.push(view);
                views[i] = view;
            }
        }
        let sampled = (o.sampler, o.sampled_layout);
        write_set(&o.device, frame.set, &pass.bindings, &views, sampled)?;
        log::trace!(
            "compute pass `{}`: wrote a set for this execution ({} transient view(s))",
            o.name,
            frame.views.len()
        );
        Ok(frame)
    }
}

impl Drop for FrameSet {
    fn drop(&mut self) {
        let device = &self.objects.device;
        // SAFETY: the execution that used the set and the views has completed (or never
        // reached the GPU): the graph drops what a pass keeps alive only then. The pool is
        // this frame's alone.
        let reset = unsafe {
            for v in self.views.drain(..) {
                device.destroy_image_view(v, None);
            }
            device.reset_descriptor_pool(self.pool, vk::DescriptorPoolResetFlags::empty())
        };
        match reset {
            Ok(()) => self.objects.spare_pools.lock().push(self.pool),
            Err(e) => {
                log::warn!("vkResetDescriptorPool failed ({e}): destroying the pool instead");
                // SAFETY: as above; nothing else holds the pool.
                unsafe { device.destroy_descriptor_pool(self.pool, None) };
            }
        }
    }
}
