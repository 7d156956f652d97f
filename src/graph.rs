//! [`Graph`] (command pools, buffers and fences reused across executions), [`GraphBuilder`]
//! (passes in program order) and [`Planned`] (a plan ready to execute).
//!
//! ```no_run
//! # fn f(ctx: &vk_baton::Context, q: &vk_baton::Queue, pass: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
//! let graph = ctx.graph()?;
//! let planned = graph.record().insert_pass("work", pass, q).finish()?;
//! println!("{planned}");
//! planned.execute()?.wait()?;
//! # Ok(()) }
//! ```

use crate::debug::DebugUtils;
use crate::error::{Error, Result};
use crate::fence::{ExecutionFence, FenceContents};
use crate::pass::{Declare, Declared, Pass};
use crate::plan::{
    self, BinarySignalDecl, BinaryWaitDecl, PassDecl, Plan, PlanInput, QueueDecl, Recorded,
    ResourceDecl, ResourceKind, SegmentState, UseDecl,
};
use crate::queue::Queue;
use crate::resource::Resource;
use ash::vk;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Reusable objects of one queue family.
#[derive(Default)]
pub(crate) struct FamilyPool {
    pub(crate) pool: vk::CommandPool,
    pub(crate) free: Vec<vk::CommandBuffer>,
}

/// Command pools per family and spare fences. Held locked while recording (command pools
/// need external synchronization).
#[derive(Default)]
pub(crate) struct Pools {
    pub(crate) families: HashMap<u32, FamilyPool>,
    /// Unsignalled, ready to submit with.
    pub(crate) fences: Vec<vk::Fence>,
}

/// The part of a graph that executions and fences share.
pub(crate) struct GraphShared {
    pub(crate) device: Arc<ash::Device>,
    pub(crate) debug: Option<DebugUtils>,
    pub(crate) pools: Mutex<Pools>,
    /// Contents of dropped, incomplete execution fences.
    pending: Mutex<Vec<FenceContents>>,
}

impl GraphShared {
    /// Returns an execution's command buffers and fences for reuse and drops the rest.
    /// Only call once its fences have signalled (or it was never submitted).
    pub(crate) fn recycle(&self, c: FenceContents) {
        let FenceContents {
            fences,
            cmds,
            resources,
            queues,
            keep,
            ..
        } = c;
        {
            let mut pools = self.pools.lock();
            if !fences.is_empty() {
                // SAFETY: the fences are signalled or were never submitted; none is in use.
                match unsafe { self.device.reset_fences(&fences) } {
                    Ok(()) => pools.fences.extend(fences),
                    Err(e) => {
                        log::error!("vkResetFences failed ({e}); destroying the fences");
                        for f in fences {
                            // SAFETY: not in use (see above).
                            unsafe { self.device.destroy_fence(f, None) };
                        }
                    }
                }
            }
            for (family, cmd) in cmds {
                pools.families.entry(family).or_default().free.push(cmd);
            }
        }
        drop(keep);
        drop(resources);
        drop(queues);
    }

    /// Keeps an incomplete execution's contents until its fences signal.
    pub(crate) fn defer(&self, c: FenceContents) {
        self.pending.lock().push(c);
    }

    /// Releases the deferred executions that have completed.
    pub(crate) fn collect(&self) {
        let mut done = Vec::new();
        {
            let mut pending = self.pending.lock();
            let mut i = 0;
            while i < pending.len() {
                match pending[i].token.poll() {
                    Ok(true) => done.push(pending.swap_remove(i)),
                    Ok(false) => i += 1,
                    Err(e) => {
                        log::error!("deferred execution: {e}; keeping its resources");
                        i += 1;
                    }
                }
            }
        }
        for c in done {
            self.recycle(c);
        }
    }

