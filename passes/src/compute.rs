//! [`ComputeDispatch`]: a generic compute pass built from SPIR-V, with push constants and
//! storage buffer, storage image and sampled image bindings.
//!
//! Each binding declares its access by itself: a storage buffer or image as
//! COMPUTE_SHADER_READ, _WRITE or _READ_WRITE (GENERAL layout for images), with discard for
//! [`ShaderAccess::WriteDiscard`], a sampled image as
//! [`Access::COMPUTE_SHADER_SAMPLED_READ`] (SHADER_READ_ONLY_OPTIMAL, or GENERAL with
//! [`ComputeBuilder::layout_policy`]). The descriptor set is
//! allocated and written once, when the pass is built, from a pool of exactly its size: no
//! descriptor work happens per frame. The pipeline, layouts, views, sampler and pool live in
//! one shared object that every execution keeps alive with [`Recorder::keep_alive`], so
//! dropping the pass while the GPU still runs it frees nothing early.
//!
//! **Transients are supported** ([`vk_baton::Graph::transient_buffer`],
//! [`vk_baton::Graph::transient_image`]): a transient has a `VkBuffer` or `VkImage` only while
//! its graph records an execution, and possibly another one per execution in flight, so a pass
//! with a transient binding writes a set per execution instead, in [`Pass::record`], from the
//! handles bound for that execution (views of transient images made there too). The set's
//! pool goes back to the pass once that execution completes, so a steady frame loop reuses as
//! many pools as it keeps executions in flight. Such a pass runs only inside its graph:
//! [`ComputeDispatch::record_commands`] refuses it.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context, spirv: &[u32], buf: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton_passes::Result<()> {
//! use vk_baton_passes::{ComputeDispatch, ShaderAccess};
//! // SAFETY: valid SPIR-V that uses just the bindings declared below, as declared.
//! let mut fill = unsafe { ComputeDispatch::builder(ctx.device(), spirv) }
//!     .storage_buffer(0, buf, ShaderAccess::Write)
//!     .push_constant_size(8)
//!     .groups(16, 1, 1)
//!     .build()?;
//! fill.set_push_constants(&[1024u32.to_le_bytes(), 7u32.to_le_bytes()].concat())?;
//! let graph = ctx.graph()?;
//! graph.record().insert_pass("fill", &mut fill, ctx.async_compute()).finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use ash::vk;
use std::ffi::CString;
use std::sync::Arc;
use vk_baton::access::LayoutPolicy;
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferRange, Declare, ImageRange, Pass, Recorder, StBuffer, StImage};

mod builder;
mod descriptors;

use descriptors::{dtype, FrameSet};

/// How a shader uses a storage binding.
///
/// ```
/// use vk_baton_passes::ShaderAccess;
/// assert_eq!(ShaderAccess::Write.access(), vk_baton::Access::COMPUTE_SHADER_WRITE);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderAccess {
    /// Read only (`readonly`).
    Read,
    /// Written only (`writeonly`).
    Write,
    /// Read and written.
    ReadWrite,
    /// Written only, and every element of the binding is overwritten: the old contents are
    /// not needed. Declared with [`Use::discard`](vk_baton::pass::Use::discard), so the graph
    /// keeps no earlier write alive and a storage image starts from UNDEFINED instead of being
    /// transitioned with its contents. Use it only when the shader really writes all of the
    /// binding.
    WriteDiscard,
}

impl ShaderAccess {
    /// The declared access.
    ///
    /// ```
    /// use vk_baton_passes::ShaderAccess;
    /// assert!(ShaderAccess::ReadWrite.access().is_write());
    /// ```
    pub fn access(self) -> Access {
        match self {
            ShaderAccess::Read => Access::COMPUTE_SHADER_READ,
            ShaderAccess::Write | ShaderAccess::WriteDiscard => Access::COMPUTE_SHADER_WRITE,
            ShaderAccess::ReadWrite => Access::COMPUTE_SHADER_READ_WRITE,
        }
    }

