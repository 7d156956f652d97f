//! Emitting the events of one batch, in the order the analysis walks them: its waits, then
//! each command (a pass performs its uses; a barrier runs its entries and the transitions,
//! releases and acquires they perform), then its signals.

use super::execution::{Exec, Links};
use super::*;
use crate::plan::{BarrierCmd, Batch};

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
        let Exec { k, p, segs_of, .. } = *ex;
        let input = &p.input;
        let uni = self.universe;
        let qname = |q: usize| ex.qname(q);
        let next_pass = batch
            .commands
            .iter()
            .skip_while(|x| *x != c)
            .find_map(|x| match x {
                Command::Pass(i) => input.passes.get(*i).map(|p| p.name.clone()),
                _ => None,
            });
        let what = |s: &str| match &next_pass {
            Some(n) => format!("{s} before pass `{n}`"),
            None => format!("{s} at the end of batch {b}"),
        };
        let mut entries = vec![];
        let imgs = bc.images.iter().map(|i| {
            (
                i.resource,
                Some(SubRange::Image(i.range)),
                i.aspect,
                i.scopes,
                i.old_layout,
                i.new_layout,
            )
        });
        let bufs = bc.buffers.iter().map(|b| {
            (
                b.resource,
                Some(SubRange::Buffer(b.range)),
                vk::ImageAspectFlags::empty(),
                b.scopes,
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::UNDEFINED,
            )
        });
        for (r, range, aspect, sc, old, new) in imgs.chain(bufs) {
            let Some(kind) = self.res_kinds.get(r).copied() else {
                self.violations.push(structure(format!(
                    "execution {k}: a barrier names resource {r}, which does not exist"
                )));
                continue;
            };
            let Some(cells) = use_cells(&kind, range, aspect) else {
                self.violations.push(structure(format!("execution {k}: a barrier on queue `{}` has a range outside `{}` or of the wrong kind", qname(q), self.res_names[r])));
                continue;
            };
            let segs = segs_of(r, &cells, &self.segs);
            let fam = input.queues[q].family;
            let mut role = Role::Plain;
            if let Some((s, d)) = sc.families {
                if s != d {
                    if self.concurrent[r] {
                        self.violations.push(Violation {
                            kind: HazardKind::Ownership,
                            first: None,
                            second: Some(Actor::Sync {
                                execution: k,
                                queue: qname(q),
                                what: what("barrier"),
                            }),
                            resource: Some(self.res_names[r].clone()),
                            range: None,
                            missing: format!(
                                "ownership transfer {s} -> {d} on a CONCURRENT resource"
                            ),
                        });
                    } else if fam == s {
                        role = Role::Release;
                    } else if fam == d {
                        role = Role::Acquire;
                    } else {
                        self.violations.push(structure(format!(
                            "execution {k}: an ownership transfer {s} -> {d} of `{}` runs on queue `{}` of family {fam}",
                            self.res_names[r],
                            qname(q)
                        )));
                    }
                }
            }
            let is_image = matches!(kind, ResourceKind::Image { .. });
            let (op_kind, name) = match role {
                Role::Release => {
                    let (s, d) = sc.families.unwrap();
                    (
                        Some(OpKind::Release {
                            src: s,
                            dst: d,
                            old,
                            new,
                            range: range.unwrap(),
                            aspect,
                        }),
                        "ownership release",
                    )
                }
                Role::Acquire => {
                    let (s, d) = sc.families.unwrap();
                    (
                        Some(OpKind::Acquire {
                            src: s,
                            dst: d,
                            old,
                            new,
                            range: range.unwrap(),
                            aspect,
                        }),
                        "ownership acquire",
                    )
                }
                Role::Plain if is_image && old != new => {
                    (Some(OpKind::Transition { old, new }), "layout transition")
                }
                Role::Plain => (None, ""),
            };
            // Without USE_ALL_STAGES a release or acquire is outside its
            // barrier's stage masks: it runs in the stage only an all-stages
            // scope holds.
            let qfot = role != Role::Plain && !OWNERSHIP_TRANSFER_USES_ALL_STAGES;
            let op = op_kind.map(|kind| {
                self.ops.push(Op {
                    kind,
                    exec: k,
                    queue: Some(q),
                    resource: r,
                    segs: segs.clone(),
                    stages: if qfot { OWNERSHIP_STAGE } else { 0 },
                    access: 0,
                    write: true,
                    layout: vk::ImageLayout::UNDEFINED,
                    actor: Actor::Sync {
                        execution: k,
                        queue: qname(q),
                        what: what(name),
                    },
                });
                self.ops.len() - 1
            });
            let alias_segs = if self.transient[r] {
                self.alias_segs(k, r, &segs)
            } else {
                vec![]
            };
            // A release ignores the second access scope; an acquire the first.
            entries.push(Entry {
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
            });
        }
        self.events.push(Event::Barrier { q, entries });
    }
}