    /// Allocates (or reuses) a primary command buffer of `family`. Call with `pools` locked.
    pub(crate) fn command_buffer(
        &self,
        pools: &mut Pools,
        family: u32,
    ) -> Result<vk::CommandBuffer> {
        let fp = pools.families.entry(family).or_default();
        if fp.pool == vk::CommandPool::null() {
            let info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            // SAFETY: valid create info on a live device.
            fp.pool = unsafe { self.device.create_command_pool(&info, None) }
                .map_err(|e| Error::vk("vkCreateCommandPool", e))?;
            if let Some(d) = &self.debug {
                // SAFETY: the pool is a live object of the graph's device, which `d` was
                // loaded for (`Graph::new`'s contract).
                unsafe { d.set_name(fp.pool, &format!("vk-baton pool (family {family})")) };
            }
        }
        if let Some(cmd) = fp.free.pop() {
            return Ok(cmd);
        }
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(fp.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is live and externally synchronized by the `pools` lock.
        let cmds = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(|e| Error::vk("vkAllocateCommandBuffers", e))?;
        Ok(cmds[0])
    }

    /// An unsignalled fence. Call with `pools` locked.
    pub(crate) fn fence(&self, pools: &mut Pools) -> Result<vk::Fence> {
        if let Some(f) = pools.fences.pop() {
            return Ok(f);
        }
        // SAFETY: valid create info on a live device.
        unsafe {
            self.device
                .create_fence(&vk::FenceCreateInfo::default(), None)
        }
        .map_err(|e| Error::vk("vkCreateFence", e))
    }
}

impl Drop for GraphShared {
    fn drop(&mut self) {
        // Wait for every deferred execution, then destroy pools and fences.
        let pending = std::mem::take(self.pending.get_mut());
        let mut leak = false;
        for c in pending {
            let fences = c.token.fences();
            // SAFETY: the fences are live; waiting has no other precondition.
            let r = if fences.is_empty() {
                Ok(())
            } else {
                unsafe { self.device.wait_for_fences(&fences, true, u64::MAX) }
            };
            match r {
                Ok(()) => {
                    c.token.mark_done();
                    self.recycle(c);
                }
                Err(e) => {
                    log::error!("graph dropped while an execution's fence failed ({e}): leaking its resources and pools");
                    leak = true;
                    std::mem::forget(c);
                }
            }
        }
        if leak {
            return;
        }
        let pools = std::mem::take(self.pools.get_mut());
        for f in pools.fences {
            // SAFETY: recycled fences are not in use.
            unsafe { self.device.destroy_fence(f, None) };
        }
        for (_, fp) in pools.families {
            if fp.pool != vk::CommandPool::null() {
                // SAFETY: every command buffer of the pool has completed (all executions
                // were waited for); destroying the pool frees them.
                unsafe { self.device.destroy_command_pool(fp.pool, None) };
            }
        }
    }
}

/// Owns the command pools, command buffers and fences that executions reuse.
///
/// Dropping the graph waits for executions whose fences were dropped early. An
/// [`ExecutionFence`] still alive keeps the graph's pools alive too.
///
/// ```no_run
/// # fn f(device: &ash::Device, debug: Option<vk_baton::DebugUtils>) -> vk_baton::Result<()> {
/// // SAFETY: `debug` was loaded for `device`, which outlives the graph.
/// let graph = unsafe { vk_baton::Graph::new(device, debug)? };
/// # Ok(()) }
/// ```
pub struct Graph {
    shared: Arc<GraphShared>,
}

impl Graph {
    pub(crate) fn downgrade(&self) -> std::sync::Weak<GraphShared> {
        Arc::downgrade(&self.shared)
    }

