//! Printing a plan: queues, batches, waits, barriers, passes and signals.

use super::*;
use std::fmt;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let qname = |q: usize| self.input.queues.get(q).map_or("?", |q| q.name.as_str());
        let rname = |r: usize| self.input.resources.get(r).map_or("?", |r| r.name.as_str());
        let pname = |i: usize| self.input.passes.get(i).map_or("?", |p| p.name.as_str());
        let moved = self.moved_before();
        for (qi, qp) in self.queues.iter().enumerate() {
            if qp.batches.is_empty() {
                continue;
            }
            let qd = &self.input.queues[qi];
            writeln!(f, "queue `{}` (family {}):", qd.name, qd.family)?;
            for (bi, b) in qp.batches.iter().enumerate() {
                writeln!(f, "  batch {bi}:")?;
                for w in &b.waits {
                    match w.target {
                        WaitTarget::Batch { queue, batch } => writeln!(
                            f,
                            "    wait   `{}` timeline after its batch {batch} at {:?}",
                            qname(queue),
                            w.stages
                        )?,
                        WaitTarget::Value { queue, value } => writeln!(
                            f,
                            "    wait   `{}` timeline value {value} (earlier graph) at {:?}",
                            qname(queue),
                            w.stages
                        )?,
                        WaitTarget::Binary(s) => {
                            writeln!(f, "    wait   binary {s:?} at {:?}", w.stages)?
                        }
                    }
                }
                for c in &b.commands {
                    match c {
                        Command::Pass(i) => match moved.get(*i).copied().flatten() {
                            Some(j) => writeln!(
                                f,
                                "    pass   `{}` (moved before `{}`)",
                                pname(*i),
                                pname(j)
                            )?,
                            None => writeln!(f, "    pass   `{}`", pname(*i))?,
                        },
                        Command::Barrier(bar) => {
                            writeln!(f, "    barrier")?;
                            for ib in &bar.images {
                                writeln!(
                                    f,
                                    "      image  `{}` mips {}+{} layers {}+{}: {:?} -> {:?}, {}",
                                    rname(ib.resource),
                                    ib.range.base_mip,
                                    ib.range.mip_count,
                                    ib.range.base_layer,
                                    ib.range.layer_count,
                                    ib.old_layout,
                                    ib.new_layout,
                                    scopes(&ib.scopes)
                                )?;
                            }
                            for bb in &bar.buffers {
                                writeln!(
                                    f,
                                    "      buffer `{}` bytes {}..{}: {}",
                                    rname(bb.resource),
                                    bb.range.offset,
                                    bb.range.offset + bb.range.size,
                                    scopes(&bb.scopes)
                                )?;
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
            writeln!(f, "culled `{}`", pname(i))?;
        }
        Ok(())
    }
}

fn scopes(s: &Scopes) -> String {
    fn flags<T: fmt::Debug + PartialEq + Default>(f: T) -> String {
        if f == T::default() {
            "NONE".into()
        } else {
            format!("{f:?}")
        }
    }
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
