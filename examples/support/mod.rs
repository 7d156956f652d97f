//! Small helpers shared by the samples: a compute pipeline with one descriptor set layout,
//! descriptor sets pointing at buffers and images, argument parsing and the validation report.
//!
//! Nothing here is vk-baton API: it is the boilerplate every Vulkan app has somewhere.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::Arc;
use vk_baton::ash::vk;
use vk_baton::{Context, ExecutionFence, StBuffer, StImage};

/// Executions in flight, oldest first, each with a tag (a frame number, say). Dropping it
/// waits for each, so an early return (`?`) never destroys a pipeline or query pool that the
/// GPU may still use: declare it after them (locals drop in reverse order).
pub struct InFlight<K = ()>(pub VecDeque<(K, ExecutionFence)>);

impl<K> InFlight<K> {
    pub fn new() -> Self {
        Self(VecDeque::new())
    }
}

impl<K> Drop for InFlight<K> {
    fn drop(&mut self) {
        for (_, fence) in self.0.drain(..) {
            if let Err(e) = fence.wait() {
                eprintln!("an execution in flight failed: {e}");
            }
        }
    }
}

/// Maps a Vulkan error to the library's error type.
pub fn vkerr(call: &'static str) -> impl Fn(vk::Result) -> vk_baton::Error {
    move |e| vk_baton::Error::vk(call, e)
}

/// One resource a descriptor binding points at.
pub enum Bind<'a> {
    /// A storage buffer (whole range).
    Buffer(&'a StBuffer),
    /// A storage image (in GENERAL layout), through a view the pipeline creates and owns.
    Image(&'a StImage),
}

/// A compute pipeline whose set 0 holds `kinds.len()` bindings (0, 1, ...), plus a descriptor
/// pool for `max_sets` sets. Everything is destroyed on drop: drop it only after every
/// execution that uses it has completed.
pub struct Compute {
    device: vk_baton::ash::Device,
    kinds: Vec<vk::DescriptorType>,
    set_layout: vk::DescriptorSetLayout,
    /// The pipeline layout (for push constants and binding sets).
    pub layout: vk::PipelineLayout,
    /// The pipeline.
    pub pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    views: Vec<vk::ImageView>,
}

impl Compute {
    /// Builds the pipeline from SPIR-V bytes.
    pub fn new(
        ctx: &Context,
        spirv: &[u8],
        kinds: &[vk::DescriptorType],
        push_bytes: u32,
        max_sets: u32,
    ) -> vk_baton::Result<Compute> {
        let d = ctx.device();
        let code = vk_baton_shaders::words(spirv);
        let bindings: Vec<_> = kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(k)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: push_bytes,
        }];
        let sizes: Vec<_> = kinds
            .iter()
            .map(|&ty| vk::DescriptorPoolSize {
                ty,
                descriptor_count: max_sets,
            })
            .collect();
        // SAFETY: plain object creation from valid create infos on a live device; the objects
        // are destroyed in `Drop` (the shader module right after pipeline creation).
        unsafe {
            let set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorSetLayout"))?;
            let layouts = [set_layout];
            let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts);
            if push_bytes > 0 {
                info = info.push_constant_ranges(&push);
            }
            let layout = d
                .create_pipeline_layout(&info, None)
                .map_err(vkerr("vkCreatePipelineLayout"))?;
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
                .map_err(vkerr("vkCreateShaderModule"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let created = d.create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(layout)],
                None,
            );
            d.destroy_shader_module(module, None);
            let pipeline =
                created.map_err(|(_, e)| vk_baton::Error::vk("vkCreateComputePipelines", e))?[0];
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(max_sets)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(vkerr("vkCreateDescriptorPool"))?;
            Ok(Compute {
                device: d.clone(),
                kinds: kinds.to_vec(),
                set_layout,
                layout,
                pipeline,
                pool,
                views: Vec::new(),
            })
        }
    }

    /// Allocates a descriptor set whose bindings point at `binds`, in order.
    pub fn set(&mut self, binds: &[Bind<'_>]) -> vk_baton::Result<vk::DescriptorSet> {
        assert_eq!(binds.len(), self.kinds.len(), "one resource per binding");
        let layouts = [self.set_layout];
        // SAFETY: the pool and layout are alive; the pool was sized for `max_sets` sets.
        let set = unsafe {
            self.device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(self.pool)
                    .set_layouts(&layouts),
            )
        }
        .map_err(vkerr("vkAllocateDescriptorSets"))?[0];
        let mut buffer_infos = Vec::new();
        let mut image_infos = Vec::new();
        for b in binds {
            match b {
                Bind::Buffer(buf) => buffer_infos.push([vk::DescriptorBufferInfo {
                    buffer: buf.handle(),
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }]),
                Bind::Image(img) => {
                    let info = vk::ImageViewCreateInfo::default()
                        .image(img.handle())
                        .view_type(vk::ImageViewType::TYPE_2D)
                        .format(img.desc().format)
                        .subresource_range(img.full_range());
                    // SAFETY: a valid view of a live image; destroyed in `Drop`.
                    let view = unsafe { self.device.create_image_view(&info, None) }
                        .map_err(vkerr("vkCreateImageView"))?;
                    self.views.push(view);
                    image_infos.push([vk::DescriptorImageInfo {
                        sampler: vk::Sampler::null(),
                        image_view: view,
                        image_layout: vk::ImageLayout::GENERAL,
                    }]);
                }
            }
        }
        let (mut bi, mut ii) = (0, 0);
        let writes: Vec<_> = binds
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(self.kinds[i]);
                match b {
                    Bind::Buffer(_) => {
                        bi += 1;
                        w.buffer_info(&buffer_infos[bi - 1])
                    }
                    Bind::Image(_) => {
                        ii += 1;
                        w.image_info(&image_infos[ii - 1])
                    }
                }
            })
            .collect();
        // SAFETY: the set is not in use by any command buffer yet; the infos are valid.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
        Ok(set)
    }

    /// Records bind pipeline + bind `set` + push constants + dispatch into `cmd`.
    ///
    /// # Safety
    /// `cmd` is in the recording state; the resources `set` points at are in the layouts and
    /// states the shader expects; this pipeline outlives the command buffer's execution.
    pub unsafe fn dispatch(
        &self,
        device: &vk_baton::ash::Device,
        cmd: vk::CommandBuffer,
        set: vk::DescriptorSet,
        push: &[u8],
        groups: [u32; 3],
    ) {
        // SAFETY: as the caller promises.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            device.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &[set],
                &[],
            );
            if !push.is_empty() {
                device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            device.cmd_dispatch(cmd, groups[0], groups[1], groups[2]);
        }
    }
}

