//! No semaphore's stage mask names `HOST` (issue 40, section 2, item 1). The host is no queue:
//! a semaphore signal or wait at `HOST` orders nothing, and the verifier rejects the plan. A
//! host access of an earlier graph is ordered before this graph by the fence the app waited
//! on, so a later write after it needs no semaphore; where a wait exists for something else,
//! the write must not add the host's stage to it. No GPU.

use super::*;
use vk::PipelineStageFlags2 as S;
use vk_baton::verify::simulate::{Simulation, Topology};

fn bytes(offset: u64, size: u64) -> SubRange {
    SubRange::Buffer(BufferRange { offset, size })
}

/// Every semaphore mask of `p`: each batch's timeline signal, binary signals and waits.
fn semaphore_masks(p: &Plan) -> Vec<S> {
    let batches = p.queues.iter().flat_map(|q| &q.batches);
    batches
        .flat_map(|b| {
            let waits = b.waits.iter().map(|w| w.stages);
            let binary = b.binary_signals.iter().map(|&(_, s)| s);
            b.signal.into_iter().chain(waits).chain(binary)
        })
        .collect()
}

/// The issue's minimal case: a write-after-read against an earlier graph's host read, folded
/// into a cross-queue wait that orders another resource.
///
/// ```text
/// frame 1, graphics:  [fill x] --> [host read x]        host waits for the fence
/// frame 2, graphics:  [fill e] --semaphore (e)--.  [write x 0..128]
///          transfer:                        '--> [copy: read e, write x 128..256]
/// ```
///
/// The transfer queue waits for `e`; its write of `x` follows the host's read, which the fence
/// ordered already: it adds nothing to that wait, and above all not `HOST` to the signal.
#[test]
fn a_write_after_an_earlier_graphs_host_read_puts_no_host_stage_on_a_semaphore() {
    let topo = Topology::nvidia();
    let (gfx, copy) = (
        topo.queue("graphics").unwrap(),
        topo.queue("transfer").unwrap(),
    );
    let mut sim = Simulation::new(topo);
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let e = sim.add_resource(ResourceDecl::buffer("e", 256, usage).concurrent());
    let x = sim.add_resource(ResourceDecl::buffer("x", 256, usage).concurrent());
    let frame1 = [
        PassDecl::new("fill x", gfx).with_use(UseDecl::new(x, Access::TRANSFER_WRITE).discard()),
        PassDecl::new("host read x", gfx).with_use(UseDecl::new(x, Access::HOST_READ)),
    ];
    sim.frame(&frame1).unwrap();
    sim.host_waited();
    let frame2 = [
        PassDecl::new("fill e", gfx).with_use(UseDecl::new(e, Access::TRANSFER_WRITE).discard()),
        PassDecl::new("write x", gfx)
            .with_use(UseDecl::new(x, Access::COPY_WRITE).range(bytes(0, 128))),
        PassDecl::new("copy", copy)
            .with_use(UseDecl::new(e, Access::COPY_READ))
            .with_use(UseDecl::new(x, Access::COPY_WRITE).range(bytes(128, 128))),
    ];
    let report = sim.frame(&frame2).unwrap_or_else(|e| panic!("{e}"));
    assert_plan!(
        report.plan,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `fill e`
    signal timeline at ALL_TRANSFER
  batch 1:
    barrier
      buffer `x` bytes 0..128: ALL_TRANSFER | HOST/TRANSFER_WRITE -> COPY/TRANSFER_WRITE
        why: for `write x`, after an earlier graph's work on `graphics`
    pass   `write x`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 1):
  batch 0:
    wait   `graphics` timeline after its batch 0 at COPY
    pass   `copy`
    signal timeline at ALL_COMMANDS
"#
    );
    let masks = semaphore_masks(&report.plan);
    assert!(masks.iter().all(|m| !m.contains(S::HOST)), "{masks:?}");
}
