//! [`FrameDecls`]: one frame's declarations, flat, as its passes make them.

use crate::plan::{BinarySignalDecl, BinaryWaitDecl, PassDecl, UseDecl};
use ash::vk;

/// What every pass of a frame declared, in a few flat lists: the uses of all passes in one
/// list, each pass a range of it, with resources and queues already under their planner
/// indices ([`super::ResourceIndex`]).
///
/// A kept frame keeps the declarations its plan answers. The next frame's `finish()` tells
/// whether it declares the same by comparing the lists ([`FrameDecls::same_as`]); the
/// planner's [`crate::plan::PlanInput`] is built from them ([`FrameDecls::pass`]) only when
/// the frame must be planned, or its states compared.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameDecls {
    /// Per pass, in program order: its queue and where its entries end in the lists below.
    pub(crate) passes: Vec<PassSpan>,
    pub(crate) uses: Vec<UseDecl>,
    pub(crate) waits: Vec<WaitDecl>,
    /// The resources each wait guards, each wait a range.
    pub(crate) guards: Vec<usize>,
    pub(crate) signals: Vec<BinarySignalDecl>,
}

/// One pass in [`FrameDecls`]: its queue's planner index, and the ends of its ranges in the
/// lists (each starts where the previous pass's ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassSpan {
    pub(crate) queue: u32,
    uses: u32,
    waits: u32,
    signals: u32,
}

/// One binary wait in [`FrameDecls`]: its guards end at `guards` in the guard list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitDecl {
    pub(crate) semaphore: vk::Semaphore,
    pub(crate) stages: Option<vk::PipelineStageFlags2>,
    guards: u32,
}

impl WaitDecl {
    pub(crate) fn new(
        semaphore: vk::Semaphore,
        stages: Option<vk::PipelineStageFlags2>,
        guards_end: usize,
    ) -> Self {
        WaitDecl {
            semaphore,
            stages,
            guards: guards_end as u32,
        }
    }
}

impl FrameDecls {
    /// Empties the lists, keeping their capacity.
    pub(crate) fn clear(&mut self) {
        self.passes.clear();
        self.uses.clear();
        self.waits.clear();
        self.guards.clear();
        self.signals.clear();
    }

    /// Closes the pass whose entries were pushed since the last one closed: it runs on the
    /// queue of planner index `queue`.
    pub(crate) fn end_pass(&mut self, queue: usize) {
        self.passes.push(PassSpan {
            queue: queue as u32,
            uses: self.uses.len() as u32,
            waits: self.waits.len() as u32,
            signals: self.signals.len() as u32,
        });
    }

    /// Whether `new` declares what these do, binary semaphores aside (they are mapped one to
    /// one: [`FrameDecls::semaphore_pairs`]). Flat lists, compared in one go each.
    pub(crate) fn same_as(&self, new: &FrameDecls) -> bool {
        self.passes == new.passes
            && self.uses == new.uses
            && self.guards == new.guards
            && self.waits.len() == new.waits.len()
            && (self.waits.iter().zip(&new.waits))
                .all(|(a, b)| a.stages == b.stages && a.guards == b.guards)
            && self.signals.len() == new.signals.len()
            && (self.signals.iter().zip(&new.signals)).all(|(a, b)| a.stages == b.stages)
    }