    /// Whether the binding is declared with discard (old contents not needed).
    ///
    /// ```
    /// use vk_baton_passes::ShaderAccess;
    /// assert!(ShaderAccess::WriteDiscard.discards());
    /// assert!(!ShaderAccess::Write.discards());
    /// ```
    pub fn discards(self) -> bool {
        self == ShaderAccess::WriteDiscard
    }
}

#[derive(Clone, Debug)]
enum Resource {
    Buffer {
        buffer: Arc<StBuffer>,
        range: BufferRange,
        access: ShaderAccess,
    },
    StorageImage {
        image: Arc<StImage>,
        level: u32,
        access: ShaderAccess,
    },
    Sampled {
        image: Arc<StImage>,
        sampler: Option<vk::Sampler>,
        /// The one aspect its view shows ([`descriptors::default_view_aspect`] unless given).
        aspect: vk::ImageAspectFlags,
    },
}

#[derive(Clone, Debug)]
struct Binding {
    binding: u32,
    resource: Resource,
}

/// Builds a [`ComputeDispatch`]; from [`ComputeDispatch::builder`].
///
/// ```no_run
/// # fn f(device: &ash::Device, spirv: &[u32], img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::{ComputeDispatch, ShaderAccess};
/// // SAFETY: valid SPIR-V that uses just the bindings declared below, as declared.
/// let pass = unsafe { ComputeDispatch::builder(device, spirv) }.storage_image(0, img, ShaderAccess::Write).groups(8, 8, 1).build()?;
/// # Ok(()) }
/// ```
#[must_use = "call build() to make the pass"]
pub struct ComputeBuilder<'a> {
    device: ash::Device,
    spirv: &'a [u32],
    entry: String,
    bindings: Vec<Binding>,
    push_size: u32,
    groups: [u32; 3],
    name: String,
    layouts: LayoutPolicy,
}

/// The Vulkan objects of one compute pass; destroyed when the last holder (the pass or an
/// execution fence) drops.
struct Objects {
    device: ash::Device,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    /// The set written at build time, and its pool: null when there are no bindings, or
    /// when a binding is transient (then each execution writes a [`FrameSet`]).
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    /// Per binding, the view made at build time: null for a buffer, and for a transient
    /// image (each execution makes its own).
    views: Vec<vk::ImageView>,
    sampler: vk::Sampler,
    /// The layout the sampled images' descriptors name, which their uses declare.
    sampled_layout: vk::ImageLayout,
    /// Pools of [`FrameSet`]s whose executions completed, reset, for the next ones.
    spare_pools: parking_lot::Mutex<Vec<vk::DescriptorPool>>,
    name: String,
}

impl Objects {
    fn create(&mut self, b: &ComputeBuilder<'_>) -> Result<()> {
        let dev = self.device.clone();
        // SAFETY (whole function): plain object creation on a live device with valid create
        // infos; every created handle is stored in `self` at once, so `Drop` destroys it on
        // a later error.
        let info = vk::ShaderModuleCreateInfo::default().code(b.spirv);
        self.module = unsafe { dev.create_shader_module(&info, None) }
            .map_err(|e| Error::vk("vkCreateShaderModule", e))?;

        let layout_bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = b
            .bindings
            .iter()
            .map(|x| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(x.binding)
                    .descriptor_type(dtype(&x.resource))
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
        // SAFETY: as above.
        self.set_layout = unsafe { dev.create_descriptor_set_layout(&info, None) }
            .map_err(|e| Error::vk("vkCreateDescriptorSetLayout", e))?;

        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: b.push_size,
        }];
        let set_layouts = [self.set_layout];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if b.push_size > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: as above.
        self.layout = unsafe { dev.create_pipeline_layout(&info, None) }
            .map_err(|e| Error::vk("vkCreatePipelineLayout", e))?;

