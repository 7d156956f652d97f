//! Stages fit the queue: every named access on every kind of queue either is refused with
//! [`Error::QueueCapability`] or is planned with only stages the queue's family supports, in
//! every barrier (ownership transfers included), semaphore wait and signal. No GPU.

use super::*;
use vk::PipelineStageFlags2 as S;
use vk::QueueFlags as Q;
use vk_baton::access::{narrow_stages, supported_stages, ACCESS_TABLE};

/// Whether each named access can run on (graphics+compute+transfer, compute+transfer,
/// transfer-only, video decode, video encode), written out from the specification rather
/// than computed. A new row of the table must be added here.
fn allowed(name: &str) -> [bool; 5] {
    let gct = |g, c, t| [g, c, t, false, false];
    match name {
        "TRANSFER_READ" | "TRANSFER_WRITE" | "COPY_READ" | "COPY_WRITE" => gct(true, true, true),
        // HOST, no stage, and ALL_COMMANDS: every queue.
        "HOST_READ" | "HOST_WRITE" | "PRESENT" | "GENERAL" => [true; 5],
        "COMPUTE_SHADER_READ"
        | "COMPUTE_SHADER_WRITE"
        | "COMPUTE_SHADER_READ_WRITE"
        | "COMPUTE_SHADER_SAMPLED_READ"
        | "COMPUTE_SHADER_UNIFORM_READ" => gct(true, true, false),
        // vkCmdClearColorImage: graphics or compute.
        "CLEAR_COLOR_WRITE" => gct(true, true, false),
        // DRAW_INDIRECT is a stage of compute queues too (dispatch indirect).
        "INDIRECT_BUFFER" => gct(true, true, false),
        // Vertex, fragment or compute shaders: a compute queue has the last.
        "UNIFORM_READ" => gct(true, true, false),
        // Builds, copies and traces of acceleration structures: compute queues (the
        // commands' valid usage), ray queries in a compute shader too.
        "ACCELERATION_STRUCTURE_BUILD_INPUT_READ"
        | "ACCELERATION_STRUCTURE_BUILD_SCRATCH_READ_WRITE"
        | "ACCELERATION_STRUCTURE_BUILD_WRITE"
        | "ACCELERATION_STRUCTURE_BUILD_READ"
        | "ACCELERATION_STRUCTURE_UPDATE_READ_WRITE"
        | "ACCELERATION_STRUCTURE_COPY_READ"
        | "ACCELERATION_STRUCTURE_COPY_WRITE"
        | "RAY_TRACING_SHADER_ACCELERATION_STRUCTURE_READ"
        | "COMPUTE_SHADER_ACCELERATION_STRUCTURE_READ"
        | "SHADER_BINDING_TABLE_READ"
        | "RAY_TRACING_SHADER_STORAGE_READ"
        | "RAY_TRACING_SHADER_STORAGE_WRITE"
        | "RAY_TRACING_SHADER_STORAGE_READ_WRITE"
        | "RAY_TRACING_SHADER_SAMPLED_READ"
        | "RAY_TRACING_SHADER_UNIFORM_READ" => gct(true, true, false),
        // Commands for graphics queues only, though their stages run on transfer queues.
        "DEPTH_STENCIL_COPY_READ"
        | "DEPTH_STENCIL_COPY_WRITE"
        | "BLIT_READ"
        | "BLIT_WRITE"
        | "MIP_CHAIN_BLIT_READ_WRITE"
        | "RESOLVE_READ"
        | "RESOLVE_WRITE"
        | "CLEAR_DEPTH_STENCIL_WRITE" => gct(true, false, false),
        "VERTEX_SHADER_SAMPLED_READ"
        | "VERTEX_SHADER_UNIFORM_READ"
        | "VERTEX_SHADER_STORAGE_READ"
        | "VERTEX_SHADER_STORAGE_WRITE"
        | "FRAGMENT_SHADER_SAMPLED_READ"
        | "FRAGMENT_SHADER_UNIFORM_READ"
        | "FRAGMENT_SHADER_STORAGE_READ"
        | "FRAGMENT_SHADER_STORAGE_WRITE"
        | "FRAGMENT_SHADER_STORAGE_READ_WRITE"
        | "FRAGMENT_SHADER_INPUT_ATTACHMENT_READ"
        | "FRAGMENT_SHADER_DEPTH_INPUT_ATTACHMENT_READ"
        | "FRAGMENT_SHADER_ACCELERATION_STRUCTURE_READ"
        | "COLOR_ATTACHMENT_WRITE"
        | "COLOR_ATTACHMENT_READ_WRITE"
        | "DEPTH_ATTACHMENT_READ"
        | "DEPTH_ATTACHMENT_WRITE"
        | "DEPTH_READ_ONLY_SAMPLED"
        | "VERTEX_BUFFER"
        | "INDEX_BUFFER"
        | "TASK_SHADER_STORAGE_READ"
        | "TASK_SHADER_STORAGE_WRITE"
        | "TASK_SHADER_SAMPLED_READ"
        | "TASK_SHADER_UNIFORM_READ"
        | "MESH_SHADER_STORAGE_READ"
        | "MESH_SHADER_STORAGE_WRITE"
        | "MESH_SHADER_SAMPLED_READ"
        | "MESH_SHADER_UNIFORM_READ" => gct(true, false, false),
        "VIDEO_DECODE_BITSTREAM_READ"
        | "VIDEO_DECODE_OUTPUT_WRITE"
        | "VIDEO_DECODE_DPB_READ"
        | "VIDEO_DECODE_DPB_WRITE"
        | "VIDEO_DECODE_OUTPUT_DPB_WRITE" => [false, false, false, true, false],
        "VIDEO_ENCODE_SOURCE_READ"
        | "VIDEO_ENCODE_BITSTREAM_WRITE"
        | "VIDEO_ENCODE_DPB_READ"
        | "VIDEO_ENCODE_DPB_WRITE" => [false, false, false, false, true],
        _ => panic!("access `{name}` is not in this test's table yet"),
    }
}

