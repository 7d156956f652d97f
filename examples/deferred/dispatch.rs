//! [`Dispatch`]: the deferred sample's compute pass. One shader, its bindings (storage images,
//! sampled images, storage buffers, the frame number), a push constant block and a grid of 8×8
//! workgroups.
//!
//! Transient images are other `VkImage`s from one execution to the next (the graph keeps a set
//! of them per execution in flight), so the descriptors cannot be written once, as
//! `vk_baton_passes::ComputeDispatch` writes them. A pass has a few descriptor sets and picks
//! one per execution in one of two ways ([`Dispatch::replayable`]):
//!
//! - **In turn** (the default): each execution takes the next set and writes it with the views
//!   of that execution ([`StImage::view`]). A set is used again only `SETS` executions later,
//!   once the one that used it has completed: the sample keeps fewer executions than that in
//!   flight.
//! - **By the objects bound** (replay): each execution takes the set written for the objects
//!   the graph bound for it (a transient's objects are those of one heap set), and writes a
//!   set only for objects it has not seen. A set is not written again (until `forget_sets`,
//!   which moves the pass's key), so a recorded command
//!   buffer that binds it may be submitted again ([`vk_baton::Graph::set_replay`]), and the
//!   pass gives a replay key.
//!
//! The frame number (the point lights move) is not a push constant, which would make every
//! frame's commands differ: a shader that reads it binds a word of a host-visible buffer of the
//! pass's own (`Bind::FrameNumber`), one word per descriptor set, which the host writes when
//! the pass records or its recording is submitted again. A set's word is written only when the
//! set is not in use: in turn, its last execution completed; by the objects bound, no execution
//! in flight has the same heap set.

use super::pipelines::Samplers;
use std::sync::Arc;
use support::vkerr;
use vk_baton::access::LayoutPolicy;
use vk_baton::ash::vk::Handle;
use vk_baton::ash::{self, vk};
use vk_baton::pass::{Generation, ReplayKey};
use vk_baton::{Access, BufferDesc, CompletionToken, Declare, Pass, Recorder, StBuffer, StImage};
use vk_baton_context::Context;

/// Descriptor sets of each pass: more than the executions the sample keeps in flight, and as
/// many as the heap sets a graph makes at most (four).
pub const SETS: usize = 4;

/// Where each set's frame number is in a pass's host-written buffer: a storage buffer's
/// offset is a multiple of `minStorageBufferOffsetAlignment`, at most 256.
const FRAME_STRIDE: u64 = 256;

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
    /// The frame number (one `uint`), in the pass's own host-written buffer.
    FrameNumber,
}