        let entry = CString::new(b.entry.clone()).map_err(|_| {
            Error::InvalidInput(format!("entry point {:?} contains a NUL", b.entry))
        })?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(self.module)
            .name(&entry);
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(self.layout)];
        // SAFETY: as above.
        self.pipeline =
            unsafe { dev.create_compute_pipelines(vk::PipelineCache::null(), &info, None) }
                .map_err(|(_, e)| Error::vk("vkCreateComputePipelines", e))?[0];

        if b.bindings
            .iter()
            .any(|x| matches!(x.resource, Resource::Sampled { sampler: None, .. }))
        {
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(vk::Filter::NEAREST)
                .min_filter(vk::Filter::NEAREST)
                .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                .max_lod(vk::LOD_CLAMP_NONE);
            // SAFETY: as above.
            self.sampler = unsafe { dev.create_sampler(&info, None) }
                .map_err(|e| Error::vk("vkCreateSampler", e))?;
        }

        // Views of the app's images, made once; a transient image's is made per execution.
        for x in &b.bindings {
            let view = match x.view_range().filter(|_| !x.is_transient()) {
                Some((image, range, aspect)) => {
                    descriptors::create_view(&dev, image, range, aspect)?
                }
                None => vk::ImageView::null(),
            };
            self.views.push(view);
        }
        if b.bindings.is_empty() || b.bindings.iter().any(Binding::is_transient) {
            return Ok(());
        }
        self.pool = descriptors::create_pool(&dev, &b.bindings)?;
        self.set = descriptors::allocate_set(&dev, self.pool, self.set_layout)?;
        let sampled = (self.sampler, self.sampled_layout);
        descriptors::write_set(&dev, self.set, &b.bindings, &self.views, sampled)
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        log::trace!("compute pass `{}`: destroying its objects", self.name);
        // SAFETY: the last holder is gone: the pass, and every execution fence that kept
        // these objects alive until its GPU work completed. Null handles are ignored.
        unsafe {
            let d = &self.device;
            for v in self.views.drain(..) {
                d.destroy_image_view(v, None);
            }
            for p in self.spare_pools.get_mut().drain(..) {
                d.destroy_descriptor_pool(p, None);
            }
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_sampler(self.sampler, None);
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.module, None);
        }
    }
}

/// A compute dispatch: one pipeline, one descriptor set written once (or once per execution,
/// when a binding is transient), push constants, a workgroup count. Runs on compute queues.
///
/// ```no_run
/// # fn f(device: &ash::Device, spirv: &[u32], a: std::sync::Arc<vk_baton::StBuffer>, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton_passes::Result<()> {
/// use vk_baton_passes::{ComputeDispatch, ShaderAccess};
/// // SAFETY: valid SPIR-V that uses just the bindings declared below, as declared.
/// let mut pass = unsafe { ComputeDispatch::builder(device, spirv) }
///     .sampled_image(0, img)
///     .storage_buffer(1, a, ShaderAccess::ReadWrite)
///     .push_constant_size(4)
///     .groups(4, 4, 1)
///     .build()?;
/// pass.set_push_constants(&5u32.to_le_bytes())?;
/// # Ok(()) }
/// ```
pub struct ComputeDispatch {
    objects: Arc<Objects>,
    bindings: Vec<Binding>,
    /// Whether a binding is transient: each execution then writes a [`FrameSet`].
    per_execution: bool,
    push: Vec<u8>,
    groups: [u32; 3],
    /// Its replay key, bumped by the setters: see [`Pass::replay_key`].
    generation: Generation,
}

impl std::fmt::Debug for ComputeDispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputeDispatch")
            .field("name", &self.objects.name)
            .field("bindings", &self.bindings)
            .field("push", &self.push.len())
            .field("groups", &self.groups)
            .finish()
    }
}

