//! The runtime side of transient resources: the graph's transient handles, and the memory,
//! images, buffers and views it binds them to for each execution.
//!
//! The placement planner (`../placement/`) decides where each transient goes: heaps, offsets,
//! and the barriers that order transients sharing memory. Here that placement becomes Vulkan
//! objects:
//!
//! - **Handles.** [`Transients::image`] and [`Transients::buffer`] make a transient
//!   [`StImage`] or [`StBuffer`] from a description (with the memory requirements of such an
//!   object, asked of a probe), kept under its name, so that asking again for the
//!   same name and description returns the same handle and creates nothing.
//! - **Heap sets** (`sets.rs`). An execution's transients live in one *heap set*: heaps
//!   (gpu-allocator allocations, one per plan heap, laid out by `layout.rs`) and the images,
//!   buffers and views bound into them. A set serves one execution at a time, and another
//!   only once that execution's completion token says it is done, so aliasing never spans two
//!   executions: each one's plan orders its own transients, and nothing else touches its
//!   memory. A frame loop with `k` executions in flight settles on `k` sets.
//! - **Objects.** A `VkImage` is bound to memory once, for good, so a set keeps its objects
//!   keyed by (description, heap, offset): the next execution with the same placement binds
//!   the same objects, and a steady frame creates nothing and allocates nothing. Two
//!   transients of one description placed at the same offset one after the other share one
//!   object, as the plan orders them like one resource.
//!
//! Binding sets each transient's current handle (and view), which its passes read while they
//! record; the set's lock is held until recording ends, so another execution of the graph
//! cannot rebind them meanwhile.

mod layout;
mod sets;

use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::extensions::{TransientHooks, TransientsBound};
use crate::fx::FxBuildHasher;
use crate::plan::{Plan, TransientMemory};
use crate::resource::{BufferDesc, ImageDesc, Resource, SharedAllocator, StBuffer, StImage};
use ash::vk;
use gpu_allocator::MemoryLocation;
use layout::{check_budget, heap_needs, Rules};
use parking_lot::{Mutex, MutexGuard};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sets::{HeapSets, Kind};

/// What a graph's transients hold and have made so far, from
/// [`Graph::transient_stats`](crate::Graph::transient_stats).
///
/// The counters only grow: compare two snapshots to see what a stretch of frames made (a
/// steady frame makes nothing). See [`Graph::transient_image`](crate::Graph::transient_image)
/// for an example.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransientStats {
    /// Heap sets: one per execution in flight at once, at most four, plus any set left to an
    /// execution that failed while part of it may still run on the GPU (never bound again).
    pub sets: usize,
    /// Heaps (device memory allocations) held now, over every set.
    pub heaps: usize,
    /// Their bytes, as allocated (each heap rounded up to `bufferImageGranularity`).
    pub heap_bytes: u64,
    /// The bytes of the heap set the last execution's transients were bound in: the memory
    /// one execution takes.
    pub execution_heap_bytes: u64,
    /// Heaps allocated so far.
    pub heap_allocations: u64,
    /// Vulkan objects created so far: images, buffers and image views, counting the probe
    /// object each new transient asks its memory requirements of.
    pub objects_created: u64,
    /// Executions whose transients were bound.
    pub executions: u64,
}

/// A graph's transients: its handles by name and its heap sets.
pub(crate) struct Transients {
    /// Process-unique; every handle of this graph carries it.
    id: u64,
    device: Arc<ash::Device>,
    handles: Mutex<Handles>,
    /// Read by planning and binding alike; never held with another lock.
    rules: Mutex<Rules>,
    /// Held from binding until the execution's recording ends.
    sets: Mutex<HeapSets>,
}

struct Handles {
    /// The device's `bufferImageGranularity`, once the graph has an allocator.
    granularity: Option<u64>,
    by_name: HashMap<String, Resource, FxBuildHasher>,
    /// Probe objects created.
    probes: u64,
}

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

impl Transients {
    pub(crate) fn new(device: Arc<ash::Device>) -> Self {
        Transients {
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            device: device.clone(),
            handles: Mutex::new(Handles {
                granularity: None,
                by_name: HashMap::default(),
                probes: 0,
            }),
            rules: Mutex::new(Rules::default()),
            sets: Mutex::new(HeapSets::new(device)),
        }
    }

