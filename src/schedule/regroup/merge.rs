//! Joining barrier commands within a batch. A barrier command moves up, to the earliest
//! barrier command of its batch it can reach, over passes that do not need its barriers in
//! place (they touch none of its ranges, or only read what a plain read barrier makes
//! visible) and over barrier commands none of whose entries overlap its own. Then, from the
//! end, a barrier command moves down the same way, to the latest one it can reach, over
//! passes that touch none of its ranges: releases gather after the last pass that needs
//! them. With passes taken level by level, each batch keeps one barrier command per level,
//! plus one for the releases.

use crate::access::is_write_flags;
use crate::plan::{BarrierCmd, Command, PlanInput, QueuePlan, ResourceKind, Scopes};
use crate::range::SubRange;
use ash::vk;

/// One image or buffer barrier of a command, as the join rules see it.
#[derive(Clone, Copy)]
struct Entry {
    resource: usize,
    range: SubRange,
    /// The image aspects it names (empty for a buffer).
    aspect: vk::ImageAspectFlags,
    /// No layout change, no ownership transfer, and the accesses it makes memory visible to
    /// only read: moving it before a pass that only reads its range changes nothing for that
    /// pass, which is ordered after the same writes by its own barrier or an earlier one.
    plain_read: bool,
}

fn plain_read(scopes: &Scopes, same_layout: bool) -> bool {
    scopes.families.is_none() && same_layout && !is_write_flags(scopes.dst_access)
}