impl ComputeDispatch {
    /// Starts a pass from SPIR-V words (see `vk_baton_shaders::words` for bytes → words).
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device, spirv: &[u32]) {
    /// // SAFETY: valid SPIR-V that uses just the bindings declared next, as declared.
    /// let b = unsafe { vk_baton_passes::ComputeDispatch::builder(device, spirv) };
    /// # let _ = b; }
    /// ```
    ///
    /// # Safety
    ///
    /// The library checks the SPIR-V magic number and the bindings' usage flags, but it
    /// cannot see what the shader does, and the planner synchronizes only what is declared:
    ///
    /// - `spirv`, if it starts with the SPIR-V magic number, is a valid SPIR-V module for
    ///   `device` with a compute entry point of the name given to [`ComputeBuilder::entry`].
    /// - The shader uses only the descriptor bindings declared on the builder, each with the
    ///   descriptor type declared, and push constants within
    ///   [`ComputeBuilder::push_constant_size`].
    /// - It reads and writes each resource only as declared ([`ShaderAccess`]), and within
    ///   the declared range and the resource's bounds.
    pub unsafe fn builder<'a>(device: &ash::Device, spirv: &'a [u32]) -> ComputeBuilder<'a> {
        ComputeBuilder {
            device: device.clone(),
            spirv,
            entry: "main".into(),
            bindings: Vec::new(),
            push_size: 0,
            groups: [1, 1, 1],
            name: "compute".into(),
            layouts: LayoutPolicy::Optimal,
        }
    }

    /// Sets the push constants for the next executions: exactly the size given to
    /// [`ComputeBuilder::push_constant_size`]. Recorded by value, so changing them never
    /// touches a pending execution.
    ///
    /// ```no_run
    /// # fn f(p: &mut vk_baton_passes::ComputeDispatch) -> vk_baton_passes::Result<()> {
    /// p.set_push_constants(&[0u8; 8])?;
    /// # Ok(()) }
    /// ```
    pub fn set_push_constants(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != self.push.len() {
            return Err(Error::InvalidInput(format!(
                "`{}`: push constants are {} bytes, got {}",
                self.objects.name,
                self.push.len(),
                bytes.len()
            )));
        }
        self.push.copy_from_slice(bytes);
        self.generation.bump();
        Ok(())
    }

    /// Sets the workgroup count for the next executions.
    ///
    /// ```no_run
    /// # fn f(p: &mut vk_baton_passes::ComputeDispatch) {
    /// p.set_groups(64, 1, 1);
    /// # }
    /// ```
    pub fn set_groups(&mut self, x: u32, y: u32, z: u32) {
        self.groups = [x, y, z];
        self.generation.bump();
    }

    /// The pipeline (for inspection or debug naming).
    ///
    /// ```no_run
    /// # fn f(p: &vk_baton_passes::ComputeDispatch) {
    /// let pipeline = p.pipeline();
    /// # }
    /// ```
    pub fn pipeline(&self) -> vk::Pipeline {
        self.objects.pipeline
    }
}

impl Pass for ComputeDispatch {
    /// A key that moves with [`ComputeDispatch::set_push_constants`] and
    /// [`ComputeDispatch::set_groups`]. With a transient binding, each recording writes a
    /// descriptor set of its own from the objects the graph bound; the graph keys recordings
    /// on those objects, and keeps the set alive with the recording.
    fn replay_key(&self) -> Option<ReplayKey> {
        // SAFETY: the pipeline, layout and descriptor set are made with the pass and never
        // updated after (they live in `objects`, which recording keeps alive with the
        // recording; a per-execution set is written once, for the transients' objects the
        // recording names, and kept with it); the push constants and group counts change
        // only in the two setters, which bump the generation.
        Some(unsafe { self.generation.key() })
    }

