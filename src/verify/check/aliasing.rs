//! Memory aliasing in the walk: which earlier operations a later one is checked against, and
//! what a write to shared memory does to the other transients' contents.
//!
//! Operations on transients that share memory conflict like operations on one resource when
//! either writes ("use of an overlapping range by two aliases must be separated by a memory
//! dependency ... if at least one of those uses performs writes, whether the aliases interpret
//! memory consistently or not"): an execution dependency, and, between two writes, the earlier
//! write made available first. A later alias never needs the earlier one's writes visible: it
//! does not read them. A write through one alias leaves the other's contents undefined.
//!
//! A transient's memory and contents belong to one execution: operations of two executions on
//! it are not checked against each other, and each execution starts it fresh.

use super::*;

impl Checker<'_> {
    /// The earlier operations that `y`, on segment `g`, is checked against, each with the
    /// segment it touched: those on `g` (of `y`'s execution, for a transient), and those of
    /// `y`'s execution on segments of other transients that share memory with `g`.
    pub(super) fn earlier(&self, y: usize, g: usize) -> Vec<(usize, usize)> {
        let m = self.m;
        let yo = &m.ops[y];
        let transient = m.transient[yo.resource];
        let same_exec = |x: &usize| m.ops[*x].exec == yo.exec;
        let mut out: Vec<(usize, usize)> = self.seen[g]
            .iter()
            .filter(|x| !transient || same_exec(x))
            .map(|&x| (x, g))
            .collect();
        if let Some(aliased) = m.aliases.get(&(yo.exec, g)) {
            for &ga in aliased {
                out.extend(
                    self.seen[ga]
                        .iter()
                        .filter(|x| same_exec(x))
                        .map(|&x| (x, ga)),
                );
            }
        }
        out
    }

    /// A transient's segment as operation `o` of a new execution finds it: fresh.
    pub(super) fn fresh_for(&self, o: usize, cell: &Cell) -> Option<Cell> {
        let op = &self.m.ops[o];
        (self.m.transient[op.resource] && cell.exec != Some(op.exec)).then_some(Cell {
            layout: vk::ImageLayout::UNDEFINED,
            layout_by: None,
            defined: false,
            lost: None,
            owner: None,
            owner_by: None,
            transit: None,
            exec: Some(op.exec),
        })
    }

    /// Write `o` on segment `g` leaves undefined the contents of the segments of other
    /// transients of its execution that share memory with `g`.
    pub(super) fn clobber_aliases(&mut self, o: usize, g: usize) {
        let m = self.m;
        let op = &m.ops[o];
        let Some(aliased) = m.aliases.get(&(op.exec, g)) else {
            return;
        };
        for &ga in aliased {
            let c = &mut self.cells[ga];
            if c.exec == Some(op.exec) && c.defined && c.lost.is_none() {
                c.lost = Some((o, "a write to memory that another transient shares"));
            }
        }
    }
}