    /// A graph for an app-owned `device`; with `debug`, command buffers get pass labels.
    /// [`crate::Context::graph`] makes one for the context's device safely.
    ///
    /// ```no_run
    /// # fn f(device: &ash::Device) -> vk_baton::Result<()> {
    /// // SAFETY: `device` has the features the queues need and outlives the graph.
    /// let graph = unsafe { vk_baton::Graph::new(device, None)? };
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    ///
    /// `device` was created with the `synchronization2` and `timelineSemaphore` features and
    /// stays alive until the graph and every [`crate::ExecutionFence`] from it are dropped;
    /// `debug`, if any, was loaded for `device`.
    pub unsafe fn new(device: &ash::Device, debug: Option<DebugUtils>) -> Result<Graph> {
        Ok(Graph {
            shared: Arc::new(GraphShared {
                device: Arc::new(device.clone()),
                debug,
                pools: Mutex::new(Pools::default()),
                pending: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Starts recording passes. Also releases finished executions whose fences were dropped.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, a: &mut dyn vk_baton::Pass, b: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let planned = graph.record().insert_pass("a", a, q).insert_pass("b", b, q).finish()?;
    /// # Ok(()) }
    /// ```
    pub fn record(&self) -> GraphBuilder<'_> {
        self.shared.collect();
        GraphBuilder {
            graph: self,
            passes: Vec::new(),
            error: None,
        }
    }

    /// The device the graph records for.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let raw = graph.device().handle();
    /// # }
    /// ```
    pub fn device(&self) -> &ash::Device {
        &self.shared.device
    }

    /// The debug-utils functions, if the graph has them.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph) {
    /// let has_labels = graph.debug().is_some();
    /// # }
    /// ```
    pub fn debug(&self) -> Option<&DebugUtils> {
        self.shared.debug.as_ref()
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({:?})", self.shared.device.handle())
    }
}

pub(crate) struct PassEntry<'a> {
    pub(crate) name: String,
    pub(crate) pass: &'a mut (dyn Pass + 'a),
    pub(crate) queue: Queue,
}

/// Passes in program order; from [`Graph::record`].
///
/// Errors in `insert_pass` are kept and returned by [`GraphBuilder::finish`].
///
/// ```no_run
/// # fn f(graph: &vk_baton::Graph, compute: &vk_baton::Queue, gfx: &vk_baton::Queue,
/// #      sim: &mut dyn vk_baton::Pass, shade: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
/// let fence = graph.record()
///     .insert_pass("simulate", sim, compute)
///     .insert_pass("shade", shade, gfx)
///     .finish()?
///     .execute()?;
/// # Ok(()) }
/// ```
pub struct GraphBuilder<'a> {
    graph: &'a Graph,
    passes: Vec<PassEntry<'a>>,
    error: Option<Error>,
}

impl<'a> GraphBuilder<'a> {
    /// Appends a pass on `queue`. Insertion order is program order.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) {
    /// let b = graph.record().insert_pass("p", p, q);
    /// # }
    /// ```
    pub fn insert_pass(mut self, name: &str, pass: &'a mut (dyn Pass + 'a), queue: &Queue) -> Self {
        if self.error.is_none() && queue.device_handle() != self.graph.shared.device.handle() {
            self.error = Some(Error::ForeignDevice {
                what: format!("queue `{}` (pass `{name}`)", queue.name()),
            });
        }
        self.passes.push(PassEntry {
            name: name.to_owned(),
            pass,
            queue: queue.clone(),
        });
        self
    }

    /// Plans the passes: declarations, resource states, then the pure planner. Makes no
    /// Vulkan call and changes no state.
    ///
    /// ```no_run
    /// # fn f(graph: &vk_baton::Graph, q: &vk_baton::Queue, p: &mut dyn vk_baton::Pass) -> vk_baton::Result<()> {
    /// let planned = graph.record().insert_pass("p", p, q).finish()?;
    /// println!("{}", planned.plan());
    /// # Ok(()) }
    /// ```
    pub fn finish(self) -> Result<Planned<'a>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let device = self.graph.shared.device.handle();
        let mut declared = Vec::with_capacity(self.passes.len());
        for p in &self.passes {
            let mut d = Declared::default();
            p.pass.declare(&mut Declare { out: &mut d });
            declared.push(d);
        }

