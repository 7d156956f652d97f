//! The plan as JSON (feature `serde`): what the text form (`Display`) says, as data.
//!
//! ash's Vulkan types are not serde types, so the plan is copied into the plain structs below:
//! flags become their Debug names (`"COMPUTE_SHADER | TRANSFER"`, `"NONE"` when empty, as in
//! the text form), layouts their Debug names (`"SHADER_READ_ONLY_OPTIMAL"`), semaphores their
//! raw handle (`u64`).

use crate::plan::display::{flags, pass_name, queue_name, resource_name, single_aspect};
use crate::plan::{BarrierCmd, Batch, Cause, Command, Plan, Prior, Scopes, Wait, WaitTarget};
use ash::vk::Handle;
use serde::Serialize;

#[derive(Serialize)]
struct PlanJson<'a> {
    queues: Vec<QueueJson<'a>>,
}

/// Every queue of the plan, in order, so that a wait's `queue` indexes this list; a queue with
/// no batch (no submit) has an empty `batches`.
#[derive(Serialize)]
struct QueueJson<'a> {
    name: &'a str,
    /// `null` only for a queue the plan's input does not declare (a plan made by hand).
    family: Option<u32>,
    caps: Option<String>,
    /// Its barrier commands that transfer ownership carry maintenance8's USE_ALL_STAGES
    /// flag (`QueueDecl::transfers_use_all_stages`).
    transfers_use_all_stages: bool,
    /// The device has maintenance9, and this is the family's
    /// `optimalImageTransferToQueueFamilies` (`QueueDecl::maintenance9`); `null` without it.
    maintenance9: Option<u32>,
    batches: Vec<BatchJson<'a>>,
}

#[derive(Serialize)]
struct BatchJson<'a> {
    waits: Vec<WaitJson<'a>>,
    commands: Vec<CommandJson<'a>>,
    binary_signals: Vec<BinarySignalJson>,
    /// The stages of the signal of the queue's timeline; `null`: no signal.
    timeline_signal: Option<String>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum WaitJson<'a> {
    /// Another queue's timeline, at the value its batch `batch` of this plan signals.
    Batch {
        queue: usize,
        queue_name: &'a str,
        batch: usize,
        stages: String,
    },
    /// Another queue's timeline, at a value an earlier graph signalled.
    Value {
        queue: usize,
        queue_name: &'a str,
        value: u64,
        stages: String,
    },
    /// A binary semaphore (swapchain acquire, external).
    Binary { semaphore: u64, stages: String },
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum CommandJson<'a> {
    Pass {
        pass: usize,
        name: &'a str,
    },
    Barrier {
        images: Vec<ImageBarrierJson<'a>>,
        buffers: Vec<BufferBarrierJson<'a>>,
    },
}

#[derive(Serialize)]
struct ImageBarrierJson<'a> {
    resource: usize,
    name: &'a str,
    base_mip: u32,
    mip_count: u32,
    base_layer: u32,
    layer_count: u32,
    /// `"DEPTH"` or `"STENCIL"` where the barrier names one plane of a depth/stencil image;
    /// absent where it names every aspect of the format.
    #[serde(skip_serializing_if = "Option::is_none")]
    aspect: Option<String>,
    old_layout: String,
    new_layout: String,
    #[serde(flatten)]
    scopes: ScopesJson,
    cause: Option<CauseJson<'a>>,
}

#[derive(Serialize)]
struct BufferBarrierJson<'a> {
    resource: usize,
    name: &'a str,
    offset: u64,
    size: u64,
    #[serde(flatten)]
    scopes: ScopesJson,
    cause: Option<CauseJson<'a>>,
}

