//! What [`Rebinder`] must refuse: inputs that differ in anything but names, order-kept timeline
//! values and one-to-one binary semaphores.

use super::*;

const QUEUES: [(u32, vk::QueueFlags); 2] = [
    (
        0,
        vk::QueueFlags::from_raw(
            vk::QueueFlags::GRAPHICS.as_raw() | vk::QueueFlags::COMPUTE.as_raw(),
        ),
    ),
    (1, vk::QueueFlags::COMPUTE),
];

/// Two CONCURRENT buffers written on queue 0 at `a` and `b`; one pass on queue 1 reads both.
fn input(a: u64, b: u64, access: Access) -> PlanInput {
    let written = |value: u64| SegmentState {
        defined: true,
        write: Some(Recorded {
            queue: 0,
            value: Some(value),
            stages: vk::PipelineStageFlags2::COMPUTE_SHADER,
            access: vk::AccessFlags2::SHADER_STORAGE_WRITE,
        }),
        ..SegmentState::default()
    };
    let buffer = |name: &str, value: u64| {
        ResourceDecl::buffer(name, 64, vk::BufferUsageFlags::STORAGE_BUFFER)
            .concurrent()
            .with_state(written(value))
    };
    PlanInput {
        queues: QUEUES
            .iter()
            .enumerate()
            .map(|(i, &(f, caps))| QueueDecl::new(&format!("q{i}"), f, caps))
            .collect(),
        resources: vec![buffer("a", a), buffer("b", b)],
        passes: vec![PassDecl::new("read", 1)
            .with_use(UseDecl::new(0, access))
            .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_READ))],
    }
}

