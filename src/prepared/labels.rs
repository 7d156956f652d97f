//! Debug labels and names for tools: each pass's region coloured by its queue, each barrier
//! command named for the pass it comes before and the ownership it transfers, and command
//! buffer names.
//!
//! All of it is skipped without debug utils or with labels off. Label text is built on the
//! stack, so a frame allocates nothing for it. [`PlanLabels`] keeps a plan's labels as C
//! strings with the plan (like its barriers), so that a reused or held plan opens each region
//! without building its text again.

use crate::debug::DebugUtils;
use crate::plan::{barrier_rgb, queue_rgb, BarrierCmd, Batch, Command, Plan};
use crate::queue::Queue;
use ash::vk;
use std::ffi::{CStr, CString};
use std::fmt::{self, Write};

/// Label text up to 126 bytes, built without allocating and kept NUL-terminated, so that it
/// goes to Vulkan as it is; longer text is cut at a character boundary, and a NUL in the text
/// becomes `?` (a C string cannot hold one).
pub(crate) struct LabelText {
    buf: [u8; 127],
    len: usize,
}

impl LabelText {
    pub(crate) fn new() -> Self {
        LabelText {
            buf: [0; 127],
            len: 0,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole characters are ever copied in (`write_str`).
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// The text as a C string: the byte after the text is always the NUL.
    pub(crate) fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.buf[..=self.len]).unwrap_or_default()
    }

    /// Appends `s` without `fmt` machinery (the hot path of barrier labels).
    pub(crate) fn push(&mut self, s: &str) {
        // Room for the text, not the NUL after it.
        let room = self.buf.len() - 1 - self.len;
        let mut n = s.len().min(room);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        let dst = &mut self.buf[self.len..self.len + n];
        dst.copy_from_slice(&s.as_bytes()[..n]);
        for b in dst.iter_mut().filter(|b| **b == 0) {
            *b = b'?';
        }
        self.len += n;
    }
}

impl Write for LabelText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s);
        Ok(())
    }
}

/// `rgb` as a label colour.
fn color([r, g, b]: [u8; 3]) -> [f32; 4] {
    [r as f32 / 255.0, g as f32 / 255.0, b as f32 / 255.0, 1.0]
}

/// The label colour of planner queue `queue`'s passes: the plan diagram's colour of the queue.
pub(crate) fn pass_color(queue: usize) -> [f32; 4] {
    color(queue_rgb(queue))
}

/// A queue family index as a label says it.
struct Family(u32);

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            vk::QUEUE_FAMILY_EXTERNAL => f.write_str("external"),
            vk::QUEUE_FAMILY_FOREIGN_EXT => f.write_str("foreign"),
            n => write!(f, "family {n}"),
        }
    }
}

/// Writes the label of barrier command `b` recorded on a queue of `family`: the pass it comes
/// before (or else the one it follows), then the first ownership release and acquire it
/// holds. Returns its colour: the diagram's ownership colour if it transfers any, else grey.
pub(crate) fn barrier_label(
    out: &mut impl Write,
    b: &BarrierCmd,
    family: u32,
    before: Option<&str>,
    after: Option<&str>,
) -> [f32; 4] {
    // Pieces rather than `write!`: this runs for every barrier command of every frame.
    let _ = match (before, after) {
        (Some(p), _) => out
            .write_str("barriers before `")
            .and_then(|()| out.write_str(p))
            .and_then(|()| out.write_str("`")),
        (None, Some(p)) => out
            .write_str("barriers after `")
            .and_then(|()| out.write_str(p))
            .and_then(|()| out.write_str("`")),
        (None, None) => out.write_str("barriers"),
    };
    let transfers = || {
        let images = b.images.iter().filter_map(|i| i.scopes.families);
        images.chain(b.buffers.iter().filter_map(|x| x.scopes.families))
    };
    let release = transfers().find(|&(src, dst)| src == family && dst != family);
    let acquire = transfers().find(|&(src, dst)| dst == family && src != family);
    if let Some((_, dst)) = release {
        let _ = write!(out, ", release to {}", Family(dst));
    }
    if let Some((src, _)) = acquire {
        let _ = write!(out, ", acquire from {}", Family(src));
    }
    color(barrier_rgb(release.is_some() || acquire.is_some()))
}

