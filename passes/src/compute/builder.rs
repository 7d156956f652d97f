//! The builder methods of [`ComputeBuilder`]: bindings, push constants, group counts, and
//! the checks and object creation of `build`.

use super::descriptors::default_view_aspect;
use super::*;

impl ComputeBuilder<'_> {
    /// The entry point (default `main`).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>) {
    /// let b = b.entry("cs_main");
    /// # let _ = b;
    /// # }
    /// ```
    pub fn entry(mut self, name: &str) -> Self {
        self.entry = name.to_owned();
        self
    }

    /// A debug name for logs and errors (default `compute`).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>) {
    /// let b = b.name("blur");
    /// # let _ = b;
    /// # }
    /// ```
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    /// A storage buffer (`layout(binding = N) buffer`), whole.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, buf: std::sync::Arc<vk_baton::StBuffer>) {
    /// let b = b.storage_buffer(0, buf, vk_baton_passes::ShaderAccess::ReadWrite);
    /// # let _ = b; }
    /// ```
    pub fn storage_buffer(self, binding: u32, buffer: Arc<StBuffer>, access: ShaderAccess) -> Self {
        let range = BufferRange {
            offset: 0,
            size: buffer.size(),
        };
        self.storage_buffer_range(binding, buffer, range, access)
    }

    /// A byte range of a buffer as a storage buffer; only that range is declared.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, buf: std::sync::Arc<vk_baton::StBuffer>) {
    /// use vk_baton::BufferRange;
    /// let b = b.storage_buffer_range(1, buf, BufferRange { offset: 256, size: 256 }, vk_baton_passes::ShaderAccess::Read);
    /// # let _ = b; }
    /// ```
    pub fn storage_buffer_range(
        mut self,
        binding: u32,
        buffer: Arc<StBuffer>,
        range: BufferRange,
        access: ShaderAccess,
    ) -> Self {
        self.bindings.push(Binding {
            binding,
            resource: Resource::Buffer {
                buffer,
                range,
                access,
            },
        });
        self
    }

    /// Mip 0 (every layer) of an image as a storage image (`image2D`, or `image2DArray` for
    /// several layers), in GENERAL layout.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, img: std::sync::Arc<vk_baton::StImage>) {
    /// let b = b.storage_image(1, img, vk_baton_passes::ShaderAccess::Write);
    /// # let _ = b; }
    /// ```
    pub fn storage_image(self, binding: u32, image: Arc<StImage>, access: ShaderAccess) -> Self {
        self.storage_image_level(binding, image, 0, access)
    }

    /// One mip level (every layer) of an image as a storage image; only that level is
    /// declared.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, img: std::sync::Arc<vk_baton::StImage>) {
    /// let b = b.storage_image_level(1, img, 2, vk_baton_passes::ShaderAccess::ReadWrite);
    /// # let _ = b; }
    /// ```
    pub fn storage_image_level(
        mut self,
        binding: u32,
        image: Arc<StImage>,
        level: u32,
        access: ShaderAccess,
    ) -> Self {
        self.bindings.push(Binding {
            binding,
            resource: Resource::StorageImage {
                image,
                level,
                access,
            },
        });
        self
    }

    /// Every mip level and layer of an image as a combined image sampler (`sampler2D`), with
    /// a nearest, clamp-to-edge sampler the pass owns. Of a depth/stencil image the view
    /// shows the depth, and the pass declares its read of the depth alone
    /// ([`ComputeBuilder::sampled_image_aspect`] for the stencil).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, img: std::sync::Arc<vk_baton::StImage>) {
    /// let b = b.sampled_image(0, img);
    /// # let _ = b; }
    /// ```
    pub fn sampled_image(mut self, binding: u32, image: Arc<StImage>) -> Self {
        let aspect = default_view_aspect(image.desc());
        self.bindings.push(Binding {
            binding,
            resource: Resource::Sampled {
                image,
                sampler: None,
                aspect,
            },
        });
        self
    }

    /// Like [`ComputeBuilder::sampled_image`], showing only `aspect` of the image: DEPTH or
    /// STENCIL of a depth/stencil format (a descriptor's view has one aspect). The pass
    /// declares its read of that aspect alone, so another pass may use the other meanwhile.
    /// [`ComputeBuilder::sampled_image`] and [`ComputeBuilder::sampled_image_with`] show the
    /// depth of such an image. `build()` refuses an aspect the format lacks. A barrier on
    /// one aspect of an image with both needs the device feature `separateDepthStencilLayouts`
    /// (Vulkan 1.2; `vk_baton_context::Context` enables it where supported), as for any use
    /// of one aspect ([`vk_baton::pass::Use::aspect`]).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, ds: std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::ash::vk;
    /// // `usampler2D` in the shader: the stencil values of a D32_SFLOAT_S8_UINT image.
    /// let b = b.sampled_image_aspect(0, ds, vk::ImageAspectFlags::STENCIL);
    /// # let _ = b; }
    /// ```
    pub fn sampled_image_aspect(
        mut self,
        binding: u32,
        image: Arc<StImage>,
        aspect: vk::ImageAspectFlags,
    ) -> Self {
        self.bindings.push(Binding {
            binding,
            resource: Resource::Sampled {
                image,
                sampler: None,
                aspect,
            },
        });
        self
    }

    /// Like [`ComputeBuilder::sampled_image`] with the app's sampler (which must outlive the
    /// pass and every execution of it).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, img: std::sync::Arc<vk_baton::StImage>, s: ash::vk::Sampler) {
    /// let b = b.sampled_image_with(0, img, s);
    /// # let _ = b; }
    /// ```
    pub fn sampled_image_with(
        mut self,
        binding: u32,
        image: Arc<StImage>,
        sampler: vk::Sampler,
    ) -> Self {
        let aspect = default_view_aspect(image.desc());
        self.bindings.push(Binding {
            binding,
            resource: Resource::Sampled {
                image,
                sampler: Some(sampler),
                aspect,
            },
        });
        self
    }

    /// The layout policy of the graphs the pass runs in (default [`LayoutPolicy::Optimal`]):
    /// its sampled images' descriptors, written once at build, name the layout the policy
    /// gives [`Access::COMPUTE_SHADER_SAMPLED_READ`] (`SHADER_READ_ONLY_OPTIMAL`, or
    /// `GENERAL`), and the pass declares its uses in that layout under any graph. Match the
    /// graph's ([`Graph::layout_policy`](vk_baton::Graph::layout_policy)), or a sampled image
    /// changes layout before and after every dispatch. Storage images are in `GENERAL`
    /// under either.
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>, graph: &vk_baton::Graph) {
    /// let b = b.layout_policy(graph.layout_policy());
    /// # let _ = b;
    /// # }
    /// ```
    pub fn layout_policy(mut self, policy: LayoutPolicy) -> Self {
        self.layouts = policy;
        self
    }

    /// The size of the push-constant block in bytes (a multiple of 4; 0 for none).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>) {
    /// let b = b.push_constant_size(16);
    /// # let _ = b;
    /// # }
    /// ```
    pub fn push_constant_size(mut self, bytes: u32) -> Self {
        self.push_size = bytes;
        self
    }

    /// The number of workgroups to dispatch (changeable later with
    /// [`ComputeDispatch::set_groups`]).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>) {
    /// let b = b.groups(32, 32, 1);
    /// # let _ = b;
    /// # }
    /// ```
    pub fn groups(mut self, x: u32, y: u32, z: u32) -> Self {
        self.groups = [x, y, z];
        self
    }

    /// Creates the shader module, layouts, pipeline, views, sampler, descriptor pool and
    /// set, and writes the set; with a transient binding, the set (and the transient images'
    /// views) are left to each execution instead (see the module docs). Fails on duplicate
    /// bindings, missing usage flags, bad ranges, or a Vulkan error (destroying whatever it
    /// had created).
    ///
    /// ```no_run
    /// # fn f(b: vk_baton_passes::compute::ComputeBuilder<'_>) -> vk_baton_passes::Result<()> {
    /// let pass = b.build()?;
    /// # Ok(()) }
    /// ```
    pub fn build(self) -> Result<ComputeDispatch> {
        self.check()?;
        let mut o = Objects {
            device: self.device.clone(),
            module: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            views: Vec::new(),
            sampler: vk::Sampler::null(),
            sampled_layout: self.layouts.layout(Access::COMPUTE_SHADER_SAMPLED_READ),
            spare_pools: Default::default(),
            name: self.name.clone(),
        };
        // On error `o` drops and destroys what was created so far.
        o.create(&self)?;
        log::debug!(
            "compute pass `{}`: {} binding(s), {} push-constant bytes",
            self.name,
            self.bindings.len(),
            self.push_size
        );
        let per_execution = self.bindings.iter().any(Binding::is_transient);
        if per_execution {
            log::debug!(
                "compute pass `{}`: a binding is transient, so each execution writes its own set",
                self.name
            );
        }
        Ok(ComputeDispatch {
            objects: Arc::new(o),
            bindings: self.bindings,
            per_execution,
            push: vec![0; self.push_size as usize],
            groups: self.groups,
            generation: Generation::new(),
        })
    }

    fn check(&self) -> Result<()> {
        if self.spirv.first() != Some(&0x0723_0203) {
            return Err(Error::InvalidInput(format!(
                "`{}`: not SPIR-V (bad magic number)",
                self.name
            )));
        }
        if self.push_size % 4 != 0 {
            return Err(Error::InvalidInput(format!(
                "`{}`: push-constant size {} is not a multiple of 4",
                self.name, self.push_size
            )));
        }
        for (i, b) in self.bindings.iter().enumerate() {
            if self.bindings[..i].iter().any(|o| o.binding == b.binding) {
                return Err(Error::InvalidInput(format!(
                    "`{}`: binding {} given twice",
                    self.name, b.binding
                )));
            }
            match &b.resource {
                Resource::Buffer { buffer, range, .. } => {
                    crate::util::check_bytes(
                        "storage buffer binding",
                        range.offset,
                        range.size,
                        buffer.size(),
                    )?;
                    if !buffer
                        .desc()
                        .usage
                        .contains(vk::BufferUsageFlags::STORAGE_BUFFER)
                    {
                        return Err(Error::InvalidInput(format!(
                            "buffer `{}` lacks usage STORAGE_BUFFER",
                            buffer.name()
                        )));
                    }
                }
                Resource::StorageImage { image, level, .. } => {
                    if *level >= image.desc().mip_levels {
                        return Err(Error::InvalidRegion(format!(
                            "mip level {level} of `{}`",
                            image.name()
                        )));
                    }
                    if !image.desc().usage.contains(vk::ImageUsageFlags::STORAGE) {
                        return Err(Error::InvalidInput(format!(
                            "image `{}` lacks usage STORAGE",
                            image.name()
                        )));
                    }
                }
                Resource::Sampled { image, aspect, .. } => {
                    if !image.desc().usage.contains(vk::ImageUsageFlags::SAMPLED) {
                        return Err(Error::InvalidInput(format!(
                            "image `{}` lacks usage SAMPLED",
                            image.name()
                        )));
                    }
                    let all = image.desc().aspect();
                    if aspect.as_raw().count_ones() != 1 || !all.contains(*aspect) {
                        return Err(Error::InvalidInput(format!(
                            "image `{}`: a sampled view shows one aspect of {all:?}, not {aspect:?}",
                            image.name()
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}