    /// Each binary semaphore here with the one `new` has in its place (`new` is
    /// [`FrameDecls::same_as`] these).
    pub(crate) fn semaphore_pairs<'s>(
        &'s self,
        new: &'s FrameDecls,
    ) -> impl Iterator<Item = (vk::Semaphore, vk::Semaphore)> + 's {
        let waits = (self.waits.iter().zip(&new.waits)).map(|(a, b)| (a.semaphore, b.semaphore));
        let signals = (self.signals.iter().zip(&new.signals)).map(|(a, b)| (a.semaphore, b.semaphore));
        waits.chain(signals)
    }

    /// Pass `p`'s declarations: its queue, uses, waits (with their guards) and signals.
    pub(crate) fn pass(&self, p: usize) -> PassView<'_> {
        let start = match p {
            0 => PassSpan {
                queue: 0,
                uses: 0,
                waits: 0,
                signals: 0,
            },
            _ => self.passes[p - 1],
        };
        let end = self.passes[p];
        let range = |a: u32, b: u32| a as usize..b as usize;
        let waits = &self.waits[range(start.waits, end.waits)];
        let guards_start = match start.waits {
            0 => 0,
            w => self.waits[w as usize - 1].guards,
        };
        PassView {
            queue: end.queue as usize,
            uses: &self.uses[range(start.uses, end.uses)],
            waits,
            guards: &self.guards[guards_start as usize..],
            guards_start: guards_start as usize,
            signals: &self.signals[range(start.signals, end.signals)],
        }
    }

    /// Writes each pass's binary semaphores into `passes` (the declarations of a plan these
    /// are [`FrameDecls::same_as`]), where they differ.
    pub(crate) fn write_semaphores(&self, passes: &mut [PassDecl]) {
        if self.waits.is_empty() && self.signals.is_empty() {
            return;
        }
        for (p, pd) in passes.iter_mut().enumerate() {
            let view = self.pass(p);
            for (w, mine) in pd.waits.iter_mut().zip(view.waits) {
                w.semaphore = mine.semaphore;
            }
            for (s, mine) in pd.signals.iter_mut().zip(view.signals) {
                s.semaphore = mine.semaphore;
            }
        }
    }
}

/// One pass's part of [`FrameDecls`].
pub(crate) struct PassView<'d> {
    pub(crate) queue: usize,
    pub(crate) uses: &'d [UseDecl],
    waits: &'d [WaitDecl],
    /// The guard list from the pass's first wait's guards on.
    guards: &'d [usize],
    guards_start: usize,
    pub(crate) signals: &'d [BinarySignalDecl],
}

impl PassView<'_> {
    /// The pass's waits as the planner's declarations.
    pub(crate) fn wait_decls(&self) -> impl Iterator<Item = BinaryWaitDecl> + '_ {
        let mut start = 0;
        self.waits.iter().map(move |w| {
            let end = w.guards as usize - self.guards_start;
            let guards = self.guards[start..end].to_vec();
            start = end;
            BinaryWaitDecl {
                semaphore: w.semaphore,
                guards,
                stages: w.stages,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Access;
    use ash::vk::Handle;

    /// Two passes: a fill of resource 0, then a copy from 0 to 1 that waits on `wait` (guarding
    /// resource 1) and signals `signal`.
    fn frame(wait: u64, signal: u64) -> FrameDecls {
        let mut d = FrameDecls::default();
        d.uses.push(UseDecl::new(0, Access::TRANSFER_WRITE));
        d.end_pass(0);
        d.uses.push(UseDecl::new(0, Access::COPY_READ));
        d.uses.push(UseDecl::new(1, Access::COPY_WRITE));
        d.guards.push(1);
        let wait = vk::Semaphore::from_raw(wait);
        d.waits.push(WaitDecl::new(wait, None, d.guards.len()));
        let semaphore = vk::Semaphore::from_raw(signal);
        d.signals.push(BinarySignalDecl { semaphore, stages: None });
        d.end_pass(1);
        d
    }

    #[test]
    fn each_pass_sees_its_own_part_of_the_flat_lists() {
        let d = frame(7, 8);
        let fill = d.pass(0);
        assert_eq!((fill.queue, fill.uses.len(), fill.signals.len()), (0, 1, 0));
        assert_eq!(fill.wait_decls().count(), 0);
        let copy = d.pass(1);
        assert_eq!((copy.queue, copy.uses.len(), copy.signals.len()), (1, 2, 1));
        let waits: Vec<_> = copy.wait_decls().collect();
        assert_eq!(waits.len(), 1);
        assert_eq!((waits[0].semaphore.as_raw(), &waits[0].guards[..]), (7, &[1][..]));
    }

    #[test]
    fn declarations_match_up_to_their_semaphores_which_pair_up() {
        let (old, new) = (frame(7, 8), frame(9, 10));
        assert!(old.same_as(&new));
        let pairs: Vec<_> = (old.semaphore_pairs(&new))
            .map(|(a, b)| (a.as_raw(), b.as_raw()))
            .collect();
        assert_eq!(pairs, [(7, 9), (8, 10)]);
        let mut other = frame(7, 8);
        other.uses[1] = UseDecl::new(1, Access::COPY_READ);
        assert!(!old.same_as(&other));
        let mut other = frame(7, 8);
        other.guards[0] = 0;
        assert!(!old.same_as(&other));
    }
}