/// Records barrier command `b` (command `c` of `batch`) with `record`, inside a label region
/// that names it ([`barrier_label`]): the label `kept` with the plan ([`super::labels::keep`]),
/// or else one built here. `pass_name`: a pass's name by its index. Out of line: only
/// recordings with labels on come here.
#[inline(never)]
pub(crate) fn labelled_barrier<'n>(
    d: &DebugUtils,
    cmd: vk::CommandBuffer,
    family: u32,
    (batch, c, b): (&Batch, usize, &BarrierCmd),
    kept: Option<(&CStr, [f32; 4])>,
    pass_name: impl Fn(usize) -> &'n str,
    record: impl FnOnce(),
) {
    // Built only when no kept label is given (debug builds build it anyway, to check the
    // kept one: every test that records a plan twice with labels on checks them).
    let mut label: LabelText;
    let (text, color) = match kept {
        Some(kept) if !cfg!(debug_assertions) => kept,
        _ => {
            label = LabelText::new();
            let (next, prev) = neighbours(batch, c, pass_name);
            let color = barrier_label(&mut label, b, family, next, prev);
            let built = (label.as_c_str(), color);
            debug_assert!(
                kept.is_none_or(|k| k == built),
                "kept {kept:?}, built {built:?}"
            );
            built
        }
    };
    // SAFETY: `cmd` is recording on this thread; the graph's debug functions belong to its
    // device (`Graph::new`'s contract). The label closes right after the barrier.
    unsafe { d.begin_label_c(cmd, text, color) };
    record();
    // SAFETY: closes the label just opened.
    unsafe { d.end_label(cmd) };
}

/// The passes on either side of command `c` of `batch`: (the pass right after, the pass
/// right before).
pub(crate) fn neighbour_passes(batch: &Batch, c: usize) -> (Option<usize>, Option<usize>) {
    let pass = |i: Option<usize>| match i.and_then(|i| batch.commands.get(i)) {
        Some(Command::Pass(p)) => Some(*p),
        _ => None,
    };
    (pass(c.checked_add(1)), pass(c.checked_sub(1)))
}

/// The pass names on either side of command `c` of `batch`: (the pass right after, the pass
/// right before).
pub(crate) fn neighbours<'n>(
    batch: &Batch,
    c: usize,
    name: impl Fn(usize) -> &'n str,
) -> (Option<&'n str>, Option<&'n str>) {
    let (next, prev) = neighbour_passes(batch, c);
    (next.map(&name), prev.map(&name))
}

/// Names `cmd` "`queue` batch `b`" unless it has that name already (command buffers go back
/// to a pool shared by the family's queues, and usually come back for the same batch).
pub(crate) fn name_command_buffer(
    names: &mut std::collections::HashMap<
        vk::CommandBuffer,
        (vk::Queue, usize),
        crate::fx::FxBuildHasher,
    >,
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    queue: &Queue,
    batch: usize,
) {
    let Some(d) = debug else { return };
    if names.insert(cmd, (queue.handle(), batch)) != Some((queue.handle(), batch)) {
        let mut name = LabelText::new();
        let _ = write!(name, "{} batch {batch}", queue.name());
        // SAFETY: `cmd` is a live command buffer of the graph's device, which `d` was loaded
        // for; its pool is locked by the caller, so no other thread uses it.
        unsafe { d.set_name(cmd, name.as_str()) };
    }
}

/// One barrier command's label.
struct BarrierLabel {
    text: CString,
    color: [f32; 4],
    /// The pass whose name the text holds: a reused plan's passes may be named otherwise in a
    /// later frame, and then the label is built again.
    pass: Option<usize>,
}

/// Every pass's name and every barrier command's label (in recording order), as C strings;
/// built for the plan they travel with, or not at all.
#[derive(Default)]
pub(crate) struct PlanLabels {
    built: bool,
    /// Per pass (by index): its name.
    passes: Vec<CString>,
    barriers: Vec<BarrierLabel>,
    /// The byte buffers of the last build's strings, to build the next ones in without
    /// allocating.
    spare: Vec<Vec<u8>>,
}

