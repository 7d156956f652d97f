//! Property test: random valid graphs, planned and checked by the independent verifier, each
//! graph alone (as `GraphBuilder::finish()` checks it, from the timeline values the queues had
//! reached) and the chain of graphs as a whole. Every case is also planned reordered, and
//! reordered and culled (`graphgen/scheduled.rs`): those plans must verify too and leave the
//! resources as program order does, in a CPU model of the passes' results. And every case runs
//! through `vk_baton::verify::simulate::Simulation` on its own queues, frame after frame: culled and
//! reordered, culled in program order, with a pass handed to the app (`random_graphs/simulated.rs`).
//!
//! `cargo test --test random_graphs` runs 2,000 cases; `VK_BATON_LONG=1` runs 100,000;
//! `VK_BATON_CASES=n` runs n.

mod graphgen;
#[path = "random_graphs/other_paths.rs"]
mod other_paths;
#[path = "random_graphs/rebinding.rs"]
mod rebinding;
#[path = "random_graphs/render_passes.rs"]
mod render_passes;
#[path = "random_graphs/simulated.rs"]
mod simulated;

use graphgen::*;
use other_paths::{check_aliasing, check_handoffs};
use proptest::prelude::*;
use rebinding::check_rebinding;
use simulated::check_simulated;
use std::cell::Cell;
use vk_baton::ash::vk;
use vk_baton::plan::*;
use vk_baton::verify::Violation;
use vk_baton::{Access, SubRange};

/// 2,000; 100,000 with `VK_BATON_LONG=1`; `VK_BATON_CASES=n` sets it (a long run split into
/// processes: proptest draws a fresh seed in each).
fn cases() -> u32 {
    if let Some(n) = std::env::var("VK_BATON_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        n
    } else if std::env::var("VK_BATON_LONG").is_ok_and(|v| v == "1") {
        100_000
    } else {
        2_000
    }
}

/// How many checked cases had each shape worth covering (counted on passing cases).
#[derive(Default)]
struct Seen {
    cases: Cell<u32>,
    /// Two queues of one family, both with passes.
    two_queues_of_one_family: Cell<u32>,
    /// A pass on a compute+transfer queue.
    compute_transfer_pass: Cell<u32>,
    /// A pass on a transfer-only queue.
    transfer_only_pass: Cell<u32>,
    /// A chain of two or more graphs.
    chains: Cell<u32>,
    /// A timeline starting above 0.
    nonzero_start: Cell<u32>,
    /// A plan waiting on a value an earlier graph or the app reached (the shape `finish()`
    /// once rejected when checking the plan alone).
    waits_on_earlier_values: Cell<u32>,
    /// An ownership transfer between families.
    ownership_transfers: Cell<u32>,
    /// A barrier naming one aspect of an image with depth and stencil (the planes apart).
    single_aspect_barriers: Cell<u32>,
    /// A handoff (the first pass of a graph, submitted by the app) after which the library
    /// submitted a release-only batch on another family's queue.
    handoffs_after_a_release: Cell<u32>,
    /// A graph run again whose kept plan was reused (rebound), and checked equal to a new one.
    rebound: Cell<u32>,
    /// A kept plan of another graph of the chain reused (rebound: equal to a new one).
    rebound_across_graphs: Cell<u32>,
    /// A graph run again, reordered, whose kept reordered plan was reused and checked equal
    /// to a new one.
    rebound_scheduled: Cell<u32>,
    /// Frames cycling through the three schedules over one kept cache, a kept plan reused
    /// (only one made with the frame's schedule answers it) and checked equal to a new one.
    rebound_mixed_schedules: Cell<u32>,
    /// A transient placed on memory of an earlier one: an aliasing dependency.
    aliased_transients: Cell<u32>,
    /// An aliasing dependency across queues (the later transient's first use on another queue
    /// than one of the earlier one's last uses).
    aliased_across_queues: Cell<u32>,
    /// Aliased images whose first barrier, without its first scope, the verifier rejected.
    aliasing_mutants_caught: Cell<u32>,
    /// Aliased plans that kept a wait the plan without transients drops, and verified without
    /// it.
    aliasing_waits_not_needed: Cell<u32>,
    /// Scheduled plans against program order.
    schedules: graphgen::scheduled::ScheduleSeen,
    /// Frames through the simulation.
    simulated: simulated::SimSeen,
}

