//! Regression tests for two shapes the verifier rejected (issue 8, item 5), and for stages
//! recorded in initial states that do not fit the queue a barrier lands on. No GPU.
//!
//! - A host access declared by a pass on one queue, after another queue wrote the buffer.
//!   The host is no queue family, so no ownership transfer: a semaphore wait on the pass's
//!   queue (at a stage that queue has, never HOST), then a barrier from that stage to
//!   HOST/HOST_* that makes the writes available to the host. The host waits on the fence.
//!   The planner used to acquire the buffer for the pass's family with HOST stages only.
//! - A use after PRESENT in the same graph: the image belongs to the presentation engine
//!   until it is acquired again, which no barrier can express. An input error; so is a use
//!   after a host access (the host acts after the fence), and a present of a buffer.

use super::*;
use vk::AccessFlags2 as A;
use vk::PipelineStageFlags2 as S;

fn buffer() -> ResourceDecl {
    ResourceDecl::buffer(
        "buf",
        256,
        vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST,
    )
}

/// Compute writes the buffer, then a pass on `host_queue` declares the host access: the plan,
/// verified, with the buffer still owned by the compute family (the host took nothing).
fn host_after_compute_write(host_queue: usize, host: Access) -> Plan {
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer()],
        passes: vec![
            on("write", 1, Access::COMPUTE_SHADER_WRITE),
            on("host", host_queue, host),
        ],
    })
    .unwrap();
    p.verify().unwrap();
    let mut last = vec![0; 3];
    let values = p.assign_values(&mut last);
    let fin = p.resolved_final_states(&values);
    assert_eq!(fin[0].len(), 1);
    assert_eq!(fin[0][0].1.owner, Some(1));
    p
}

