//! Drawing a plan: SVG laid out here, with no system tool ([`Plan::to_svg`]), and Graphviz
//! DOT text ([`Plan::to_dot`]).
//!
//! `layout` places lanes, batches and slots, `route` the wait arrows between them, `svg` and
//! `dot` write the two forms, `text` measures, cuts and escapes text. Tooltips come from the
//! same line helpers as the text form (`display`), so all forms say the same thing.

mod dot;
mod layout;
mod route;
mod svg;
mod text;

use crate::plan::display::{
    buffer_barrier_line, cause_line, flags, image_barrier_line, pass_name, queue_name,
    resource_name, wait_line,
};
use crate::plan::{BarrierCmd, Batch, Cause, Plan, Unordered};
use ash::vk;

impl Plan {
    /// The plan as an SVG picture, laid out by this crate (no Graphviz needed). Write it to a
    /// file and open it in a browser; hover a mark for its details. It shows what the text
    /// form (`Display`) says:
    ///
    /// - one horizontal **lane** per queue, in the queue's own colour, labelled with its name,
    ///   family and capabilities;
    /// - its **batches** (one `VkSubmitInfo2` each) as frames along the lane, time running left
    ///   to right: a batch that waits on another queue's batch sits to the right of it;
    /// - **passes** as boxes, in recording order;
    /// - **barrier commands** (`vkCmdPipelineBarrier2`) as small markers between passes, with
    ///   the resources they touch underneath; purple ones release or acquire queue-family
    ///   ownership;
    /// - **timeline semaphore waits** as arrows in the signalling queue's colour, from the end
    ///   of the batch that signals to the start of the batch that waits (an ownership transfer
    ///   travels along one); a wait on a value from an earlier graph comes from an "earlier
    ///   graphs" marker, dashed grey;
    /// - **binary semaphores** (swapchain acquire and present, external) as dashed orange
    ///   markers at the start (waits) or end (signals) of their batch;
    /// - a dot at the end of a batch that signals its queue's timeline.
    ///
    /// Every mark's tooltip (`<title>`) holds the full text: a pass's uses, a barrier's
    /// resources, ranges, layouts, stages, accesses and families, a wait's stages. Long names
    /// are cut short with `…` on screen and given whole in the tooltip. Every mark is a `<g>`
    /// whose `class` says what it is (`lane`, `batch`, `pass`, `barrier`, `release`, `acquire`,
    /// `wait timeline`, `wait earlier`, `wait binary`, `signal`, `signal binary`), for
    /// stylesheets and scripts.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// // Compute (family 1) writes an image, graphics (family 0) samples it.
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("compute", 1, vk::QueueFlags::COMPUTE),
    ///                  QueueDecl::new("graphics", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    ///     resources: vec![ResourceDecl::image("img", 1, 1, vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED)],
    ///     passes: vec![
    ///         PassDecl::new("simulate", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
    ///         PassDecl::new("shade <hdr>", 1).with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
    ///     ],
    /// };
    /// let plan = plan(&input).unwrap();
    /// let svg = plan.to_svg();
    /// // std::fs::write("plan.svg", &svg)?;
    /// assert!(svg.starts_with("<svg"));
    /// // Two lanes, two pass boxes, one arrow from compute's batch to graphics' batch.
    /// assert_eq!(svg.matches(r#"<g class="lane""#).count(), 2);
    /// assert_eq!(svg.matches(r#"<g class="pass""#).count(), 2);
    /// assert_eq!(svg.matches(r#"<g class="wait timeline""#).count(), 1);
    /// // Names are escaped: a pass name is text, never markup.
    /// assert!(svg.contains("shade &lt;hdr&gt;"));
    /// ```
    pub fn to_svg(&self) -> String {
        let mut layout = layout::layout(self);
        route::route(&layout.lanes, &mut layout.arrows);
        svg::render(self, &layout)
    }