fn bump(c: &Cell<u32>, yes: bool) {
    c.set(c.get() + yes as u32);
}

fn report(what: &str, v: &[Violation], case: &Case, planned: &[Planned]) -> String {
    let mut msg = format!("{what}: {} violations\n", v.len());
    for x in v.iter().take(20) {
        msg += &format!("  {x}\n");
    }
    msg += &format!("{case:?}\n");
    for (i, p) in planned.iter().enumerate() {
        msg += &format!(
            "--- graph {i} (timelines before it: {:?}):\n{}\n",
            p.values.start, p.plan
        );
    }
    msg
}

/// Plans the case's graphs in turn, verifies each alone from the values the executor assigns,
/// then the whole chain together.
fn check(case: &Case, seen: &Seen) -> Result<(), String> {
    let planned = plan_case(case)?;
    for p in &planned {
        simulated::no_host_on_semaphores(&p.plan)?;
    }
    if let Err((g, v)) = verify_each_alone(&planned) {
        return Err(report(
            &format!("graph {g} verified alone"),
            &v,
            case,
            &planned,
        ));
    }
    // One graph alone is the whole chain: the same plan with the same values.
    if planned.len() > 1 {
        if let Err(v) = verify_all(&planned) {
            return Err(report("the chain verified together", &v, case, &planned));
        }
    }
    check_handoffs(case, &planned, seen)?;
    check_rebinding(case, seen)?;
    check_aliasing(&planned, seen)?;
    graphgen::scheduled::check_schedules(case, &seen.schedules)?;
    check_simulated(case, &seen.simulated)?;
    count(case, &planned, seen);
    Ok(())
}

fn count(case: &Case, planned: &[Planned], seen: &Seen) {
    let busy: Vec<bool> = (0..case.queues.len())
        .map(|q| case.graphs.iter().flatten().any(|p| p.queue == q))
        .collect();
    let busy_with = |caps: vk::QueueFlags| {
        (0..case.queues.len()).any(|q| busy[q] && case.queues[q].caps == caps)
    };
    let shared_family = (0..case.queues.len()).any(|a| {
        (0..a).any(|b| busy[a] && busy[b] && case.queues[a].family == case.queues[b].family)
    });
    let batches = || {
        planned
            .iter()
            .flat_map(|p| p.plan.queues.iter().flat_map(|q| &q.batches))
    };
    let waits_earlier = planned.iter().any(|p| {
        p.plan.queues.iter().flat_map(|q| &q.batches).any(|b| {
            b.waits.iter().any(|w| {
                matches!(w.target, WaitTarget::Value { queue, value } if value > 0 && value <= p.values.start[queue])
            })
        })
    });
    let transfers = batches().flat_map(|b| &b.commands).any(|c| match c {
        Command::Barrier(bc) => bc
            .images
            .iter()
            .map(|i| i.scopes.families)
            .chain(bc.buffers.iter().map(|b| b.scopes.families))
            .any(|f| f.is_some_and(|(s, d)| s != d)),
        _ => false,
    });
    let single_aspect = planned.iter().any(|p| {
        let two = |r: usize| {
            matches!(p.plan.input.resources[r].kind,
                ResourceKind::Image { aspect, .. } if aspect.as_raw().count_ones() == 2)
        };
        let plan = &p.plan;
        plan.queues
            .iter()
            .flat_map(|q| &q.batches)
            .flat_map(|b| &b.commands)
            .any(|c| {
                matches!(c, Command::Barrier(bc) if bc.images.iter().any(|i| {
                    two(i.resource) && i.aspect.as_raw().count_ones() == 1
                }))
            })
    });
    bump(&seen.single_aspect_barriers, single_aspect);
    bump(&seen.cases, true);
    bump(&seen.two_queues_of_one_family, shared_family);
    bump(&seen.compute_transfer_pass, busy_with(COMPUTE_TRANSFER));
    bump(&seen.transfer_only_pass, busy_with(TRANSFER_ONLY));
    bump(&seen.chains, case.graphs.len() > 1);
    bump(&seen.nonzero_start, case.start.iter().any(|&s| s > 0));
    bump(&seen.waits_on_earlier_values, waits_earlier);
    bump(&seen.ownership_transfers, transfers);
    let placements = || planned.iter().flat_map(|p| &p.plan.transients.placements);
    bump(
        &seen.aliased_transients,
        placements().any(|p| !p.after.is_empty()),
    );
    let across = planned.iter().any(|p| {
        let t = &p.plan.transients;
        t.placements.iter().any(|b| {
            b.after.iter().any(|&a| {
                t.placement(a)
                    .is_some_and(|a| a.last_uses.iter().any(|u| u.queue != b.first_use.queue))
            })
        })
    });
    bump(&seen.aliased_across_queues, across);
}