/// The entries of `b`. `transitioned[r]`: a pass of the batch has a render pass that changes
/// resource `r`'s layout itself. Its barrier guards that write (a transition) though its
/// accesses read, so no entry of `r` is a plain read.
fn entries<'a>(b: &'a BarrierCmd, transitioned: &'a [bool]) -> impl Iterator<Item = Entry> + 'a {
    let images = b.images.iter().map(|i| Entry {
        resource: i.resource,
        range: SubRange::Image(i.range),
        aspect: i.aspect,
        plain_read: plain_read(&i.scopes, i.old_layout == i.new_layout)
            && !transitioned[i.resource],
    });
    let buffers = b.buffers.iter().map(|x| Entry {
        resource: x.resource,
        range: SubRange::Buffer(x.range),
        aspect: vk::ImageAspectFlags::empty(),
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
                && f.aspect == e.aspect
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

/// Something a command at `pos` does to a range of a resource, as a barrier entry moving
/// past it sees it.
#[derive(Clone, Copy)]
struct Touch {
    pos: usize,
    range: SubRange,
    /// The image aspects (every aspect of the format for a use of all of them; empty for a
    /// buffer).
    aspect: vk::ImageAspectFlags,
    /// `Some(writes)`: a pass's use; `None`: a barrier entry, plain read or not.
    pass_writes: Option<bool>,
    plain_read: bool,
}

/// Whether `t` keeps entry `e` from moving past it (up when `upwards`): a pass touching its
/// range (up, a plain read entry may pass a pass that only reads it), or an entry overlapping
/// it, unless both are the same plain read of the same range (they become one).
fn blocks(e: &Entry, t: &Touch, upwards: bool) -> bool {
    overlaps(&t.range, &e.range)
        && match t.pass_writes {
            Some(writes) => !(upwards && e.plain_read && !writes),
            None => !(e.plain_read && t.plain_read && t.range == e.range && t.aspect == e.aspect),
        }
}

/// Per resource, what the commands of one batch seen so far touch.
struct Touches {
    by_resource: Vec<Vec<Touch>>,
    used: Vec<usize>,
    /// Per resource: a pass of the batch has a render pass that changes its layout (see
    /// [`entries`]).
    transitioned: Vec<bool>,
}

impl Touches {
    fn add(&mut self, resource: usize, t: Touch) {
        let list = &mut self.by_resource[resource];
        if list.is_empty() {
            self.used.push(resource);
        }
        list.push(t);
    }

    /// Adds a pass's uses. A write blocks every entry over its range that what it covers
    /// blocked, and is nearer: the touches it covers go.
    fn add_pass(&mut self, input: &PlanInput, i: usize, pos: usize) {
        for u in &input.passes[i].uses {
            let writes = u.writes() || u.discards();
            let kind = &input.resources[u.resource].kind;
            let range = u.range.unwrap_or(kind.whole());
            // A use of every aspect names them all, as a barrier of every aspect does.
            let aspect = match kind {
                ResourceKind::Image { aspect, .. } if u.aspect.is_empty() => *aspect,
                _ => u.aspect,
            };
            if writes {
                self.by_resource[u.resource]
                    .retain(|t| !(range.contains(&t.range) && aspect.contains(t.aspect)));
            }
            let t = Touch {
                pos,
                range,
                aspect,
                pass_writes: Some(writes),
                plain_read: false,
            };
            self.add(u.resource, t);
        }
    }

    fn add_barrier(&mut self, b: &BarrierCmd, pos: usize) {
        let transitioned = std::mem::take(&mut self.transitioned);
        for e in entries(b, &transitioned) {
            let t = Touch {
                pos,
                range: e.range,
                aspect: e.aspect,
                pass_writes: None,
                plain_read: e.plain_read,
            };
            self.add(e.resource, t);
        }
        self.transitioned = transitioned;
    }

    /// The positions of what keeps `b` from moving (up when `upwards`).
    fn blockers<'a>(
        &'a self,
        b: &'a BarrierCmd,
        upwards: bool,
    ) -> impl Iterator<Item = usize> + 'a {
        entries(b, &self.transitioned).flat_map(move |e| {
            self.by_resource[e.resource]
                .iter()
                .filter(move |t| blocks(&e, t, upwards))
                .map(|t| t.pos)
        })
    }

    fn clear(&mut self) {
        for r in self.used.drain(..) {
            self.by_resource[r].clear();
        }
    }
}

/// One direction of joining over a batch's commands: each barrier command, taken from the
/// top (`upwards`) or from the bottom, joins the farthest barrier command it reaches.
fn join_one_way(
    input: &PlanInput,
    commands: &mut Vec<Command>,
    touches: &mut Touches,
    upwards: bool,
) {
    let n = commands.len();
    let mut slots: Vec<Option<Command>> = std::mem::take(commands).into_iter().map(Some).collect();
    // Positions of the barrier commands that stay, which later ones may join.
    let mut barriers: std::collections::BTreeSet<usize> = Default::default();
    let positions: Box<dyn Iterator<Item = usize>> = if upwards {
        Box::new(0..n)
    } else {
        Box::new((0..n).rev())
    };
    for j in positions {
        let b = match &slots[j] {
            Some(Command::Pass(i)) => {
                touches.add_pass(input, *i, j);
                continue;
            }
            Some(Command::Barrier(b)) => b,
            None => continue,
        };
        let target = if upwards {
            let after = touches.blockers(b, true).max().map_or(0, |p| p + 1);
            barriers.range(after..j).next().copied()
        } else {
            let before = touches.blockers(b, false).min().unwrap_or(n);
            barriers.range(j + 1..before).next_back().copied()
        };
        let Some(t) = target else {
            touches.add_barrier(b, j);
            barriers.insert(j);
            continue;
        };
        let Some(Command::Barrier(b)) = slots[j].take() else {
            unreachable!("a barrier command")
        };
        touches.add_barrier(&b, t);
        if let Some(Command::Barrier(target)) = &mut slots[t] {
            let (images, buffers) = (target.images.len(), target.buffers.len());
            join(target, b);
            if !upwards {
                // The entries of the command that came first come first.
                target.images.rotate_left(images);
                target.buffers.rotate_left(buffers);
            }
        }
    }
    touches.clear();
    *commands = slots.into_iter().flatten().collect();
}

/// Joins barrier commands within each batch of `queues`, a plan of `input`. Batches keep
/// their boundaries: a command never moves before a semaphore wait or after a signal.
pub(in crate::schedule) fn join_barriers(input: &PlanInput, queues: &mut [QueuePlan]) {
    let mut touches = Touches {
        by_resource: vec![Vec::new(); input.resources.len()],
        used: Vec::new(),
        transitioned: vec![false; input.resources.len()],
    };
    for batch in queues.iter_mut().flat_map(|q| q.batches.iter_mut()) {
        touches.transitioned.fill(false);
        for c in &batch.commands {
            if let Command::Pass(i) = c {
                for u in input.passes[*i].uses.iter() {
                    touches.transitioned[u.resource] |= u.render_pass_transitions();
                }
            }
        }
        join_one_way(input, &mut batch.commands, &mut touches, true);
        join_one_way(input, &mut batch.commands, &mut touches, false);
    }
}
