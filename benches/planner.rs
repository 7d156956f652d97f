//! The pure planner alone, on the inputs a frame of `benches/frame.rs` hands it: no device.
//!
//! Pass 0 fills buffer 1; pass `i > 0` copies buffer `i % B` into buffer `(i + 1) % B`. With
//! `--queues 3` the passes are cut into three runs on a transfer-only, a compute and a
//! graphics queue of three families (as on the NVIDIA machine, where lavapipe has one), so a
//! buffer read across a run boundary moves with an ownership transfer. The resources start in
//! the states the same frame left them in, as in an app's steady loop.
//!
//! ```text
//! cargo bench --bench planner -- --passes 100 --buffers 8 --queues 1 --plans 2000
//! valgrind --tool=callgrind target/release/deps/planner-* --plans 100
//! ```
//!
//! It prints the time per plan. Under callgrind, `callgrind_annotate --inclusive=yes` gives
//! `plan_scheduled_reusing`'s instructions: divided by `--plans` (plus the one plan that
//! makes the steady states), the cost of one plan.

use std::time::Instant;
use vk_baton::ash::vk;
use vk_baton::plan::{plan, PassDecl, PlanInput, QueueDecl, ResourceDecl, UseDecl};
use vk_baton::Access;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    (args.iter().position(|a| a == name))
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

/// The frame bench's passes over `buffers` buffers, on `queues` (1 or 3) runs of queues.
fn input(passes: usize, buffers: usize, queues: usize) -> PlanInput {
    let queue_decls = match queues {
        1 => vec![QueueDecl::new("graphics", 0, all_caps())],
        _ => vec![
            QueueDecl::new("transfer", 1, vk::QueueFlags::TRANSFER),
            QueueDecl::new(
                "compute",
                2,
                vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            ),
            QueueDecl::new("graphics", 0, all_caps()),
        ],
    };
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let resources = (0..buffers)
        .map(|i| ResourceDecl::buffer(&format!("buf{i}"), 4096, usage))
        .collect();
    let passes = (0..passes)
        .map(|i| {
            let q = (i * queue_decls.len() / passes).min(queue_decls.len() - 1);
            let dst = (i + 1) % buffers;
            let pass = PassDecl::new("step", q);
            if i == 0 {
                pass.with_use(UseDecl::new(dst, Access::TRANSFER_WRITE).discard())
            } else {
                pass.with_use(UseDecl::new(i % buffers, Access::COPY_READ))
                    .with_use(UseDecl::new(dst, Access::COPY_WRITE).discard())
            }
        })
        .collect();
    PlanInput {
        queues: queue_decls,
        resources,
        passes,
    }
}

fn all_caps() -> vk::QueueFlags {
    vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER
}

fn main() {
    let passes = arg("--passes", 100);
    let buffers = arg("--buffers", 8).max(2);
    let queues = if arg("--queues", 1) >= 3 { 3 } else { 1 };
    let plans = arg("--plans", 1000);
    let mut input = input(passes, buffers, queues);
    // The states one frame leaves: the input of every later frame.
    let first = plan(&input).expect("plan");
    let mut last = vec![0; input.queues.len()];
    let values = first.assign_values(&mut last);
    for (r, s) in input
        .resources
        .iter_mut()
        .zip(first.resolved_final_states(&values))
    {
        r.initial = s;
    }
    let t = Instant::now();
    let mut commands = 0;
    for _ in 0..plans {
        commands += plan(&input).expect("plan").barrier_commands();
    }
    println!(
        "{passes} passes, {buffers} buffers, {queues} queues: {:.1?} per plan, {} barrier commands",
        t.elapsed() / plans.max(1) as u32,
        commands / plans.max(1)
    );
}
