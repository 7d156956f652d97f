//! What recording adds around the plan's commands for tools: debug labels (each pass coloured
//! by its queue, each barrier command named for the pass it comes before and the ownership it
//! transfers), command buffer names, and the timestamps of [`crate::Graph::set_gpu_timings`].
//!
//! All of it is skipped when off: labels and names without debug utils, timestamps without
//! a timer. Label text is built on the stack, so a frame allocates nothing for it.

use crate::debug::DebugUtils;
use crate::plan::{barrier_rgb, queue_rgb, BarrierCmd, Batch, Command};
use crate::pools::{ExecutionTimer, Instrumentation};
use crate::queue::Queue;
use crate::timing::PassTiming;
use ash::vk;
use std::ffi::CStr;
use std::fmt::{self, Write};

/// Label text up to 126 bytes, built without allocating and kept NUL-terminated, so that it
/// goes to Vulkan as it is; longer text is cut at a character boundary, and a NUL in the text
/// becomes `?` (a C string cannot hold one).
pub(super) struct LabelText {
    buf: [u8; 127],
    len: usize,
}

impl LabelText {
    pub(super) fn new() -> Self {
        LabelText {
            buf: [0; 127],
            len: 0,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        // Only whole characters are ever copied in (`write_str`).
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// The text as a C string: the byte after the text is always the NUL.
    pub(super) fn as_c_str(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.buf[..=self.len]).unwrap_or_default()
    }

    /// Appends `s` without `fmt` machinery (the hot path of barrier labels).
    pub(super) fn push(&mut self, s: &str) {
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
pub(super) fn pass_color(queue: usize) -> [f32; 4] {
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
pub(super) fn barrier_label(
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
/// that names it ([`barrier_label`]) when debug utils are on: the label `kept` with the plan
/// ([`super::labels::keep`]), or else one built here. `pass_name`: a pass's name by its index.
pub(super) fn labelled_barrier<'n>(
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    family: u32,
    (batch, c, b): (&Batch, usize, &BarrierCmd),
    kept: Option<(&CStr, [f32; 4])>,
    pass_name: impl Fn(usize) -> &'n str,
    record: impl FnOnce(),
) {
    match debug {
        None => record(),
        Some(d) => labelled_barrier_in(d, cmd, family, (batch, c, b), kept, pass_name, record),
    }
}

/// [`labelled_barrier`] with labels on; kept out of line so that the path without labels is
/// only the call to `record`.
#[inline(never)]
fn labelled_barrier_in<'n>(
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
pub(super) fn neighbour_passes(batch: &Batch, c: usize) -> (Option<usize>, Option<usize>) {
    let pass = |i: Option<usize>| match i.and_then(|i| batch.commands.get(i)) {
        Some(Command::Pass(p)) => Some(*p),
        _ => None,
    };
    (pass(c.checked_add(1)), pass(c.checked_sub(1)))
}

/// The pass names on either side of command `c` of `batch`: (the pass right after, the pass
/// right before).
pub(super) fn neighbours<'n>(
    batch: &Batch,
    c: usize,
    name: impl Fn(usize) -> &'n str,
) -> (Option<&'n str>, Option<&'n str>) {
    let (next, prev) = neighbour_passes(batch, c);
    (next.map(&name), prev.map(&name))
}

/// Names `cmd` "`queue` batch `b`" unless it has that name already (command buffers go back
/// to a pool shared by the family's queues, and usually come back for the same batch).
pub(super) fn name_command_buffer(
    instrument: &mut Instrumentation,
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    queue: &Queue,
    batch: usize,
) {
    let Some(d) = debug else { return };
    if instrument.rename(cmd, queue.handle(), batch) {
        let mut name = LabelText::new();
        let _ = write!(name, "{} batch {batch}", queue.name());
        // SAFETY: `cmd` is a live command buffer of the graph's device, which `d` was loaded
        // for; its pool is locked by the caller, so no other thread uses it.
        unsafe { d.set_name(cmd, name.as_str()) };
    }
}

/// At the start of a batch's command buffer: resets the queries its passes will write, unless
/// the timer reset them on the host. `mask`: the queue's timestamps (`None`: not timed).
pub(super) fn reset_batch_queries(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    timer: Option<&ExecutionTimer>,
    mask: Option<u64>,
    batch: &Batch,
) {
    let (Some(t), Some(_)) = (timer, mask) else {
        return;
    };
    let passes = batch
        .commands
        .iter()
        .filter(|c| matches!(c, Command::Pass(_)))
        .count() as u32;
    if t.host_reset || passes == 0 {
        return;
    }
    // SAFETY: `cmd` is recording, outside any render pass, on a graphics or compute queue
    // (`TimestampSupport::mask` times no other without host reset); the queries are the next
    // ones the timer hands out, within its pool (sized for every pass of the execution).
    unsafe { device.cmd_reset_query_pool(cmd, t.slot.pool, t.next_query(), 2 * passes) };
}

/// Before pass `order` (named `name`) on planner queue `qi`: opens its label (`kept` with the
/// plan, or else made from `name`) and writes its start timestamp. Returns the query of its
/// end timestamp, if timed.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn begin_pass(
    device: &ash::Device,
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    timer: Option<&mut ExecutionTimer>,
    mask: Option<u64>,
    queue: (usize, &Queue),
    order: usize,
    (name, kept): (&str, Option<&CStr>),
) -> Option<u32> {
    // Neither labels nor timings (a frame at full speed): nothing to record.
    if debug.is_none() && (timer.is_none() || mask.is_none()) {
        return None;
    }
    begin_pass_in(device, debug, cmd, timer, mask, queue, order, (name, kept))
}

/// [`begin_pass`] with labels or timings on.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn begin_pass_in(
    device: &ash::Device,
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    timer: Option<&mut ExecutionTimer>,
    mask: Option<u64>,
    (qi, queue): (usize, &Queue),
    order: usize,
    (name, kept): (&str, Option<&CStr>),
) -> Option<u32> {
    if let Some(d) = debug {
        // SAFETY: `cmd` is recording on this thread; the graph's debug functions belong to its
        // device (`Graph::new`'s contract).
        unsafe {
            match kept {
                Some(label) => d.begin_label_c(cmd, label, pass_color(qi)),
                None => d.begin_label_with_color(cmd, name, pass_color(qi)),
            }
        };
        debug_assert!(
            kept.is_none_or(|k| k.to_bytes() == name.replace('\0', "?").as_bytes()),
            "kept pass label {kept:?} for `{name}`"
        );
    }
    let (t, mask) = (timer?, mask?);
    let query = t.next_query();
    let spare = t.spares.name();
    t.passes
        .push(PassTiming::new(spare, name, queue, order, query, mask));
    // SAFETY: `cmd` is recording on a queue with timestamps (`mask`); the query was reset (on
    // the host, or at the start of this batch) and is written once.
    unsafe {
        device.cmd_write_timestamp2(
            cmd,
            vk::PipelineStageFlags2::TOP_OF_PIPE,
            t.slot.pool,
            query,
        )
    };
    Some(query + 1)
}

/// After the pass: writes its end timestamp into `end` (from [`begin_pass`]) and closes its
/// label.
#[inline]
pub(super) fn end_pass(
    device: &ash::Device,
    debug: Option<&DebugUtils>,
    cmd: vk::CommandBuffer,
    timer: Option<&ExecutionTimer>,
    end: Option<u32>,
) {
    if let (Some(t), Some(query)) = (timer, end) {
        // SAFETY: as in `begin_pass`, for the pass's second query.
        unsafe {
            device.cmd_write_timestamp2(
                cmd,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                t.slot.pool,
                query,
            )
        };
    }
    if let Some(d) = debug {
        // SAFETY: as in `begin_pass`; closes the pass's label (a pass closes only labels it
        // opened: `Recorder::end_label`).
        unsafe { d.end_label(cmd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{BufferBarrier, ImageBarrier, Scopes};
    use crate::range::{BufferRange, ImageRange};

    fn text(
        b: &BarrierCmd,
        family: u32,
        before: Option<&str>,
        after: Option<&str>,
    ) -> (String, [f32; 4]) {
        let mut t = LabelText::new();
        let c = barrier_label(&mut t, b, family, before, after);
        (t.as_str().to_owned(), c)
    }

    fn scopes(families: Option<(u32, u32)>) -> Scopes {
        Scopes {
            src_stages: vk::PipelineStageFlags2::COPY,
            src_access: vk::AccessFlags2::TRANSFER_WRITE,
            dst_stages: vk::PipelineStageFlags2::COPY,
            dst_access: vk::AccessFlags2::TRANSFER_READ,
            families,
        }
    }

    fn buffer(families: Option<(u32, u32)>) -> BufferBarrier {
        BufferBarrier {
            resource: 0,
            range: BufferRange { offset: 0, size: 4 },
            scopes: scopes(families),
        }
    }

    #[test]
    fn barrier_labels_name_the_pass_and_the_ownership_transfers() {
        let grey = color(barrier_rgb(false));
        let purple = color(barrier_rgb(true));
        assert_ne!(grey, purple);
        let plain = BarrierCmd {
            images: vec![],
            buffers: vec![buffer(None)],
        };
        assert_eq!(
            text(&plain, 0, Some("shade"), Some("sim")),
            ("barriers before `shade`".into(), grey)
        );
        assert_eq!(
            text(&plain, 0, None, Some("sim")),
            ("barriers after `sim`".into(), grey)
        );
        assert_eq!(text(&plain, 0, None, None), ("barriers".into(), grey));

        let image = ImageBarrier {
            resource: 1,
            range: ImageRange::mip(0, 1),
            aspect: vk::ImageAspectFlags::COLOR,
            scopes: scopes(Some((2, 0))),
            old_layout: vk::ImageLayout::GENERAL,
            new_layout: vk::ImageLayout::GENERAL,
        };
        let both = BarrierCmd {
            images: vec![image],
            buffers: vec![buffer(None), buffer(Some((0, 1))), buffer(Some((0, 2)))],
        };
        assert_eq!(
            text(&both, 0, None, Some("sim")),
            (
                "barriers after `sim`, release to family 1, acquire from family 2".into(),
                purple
            )
        );
        let external = BarrierCmd {
            images: vec![],
            buffers: vec![buffer(Some((3, vk::QUEUE_FAMILY_EXTERNAL)))],
        };
        assert_eq!(
            text(&external, 3, None, Some("present")).0,
            "barriers after `present`, release to external"
        );
    }

    #[test]
    fn passes_are_coloured_like_their_queue_in_the_diagram() {
        assert_eq!(pass_color(0), color(queue_rgb(0)));
        assert_ne!(pass_color(0), pass_color(1));
        assert_eq!(pass_color(0)[3], 1.0);
        let [r, g, b, _] = pass_color(0);
        assert_eq!(
            [r, g, b].map(|c| (c * 255.0).round() as u8),
            [0x2f, 0x6d, 0xb5],
            "the diagram's blue"
        );
    }

    #[test]
    fn label_text_is_cut_at_a_character_boundary() {
        let mut t = LabelText::new();
        let _ = write!(t, "{}", "é".repeat(100));
        assert_eq!(
            t.as_str(),
            "é".repeat(63),
            "126 bytes: a 64th would not fit"
        );
        assert_eq!(t.as_c_str().to_bytes(), "é".repeat(63).as_bytes());
        let mut short = LabelText::new();
        let _ = write!(short, "gfx batch {}", 3);
        assert_eq!(short.as_str(), "gfx batch 3");
        assert_eq!(short.as_c_str(), c"gfx batch 3");
        // A NUL cannot be in a C string.
        let mut nul = LabelText::new();
        nul.push("a\0b");
        assert_eq!(nul.as_c_str(), c"a?b");
        // Full: 126 bytes of text, then the NUL.
        let mut full = LabelText::new();
        full.push(&"x".repeat(200));
        assert_eq!(full.as_c_str().to_bytes().len(), 126);
    }

    #[test]
    fn neighbours_are_the_passes_right_before_and_after() {
        let batch = Batch {
            commands: vec![
                Command::Pass(4),
                Command::Barrier(BarrierCmd::default()),
                Command::Pass(7),
                Command::Barrier(BarrierCmd::default()),
            ],
            ..Batch::default()
        };
        let name = |p: usize| if p == 4 { "a" } else { "b" };
        assert_eq!(neighbours(&batch, 1, name), (Some("b"), Some("a")));
        assert_eq!(neighbours(&batch, 3, name), (None, Some("b")));
        assert_eq!(neighbours(&batch, 0, name), (None, None));
    }
}