#[test]
fn values_shifted_in_order_rebind_to_the_planners_answer() {
    let mut plan = plan_owned(input(3, 5, Access::COMPUTE_SHADER_READ)).unwrap();
    let next = input(13, 20, Access::COMPUTE_SHADER_READ);
    let expected = plan_owned(next.clone()).unwrap();
    let old = Rebinder::default().rebind(&mut plan, next).unwrap();
    assert_plan!(
        plan,
        r#"
queue `q1` (family 1):
  batch 0:
    wait   `q0` timeline value 20 (earlier graph) at COMPUTE_SHADER
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(plan.queues, expected.queues);
    assert_eq!(plan.final_states, expected.final_states);
    // The wait is on the later write: 5 before, 20 now.
    assert_eq!(
        plan.queues[1].batches[0].waits[0].target,
        WaitTarget::Value {
            queue: 0,
            value: 20
        }
    );
    assert_eq!(old.resources[1].initial[0].1.write.unwrap().value, Some(5));
}

#[test]
fn values_whose_order_changed_are_refused() {
    let mut plan = plan_owned(input(3, 5, Access::COMPUTE_SHADER_READ)).unwrap();
    let before = plan.clone();
    // Which buffer was written last changed: the wait's value comes from the other one.
    assert!(Rebinder::default()
        .rebind(&mut plan, input(9, 7, Access::COMPUTE_SHADER_READ))
        .is_err());
    // Two values that were different became one.
    assert!(Rebinder::default()
        .rebind(&mut plan, input(7, 7, Access::COMPUTE_SHADER_READ))
        .is_err());
    assert_eq!(
        plan.queues, before.queues,
        "a refused plan is left as it was"
    );
}

#[test]
fn zero_stays_zero() {
    // Value 0 means "no work yet": no wait at all. A real value instead needs one.
    let mut plan = plan_owned(input(0, 5, Access::COMPUTE_SHADER_READ)).unwrap();
    assert!(Rebinder::default()
        .rebind(&mut plan, input(4, 9, Access::COMPUTE_SHADER_READ))
        .is_err());
    assert!(Rebinder::default()
        .rebind(&mut plan, input(0, 9, Access::COMPUTE_SHADER_READ))
        .is_ok());
}

#[test]
fn other_declarations_are_refused() {
    let mut plan = plan_owned(input(3, 5, Access::COMPUTE_SHADER_READ)).unwrap();
    assert!(Rebinder::default()
        .rebind(
            &mut plan,
            input(13, 15, Access::COMPUTE_SHADER_SAMPLED_READ)
        )
        .is_err());
    let mut renamed = input(13, 15, Access::COMPUTE_SHADER_READ);
    renamed.passes[0].name = "another name".into();
    renamed.resources[0].name = "another buffer".into();
    assert!(Rebinder::default().rebind(&mut plan, renamed).is_ok());
}

#[test]
fn binary_semaphores_must_map_one_to_one() {
    let sem = |raw: u64| vk::Semaphore::from_raw(raw);
    let with_binaries = |wait: u64, signal: u64| {
        let mut i = input(3, 5, Access::COMPUTE_SHADER_READ);
        i.passes[0].waits.push(BinaryWaitDecl {
            semaphore: sem(wait),
            guards: vec![],
            stages: Some(vk::PipelineStageFlags2::COMPUTE_SHADER),
        });
        i.passes[0].signals.push(BinarySignalDecl {
            semaphore: sem(signal),
            stages: Some(vk::PipelineStageFlags2::COMPUTE_SHADER),
        });
        i
    };
    let mut plan = plan_owned(with_binaries(0xa, 0xb)).unwrap();
    // Both semaphores became one: not a one-to-one map.
    assert!(Rebinder::default()
        .rebind(&mut plan, with_binaries(0xc, 0xc))
        .is_err());
    let next = with_binaries(0xd, 0xe);
    let expected = plan_owned(next.clone()).unwrap();
    Rebinder::default().rebind(&mut plan, next).unwrap();
    assert_eq!(plan.queues, expected.queues);
}

#[test]
fn reordered_plans_are_refused() {
    // Two chains (a fill, then a copy of it), inserted chain after chain: reordering runs the
    // fills first. That plan is not the program-order answer, so it is never reused for it.
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let chains = || PlanInput {
        queues: vec![QueueDecl::new("q0", QUEUES[0].0, QUEUES[0].1)],
        resources: (0..4)
            .map(|i| ResourceDecl::buffer(&format!("b{i}"), 64, usage))
            .collect(),
        passes: (0..2)
            .flat_map(|k| {
                [
                    PassDecl::new("fill", 0)
                        .with_use(UseDecl::new(2 * k, Access::TRANSFER_WRITE).discard()),
                    PassDecl::new("copy", 0)
                        .with_use(UseDecl::new(2 * k, Access::COPY_READ))
                        .with_use(UseDecl::new(2 * k + 1, Access::COPY_WRITE).discard()),
                ]
            })
            .collect(),
    };
    let mut reordered = plan_scheduled(&chains(), Schedule::REORDER).unwrap();
    assert_eq!(reordered.order, [0, 2, 1, 3]);
    let before = reordered.queues.clone();
    let mut rebinder = Rebinder::default();
    let back = rebinder.rebind(&mut reordered, chains()).unwrap_err();
    assert_eq!(format!("{back:?}"), format!("{:?}", chains()));
    assert_eq!(reordered.queues, before);
    // The same frame planned in program order rebinds.
    let mut in_order = plan_scheduled(&chains(), Schedule::PROGRAM_ORDER).unwrap();
    assert_eq!(in_order.order, [0, 1, 2, 3]);
    assert!(rebinder.rebind(&mut in_order, chains()).is_ok());
}

#[test]
fn regrouped_plans_in_insertion_order_are_refused() {
    // A copy writes `b0` and a compute shader `b2`, then copies read each: reordering keeps
    // the order and joins the readers' barriers into one command, which program order does
    // not (the second barrier's COMPUTE_SHADER source would make the first reader wait for the
    // compute write). Same order, another plan: not reused.
    let usage = vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::STORAGE_BUFFER;
    let input = || PlanInput {
        queues: vec![QueueDecl::new("q0", QUEUES[0].0, QUEUES[0].1)],
        resources: (0..4)
            .map(|i| ResourceDecl::buffer(&format!("b{i}"), 64, usage))
            .collect(),
        passes: [
            (0, Access::TRANSFER_WRITE),
            (2, Access::COMPUTE_SHADER_WRITE),
        ]
        .map(|(k, a)| PassDecl::new("fill", 0).with_use(UseDecl::new(k, a)))
        .into_iter()
        .chain([0, 2].map(|k| {
            PassDecl::new("copy", 0)
                .with_use(UseDecl::new(k, Access::COPY_READ))
                .with_use(UseDecl::new(k + 1, Access::COPY_WRITE))
        }))
        .collect(),
    };
    let mut regrouped = plan_scheduled(&input(), Schedule::REORDER).unwrap();
    assert_eq!(regrouped.order, [0, 1, 2, 3]);
    assert_eq!(regrouped.schedule, Schedule::REORDER);
    assert_eq!(
        (
            plan(&input()).unwrap().barrier_commands(),
            regrouped.barrier_commands()
        ),
        (2, 1)
    );
    assert!(Rebinder::default().rebind(&mut regrouped, input()).is_err());
}
