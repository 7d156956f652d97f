//! What transients add to [`Graph`] and [`GraphBuilder`]: images and buffers declared by
//! description, whose contents live only inside one execution and whose memory transients
//! share where the plan orders them one after the other.
//!
//! The graph's [`Transients`] are installed in its pools the first time a method here needs
//! them; planning and recording then reach them through the executor's extension point
//! ([`TransientHooks`](crate::extensions::TransientHooks)).

use super::runtime::{TransientStats, Transients};
use crate::error::Result;
use crate::graph::{Graph, GraphBuilder};
use crate::resource::{BufferDesc, ImageDesc, SharedAllocator, StBuffer, StImage};
use std::sync::Arc;

/// The graph's transients, installed in its pools the first time.
fn transients(graph: &Graph) -> &Transients {
    let device = graph.device_arc();
    let hooks =
        (graph.pools().transients()).get_or_init(|| Box::new(Transients::new(device.clone())));
    hooks
        .as_any()
        .downcast_ref()
        .expect("only this leaf installs the graph's transients")
}

/// The graph's transients, if it has any yet.
fn installed(graph: &Graph) -> Option<&Transients> {
    graph.pools().transients().get()?.as_any().downcast_ref()
}

impl Graph {
    /// A transient image of `desc`: its contents live only inside one execution, and its
    /// memory is shared with other transients whose uses the plan orders before or after its
    /// own. Use it like any [`StImage`]: passes hold the `Arc` and declare uses of it.
    ///
    /// - **Its first use in each execution writes all of it** without reading (a whole-range
    ///   write with [`discard`](crate::pass::Use::discard)): `finish()` refuses a graph that
    ///   reads a transient, or writes part of it, before any pass wrote it, and one that hands
    ///   it to the host or a binary semaphore.
    /// - **Its memory is the graph's.** The plan places every transient in heaps
    ///   ([`Plan::transients`](crate::plan::Plan::transients)), two of them in the same bytes
    ///   only when every use of one happens-before the first use of the other, with the barriers
    ///   and semaphores that ordering needs. Each execution binds the transients to images,
    ///   buffers and views at their places, which the graph creates the first time and keeps:
    ///   a steady frame allocates no memory and creates no Vulkan object
    ///   ([`Graph::transient_stats`]). [`StImage::handle`] and [`StImage::view`] return the
    ///   objects of the execution being recorded.
    /// - **It never aliases a resource the app owns**, and it starts every execution fresh
    ///   (`UNDEFINED`, no owner, nothing to wait for).
    ///
    /// The graph keeps the handle under `name`: asking again for the same name and description
    /// returns the same handle (so a frame loop may ask every frame), and another description
    /// makes a new one. Needs the graph's allocator (`vk_baton_context::Context::graph` sets
    /// it; otherwise [`Graph::set_transient_allocator`]). Creating one asks the driver for the
    /// memory requirements of such an image, with a probe image destroyed at once.
    ///
    /// The example runs a chain of three transients into the app's own image: `c` is written
    /// after `a`'s last read, so the plan gives it `a`'s memory (and, with the same description
    /// and place, the same `VkImage`), and the frame needs the memory of two images. From the
    /// second frame on, nothing is allocated or created.
    ///
    /// ```no_run
    /// # fn main() -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, Access, ImageDesc, Recorder, StImage};
    /// use vk_baton_context::Context;
    /// let ctx = Context::new()?;
    /// let graph = ctx.graph()?;
    /// let q = ctx.graphics();
    /// let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    /// let desc = ImageDesc::new_2d(256, 256, vk::Format::R8G8B8A8_UNORM, usage);
    /// let a = graph.transient_image(desc.clone(), "a")?;
    /// let b = graph.transient_image(desc.clone(), "b")?;
    /// let c = graph.transient_image(desc.clone(), "c")?;
    /// let output = ctx.image(desc, "output")?; // the app's: it outlives the frame
    ///
    /// let copy = |r: &mut Recorder<'_>, from: &StImage, to: &StImage| {
    ///     let layers = vk::ImageSubresourceLayers::default()
    ///         .aspect_mask(vk::ImageAspectFlags::COLOR)
    ///         .layer_count(1);
    ///     let region = vk::ImageCopy::default()
    ///         .src_subresource(layers)
    ///         .dst_subresource(layers)
    ///         .extent(from.desc().extent);
    ///     let (src, dst) = (r.layout(Access::COPY_READ), r.layout(Access::COPY_WRITE));
    ///     // SAFETY: `handle()` is the image bound for this execution, in the declared layout.
    ///     unsafe {
    ///         r.device().cmd_copy_image(r.cmd(), from.handle(), src, to.handle(), dst, &[region])
    ///     };
    ///     Ok(())
    /// };
    /// let mut made = None;
    /// for _frame in 0..3 {
    ///     let planned = graph
    ///         .record()
    ///         .insert_fn("clear a", q, |d| {
    ///             // A transient's first use writes all of it: `discard`.
    ///             d.uses(&a, Access::CLEAR_COLOR_WRITE).discard();
    ///         }, |r| {
    ///             let color = vk::ClearColorValue { float32: [0.2, 0.4, 0.6, 1.0] };
    ///             let layout = r.layout(Access::CLEAR_COLOR_WRITE);
    ///             // SAFETY: as above.
    ///             unsafe { r.device().cmd_clear_color_image(r.cmd(), a.handle(), layout, &color,
    ///                 &[a.full_range()]) };
    ///             Ok(())
    ///         })
    ///         .insert_fn("a to b", q, |d| {
    ///             d.uses(&a, Access::COPY_READ);
    ///             d.uses(&b, Access::COPY_WRITE).discard();
    ///         }, |r| copy(r, &a, &b))
    ///         .insert_fn("b to c", q, |d| {
    ///             d.uses(&b, Access::COPY_READ);
    ///             d.uses(&c, Access::COPY_WRITE).discard();
    ///         }, |r| copy(r, &b, &c))
    ///         .insert_fn("c to output", q, |d| {
    ///             d.uses(&c, Access::COPY_READ);
    ///             d.uses(&output, Access::COPY_WRITE).discard();
    ///         }, |r| copy(r, &c, &output))
    ///         .finish()?;
    ///     let t = &planned.plan().transients;
    ///     assert_eq!(t.placement(2).unwrap().offset, t.placement(0).unwrap().offset);
    ///     assert_eq!(3 * t.total_size(), 2 * t.unaliased_size);
    ///     planned.execute()?.wait()?;
    ///     let objects = graph.transient_stats().objects_created;
    ///     assert_eq!(*made.get_or_insert(objects), objects);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn transient_image(&self, desc: ImageDesc, name: &str) -> Result<Arc<StImage>> {
        transients(self).image(desc, name)
    }

    /// A transient buffer of `desc` (device-local: `MemoryLocation::GpuOnly`), as
    /// [`Graph::transient_image`] makes images.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc};
    /// let tiles = graph.transient_buffer(BufferDesc::new(1 << 20, vk::BufferUsageFlags::STORAGE_BUFFER), "light tiles")?;
    /// assert!(tiles.is_transient());
    /// # Ok(()) }
    /// ```
    pub fn transient_buffer(&self, desc: BufferDesc, name: &str) -> Result<Arc<StBuffer>> {
        transients(self).buffer(desc, name)
    }

    /// Gives the graph the allocator its transients' heaps come from, with the device's
    /// `VkPhysicalDeviceLimits::bufferImageGranularity`. `vk_baton_context::Context::graph`
    /// does this for its graphs; a graph made with [`Graph::new`] needs it before its first
    /// transient.
    /// Fails on an allocator of another device, and once the graph holds transient memory.
    ///
    /// ```no_run
    /// # fn f(instance: &ash::Instance, physical: ash::vk::PhysicalDevice, graph: &vk_baton::Graph,
    /// #      allocator: &vk_baton::SharedAllocator) -> vk_baton::Result<()> {
    /// // SAFETY: a plain query of the physical device the graph's device was made from.
    /// let limits = unsafe { instance.get_physical_device_properties(physical) }.limits;
    /// // SAFETY: the granularity is that device's.
    /// unsafe { graph.set_transient_allocator(allocator, limits.buffer_image_granularity)? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// `buffer_image_granularity` is the `bufferImageGranularity` of the graph's device (or a
    /// multiple of it): the placement keeps buffers and optimal-tiling images that many bytes
    /// apart where they must not share memory, and a smaller value lets them alias.
    pub unsafe fn set_transient_allocator(
        &self,
        allocator: &SharedAllocator,
        buffer_image_granularity: u64,
    ) -> Result<()> {
        transients(self).set_allocator(allocator, buffer_image_granularity)
    }

    /// Whether transients share memory where the plan lets them (on by default). Off, every
    /// transient gets memory of its own (the plan is the same, only the binding changes): for
    /// measuring what aliasing saves, and for checking that results do not depend on it.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// graph.set_transient_aliasing(false);
    /// # }
    /// ```
    pub fn set_transient_aliasing(&self, on: bool) {
        transients(self).set_aliasing(on);
    }

    /// Caps the memory one execution's transients take at `bytes` (`None`, the default: no
    /// cap). The heaps a frame's plan places its transients in, as they would be allocated
    /// (whole `bufferImageGranularity` pages; one heap per transient with aliasing off), are
    /// checked when the frame is planned, before anything is allocated: `finish()` returns
    /// [`Error::TransientBudget`](crate::Error::TransientBudget) naming the need and the
    /// budget. A held plan is checked again when it executes, so a budget lowered since
    /// holds for it too.
    ///
    /// The cap is on what the heap set of one execution holds. Without a budget, a set keeps
    /// a heap made for an earlier frame while it is less than twice what the new frame needs
    /// (so frames of varying size allocate nothing); with one, a set whose kept heaps would
    /// total more than the budget allocates the larger-than-needed ones anew at the frame's
    /// need, so each set holds at most the budget for its execution
    /// ([`TransientStats::execution_heap_bytes`]). With `k` executions in flight the graph
    /// holds up to `k` sets ([`TransientStats::sets`]), so up to `k` times the budget.
    /// Lowering the budget frees nothing by itself: each set meets the new budget when it is
    /// next bound, and one not bound since keeps what it held. The placement already needs as little memory as it finds for
    /// the plan's order (sharing memory between every two transients the plan orders); it
    /// does not reorder passes to fit a budget.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// graph.set_transient_budget(Some(256 << 20));
    /// assert_eq!(graph.transient_budget(), Some(256 << 20));
    /// # }
    /// ```
    pub fn set_transient_budget(&self, bytes: Option<u64>) {
        transients(self).set_budget(bytes);
    }

    /// The budget from [`Graph::set_transient_budget`]; `None` without one.
    pub fn transient_budget(&self) -> Option<u64> {
        installed(self).and_then(Transients::budget)
    }

    /// What the graph's transients hold and have made so far: heaps, bytes, objects created.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let s = graph.transient_stats();
    /// println!("{} heap(s), {} bytes", s.heaps, s.heap_bytes);
    /// # }
    /// ```
    pub fn transient_stats(&self) -> TransientStats {
        installed(self).map_or_else(TransientStats::default, Transients::stats)
    }
}

impl GraphBuilder<'_> {
    /// [`Graph::transient_image`] of the builder's graph.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, ImageDesc};
    /// let builder = graph.record();
    /// let gbuffer = builder.transient_image(ImageDesc::storage_2d(64, 64, vk::Format::R8G8B8A8_UNORM), "albedo")?;
    /// # Ok(()) }
    /// ```
    pub fn transient_image(&self, desc: ImageDesc, name: &str) -> Result<Arc<StImage>> {
        self.graph.transient_image(desc, name)
    }

    /// [`Graph::transient_buffer`] of the builder's graph.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) -> vk_baton::Result<()> {
    /// use vk_baton::{ash::vk, BufferDesc};
    /// let builder = graph.record();
    /// let tiles = builder.transient_buffer(BufferDesc::new(4096, vk::BufferUsageFlags::STORAGE_BUFFER), "tiles")?;
    /// # Ok(()) }
    /// ```
    pub fn transient_buffer(&self, desc: BufferDesc, name: &str) -> Result<Arc<StBuffer>> {
        self.graph.transient_buffer(desc, name)
    }
}
