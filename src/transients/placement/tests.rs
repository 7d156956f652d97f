//! `check_placements`: the placements are exactly the transients the recorded
//! passes use. The transient scenarios are in `tests/plan_scenarios/transient.rs`; the input
//! `two_queues` is also the verifier's (`verify/tests_across_graphs.rs`).

use super::check_placements;
use crate::access::Access;
use crate::plan::*;
use ash::vk;

const MIB: u64 = 1 << 20;

#[cfg_attr(not(feature = "verify"), allow(dead_code))]
fn image(name: &str, usage: vk::ImageUsageFlags) -> ResourceDecl {
    ResourceDecl::image(name, 1, 1, usage).transient(TransientMemory::image(MIB, 65536, 0b110))
}

/// Two queues of one family (graphics and async compute), five transients of 1 MiB:
/// `fill` (async) writes `a`; `draw` (graphics) samples `a` into `c`; `blur` (async) samples
/// `c` into `b`; `post` (graphics) samples `b` into `d`; `output` (graphics) samples `d` into
/// `e`, which `copy out` copies to the app's buffer `out`.
#[cfg_attr(not(feature = "verify"), allow(dead_code))]
pub(crate) fn two_queues() -> PlanInput {
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let target = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let sample = Access::FRAGMENT_SHADER_SAMPLED_READ;
    let draw = Access::COLOR_ATTACHMENT_WRITE;
    PlanInput {
        queues: vec![
            QueueDecl::new("gfx", 0, vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
            QueueDecl::new(
                "async",
                0,
                vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
            ),
        ],
        resources: vec![
            image("a", storage),
            image("b", storage),
            image("c", target),
            image("d", target),
            image("e", target | vk::ImageUsageFlags::TRANSFER_SRC),
            ResourceDecl::buffer("out", MIB, vk::BufferUsageFlags::TRANSFER_DST),
        ],
        passes: vec![
            PassDecl::new("fill", 1).with_use(UseDecl::new(0, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("draw", 0)
                .with_use(UseDecl::new(0, sample))
                .with_use(UseDecl::new(2, draw)),
            PassDecl::new("blur", 1)
                .with_use(UseDecl::new(2, Access::COMPUTE_SHADER_SAMPLED_READ))
                .with_use(UseDecl::new(1, Access::COMPUTE_SHADER_WRITE)),
            PassDecl::new("post", 0)
                .with_use(UseDecl::new(1, sample))
                .with_use(UseDecl::new(3, draw)),
            PassDecl::new("output", 0)
                .with_use(UseDecl::new(3, sample))
                .with_use(UseDecl::new(4, draw)),
            PassDecl::new("copy out", 0)
                .with_use(UseDecl::new(4, Access::TRANSFER_READ))
                .with_use(UseDecl::new(5, Access::TRANSFER_WRITE)),
        ],
    }
}

/// `k` is filled and copied to the app's buffer `out`; `dropped` is written only by a copy of
/// `k` that nothing reads, which culling drops.
fn culled_copy() -> PlanInput {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let transient = |name: &str| {
        ResourceDecl::buffer(name, 256, usage).transient(TransientMemory::buffer(256, 64, 0b1))
    };
    PlanInput {
        queues: vec![QueueDecl::new("gfx", 0, vk::QueueFlags::TRANSFER)],
        resources: vec![
            transient("k"),
            transient("dropped"),
            ResourceDecl::buffer("out", 256, usage),
        ],
        passes: vec![
            PassDecl::new("fill k", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            PassDecl::new("k to dropped", 0)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(1, Access::COPY_WRITE)),
            PassDecl::new("k to out", 0)
                .with_use(UseDecl::new(0, Access::COPY_READ))
                .with_use(UseDecl::new(2, Access::COPY_WRITE)),
        ],
    }
}

/// What the planner checks of each plan it makes (`check_placements`): the placements are
/// exactly the transients the recorded passes use. The culled copy is not recorded, so
/// `dropped` has no place and needs none; every other set of placements is refused.
#[test]
fn placements_are_the_transients_the_recorded_passes_use() {
    let plan = plan_scheduled(&culled_copy(), Schedule::PROGRAM_ORDER.with_culling()).unwrap();
    assert_eq!(
        plan.to_string(),
        "queue `gfx` (family 0):
  batch 0:
    pass   `fill k`
    barrier
      buffer `k` bytes 0..256: ALL_TRANSFER/TRANSFER_WRITE -> COPY/TRANSFER_READ
    pass   `k to out`
    signal timeline at ALL_COMMANDS
culled `k to dropped`
transient memory: 256 bytes in 1 heap(s); without aliasing 256, live-set lower bound 256
  heap 0: 256 bytes, alignment 64, memory types 0b1
    `k` bytes 0..256: first `fill k` (`gfx` batch 0 command 0), last `k to out` (`gfx` batch 0 command 2)
"
    );
    check_placements(&plan).unwrap();
    let refused = |change: &dyn Fn(&mut Vec<TransientPlacement>), words: &str| {
        let mut p = plan.clone();
        change(&mut p.transients.placements);
        let e = check_placements(&p).unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    };
    let k = plan.transients.placements[0].clone();
    refused(&|p| p.clear(), "transient `k` has no place in the plan");
    let at = |resource| TransientPlacement {
        resource,
        ..k.clone()
    };
    refused(
        &|p| p.push(at(1)),
        "transient `dropped` is placed but no recorded pass uses it",
    );
    refused(&|p| p.push(at(0)), "transient `k` is placed twice");
    refused(
        &|p| p.push(at(2)),
        "`out` is placed as a transient but is not one",
    );
}