/// The three families of [`queues`], then a video decode and a video encode family.
fn queues_with_video() -> Vec<QueueDecl> {
    let mut q = queues();
    q.push(QueueDecl::new("video decode", 3, Q::VIDEO_DECODE_KHR));
    q.push(QueueDecl::new("video encode", 4, Q::VIDEO_ENCODE_KHR));
    q
}

fn buffer(concurrent: bool) -> ResourceDecl {
    buffer_for(concurrent, vk::BufferUsageFlags::empty())
}

/// A buffer of the first nine usages and `usage`.
fn buffer_for(concurrent: bool, usage: vk::BufferUsageFlags) -> ResourceDecl {
    let usage = vk::BufferUsageFlags::from_raw(0x1ff) | usage;
    let r = ResourceDecl::buffer("buf", 256, usage);
    if concurrent {
        r.concurrent()
    } else {
        r
    }
}

/// An image of every usage, with a depth aspect for the depth/stencil attachment rows.
fn image(concurrent: bool, access: Access) -> ResourceDecl {
    let usage = vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::COLOR_ATTACHMENT
        | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT
        | vk::ImageUsageFlags::INPUT_ATTACHMENT
        | access.image_usage;
    let mut r = ResourceDecl::image("img", 1, 1, usage);
    if access
        .image_usage
        .contains(vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT)
    {
        if let ResourceKind::Image { aspect, .. } = &mut r.kind {
            *aspect = vk::ImageAspectFlags::DEPTH;
        }
    }
    if concurrent {
        r.concurrent()
    } else {
        r
    }
}

/// Every stage mask of `plan` fits its queue; semaphore masks hold no HOST (no queue
/// operation runs there). Returns (barriers, ownership transfer barriers, waits, signals).
fn check_masks(plan: &Plan) -> (usize, usize, usize, usize) {
    let mut counts = (0, 0, 0, 0);
    for (qi, qp) in plan.queues.iter().enumerate() {
        let q = &plan.input.queues[qi];
        let fits = |s: S, what: &str| {
            assert!(
                supported_stages(q.caps).contains(s),
                "{what} {s:?} on queue `{}` ({:?})\n{plan}",
                q.name,
                q.caps
            );
        };
        for b in &qp.batches {
            for w in &b.waits {
                fits(w.stages, "wait");
                assert!(
                    !w.stages.is_empty() && !w.stages.contains(S::HOST),
                    "{plan}"
                );
                counts.2 += 1;
            }
            if let Some(s) = b.signal {
                fits(s, "signal");
                counts.3 += 1;
            }
            for &(_, s) in &b.binary_signals {
                fits(s, "binary signal");
            }
            for c in &b.commands {
                let Command::Barrier(cmd) = c else { continue };
                let scopes = cmd
                    .images
                    .iter()
                    .map(|b| b.scopes)
                    .chain(cmd.buffers.iter().map(|b| b.scopes));
                for s in scopes {
                    fits(s.src_stages, "barrier source");
                    fits(s.dst_stages, "barrier destination");
                    counts.0 += 1;
                    counts.1 += usize::from(s.families.is_some());
                }
            }
        }
    }
    counts
}