impl PlanLabels {
    /// Whether the labels were built for the plan they travel with.
    pub(crate) fn built(&self) -> bool {
        self.built
    }

    /// Builds them anew: `each` pushes every pass's name by index, then every barrier
    /// command's label in recording order.
    pub(crate) fn rebuild(&mut self, each: impl FnOnce(&mut Self)) {
        self.built = false;
        let spare = &mut self.spare;
        spare.extend(self.passes.drain(..).map(CString::into_bytes_with_nul));
        spare.extend((self.barriers.drain(..)).map(|b| b.text.into_bytes_with_nul()));
        each(self);
        self.built = true;
    }

    /// `bytes` (holding no NUL) as a C string, in a spare buffer.
    fn c_string(&mut self, bytes: impl Iterator<Item = u8>) -> CString {
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend(bytes);
        buffer.push(0);
        // A NUL inside cannot happen (the callers replace or exclude them); should one come,
        // the label is empty rather than cut.
        CString::from_vec_with_nul(buffer).unwrap_or_default()
    }

    /// Appends the next pass's name. A NUL, which a C string cannot hold, becomes `?` as in
    /// [`crate::DebugUtils::begin_label`]; such a name never matches itself in [`Self::pass`],
    /// so its label is built each time, the way it always was.
    pub(crate) fn push_pass(&mut self, name: &str) {
        let text = self.c_string(name.bytes().map(|b| if b == 0 { b'?' } else { b }));
        self.passes.push(text);
    }

    /// Appends the next barrier command's label: `text`, drawn in `color`, naming pass `pass`
    /// (its name pushed already) if any.
    pub(crate) fn push_barrier(&mut self, text: &CStr, color: [f32; 4], pass: Option<usize>) {
        let text = self.c_string(text.to_bytes().iter().copied());
        self.barriers.push(BarrierLabel { text, color, pass });
    }

    /// Pass `p`'s label, if it is still named `name` and the labels were built for this plan.
    pub(crate) fn pass(&self, p: usize, name: &str) -> Option<&CStr> {
        let label = self.passes.get(p).filter(|_| self.built)?;
        (name.as_bytes() == label.to_bytes()).then_some(label.as_c_str())
    }

    /// Barrier command `k`'s label, unless the pass it names is named otherwise now (`name`: a
    /// pass's name by its index), or the labels were not built for this plan.
    pub(crate) fn barrier<'n>(
        &self,
        k: usize,
        name: impl Fn(usize) -> &'n str,
    ) -> Option<(&CStr, [f32; 4])> {
        let label = self.barriers.get(k).filter(|_| self.built)?;
        if let Some(p) = label.pass {
            self.pass(p, name(p))?;
        }
        Some((label.text.as_c_str(), label.color))
    }

    /// Drops the claim that the labels belong to the plan they travel with, keeping the
    /// allocations.
    pub(crate) fn forget(&mut self) {
        self.built = false;
    }
}

/// Builds the label of every pass and barrier command of `plan` into `labels`, barrier
/// commands in recording order. `family`: a planner queue's family; `pass_name`: a pass's
/// name by its index.
pub(crate) fn keep<'n>(
    labels: &mut PlanLabels,
    plan: &Plan,
    family: impl Fn(usize) -> u32,
    pass_name: impl Fn(usize) -> &'n str + Copy,
) {
    labels.rebuild(|labels| {
        for p in 0..plan.input.passes.len() {
            labels.push_pass(pass_name(p));
        }
        for (qi, qp) in plan.queues.iter().enumerate() {
            for batch in &qp.batches {
                for (c, command) in batch.commands.iter().enumerate() {
                    let Command::Barrier(b) = command else {
                        continue;
                    };
                    let mut text = LabelText::new();
                    let (next, prev) = neighbour_passes(batch, c);
                    let name = |p: Option<usize>| p.map(pass_name);
                    let color = barrier_label(&mut text, b, family(qi), name(next), name(prev));
                    // The label names the pass after the command, or else the one before.
                    labels.push_barrier(text.as_c_str(), color, next.or(prev));
                }
            }
        }
    });
}

#[cfg(test)]
mod tests;
