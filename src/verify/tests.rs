//! Ownership transfers without `USE_ALL_STAGES`: only all-stages scopes order a release or an
//! acquire. With it (`VK_KHR_maintenance8`, `QueueDecl::transfers_use_all_stages`), the
//! barriers' stage masks do.

use super::{Actor, HazardKind, Violation};
use crate::plan::*;
use crate::{Access, BufferRange};
use ash::vk;
use vk::PipelineStageFlags2 as S;

/// An upload on the transfer family (queue 1) drawn from by graphics (queue 0): the transfer
/// queue releases the buffer at the end of its batch and signals; graphics waits and acquires.
fn upload_then_draw() -> Plan {
    upload_then_draw_with(false)
}

/// [`upload_then_draw`], with both queues' transfers using all stages or not.
fn upload_then_draw_with(all_stages: bool) -> Plan {
    let queue = |name, family, caps| {
        let q = QueueDecl::new(name, family, caps);
        if all_stages {
            q.with_transfers_using_all_stages()
        } else {
            q
        }
    };
    let input = PlanInput {
        queues: vec![
            queue("graphics", 0, vk::QueueFlags::GRAPHICS),
            queue("transfer", 2, vk::QueueFlags::TRANSFER),
        ],
        resources: vec![ResourceDecl::buffer(
            "vertices",
            256,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::VERTEX_BUFFER,
        )],
        passes: vec![
            PassDecl::new("upload", 1).with_use(UseDecl::new(0, Access::TRANSFER_WRITE)),
            PassDecl::new("draw", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
        ],
    };
    let p = plan(&input).unwrap();
    p.verify().unwrap();
    p
}

/// The one buffer barrier of the batch, with its (batch, command) position.
fn transfer_entry(p: &Plan, q: usize) -> (usize, usize, Scopes) {
    for (b, batch) in p.queues[q].batches.iter().enumerate() {
        for (c, cmd) in batch.commands.iter().enumerate() {
            if let Command::Barrier(bc) = cmd {
                if let Some(e) = bc.buffers.iter().find(|e| e.scopes.families.is_some()) {
                    return (b, c, e.scopes);
                }
            }
        }
    }
    panic!("no ownership transfer on queue {q}:\n{p}");
}

fn is_sync(a: &Option<Actor>, what: &str) -> bool {
    matches!(a, Some(Actor::Sync { what: w, .. }) if w.contains(what))
}

/// Every violation is an unordered ownership transfer with `second` as the later operation.
fn only_the_transfer_is_unordered(v: &[Violation], first: &str, second: &str) {
    assert!(
        v.iter().any(|x| is_sync(&x.first, first)),
        "no violation from the {first}: {v:#?}"
    );
    for x in v {
        assert_eq!(x.kind, HazardKind::Ownership, "{x}");
        assert!(x.missing.starts_with("execution dependency"), "{x}");
        assert!(
            is_sync(&x.second, second) || is_sync(&x.first, first),
            "{x}"
        );
    }
}

#[test]
fn a_wait_narrower_than_all_commands_does_not_order_the_acquire() {
    let mut p = upload_then_draw();
    let (_, _, acquire) = transfer_entry(&p, 0);
    let wait = &mut p.queues[0].batches[0].waits[0];
    assert_eq!(wait.stages, S::ALL_COMMANDS);
    // The narrowed wait still holds the acquire barrier's source stages and the draw's stage, so
    // with USE_ALL_STAGES it would order everything; without it the acquire is not in the
    // barrier's first scope, and the wait's second scope is not all stages.
    wait.stages = S::VERTEX_ATTRIBUTE_INPUT;
    assert!(wait.stages.contains(acquire.src_stages));
    let v = p.verify().unwrap_err();
    only_the_transfer_is_unordered(&v, "ownership release", "ownership acquire");
    assert!(
        v.iter().all(|x| is_sync(&x.second, "ownership acquire")),
        "{v:#?}"
    );
}

#[test]
fn a_signal_narrower_than_all_commands_does_not_order_the_release() {
    let mut p = upload_then_draw();
    let (b, _, release) = transfer_entry(&p, 1);
    let signal = p.queues[1].batches[b].signal.as_mut().unwrap();
    assert_eq!(*signal, S::ALL_COMMANDS);
    // ALL_TRANSFER holds the upload and the release barrier's destination stages; without
    // USE_ALL_STAGES the release is not in the barrier's second scope, and the signal's first
    // scope is not all stages.
    *signal = S::ALL_TRANSFER;
    assert!(signal.contains(release.dst_stages));
    let v = p.verify().unwrap_err();
    only_the_transfer_is_unordered(&v, "ownership release", "ownership acquire");
    assert!(
        v.iter().all(|x| is_sync(&x.first, "ownership release")),
        "{v:#?}"
    );
}

/// A later barrier chains from the release only through an all-stages first scope.
#[test]
fn a_barrier_chains_from_a_release_only_with_all_commands_source_stages() {
    let chained = |src: S| {
        let mut p = upload_then_draw();
        let (b, c, _) = transfer_entry(&p, 1);
        let batch = &mut p.queues[1].batches[b];
        batch.signal = Some(S::ALL_TRANSFER);
        let range = BufferRange {
            offset: 0,
            size: 256,
        };
        let scopes = Scopes {
            src_stages: src,
            src_access: vk::AccessFlags2::NONE,
            dst_stages: S::ALL_TRANSFER,
            dst_access: vk::AccessFlags2::NONE,
            families: None,
        };
        let entry = BufferBarrier {
            resource: 0,
            range,
            scopes,
            cause: None,
        };
        let cmd = BarrierCmd {
            images: vec![],
            buffers: vec![entry],
        };
        batch.commands.insert(c + 1, Command::Barrier(cmd));
        p.verify()
    };
    chained(S::ALL_COMMANDS).unwrap();
    let v = chained(S::ALL_TRANSFER | S::VERTEX_ATTRIBUTE_INPUT).unwrap_err();
    only_the_transfer_is_unordered(&v, "ownership release", "ownership acquire");
}

/// A read on one queue, then a `GENERAL` write (`MEMORY_WRITE`, no other write type named
/// anywhere) on another: without the semaphore wait, the write-after-read is caught. The
/// verifier once read `MEMORY_WRITE` as no write at all when the plans named no write type.
#[test]
fn a_memory_write_alone_is_a_write() {
    let input = PlanInput {
        queues: vec![
            QueueDecl::new("a", 0, vk::QueueFlags::GRAPHICS),
            QueueDecl::new("b", 0, vk::QueueFlags::GRAPHICS),
        ],
        resources: vec![ResourceDecl::buffer(
            "buf",
            64,
            vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER,
        )
        .concurrent()],
        passes: vec![
            PassDecl::new("read", 0).with_use(UseDecl::new(0, Access::VERTEX_BUFFER)),
            PassDecl::new("write", 1).with_use(UseDecl::new(0, Access::GENERAL)),
        ],
    };
    let p = plan(&input).unwrap();
    p.verify().unwrap();
    let mut m = p.clone();
    assert_eq!(m.queues[1].batches[0].waits.len(), 1, "{p}");
    m.queues[1].batches[0].waits.clear();
    let v = m.verify().unwrap_err();
    assert!(v.iter().any(|x| x.kind == HazardKind::War), "{v:#?}");
}

/// A semaphore's stage mask holding `HOST` is invalid usage, wherever it is: a timeline signal,
/// a wait or a binary signal. The verifier names each.
#[test]
fn host_in_a_semaphore_stage_mask_is_reported() {
    let mut p = upload_then_draw();
    let signal = p.queues[1].batches[0].signal.as_mut().unwrap();
    *signal |= S::HOST;
    p.queues[0].batches[0].waits[0].stages |= S::HOST;
    p.queues[0].batches[0]
        .binary_signals
        .push((vk::Semaphore::null(), S::HOST));
    let v = p.verify().unwrap_err();
    let host: Vec<&str> = v
        .iter()
        .filter(|x| x.kind == HazardKind::Structure && x.missing.contains("HOST"))
        .map(|x| x.missing.as_str())
        .collect();
    assert_eq!(host.len(), 3, "{v:#?}");
    assert!(host[0].starts_with("execution 0, queue 0, batch 0: a semaphore wait"));
    assert!(host[1].starts_with("execution 0, queue 0, batch 0: a semaphore binary signal"));
    assert!(host[2].starts_with("execution 0, queue 1, batch 0: a semaphore timeline signal"));
}

/// With USE_ALL_STAGES the planner waits at the draw's stage, and the verifier accepts it:
/// the acquire is in its barrier's first scope. A wait that misses the acquire's stages is
/// still refused.
#[test]
fn with_use_all_stages_the_wait_at_the_uses_stages_orders_the_acquire() {
    let p = upload_then_draw_with(true);
    let (_, _, acquire) = transfer_entry(&p, 0);
    let wait = &p.queues[0].batches[0].waits[0];
    assert_eq!(wait.stages, S::VERTEX_ATTRIBUTE_INPUT);
    assert_eq!(acquire.src_stages, S::VERTEX_ATTRIBUTE_INPUT);
    p.verify().unwrap();
    let mut missed = p.clone();
    missed.queues[0].batches[0].waits[0].stages = S::FRAGMENT_SHADER;
    let v = missed.verify().unwrap_err();
    assert!(
        v.iter().any(|x| is_sync(&x.second, "ownership acquire")),
        "{v:#?}"
    );
}

/// With USE_ALL_STAGES a signal that holds the release barrier's stages orders the release
/// (the same signal fails without it: `a_signal_narrower_than_all_commands_...`).
#[test]
fn with_use_all_stages_a_signal_at_the_release_stages_orders_the_release() {
    let mut p = upload_then_draw_with(true);
    let (b, _, release) = transfer_entry(&p, 1);
    let signal = p.queues[1].batches[b].signal.as_mut().unwrap();
    *signal = S::ALL_TRANSFER;
    assert!(signal.contains(release.dst_stages));
    p.verify().unwrap();
    // A signal whose first scope holds none of the release's stages (TOP_OF_PIPE is none in a
    // first scope) orders nothing.
    *p.queues[1].batches[b].signal.as_mut().unwrap() = S::TOP_OF_PIPE;
    let v = p.verify().unwrap_err();
    assert!(
        v.iter().any(|x| is_sync(&x.first, "ownership release")),
        "{v:#?}"
    );
}

/// Two executions on the queues of [`upload_then_draw`]: graphics clears the buffer, then the
/// upload and the draw, each planned from where the other left the buffer; each with its
/// queues' transfers using all stages or not.
fn clear_then_upload_and_draw(a_all: bool, b_all: bool) -> [(Plan, TimelineValues); 2] {
    let mut input = upload_then_draw_with(a_all).input;
    let draw = input.passes.pop().unwrap();
    let upload = input.passes.pop().unwrap();
    input.passes =
        vec![PassDecl::new("clear", 0).with_use(UseDecl::new(0, Access::TRANSFER_WRITE))];
    let mut last = vec![0, 0];
    let a = plan(&input).unwrap();
    let va = a.assign_values(&mut last);
    for (r, st) in input.resources.iter_mut().zip(a.resolved_final_states(&va)) {
        r.initial = st;
    }
    for q in &mut input.queues {
        q.transfers_use_all_stages = b_all;
    }
    input.passes = vec![upload, draw];
    let b = plan(&input).unwrap();
    let vb = b.assign_values(&mut last);
    [(a, va), (b, vb)]
}

/// The flag is each execution's own: a chain whose second execution records no
/// USE_ALL_STAGES is judged without it, whatever the first did. Reading the first
/// execution's flag for both would let the second's narrowed wait pass.
#[test]
fn each_execution_of_a_chain_is_judged_by_its_own_flag() {
    let chained =
        |[(a, va), (b, vb)]: &[(Plan, TimelineValues); 2]| super::verify(&[(a, va), (b, vb)]);
    chained(&clear_then_upload_and_draw(true, true)).unwrap();
    chained(&clear_then_upload_and_draw(false, false)).unwrap();
    // The second recorded without the flag, its acquire's wait narrowed as the flag allows.
    let mut mixed = clear_then_upload_and_draw(true, false);
    // Graphics releases the cleared buffer to the transfer queue in batch 0, and in batch 1
    // waits for the upload and acquires it back before the draw.
    let wait = &mut mixed[1].0.queues[0].batches[1].waits[0];
    assert_eq!(wait.stages, S::ALL_COMMANDS);
    wait.stages = S::VERTEX_ATTRIBUTE_INPUT;
    let v = chained(&mixed).unwrap_err();
    assert!(
        v.iter().any(|x| is_sync(&x.second, "ownership acquire")),
        "{v:#?}"
    );
}
