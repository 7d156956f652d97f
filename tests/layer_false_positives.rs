//! Known false positives of the Khronos validation layer (two in its synchronization
//! validation, one in its own locking: `host_signal.rs`), each written as the smallest valid
//! pattern that shows it, in raw Vulkan on the context's queues (no graph): so that a report of the library's plans can be told apart from a layer
//! fault, and so that these tests fail, and the allowance for the message goes, once a layer
//! version behaves differently from what is known.
//!
//! Both faults are in how the layer retires GPU work the host has seen complete: it retires
//! the work of the one queue the host waited on, and forgets that a semaphore chain through
//! another queue had ordered the accesses that follow. By the specification a host wait
//! changes nothing about the ordering of later GPU work: every access below is ordered by its
//! semaphores alone, with or without the host wait.
//!
//! Each fault has its allowance in `vk_baton_context::messages`
//! (`FENCE_WAIT_FORGETS_OTHER_QUEUES`, `TIMELINE_WAIT_FORGETS_OTHER_QUEUES`): the message ID,
//! the layer's words for it, and the layer versions known to report it. What each version must
//! report here comes from that range and the version the layer gives
//! (`vkEnumerateInstanceLayerProperties`, through `Context::machine`), never from a check not
//! firing. On the versions in the range the report must come, and the allowance must cover
//! every message seen, so a layer that is fixed, or that words the report otherwise, fails
//! here and says what to change. Elsewhere nothing may be reported, or, on a version nobody
//! has run these on, only the hazard of the allowance's kind on the planted buffer.
//!
//! The synchronization ones need queues of several families (the NVIDIA machine,
//! `../shared/device/README.md`), so they are ignored by default; started on a device without
//! them, they fail with a clear message.

mod common;
#[path = "layer_false_positives/fence.rs"]
mod fence;
#[path = "layer_false_positives/host_signal.rs"]
mod host_signal;
#[path = "layer_false_positives/raw.rs"]
mod raw;
#[path = "layer_false_positives/timeline.rs"]
mod timeline;

use std::sync::Arc;
use vk_baton::ash::vk::{self, Handle};
use vk_baton::{BufferDesc, Queue, StBuffer};
use vk_baton_context::messages::AllowedMessage;
use vk_baton_context::requirements::LayerVersion;
use vk_baton_context::{Context, ValidationMessage, ValidationMessages};

/// Debian 12's layer: it checks synchronization only within a command buffer.
const STOCK_DEBIAN_12: LayerVersion = LayerVersion::new(1, 3, 239);
/// The first version that checks across submits and queues that these tests have run on.
const FIRST_SUBMIT_TIME: LayerVersion = LayerVersion::new(1, 4, 309);

/// The Khronos validation layer's version, as the machine reports it; a test that runs
/// without the layer means nothing, so that fails.
fn layer(ctx: &Context) -> LayerVersion {
    let version = ctx.machine().validation_layer;
    assert!(
        ctx.validation() && version.is_some(),
        "these tests need the Khronos validation layer with synchronization validation"
    );
    version.unwrap()
}

/// What a layer version reports for a pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// The false positive, which the allowance covers, and nothing else.
    Fires,
    /// Nothing.
    Silent,
    /// A version nobody has run the pattern on: the false positive or nothing, nothing else.
    Unknown,
}

/// What version `v` reports for the pattern of `allowance`: the false positive on the
/// versions it names; nothing on the versions `silent` lists and from the end of its range on
/// (the fixed versions); anything else is untested.
fn expectation(allowance: &AllowedMessage, v: LayerVersion, silent: &[LayerVersion]) -> Expect {
    if allowance.layers.contains(&v) {
        Expect::Fires
    } else if silent.contains(&v) || v >= allowance.layers.end {
        Expect::Silent
    } else {
        Expect::Unknown
    }
}

/// The two accesses a hazard ID names, later first (`SYNC-HAZARD-<later>-<relation>-<earlier>`;
/// 1.4.309 says `AFTER` within a queue and `RACING` across queues), or `None` for another ID.
fn hazard_accesses(id: &str) -> Option<(String, String)> {
    let kind = id.replace('_', "-");
    let words: Vec<&str> = kind.strip_prefix("SYNC-HAZARD-")?.split('-').collect();
    (words.len() >= 3).then(|| (words[0].to_owned(), words[words.len() - 1].to_owned()))
}

/// Whether a message is a hazard of the two accesses `allowance` names, on `planted`.
fn is_the_hazard(m: &ValidationMessage, allowance: &AllowedMessage, planted: &StBuffer) -> bool {
    let kind = hazard_accesses(allowance.id);
    kind.is_some() && hazard_accesses(&m.id) == kind && m.names(planted.handle().as_raw())
}