impl Bind {
    fn descriptor_type(&self) -> vk::DescriptorType {
        match self {
            Bind::Write(_) => vk::DescriptorType::STORAGE_IMAGE,
            Bind::Sampled(..) => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            Bind::WriteBuffer(_) | Bind::ReadBuffer(_) | Bind::FrameNumber => {
                vk::DescriptorType::STORAGE_BUFFER
            }
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

/// How a pass picks the descriptor set an execution binds (see the module's doc).
enum Pick {
    /// The next set in turn, written for each execution.
    InTurn { next: usize },
    /// The set written for the objects bound (per set, what `bound_objects` gave), written
    /// once.
    ByObjects { written: Vec<Vec<u64>> },
}

/// One of a pass's descriptor sets, as [`Dispatch::write_set`] wrote it.
#[derive(Clone, Copy, Debug)]
pub struct WrittenSet(usize);

/// A compute shader dispatched over `size` (8×8 invocations per workgroup, or one per 16×16
/// tile with `per_tile`).
pub struct Dispatch {
    objects: Arc<Objects>,
    samplers: Arc<Samplers>,
    sets: [vk::DescriptorSet; SETS],
    pick: Pick,
    bindings: Vec<Bind>,
    groups: [u32; 2],
    /// `{ width, height, 0, param }`: set when the pass is made.
    push: [u32; 4],
    /// The frame number a `Bind::FrameNumber` binding reads: written to the bound set's word
    /// when the pass records or is replayed.
    pub frame: u32,
    /// With a `Bind::FrameNumber` binding: the host-visible buffer of the sets' words.
    frame_words: Option<Arc<StBuffer>>,
    /// Its replay key, when sets are picked by the objects bound.
    generation: Generation,
    /// The objects bound, found again each execution without allocating.
    scratch: Vec<u64>,
}

impl Dispatch {
    /// Builds the pass. `spirv`: one of `vk_baton_shaders::deferred`; bindings 0, 1, ... in
    /// order.
    pub fn new(
        ctx: &Context,
        samplers: &Arc<Samplers>,
        spirv: &[u8],
        bindings: Vec<Bind>,
        size: [u32; 2],
        param: u32,
        per_tile: bool,
    ) -> vk_baton::Result<Dispatch> {
        let device = ctx.device();
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
        let objects = Arc::new(o);
        let frame_words = match bindings.iter().any(|b| matches!(b, Bind::FrameNumber)) {
            true => Some(ctx.buffer(
                BufferDesc::upload(
                    SETS as u64 * FRAME_STRIDE,
                    vk::BufferUsageFlags::STORAGE_BUFFER,
                ),
                "frame number",
            )?),
            false => None,
        };
        Ok(Dispatch {
            objects,
            samplers: samplers.clone(),
            sets: std::array::from_fn(|i| sets[i]),
            pick: Pick::InTurn { next: 0 },
            bindings,
            groups,
            push: [size[0], size[1], 0, param],
            frame: 0,
            frame_words,
            generation: Generation::new(),
            scratch: Vec::new(),
        })
    }

    /// The same pass, picking each execution's set by the objects bound, so that its
    /// recordings can be submitted again (see the module's doc). Sets are never written
    /// twice: the objects of more than `SETS` heap sets fail the pass.
    pub fn replayable(mut self) -> Self {
        self.pick = Pick::ByObjects {
            written: Vec::new(),
        };
        self
    }

    /// Forgets which objects the sets were written for (a replayable pass), and moves to a
    /// new replay key: the sets will be written again, so no recording that binds them may be
    /// submitted again.
    ///
    /// # Safety
    ///
    /// Every execution that used the sets has completed (their command buffers are not
    /// pending), since the sets are updated next time the pass records.
    pub unsafe fn forget_sets(&mut self) {
        if let Pick::ByObjects { written } = &mut self.pick {
            written.clear();
            self.generation.bump();
        }
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

    /// What the bindings name in the execution being recorded (or replayed): per transient,
    /// the objects bound to it, by the graph's number for them (a handle value may come back
    /// for other objects once the graph destroys some); per other resource, its handle (the
    /// pass holds it). What a set picked by the objects bound is written for.
    fn bound_objects(&self, out: &mut Vec<u64>) {
        out.clear();
        for b in &self.bindings {
            out.push(match b {
                Bind::Write(img) | Bind::Sampled(img, _) if img.is_transient() => {
                    img.bound_object()
                }
                Bind::Write(img) | Bind::Sampled(img, _) => img.handle().as_raw(),
                Bind::WriteBuffer(buf) | Bind::ReadBuffer(buf) if buf.is_transient() => {
                    buf.bound_object()
                }
                Bind::WriteBuffer(buf) | Bind::ReadBuffer(buf) => buf.handle().as_raw(),
                Bind::FrameNumber => 0,
            });
        }
    }

    /// Writes the frame number into `set`'s word, if the shader reads it.
    pub fn write_frame(&self, set: WrittenSet) -> vk_baton::Result<()> {
        match &self.frame_words {
            Some(words) => words.write(set.0 as u64 * FRAME_STRIDE, &self.frame.to_le_bytes()),
            None => Ok(()),
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
                // The pass's own words, each written by the host only while its set is not
                // in use (see the module's doc): nothing for the graph to order.
                Bind::FrameNumber => {}
            }
        }
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
        let set = self.write_set(r.device(), r.layout_policy())?;
        self.write_frame(set)?;
        // SAFETY: `cmd` is recording; the set was written for this execution's objects; the
        // objects outlive it (kept alive below).
        unsafe { self.dispatch(r.device(), r.cmd(), set) };
        r.keep_alive(self.keep_alive());
        Ok(())
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        match self.pick {
            // SAFETY: the pipeline, layout, push constants and groups never change after
            // `new`; a set picked by the objects bound is written once, for those objects
            // (`forget_sets`, which writes them again, moves the generation first)
            // (which the graph keys recordings on), and kept alive with each recording. The
            // frame number is in memory, written by `replayed`.
            Pick::ByObjects { .. } => {
                let key = unsafe { self.generation.key() };
                // Only a pass that reads the frame number has anything to do on a replay.
                Some(match self.frame_words {
                    Some(_) => key.calling_replayed(),
                    None => key,
                })
            }
            Pick::InTurn { .. } => None,
        }
    }

    fn replayed(&mut self, _completion: &CompletionToken) -> vk_baton::Result<()> {
        let set = self.written_for_bound().ok_or_else(|| {
            vk_baton::Error::PassFailed("replayed with objects no set was written for".into())
        })?;
        self.write_frame(set)
    }
}

impl Dispatch {
    /// The set written for the objects bound now, if any (a pass that picks its sets by the
    /// objects bound; `None` in turn).
    fn written_for_bound(&mut self) -> Option<WrittenSet> {
        let mut objects = std::mem::take(&mut self.scratch);
        self.bound_objects(&mut objects);
        let found = match &self.pick {
            Pick::ByObjects { written } => written.iter().position(|w| *w == objects),
            Pick::InTurn { .. } => None,
        };
        self.scratch = objects;
        found.map(WrittenSet)
    }

    /// The set for the execution being recorded, written with its views and buffers (its
    /// sampled images in the layout `layouts` gives them) unless it was for these objects
    /// already. A hand-written frame calls it, then [`Dispatch::write_frame`] and
    /// [`Dispatch::dispatch`], where the graph's pass would record.
    ///
    /// In turn, the set was last used `SETS` executions ago, which must have completed (the
    /// sample keeps fewer in flight). By the objects bound, a set is written only for objects
    /// no set was written for, and at most `SETS` sets are: more fail.
    pub fn write_set(
        &mut self,
        dev: &ash::Device,
        layouts: LayoutPolicy,
    ) -> vk_baton::Result<WrittenSet> {
        let index = match &mut self.pick {
            Pick::InTurn { next } => {
                *next += 1;
                (*next - 1) % SETS
            }
            Pick::ByObjects { .. } => {
                if let Some(set) = self.written_for_bound() {
                    return Ok(set);
                }
                let objects = self.scratch.clone();
                let Pick::ByObjects { written } = &mut self.pick else {
                    unreachable!("picked by the objects bound")
                };
                if written.len() == SETS {
                    return Err(vk_baton::Error::PassFailed(format!(
                        "the objects of more than {SETS} heap sets: each needs a descriptor set"
                    )));
                }
                written.push(objects);
                written.len() - 1
            }
        };
        self.write(dev, layouts, index)?;
        Ok(WrittenSet(index))
    }

    /// Writes set `index` with the views and buffers of the execution being recorded.
    fn write(
        &self,
        dev: &ash::Device,
        layouts: LayoutPolicy,
        index: usize,
    ) -> vk_baton::Result<()> {
        let set = self.sets[index];
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
                Bind::FrameNumber => {
                    let words = self.frame_words.as_ref().expect("made with the pass");
                    buffers.push((
                        i,
                        [vk::DescriptorBufferInfo::default()
                            .buffer(words.handle())
                            .offset(index as u64 * FRAME_STRIDE)
                            .range(4)],
                    ))
                }
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
        // SAFETY: the set is not in use (see `write_set`); every view and buffer is alive.
        unsafe { dev.update_descriptor_sets(&writes, &[]) };
        Ok(())
    }

    /// Records the dispatch with `set` (from [`Dispatch::write_set`], its frame number
    /// written by [`Dispatch::write_frame`]).
    ///
    /// # Safety
    ///
    /// `cmd` is recording on a queue with compute; what the bindings read was made visible to
    /// the compute shader, in the layouts the set names (`GENERAL` for storage images,
    /// `SHADER_READ_ONLY_OPTIMAL` for sampled ones); [`Dispatch::keep_alive`]'s objects outlive
    /// the commands.
    pub unsafe fn dispatch(&self, dev: &ash::Device, cmd: vk::CommandBuffer, set: WrittenSet) {
        let push: Vec<u8> = self.push.iter().flat_map(|v| v.to_le_bytes()).collect();
        // SAFETY: the caller's promise.
        unsafe {
            dev.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.objects.pipeline);
            dev.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.objects.layout,
                0,
                &[self.sets[set.0]],
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

    /// What the commands use and must outlive them: the pipeline and descriptor objects, the
    /// samplers and the frame number's buffer.
    pub fn keep_alive(&self) -> impl std::any::Any + Send + Sync {
        (
            self.objects.clone(),
            self.samplers.clone(),
            self.frame_words.clone(),
        )
    }
}