        let mut queues: Vec<Queue> = Vec::new();
        let queue_index = |q: &Queue, queues: &mut Vec<Queue>| -> usize {
            match queues.iter().position(|x| x == q) {
                Some(i) => i,
                None => {
                    queues.push(q.clone());
                    queues.len() - 1
                }
            }
        };
        let mut resources: Vec<Resource> = Vec::new();
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        let mut res_index =
            |r: Resource, pass: &str, resources: &mut Vec<Resource>| -> Result<usize> {
                if let Some(&i) = by_id.get(&r.id()) {
                    return Ok(i);
                }
                if r.device_handle() != device {
                    return Err(Error::ForeignDevice {
                        what: format!("resource `{}` (pass `{pass}`)", r.name()),
                    });
                }
                resources.push(r);
                by_id.insert(resources.last().map_or(0, |r| r.id()), resources.len() - 1);
                Ok(resources.len() - 1)
            };

        let mut pass_decls = Vec::with_capacity(self.passes.len());
        for (p, d) in self.passes.iter().zip(&declared) {
            let qi = queue_index(&p.queue, &mut queues);
            let mut pd = PassDecl::new(&p.name, qi);
            for u in &d.uses {
                let ri = res_index(u.resource.clone(), &p.name, &mut resources)?;
                pd.uses.push(UseDecl {
                    resource: ri,
                    access: u.access,
                    range: u.range,
                    discard: u.discard,
                });
            }
            for w in &d.waits {
                let mut guards = Vec::new();
                for g in &w.guards {
                    guards.push(res_index(
                        Resource::Image(g.clone()),
                        &p.name,
                        &mut resources,
                    )?);
                }
                pd.waits.push(BinaryWaitDecl {
                    semaphore: w.semaphore,
                    guards,
                    stages: w.stages,
                });
            }
            for &(semaphore, stages) in &d.signals {
                pd.signals.push(BinarySignalDecl { semaphore, stages });
            }
            pass_decls.push(pd);
        }

        // Snapshot each resource's state; queues seen only in earlier records join the list.
        let mut versions = Vec::with_capacity(resources.len());
        let mut res_decls = Vec::with_capacity(resources.len());
        for r in &resources {
            let (segments, version) = {
                let t = r.tracked().lock();
                (t.segments.clone(), t.version)
            };
            versions.push(version);
            let mut initial = Vec::with_capacity(segments.len());
            for (cells, s) in segments {
                initial.push((cells, to_indices(&s, |q| queue_index(q, &mut queues))));
            }
            let (kind, concurrent) = match r {
                Resource::Image(i) => {
                    let d = i.desc();
                    (
                        ResourceKind::Image {
                            mips: d.mip_levels,
                            layers: d.array_layers,
                            aspect: d.aspect(),
                            usage: d.usage,
                        },
                        d.sharing.is_concurrent(),
                    )
                }
                Resource::Buffer(b) => (
                    ResourceKind::Buffer {
                        size: b.size(),
                        usage: b.desc().usage,
                    },
                    b.desc().sharing.is_concurrent(),
                ),
            };
            res_decls.push(ResourceDecl {
                name: r.name().to_owned(),
                kind,
                concurrent,
                initial,
            });
        }
        for q in &queues {
            if q.device_handle() != device {
                return Err(Error::ForeignDevice {
                    what: format!("queue `{}` (recorded in a resource's state)", q.name()),
                });
            }
        }
        // Two `Queue` objects for one VkQueue would have two submit locks and two timelines.
        for p in &self.passes {
            if let Some(q) = queues
                .iter()
                .find(|q| **q == p.queue && !q.same_object(&p.queue))
            {
                return Err(Error::InvalidInput(format!(
                    "queues `{}` and `{}` are two Queue objects for one VkQueue: create one Queue per VkQueue and clone it",
                    q.name(),
                    p.queue.name()
                )));
            }
        }
        let input = PlanInput {
            queues: queues
                .iter()
                .map(|q| QueueDecl::new(q.name(), q.family(), q.caps()))
                .collect(),
            resources: res_decls,
            passes: pass_decls,
        };
        let plan = plan::plan_owned(input)?;
        // Debug builds check every plan with the independent verifier (feature "verify").
        #[cfg(all(feature = "verify", debug_assertions))]
        if let Err(violations) = {
            // The values the queues' timelines have been given so far: the earlier graphs'
            // work this plan waits on is at or below them.
            let last: Vec<u64> = queues.iter().map(Queue::last_value).collect();
            plan.verify_from(&last)
        } {
            return Err(Error::Verification(violations));
        }
        log::debug!(
            "planned {} passes on {} queues: {} batches, {} barrier commands, {} waits",
            self.passes.len(),
            queues.len(),
            plan.batch_count(),
            plan.barrier_commands(),
            plan.semaphore_waits()
        );
        Ok(Planned {
            graph: self.graph,
            passes: self.passes,
            queues,
            resources,
            versions,
            plan,
        })
    }
}

