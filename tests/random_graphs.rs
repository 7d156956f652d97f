//! Property test: random valid graphs, planned and checked by the independent verifier.
//!
//! `cargo test --test random_graphs` runs 2,000 cases; `VK_BATON_LONG=1` runs 100,000.

mod graphgen;

use graphgen::*;
use proptest::prelude::*;

fn cases() -> u32 {
    if std::env::var("VK_BATON_LONG").is_ok_and(|v| v == "1") {
        100_000
    } else {
        2_000
    }
}

fn shapes() -> impl Strategy<Value = Shape> {
    (
        any::<u64>(),
        1usize..=3,
        1usize..=3,
        1usize..=4,
        1usize..=16,
        1usize..=64,
    )
        .prop_map(
            |(seed, graphs, families, queues, resources, passes)| Shape {
                seed,
                graphs,
                families,
                queues,
                resources,
                passes,
            },
        )
}

/// The one planner bug the verifier found (an acquire whose range is the union of several
/// releases, fixed in f9469a0), recognised so the survey can label it if it comes back.
fn known_planner_bug(v: &vk_baton::verify::Violation) -> bool {
    v.kind == vk_baton::verify::HazardKind::Ownership
        && v.missing
            .starts_with("a release of exactly the acquired range")
}

fn check(shape: Shape) -> Result<(), TestCaseError> {
    let case = generate(shape);
    let planned = plan_case(&case).map_err(TestCaseError::fail)?;
    if let Err(v) = verify_all(&planned) {
        let mut msg = format!("{} violations for {shape:?}:\n", v.len());
        for x in v.iter().take(20) {
            msg += &format!("  {x}\n");
        }
        for (i, p) in planned.iter().enumerate() {
            msg += &format!("--- graph {i}:\n{}\n", p.plan);
        }
        return Err(TestCaseError::fail(msg));
    }
    Ok(())
}

/// 2,000 random cases (100,000 with `VK_BATON_LONG=1`): plan every graph, verify them together.
#[test]
fn random_graphs_verify() {
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let t = std::time::Instant::now();
    let result = runner.run(&shapes(), check);
    println!("random_graphs: {} cases in {:.1?}", cases(), t.elapsed());
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Survey: violation classes over many seeds (`cargo test --test random_graphs survey -- --ignored --nocapture`).
#[test]
#[ignore]
fn survey() {
    let n: u64 = std::env::var("SURVEY_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut classes: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
    let mut bad = 0;
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
        let case = generate(shape);
        let planned = match plan_case(&case) {
            Ok(p) => p,
            Err(e) => {
                *classes
                    .entry(format!("PLAN ERROR {}", e.lines().next().unwrap()))
                    .or_default() = (1, seed);
                continue;
            }
        };
        if let Err(v) = verify_all(&planned) {
            bad += 1;
            for x in v {
                if known_planner_bug(&x) {
                    *classes
                        .entry("KNOWN planner bug: acquire range != release range".into())
                        .or_insert((0, seed)) = {
                        let e = classes
                            .get("KNOWN planner bug: acquire range != release range")
                            .map_or(0, |e| e.0);
                        (e + 1, seed)
                    };
                    continue;
                }
                let key: String = format!("{} {}", x.kind, x.missing)
                    .chars()
                    .map(|c| if c.is_ascii_digit() { '#' } else { c })
                    .collect();
                let e = classes.entry(key).or_insert((0, seed));
                e.0 += 1;
            }
        }
    }
    println!("{bad} of {n} cases with violations");
    for (k, (c, s)) in classes {
        println!("{c:6} (seed {s}) {k}");
    }
}

/// Regression (found by the long run): a plan naming no stage but `ALL_COMMANDS`.
#[test]
fn only_all_commands() {
    use vk_baton::ash::vk;
    use vk_baton::plan::*;
    let input = PlanInput {
        queues: vec![QueueDecl::new("q", 0, family_caps(0))],
        resources: vec![ResourceDecl::image(
            "img0",
            3,
            1,
            vk::ImageUsageFlags::STORAGE,
        )],
        passes: vec![PassDecl::new("p0", 0).with_use(UseDecl::new(0, vk_baton::Access::GENERAL))],
    };
    plan(&input).unwrap().verify().unwrap();
}
