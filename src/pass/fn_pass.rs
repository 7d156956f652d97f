//! [`FnPass`]: a pass made of two closures, for passes too small for a struct and an impl.

use super::{Declare, Pass, Recorder};
use crate::error::Result;
use std::fmt;
use std::ops::{Deref, DerefMut};

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
        Self { declare, record }
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