    /// [`Plan::to_svg`] with the times of an execution: each pass's tooltip gives when it
    /// would run at best ([`Plan::predict`] with `pass_ns`, ns per pass by index), the passes
    /// of the critical path are outlined in red (class `pass critical`), and a line below the
    /// legend compares the predicted span with `measured_span_ns` (the execution's first
    /// start to last end on the GPU), where given.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)],
    ///     resources: vec![ResourceDecl::buffer("b", 64, vk::BufferUsageFlags::STORAGE_BUFFER)],
    ///     passes: vec![PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))],
    /// };
    /// let svg = plan(&input).unwrap().to_svg_timed(&[2_000_000], Some(2_500_000));
    /// assert!(svg.contains("predicted at best: span 2.000 ms"));
    /// assert!(svg.contains("measured: span 2.500 ms"));
    /// assert_eq!(svg.matches(r#"class="pass critical""#).count(), 1);
    /// ```
    pub fn to_svg_timed(&self, pass_ns: &[u64], measured_span_ns: Option<u64>) -> String {
        let prediction = self.predict(pass_ns);
        let mut layout = layout::layout(self);
        route::route(&layout.lanes, &mut layout.arrows);
        let mut critical = vec![false; self.input.passes.len()];
        for &p in &prediction.critical_path {
            critical[p] = true;
        }
        let measured = measured_span_ns.map_or(String::new(), |m| {
            format!("; measured: span {:.3} ms", m as f64 / 1e6)
        });
        let path: Vec<&str> = (prediction.critical_path.iter())
            .map(|&p| pass_name(self, p))
            .collect();
        let ms = |ns: u64| ns as f64 / 1e6;
        layout.timing = Some(layout::Timing {
            caption: format!(
                "predicted at best: span {:.3} ms (serial {:.3} ms, overlap {:.2}x), critical path {}{measured}",
                ms(prediction.span_ns),
                ms(prediction.serial_ns),
                prediction.overlap(),
                path.join(" → ")
            ),
            passes: prediction.passes,
            critical,
        });
        layout.height += layout::LEGEND_ROW;
        svg::render(self, &layout)
    }

    /// The plan as Graphviz DOT text, for `dot -Tsvg plan.dot -o plan.svg` or any DOT viewer.
    /// It holds the same marks as [`Plan::to_svg`]: a cluster per queue and per batch, a node
    /// per pass and per barrier command, an edge per semaphore wait. Graphviz lays it out, so
    /// use it where Graphviz is at hand or to feed other tools; `to_svg` needs nothing.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER)],
    ///     passes: vec![
    ///         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("draw \"main\"", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
    ///     ],
    /// };
    /// let dot = plan(&input).unwrap().to_dot();
    /// // std::fs::write("plan.dot", &dot)?; then: dot -Tsvg plan.dot -o plan.svg
    /// assert!(dot.starts_with("digraph plan {"));
    /// // `fill`, a barrier, `draw "main"` (the quote escaped), in one batch of one lane.
    /// assert!(dot.contains(r#"label="draw \"main\"""#));
    /// assert_eq!(dot.matches("class=\"pass\"").count(), 2);
    /// assert_eq!(dot.matches("class=\"barrier").count(), 1);
    /// ```
    pub fn to_dot(&self) -> String {
        dot::render(self)
    }
}

/// What a barrier command does to ownership, seen from the queue that records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BarrierKind {
    /// No ownership transfer.
    Plain,
    /// Releases some resource to another family.
    Release,
    /// Acquires some resource from another family.
    Acquire,
    /// Both.
    ReleaseAcquire,
}

impl BarrierKind {
    fn of(bar: &BarrierCmd, family: Option<u32>) -> Self {
        let transfers = bar
            .images
            .iter()
            .map(|b| b.scopes.families)
            .chain(bar.buffers.iter().map(|b| b.scopes.families))
            .flatten();
        let (mut release, mut acquire) = (false, false);
        for (_, dst) in transfers {
            // A transfer to this queue's family is an acquire; any other, a release.
            if Some(dst) == family {
                acquire = true;
            } else {
                release = true;
            }
        }
        match (release, acquire) {
            (false, false) => Self::Plain,
            (true, false) => Self::Release,
            (false, true) => Self::Acquire,
            (true, true) => Self::ReleaseAcquire,
        }
    }

