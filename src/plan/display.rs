//! Printing a plan: queues, batches, waits, barriers, passes and signals.
//!
//! The line helpers are shared with the diagram's tooltips and the JSON form, so all three say
//! the same thing.

use super::*;
use std::fmt;

impl fmt::Display for Plan {
    /// The plan as text. The alternate form (`{:#}`) also says why each barrier entry is there
    /// (its [`Cause`]), on a line of its own under the entry.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = f.alternate();
        let moved = self.moved_before();
        for (qi, qp) in self.queues.iter().enumerate() {
            if qp.batches.is_empty() {
                continue;
            }
            let qd = &self.input.queues[qi];
            let all_stages = if qd.transfers_use_all_stages {
                ", transfers use all stages"
            } else {
                ""
            };
            let m9 = match qd.maintenance9 {
                Some(mask) => format!(", maintenance9 with optimal images to {mask:#b}"),
                None => String::new(),
            };
            writeln!(
                f,
                "queue `{}` (family {}{all_stages}{m9}):",
                qd.name, qd.family
            )?;
            for (bi, b) in qp.batches.iter().enumerate() {
                writeln!(f, "  batch {bi}:")?;
                for w in &b.waits {
                    writeln!(f, "    wait   {}", wait_line(self, w))?;
                }
                for c in &b.commands {
                    match c {
                        Command::Pass(i) => match moved.get(*i).copied().flatten() {
                            Some(j) => writeln!(
                                f,
                                "    pass   `{}` (moved before `{}`)",
                                pass_name(self, *i),
                                pass_name(self, j)
                            )?,
                            None => writeln!(f, "    pass   `{}`", pass_name(self, *i))?,
                        },
                        Command::Barrier(bar) => {
                            writeln!(f, "    barrier")?;
                            for ib in &bar.images {
                                writeln!(f, "      image  {}", image_barrier_line(self, ib))?;
                                write_cause(f, self, ib.cause, why)?;
                            }
                            for bb in &bar.buffers {
                                writeln!(f, "      buffer {}", buffer_barrier_line(self, bb))?;
                                write_cause(f, self, bb.cause, why)?;
                            }
                        }
                    }
                }
                for (s, st) in &b.binary_signals {
                    writeln!(f, "    signal binary {s:?} at {st:?}")?;
                }
                if let Some(st) = b.signal {
                    writeln!(f, "    signal timeline at {st:?}")?;
                }
            }
        }
        for i in self.culled() {
            writeln!(f, "culled `{}`", pass_name(self, i))?;
        }
        self.transients.write(f, &self.input)
    }
}

/// The cause line under a barrier entry, in the alternate form.
fn write_cause(
    f: &mut fmt::Formatter<'_>,
    plan: &Plan,
    cause: Option<Cause>,
    why: bool,
) -> fmt::Result {
    match cause {
        Some(c) if why => writeln!(f, "        why: {}", cause_line(plan, &c)),
        _ => Ok(()),
    }
}

/// Why a barrier entry is there: "for `read`, after `write`".
pub(crate) fn cause_line(plan: &Plan, c: &Cause) -> String {
    let after = match c.after {
        Prior::Nothing => "with nothing before it".to_string(),
        Prior::Pass(p) => format!("after `{}`", pass_name(plan, p)),
        Prior::SharedMemory(p) => format!("after `{}` used the memory", pass_name(plan, p)),
        Prior::BinaryWait(p) => format!(
            "after the binary semaphore `{}` waits on",
            pass_name(plan, p)
        ),
        Prior::EarlierExecution { queue } => {
            format!(
                "after an earlier graph's work on `{}`",
                queue_name(plan, queue)
            )
        }
    };
    format!("for `{}`, {after}", pass_name(plan, c.pass))
}

/// A queue's name, or `?` for an index the plan does not have.
pub(crate) fn queue_name(plan: &Plan, queue: usize) -> &str {
    plan.input
        .queues
        .get(queue)
        .map_or("?", |q| q.name.as_str())
}

/// A resource's name, or `?`.
pub(crate) fn resource_name(plan: &Plan, resource: usize) -> &str {
    plan.input
        .resources
        .get(resource)
        .map_or("?", |r| r.name.as_str())
}

/// A pass's name, or `?`.
pub(crate) fn pass_name(plan: &Plan, pass: usize) -> &str {
    plan.input.passes.get(pass).map_or("?", |p| p.name.as_str())
}

/// What a wait waits on and at which stages, after the word "wait".
pub(crate) fn wait_line(plan: &Plan, w: &Wait) -> String {
    match w.target {
        WaitTarget::Batch { queue, batch } => format!(
            "`{}` timeline after its batch {batch} at {:?}",
            queue_name(plan, queue),
            w.stages
        ),
        WaitTarget::Value { queue, value } => format!(
            "`{}` timeline value {value} (earlier graph) at {:?}",
            queue_name(plan, queue),
            w.stages
        ),
        WaitTarget::Binary(s) => format!("binary {s:?} at {:?}", w.stages),
    }
}

/// The aspect of a barrier that names one plane of a depth/stencil image (`DEPTH`,
/// `STENCIL`); `None` where it names every aspect of the format.
pub(crate) fn single_aspect(plan: &Plan, ib: &ImageBarrier) -> Option<String> {
    let all = match plan.input.resources.get(ib.resource).map(|r| r.kind) {
        Some(super::ResourceKind::Image { aspect, .. }) => aspect,
        _ => return None,
    };
    (ib.aspect != all).then(|| flags(ib.aspect))
}

/// One image barrier: resource, range (and aspect, if only one of two), layouts, scopes and
/// ownership.
pub(crate) fn image_barrier_line(plan: &Plan, ib: &ImageBarrier) -> String {
    format!(
        "`{}` {}{}: {:?} -> {:?}, {}",
        resource_name(plan, ib.resource),
        range_line(&SubRange::Image(ib.range)),
        single_aspect(plan, ib).map_or(String::new(), |a| format!(" {a}")),
        ib.old_layout,
        ib.new_layout,
        scopes(&ib.scopes)
    )
}

/// One buffer barrier: resource, bytes, scopes and ownership.
pub(crate) fn buffer_barrier_line(plan: &Plan, bb: &BufferBarrier) -> String {
    format!(
        "`{}` {}: {}",
        resource_name(plan, bb.resource),
        range_line(&SubRange::Buffer(bb.range)),
        scopes(&bb.scopes)
    )
}

/// A range: `mips 0+1 layers 0+6` (first and count of each), `bytes 0..256`.
pub(crate) fn range_line(r: &SubRange) -> String {
    match r {
        SubRange::Image(r) => format!(
            "mips {}+{} layers {}+{}",
            r.base_mip, r.mip_count, r.base_layer, r.layer_count
        ),
        SubRange::Buffer(r) => format!("bytes {}..{}", r.offset, r.offset.saturating_add(r.size)),
    }
}

/// Vulkan flags as their Debug names (`COMPUTE_SHADER | TRANSFER`), `NONE` when empty.
pub(crate) fn flags<T: fmt::Debug + PartialEq + Default>(f: T) -> String {
    if f == T::default() {
        "NONE".into()
    } else {
        format!("{f:?}")
    }
}

fn scopes(s: &Scopes) -> String {
    let mut out = format!(
        "{}/{} -> {}/{}",
        flags(s.src_stages),
        flags(s.src_access),
        flags(s.dst_stages),
        flags(s.dst_access)
    );
    if let Some((a, b)) = s.families {
        out += &format!(", family {a} -> {b}");
    }
    out
}
