//! Joining barrier commands within a batch. A barrier command moves up, to the earliest
//! barrier command of its batch it can reach, over passes that do not need its barriers in
//! place (they touch none of its ranges, or only read what a plain read barrier makes
//! visible) and over barrier commands none of whose entries overlap its own. Then, from the
//! end, a barrier command moves down the same way, to the latest one it can reach, over
//! passes that touch none of its ranges: releases gather after the last pass that needs
//! them. With passes taken level by level, each batch keeps one barrier command per level,
//! plus one for the releases.

use crate::access::is_write_flags;
use crate::plan::{BarrierCmd, Command, PassDecl, PlanInput, QueuePlan, Scopes};
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

/// Whether `b` may move over `pass`: upwards, a plain read entry may pass a pass that only
/// reads its range; otherwise the pass must not touch the range at all.
fn may_pass(input: &PlanInput, pass: &PassDecl, b: &BarrierCmd, upwards: bool) -> bool {
    entries(b).all(|e| {
        pass.uses.iter().all(|u| {
            let range = u.range.unwrap_or(input.resources[u.resource].kind.whole());
            let writes = u.access.is_write() || u.discard;
            u.resource != e.resource
                || !overlaps(&range, &e.range)
                || (upwards && e.plain_read && !writes)
        })
    })
}

/// Whether the entries of `a` and `b` may sit in one command, in either order: none overlap,
/// except identical plain read entries, which become one.
fn independent(a: &BarrierCmd, b: &BarrierCmd) -> bool {
    entries(b).all(|e| {
        entries(a).all(|f| {
            f.resource != e.resource
                || !overlaps(&f.range, &e.range)
                || (e.plain_read && f.plain_read && f.range == e.range)
        })
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
            f.resource == e.resource && f.range == e.range && f.scopes.families.is_none()
        });
        match same {
            Some(f) if e.scopes.families.is_none() => union(&mut f.scopes, &e.scopes),
            _ => target.buffers.push(e),
        }
    }
}

/// The barrier command that `commands[j]` may join moving up (`upwards`) or down: the
/// farthest one it reaches.
fn reach(input: &PlanInput, commands: &[Command], j: usize, upwards: bool) -> Option<usize> {
    let Command::Barrier(b) = &commands[j] else {
        return None;
    };
    let path: Box<dyn Iterator<Item = usize>> = if upwards {
        Box::new((0..j).rev())
    } else {
        Box::new(j + 1..commands.len())
    };
    let mut target = None;
    for k in path {
        match &commands[k] {
            Command::Pass(i) => {
                if !may_pass(input, &input.passes[*i], b, upwards) {
                    break;
                }
            }
            Command::Barrier(other) => {
                if !independent(other, b) {
                    break;
                }
                target = Some(k);
            }
        }
    }
    target
}

/// Moves `commands[j]`, a barrier command, into `commands[k]`; the entries of the one that
/// came first come first.
fn move_into(commands: &mut Vec<Command>, j: usize, k: usize) {
    let Command::Barrier(mut b) = commands.remove(j) else {
        unreachable!("only barrier commands move")
    };
    if k < j {
        if let Command::Barrier(target) = &mut commands[k] {
            join(target, b);
        }
    } else if let Command::Barrier(target) = &mut commands[k - 1] {
        join(&mut b, std::mem::take(target));
        *target = b;
    }
}

/// Joins barrier commands within each batch of `queues`, a plan of `input`. Batches keep
/// their boundaries: a command never moves before a semaphore wait or after a signal.
pub(super) fn join_barriers(input: &PlanInput, queues: &mut [QueuePlan]) {
    for batch in queues.iter_mut().flat_map(|q| q.batches.iter_mut()) {
        let commands = &mut batch.commands;
        let mut j = 0;
        while j < commands.len() {
            match reach(input, commands, j, true) {
                Some(k) => move_into(commands, j, k),
                None => j += 1,
            }
        }
        let mut j = commands.len();
        while j > 0 {
            j -= 1;
            if let Some(k) = reach(input, commands, j, false) {
                move_into(commands, j, k);
            }
        }
    }
}