/// Checks the messages against what layer version `v` is expected to report for the pattern
/// of `allowance`, planted on `planted`.
fn check(
    m: &ValidationMessages,
    (v, expect): (LayerVersion, Expect),
    allowance: &AllowedMessage,
    planted: &StBuffer,
) {
    assert!(
        m.messages
            .iter()
            .all(|x| is_the_hazard(x, allowance, planted)),
        "layer {v}: only the known {} on `{}` may be reported: {m}",
        allowance.id,
        planted.name()
    );
    match expect {
        Expect::Fires => {
            assert!(
                m.count > 0,
                "layer {v} is known to report {} for this pattern, and did not: a fixed layer? \
                 Then end the allowance's range ({:?}) at {v}, and drop the allowance once no \
                 layer that tests run on needs it",
                allowance.id,
                allowance.layers
            );
            let uncovered = m.messages.iter().filter(|x| !allowance.covers(x, Some(v)));
            let uncovered: Vec<&str> = uncovered.map(|x| x.text.as_str()).collect();
            assert!(
                uncovered.is_empty(),
                "layer {v} words the false positive otherwise than the allowance's pattern \
                 `{}`: update the pattern to cover {uncovered:#?}",
                allowance.pattern
            );
        }
        Expect::Silent => assert!(m == &0, "layer {v}: {m}"),
        Expect::Unknown => eprintln!(
            "note: layer {v} untested for this pattern; it reported {} message(s): if it \
             reported the false positive, widen the allowance's range ({:?}) to cover {v}",
            m.count, allowance.layers
        ),
    }
}

/// Two distinct queues, or a clear failure where the device has only one family.
fn two_queues(ctx: &Context, a: &Queue, b: &Queue) {
    assert!(
        a.family() != b.family(),
        "this test needs queues of two families, but `{}` gives `{}` and `{}` family {}; run it on the NVIDIA machine",
        ctx.device_name(),
        a.name(),
        b.name(),
        a.family()
    );
}

/// A buffer of 256 bytes shared CONCURRENT by the two queues' families, copied to and from,
/// in host-visible memory so that the test can check its bytes.
fn shared_buffer(ctx: &Context, a: &Queue, b: &Queue, name: &str) -> Arc<StBuffer> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    ctx.buffer(
        BufferDesc::readback(256, usage).concurrent(&[a.family(), b.family()]),
        name,
    )
    .unwrap()
}

fn bytes(b: &StBuffer) -> Vec<u8> {
    let mut out = vec![0; b.size() as usize];
    b.read(0, &mut out).unwrap();
    out
}

#[test]
fn hazard_ids_are_told_apart_by_their_two_accesses() {
    let pair = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
    assert_eq!(
        hazard_accesses("SYNC-HAZARD-WRITE-AFTER-READ"),
        pair("WRITE", "READ")
    );
    assert_eq!(
        hazard_accesses("SYNC-HAZARD-WRITE-RACING-READ"),
        pair("WRITE", "READ")
    );
    assert_eq!(
        hazard_accesses("SYNC-HAZARD-WRITE_AFTER_WRITE"),
        pair("WRITE", "WRITE")
    );
    assert_eq!(
        hazard_accesses("VUID-vkCmdCopyBuffer-srcBuffer-00118"),
        None
    );
    assert_eq!(hazard_accesses("SYNC-HAZARD-WRITE"), None);
}

/// The expectations follow the allowances' ranges: the fence fault from 1.4.309 up to its
/// fix, the timeline fault from 1.4.363 on, each silent where seen silent.
#[test]
fn known_layer_versions_have_their_expectations() {
    use vk_baton_context::messages::{
        FENCE_WAIT_FORGETS_OTHER_QUEUES as FENCE, TIMELINE_WAIT_FORGETS_OTHER_QUEUES as TIMELINE,
    };
    let v = |patch| LayerVersion::new(1, 4, patch);
    let fence = |version| expectation(&FENCE, version, &[STOCK_DEBIAN_12]);
    assert_eq!(fence(STOCK_DEBIAN_12), Expect::Silent);
    assert_eq!(fence(v(309)), Expect::Fires);
    assert_eq!(fence(v(339)), Expect::Fires);
    assert_eq!(fence(v(340)), Expect::Silent);
    assert_eq!(fence(v(363)), Expect::Silent);
    assert_eq!(fence(LayerVersion::new(1, 3, 290)), Expect::Unknown);
    let timeline = |version| expectation(&TIMELINE, version, &[STOCK_DEBIAN_12, FIRST_SUBMIT_TIME]);
    assert_eq!(timeline(v(309)), Expect::Silent);
    assert_eq!(timeline(v(330)), Expect::Unknown);
    assert_eq!(timeline(v(363)), Expect::Fires);
    assert_eq!(timeline(v(364)), Expect::Silent);
}
