//! Printing where the transients are: heaps, and per transient its bytes, its first and last
//! uses and the transients whose memory it takes; then the totals against the lower bound.

use super::{TransientPlan, UseSite};
use crate::plan::PlanInput;
use std::fmt;

impl TransientPlan {
    /// Writes the placements as `Plan`'s `Display` shows them (nothing without transients).
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, input: &PlanInput) -> fmt::Result {
        if self.placements.is_empty() {
            return Ok(());
        }
        let rname = |r: usize| input.resources.get(r).map_or("?", |r| r.name.as_str());
        let site = |u: &UseSite| {
            let pass = input.passes.get(u.pass).map_or("?", |p| p.name.as_str());
            let queue = input.queues.get(u.queue).map_or("?", |q| q.name.as_str());
            format!(
                "`{pass}` (`{queue}` batch {} command {})",
                u.batch, u.command
            )
        };
        writeln!(
            f,
            "transient memory: {} bytes in {} heap(s); without aliasing {}, live-set lower bound {}",
            self.total_size(),
            self.heaps.len(),
            self.unaliased_size,
            self.lower_bound
        )?;
        for (h, heap) in self.heaps.iter().enumerate() {
            writeln!(
                f,
                "  heap {h}: {} bytes, alignment {}, memory types {:#b}",
                heap.size, heap.alignment, heap.memory_type_bits
            )?;
            let mut here: Vec<_> = self.placements.iter().filter(|p| p.heap == h).collect();
            here.sort_by_key(|p| (p.offset, p.resource));
            for p in here {
                let last: Vec<String> = p.last_uses.iter().map(site).collect();
                write!(
                    f,
                    "    `{}` bytes {}..{}: first {}, last {}",
                    rname(p.resource),
                    p.offset,
                    p.offset + p.size,
                    site(&p.first_use),
                    last.join(", ")
                )?;
                if !p.after.is_empty() {
                    let after: Vec<String> =
                        p.after.iter().map(|&a| format!("`{}`", rname(a))).collect();
                    write!(f, "; after {}", after.join(", "))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
