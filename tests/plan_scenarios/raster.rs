//! The raster cases of the Khronos synchronization examples
//! (<https://github.com/KhronosGroup/Vulkan-Docs/wiki/Synchronization-Examples>): whole plans,
//! stated as text and verified. No GPU.
//!
//! Each expected plan was written from the specification before the planner ran: source
//! scopes are the prior conflicting accesses' stages and writes, destination scopes the new
//! use's, layout transitions count as writes, and the last batch of each queue signals its
//! timeline at `ALL_COMMANDS` (for the fence and later graphs). Without
//! `VK_KHR_maintenance8` a release's destination stages and an acquire's source stages are
//! ignored: the release is ordered before the signal, and the acquire after the wait, only by
//! `ALL_COMMANDS` semaphore masks; the barriers themselves name the stages of their own side
//! (a release `src -> src/NONE`, an acquire `dst/NONE -> dst`), with no access on the far
//! side (the spec: "these masks should be set to 0").

use super::*;
use vk::BufferUsageFlags as BU;
use vk::ImageUsageFlags as IU;

/// A single-sample color target that is also sampled.
fn color(name: &str) -> ResourceDecl {
    ResourceDecl::image(name, 1, 1, IU::COLOR_ATTACHMENT | IU::SAMPLED)
}

fn depth() -> ResourceDecl {
    let usage = IU::DEPTH_STENCIL_ATTACHMENT | IU::SAMPLED;
    let mut r = ResourceDecl::image("depth", 1, 1, usage);
    if let ResourceKind::Image { aspect, .. } = &mut r.kind {
        *aspect = vk::ImageAspectFlags::DEPTH;
    }
    r
}

/// A pass on `queue` with a use of each (resource, access).
fn uses(name: &str, queue: usize, list: &[(usize, Access)]) -> PassDecl {
    list.iter().fold(PassDecl::new(name, queue), |p, &(r, a)| {
        p.with_use(UseDecl::new(r, a))
    })
}

