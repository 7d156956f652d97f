//! Synchronization a plan already has is not emitted (issue 11, item 4): barrier entries whose
//! prior accesses the queue's semaphore waits already order, entries that only order and whose
//! stage pairs another entry of the command or a barrier in between already gives, and
//! timeline waits implied through another queue. Each plan is checked whole, and verified.
//! No GPU.

use super::*;
use vk::QueueFlags as Q;

const GC: Q = Q::from_raw(Q::GRAPHICS.as_raw() | Q::COMPUTE.as_raw());

fn storage(name: &str) -> ResourceDecl {
    ResourceDecl::buffer(
        name,
        64,
        vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::VERTEX_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST,
    )
}

fn planned(input: PlanInput) -> Plan {
    let p = plan(&input).unwrap();
    p.verify().unwrap_or_else(|v| panic!("{p}\n{v:#?}"));
    p
}

/// Queue `a` writes X; queue `b` reads X and writes Y; `a` reads Y, then X again. Its second
/// read of X needs no barrier from its own write: the wait on `b` (at COMPUTE_SHADER) follows
/// `b`'s signal, whose first scope holds `b`'s COMPUTE_SHADER work, which follows `b`'s wait on
/// `a`'s signal of the write. The chain orders the write before the read and makes it visible
/// (a semaphore's access scopes are all memory accesses). The planner used to add
/// `COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_STORAGE_READ` for X before
/// `read both`. The layout transition of the image Z, ordered by the same chain, stays.
///
/// ```text
/// a:  [write X, Z] --semaphore--.              .--> [read both: X, Y, Z]
/// b:                            '--> [X to Y] --'
/// ```
#[test]
fn a_barrier_the_semaphores_already_give_is_dropped() {
    let image = ResourceDecl::image(
        "Z",
        1,
        1,
        vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
    );
    let p = planned(PlanInput {
        queues: vec![QueueDecl::new("a", 0, GC), QueueDecl::new("b", 0, GC)],
        resources: vec![storage("X"), storage("Y"), image],
        passes: vec![
            PassDecl::new("write X", 0)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("X to Y", 1)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("read both", 0)
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_SAMPLED_READ)),
        ],
    });
    assert_plan!(
        p,
        r#"
queue `a` (family 0):
  batch 0:
    barrier
      image  `Z` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `write X`, with nothing before it
    pass   `write X`
    signal timeline at COMPUTE_SHADER
  batch 1:
    wait   `b` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      image  `Z` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `read both`, after `write X`
    pass   `read both`
    signal timeline at ALL_COMMANDS
queue `b` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at COMPUTE_SHADER
    pass   `X to Y`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Two resources read in the vertex shader, then both written by a copy: each write needs
/// only an execution dependency (the reads saw nothing that was ever written), and an
/// execution dependency is not limited to its entry's resource. One entry gives
/// `VERTEX_SHADER -> ALL_TRANSFER` to both.
///
/// ```text
/// q:  [read: X, Y (vertex shader)] --X, Y--> [copy: writes X, Y]
/// ```
#[test]
fn an_entry_that_only_orders_what_another_entry_orders_is_dropped() {
    let p = planned(PlanInput {
        queues: vec![QueueDecl::new("q", 0, GC | Q::TRANSFER)],
        resources: vec![storage("X"), storage("Y")],
        passes: vec![
            PassDecl::new("read", 0)
                .with_use(UseDecl::new(0, Access::VERTEX_SHADER_STORAGE_READ))
                .with_use(UseDecl::new(1, Access::VERTEX_SHADER_STORAGE_READ)),
            PassDecl::new("copy", 0)
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE))
                .with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
        ],
    });
    assert_plan!(
        p,
        r#"
queue `q` (family 0):
  batch 0:
    pass   `read`
    barrier
      buffer `Y` bytes 0..64: VERTEX_SHADER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `copy`, after `read`
    pass   `copy`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// The same reads, then X and Y written by two copies; the copy of X also reads Z, written on
/// another queue, so its barrier cannot join the first copy's (it needs a wait the first copy
/// does not). The barrier before the first copy already orders every vertex-shader read
/// before it before every later transfer, so the second copy needs none.
///
/// ```text
/// other:  [write Z] --semaphore------------------------------.
/// q:      [read: X, Y] --Y--> [copy Y] --X (already ordered)-'--> [copy X: reads Z]
/// ```
#[test]
fn an_entry_an_earlier_barrier_already_gives_is_dropped() {
    let p = planned(PlanInput {
        queues: vec![
            QueueDecl::new("q", 0, GC | Q::TRANSFER),
            QueueDecl::new("other", 0, GC | Q::TRANSFER),
        ],
        resources: vec![storage("X"), storage("Y"), storage("Z")],
        passes: vec![
            PassDecl::new("write Z", 1).with_use(UseDecl::new(2, Access::TRANSFER_WRITE)),
            PassDecl::new("read", 0)
                .with_use(UseDecl::new(0, Access::VERTEX_SHADER_STORAGE_READ))
                .with_use(UseDecl::new(1, Access::VERTEX_SHADER_STORAGE_READ)),
            PassDecl::new("copy Y", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
            PassDecl::new("copy X", 0)
                .with_use(UseDecl::new(0, Access::TRANSFER_WRITE))
                .with_use(UseDecl::new(2, Access::TRANSFER_READ)),
        ],
    });
    assert_plan!(
        p,
        r#"
queue `q` (family 0):
  batch 0:
    pass   `read`
    barrier
      buffer `Y` bytes 0..64: VERTEX_SHADER/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `copy Y`, after `read`
    pass   `copy Y`
  batch 1:
    wait   `other` timeline after its batch 0 at ALL_TRANSFER
    pass   `copy X`
    signal timeline at ALL_COMMANDS
queue `other` (family 0):
  batch 0:
    pass   `write Z`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Queue `a` writes X; `b` reads X and writes Y; `c` reads both. `c` waits on `b` only: `b`'s
/// signal follows its wait on `a` through `b`'s compute work, so it orders `a`'s write before
/// `c`'s compute shader too. When `c` reads X in the fragment shader instead, the wait on `b`
/// (at COMPUTE_SHADER) does not reach that stage, and `c` still waits on `a`.
///
/// ```text
/// a:  [write X] --semaphore--.
/// b:                         '--> [X to Y] --semaphore--.
/// c:                 (X in the fragment shader: a too) -'--> [read both]
/// ```
#[test]
fn a_wait_implied_through_another_queue_is_dropped() {
    let input = |x_read: Access| PlanInput {
        queues: vec![
            QueueDecl::new("a", 0, GC),
            QueueDecl::new("b", 0, GC),
            QueueDecl::new("c", 0, GC),
        ],
        resources: vec![storage("X"), storage("Y")],
        passes: vec![
            PassDecl::new("write X", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("X to Y", 1)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("read both", 2)
                .with_use(UseDecl::new(0, x_read))
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_READ)),
        ],
    };
    let p = planned(input(Access::COMPUTE_SHADER_READ));
    assert_plan!(
        p,
        r#"
queue `a` (family 0):
  batch 0:
    pass   `write X`
    signal timeline at ALL_COMMANDS
queue `b` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at COMPUTE_SHADER
    pass   `X to Y`
    signal timeline at ALL_COMMANDS
queue `c` (family 0):
  batch 0:
    wait   `b` timeline after its batch 0 at COMPUTE_SHADER
    pass   `read both`
    signal timeline at ALL_COMMANDS
"#
    );
    let p = planned(input(Access::FRAGMENT_SHADER_STORAGE_READ));
    assert_plan!(
        p,
        r#"
queue `a` (family 0):
  batch 0:
    pass   `write X`
    signal timeline at ALL_COMMANDS
queue `b` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at COMPUTE_SHADER
    pass   `X to Y`
    signal timeline at ALL_COMMANDS
queue `c` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at FRAGMENT_SHADER
    wait   `b` timeline after its batch 0 at COMPUTE_SHADER
    pass   `read both`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A chain through a queue needs a stage its wait and its signal share: `b` waits on `a` at
/// COMPUTE_SHADER (its compute read of X) and signals at ALL_TRANSFER (its copy into Y, which
/// `c` awaits), so that signal does not follow `a`'s write. `c`, which copies from X and Y,
/// waits on both queues.
///
/// ```text
/// a:  [write X] --semaphore (COMPUTE_SHADER)--.-----------------------.
/// b:                                          '--> [X to Y] [later]   |
/// c:                              (ALL_TRANSFER) '--> [copy both] <---'
/// ```
#[test]
fn a_wait_is_kept_when_the_chain_through_another_queue_breaks() {
    let p = planned(PlanInput {
        queues: vec![
            QueueDecl::new("a", 0, GC | Q::TRANSFER),
            QueueDecl::new("b", 0, GC | Q::TRANSFER),
            QueueDecl::new("c", 0, GC | Q::TRANSFER),
        ],
        resources: vec![
            storage("X"),
            ResourceDecl::buffer(
                "Y",
                64,
                vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            ),
            storage("Z"),
        ],
        passes: vec![
            PassDecl::new("write X", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("X to Y", 1)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
            PassDecl::new("copy both", 2)
                .with_use(UseDecl::new(0, Access::TRANSFER_READ))
                .with_use(UseDecl::new(1, Access::TRANSFER_READ)),
            // Keeps `X to Y`'s batch from being the last of `b`, which signals ALL_COMMANDS.
            PassDecl::new("later", 1).with_use(UseDecl::new(2, Access::COMPUTE_SHADER_WRITE)),
        ],
    });
    assert_plan!(
        p,
        r#"
queue `a` (family 0):
  batch 0:
    pass   `write X`
    signal timeline at ALL_COMMANDS
queue `b` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at COMPUTE_SHADER
    pass   `X to Y`
    signal timeline at ALL_TRANSFER
  batch 1:
    pass   `later`
    signal timeline at ALL_COMMANDS
queue `c` (family 0):
  batch 0:
    wait   `a` timeline after its batch 0 at ALL_TRANSFER
    wait   `b` timeline after its batch 0 at ALL_TRANSFER
    pass   `copy both`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A host read left by an earlier graph on queue `a` (at its timeline value 5), then a copy
/// into the buffer on `a`. `a` waits on `b` at ALL_TRANSFER, and `b` waited on `a`'s value 5:
/// that chain holds `a`'s device work up to the value, but no semaphore holds the host's read,
/// so the copy keeps its barrier from HOST. (Found by the simulated frame loops.)
///
/// ```text
/// a:  (earlier graph, value 5: writes Q, host reads R) --semaphore--.                .--> [copy S to R]
/// b:                                                                '--> [Q to S] --'
/// ```
#[test]
fn a_host_access_is_never_ordered_by_semaphores() {
    let at_5 = |stages, access| Recorded {
        queue: 0,
        value: Some(5),
        stages,
        access,
    };
    let written = SegmentState {
        defined: true,
        write: Some(at_5(
            vk::PipelineStageFlags2::COMPUTE_SHADER,
            vk::AccessFlags2::SHADER_STORAGE_WRITE,
        )),
        ..SegmentState::default()
    };
    let host_read = SegmentState {
        reads: vec![at_5(
            vk::PipelineStageFlags2::HOST,
            vk::AccessFlags2::HOST_READ,
        )],
        ..SegmentState::default()
    };
    let p = planned(PlanInput {
        queues: vec![
            QueueDecl::new("a", 0, GC | Q::TRANSFER),
            QueueDecl::new("b", 0, GC),
        ],
        resources: vec![
            storage("Q").with_state(written),
            storage("R").with_state(host_read),
            storage("S"),
        ],
        passes: vec![
            PassDecl::new("Q to S", 1)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("copy S to R", 0)
                .with_use(UseDecl::new(2, Access::TRANSFER_READ))
                .with_use(UseDecl::new(1, Access::TRANSFER_WRITE)),
        ],
    });
    assert_plan!(
        p,
        r#"
queue `a` (family 0):
  batch 0:
    wait   `b` timeline after its batch 0 at ALL_TRANSFER
    barrier
      buffer `R` bytes 0..64: HOST/NONE -> ALL_TRANSFER/TRANSFER_WRITE
        why: for `copy S to R`, after an earlier graph's work on `a`
    pass   `copy S to R`
    signal timeline at ALL_COMMANDS
queue `b` (family 0):
  batch 0:
    wait   `a` timeline value 5 (earlier graph) at COMPUTE_SHADER
    pass   `Q to S`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// Found by the random suite's simulated culled frames: with a pass culled, a pass's place in
/// the order taken is not its index. Pruning looked for the barriers between a prior access and
/// the pass back to the pass whose *index* was the prior's place in the order, here
/// `write img` instead of `sample img and data`, and counted the barrier before the prior
/// access, which orders nothing after it, as ordering the prior read before `overwrite data`:
/// the WAR barrier was dropped.
///
/// ```text
/// gfx:  [fill scratch: culled] [write img] --img--> [sample img and data] --data (WAR)--> [overwrite data]
/// ```
#[test]
fn pruning_in_a_culled_program_order_finds_the_prior_pass_by_its_place() {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER;
    let defined = SegmentState::handed_over(vk::ImageLayout::UNDEFINED, Some(0), None);
    let input = PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GC)],
        resources: vec![
            ResourceDecl::buffer("scratch", 64, usage)
                .transient(TransientMemory::buffer(64, 16, 0b1)),
            ResourceDecl::image(
                "img",
                1,
                1,
                vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED,
            ),
            ResourceDecl::buffer("data", 64, usage).with_state(defined),
        ],
        passes: vec![
            PassDecl::new("fill scratch", 0)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("write img", 0).with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("sample img and data", 0)
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_SAMPLED_READ))
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_SAMPLED_READ)),
            PassDecl::new("overwrite data", 0)
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_WRITE)),
        ],
    };
    let p = plan_scheduled(&input, Schedule::PROGRAM_ORDER.with_culling()).unwrap();
    assert_plan!(
        p,
        r#"
queue `gfx` (family 0):
  batch 0:
    barrier
      image  `img` mips 0+1 layers 0+1: UNDEFINED -> GENERAL, NONE/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `write img`, with nothing before it
    pass   `write img`
    barrier
      image  `img` mips 0+1 layers 0+1: GENERAL -> SHADER_READ_ONLY_OPTIMAL, COMPUTE_SHADER/SHADER_STORAGE_WRITE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `sample img and data`, after `write img`
    pass   `sample img and data`
    barrier
      buffer `data` bytes 0..64: COMPUTE_SHADER/NONE -> COMPUTE_SHADER/SHADER_STORAGE_WRITE
        why: for `overwrite data`, after `sample img and data`
    pass   `overwrite data`
    signal timeline at ALL_COMMANDS
culled `fill scratch`
"#
    );
    p.verify().unwrap_or_else(|v| panic!("{p}\n{v:#?}"));
}

/// Plans `passes` from `earlier`'s final states (with its values), then verifies the two
/// executions as one chain, which reads only the first one's initial states.
fn planned_after(earlier: &Plan, passes: Vec<PassDecl>) -> Plan {
    let mut last = vec![0; earlier.input.queues.len()];
    let v1 = earlier.assign_values(&mut last);
    let mut input = earlier.input.clone();
    for (r, s) in input
        .resources
        .iter_mut()
        .zip(earlier.resolved_final_states(&v1))
    {
        r.initial = s;
    }
    input.passes = passes;
    let p = planned(input);
    let v2 = p.assign_values(&mut last);
    vk_baton::verify::verify(&[(earlier, &v1), (&p, &v2)])
        .unwrap_or_else(|v| panic!("{earlier}\n{p}\n{v:#?}"));
    p
}

fn texture() -> ResourceDecl {
    ResourceDecl::image(
        "tex",
        1,
        1,
        vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
    )
}

/// A texture uploaded and sampled in one graph, then sampled by later graphs: the barrier
/// before the first draw made the upload visible to fragment-shader sampled reads on `gfx`,
/// and every later submission there is in that barrier's second scope. The next graph's draw
/// gets no barrier ("reads in the same layout get no barrier", across graphs). A compute
/// shader's sampled read is outside that scope and still gets one, from the transition's
/// stage. The graph after that finds both reads visible.
///
/// ```text
/// graph 1:  gfx: [upload] --tex--> [draw: fragment sampled read]
/// graph 2:  gfx: [draw again] (no barrier)  [cull: compute sampled read] (a barrier)
/// ```
#[test]
fn a_write_an_earlier_graph_made_visible_needs_no_barrier_for_the_same_reads() {
    let upload = planned(PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GC | Q::TRANSFER)],
        resources: vec![texture()],
        passes: vec![
            PassDecl::new("upload", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE).discard()),
            PassDecl::new("draw", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
        ],
    });
    let (_, tex) = &upload.final_states[0][0];
    assert_eq!(
        tex.visible,
        [Visible {
            queue: 0,
            stages: vk::PipelineStageFlags2::FRAGMENT_SHADER,
            access: vk::AccessFlags2::SHADER_SAMPLED_READ,
        }]
    );
    let again = planned_after(
        &upload,
        vec![
            PassDecl::new("draw again", 0)
                .with_use(UseDecl::new(0, Access::FRAGMENT_SHADER_SAMPLED_READ)),
            PassDecl::new("cull", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_SAMPLED_READ)),
        ],
    );
    assert_plan!(
        again,
        r#"
queue `gfx` (family 0):
  batch 0:
    pass   `draw again`
    barrier
      image  `tex` mips 0+1 layers 0+1: SHADER_READ_ONLY_OPTIMAL -> SHADER_READ_ONLY_OPTIMAL, FRAGMENT_SHADER/NONE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
        why: for `cull`, after an earlier graph's work on `gfx`
    pass   `cull`
    signal timeline at ALL_COMMANDS
"#
    );
    // The third graph finds both reads visible.
    let third = planned_after(
        &again,
        vec![PassDecl::new("cull again", 0)
            .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_SAMPLED_READ))],
    );
    assert_eq!(third.barrier_commands(), 0, "{third}");
}

