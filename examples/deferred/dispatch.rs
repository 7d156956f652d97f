//! [`Dispatch`]: the deferred sample's compute pass. One shader, its bindings (storage images,
//! sampled images, storage buffers), a push constant block and a grid of 8×8 workgroups.
//!
//! Transient images are other `VkImage`s from one execution to the next (the graph keeps a set
//! of them per execution in flight), so the descriptors cannot be written once, as
//! `vk_baton_passes::ComputeDispatch` writes them. Each execution takes the next of a few
//! descriptor sets in turn and writes it with the views of that execution
//! ([`StImage::view`]). A set is used again only `SETS` executions later, once the one that used
//! it has completed: the sample keeps fewer executions than that in flight.

use std::sync::Arc;
use support::vkerr;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::{self, vk};
use vk_baton::{Access, Declare, Pass, Recorder, StBuffer, StImage};

/// Descriptor sets each pass cycles through: more than the executions the sample keeps in
/// flight.
pub const SETS: usize = 3;

/// How a shader binding uses its resource.
#[derive(Clone)]
pub enum Bind {
    /// A storage image the shader writes whole (`writeonly`): old contents not needed.
    Write(Arc<StImage>),
    /// A sampled image (`sampler2D`): `linear` filtering, else nearest (`texelFetch` only).
    Sampled(Arc<StImage>, bool),
    /// A storage buffer the shader writes whole.
    WriteBuffer(Arc<StBuffer>),
    /// A storage buffer the shader reads.
    ReadBuffer(Arc<StBuffer>),
}

impl Bind {
    fn descriptor_type(&self) -> vk::DescriptorType {
        match self {
            Bind::Write(_) => vk::DescriptorType::STORAGE_IMAGE,
            Bind::Sampled(..) => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            Bind::WriteBuffer(_) | Bind::ReadBuffer(_) => vk::DescriptorType::STORAGE_BUFFER,
        }
    }
}

/// The two samplers every pass shares; destroyed when the last pass and execution let go.
pub struct Samplers {
    device: ash::Device,
    pub linear: vk::Sampler,
    pub nearest: vk::Sampler,
}

impl Samplers {
    pub fn new(device: &ash::Device) -> vk_baton::Result<Arc<Self>> {
        let make = |filter| {
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(filter)
                .min_filter(filter)
                .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
            // SAFETY: a valid create info on a live device.
            unsafe { device.create_sampler(&info, None) }.map_err(vkerr("vkCreateSampler"))
        };
        let linear = make(vk::Filter::LINEAR)?;
        let nearest = make(vk::Filter::NEAREST).inspect_err(|_| {
            // SAFETY: just created, never used.
            unsafe { device.destroy_sampler(linear, None) }
        })?;
        Ok(Arc::new(Samplers {
            device: device.clone(),
            linear,
            nearest,
        }))
    }
}

impl Drop for Samplers {
    fn drop(&mut self) {
        // SAFETY: every execution that used them holds this object until it completes.
        unsafe {
            self.device.destroy_sampler(self.linear, None);
            self.device.destroy_sampler(self.nearest, None);
        }
    }
}

/// The pipeline and descriptor objects of one pass, and the views it made of the app's images;
/// destroyed when the pass and every execution that used them are gone.
struct Objects {
    device: ash::Device,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    /// Per binding: a view of an image that is not transient (which has no view of its own).
    own_views: Vec<vk::ImageView>,
}

impl Drop for Objects {
    fn drop(&mut self) {
        // SAFETY: no execution that used them is running (each holds this object until it
        // completes); null handles are ignored.
        unsafe {
            for &v in &self.own_views {
                self.device.destroy_image_view(v, None);
            }
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
            self.device.destroy_shader_module(self.module, None);
        }
    }
}

/// A compute shader dispatched over `size` (8×8 invocations per workgroup, or one per 16×16
/// tile with `per_tile`).
pub struct Dispatch {
    objects: Arc<Objects>,
    samplers: Arc<Samplers>,
    sets: [vk::DescriptorSet; SETS],
    next: usize,
    bindings: Vec<Bind>,
    groups: [u32; 2],
    /// `{ width, height, frame, param }`.
    pub push: [u32; 4],
}

