//! Emitting the events of one batch, in the order the analysis walks them: its waits, then
//! each command (a pass performs its uses; a barrier runs its entries and the transitions,
//! releases and acquires they perform), then its signals.

use super::execution::{Exec, Links};
use super::*;
use crate::plan::{BarrierCmd, Batch, PlanInput, Scopes};

impl Model {
    /// Emits batch `b` of queue `q`: its start, its commands, its end.
    pub(super) fn emit_batch(&mut self, ex: &Exec, links: &mut Links, q: usize, b: usize) {
        let Exec { k, p, values, .. } = *ex;
        let uni = self.universe;
        let qname = |q: usize| ex.qname(q);
        let n = ex.node(q, b);
        let Links {
            waits, externals, ..
        } = links;
        let batch = &p.queues[q].batches[b];
        self.events.push(Event::Start {
            q,
            exec: k,
            waits: std::mem::take(&mut waits[n]),
            externals: std::mem::take(&mut externals[n]),
        });
        for c in &batch.commands {
            match c {
                Command::Pass(i) => self.emit_pass(ex, links, q, n, *i),
                Command::Barrier(bc) => self.emit_barrier(ex, batch, q, b, c, bc),
            }
        }
        let timeline = batch.signal.map(|s| {
            (
                values.per_batch[q][b].unwrap_or(0),
                uni.stages(s, Scope::First),
            )
        });
        if batch.signal.is_some() && values.per_batch[q][b].is_none() {
            self.violations.push(structure(format!(
                "execution {k}: batch {b} of queue `{}` signals but has no timeline value",
                qname(q)
            )));
        }
        self.events.push(Event::End {
            q,
            exec: k,
            timeline,
            presents: std::mem::take(&mut links.presents[n]),
        });
    }

    /// Pass `i`, recorded in batch node `n` of queue `q`, performs its uses: an op each, and
    /// an event each, except for present ops, which the binary signal's batch hands over.
    fn emit_pass(&mut self, ex: &Exec, links: &mut Links, q: usize, n: usize, i: usize) {
        let Exec { k, p, segs_of, .. } = *ex;
        let input = &p.input;
        let uni = self.universe;
        let Links {
            presents,
            present_of_pass,
            ..
        } = links;
        let Some(pass) = input.passes.get(i) else {
            return;
        };
        for us in &pass.uses {
            let Some(kind) = self.res_kinds.get(us.resource).copied() else {
                self.violations.push(structure(format!(
                    "execution {k}: pass `{}` uses resource {}, which does not exist",
                    pass.name, us.resource
                )));
                continue;
            };
            let Some(cells) = use_cells(&kind, us.range, us.aspect) else {
                self.violations.push(structure(format!(
                    "execution {k}: pass `{}` declares a range outside `{}`",
                    pass.name, self.res_names[us.resource]
                )));
                continue;
            };
            let stages = uni.stages(us.access.stages, Scope::Op);
            let access = uni.access(us.access.access);
            // An app's `VkRenderPass` moves the attachment itself, from `initialLayout` (any
            // layout, contents discarded, if UNDEFINED) through the subpass's layout to
            // `finalLayout`. Each move is a layout transition, a write, inside the render
            // pass's external dependencies: at the use's stages.
            // A use of one plane of a depth/stencil image: that aspect's own layout.
            let on_plane = us.on_plane(&kind);
            let (layout, rp) = (on_plane.access.layout, on_plane.render_pass);
            let expects = rp.map_or(layout, |rp| rp.initial_layout);
            let moves =
                rp.is_some_and(|rp| rp.initial_layout != layout || layout != rp.final_layout);
            let discards =
                us.discard || rp.is_some_and(|rp| rp.initial_layout == vk::ImageLayout::UNDEFINED);
            // No pipeline stage at all (Access::PRESENT): the presentation engine's read.
            let present = us.access.stages.is_empty();
            let id = self.ops.len();
            self.ops.push(Op {
                kind: OpKind::Access {
                    pass: i,
                    discard: discards,
                    present,
                    leaves: rp.map(|rp| rp.final_layout),
                    ends_in_transition: rp.is_some_and(|rp| layout != rp.final_layout),
                    unordered: us.unordered,
                },
                exec: k,
                queue: Some(q),
                resource: us.resource,
                segs: segs_of(us.resource, &cells, &self.segs),
                stages,
                access,
                write: access & WRITES != 0 || moves,
                layout: expects,
                actor: Actor::Pass {
                    execution: k,
                    pass: i,
                    name: pass.name.clone(),
                },
            });
            if present {
                // Performed by the presentation engine after the binary signal.
                match present_of_pass[i] {
                    Some((pn, st)) => presents[pn].push((id, st)),
                    None => {
                        self.violations.push(structure(format!(
                            "execution {k}: pass `{}` hands `{}` to the presentation engine without signalling a binary semaphore",
                            pass.name, self.res_names[us.resource]
                        )));
                        presents[n].push((id, 0));
                    }
                }
            } else {
                self.events.push(Event::Op { q, op: id });
            }
        }
    }