/// The verifier takes an input's visibility on trust only for the first execution of a
/// chain: a later graph planned from a state that claims a visibility no barrier gave fails
/// the chain, though it passes alone.
///
/// ```text
/// graph 1:  gfx: [upload buf]                          (no barrier to the vertex shader)
/// graph 2:  gfx: [read in the vertex shader] (planned from a state that says there was one)
/// ```
#[test]
fn a_claimed_visibility_no_barrier_gave_fails_the_chain() {
    let upload = planned(PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, GC | Q::TRANSFER)],
        resources: vec![storage("buf")],
        passes: vec![PassDecl::new("upload", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE))],
    });
    let mut last = vec![0];
    let v1 = upload.assign_values(&mut last);
    let mut input = upload.input.clone();
    input.resources[0].initial = upload.resolved_final_states(&v1).remove(0);
    input.resources[0].initial[0].1.visible.push(Visible {
        queue: 0,
        stages: vk::PipelineStageFlags2::VERTEX_SHADER,
        access: vk::AccessFlags2::SHADER_STORAGE_READ,
    });
    input.passes = vec![
        PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::VERTEX_SHADER_STORAGE_READ))
    ];
    let lied = planned(input);
    assert_eq!(lied.barrier_commands(), 0, "{lied}");
    let v2 = lied.assign_values(&mut last);
    let found = vk_baton::verify::verify(&[(&upload, &v1), (&lied, &v2)]).unwrap_err();
    assert!(
        found
            .iter()
            .any(|v| v.kind == vk_baton::verify::HazardKind::Raw),
        "{found:#?}"
    );
}