impl Dispatch {
    /// Builds the pass. `spirv`: one of `vk_baton_shaders::deferred`; bindings 0, 1, ... in
    /// order.
    pub fn new(
        device: &ash::Device,
        samplers: &Arc<Samplers>,
        spirv: &[u8],
        bindings: Vec<Bind>,
        size: [u32; 2],
        param: u32,
        per_tile: bool,
    ) -> vk_baton::Result<Dispatch> {
        let code = support::spirv(spirv)?;
        let mut o = Objects {
            device: device.clone(),
            module: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            own_views: vec![vk::ImageView::null(); bindings.len()],
        };
        // SAFETY (every call below): valid create infos on a live device; each handle goes
        // into `o` at once, whose Drop destroys it if a later step fails.
        unsafe {
            o.module = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .map_err(vkerr("vkCreateShaderModule"))?;
            let layout_bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = bindings
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(i as u32)
                        .descriptor_type(b.descriptor_type())
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            o.set_layout = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            let ranges = [vk::PushConstantRange {
                stage_flags: vk::ShaderStageFlags::COMPUTE,
                offset: 0,
                size: 16,
            }];
            let set_layouts = [o.set_layout];
            o.layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&set_layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .map_err(vkerr("vkCreatePipelineLayout"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(o.module)
                .name(c"main");
            let info = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(o.layout)];
            o.pipeline = device
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                .map_err(|(_, e)| vk_baton::Error::vk("vkCreateComputePipelines", e))?[0];
            let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
            for b in &bindings {
                let ty = b.descriptor_type();
                match sizes.iter_mut().find(|s| s.ty == ty) {
                    Some(s) => s.descriptor_count += SETS as u32,
                    None => sizes.push(vk::DescriptorPoolSize {
                        ty,
                        descriptor_count: SETS as u32,
                    }),
                }
            }
            o.pool = device
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(SETS as u32)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            for (i, b) in bindings.iter().enumerate() {
                if let Bind::Write(img) | Bind::Sampled(img, _) = b {
                    if !img.is_transient() {
                        o.own_views[i] = whole_view(device, img)?;
                    }
                }
            }
        }
        let layouts = [o.set_layout; SETS];
        // SAFETY: the pool has room for exactly these sets.
        let sets = unsafe {
            device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(o.pool)
                    .set_layouts(&layouts),
            )
        }
        .map_err(vkerr("vkAllocateDescriptorSets"))?;
        let groups = if per_tile {
            [
                size[0].div_ceil(16).div_ceil(8),
                size[1].div_ceil(16).div_ceil(8),
            ]
        } else {
            [size[0].div_ceil(8), size[1].div_ceil(8)]
        };
        Ok(Dispatch {
            objects: Arc::new(o),
            samplers: samplers.clone(),
            sets: [sets[0], sets[1], sets[2]],
            next: 0,
            bindings,
            groups,
            push: [size[0], size[1], 0, param],
        })
    }

    /// The view binding `i` reads or writes in the execution being recorded.
    fn view(&self, i: usize, img: &StImage) -> vk_baton::Result<vk::ImageView> {
        if img.is_transient() {
            img.view().ok_or_else(|| {
                vk_baton::Error::PassFailed(format!("transient `{}` has no view", img.name()))
            })
        } else {
            Ok(self.objects.own_views[i])
        }
    }
}

/// A 2D view of all of `img`.
///
/// # Safety
///
/// `img` is a live image of `device` whose usage allows views.
unsafe fn whole_view(device: &ash::Device, img: &StImage) -> vk_baton::Result<vk::ImageView> {
    let info = vk::ImageViewCreateInfo::default()
        .image(img.handle())
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(img.desc().format)
        .subresource_range(img.full_range());
    // SAFETY: the caller's promise.
    unsafe { device.create_image_view(&info, None) }.map_err(vkerr("vkCreateImageView"))
}

