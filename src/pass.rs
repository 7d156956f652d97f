//! The [`Pass`] trait: a pass declares its uses, then records its commands.
//!
//! ```no_run
//! use std::sync::Arc;
//! use vk_baton::{ash::vk, Access, Declare, Pass, Recorder, StImage};
//!
//! /// Clears an image to a color.
//! struct Clear { img: Arc<StImage>, color: [f32; 4] }
//!
//! impl Pass for Clear {
//!     fn declare(&self, d: &mut Declare<'_>) {
//!         // The clear overwrites everything: old contents are not needed.
//!         d.image_discard(&self.img, Access::TRANSFER_WRITE);
//!     }
//!     fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
//!         let color = vk::ClearColorValue { float32: self.color };
//!         // SAFETY (example): the graph put the image in TRANSFER_DST_OPTIMAL before this pass.
//!         unsafe {
//!             r.device().cmd_clear_color_image(r.cmd(), self.img.handle(), vk::ImageLayout::TRANSFER_DST_OPTIMAL,
//!                 &color, &[self.img.full_range()]);
//!         }
//!         Ok(())
//!     }
//! }
//! ```

use crate::access::Access;
use crate::debug::DebugUtils;
use crate::error::Result;
use crate::fence::CompletionToken;
use crate::queue::Queue;
use crate::range::{BufferRange, ImageRange, SubRange};
use crate::resource::{Resource, StBuffer, StImage};
use ash::vk;
use std::any::Any;
use std::sync::Arc;

/// A unit of GPU work: what it touches, and how to record it.
///
/// `declare` is called once per `insert_pass`, when the graph plans; `record` once per
/// execution, into a command buffer that is already begun, after the graph has recorded every
/// barrier the declared uses need.
///
/// ```no_run
/// use vk_baton::{Declare, Pass, Recorder};
/// struct Nothing;
/// impl Pass for Nothing {
///     fn declare(&self, _d: &mut Declare<'_>) {}
///     fn record(&mut self, _r: &mut Recorder<'_>) -> vk_baton::Result<()> { Ok(()) }
/// }
/// ```
pub trait Pass {
    /// Declares every resource the pass touches, and any binary semaphores.
    fn declare(&self, d: &mut Declare<'_>);
    /// Records the pass's commands into `r.cmd()`.
    fn record(&mut self, r: &mut Recorder<'_>) -> Result<()>;
}

/// One declared use.
#[derive(Clone, Debug)]
pub(crate) struct DeclaredUse {
    pub(crate) resource: Resource,
    pub(crate) access: Access,
    pub(crate) range: Option<SubRange>,
    pub(crate) discard: bool,
}

/// One declared binary wait.
#[derive(Clone, Debug)]
pub(crate) struct DeclaredWait {
    pub(crate) semaphore: vk::Semaphore,
    pub(crate) guards: Vec<Arc<StImage>>,
    pub(crate) stages: Option<vk::PipelineStageFlags2>,
}

/// Everything one pass declared.
#[derive(Clone, Debug, Default)]
pub(crate) struct Declared {
    pub(crate) uses: Vec<DeclaredUse>,
    pub(crate) waits: Vec<DeclaredWait>,
    pub(crate) signals: Vec<(vk::Semaphore, Option<vk::PipelineStageFlags2>)>,
}

/// Collects a pass's declarations; handed to [`Pass::declare`].
///
/// ```no_run
/// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>, buf: &std::sync::Arc<vk_baton::StBuffer>) {
/// use vk_baton::{Access, ImageRange};
/// d.image_range(img, Access::TRANSFER_WRITE, ImageRange::mip(1, 1));
/// d.buffer(buf, Access::TRANSFER_READ);
/// # }
/// ```
pub struct Declare<'a> {
    pub(crate) out: &'a mut Declared,
}

impl Declare<'_> {
    /// Uses the whole image with `access`.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// d.image(img, vk_baton::Access::COMPUTE_SHADER_WRITE);
    /// # }
    /// ```
    pub fn image(&mut self, image: &Arc<StImage>, access: Access) -> &mut Self {
        self.push(Resource::Image(image.clone()), access, None, false)
    }