    /// Gives the graph the allocator its heaps come from, and the device's
    /// `bufferImageGranularity`.
    pub(crate) fn set_allocator(
        &self,
        allocator: &SharedAllocator,
        granularity: u64,
    ) -> Result<()> {
        if allocator.device_handle() != self.device.handle() {
            return Err(Error::ForeignDevice {
                what: "the allocator given for transients".into(),
            });
        }
        if !granularity.is_power_of_two() {
            return Err(Error::InvalidArgument(format!(
                "bufferImageGranularity {granularity} is not a power of two"
            )));
        }
        let mut handles = self.handles.lock();
        if handles.granularity.is_some_and(|g| g != granularity) {
            return Err(Error::InvalidArgument(
                "the graph's transients already have another bufferImageGranularity".into(),
            ));
        }
        self.sets.lock().set_allocator(allocator, granularity)?;
        handles.granularity = Some(granularity);
        Ok(())
    }

    /// Whether transients share memory where the plan lets them (on by default).
    pub(crate) fn set_aliasing(&self, on: bool) {
        self.rules.lock().aliasing = on;
    }

    /// The most bytes of heaps one execution's transients may take; `None`: no limit.
    pub(crate) fn set_budget(&self, bytes: Option<u64>) {
        self.rules.lock().budget = bytes;
    }

    pub(crate) fn budget(&self) -> Option<u64> {
        self.rules.lock().budget
    }

    pub(crate) fn stats(&self) -> TransientStats {
        let probes = self.handles.lock().probes;
        let mut stats = self.sets.lock().stats();
        stats.objects_created += probes;
        stats
    }

    /// The granularity, or the error of a graph without an allocator.
    fn granularity(handles: &Handles, name: &str) -> Result<u64> {
        handles.granularity.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "transient `{name}`: the graph has no allocator for transients \
                 (Graph::set_transient_allocator; Context::graph sets one)"
            ))
        })
    }

    /// The transient image `name` of `desc`: the one made before under that name and
    /// description, or a new one (which replaces an earlier one of another description).
    pub(crate) fn image(&self, desc: ImageDesc, name: &str) -> Result<Arc<StImage>> {
        let mut handles = self.handles.lock();
        if let Some(Resource::Image(i)) = handles.by_name.get(name) {
            if *i.desc() == desc {
                return Ok(i.clone());
            }
        }
        let granularity = Self::granularity(&handles, name)?;
        let img = Arc::new(transient_image(
            &self.device,
            desc,
            name,
            granularity,
            self.id,
        )?);
        handles.probes += 1;
        handles
            .by_name
            .insert(name.to_owned(), Resource::Image(img.clone()));
        Ok(img)
    }

    /// The transient buffer `name` of `desc`, as [`Transients::image`].
    pub(crate) fn buffer(&self, desc: BufferDesc, name: &str) -> Result<Arc<StBuffer>> {
        let mut handles = self.handles.lock();
        if let Some(Resource::Buffer(b)) = handles.by_name.get(name) {
            if *b.desc() == desc {
                return Ok(b.clone());
            }
        }
        let granularity = Self::granularity(&handles, name)?;
        let buf = Arc::new(transient_buffer(
            &self.device,
            desc,
            name,
            granularity,
            self.id,
        )?);
        handles.probes += 1;
        handles
            .by_name
            .insert(name.to_owned(), Resource::Buffer(buf.clone()));
        Ok(buf)
    }
}

impl TransientHooks for Transients {
    /// Refuses `plan` when its transients' heaps, laid out as binding would, take more than the
    /// budget: checked when a frame is planned, before anything is allocated (and again when
    /// an execution binds, for a held plan or a budget set since). Allocates nothing.
    fn check_budget(&self, plan: &Plan) -> Result<()> {
        let rules = *self.rules.lock();
        if rules.budget.is_none() || plan.transients.placements.is_empty() {
            return Ok(());
        }
        let granularity = self.handles.lock().granularity.unwrap_or(1);
        let mut need = 0u64;
        for n in heap_needs(plan, rules.aliasing, granularity) {
            need = need.saturating_add(n?.size);
        }
        check_budget(need, rules, plan)
    }

    /// The plan places exactly the transients its recorded passes use (`finish()` checked
    /// that with [`Place::check`](crate::plan::transient::Place::check) when it planned),
    /// and `resources` are transient exactly where the plan declares them so (the plan's
    /// declarations were lowered from them; debug builds check it again, and binding checks
    /// each placed one): then every transient a recorded pass uses is bound. A transient
    /// that only culled passes use is not: nothing records a use of it.
    fn bind<'a>(
        &'a self,
        plan: &Plan,
        resources: &[Resource],
        token: &CompletionToken,
        debug: Option<&DebugUtils>,
    ) -> Result<Option<TransientsBound<'a>>> {
        let decls = &plan.input.resources;
        if decls.len() != resources.len() {
            return Err(Error::InvalidInput(format!(
                "{} resources for a plan of {}",
                resources.len(),
                decls.len()
            )));
        }
        #[cfg(debug_assertions)]
        if let Some((r, _)) = resources
            .iter()
            .zip(decls)
            .find(|(r, d)| r.transient().is_some() != d.transient.is_some())
        {
            return Err(Error::InvalidInput(format!(
                "`{}` is transient in the plan or in the graph, not in both",
                r.name()
            )));
        }
        if plan.transients.placements.is_empty() {
            return Ok(None);
        }
        let rules = *self.rules.lock();
        let mut sets = self.sets.lock();
        sets.bind((plan, rules), resources, token, self.id, debug)?;
        Ok(Some(MutexGuard::map(sets, |s| s as &mut (dyn Any + Send))))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// The Vulkan objects: the probe that asks the driver what memory a description needs (once
