//! Shared helpers for the GPU tests: a validated context, tiny copy passes and a compute kit.
#![allow(dead_code)]

pub mod gate;

use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Access, Declare, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::Context;
// For the tests that allow a message or skip without something; not every binary does.
#[allow(unused_imports)]
pub use vk_baton_context::{
    messages::{
        COPY_IN_GENERAL_LAYOUT, FENCE_WAIT_FORGETS_OTHER_QUEUES, TIMELINE_WAIT_FORGETS_OTHER_QUEUES,
    },
    requirements::Need,
};

/// A context with validation and synchronization validation on. A missing device panics:
/// GPU tests fail, never skip, without one.
pub fn ctx() -> Context {
    let _ = env_logger::builder().is_test(true).try_init();
    Context::new_for_tests().expect("GPU tests need a Vulkan 1.3 device and the validation layer (install mesa-vulkan-drivers and vulkan-validationlayers)")
}

/// Asserts that validation reported nothing but the messages the test allowed
/// ([`Context::allow_message`]).
///
/// A multi-family test whose frames meet one of the validation layer's two known false
/// positives allows it by name, in one line, before it checks:
/// `ctx.allow_message(FENCE_WAIT_FORGETS_OTHER_QUEUES)` (a host fence wait, then work that a
/// semaphore chain through another queue orders) or
/// `ctx.allow_message(TIMELINE_WAIT_FORGETS_OTHER_QUEUES)` (a host wait or counter read on a
/// timeline, the same). Each covers its message only on the layer versions known to report it
/// (see `docs/testing.md`), so on any other layer the test still fails on that message. No
/// test allows them unless it says so: a message nobody expected still fails every test.
pub fn assert_clean(ctx: &Context) {
    let m = ctx.unexpected_messages();
    assert!(m == 0, "{m}");
}

/// `vkCmdCopyBuffer` of the whole of `src` into `dst`.
pub struct CopyBuffer {
    pub src: Arc<StBuffer>,
    pub dst: Arc<StBuffer>,
}

impl Pass for CopyBuffer {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let region = vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size: self.src.size().min(self.dst.size()),
        };
        // SAFETY: both buffers are alive and in the declared states.
        unsafe {
            r.device()
                .cmd_copy_buffer(r.cmd(), self.src.handle(), self.dst.handle(), &[region])
        };
        Ok(())
    }
}

fn image_copy(img: &StImage) -> vk::BufferImageCopy {
    let e = img.desc().extent;
    vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: img.desc().aspect(),
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: e,
    }
}

/// `vkCmdCopyBufferToImage` into mip 0, layer 0 (the whole image must be that).
pub struct BufferToImage {
    pub src: Arc<StBuffer>,
    pub dst: Arc<StImage>,
}

impl Pass for BufferToImage {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let layout = r.layout(Access::TRANSFER_WRITE);
        // SAFETY: the image is in `layout`, as declared.
        unsafe {
            r.device().cmd_copy_buffer_to_image(
                r.cmd(),
                self.src.handle(),
                self.dst.handle(),
                layout,
                &[image_copy(&self.dst)],
            )
        };
        Ok(())
    }
}

/// `vkCmdCopyImageToBuffer` of mip 0, layer 0.
pub struct ImageToBuffer {
    pub src: Arc<StImage>,
    pub dst: Arc<StBuffer>,
}

impl Pass for ImageToBuffer {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.src, Access::TRANSFER_READ);
        d.uses(&self.dst, Access::TRANSFER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let layout = r.layout(Access::TRANSFER_READ);
        // SAFETY: the image is in `layout`, as declared.
        unsafe {
            r.device().cmd_copy_image_to_buffer(
                r.cmd(),
                self.src.handle(),
                layout,
                self.dst.handle(),
                &[image_copy(&self.src)],
            )
        };
        Ok(())
    }
}

/// Records nothing; makes the buffer's GPU writes visible to host reads after the fence.
pub struct HostRead(pub Arc<StBuffer>);

impl Pass for HostRead {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.0, Access::HOST_READ);
    }
    fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        Ok(())
    }
    fn replay_key(&self) -> Option<vk_baton::pass::ReplayKey> {
        // SAFETY: it records no command.
        Some(unsafe { vk_baton::pass::ReplayKey::new(0) })
    }
}

/// A compute pipeline with storage descriptors (buffers or images) at set 0, bindings 0, 1,
/// ..., and 8 bytes of push constants.
pub struct Compute {
    device: vk_baton::ash::Device,
    pub set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pub pipeline: vk::Pipeline,
    pub pool: vk::DescriptorPool,
}

impl Compute {
    /// One descriptor of `kind` at binding 0.
    pub fn new(ctx: &Context, spirv: &[u8], kind: vk::DescriptorType) -> Compute {
        Self::with_bindings(ctx, spirv, &[kind])
    }