    /// Uses some mip levels and layers of the image with `access`.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{Access, ImageRange};
    /// d.image_range(img, Access::TRANSFER_READ, ImageRange::mip(0, 1));
    /// # }
    /// ```
    pub fn image_range(
        &mut self,
        image: &Arc<StImage>,
        access: Access,
        range: ImageRange,
    ) -> &mut Self {
        self.push(
            Resource::Image(image.clone()),
            access,
            Some(SubRange::Image(range)),
            false,
        )
    }

    /// Uses the whole image with `access`, promising to overwrite all of it without reading
    /// it: old contents are not needed (no ownership transfer; transition from UNDEFINED).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// d.image_discard(img, vk_baton::Access::COLOR_ATTACHMENT_WRITE);
    /// # }
    /// ```
    pub fn image_discard(&mut self, image: &Arc<StImage>, access: Access) -> &mut Self {
        self.push(Resource::Image(image.clone()), access, None, true)
    }

    /// Like [`Declare::image_discard`], for some mip levels and layers only.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, img: &std::sync::Arc<vk_baton::StImage>) {
    /// use vk_baton::{Access, ImageRange};
    /// d.image_range_discard(img, Access::TRANSFER_WRITE, ImageRange::mip(1, 1));
    /// # }
    /// ```
    pub fn image_range_discard(
        &mut self,
        image: &Arc<StImage>,
        access: Access,
        range: ImageRange,
    ) -> &mut Self {
        self.push(
            Resource::Image(image.clone()),
            access,
            Some(SubRange::Image(range)),
            true,
        )
    }

    /// Uses the whole buffer with `access`.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, b: &std::sync::Arc<vk_baton::StBuffer>) {
    /// d.buffer(b, vk_baton::Access::TRANSFER_READ);
    /// # }
    /// ```
    pub fn buffer(&mut self, buffer: &Arc<StBuffer>, access: Access) -> &mut Self {
        self.push(Resource::Buffer(buffer.clone()), access, None, false)
    }

    /// Uses a byte range of the buffer with `access`.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, b: &std::sync::Arc<vk_baton::StBuffer>) {
    /// use vk_baton::{Access, BufferRange};
    /// d.buffer_range(b, Access::UNIFORM_READ, BufferRange { offset: 256, size: 64 });
    /// # }
    /// ```
    pub fn buffer_range(
        &mut self,
        buffer: &Arc<StBuffer>,
        access: Access,
        range: BufferRange,
    ) -> &mut Self {
        self.push(
            Resource::Buffer(buffer.clone()),
            access,
            Some(SubRange::Buffer(range)),
            false,
        )
    }

    /// Uses the whole buffer, promising to overwrite every byte without reading it.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, b: &std::sync::Arc<vk_baton::StBuffer>) {
    /// d.buffer_discard(b, vk_baton::Access::TRANSFER_WRITE);
    /// # }
    /// ```
    pub fn buffer_discard(&mut self, buffer: &Arc<StBuffer>, access: Access) -> &mut Self {
        self.push(Resource::Buffer(buffer.clone()), access, None, true)
    }

    /// Like [`Declare::buffer_discard`], for a byte range only.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, b: &std::sync::Arc<vk_baton::StBuffer>) {
    /// use vk_baton::{Access, BufferRange};
    /// d.buffer_range_discard(b, Access::TRANSFER_WRITE, BufferRange { offset: 0, size: 64 });
    /// # }
    /// ```
    pub fn buffer_range_discard(
        &mut self,
        buffer: &Arc<StBuffer>,
        access: Access,
        range: BufferRange,
    ) -> &mut Self {
        self.push(
            Resource::Buffer(buffer.clone()),
            access,
            Some(SubRange::Buffer(range)),
            true,
        )
    }