// per handle), and the images, buffers and views a heap set binds.

/// A transient image of `desc` for the graph `graph`: no `VkImage` of its own, and the
/// memory requirements of one (asked of a probe image, destroyed at once).
fn transient_image(
    device: &ash::Device,
    desc: ImageDesc,
    name: &str,
    buffer_image_granularity: u64,
    graph: u64,
) -> Result<StImage> {
    desc.check(name)?;
    let (probe, req) = create_image(device, &desc)?;
    // SAFETY: the probe was never bound or used.
    unsafe { device.destroy_image(probe, None) };
    let mut memory = TransientMemory::image(req.size, req.alignment, req.memory_type_bits)
        .with_granularity(buffer_image_granularity);
    memory.linear = desc.tiling == vk::ImageTiling::LINEAR;
    Ok(StImage::new_transient(device, desc, name, memory, graph))
}

/// A transient buffer of `desc` for the graph `graph`: no `VkBuffer` of its own, and the
/// memory requirements of one (asked of a probe buffer, destroyed at once).
fn transient_buffer(
    device: &ash::Device,
    desc: BufferDesc,
    name: &str,
    buffer_image_granularity: u64,
    graph: u64,
) -> Result<StBuffer> {
    if desc.size == 0 {
        return Err(Error::InvalidArgument(format!("buffer `{name}`: size 0")));
    }
    if desc.location != MemoryLocation::GpuOnly {
        return Err(Error::InvalidArgument(format!(
            "transient buffer `{name}`: its memory is device-local (MemoryLocation::GpuOnly); \
             only the GPU inside one execution touches a transient"
        )));
    }
    let (probe, req) = create_buffer(device, &desc)?;
    // SAFETY: the probe was never bound or used.
    unsafe { device.destroy_buffer(probe, None) };
    let memory = TransientMemory::buffer(req.size, req.alignment, req.memory_type_bits)
        .with_granularity(buffer_image_granularity);
    Ok(StBuffer::new_transient(device, desc, name, memory, graph))
}

/// Whether images with `usage` may have views (VUID-VkImageViewCreateInfo-image-04441).
fn viewable(usage: vk::ImageUsageFlags) -> bool {
    use vk::ImageUsageFlags as U;
    usage.intersects(
        U::SAMPLED
            | U::STORAGE
            | U::COLOR_ATTACHMENT
            | U::DEPTH_STENCIL_ATTACHMENT
            | U::INPUT_ATTACHMENT
            | U::TRANSIENT_ATTACHMENT,
    )
}

/// Creates an unbound image of `desc` and asks for its memory requirements.
pub(super) fn create_image(
    device: &ash::Device,
    desc: &ImageDesc,
) -> Result<(vk::Image, vk::MemoryRequirements)> {
    // SAFETY: a valid create info (Vulkan validates the rest) on a live device.
    let image = unsafe { device.create_image(&desc.create_info(), None) }
        .map_err(|e| Error::vk("vkCreateImage", e))?;
    // SAFETY: `image` is a live image of `device`.
    let req = unsafe { device.get_image_memory_requirements(image) };
    Ok((image, req))
}

/// A view of all of `image` (made from `desc`), or null when its usage allows none.
pub(super) fn create_view(
    device: &ash::Device,
    image: vk::Image,
    desc: &ImageDesc,
) -> Result<vk::ImageView> {
    if !viewable(desc.usage) {
        return Ok(vk::ImageView::null());
    }
    let layered = desc.array_layers > 1;
    let view_type = match (desc.image_type, layered) {
        (vk::ImageType::TYPE_1D, false) => vk::ImageViewType::TYPE_1D,
        (vk::ImageType::TYPE_1D, true) => vk::ImageViewType::TYPE_1D_ARRAY,
        (vk::ImageType::TYPE_3D, _) => vk::ImageViewType::TYPE_3D,
        (_, false) => vk::ImageViewType::TYPE_2D,
        (_, true) => vk::ImageViewType::TYPE_2D_ARRAY,
    };
    let info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(view_type)
        .format(desc.format)
        .subresource_range(vk::ImageSubresourceRange {
            aspect_mask: desc.aspect(),
            base_mip_level: 0,
            level_count: desc.mip_levels,
            base_array_layer: 0,
            layer_count: desc.array_layers,
        });
    // SAFETY: `image` is a live image of `device` made from `desc`, whose usage allows views.
    unsafe { device.create_image_view(&info, None) }.map_err(|e| Error::vk("vkCreateImageView", e))
}