    /// One barrier command `c` (`bc`) of batch `b` on queue `q`: its entries, and the
    /// transitions, releases and acquires they perform as ops.
    fn emit_barrier(
        &mut self,
        ex: &Exec,
        batch: &Batch,
        q: usize,
        b: usize,
        c: &Command,
        bc: &BarrierCmd,
    ) {
        let place = Place::new(&ex.p.input, batch, b, c);
        let mut entries = vec![];
        for d in Declared::all(bc) {
            if let Some(e) = self.barrier_entry(ex, q, &place, &d) {
                entries.push(e);
            }
        }
        self.events.push(Event::Barrier { q, entries });
    }

    /// Barrier `d` of a command at `place` on queue `q`, as an entry: its segments, scopes and
    /// role, and the op it performs. `None` (a structural violation) where it names no
    /// resource, or cells the resource does not have.
    fn barrier_entry(&mut self, ex: &Exec, q: usize, place: &Place, d: &Declared) -> Option<Entry> {
        let Exec { k, segs_of, .. } = *ex;
        let r = d.resource;
        let Some(kind) = self.res_kinds.get(r).copied() else {
            self.violations.push(structure(format!(
                "execution {k}: a barrier names resource {r}, which does not exist"
            )));
            return None;
        };
        let Some(cells) = use_cells(&kind, Some(d.range), d.aspect) else {
            self.violations.push(structure(format!("execution {k}: a barrier on queue `{}` has a range outside `{}` or of the wrong kind", ex.qname(q), self.res_names[r])));
            return None;
        };
        let segs = segs_of(r, &cells, &self.segs);
        let role = self.entry_role(ex, q, place, d);
        let is_image = matches!(kind, ResourceKind::Image { .. });
        let op = d
            .performs(role, is_image)
            .map(|(op_kind, name)| self.push_sync_op(ex, q, r, &segs, op_kind, place.what(name)));
        let alias_segs = if self.transient[r] {
            self.alias_segs(k, r, &segs)
        } else {
            vec![]
        };
        let (uni, sc) = (self.universe, d.scopes);
        // A release ignores the second access scope; an acquire the first.
        Some(Entry {
            segs,
            src: uni.stages(sc.src_stages, Scope::First),
            dst: uni.stages(sc.dst_stages, Scope::Second),
            src_access: if role == Role::Acquire {
                0
            } else {
                uni.access(sc.src_access)
            },
            dst_access: if role == Role::Release {
                0
            } else {
                uni.access(sc.dst_access)
            },
            role,
            op,
            alias_segs,
        })
    }

    /// Whether barrier `d` on queue `q` releases or acquires ownership: a transfer between two
    /// families, run on the source family (a release) or the destination family (an acquire).
    /// A transfer of a `CONCURRENT` resource, or one run on a third family, is a violation,
    /// and the barrier a plain one.
    fn entry_role(&mut self, ex: &Exec, q: usize, place: &Place, d: &Declared) -> Role {
        let Some((s, dst)) = d.scopes.families.filter(|(s, d)| s != d) else {
            return Role::Plain;
        };
        let (k, r) = (ex.k, d.resource);
        let fam = ex.p.input.queues[q].family;
        if self.concurrent[r] {
            self.violations.push(Violation {
                kind: HazardKind::Ownership,
                first: None,
                second: Some(Actor::Sync {
                    execution: k,
                    queue: ex.qname(q),
                    what: place.what("barrier"),
                }),
                resource: Some(self.res_names[r].clone()),
                range: None,
                missing: format!("ownership transfer {s} -> {dst} on a CONCURRENT resource"),
            });
            Role::Plain
        } else if fam == s {
            Role::Release
        } else if fam == dst {
            Role::Acquire
        } else {
            self.violations.push(structure(format!(
                "execution {k}: an ownership transfer {s} -> {dst} of `{}` runs on queue `{}` of family {fam}",
                self.res_names[r],
                ex.qname(q)
            )));
            Role::Plain
        }
    }