impl Pass for Dispatch {
    fn declare(&self, d: &mut Declare<'_>) {
        for b in &self.bindings {
            match b {
                Bind::Write(img) => {
                    d.uses(img, Access::COMPUTE_SHADER_WRITE).discard();
                }
                Bind::Sampled(img, _) => {
                    d.uses(img, Access::COMPUTE_SHADER_SAMPLED_READ);
                }
                Bind::WriteBuffer(buf) => {
                    d.uses(buf, Access::COMPUTE_SHADER_WRITE).discard();
                }
                Bind::ReadBuffer(buf) => {
                    d.uses(buf, Access::COMPUTE_SHADER_READ);
                }
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let set = self.write_set(r.device(), r.layout_policy())?;
        // SAFETY: `cmd` is recording; the set was just written for this execution; the
        // objects outlive it (kept alive below).
        unsafe { self.dispatch(r.device(), r.cmd(), set) };
        r.keep_alive(self.keep_alive());
        Ok(())
    }
}

impl Dispatch {
    /// Writes the next descriptor set with the views and buffers of the execution being
    /// recorded, its sampled images in the layout `layouts` gives them, and returns it. A
    /// hand-written frame calls it, then [`Dispatch::dispatch`], where the graph's pass would
    /// record.
    ///
    /// The set was last used `SETS` executions ago, which must have completed (the sample keeps
    /// fewer in flight).
    pub fn write_set(
        &mut self,
        dev: &ash::Device,
        layouts: LayoutPolicy,
    ) -> vk_baton::Result<vk::DescriptorSet> {
        let set = self.sets[self.next % SETS];
        self.next += 1;
        let mut images = Vec::with_capacity(self.bindings.len());
        let mut buffers = Vec::with_capacity(self.bindings.len());
        for (i, b) in self.bindings.iter().enumerate() {
            match b {
                Bind::Write(img) => images.push((
                    i,
                    [vk::DescriptorImageInfo::default()
                        .image_view(self.view(i, img)?)
                        .image_layout(vk::ImageLayout::GENERAL)],
                )),
                Bind::Sampled(img, linear) => images.push((
                    i,
                    [vk::DescriptorImageInfo::default()
                        .sampler(if *linear {
                            self.samplers.linear
                        } else {
                            self.samplers.nearest
                        })
                        .image_view(self.view(i, img)?)
                        .image_layout(layouts.layout(Access::COMPUTE_SHADER_SAMPLED_READ))],
                )),
                Bind::WriteBuffer(buf) | Bind::ReadBuffer(buf) => buffers.push((
                    i,
                    [vk::DescriptorBufferInfo::default()
                        .buffer(buf.handle())
                        .range(vk::WHOLE_SIZE)],
                )),
            }
        }
        let mut writes: Vec<vk::WriteDescriptorSet<'_>> = Vec::new();
        for (i, info) in &images {
            writes.push(
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(*i as u32)
                    .descriptor_type(self.bindings[*i].descriptor_type())
                    .image_info(info),
            );
        }
        for (i, info) in &buffers {
            writes.push(
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(*i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info),
            );
        }
        // SAFETY: the set is not in use (see above); every view and buffer is alive.
        unsafe { dev.update_descriptor_sets(&writes, &[]) };
        Ok(set)
    }

    /// Records the dispatch with `set` (from [`Dispatch::write_set`]).
    ///
    /// # Safety
    ///
    /// `cmd` is recording on a queue with compute; what the bindings read was made visible to
    /// the compute shader, in the layouts the set names (`GENERAL` for storage images,
    /// `SHADER_READ_ONLY_OPTIMAL` for sampled ones); [`Dispatch::keep_alive`]'s objects outlive
    /// the commands.
    pub unsafe fn dispatch(
        &self,
        dev: &ash::Device,
        cmd: vk::CommandBuffer,
        set: vk::DescriptorSet,
    ) {
        let push: Vec<u8> = self.push.iter().flat_map(|v| v.to_le_bytes()).collect();
        // SAFETY: the caller's promise.
        unsafe {
            dev.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.objects.pipeline);
            dev.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.objects.layout,
                0,
                &[set],
                &[],
            );
            dev.cmd_push_constants(
                cmd,
                self.objects.layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &push,
            );
            dev.cmd_dispatch(cmd, self.groups[0], self.groups[1], 1);
        }
    }

    /// What the commands use and must outlive them: the pipeline and descriptor objects, and
    /// the samplers.
    pub fn keep_alive(&self) -> impl std::any::Any + Send + Sync {
        (self.objects.clone(), self.samplers.clone())
    }
}