/// A host access after another family's write: a semaphore wait on the host pass's queue, at
/// a stage that queue has (graphics has COMPUTE_SHADER to chain from; a transfer-only queue
/// does not, so it waits for all commands), then a barrier from that stage to `HOST`. No
/// ownership transfer: the host is no queue family.
///
/// ```text
/// compute  (family 1):  [write] --semaphore--.
/// graphics (family 0):                        '--> [host] --> host reads/writes after the fence
/// transfer (family 2):  (or here)
/// ```
#[test]
fn host_access_after_another_familys_write_needs_no_ownership_transfer() {
    assert_plan!(
        host_after_compute_write(0, Access::HOST_READ),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> HOST/HOST_READ
        why: for `host`, after `write`
    pass   `host`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        host_after_compute_write(0, Access::HOST_WRITE),
        r#"
queue `graphics` (family 0):
  batch 0:
    wait   `compute` timeline after its batch 0 at COMPUTE_SHADER
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/NONE -> HOST/HOST_WRITE
        why: for `host`, after `write`
    pass   `host`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        host_after_compute_write(2, Access::HOST_READ),
        r#"
queue `compute` (family 1):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: ALL_COMMANDS/NONE -> HOST/HOST_READ
        why: for `host`, after `write`
    pass   `host`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_plan!(
        host_after_compute_write(2, Access::HOST_WRITE),
        r#"
queue `compute` (family 1):
  batch 0:
    pass   `write`
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: ALL_COMMANDS/NONE -> HOST/HOST_WRITE
        why: for `host`, after `write`
    pass   `host`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// A host read on the queue that wrote: one barrier to `HOST/HOST_READ`, no wait.
///
/// ```text
/// compute:  [write] --buf--> [host] --> host reads after the fence
/// ```
#[test]
fn host_access_on_the_writing_queue_is_one_barrier() {
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer()],
        passes: vec![
            on("write", 1, Access::COMPUTE_SHADER_WRITE),
            on("host", 1, Access::HOST_READ),
        ],
    })
    .unwrap();
    assert_plan!(
        p,
        r#"
queue `compute` (family 1):
  batch 0:
    pass   `write`
    barrier
      buffer `buf` bytes 0..256: COMPUTE_SHADER/SHADER_STORAGE_WRITE -> HOST/HOST_READ
        why: for `host`, after `write`
    pass   `host`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().unwrap();
}

/// Presenting then using the image again in one graph is refused, even after a binary wait
/// that guards it: the app acquires before it submits the graph, while it still holds the
/// image, so that acquire cannot return the image this graph presents.
#[test]
fn a_use_after_present_in_the_same_graph_is_refused() {
    for later in [
        on("draw-again", 0, Access::COLOR_ATTACHMENT_WRITE),
        on("draw-again", 0, Access::TRANSFER_READ),
        acquire("draw-again", 3, Access::COLOR_ATTACHMENT_WRITE),
        present(3),
    ] {
        let name = later.name.clone();
        let e = plan(&PlanInput {
            queues: queues(),
            resources: vec![swapchain()],
            passes: vec![
                acquire("draw", 1, Access::COLOR_ATTACHMENT_WRITE),
                present(2),
                later,
            ],
        })
        .unwrap_err();
        let Error::InvalidInput(msg) = &e else {
            panic!("{e}")
        };
        assert_eq!(
            *msg,
            format!(
                "pass `{name}` uses `swap` after pass `present` presented it: a presented image \
                 belongs to the presentation engine until an acquire returns it, in a later graph"
            )
        );
    }
}

/// A use after a host access in the same graph is refused, on the host access's queue as on
/// another, for a read as for a write: the host acts only once the fence signals, so no
/// barrier or semaphore can order a later use after it. A use of another resource is not.
#[test]
fn a_use_after_a_host_access_in_the_same_graph_is_refused() {
    for host in [Access::HOST_READ, Access::HOST_WRITE] {
        for later in [
            on("again", 1, Access::COMPUTE_SHADER_WRITE),
            on("again", 0, Access::TRANSFER_READ),
            on("again", 2, Access::TRANSFER_WRITE),
        ] {
            let e = plan(&PlanInput {
                queues: queues(),
                resources: vec![buffer()],
                passes: vec![
                    on("write", 1, Access::COMPUTE_SHADER_WRITE),
                    on("host", 1, host),
                    later,
                ],
            })
            .unwrap_err();
            let Error::InvalidInput(msg) = &e else {
                panic!("{e}")
            };
            assert_eq!(
                *msg,
                "pass `again` uses `buf` after pass `host` declared a host access to it: the \
                 host acts only once the execution's fence signals, after every pass of the \
                 graph; use it again in a later graph"
            );
        }
    }
    // Another resource after the host access plans as usual.
    let other = PassDecl::new("other", 0).with_use(UseDecl::new(1, Access::TRANSFER_WRITE));
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer(), buffer()],
        passes: vec![on("host", 1, Access::HOST_READ), other],
    })
    .unwrap();
    assert_plan!(
        p,
        r#"
queue `graphics` (family 0):
  batch 0:
    pass   `other`
    signal timeline at ALL_COMMANDS
queue `compute` (family 1):
  batch 0:
    pass   `host`
    signal timeline at ALL_COMMANDS
"#
    );
    p.verify().unwrap();
}

/// Only images are presented: a present of a buffer is refused.
#[test]
fn presenting_a_buffer_is_refused() {
    let e = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer()],
        passes: vec![on("present", 0, Access::PRESENT)],
    })
    .unwrap_err();
    let Error::InvalidInput(msg) = &e else {
        panic!("{e}")
    };
    assert_eq!(
        *msg,
        "pass `present` presents `buf`, a buffer: only swapchain images are presented"
    );
}