/// Every named access, on every kind of queue, on buffers and images, EXCLUSIVE and
/// CONCURRENT, after and before work on each other family: refused as the table says, or
/// planned with stages that fit, verified.
#[test]
fn every_named_access_on_every_kind_of_queue() {
    let mut planned = 0;
    for row in ACCESS_TABLE {
        let (a, name) = (row.access(), row.name);
        let for_buffer =
            !row.buffer_usage.is_empty() || matches!(name, "HOST_READ" | "HOST_WRITE" | "GENERAL");
        let for_image = !row.image_usage.is_empty() || matches!(name, "PRESENT" | "GENERAL");
        let host = matches!(name, "HOST_READ" | "HOST_WRITE");
        let present = name == "PRESENT";
        for (k, ok) in allowed(name).into_iter().enumerate() {
            let same_queue_write = if k < 3 {
                Access::TRANSFER_WRITE
            } else {
                Access::GENERAL
            };
            // The other queue writes with a transfer: one of the first three.
            for o in (0..3).filter(|&o| o != k) {
                for concurrent in [false, true] {
                    let kinds = [
                        (for_buffer, buffer_for(concurrent, row.buffer_usage)),
                        (for_image, image(concurrent, a)),
                    ];
                    for res in kinds.into_iter().filter(|r| r.0).map(|r| r.1) {
                        let write = on("write-other", o, Access::TRANSFER_WRITE);
                        let passes = if present {
                            // Presenting ends the image's use in the graph.
                            vec![
                                write,
                                on("present", k, a).with_signal(BinarySignalDecl {
                                    semaphore: vk::Semaphore::from_raw(7),
                                    stages: None,
                                }),
                            ]
                        } else if host {
                            // The host touches the memory once the execution is done: nothing
                            // later in the graph.
                            vec![write, on("access", k, a)]
                        } else {
                            vec![
                                write,
                                // After another family's write: acquire or wait on this queue.
                                on("access", k, a),
                                // After it on another family: its stages reach a release and a
                                // signal on this queue.
                                on("write-other-again", o, Access::TRANSFER_WRITE),
                                on("access-again", k, a),
                                // After it on this queue: a barrier from its stages.
                                // (A video queue has no transfer: an all-commands write.)
                                on("same-queue-write", k, same_queue_write),
                            ]
                        };
                        let input = PlanInput {
                            queues: queues_with_video(),
                            resources: vec![res.clone()],
                            passes,
                        };
                        let ctx = format!("{name} on queue {k}, other queue {o}, {}", res.name);
                        match plan(&input) {
                            Err(e) => {
                                assert!(!ok, "{ctx}: {e}");
                                assert!(matches!(e, Error::QueueCapability { .. }), "{ctx}: {e}");
                            }
                            Ok(p) => {
                                assert!(ok, "{ctx}: planned\n{p}");
                                planned += 1;
                                let narrowed = narrow_stages(a.stages, input.queues[k].caps);
                                let declared: Vec<S> = p
                                    .input
                                    .passes
                                    .iter()
                                    .filter(|x| x.queue == k && x.name.starts_with("access"))
                                    .chain(p.input.passes.iter().filter(|x| x.name == "present"))
                                    .map(|x| x.uses[0].access.stages)
                                    .collect();
                                assert!(!declared.is_empty(), "{ctx}");
                                assert!(declared.iter().all(|&s| s == narrowed), "{ctx}");
                                let (barriers, transfers, waits, signals) = check_masks(&p);
                                assert!(barriers >= 1 && waits >= 1 && signals >= 2, "{ctx}\n{p}");
                                // EXCLUSIVE contents move between families unless only the
                                // host touches them on this side.
                                assert_eq!(transfers == 0, concurrent || host, "{ctx}\n{p}");
                                if let Err(v) = p.verify() {
                                    panic!("{ctx}: {v:#?}\n{p}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Per name: for each allowed queue, its other queues (2 for the first three, 3 for the
    // video queues) x 2 sharing modes x resource kinds:
    // - 24 each for TRANSFER_READ/WRITE and COPY_READ/WRITE (3 queues x 2 x 2 x 2) = 96;
    // - GENERAL on all five queues, both kinds: 12 x 2 x 2 = 48;
    // - HOST_READ/WRITE and PRESENT on all five, one kind: 12 x 2 each = 72;
    // - 16 each for the four compute storage and sampled rows = 64;
    // - 8 each for COMPUTE_SHADER_UNIFORM_READ, UNIFORM_READ, INDIRECT_BUFFER,
    //   CLEAR_COLOR_WRITE and the seven graphics rows on both kinds (vertex and fragment
    //   sampled and storage) = 88; 4 each for the 19 graphics rows on one kind = 76;
    // - acceleration structures and ray tracing (graphics and compute queues): 8 each for the
    //   11 buffer-only rows, 16 each for the four on both kinds = 152, and 4 for
    //   FRAGMENT_SHADER_ACCELERATION_STRUCTURE_READ (graphics only) = 156;
    // - mesh and task shaders (graphics only): 8 each for the six on both kinds, 4 each for
    //   the two uniform reads = 56;
    // - video (one queue, 3 others, one kind): 6 each for the nine rows = 54.
    assert_eq!(planned, 96 + 48 + 72 + 64 + 88 + 76 + 156 + 56 + 54);
}

/// The accesses seen on the H100 (issue 8): a uniform read on the compute-only family keeps
/// only COMPUTE_SHADER, in the acquire, the wait and the barrier after it.
///
/// ```text
/// graphics (family 0):  [write] --release 0->1--.
///                                               | semaphore
/// compute  (family 1):          acquire 0->1 <--'  [uniforms] --buf--> [overwrite]
/// ```
#[test]
fn uniform_read_on_a_compute_queue_is_narrowed_to_the_compute_shader() {
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer(false)],
        passes: vec![
            on("write", 0, Access::TRANSFER_WRITE),
            on("uniforms", 1, Access::UNIFORM_READ),
            on("overwrite", 1, Access::TRANSFER_WRITE),
        ],
    })
    .unwrap();
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `write`
    barrier
      buffer `buf` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 0 -> 1
        why: for `uniforms`, after `write`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/UNIFORM_READ, family 0 -> 1
        why: for `uniforms`, after `write`
    pass   `uniforms`
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `overwrite`, after `uniforms`
    pass   `overwrite`
    signal timeline at ALL_COMMANDS
"#
    );
    let cs = S::COMPUTE_SHADER;
    assert_eq!(p.input.passes[1].uses[0].access.stages, cs);
    p.verify().unwrap();
}

/// Indirect arguments written on graphics, read by a dispatch on compute: a CONCURRENT
/// buffer, so a wait at `DRAW_INDIRECT` (a stage of compute queues too) and no transfer. On a
/// transfer-only queue the use is refused, as is a uniform read there.
///
/// ```text
/// graphics:  [write] --semaphore--.
/// compute:                         '--> [dispatch]
/// ```
#[test]
fn indirect_arguments_fit_a_compute_queue_and_not_a_transfer_queue() {
    let input = |q: usize| PlanInput {
        queues: queues(),
        resources: vec![buffer(true)],
        passes: vec![
            on("write", 0, Access::TRANSFER_WRITE),
            on("dispatch", q, Access::INDIRECT_BUFFER),
        ],
    };
    let p = plan(&input(1)).unwrap();
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at DRAW_INDIRECT
    pass   `dispatch`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().unwrap();
    for (access, q) in [(Access::INDIRECT_BUFFER, 2), (Access::UNIFORM_READ, 2)] {
        let mut i = input(q);
        i.passes[1].uses[0].access = access;
        let e = plan(&i).unwrap_err();
        let Error::QueueCapability {
            pass, needs, has, ..
        } = e
        else {
            panic!("{e}")
        };
        assert_eq!(
            (pass.as_str(), needs, has),
            ("dispatch", Q::GRAPHICS | Q::COMPUTE, Q::TRANSFER)
        );
    }
}