/// A queue-typed segment as an index-typed one, for the planner.
fn to_indices(s: &SegmentState<Queue>, mut f: impl FnMut(&Queue) -> usize) -> SegmentState<usize> {
    let mut m = |r: &Recorded<Queue>| Recorded {
        queue: f(&r.queue),
        value: r.value,
        stages: r.stages,
        access: r.access,
    };
    SegmentState {
        layout: s.layout,
        defined: s.defined,
        owner: s.owner,
        write: s.write.as_ref().map(&mut m),
        reads: s.reads.iter().map(m).collect(),
    }
}

/// A planned graph: inspect or print its [`Plan`], then [`Planned::execute`] it.
///
/// ```no_run
/// # fn f(planned: vk_baton::Planned<'_>) -> vk_baton::Result<()> {
/// println!("{planned}");            // queues, batches, barriers, semaphores
/// assert!(planned.plan().barrier_commands() <= 2);
/// let fence = planned.execute()?;
/// # Ok(()) }
/// ```
pub struct Planned<'a> {
    pub(crate) graph: &'a Graph,
    pub(crate) passes: Vec<PassEntry<'a>>,
    /// Planner queue index -> queue.
    pub(crate) queues: Vec<Queue>,
    /// Planner resource index -> resource.
    pub(crate) resources: Vec<Resource>,
    /// Each resource's state version when planned.
    pub(crate) versions: Vec<u64>,
    pub(crate) plan: Plan,
}

impl<'a> Planned<'a> {
    /// The plan.
    ///
    /// ```no_run
    /// # fn f(planned: &vk_baton::Planned<'_>) {
    /// let batches = planned.plan().batch_count();
    /// # }
    /// ```
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The queues the plan's queue indices refer to.
    ///
    /// ```no_run
    /// # fn f(planned: &vk_baton::Planned<'_>) {
    /// for q in planned.queues() { println!("{}", q.name()); }
    /// # }
    /// ```
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// Records and submits the plan (one `vkQueueSubmit2` per queue) and commits the
    /// resources' new states. Fails with [`Error::StalePlan`], submitting nothing, if a
    /// resource's state changed since `finish()` in a way that alters what this plan must
    /// do: a write, a layout or ownership change, or reads by others where this plan writes.
    /// Other executions' reads where this plan only reads keep it valid (and are kept in
    /// the state it commits).
    ///
    /// ```no_run
    /// # fn f(planned: vk_baton::Planned<'_>) -> vk_baton::Result<()> {
    /// planned.execute()?.wait()?;
    /// # Ok(()) }
    /// ```
    pub fn execute(self) -> Result<ExecutionFence> {
        crate::execute::execute(self)
    }

    /// Records the plan into command buffers and discards them: no submit, no state change.
    /// For benchmarks of planning plus recording cost.
    #[doc(hidden)]
    pub fn record_only(self) -> Result<()> {
        crate::execute::record_only(self)
    }

    pub(crate) fn shared(&self) -> &Arc<GraphShared> {
        &self.graph.shared
    }
}

impl fmt::Display for Planned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.plan, f)
    }
}

impl fmt::Debug for Planned<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Planned")
            .field("queues", &self.queues)
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}