/// An app declared state whose stages the queue a barrier lands on lacks: the compute family
/// owns the buffer, but the recorded write ran on graphics, in the fragment shader. The
/// release runs on a compute queue after a wait, and chains from all commands there (the
/// fragment stage is no stage of a compute queue).
///
/// ```text
/// graphics (family 0):  (earlier graph's fragment write, value 5) --semaphore--.
/// compute  (family 1):                   (owner) release 1->2 <---------------'--.
/// transfer (family 2):                                       acquire 1->2 <------'  [read]
/// ```
#[test]
fn a_release_after_another_familys_recorded_work_uses_stages_of_its_own_queue() {
    let state = SegmentState {
        layout: vk::ImageLayout::UNDEFINED,
        defined: true,
        owner: Some(1),
        write: Some(Recorded {
            queue: 0,
            value: Some(5),
            stages: S::FRAGMENT_SHADER,
            access: A::SHADER_STORAGE_WRITE,
        }),
        reads: vec![],
        visible: vec![],
    };
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer().with_state(state)],
        passes: vec![on("read", 2, Access::TRANSFER_READ)],
    })
    .unwrap();
    assert_plan!(
        p,
        r#"
queue `compute` (family 1):
  batch 0:
    wait   `graphics` timeline value 5 (earlier graph) at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: ALL_COMMANDS/NONE -> ALL_COMMANDS/NONE, family 1 -> 2
        why: for `read`, with nothing before it
    signal timeline at ALL_COMMANDS
queue `transfer` (family 2):
  batch 0:
    wait   `compute` timeline after its batch 0 at ALL_COMMANDS
    barrier
      buffer `buf` bytes 0..256: ALL_TRANSFER/NONE -> ALL_TRANSFER/TRANSFER_READ, family 1 -> 2
        why: for `read`, after an earlier graph's work on `graphics`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
}

/// State recorded on a queue with stages that queue cannot run (an app's mistake, or a
/// declaration made for another queue) is read as all commands there.
///
/// ```text
/// transfer (family 2):  (earlier graph's "fragment" write, recorded here) --buf--> [read]
/// ```
#[test]
fn recorded_stages_a_queue_lacks_become_all_commands() {
    let state = SegmentState::handed_over(
        vk::ImageLayout::UNDEFINED,
        Some(2),
        Some((2usize, S::FRAGMENT_SHADER, A::SHADER_STORAGE_WRITE)),
    );
    let p = plan(&PlanInput {
        queues: queues(),
        resources: vec![buffer().with_state(state)],
        passes: vec![on("read", 2, Access::TRANSFER_READ)],
    })
    .unwrap();
    assert_plan!(
        p,
        r#"
queue `transfer` (family 2):
  batch 0:
    barrier
      buffer `buf` bytes 0..256: ALL_COMMANDS/SHADER_STORAGE_WRITE -> ALL_TRANSFER/TRANSFER_READ
        why: for `read`, after an earlier graph's work on `transfer`
    pass   `read`
    signal timeline at ALL_COMMANDS
"#
    );
    assert_eq!(
        p.input.resources[0].initial[0].1.write.unwrap().stages,
        S::ALL_COMMANDS
    );
}

/// A host access of an image that must first change layout on a family that does not own it
/// would need an ownership transfer whose stage is the host's, which Vulkan forbids
/// (VUID-VkImageMemoryBarrier2-srcStageMask-03854): refused with the way out. On the owning
/// family it plans, and verifies.
#[test]
fn a_host_access_that_needs_a_transfer_and_a_layout_change_is_refused() {
    let input = |host_queue| PlanInput {
        queues: queues(),
        resources: vec![image("img")],
        passes: vec![
            on("light", 1, Access::COMPUTE_SHADER_WRITE),
            on("blur", 1, Access::COMPUTE_SHADER_SAMPLED_READ),
            on("host", host_queue, Access::HOST_READ),
        ],
    };
    let err = plan(&input(0)).unwrap_err();
    let Error::InvalidInput(text) = &err else {
        panic!("{err}")
    };
    assert!(
        text.contains("`host`") && text.contains("family 1 owns it"),
        "{text}"
    );
    plan(&input(1))
        .expect("on the owning family")
        .verify()
        .expect("verified");
}