    fn declare(&self, d: &mut Declare<'_>) {
        for b in &self.bindings {
            match &b.resource {
                Resource::Buffer {
                    buffer,
                    range,
                    access,
                } => {
                    let u = d.uses(buffer, access.access()).range(*range);
                    if access.discards() {
                        u.discard();
                    }
                }
                Resource::StorageImage {
                    image,
                    level,
                    access,
                } => {
                    let aspect = descriptors::default_view_aspect(image.desc());
                    let u = d
                        .uses(image, access.access())
                        .range(ImageRange::mip(*level, image.desc().array_layers));
                    let u = descriptors::narrow_to_view(u, image, aspect);
                    if access.discards() {
                        u.discard();
                    }
                }
                Resource::Sampled { image, aspect, .. } => {
                    // The descriptor was written with this layout, whatever the graph's policy.
                    let u = d
                        .uses(image, Access::COMPUTE_SHADER_SAMPLED_READ)
                        .layout(self.objects.sampled_layout);
                    descriptors::narrow_to_view(u, image, *aspect);
                }
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        log::trace!(
            "{}: dispatch `{}` {:?}",
            r.pass_name(),
            self.objects.name,
            self.groups
        );
        if self.per_execution {
            // The transients are bound for this execution now: write a set from their handles.
            let frame = FrameSet::new(self)?;
            // SAFETY: as below, with the frame's set, which the frame keeps (with the
            // objects) until the GPU is done.
            unsafe { self.record_with(r.cmd(), frame.set) };
            r.keep_alive(frame);
            return Ok(());
        }
        // SAFETY: `r.cmd()` is recording on a compute-capable queue of this device; the
        // objects are kept alive below until the GPU is done; the graph put every bound
        // resource in its declared state before this pass.
        unsafe { self.record_with(r.cmd(), self.objects.set) };
        r.keep_alive(self.objects.clone());
        Ok(())
    }
}

impl ComputeDispatch {
    /// Records the dispatch (bind pipeline, bind the set, push constants, dispatch) into a
    /// command buffer of the app's own, outside any graph: for an app that keeps recording
    /// its frame by hand and uses the pass's pipeline and descriptor set there. Inside a
    /// graph, insert the pass instead; the graph then does all of the below.
    ///
    /// A pass with a transient binding has no set of its own to bind here (a transient has a
    /// Vulkan object only while its graph records an execution): it is refused with
    /// [`Error::InvalidInput`], recording nothing.
    ///
    /// ```no_run
    /// # fn f(pass: &vk_baton_passes::ComputeDispatch, cmd: ash::vk::CommandBuffer) -> vk_baton_passes::Result<()> {
    /// // SAFETY: `cmd` is recording; the app's barriers put every binding in its declared
    /// // state, and the app waits for the submission before dropping `pass`.
    /// unsafe { pass.record_commands(cmd) }?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    /// `cmd` belongs to this pass's device, is in the recording state, and will be submitted
    /// to a queue whose family supports compute. When the commands execute, every bound
    /// resource is in the state its binding declares (storage images in GENERAL, sampled
    /// images in the layout of [`ComputeBuilder::layout_policy`]), with the app's own barriers
    /// making earlier writes visible. The pass (which owns the pipeline and descriptor set) is not dropped
    /// before that execution completes: outside a graph nothing keeps it alive.
    pub unsafe fn record_commands(&self, cmd: vk::CommandBuffer) -> Result<()> {
        if self.per_execution {
            return Err(Error::InvalidInput(format!(
                "`{}` binds a transient, which has a Vulkan object only while its graph records \
                 an execution: insert the pass into that graph instead",
                self.objects.name
            )));
        }
        // SAFETY: as the caller promises; the set was written once at build time and never
        // changes.
        unsafe { self.record_with(cmd, self.objects.set) };
        Ok(())
    }

    /// Binds the pipeline and `set` (null: the pass has no bindings), pushes the constants
    /// and dispatches.
    ///
    /// # Safety
    /// As for [`ComputeDispatch::record_commands`], and `set` holds every binding of the pass
    /// (written for the execution `cmd` belongs to, for a pass with transient bindings) and
    /// stays alive until that execution completes.
    unsafe fn record_with(&self, cmd: vk::CommandBuffer, set: vk::DescriptorSet) {
        let o = &self.objects;
        let dev = &o.device;
        // SAFETY: as the caller promises.
        unsafe {
            dev.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, o.pipeline);
            if set != vk::DescriptorSet::null() {
                dev.cmd_bind_descriptor_sets(
                    cmd,
                    vk::PipelineBindPoint::COMPUTE,
                    o.layout,
                    0,
                    &[set],
                    &[],
                );
            }
            if !self.push.is_empty() {
                dev.cmd_push_constants(cmd, o.layout, vk::ShaderStageFlags::COMPUTE, 0, &self.push);
            }
            dev.cmd_dispatch(cmd, self.groups[0], self.groups[1], self.groups[2]);
        }
    }
}
