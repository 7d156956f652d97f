//! Plans checked alone, as `finish()` checks them, when they wait on values that earlier graphs
//! signalled. Regression tests for a verifier that tied such waits to the plan's own signals.

use super::{verify, HazardKind};
use crate::plan::*;
use crate::Access;
use ash::vk;

fn queues() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new(
            "graphics",
            0,
            vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        ),
        QueueDecl::new(
            "compute",
            2,
            vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        ),
    ]
}

fn storage(name: &str) -> ResourceDecl {
    ResourceDecl::buffer(name, 256, vk::BufferUsageFlags::STORAGE_BUFFER).concurrent()
}

/// Graph A: graphics writes X. Graph B: compute reads X and writes Y, then graphics reads Y.
/// B's compute batch waits on A's graphics value; B's graphics batch waits on B's compute.
/// Returns both plans with the values the executor assigns, starting at `base` on each queue.
fn two_graphs(base: u64) -> (Plan, TimelineValues, Plan, TimelineValues, Vec<u64>) {
    let mut input = PlanInput {
        queues: queues(),
        resources: vec![storage("X"), storage("Y")],
        passes: vec![
            PassDecl::new("write X", 0).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE))
        ],
    };
    let mut last = vec![base, base];
    let a = plan(&input).unwrap();
    let va = a.assign_values(&mut last);
    for (r, s) in input.resources.iter_mut().zip(a.resolved_final_states(&va)) {
        r.initial = s;
    }
    input.passes = vec![
        PassDecl::new("X to Y", 1)
            .with_use(UseDecl::new(0, Access::COMPUTE_SHADER_READ))
            .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
        PassDecl::new("read Y", 0).with_use(UseDecl::new(1, Access::COMPUTE_SHADER_READ)),
    ];
    let b = plan(&input).unwrap();
    let before_b = last.clone();
    let vb = b.assign_values(&mut last);
    (a, va, b, vb, before_b)
}

fn check_alone_and_chained(base: u64) {
    let (a, va, b, vb, before_b) = two_graphs(base);
    // The shape the regression needs: B's compute waits on A's graphics value, which B's own
    // graphics batch (itself waiting on compute) would reach again if read as B's signal.
    let wait = b.queues[1].batches[0].waits[0];
    assert_eq!(
        wait.target,
        WaitTarget::Value {
            queue: 0,
            value: base + 1
        },
        "{b}"
    );
    assert_eq!(vb.start, vec![base + 1, base]);
    verify(&[(&a, &va), (&b, &vb)]).unwrap();
    verify(&[(&b, &vb)]).unwrap();
    b.verify_from(&before_b).unwrap();
    b.verify().unwrap();
}

#[test]
fn a_wait_on_an_earlier_graph_is_satisfied_at_the_start_from_zero() {
    check_alone_and_chained(0);
}

#[test]
fn a_wait_on_an_earlier_graph_is_satisfied_at_the_start_from_100() {
    check_alone_and_chained(100);
}

#[test]
fn a_wait_on_a_value_not_given_yet_is_still_reported() {
    let (_, _, b, _, _) = two_graphs(100);
    // A timeline at 99 has not reached the 101 that B's state names.
    let v = b.verify_from(&[99, 100]).unwrap_err();
    assert!(
        v.iter().any(|x| x.kind == HazardKind::Structure
            && x.missing
                .contains("waits for value 101 of queue `graphics`")),
        "{v:#?}"
    );
}

#[test]
fn removing_the_wait_on_the_earlier_graph_is_caught_alone_and_chained() {
    for base in [0, 100] {
        let (a, va, mut b, _, before_b) = two_graphs(base);
        b.queues[1].batches[0].waits.clear();
        let mut last = before_b.clone();
        let vb = b.assign_values(&mut last);
        for v in [
            verify(&[(&b, &vb)]).unwrap_err(),
            verify(&[(&a, &va), (&b, &vb)]).unwrap_err(),
        ] {
            assert!(
                v.iter()
                    .any(|x| x.kind == HazardKind::Raw && x.resource.as_deref() == Some("X")),
                "base {base}: {v:#?}"
            );
        }
    }
}

/// The next graph acquires it again and draws: planned and verified across both executions.
#[test]
fn the_next_graph_acquires_the_presented_image_again() {
    let mut last = vec![0; 3];
    use ash::vk::Handle;
    // graphics (family 0), compute (family 1), transfer (family 2), as in the planner's
    // scenarios (tests/plan_scenarios.rs).
    let queues = || {
        let q = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
        vec![
            QueueDecl::new("graphics", 0, q),
            QueueDecl::new("compute", 1, q & !vk::QueueFlags::GRAPHICS),
            QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER),
        ]
    };
    let swapchain = || {
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        ResourceDecl::image("swap", 1, 1, usage)
    };
    let on = |name: &str, access| PassDecl::new(name, 0).with_use(UseDecl::new(0, access));
    let acquire = |name: &str, semaphore, access| {
        on(name, access).with_wait(BinaryWaitDecl {
            semaphore: vk::Semaphore::from_raw(semaphore),
            guards: vec![0],
            stages: None,
        })
    };
    let present = |semaphore| {
        on("present", Access::PRESENT).with_signal(BinarySignalDecl {
            semaphore: vk::Semaphore::from_raw(semaphore),
            stages: None,
        })
    };
    let mut swap = swapchain();
    let mut plans = vec![];
    for frame in 0..2u64 {
        let p = plan(&PlanInput {
            queues: queues(),
            resources: vec![swap.clone()],
            passes: vec![
                acquire("draw", 1 + 2 * frame, Access::COLOR_ATTACHMENT_WRITE),
                present(2 + 2 * frame),
            ],
        })
        .unwrap();
        let values = p.assign_values(&mut last);
        swap.initial = p.resolved_final_states(&values).remove(0);
        plans.push((p, values));
    }
    let execs: Vec<(&Plan, &TimelineValues)> = plans.iter().map(|(p, v)| (p, v)).collect();
    verify(&execs).unwrap();
}

/// A transient is planned fresh in every execution: a chain of two executions verifies, and
/// the second one's first use starts from UNDEFINED again.
#[test]
#[cfg(feature = "transients")]
fn each_execution_starts_a_transient_fresh() {
    let mut input = crate::transients::tests::two_queues();
    let mut last = [0u64, 0];
    let first = plan(&input).unwrap();
    let v1 = first.assign_values(&mut last);
    for (r, s) in input
        .resources
        .iter_mut()
        .zip(first.resolved_final_states(&v1))
    {
        r.initial = s;
    }
    let second = plan(&input).unwrap();
    let v2 = second.assign_values(&mut last);
    crate::verify::verify(&[(&first, &v1), (&second, &v2)]).unwrap();
    assert_eq!(first.transients, second.transients);
    // The same plan but for the app's buffer `out`, written again after the first execution.
    let mut stripped = second.queues.clone();
    for b in stripped.iter_mut().flat_map(|q| &mut q.batches) {
        for c in &mut b.commands {
            if let Command::Barrier(bc) = c {
                assert!(bc.buffers.iter().all(|x| x.resource == 5));
                bc.buffers.clear();
            }
        }
    }
    assert_eq!(first.queues, stripped);
    assert_ne!(first.queues, second.queues);
}