    /// The short word under the marker.
    fn label(self) -> &'static str {
        match self {
            Self::Plain => "barrier",
            Self::Release => "release",
            Self::Acquire => "acquire",
            Self::ReleaseAcquire => "rel+acq",
        }
    }

    /// The CSS-like class of the marker.
    fn class(self) -> &'static str {
        match self {
            Self::Plain => "barrier",
            Self::Release => "barrier release",
            Self::Acquire => "barrier acquire",
            Self::ReleaseAcquire => "barrier release acquire",
        }
    }
}

/// A queue's family, if the plan declares the queue.
fn family(plan: &Plan, queue: usize) -> Option<u32> {
    plan.input.queues.get(queue).map(|q| q.family)
}

/// The lane's label: `family N`.
fn family_label(plan: &Plan, queue: usize) -> String {
    family(plan, queue).map_or_else(|| "family ?".into(), |f| format!("family {f}"))
}

/// The capabilities that matter for passes, in words: `graphics + compute + transfer`.
fn caps_label(plan: &Plan, queue: usize) -> String {
    let Some(q) = plan.input.queues.get(queue) else {
        return String::new();
    };
    let known = [
        (vk::QueueFlags::GRAPHICS, "graphics"),
        (vk::QueueFlags::COMPUTE, "compute"),
        (vk::QueueFlags::TRANSFER, "transfer"),
    ];
    let words: Vec<&str> = known
        .iter()
        .filter(|(f, _)| q.caps.contains(*f))
        .map(|(_, w)| *w)
        .collect();
    words.join(" + ")
}

/// The lane's tooltip.
fn queue_tooltip(plan: &Plan, queue: usize) -> String {
    match plan.input.queues.get(queue) {
        Some(q) => format!(
            "queue `{}` (index {queue}): family {}, {}",
            q.name,
            q.family,
            flags(q.caps)
        ),
        None => format!("queue {queue} (not declared)"),
    }
}

/// A batch's tooltip: where it sits and what it waits on and signals.
fn batch_tooltip(plan: &Plan, queue: usize, index: usize, batch: &Batch) -> String {
    let mut lines = vec![format!(
        "batch {index} of `{}`: one VkSubmitInfo2",
        queue_name(plan, queue)
    )];
    lines.extend(
        batch
            .waits
            .iter()
            .map(|w| format!("wait {}", wait_line(plan, w))),
    );
    lines.extend(
        batch
            .binary_signals
            .iter()
            .map(|(s, st)| format!("signal binary {s:?} at {st:?}")),
    );
    if let Some(st) = batch.signal {
        lines.push(format!("signal timeline at {st:?}"));
    }
    lines.join("\n")
}

/// A pass's tooltip: its whole name, queue and uses.
fn pass_tooltip(plan: &Plan, pass: usize) -> String {
    let Some(p) = plan.input.passes.get(pass) else {
        return format!("pass {pass} (not declared)");
    };
    let mut lines = vec![format!(
        "pass `{}` (#{pass}) on `{}`",
        p.name,
        queue_name(plan, p.queue)
    )];
    for u in &p.uses {
        let layout = match plan.input.resources.get(u.resource).map(|r| r.kind) {
            Some(crate::plan::ResourceKind::Image { .. }) => match u.render_pass {
                Some(rp) => format!(
                    ", render pass {:?} -> {:?} -> {:?}",
                    rp.initial_layout, u.access.layout, rp.final_layout
                ),
                None => format!(", {:?}", u.access.layout),
            },
            _ => String::new(),
        };
        let unordered = match u.unordered {
            Some(Unordered::Atomic) => ", unordered (atomics)".to_owned(),
            Some(Unordered::Disjoint(region)) => format!(", unordered in {region:?}"),
            None => String::new(),
        };
        lines.push(format!(
            "  `{}`: {}/{}{layout}{}{unordered}",
            resource_name(plan, u.resource),
            flags(u.access.stages),
            flags(u.access.access),
            if u.discard { ", discards" } else { "" }
        ));
    }
    lines.join("\n")
}