    /// Adds the transition, release or acquire `kind` that a barrier on queue `q` performs on
    /// segments `segs` of resource `r`, named `what`; returns its op.
    fn push_sync_op(
        &mut self,
        ex: &Exec,
        q: usize,
        r: usize,
        segs: &[usize],
        kind: OpKind,
        what: String,
    ) -> usize {
        // Without USE_ALL_STAGES a release or acquire is outside its barrier's stage masks: it
        // runs in the stage only an all-stages scope holds.
        let transfer = matches!(kind, OpKind::Release { .. } | OpKind::Acquire { .. });
        let in_ownership_stage = transfer && !self.all_stages_transfers[ex.k][q];
        self.ops.push(Op {
            kind,
            exec: ex.k,
            queue: Some(q),
            resource: r,
            segs: segs.to_vec(),
            stages: if in_ownership_stage {
                OWNERSHIP_STAGE
            } else {
                0
            },
            access: 0,
            write: true,
            layout: vk::ImageLayout::UNDEFINED,
            actor: Actor::Sync {
                execution: ex.k,
                queue: ex.qname(q),
                what,
            },
        });
        self.ops.len() - 1
    }
}

/// Where a barrier command is, as the names of what it performs say it: before the next pass
/// of its batch, or at the end of the batch.
struct Place {
    at: String,
}

impl Place {
    /// The place of barrier command `c` of batch `b` (`batch`).
    fn new(input: &PlanInput, batch: &Batch, b: usize, c: &Command) -> Self {
        let next_pass = batch
            .commands
            .iter()
            .skip_while(|x| *x != c)
            .find_map(|x| match x {
                Command::Pass(i) => input.passes.get(*i).map(|p| p.name.clone()),
                _ => None,
            });
        let at = match next_pass {
            Some(n) => format!("before pass `{n}`"),
            None => format!("at the end of batch {b}"),
        };
        Place { at }
    }

    /// `s` (a barrier, or what it performs) at this place.
    fn what(&self, s: &str) -> String {
        format!("{s} {}", self.at)
    }
}

/// One image or buffer memory barrier of a barrier command, as the plan states it.
struct Declared {
    resource: usize,
    range: SubRange,
    /// The image aspects it names (empty for a buffer).
    aspect: vk::ImageAspectFlags,
    scopes: Scopes,
    /// Its layouts (`UNDEFINED` for a buffer).
    old: vk::ImageLayout,
    new: vk::ImageLayout,
}

impl Declared {
    /// The barriers of `bc`: its image barriers, then its buffer barriers.
    fn all(bc: &BarrierCmd) -> impl Iterator<Item = Declared> + '_ {
        let images = bc.images.iter().map(|i| Declared {
            resource: i.resource,
            range: SubRange::Image(i.range),
            aspect: i.aspect,
            scopes: i.scopes,
            old: i.old_layout,
            new: i.new_layout,
        });
        let buffers = bc.buffers.iter().map(|b| Declared {
            resource: b.resource,
            range: SubRange::Buffer(b.range),
            aspect: vk::ImageAspectFlags::empty(),
            scopes: b.scopes,
            old: vk::ImageLayout::UNDEFINED,
            new: vk::ImageLayout::UNDEFINED,
        });
        images.chain(buffers)
    }

    /// The op it performs in `role`, and that op's name: an ownership release or acquire, a
    /// layout transition of an image, or none.
    fn performs(&self, role: Role, is_image: bool) -> Option<(OpKind, &'static str)> {
        let (old, new, range, aspect) = (self.old, self.new, self.range, self.aspect);
        match (role, self.scopes.families) {
            (Role::Release, Some((src, dst))) => Some((
                OpKind::Release {
                    src,
                    dst,
                    old,
                    new,
                    range,
                    aspect,
                },
                "ownership release",
            )),
            (Role::Acquire, Some((src, dst))) => Some((
                OpKind::Acquire {
                    src,
                    dst,
                    old,
                    new,
                    range,
                    aspect,
                },
                "ownership acquire",
            )),
            (Role::Plain, _) if is_image && old != new => {
                Some((OpKind::Transition { old, new }, "layout transition"))
            }
            _ => None,
        }
    }
}