/// 2,000 random cases (100,000 with `VK_BATON_LONG=1`): plan every graph, verify each alone and
/// the chain together. A failure shrinks to a small graph.
#[test]
fn random_graphs_verify() {
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let seen = Seen::default();
    let t = std::time::Instant::now();
    let result = runner.run(&graphgen::cases(&Sizes::suite()), |case| {
        check(&case, &seen).map_err(TestCaseError::fail)
    });
    println!("random_graphs: {} cases in {:.1?}", cases(), t.elapsed());
    if let Err(e) = result {
        panic!("{e}");
    }
    let n = seen.cases.get();
    assert_eq!(n, cases());
    // Reuse across different graphs is rare (it needs equal declarations); it is reported,
    // and checked whenever it happens.
    println!(
        "  plans reused across graphs: {}",
        seen.rebound_across_graphs.get()
    );
    let s = &seen.schedules;
    println!(
        "  scheduled graphs: {} ({} with a pass moved, {} with passes culled); reordered: {} barrier commands against {} in program order, fewer in {} graphs, more in {}; {} batches against {}",
        s.graphs.get(),
        s.moved.get(),
        s.culled.get(),
        s.barriers_reordered.get(),
        s.barriers_in_order.get(),
        s.fewer.get(),
        s.more.get(),
        s.batches_reordered.get(),
        s.batches_in_order.get(),
    );
    let sim = &seen.simulated;
    println!("  simulated frames: {}", sim.frames.get());
    // Every graph ran as at least three frames (two culled, then handed off or whole).
    assert!(sim.frames.get() >= 3 * n);
    // Every graph was planned twice with a schedule, and scheduling did something.
    assert!(s.graphs.get() >= 2 * n);
    assert!(
        s.moved.get() >= n / 4,
        "passes moved in only {} graphs",
        s.moved.get()
    );
    assert!(
        s.culled.get() >= n / 10,
        "passes culled in only {} graphs",
        s.culled.get()
    );
    assert!(s.barriers_reordered.get() < s.barriers_in_order.get());
    // Each shape the suite exists for must come up in a good share of the cases.
    for (name, c, share) in [
        (
            "two queues of one family",
            &seen.two_queues_of_one_family,
            10,
        ),
        ("a compute+transfer queue", &seen.compute_transfer_pass, 10),
        ("a transfer-only queue", &seen.transfer_only_pass, 10),
        ("chains of graphs", &seen.chains, 10),
        ("timelines starting above 0", &seen.nonzero_start, 10),
        ("waits on earlier values", &seen.waits_on_earlier_values, 20),
        ("ownership transfers", &seen.ownership_transfers, 20),
        (
            "barriers on one aspect of a depth/stencil image",
            &seen.single_aspect_barriers,
            10,
        ),
        (
            "handoffs after a release",
            &seen.handoffs_after_a_release,
            20,
        ),
        ("plans reused for the same graph", &seen.rebound, 2),
        (
            "reordered plans reused for the same graph",
            &seen.rebound_scheduled,
            2,
        ),
        (
            "plans reused with schedules mixed in one cache",
            &seen.rebound_mixed_schedules,
            4,
        ),
        ("aliased transients", &seen.aliased_transients, 10),
        (
            "transients aliased across queues",
            &seen.aliased_across_queues,
            20,
        ),
        (
            "aliasing barriers removed and caught",
            &seen.aliasing_mutants_caught,
            10,
        ),
        (
            "aliased plans verified without the waits pruning drops",
            &seen.aliasing_waits_not_needed,
            200,
        ),
        (
            "simulated culled frames with a transient left unplaced",
            &sim.unplaced_transients,
            2,
        ),
        (
            "simulated culled frames reusing a kept plan",
            &sim.reused_culled,
            40,
        ),
        ("simulated handoffs", &sim.handoffs, 2),
        (
            "simulated host reads and writes on several families",
            &sim.host_frames_multi_family,
            4,
        ),
        (
            "simulated handoffs with a transient refused",
            &sim.refused_handoffs,
            4,
        ),
    ] {
        println!("  {name}: {} of {n}", c.get());
        assert!(
            c.get() >= n / share,
            "{name}: only {} of {n} cases (want 1/{share})",
            c.get()
        );
    }
}

