//! A compact `Debug` for [`Case`], so that proptest's "minimal failing input" reads like the
//! graph it is: one line per queue, resource and pass.

use super::{Case, DRAWN};
use std::fmt;
use vk_baton::plan::{ResourceDecl, ResourceKind, UseDecl};
use vk_baton::{Access, SubRange};

fn access_name(a: &Access) -> String {
    if *a == Access::PRESENT {
        return "PRESENT".into();
    }
    DRAWN
        .iter()
        .find(|(_, d, _, _)| d == a)
        .map_or_else(|| format!("{a:?}"), |(n, ..)| n.to_string())
}

fn resource_line(r: &ResourceDecl) -> String {
    let mut s = match r.kind {
        ResourceKind::Image {
            mips,
            layers,
            usage,
            ..
        } => format!("{}: image {mips} mips × {layers} layers, {usage:?}", r.name),
        ResourceKind::Buffer { size, usage } => {
            format!("{}: buffer {size} bytes, {usage:?}", r.name)
        }
    };
    s += if r.concurrent {
        ", CONCURRENT"
    } else {
        ", EXCLUSIVE"
    };
    if let Some(m) = r.transient {
        s += &format!(
            ", transient {} bytes aligned {} types {:#b}",
            m.size, m.alignment, m.memory_type_bits
        );
    }
    for (cells, st) in r.initial.iter().filter(|(_, st)| st.defined) {
        s += &format!(
            ", cells {cells:?} handed over in {:?} owned by {:?}, written by {:?}",
            st.layout, st.owner, st.write
        );
    }
    s
}

fn use_text(u: &UseDecl) -> String {
    let mut s = format!("r{} {}", u.resource, access_name(&u.access));
    match u.range {
        Some(SubRange::Image(r)) => {
            s += &format!(
                " mips {}+{} layers {}+{}",
                r.base_mip, r.mip_count, r.base_layer, r.layer_count
            )
        }
        Some(SubRange::Buffer(b)) => s += &format!(" bytes {}+{}", b.offset, b.size),
        None => {}
    }
    if let Some(rp) = u.render_pass {
        s += &format!(
            " render pass {:?} -> {:?}",
            rp.initial_layout, rp.final_layout
        );
    }
    if u.discard {
        s += " discard";
    }
    s
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Case {{")?;
        for (i, q) in self.queues.iter().enumerate() {
            writeln!(
                f,
                "  queue {i} `{}`: family {} {:?}, timeline starts at {}",
                q.name, q.family, q.caps, self.start[i]
            )?;
        }
        for (i, r) in self.resources.iter().enumerate() {
            writeln!(f, "  r{i} {}", resource_line(r))?;
        }
        for (g, passes) in self.graphs.iter().enumerate() {
            writeln!(f, "  graph {g}:")?;
            for p in passes {
                let uses: Vec<String> = p.uses.iter().map(use_text).collect();
                let mut extra = String::new();
                if !p.waits.is_empty() {
                    extra += " (acquire wait)";
                }
                if !p.signals.is_empty() {
                    extra += " (present signal)";
                }
                writeln!(
                    f,
                    "    {} on q{}: {}{extra}",
                    p.name,
                    p.queue,
                    uses.join(", ")
                )?;
            }
        }
        write!(f, "}}")
    }
}