/// Why the entry is there: the pass whose use it prepares, and what it orders that use after.
#[derive(Serialize)]
struct CauseJson<'a> {
    pass: usize,
    pass_name: &'a str,
    after: PriorJson<'a>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum PriorJson<'a> {
    Nothing,
    Pass { pass: usize, name: &'a str },
    BinaryWait { pass: usize, name: &'a str },
    SharedMemory { pass: usize, name: &'a str },
    EarlierExecution { queue: usize, queue_name: &'a str },
}

fn cause(plan: &Plan, c: Option<Cause>) -> Option<CauseJson<'_>> {
    let c = c?;
    let named = |pass| (pass, pass_name(plan, pass));
    let after = match c.after {
        Prior::Nothing => PriorJson::Nothing,
        Prior::Pass(p) => {
            let (pass, name) = named(p);
            PriorJson::Pass { pass, name }
        }
        Prior::BinaryWait(p) => {
            let (pass, name) = named(p);
            PriorJson::BinaryWait { pass, name }
        }
        Prior::SharedMemory(p) => {
            let (pass, name) = named(p);
            PriorJson::SharedMemory { pass, name }
        }
        Prior::EarlierExecution { queue } => PriorJson::EarlierExecution {
            queue,
            queue_name: queue_name(plan, queue),
        },
    };
    Some(CauseJson {
        pass: c.pass,
        pass_name: pass_name(plan, c.pass),
        after,
    })
}

#[derive(Serialize)]
struct ScopesJson {
    src_stages: String,
    src_access: String,
    dst_stages: String,
    dst_access: String,
    /// Ownership transfer: `[source family, destination family]`; `null`: none.
    families: Option<[u32; 2]>,
}

#[derive(Serialize)]
struct BinarySignalJson {
    semaphore: u64,
    stages: String,
}

impl Plan {
    /// The plan as pretty-printed JSON (feature `serde`): the same content as the text form
    /// (`Display`), as data for tools, logs and diffs. Every queue appears, in order (a wait's
    /// `queue` indexes the list); each batch lists its waits, its commands (passes and barrier
    /// commands, each barrier with its resource, range, layouts, scopes and ownership
    /// transfer, `aspect` where it names only DEPTH or STENCIL of an image with both, and its
    /// `cause`: the pass whose use it prepares and what it orders that use `after`), its
    /// binary signals and its timeline signal. Vulkan flags are their Debug
    /// names (`"COMPUTE_SHADER | TRANSFER"`, `"NONE"` when empty), layouts their Debug names,
    /// semaphores their raw handles.
    ///
    /// ```
    /// use vk_baton::plan::*;
    /// use vk_baton::{ash::vk, Access};
    /// let input = PlanInput {
    ///     queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::TRANSFER)],
    ///     resources: vec![ResourceDecl::buffer("buf", 256, vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER)],
    ///     passes: vec![
    ///         PassDecl::new("fill", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
    ///         PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
    ///     ],
    /// };
    /// let json: serde_json::Value = serde_json::from_str(&plan(&input).unwrap().to_json()).unwrap();
    /// let commands = &json["queues"][0]["batches"][0]["commands"];
    /// assert_eq!(commands[0], serde_json::json!({ "kind": "pass", "pass": 0, "name": "fill" }));
    /// let barrier = &commands[1]["buffers"][0];
    /// assert_eq!(barrier["src_access"], "TRANSFER_WRITE");
    /// assert_eq!(barrier["dst_stages"], "VERTEX_ATTRIBUTE_INPUT");
    /// assert_eq!(barrier["families"], serde_json::Value::Null);
    /// assert_eq!(barrier["cause"]["pass_name"], "draw");
    /// assert_eq!(barrier["cause"]["after"], serde_json::json!({ "kind": "pass", "pass": 0, "name": "fill" }));
    /// ```
    pub fn to_json(&self) -> String {
        let doc = PlanJson {
            queues: (0..self.queues.len()).map(|q| queue(self, q)).collect(),
        };
        // Only strings, numbers, lists and structs: serializing them cannot fail.
        serde_json::to_string_pretty(&doc).expect("plain data serializes")
    }
}

fn queue(plan: &Plan, q: usize) -> QueueJson<'_> {
    let decl = plan.input.queues.get(q);
    QueueJson {
        name: queue_name(plan, q),
        family: decl.map(|d| d.family),
        caps: decl.map(|d| flags(d.caps)),
        transfers_use_all_stages: decl.is_some_and(|d| d.transfers_use_all_stages),
        maintenance9: decl.and_then(|d| d.maintenance9),
        batches: plan.queues[q]
            .batches
            .iter()
            .map(|b| batch(plan, b))
            .collect(),
    }
}

fn batch<'a>(plan: &'a Plan, b: &'a Batch) -> BatchJson<'a> {
    BatchJson {
        waits: b.waits.iter().map(|w| wait(plan, w)).collect(),
        commands: b.commands.iter().map(|c| command(plan, c)).collect(),
        binary_signals: b
            .binary_signals
            .iter()
            .map(|(s, st)| BinarySignalJson {
                semaphore: s.as_raw(),
                stages: flags(*st),
            })
            .collect(),
        timeline_signal: b.signal.map(flags),
    }
}

fn wait<'a>(plan: &'a Plan, w: &Wait) -> WaitJson<'a> {
    let stages = flags(w.stages);
    match w.target {
        WaitTarget::Batch { queue, batch } => WaitJson::Batch {
            queue,
            queue_name: queue_name(plan, queue),
            batch,
            stages,
        },
        WaitTarget::Value { queue, value } => WaitJson::Value {
            queue,
            queue_name: queue_name(plan, queue),
            value,
            stages,
        },
        WaitTarget::Binary(s) => WaitJson::Binary {
            semaphore: s.as_raw(),
            stages,
        },
    }
}

fn command<'a>(plan: &'a Plan, c: &Command) -> CommandJson<'a> {
    match c {
        Command::Pass(p) => CommandJson::Pass {
            pass: *p,
            name: pass_name(plan, *p),
        },
        Command::Barrier(bar) => barrier(plan, bar),
    }
}

fn barrier<'a>(plan: &'a Plan, bar: &BarrierCmd) -> CommandJson<'a> {
    CommandJson::Barrier {
        images: bar
            .images
            .iter()
            .map(|b| ImageBarrierJson {
                resource: b.resource,
                name: resource_name(plan, b.resource),
                base_mip: b.range.base_mip,
                mip_count: b.range.mip_count,
                base_layer: b.range.base_layer,
                layer_count: b.range.layer_count,
                aspect: single_aspect(plan, b),
                old_layout: format!("{:?}", b.old_layout),
                new_layout: format!("{:?}", b.new_layout),
                scopes: scopes(&b.scopes),
                cause: cause(plan, b.cause),
            })
            .collect(),
        buffers: bar
            .buffers
            .iter()
            .map(|b| BufferBarrierJson {
                resource: b.resource,
                name: resource_name(plan, b.resource),
                offset: b.range.offset,
                size: b.range.size,
                scopes: scopes(&b.scopes),
                cause: cause(plan, b.cause),
            })
            .collect(),
    }
}

fn scopes(s: &Scopes) -> ScopesJson {
    ScopesJson {
        src_stages: flags(s.src_stages),
        src_access: flags(s.src_access),
        dst_stages: flags(s.dst_stages),
        dst_access: flags(s.dst_access),
        families: s.families.map(|(a, b)| [a, b]),
    }
}