impl Drop for Compute {
    fn drop(&mut self) {
        // SAFETY: the owner drops this only after every execution using it has completed.
        unsafe {
            for &v in &self.views {
                self.device.destroy_image_view(v, None);
            }
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device
                .destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Push-constant bytes from u32s.
pub fn push_u32s(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `--name value` from the command line, parsed; `default` when absent. Exits with a usage
/// message on a malformed value.
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => default,
        Some(i) => match args.get(i + 1).and_then(|v| v.parse().ok()) {
            Some(v) => v,
            None => {
                eprintln!("{name} needs a value of the right type");
                std::process::exit(2);
            }
        },
    }
}

/// Whether `--name` is on the command line.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// `--name value` as a string, if present.
pub fn arg_str(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).cloned()
}

/// Installs a logger that prints warnings (validation messages included).
pub fn init_logging() {
    let _ = env_logger::builder()
        .filter_level(log::LevelFilter::Warn)
        .parse_default_env()
        .try_init();
}

/// Prints the validation summary line every sample ends with, and returns the message count.
/// The integration test looks for `validation: N message(s)`.
pub fn report_validation(ctx: &Context) -> usize {
    let m = ctx.validation_messages();
    println!(
        "validation: {} message(s) ({})",
        m.count,
        if ctx.validation() {
            "layer on, with synchronization validation"
        } else {
            "layer off: set VK_BATON_VALIDATION=1 to turn it on"
        }
    );
    for t in &m.texts {
        println!("  - {t}");
    }
    m.count
}

/// Runs a sample's body and turns its outcome into the exit status: 0 on success with no
/// validation message, 1 when validation reported anything or a check failed, 2 on an error.
pub fn main_with(run: impl FnOnce() -> vk_baton::Result<bool>) -> ! {
    init_logging();
    match run() {
        Ok(true) => std::process::exit(0),
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

/// A shared reference to an `Arc`'d buffer as a descriptor binding.
pub fn buf(b: &Arc<StBuffer>) -> Bind<'_> {
    Bind::Buffer(b)
}

/// A shared reference to an `Arc`'d image as a descriptor binding.
pub fn img(i: &Arc<StImage>) -> Bind<'_> {
    Bind::Image(i)
}
