//! The [`Pass`] trait: a pass declares its uses, then records its commands.
//!
//! A small pass needs no type of its own: [`GraphBuilder::insert_fn`](crate::GraphBuilder::insert_fn)
//! takes the two halves as closures.
//!
//! ```no_run
//! # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, img: std::sync::Arc<vk_baton::StImage>) -> vk_baton::Result<()> {
//! use vk_baton::{ash::vk, Access};
//! let color = vk::ClearColorValue { float32: [0.0, 0.0, 0.0, 1.0] };
//! graph.record()
//!     .insert_fn("clear", q, |d| { d.uses(&img, Access::CLEAR_COLOR_WRITE).discard(); }, |r| {
//!         // The layout the graph put the image in: TRANSFER_DST_OPTIMAL, or GENERAL under
//!         // `LayoutPolicy::General`.
//!         let layout = r.layout(Access::CLEAR_COLOR_WRITE);
//!         // SAFETY: the graph put the image in `layout` before this pass.
//!         unsafe { r.device().cmd_clear_color_image(r.cmd(), img.handle(), layout, &color,
//!             &[img.full_range()]) };
//!         Ok(())
//!     })
//!     .finish()?.execute()?.wait()?;
//! # Ok(()) }
//! ```
//!
//! A pass that keeps state, or that a library hands out, implements the trait:
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
//!         d.uses(&self.img, Access::CLEAR_COLOR_WRITE).discard();
//!     }
//!     fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
//!         let color = vk::ClearColorValue { float32: self.color };
//!         let layout = r.layout(Access::CLEAR_COLOR_WRITE);
//!         // SAFETY (example): the graph put the image in `layout` before this pass.
//!         unsafe {
//!             r.device().cmd_clear_color_image(r.cmd(), self.img.handle(), layout,
//!                 &color, &[self.img.full_range()]);
//!         }
//!         Ok(())
//!     }
//! }
//! ```

use crate::access::{Access, LayoutPolicy};
use crate::completion::CompletionToken;
use crate::debug::DebugUtils;
use crate::error::Result;
use crate::queue::Queue;
use ash::vk;
use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};

mod declare;
mod decls;
mod replay;

pub use declare::{Declare, Use, UseTarget};
pub(crate) use decls::FrameDecls;
pub(crate) use decls::ResourceIndex;
pub use replay::{Generation, ReplayKey};