/// The case that `finish()` once rejected (issue 8), through the suite's own check: graph A:
/// the graphics queue writes CONCURRENT buffer X; graph B: the compute queue (family 2) reads X
/// and writes Y, then graphics reads Y. Checked alone, B's wait on A's value must count as
/// reached at B's start, at timelines from 0 and from 100.
#[test]
fn a_plan_waiting_on_an_earlier_graph_is_verified_alone() {
    let storage = |name: &str| {
        ResourceDecl::buffer(name, 256, vk::BufferUsageFlags::STORAGE_BUFFER).concurrent()
    };
    for base in [0, 100] {
        let case = Case {
            queues: vec![
                QueueDecl::new("graphics", 0, GRAPHICS_COMPUTE_TRANSFER),
                QueueDecl::new("compute", 2, COMPUTE_TRANSFER),
            ],
            resources: vec![storage("X"), storage("Y")],
            start: vec![base, base],
            graphs: vec![
                vec![PassDecl::new("write X", 0)
                    .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))],
                vec![
                    PassDecl::new("X to Y", 1)
                        .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
                        .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
                    PassDecl::new("read Y", 0)
                        .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_READ)),
                ],
            ],
        };
        let seen = Seen::default();
        check(&case, &seen).unwrap_or_else(|e| panic!("base {base}: {e}"));
        // The case has the shape that matters: B waits on A's value, before B's own signals.
        assert_eq!(seen.waits_on_earlier_values.get(), 1, "base {base}");
        let planned = plan_case(&case).unwrap();
        assert_eq!(
            planned[1].plan.queues[1].batches[0].waits[0].target,
            WaitTarget::Value {
                queue: 0,
                value: base + 1
            }
        );
        assert_eq!(planned[1].values.start, vec![base + 1, base]);
    }
}