/// Creates an unbound buffer of `desc` and asks for its memory requirements.
pub(super) fn create_buffer(
    device: &ash::Device,
    desc: &BufferDesc,
) -> Result<(vk::Buffer, vk::MemoryRequirements)> {
    let (mode, families) = desc.sharing.vk_mode();
    let info = vk::BufferCreateInfo::default()
        .size(desc.size)
        .usage(desc.usage)
        .sharing_mode(mode)
        .queue_family_indices(families);
    // SAFETY: a valid create info on a live device.
    let buffer =
        unsafe { device.create_buffer(&info, None) }.map_err(|e| Error::vk("vkCreateBuffer", e))?;
    // SAFETY: `buffer` is a live buffer of `device`.
    let req = unsafe { device.get_buffer_memory_requirements(buffer) };
    Ok((buffer, req))
}

/// Names a graph's object of a transient: its debug name, with the heap set it belongs to.
pub(super) fn name_object<H: vk::Handle>(
    debug: Option<&DebugUtils>,
    handle: H,
    name: &str,
    set: usize,
) {
    if let Some(d) = debug {
        // SAFETY: `handle` is a live object of the device the graph's debug functions were
        // loaded for (`Graph::new`'s contract).
        unsafe { d.set_name(handle, &format!("{name} (transient, heap set {set})")) };
    }
}

/// Where a new object goes: `size` bytes at `offset` of a heap of `heap_size` bytes, which is
/// `memory` from `at`.
struct Place {
    memory: vk::DeviceMemory,
    at: u64,
    offset: u64,
    size: u64,
    heap_size: u64,
    memory_type_bits: u32,
}

impl Place {
    /// Whether an object with requirements `req` fits here.
    fn check(&self, req: vk::MemoryRequirements, name: &str) -> Result<()> {
        let ok = req.size <= self.size
            && self.offset + req.size <= self.heap_size
            && self.at % req.alignment.max(1) == 0
            && self.memory_type_bits & !req.memory_type_bits == 0;
        if ok {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "transient `{name}` needs {req:?}, which its place ({} bytes at {} of a {}-byte heap) \
             does not satisfy",
            self.size, self.offset, self.heap_size
        )))
    }
}

/// A new image (and view) for `img` at `place`, bound and named; with how many Vulkan objects
/// were made.
fn new_image(
    device: &ash::Device,
    (img, serial): (&StImage, u64),
    place: &Place,
    debug: Option<&DebugUtils>,
    set: usize,
) -> Result<(Kind, u64)> {
    let desc = img.desc();
    let (image, req) = create_image(device, desc)?;
    // SAFETY: `image` is unbound and unused; `memory` is alive, of a type it accepts, with
    // room at `at` (checked first).
    let bound = place.check(req, img.name()).and_then(|()| {
        unsafe { device.bind_image_memory(image, place.memory, place.at) }
            .map_err(|e| Error::vk("vkBindImageMemory", e))
    });
    let view = match bound.and_then(|()| create_view(device, image, desc)) {
        Ok(v) => v,
        Err(e) => {
            // SAFETY: never used.
            unsafe { device.destroy_image(image, None) };
            return Err(e);
        }
    };
    name_object(debug, image, img.name(), set);
    img.bind_transient(image, view, serial);
    let created = 1 + u64::from(view != vk::ImageView::null());
    let kind = Kind::Image {
        desc: desc.clone(),
        image,
        view,
    };
    Ok((kind, created))
}

/// A new buffer for `buf` at `place`, bound and named; with how many Vulkan objects were made.
fn new_buffer(
    device: &ash::Device,
    (buf, serial): (&StBuffer, u64),
    place: &Place,
    debug: Option<&DebugUtils>,
    set: usize,
) -> Result<(Kind, u64)> {
    let desc = buf.desc();
    let (buffer, req) = create_buffer(device, desc)?;
    // SAFETY: as for an image.
    let bound = place.check(req, buf.name()).and_then(|()| {
        unsafe { device.bind_buffer_memory(buffer, place.memory, place.at) }
            .map_err(|e| Error::vk("vkBindBufferMemory", e))
    });
    if let Err(e) = bound {
        // SAFETY: never used.
        unsafe { device.destroy_buffer(buffer, None) };
        return Err(e);
    }
    name_object(debug, buffer, buf.name(), set);
    buf.bind_transient(buffer, serial);
    let kind = Kind::Buffer {
        desc: desc.clone(),
        buffer,
    };
    Ok((kind, 1))
}