    /// Binding `i` holds one descriptor of `kinds[i]`.
    pub fn with_bindings(ctx: &Context, spirv: &[u8], kinds: &[vk::DescriptorType]) -> Compute {
        let d = ctx.device();
        let code = vk_baton_shaders::words(spirv);
        let binding: Vec<_> = (0u32..)
            .zip(kinds)
            .map(|(b, &kind)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(kind)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: 8,
        }];
        // SAFETY: plain object creation with valid create infos; destroyed in Drop.
        unsafe {
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                    None,
                )
                .unwrap();
            let layouts = [set_layout];
            let layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&layouts)
                        .push_constant_ranges(&push),
                    None,
                )
                .unwrap();
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout);
            let pipeline = d
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)
                .unwrap()[0];
            d.destroy_shader_module(module, None);
            let sizes: Vec<_> = kinds
                .iter()
                .map(|&ty| vk::DescriptorPoolSize {
                    ty,
                    descriptor_count: 16,
                })
                .collect();
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(16)
                        .pool_sizes(&sizes),
                    None,
                )
                .unwrap();
            Compute {
                device: d.clone(),
                set_layout,
                layout,
                pipeline,
                pool,
            }
        }
    }

    /// A descriptor set pointing at `buffer`.
    pub fn buffer_set(&self, buffer: &StBuffer) -> vk::DescriptorSet {
        let set = self.alloc();
        let info = [vk::DescriptorBufferInfo {
            buffer: buffer.handle(),
            offset: 0,
            range: vk::WHOLE_SIZE,
        }];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info);
        // SAFETY: the set is not in use.
        unsafe { self.device.update_descriptor_sets(&[w], &[]) };
        set
    }

    /// A descriptor set whose binding `i` covers the byte range `buffers[i].1` of the storage
    /// buffer `buffers[i].0`.
    pub fn buffers_set(&self, buffers: &[(&StBuffer, std::ops::Range<u64>)]) -> vk::DescriptorSet {
        let set = self.alloc();
        let infos: Vec<_> = buffers
            .iter()
            .map(|(b, bytes)| {
                [vk::DescriptorBufferInfo {
                    buffer: b.handle(),
                    offset: bytes.start,
                    range: bytes.end - bytes.start,
                }]
            })
            .collect();
        let writes: Vec<_> = (0u32..)
            .zip(&infos)
            .map(|(b, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: the set is not in use.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
        set
    }

    /// A descriptor set pointing at a view of `image` (GENERAL layout); the view is returned
    /// for the caller to keep alive and destroy.
    pub fn image_set(&self, image: &StImage) -> (vk::DescriptorSet, vk::ImageView) {
        let set = self.alloc();
        let vi = vk::ImageViewCreateInfo::default()
            .image(image.handle())
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(image.desc().format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                base_mip_level: 0,
                level_count: 1,
                base_array_layer: 0,
                layer_count: 1,
            });
        // SAFETY: valid create info.
        let view = unsafe { self.device.create_image_view(&vi, None) }.unwrap();
        let info = [vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: view,
            image_layout: vk::ImageLayout::GENERAL,
        }];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&info);
        // SAFETY: the set is not in use.
        unsafe { self.device.update_descriptor_sets(&[w], &[]) };
        (set, view)
    }

    fn alloc(&self) -> vk::DescriptorSet {
        let layouts = [self.set_layout];
        // SAFETY: the pool has room (tests use few sets).
        unsafe {
            self.device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(self.pool)
                    .set_layouts(&layouts),
            )
        }
        .unwrap()[0]
    }

    /// Binds the pipeline and set, pushes `push` and dispatches.
    pub fn dispatch(
        &self,
        r: &Recorder<'_>,
        set: vk::DescriptorSet,
        push: [u32; 2],
        groups: [u32; 3],
    ) {
        let d = r.device();
        let bytes: Vec<u8> = push.iter().flat_map(|v| v.to_le_bytes()).collect();
        // SAFETY: every object is alive; the command buffer is recording.
        unsafe {
            d.cmd_bind_pipeline(r.cmd(), vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(
                r.cmd(),
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[set],
                &[],
            );
            d.cmd_push_constants(
                r.cmd(),
                self.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &bytes,
            );
            d.cmd_dispatch(r.cmd(), groups[0], groups[1], groups[2]);
        }
    }
}

impl Drop for Compute {
    fn drop(&mut self) {
        // SAFETY: tests wait for their executions before dropping the kit.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Fills a storage buffer with `data[i] = i * 3 + seed` (u32s), `repeat` times.
pub struct Fill<'a> {
    pub kit: &'a Compute,
    pub buf: Arc<StBuffer>,
    pub set: vk::DescriptorSet,
    pub seed: u32,
    pub repeat: u32,
}

impl Pass for Fill<'_> {
    fn declare(&self, d: &mut Declare<'_>) {
        d.uses(&self.buf, Access::COMPUTE_SHADER_WRITE).discard();
    }
    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let count = (self.buf.size() / 4) as u32;
        for i in 0..self.repeat {
            if i > 0 {
                // Repeats overwrite the same words: order them (a pass's own hazards are its job).
                let mb = [vk::MemoryBarrier2::default()
                    .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                    .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                    .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                    .dst_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)];
                // SAFETY: recording.
                unsafe {
                    r.device().cmd_pipeline_barrier2(
                        r.cmd(),
                        &vk::DependencyInfo::default().memory_barriers(&mb),
                    )
                };
            }
            self.kit
                .dispatch(r, self.set, [count, self.seed], [count.div_ceil(64), 1, 1]);
        }
        Ok(())
    }
}

/// Expected contents after [`Fill`].
pub fn fill_expected(count: usize, seed: u32) -> Vec<u8> {
    (0..count as u32)
        .flat_map(|i| (i * 3 + seed).to_le_bytes())
        .collect()
}