/// A pass as inserted into a graph: its name, the pass, and the queue it runs on.
pub(crate) struct PassEntry<'a> {
    /// Borrowed from the app (`insert_pass`: a reused frame copies no name), or owned.
    pub(crate) name: Cow<'a, str>,
    /// Borrowed (`insert_pass`) or owned (`insert_fn`).
    pub(crate) pass: PassSlot<'a>,
    /// Borrowed: a frame clones no queue.
    pub(crate) queue: &'a Queue,
}

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

    /// What the pass's recorded commands depend on, if they may be submitted again
    /// ([`Graph::set_replay`](crate::Graph::set_replay)): a frame whose passes all return
    /// the keys they returned when it was recorded, at rest on the same resources, submits
    /// that recording again without calling `record()`. `None`, the default, records every
    /// execution. See [`ReplayKey::new`] for what a key promises, and [`Generation`].
    fn replay_key(&self) -> Option<ReplayKey> {
        None
    }

    /// Called on a replay in place of `record()`, for a pass whose key asks for it
    /// ([`ReplayKey::calling_replayed`]): the bookkeeping its `record()` does for each
    /// execution, given the execution's completion token. An error ends the execution
    /// before anything is submitted, as an error of `record()` does. The default does nothing.
    ///
    /// ```
    /// use vk_baton::{CompletionToken, Declare, Pass, Recorder};
    /// use vk_baton::pass::ReplayKey;
    /// /// Notes the last execution that used a resource only it knows of.
    /// struct Notes { last: Option<CompletionToken> }
    /// impl Pass for Notes {
    ///     fn declare(&self, _d: &mut Declare<'_>) {}
    ///     fn record(&mut self, r: &mut Recorder<'_>) -> vk_baton::Result<()> {
    ///         self.last = Some(r.completion());
    ///         Ok(())
    ///     }
    ///     fn replay_key(&self) -> Option<ReplayKey> {
    ///         // SAFETY: it records no command.
    ///         Some(unsafe { ReplayKey::new(0) }.calling_replayed())
    ///     }
    ///     fn replayed(&mut self, completion: &CompletionToken) -> vk_baton::Result<()> {
    ///         self.last = Some(completion.clone());
    ///         Ok(())
    ///     }
    /// }
    /// ```
    fn replayed(&mut self, completion: &CompletionToken) -> Result<()> {
        let _ = completion;
        Ok(())
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
    pub(crate) layouts: LayoutPolicy,
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

    /// The layout an image is in for this pass's use of it with `access`: the access's own
    /// ([`Access::layout`]), or `GENERAL` where the graph plans in `GENERAL`
    /// ([`LayoutPolicy`]). Name it in the pass's commands: a copy's `dstImageLayout`, an
    /// attachment's `imageLayout`, a descriptor's `imageLayout`. (A use the pass pinned with
    /// [`Use::layout`](crate::pass::Use::layout) is in the layout it pinned.)
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>, src: &vk_baton::StBuffer, dst: &vk_baton::StImage, region: ash::vk::BufferImageCopy) {
    /// use vk_baton::Access;
    /// let layout = r.layout(Access::COPY_WRITE);
    /// // SAFETY: the pass declared `dst` with COPY_WRITE, so the graph put it in `layout`.
    /// unsafe { r.device().cmd_copy_buffer_to_image(r.cmd(), src.handle(), dst.handle(), layout, &[region]) };
    /// # }
    /// ```
    pub fn layout(&self, access: Access) -> vk::ImageLayout {
        self.layouts.layout(access)
    }

    /// The graph's layout policy for this execution, for the layouts
    /// [`Recorder::layout`] does not cover: one aspect's ([`LayoutPolicy::layout_in`]).
    ///
    /// ```no_run
    /// # fn f(r: &vk_baton::Recorder<'_>) {
    /// use vk_baton::{ash::vk::ImageAspectFlags as Asp, Access};
    /// let depth = r.layout_policy().layout_in(Access::DEPTH_ATTACHMENT_READ, Asp::DEPTH);
    /// # }
    /// ```
    pub fn layout_policy(&self) -> LayoutPolicy {
        self.layouts
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

/// A [`Pass`] made of a declare closure and a record closure. [`GraphBuilder::insert_fn`]
/// builds one for you; build one yourself to insert it with
/// [`GraphBuilder::insert_pass`] or to keep it between graphs.
///
/// [`GraphBuilder::insert_fn`]: crate::GraphBuilder::insert_fn
/// [`GraphBuilder::insert_pass`]: crate::GraphBuilder::insert_pass
///
/// ```no_run
/// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, buf: std::sync::Arc<vk_baton::StBuffer>) -> vk_baton::Result<()> {
/// use vk_baton::{ash::vk, pass::FnPass, Access};
/// let mut fill = FnPass::new(
///     |d| { d.uses(&buf, Access::TRANSFER_WRITE).discard(); },
///     // SAFETY: the buffer is alive; the graph orders this after its earlier uses.
///     |r| { unsafe { r.device().cmd_fill_buffer(r.cmd(), buf.handle(), 0, vk::WHOLE_SIZE, 7) }; Ok(()) },
/// );
/// graph.record().insert_pass("fill", &mut fill, q).finish()?.execute()?.wait()?;
/// # Ok(()) }
/// ```
pub struct FnPass<D, R> {
    declare: D,
    record: R,
    replay_key: Option<ReplayKey>,
}

impl<D, R> FnPass<D, R>
where
    D: Fn(&mut Declare<'_>),
    R: FnMut(&mut Recorder<'_>) -> Result<()>,
{
    /// A pass that declares with `declare` and records with `record`.
    ///
    /// ```
    /// use vk_baton::pass::FnPass;
    /// let nothing = FnPass::new(|_d| {}, |_r| Ok(()));
    /// ```
    pub fn new(declare: D, record: R) -> Self {
        Self {
            declare,
            record,
            replay_key: None,
        }
    }

    /// The same pass, whose recordings may be submitted again while its key is `key`
    /// ([`Pass::replay_key`]). Making the key is the `unsafe` step: the closures' captures
    /// are what it vouches for. A closure pass made anew each frame takes a key that changes
    /// with what it captures, or a [`Generation`] kept beside the objects it records with:
    ///
    /// ```
    /// use vk_baton::pass::{FnPass, Generation};
    /// // Kept with the pipeline the closures would record with; bumped when it is rebuilt.
    /// let pipeline_generation = Generation::new();
    /// // SAFETY (example): the closures record nothing that changes while the generation
    /// // stands.
    /// let key = unsafe { pipeline_generation.key() };
    /// let pass = FnPass::new(|_d| {}, |_r| Ok(())).with_replay_key(key);
    /// ```
    pub fn with_replay_key(self, key: ReplayKey) -> Self {
        Self {
            replay_key: Some(key),
            ..self
        }
    }
}

impl<D, R> Pass for FnPass<D, R>
where
    D: Fn(&mut Declare<'_>),
    R: FnMut(&mut Recorder<'_>) -> Result<()>,
{
    fn declare(&self, d: &mut Declare<'_>) {
        (self.declare)(d)
    }

    fn record(&mut self, r: &mut Recorder<'_>) -> Result<()> {
        (self.record)(r)
    }

    fn replay_key(&self) -> Option<ReplayKey> {
        self.replay_key
    }
}

impl<D, R> fmt::Debug for FnPass<D, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnPass")
    }
}

/// A pass in a graph builder: borrowed from the app ([`GraphBuilder::insert_pass`]) or owned
/// by the builder ([`GraphBuilder::insert_fn`], whose closures have nowhere else to live).
///
/// [`GraphBuilder::insert_fn`]: crate::GraphBuilder::insert_fn
/// [`GraphBuilder::insert_pass`]: crate::GraphBuilder::insert_pass
///
/// The `Send` kinds may be recorded on another thread: the `parallel-recording` feature makes
/// them (`GraphBuilder::insert_send_pass` and `insert_send_fn`), and hands them to its
/// recording threads.
pub(crate) enum PassSlot<'a> {
    Borrowed(&'a mut (dyn Pass + 'a)),
    Owned(Box<dyn Pass + 'a>),
    #[allow(dead_code, reason = "made only by the parallel-recording feature")]
    BorrowedSend(&'a mut (dyn Pass + Send + 'a)),
    #[allow(dead_code, reason = "made only by the parallel-recording feature")]
    OwnedSend(Box<dyn Pass + Send + 'a>),
}

impl<'a> Deref for PassSlot<'a> {
    type Target = dyn Pass + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            PassSlot::Borrowed(p) => &**p,
            PassSlot::Owned(p) => &**p,
            PassSlot::BorrowedSend(p) => &**p,
            PassSlot::OwnedSend(p) => &**p,
        }
    }
}

impl DerefMut for PassSlot<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            PassSlot::Borrowed(p) => &mut **p,
            PassSlot::Owned(p) => &mut **p,
            PassSlot::BorrowedSend(p) => &mut **p,
            PassSlot::OwnedSend(p) => &mut **p,
        }
    }
}

impl<'a, P: Pass + 'a> From<&'a mut P> for PassSlot<'a> {
    fn from(pass: &'a mut P) -> Self {
        PassSlot::Borrowed(pass)
    }
}