    /// Waits on a binary semaphore before the pass (e.g. swapchain acquire). `guards` is the
    /// image whose contents the semaphore makes ready (the acquired swapchain image): its state
    /// becomes "undefined, ready after this wait", and the wait's stage mask becomes the
    /// stages of its first use.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, acquired: ash::vk::Semaphore, sc: &std::sync::Arc<vk_baton::StImage>) {
    /// // SAFETY: `acquired` was passed to the vkAcquireNextImageKHR that returned `sc`.
    /// unsafe { d.wait_binary(acquired, Some(sc)) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device that stays alive until the execution completes, and by
    /// the time the graph executes, a signal of it has been submitted (or an acquire will
    /// signal it) that no other wait consumes. `guards`, if any, is the image that signal
    /// makes ready.
    pub unsafe fn wait_binary(
        &mut self,
        semaphore: vk::Semaphore,
        guards: Option<&Arc<StImage>>,
    ) -> &mut Self {
        self.out.waits.push(DeclaredWait {
            semaphore,
            guards: guards.into_iter().cloned().collect(),
            stages: None,
        });
        self
    }

    /// Waits on a binary semaphore with an explicit stage mask (an external producer).
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, sem: ash::vk::Semaphore) {
    /// // SAFETY: the app submitted work that signals `sem` before executing the graph.
    /// unsafe { d.wait_binary_at(sem, ash::vk::PipelineStageFlags2::COMPUTE_SHADER) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`Declare::wait_binary`].
    pub unsafe fn wait_binary_at(
        &mut self,
        semaphore: vk::Semaphore,
        stages: vk::PipelineStageFlags2,
    ) -> &mut Self {
        self.out.waits.push(DeclaredWait {
            semaphore,
            guards: Vec::new(),
            stages: Some(stages),
        });
        self
    }

    /// Signals a binary semaphore after the pass (e.g. for present). The signal's stage mask
    /// covers the pass's own uses.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, render_done: ash::vk::Semaphore) {
    /// // SAFETY: `render_done` is unsignalled; the present that waits on it comes later.
    /// unsafe { d.signal_binary(render_done) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// The library submits the raw handle and cannot check it: `semaphore` is a binary
    /// semaphore of the graph's device that stays alive until the execution completes, and
    /// when the graph executes it is unsignalled with no signal pending (every earlier signal
    /// has been waited on).
    pub unsafe fn signal_binary(&mut self, semaphore: vk::Semaphore) -> &mut Self {
        self.out.signals.push((semaphore, None));
        self
    }

    /// Signals a binary semaphore after the pass with an explicit stage mask.
    ///
    /// ```no_run
    /// # fn f(d: &mut vk_baton::Declare<'_>, sem: ash::vk::Semaphore) {
    /// // SAFETY: `sem` is unsignalled, and waited on after the graph.
    /// unsafe { d.signal_binary_at(sem, ash::vk::PipelineStageFlags2::ALL_COMMANDS) };
    /// # }
    /// ```
    ///
    /// # Safety
    ///
    /// As for [`Declare::signal_binary`].
    pub unsafe fn signal_binary_at(
        &mut self,
        semaphore: vk::Semaphore,
        stages: vk::PipelineStageFlags2,
    ) -> &mut Self {
        self.out.signals.push((semaphore, Some(stages)));
        self
    }

    fn push(
        &mut self,
        resource: Resource,
        access: Access,
        range: Option<SubRange>,
        discard: bool,
    ) -> &mut Self {
        self.out.uses.push(DeclaredUse {
            resource,
            access,
            range,
            discard,
        });
        self
    }
}