/// Example "first draw writes a color attachment, second draw samples it in the fragment
/// shader": one barrier, `COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE ->
/// FRAGMENT_SHADER/SHADER_SAMPLED_READ`, with the layout transition to
/// `SHADER_READ_ONLY_OPTIMAL`. The fresh image first transitions from `UNDEFINED` with nothing
/// to wait for.
///
/// ```text
/// graphics:  [render] --color--> [sample]
/// ```
#[test]
fn render_then_sample_in_a_fragment_shader() {
    let input = PlanInput {
        queues: queues(),
        resources: vec![color("color")],
        passes: vec![
            on("render", 0, Access::COLOR_ATTACHMENT_WRITE),
            on("sample", 0, Access::FRAGMENT_SHADER_SAMPLED_READ),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render`, with nothing before it
    pass   `render`
    barrier
      image  `color` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `render`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Graphics (family 0) renders, async compute (family 1) samples.
fn render_then_compute_sample(concurrent: bool) -> PlanInput {
    let image = color("color");
    PlanInput {
        queues: queues(),
        resources: vec![if concurrent {
            image.concurrent()
        } else {
            image
        }],
        passes: vec![
            on("render", 0, Access::COLOR_ATTACHMENT_WRITE),
            on("sample", 1, Access::COMPUTE_SHADER_SAMPLED_READ),
        ],
    }
}

/// An exclusive image moves to the compute family: graphics releases it (with the layout
/// transition, `COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE` made available) and signals at
/// `ALL_COMMANDS`; compute waits at `ALL_COMMANDS` and acquires it with the same layouts,
/// making it visible to `COMPUTE_SHADER/SHADER_SAMPLED_READ`.
///
/// ```text
/// graphics (family 0):  [render] --release 0->1--.
///                                                | semaphore
/// compute  (family 1):           acquire 0->1 <--'  [sample]
/// ```
#[test]
fn render_then_sample_on_async_compute_of_another_family() {
    let input = render_then_compute_sample(false);
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render`, with nothing before it
    pass   `render`
    barrier
      image  `color` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/NONE, family 0 -> 1
        why: for `sample`, after `render`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at ALL_COMMANDS
    barrier
      image  `color` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ, family 0 -> 1
        why: for `sample`, after `render`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A concurrent image needs no ownership transfer: the semaphore alone orders and makes the
/// color writes available and visible, so compute waits only at `COMPUTE_SHADER`, the stage of
/// its first use, and its layout transition chains from that wait (`COMPUTE_SHADER/NONE`).
///
/// ```text
/// graphics:  [render] --semaphore--.
/// compute:                          '--> [sample]
/// ```
#[test]
fn render_then_sample_on_async_compute_concurrent() {
    let input = render_then_compute_sample(true);
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `color` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `render`, with nothing before it
    pass   `render`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      image  `color` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `render`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A depth prepass, a depth-tested read-only draw, then a pass that samples the depth.
///
/// - `prepass`: the fresh image from `UNDEFINED`, nothing before it.
/// - `shade`: to `DEPTH_STENCIL_READ_ONLY_OPTIMAL`; the prepass's writes in the fragment
///   tests made available and visible to the tests' reads.
/// - `fog`: to `SHADER_READ_ONLY_OPTIMAL` (the layout `FRAGMENT_SHADER_SAMPLED_READ` names).
///   The transition is a write after `shade`'s reads: an execution dependency from the
///   fragment tests, no source access. The prepass's writes were made available by the
///   barrier before `shade`, which this one chains from; its destination makes them visible
///   to the fragment shader.
///
/// ```text
/// graphics:  [prepass] --depth--> [shade] --depth--> [fog]
///             write                test only           sample
/// ```
#[test]
fn depth_prepass_then_read_only_test_then_sampled() {
    let input = PlanInput {
        queues: queues(),
        resources: vec![depth()],
        passes: vec![
            on("prepass", 0, Access::DEPTH_ATTACHMENT_WRITE),
            on("shade", 0, Access::DEPTH_ATTACHMENT_READ),
            on("fog", 0, Access::FRAGMENT_SHADER_SAMPLED_READ),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `depth` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `depth` mips 0+1 layers 0+1: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> DEPTH_STENCIL_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `shade`, after `prepass`
    pass   `shade`
    barrier
      image  `depth` mips 0+1 layers 0+1: DEPTH_STENCIL_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `fog`, after `shade`
    pass   `fog`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Soft particles after a read-only depth test: `DEPTH_READ_ONLY_SAMPLED` keeps
/// `DEPTH_STENCIL_READ_ONLY_OPTIMAL`, but its fragment shader samples what the prepass wrote,
/// which the barrier before `shade` made visible to the fragment tests only. A read in the same
/// layout still needs a barrier here: chained from that barrier's stages (the fragment tests),
/// no source access (the writes are already available), to the particles' use. The
/// destination is the whole use, as for every barrier: the spec asks only that it include
/// `FRAGMENT_SHADER/SHADER_SAMPLED_READ`, which still lacks visibility; the fragment tests'
/// read already has it, so naming them too is allowed, if wider than needed.
///
/// ```text
/// graphics:  [prepass] --depth--> [shade] --depth--> [particles]
///             write                test only           test + sample, same layout
/// ```
#[test]
fn a_read_in_the_same_layout_at_a_new_stage_still_gets_visibility() {
    let input = PlanInput {
        queues: queues(),
        resources: vec![depth()],
        passes: vec![
            on("prepass", 0, Access::DEPTH_ATTACHMENT_WRITE),
            on("shade", 0, Access::DEPTH_ATTACHMENT_READ),
            on("particles", 0, Access::DEPTH_READ_ONLY_SAMPLED),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `depth` mips 0+1 layers 0+1: UNDEFINED -> DEPTH_STENCIL_ATTACHMENT_OPTIMAL, NONE/NONE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | DEPTH_STENCIL_ATTACHMENT_WRITE
        why: for `prepass`, with nothing before it
    pass   `prepass`
    barrier
      image  `depth` mips 0+1 layers 0+1: DEPTH_STENCIL_ATTACHMENT_OPTIMAL -> DEPTH_STENCIL_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_WRITE -> EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ
        why: for `shade`, after `prepass`
    pass   `shade`
    barrier
      image  `depth` mips 0+1 layers 0+1: DEPTH_STENCIL_READ_ONLY_OPTIMAL -> DEPTH_STENCIL_READ_ONLY_OPTIMAL, EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/NONE -> FRAGMENT_SHADER | EARLY_FRAGMENT_TESTS | LATE_FRAGMENT_TESTS/DEPTH_STENCIL_ATTACHMENT_READ | SHADER_SAMPLED_READ
        why: for `particles`, after `shade`
    pass   `particles`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A 4x target drawn and resolved into a single-sample image in one rendering: both are
/// color attachment writes at `COLOR_ATTACHMENT_OUTPUT` (resolves write there), so both
/// transition from `UNDEFINED` in the pass's one barrier command.
fn resolve_pass() -> PassDecl {
    PassDecl::new("draw", 0)
        .with_use(UseDecl::new(0, Access::COLOR_ATTACHMENT_WRITE).discard())
        .with_use(UseDecl::new(1, Access::COLOR_ATTACHMENT_WRITE).discard())
}

fn resolve_targets() -> Vec<ResourceDecl> {
    let msaa = ResourceDecl::image("msaa", 1, 1, IU::COLOR_ATTACHMENT);
    vec![msaa, color("resolved")]
}

/// Example "multisample resolve, then sample the result": the resolve's writes at
/// `COLOR_ATTACHMENT_OUTPUT` to `FRAGMENT_SHADER/SHADER_SAMPLED_READ`, with the transition to
/// `SHADER_READ_ONLY_OPTIMAL`. The 4x target is not used again: no barrier for it.
///
/// ```text
/// graphics:  [draw: msaa -resolve-> resolved] --resolved--> [sample]
/// ```
#[test]
fn resolve_then_sample() {
    let input = PlanInput {
        queues: queues(),
        resources: resolve_targets(),
        passes: vec![
            resolve_pass(),
            uses("sample", 0, &[(1, Access::FRAGMENT_SHADER_SAMPLED_READ)]),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `msaa` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
      image  `resolved` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
    pass   `draw`
    barrier
      image  `resolved` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> FRAGMENT_SHADER/SHADER_SAMPLED_READ
        why: for `sample`, after `draw`
    pass   `sample`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Example "first render pass writes a color attachment, the second loads it": the resolve
/// target drawn over with load op LOAD. No layout change (`COLOR_ATTACHMENT_OPTIMAL` both
/// sides), but a write-after-write and read-after-write on the attachment: the resolve's
/// writes made available, and visible to the next pass's attachment reads and writes.
///
/// ```text
/// graphics:  [draw: msaa -resolve-> resolved] --resolved (LOAD)--> [overlay]
/// ```
#[test]
fn resolve_target_loaded_by_the_next_pass() {
    let input = PlanInput {
        queues: queues(),
        resources: resolve_targets(),
        passes: vec![
            resolve_pass(),
            uses("overlay", 0, &[(1, Access::COLOR_ATTACHMENT_READ_WRITE)]),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    barrier
      image  `msaa` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
      image  `resolved` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, NONE/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, with nothing before it
    pass   `draw`
    barrier
      image  `resolved` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> COLOR_ATTACHMENT_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_READ | COLOR_ATTACHMENT_WRITE
        why: for `overlay`, after `draw`
    pass   `overlay`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A compute pass on queue `compute_queue` writes indirect arguments and vertices, and a draw on
/// graphics reads them.
fn indirect_draw(compute_queue: usize) -> PlanInput {
    let usage = BU::STORAGE_BUFFER;
    PlanInput {
        queues: queues(),
        resources: vec![
            ResourceDecl::buffer("args", 64, usage | BU::INDIRECT_BUFFER),
            ResourceDecl::buffer("vertices", 256, usage | BU::VERTEX_BUFFER),
        ],
        passes: vec![
            uses(
                "cull",
                compute_queue,
                &[
                    (0, Access::COMPUTE_SHADER_WRITE),
                    (1, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            uses(
                "draw",
                0,
                &[(0, Access::INDIRECT_BUFFER), (1, Access::VERTEX_BUFFER)],
            ),
        ],
    }
}

/// Examples "dispatch writes a storage buffer, draw consumes it as indirect arguments" and
/// "... as a vertex buffer", on one queue: one barrier command, one buffer barrier each,
/// `COMPUTE_SHADER/SHADER_STORAGE_WRITE -> DRAW_INDIRECT/INDIRECT_COMMAND_READ` and
/// `-> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ`. Fresh buffers need nothing before the
/// dispatch.
///
/// ```text
/// graphics:  [cull] --args, vertices--> [draw]
/// ```
#[test]
fn compute_writes_indirect_arguments_and_vertices_for_a_draw() {
    assert_plan!(
        planned(&indirect_draw(0)),
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `cull`
    barrier
      buffer `args` bytes 0..64: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> DRAW_INDIRECT/INDIRECT_COMMAND_READ
        why: for `draw`, after `cull`
      buffer `vertices` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ
        why: for `draw`, after `cull`
    pass   `draw`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// The same with the dispatch on async compute (family 1): both exclusive buffers released by
/// compute (the shader writes made available) and acquired by graphics for the indirect and
/// vertex input stages, across an `ALL_COMMANDS` signal and wait.
///
/// ```text
/// compute  (family 1):  [cull] --release 1->0--.
///                                              | semaphore
/// graphics (family 0):         acquire 1->0 <--'  [draw]
/// ```
#[test]
fn async_compute_writes_indirect_arguments_and_vertices_for_a_draw() {
    assert_plan!(
        planned(&indirect_draw(1)),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `args` bytes 0..64: DRAW_INDIRECT/NONE -> DRAW_INDIRECT/INDIRECT_COMMAND_READ, family 1 -> 0
        why: for `draw`, after `cull`
      buffer `vertices` bytes 0..256: VERTEX_ATTRIBUTE_INPUT/NONE -> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ, family 1 -> 0
        why: for `draw`, after `cull`
    pass   `draw`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `cull`
    barrier
      buffer `args` bytes 0..64: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `draw`, after `cull`
      buffer `vertices` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/NONE, family 1 -> 0
        why: for `draw`, after `cull`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Example "swapchain image acquire and present": the acquire semaphore waited at
/// `COLOR_ATTACHMENT_OUTPUT` (the image's first use), the transition from `UNDEFINED` chained
/// from that wait (`COLOR_ATTACHMENT_OUTPUT/NONE`); after rendering, the transition to
/// `PRESENT_SRC_KHR` from the color writes to `COLOR_ATTACHMENT_OUTPUT/NONE`, which the
/// present semaphore's signal at `COLOR_ATTACHMENT_OUTPUT` chains from.
///
/// ```text
/// acquired (binary) --> graphics:  [draw] --swap--> [present] --> rendered (binary)
/// ```
#[test]
fn swapchain_acquire_render_present() {
    let mut draw = acquire("draw", 1, Access::COLOR_ATTACHMENT_WRITE);
    draw.uses[0] = draw.uses[0].discard();
    let input = PlanInput {
        queues: queues(),
        resources: vec![swapchain()],
        passes: vec![draw, present(2)],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   binary 0x1 at COLOR_ATTACHMENT_OUTPUT
    barrier
      image  `swap` mips 0+1 layers 0+1: UNDEFINED -> COLOR_ATTACHMENT_OPTIMAL, COLOR_ATTACHMENT_OUTPUT/NONE -> COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE
        why: for `draw`, after the binary semaphore `draw` waits on
    pass   `draw`
    barrier
      image  `swap` mips 0+1 layers 0+1: COLOR_ATTACHMENT_OPTIMAL -> PRESENT_SRC_KHR, COLOR_ATTACHMENT_OUTPUT/COLOR_ATTACHMENT_WRITE -> COLOR_ATTACHMENT_OUTPUT/NONE
        why: for `present`, after `draw`
    pass   `present`
    signal binary 0x2 at COLOR_ATTACHMENT_OUTPUT
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Example "upload on a dedicated transfer queue, then draw": the transfer family (2) writes
/// vertex and index buffers and releases them (the transfer writes made available); graphics
/// waits at `ALL_COMMANDS` and acquires them for the vertex and index input stages.
///
/// ```text
/// transfer (family 2):  [upload] --release 2->0--.
///                                                | semaphore
/// graphics (family 0):           acquire 2->0 <--'  [draw]
/// ```
#[test]
fn transfer_queue_upload_of_vertices_and_indices_drawn_on_graphics() {
    let dst = BU::TRANSFER_DST;
    let input = PlanInput {
        queues: queues(),
        resources: vec![
            ResourceDecl::buffer("vertices", 256, dst | BU::VERTEX_BUFFER),
            ResourceDecl::buffer("indices", 64, dst | BU::INDEX_BUFFER),
        ],
        passes: vec![
            uses(
                "upload",
                2,
                &[(0, Access::TRANSFER_WRITE), (1, Access::TRANSFER_WRITE)],
            ),
            uses(
                "draw",
                0,
                &[(0, Access::VERTEX_BUFFER), (1, Access::INDEX_BUFFER)],
            ),
        ],
    };
    assert_plan!(
        planned(&input),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `transfer` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `vertices` bytes 0..256: VERTEX_ATTRIBUTE_INPUT/NONE -> VERTEX_ATTRIBUTE_INPUT/VERTEX_ATTRIBUTE_READ, family 2 -> 0
        why: for `draw`, after `upload`
      buffer `indices` bytes 0..64: INDEX_INPUT/NONE -> INDEX_INPUT/INDEX_READ, family 2 -> 0
        why: for `draw`, after `upload`
    pass   `draw`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    pass   `upload`
    barrier
      buffer `vertices` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 2 -> 0
        why: for `draw`, after `upload`
      buffer `indices` bytes 0..64: ALL_TRANSFER/TRANSFER_WRITE -> ALL_TRANSFER/NONE, family 2 -> 0
        why: for `draw`, after `upload`
    signal timeline at ALL_COMMANDS
"#
    );
}
