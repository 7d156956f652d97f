//! Joining barrier commands: a barrier command moves up into an earlier one of its batch when
//! nothing between them needs it to wait. With passes taken level by level, this gives each
//! queue one barrier command per level and batch.

use crate::access::is_write_flags;
use crate::plan::{BarrierCmd, Command, PlanInput, QueuePlan, Scopes};
use crate::range::SubRange;

/// One image or buffer barrier of a command, as the join rules see it.
#[derive(Clone, Copy)]
struct Entry {
    resource: usize,
    range: SubRange,
    /// No layout change, no ownership transfer, and the accesses it makes memory visible to
    /// only read: moving it before a pass that only reads its range changes nothing for that
    /// pass, which is ordered after the same writes by its own barrier or an earlier one.
    plain_read: bool,
}

fn plain_read(scopes: &Scopes, same_layout: bool) -> bool {
    scopes.families.is_none() && same_layout && !is_write_flags(scopes.dst_access)
}

fn entries(b: &BarrierCmd) -> impl Iterator<Item = Entry> + '_ {
    let images = b.images.iter().map(|i| Entry {
        resource: i.resource,
        range: SubRange::Image(i.range),
        plain_read: plain_read(&i.scopes, i.old_layout == i.new_layout),
    });
    let buffers = b.buffers.iter().map(|x| Entry {
        resource: x.resource,
        range: SubRange::Buffer(x.range),
        plain_read: plain_read(&x.scopes, true),
    });
    images.chain(buffers)
}

fn overlaps(a: &SubRange, b: &SubRange) -> bool {
    match (a, b) {
        (SubRange::Image(x), SubRange::Image(y)) => x.overlaps(y),
        (SubRange::Buffer(x), SubRange::Buffer(y)) => x.overlaps(y),
        _ => false,
    }
}

/// What a pass between two barrier commands touches.
struct Touch {
    resource: usize,
    range: SubRange,
    writes: bool,
}

/// Whether every entry of `b` may move up, over the passes that touched `between`, into
/// `target`: no pass between touches its range (or, for a plain read entry, only reads it),
/// and no entry of `target` overlaps it, except an identical plain read entry it merges into.
fn can_join(target: &BarrierCmd, b: &BarrierCmd, between: &[Touch]) -> bool {
    entries(b).all(|e| {
        let passes_ok = between.iter().all(|t| {
            t.resource != e.resource || !overlaps(&t.range, &e.range) || (e.plain_read && !t.writes)
        });
        let entries_ok = entries(target).all(|f| {
            f.resource != e.resource
                || !overlaps(&f.range, &e.range)
                || (e.plain_read && f.plain_read && f.range == e.range)
        });
        passes_ok && entries_ok
    })
}

/// Adds `b`'s entries to `target`; identical plain read entries become one, with the union of
/// their scopes.
fn join(target: &mut BarrierCmd, b: BarrierCmd) {
    let union = |a: &mut Scopes, s: &Scopes| {
        a.src_stages |= s.src_stages;
        a.src_access |= s.src_access;
        a.dst_stages |= s.dst_stages;
        a.dst_access |= s.dst_access;
    };
    for e in b.images {
        let same = target.images.iter_mut().find(|f| {
            f.resource == e.resource
                && f.range == e.range
                && f.old_layout == e.old_layout
                && f.new_layout == e.new_layout
                && f.scopes.families.is_none()
                && e.scopes.families.is_none()
        });
        match same {
            Some(f) => union(&mut f.scopes, &e.scopes),
            None => target.images.push(e),
        }
    }
    for e in b.buffers {
        let same = target.buffers.iter_mut().find(|f| {
            f.resource == e.resource
                && f.range == e.range
                && f.scopes.families.is_none()
                && e.scopes.families.is_none()
        });
        match same {
            Some(f) => union(&mut f.scopes, &e.scopes),
            None => target.buffers.push(e),
        }
    }
}

/// Joins barrier commands within each batch of `queues`, a plan of `input`: each command moves
/// up into the last command before it when [`can_join`] allows, else it stays and later ones
/// may join it. Batches keep their boundaries: a command never moves before a semaphore wait.
pub(crate) fn merge_barriers(input: &PlanInput, queues: &mut [QueuePlan]) {
    let mut between: Vec<Touch> = Vec::new();
    for batch in queues.iter_mut().flat_map(|q| q.batches.iter_mut()) {
        let commands = std::mem::take(&mut batch.commands);
        let mut out: Vec<Command> = Vec::with_capacity(commands.len());
        let mut open: Option<usize> = None;
        between.clear();
        for c in commands {
            match c {
                Command::Pass(i) => {
                    for u in &input.passes[i].uses {
                        between.push(Touch {
                            resource: u.resource,
                            range: u.range.unwrap_or(input.resources[u.resource].kind.whole()),
                            writes: u.access.is_write() || u.discard,
                        });
                    }
                    out.push(Command::Pass(i));
                }
                Command::Barrier(b) => match open.map(|k| &mut out[k]) {
                    Some(Command::Barrier(target)) if can_join(target, &b, &between) => {
                        join(target, b)
                    }
                    _ => {
                        out.push(Command::Barrier(b));
                        open = Some(out.len() - 1);
                        between.clear();
                    }
                },
            }
        }
        batch.commands = out;
    }
}