/// A barrier command's tooltip: one line per image and buffer barrier, as the text form.
fn barrier_tooltip(plan: &Plan, bar: &BarrierCmd, kind: BarrierKind) -> String {
    let mut lines = vec![format!(
        "vkCmdPipelineBarrier2 ({}): {} image, {} buffer barrier(s)",
        kind.label(),
        bar.images.len(),
        bar.buffers.len()
    )];
    // Each entry, and on the next line why it is there.
    let why =
        |c: Option<Cause>| c.map_or(String::new(), |c| format!("\n  {}", cause_line(plan, &c)));
    lines.extend(
        (bar.images.iter())
            .map(|b| format!("image {}{}", image_barrier_line(plan, b), why(b.cause))),
    );
    lines.extend(
        (bar.buffers.iter())
            .map(|b| format!("buffer {}{}", buffer_barrier_line(plan, b), why(b.cause))),
    );
    lines.join("\n")
}

/// The resources a barrier command touches, each once: those whose ownership it transfers
/// first, then the others, each group in order (`mesh, particles, swapchain`).
fn barrier_resources(plan: &Plan, bar: &BarrierCmd) -> String {
    let mut seen: Vec<(bool, usize)> = Vec::new();
    let all = bar
        .images
        .iter()
        .map(|b| (b.scopes.families.is_none(), b.resource))
        .chain(
            bar.buffers
                .iter()
                .map(|b| (b.scopes.families.is_none(), b.resource)),
        );
    for (plain, r) in all {
        match seen.iter_mut().find(|(_, s)| *s == r) {
            Some(entry) => entry.0 &= plain,
            None => seen.push((plain, r)),
        }
    }
    seen.sort_by_key(|(plain, _)| *plain);
    let names: Vec<&str> = seen.iter().map(|&(_, r)| resource_name(plan, r)).collect();
    names.join(", ")
}

/// An RGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rgb(u8, u8, u8);

impl Rgb {
    /// This colour mixed with white: `amount` 0 is the colour, 1 is white.
    fn tint(self, amount: f32) -> Self {
        let mix = |c: u8| (c as f32 + (255.0 - c as f32) * amount).round() as u8;
        Self(mix(self.0), mix(self.1), mix(self.2))
    }
}

impl std::fmt::Display for Rgb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// Queue colours, by queue index ([`crate::plan::colours`]). No purple or orange: those mean
/// ownership and binary semaphores.
const QUEUE_COLOURS: [Rgb; 6] = {
    let q = crate::plan::colours::QUEUES;
    [
        rgb(q[0]),
        rgb(q[1]),
        rgb(q[2]),
        rgb(q[3]),
        rgb(q[4]),
        rgb(q[5]),
    ]
};
/// Ownership release and acquire markers.
const OWNERSHIP: Rgb = rgb(crate::plan::colours::OWNERSHIP);
/// Binary semaphores.
const BINARY: Rgb = Rgb(0xe0, 0x7b, 0x00);
/// Plain barrier markers.
const BARRIER: Rgb = rgb(crate::plan::colours::BARRIER);
/// Waits on earlier graphs, and lines of text that explain.
const MUTED: Rgb = Rgb(0x6b, 0x6b, 0x6b);

const fn rgb([r, g, b]: [u8; 3]) -> Rgb {
    Rgb(r, g, b)
}

fn queue_colour(queue: usize) -> Rgb {
    rgb(crate::plan::colours::queue_rgb(queue))
}

#[cfg(test)]
pub(crate) mod tests;

/// The picture's heading.
fn title(plan: &Plan) -> String {
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "vk-baton plan: {}, {}, {}, {}",
        count(plan.queues.len(), "queue", "queues"),
        count(plan.batch_count(), "batch", "batches"),
        count(
            plan.barrier_commands(),
            "barrier command",
            "barrier commands"
        ),
        count(plan.semaphore_waits(), "semaphore wait", "semaphore waits")
    )
}