/// What a pass records with; handed to [`Pass::record`].
///
/// ```no_run
/// # fn f(r: &mut vk_baton::Recorder<'_>, pipeline: ash::vk::Pipeline) {
/// use vk_baton::ash::vk;
/// r.begin_label("dispatch");
/// // SAFETY (example): the pipeline is a live compute pipeline of this device.
/// unsafe {
///     r.device().cmd_bind_pipeline(r.cmd(), vk::PipelineBindPoint::COMPUTE, pipeline);
///     r.device().cmd_dispatch(r.cmd(), 8, 8, 1);
/// }
/// // SAFETY: closes the label this pass opened above.
/// unsafe { r.end_label() };
/// # }
/// ```
pub struct Recorder<'a> {
    pub(crate) device: &'a ash::Device,
    pub(crate) cmd: vk::CommandBuffer,
    pub(crate) queue: &'a Queue,
    pub(crate) keep: &'a mut Vec<Box<dyn Any + Send + Sync>>,
    pub(crate) completion: &'a CompletionToken,
    pub(crate) debug: Option<&'a DebugUtils>,
    pub(crate) pass_name: &'a str,
}

impl Recorder<'_> {
    /// The device.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// let d: &ash::Device = r.device();
    /// # }
    /// ```
    pub fn device(&self) -> &ash::Device {
        self.device
    }

    /// The command buffer, already begun; the graph ends it.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// let cmd: ash::vk::CommandBuffer = r.cmd();
    /// # }
    /// ```
    pub fn cmd(&self) -> vk::CommandBuffer {
        self.cmd
    }

    /// The queue the pass was inserted on.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// let family = r.queue().family();
    /// # }
    /// ```
    pub fn queue(&self) -> &Queue {
        self.queue
    }

    /// The pass's name.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// println!("{}", r.pass_name());
    /// # }
    /// ```
    pub fn pass_name(&self) -> &str {
        self.pass_name
    }

    /// Hands an object to the execution fence, which keeps it alive until the GPU is done
    /// with this execution (descriptor sets, staging buffers, pipelines the pass made).
    ///
    /// ```no_run
    /// # fn f(r: &mut vk_baton::Recorder<'_>, staging: std::sync::Arc<vk_baton::StBuffer>) {
    /// r.keep_alive(staging);
    /// # }
    /// ```
    pub fn keep_alive(&mut self, object: impl Any + Send + Sync) {
        self.keep.push(Box::new(object));
    }

    /// A token that reports when this execution's GPU work has completed: a download handle
    /// can keep it and refuse to read before then.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// let done = r.completion();
    /// assert!(!done.is_complete()); // not even submitted yet
    /// # }
    /// ```
    pub fn completion(&self) -> CompletionToken {
        self.completion.clone()
    }

    /// The debug-utils functions, when the graph has them.
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// // SAFETY: the recorder's command buffer is recording, on this thread.
    /// if let Some(d) = r.debug() { unsafe { d.insert_label(r.cmd(), "x") }; }
    /// # }
    /// ```
    pub fn debug(&self) -> Option<&DebugUtils> {
        self.debug
    }

    /// Opens a debug label region (no-op without debug utils).
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// r.begin_label("inner");
    /// // SAFETY: closes the label just opened.
    /// unsafe { r.end_label() };
    /// # }
    /// ```
    pub fn begin_label(&self, name: &str) {
        if let Some(d) = self.debug {
            // SAFETY: the command buffer is recording and only this pass records into it
            // now; the graph's debug functions belong to its device.
            unsafe { d.begin_label(self.cmd, name) };
        }
    }

    /// Closes the innermost debug label region opened with [`Recorder::begin_label`].
    ///
    /// # Safety
    ///
    /// This pass opened a label with [`Recorder::begin_label`] and has not closed it yet:
    /// closing a label that is not open is undefined behaviour in Vulkan.
    pub unsafe fn end_label(&self) {
        if let Some(d) = self.debug {
            // SAFETY: as in `begin_label`, and a label is open (this function's contract).
            unsafe { d.end_label(self.cmd) };
        }
    }

    /// Inserts a single debug label (no-op without debug utils).
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// r.insert_label("checkpoint");
    /// # }
    /// ```
    pub fn insert_label(&self, name: &str) {
        if let Some(d) = self.debug {
            // SAFETY: as in `begin_label`.
            unsafe { d.insert_label(self.cmd, name) };
        }
    }
}