/// Found by this suite (shrunk): visibility holds per (stage, access) pair. After a barrier
/// made sampled reads visible to the vertex shader and another made uniform reads visible to
/// the vertex, fragment and compute shaders, a sampled read in a compute shader still needs a
/// barrier; the planner once merged the two into "sampled and uniform reads, all three stages".
#[test]
fn visibility_is_per_stage_and_access_pair() {
    let case = Case {
        queues: vec![QueueDecl::new("q0", 0, GRAPHICS_COMPUTE_TRANSFER)],
        resources: vec![ResourceDecl::buffer(
            "buf",
            32,
            vk::BufferUsageFlags::TRANSFER_DST
                | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                | vk::BufferUsageFlags::UNIFORM_BUFFER,
        )],
        start: vec![0],
        graphs: vec![vec![
            PassDecl::new("copy", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            PassDecl::new("vertex", 0)
                .with_use(UseDecl::new(0, Access::VERTEX_SHADER_SAMPLED_READ)),
            PassDecl::new("uniform", 0).with_use(UseDecl::new(0, Access::UNIFORM_READ)),
            PassDecl::new("compute", 0)
                .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_SAMPLED_READ)),
        ]],
    };
    check(&case, &Seen::default()).unwrap_or_else(|e| panic!("{e}"));
    let planned = plan_case(&case).unwrap();
    assert_eq!(
        planned[0].plan.to_string(),
        "queue `q0` (family 0):
  batch 0:
    pass   `copy`
    barrier
      buffer `buf` bytes 0..32: ALL_TRANSFER/TRANSFER_WRITE -> VERTEX_SHADER/SHADER_SAMPLED_READ
    pass   `vertex`
    barrier
      buffer `buf` bytes 0..32: ALL_TRANSFER/TRANSFER_WRITE -> VERTEX_SHADER | FRAGMENT_SHADER | COMPUTE_SHADER/UNIFORM_READ
    pass   `uniform`
    barrier
      buffer `buf` bytes 0..32: ALL_TRANSFER/TRANSFER_WRITE -> COMPUTE_SHADER/SHADER_SAMPLED_READ
    pass   `compute`
    signal timeline at ALL_COMMANDS
"
    );
}

/// Survey: violation classes over many seeds, alone and chained
/// (`cargo test --test random_graphs survey -- --ignored --nocapture`; `SURVEY_N` cases).
/// Report only: each class is printed with its count and the first seed that showed it.
#[test]
#[ignore = "report only"]
fn survey() {
    let n: u64 = std::env::var("SURVEY_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut classes: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
    let mut note = |key: String, seed: u64| classes.entry(key).or_insert((0, seed)).0 += 1;
    let class = |x: &Violation| -> String {
        format!("{} {}", x.kind, x.missing)
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect()
    };
    let (mut plan_errors, mut bad_alone, mut bad_chained) = (0, 0, 0);
    for seed in 0..n {
        let mut r = graphgen::Rng::new(seed ^ 0xABCD);
        let shape = Shape {
            seed,
            graphs: r.range(1, 3) as usize,
            families: r.range(1, 3) as usize,
            queues: r.range(1, 4) as usize,
            resources: r.range(1, 16) as usize,
            passes: r.range(1, 64) as usize,
        };
        let planned = match plan_case(&generate(shape)) {
            Ok(p) => p,
            Err(e) => {
                plan_errors += 1;
                note(format!("PLAN ERROR {}", e.lines().next().unwrap()), seed);
                continue;
            }
        };
        let alone: Vec<Violation> = planned
            .iter()
            .flat_map(|p| {
                p.plan
                    .verify_from(&p.values.start)
                    .err()
                    .unwrap_or_default()
            })
            .collect();
        bad_alone += !alone.is_empty() as usize;
        for x in &alone {
            note(format!("alone: {}", class(x)), seed);
        }
        if let Err(v) = verify_all(&planned) {
            bad_chained += 1;
            for x in &v {
                note(format!("chained: {}", class(x)), seed);
            }
        }
    }
    println!(
        "{n} cases: {plan_errors} failed to plan, {bad_alone} with violations alone, {bad_chained} chained"
    );
    for (k, (c, s)) in classes {
        println!("{c:6} (first seed {s}) {k}");
    }
}

/// Regression (found by the long run): a plan naming no stage but `ALL_COMMANDS`.
#[test]
fn only_all_commands() {
    let input = PlanInput {
        queues: vec![QueueDecl::new("q", 0, family_caps(0))],
        resources: vec![ResourceDecl::image(
            "img0",
            3,
            1,
            vk::ImageUsageFlags::STORAGE,
        )],
        passes: vec![PassDecl::new("p0", 0).with_use(UseDecl::new(0, Access::GENERAL))],
    };
    plan(&input).unwrap().verify().unwrap();
}
