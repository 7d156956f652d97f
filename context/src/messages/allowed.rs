//! Messages a test or sample expects and accepts: [`AllowedMessage`].
//!
//! A validation message fails a test unless the specification allows what it reports. Two
//! kinds of message are allowed, each by name, never by count or by "some message": a
//! performance warning that a test provokes on purpose (a copy in `GENERAL` under
//! [`LayoutPolicy::General`](vk_baton::access::LayoutPolicy::General), say), and a layer's
//! known false positive, on the layer versions known to have it. An allowance names the
//! message ID, says why, gives a pattern the text must contain, and the layer versions it
//! applies to; it never covers another ID, another text, or another layer version, so once a
//! layer is fixed its allowance stops applying and can go.

use super::super::requirements::LayerVersion;
use super::ValidationMessage;
use std::ops::Range;

/// A validation message that is expected and allowed: its ID, why, a pattern its text
/// matches, and the validation layer versions it applies to. Register it with
/// [`Context::allow_message`](super::super::Context::allow_message); the checks that a test
/// ran clean ([`Context::unexpected_messages`](super::super::Context::unexpected_messages))
/// then leave out every message it covers, and only those.
///
/// The pattern is text the message contains, in which `*` stands for any text: each piece
/// between the `*`s must appear, in order. That lets one allowance name the fixed words of a
/// message around the handles and names that change from run to run.
///
/// ```
/// use vk_baton_context::messages::AllowedMessage;
/// use vk_baton_context::requirements::LayerVersion;
/// use vk_baton_context::ValidationMessage;
/// const COPY_FROM_GENERAL: AllowedMessage = AllowedMessage {
///     id: "UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout",
///     why: "this test copies from an image in GENERAL on purpose",
///     pattern: "vkCmdCopyImageToBuffer*TRANSFER_SRC_OPTIMAL instead of GENERAL",
///     layers: LayerVersion::MIN..LayerVersion::new(1, 4, 309),
/// };
/// let m = ValidationMessage {
///     id: "UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout".into(),
///     text: "vkCmdCopyImageToBuffer: VkImage 0x3[x] layout should be \
///            VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL instead of GENERAL.".into(),
///     ..Default::default()
/// };
/// assert!(COPY_FROM_GENERAL.covers(&m, Some(LayerVersion::new(1, 3, 239))));
/// assert!(!COPY_FROM_GENERAL.covers(&m, Some(LayerVersion::new(1, 4, 309))));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedMessage {
    /// The message ID, exactly (`UNASSIGNED-…`, `SYNC-HAZARD-…`).
    pub id: &'static str,
    /// Why the specification allows what it reports (or why the layer is wrong).
    pub why: &'static str,
    /// Text the message contains, `*` standing for any text (`""`: any text of that ID).
    pub pattern: &'static str,
    /// The validation layer versions it applies to: `from..before`.
    pub layers: Range<LayerVersion>,
}

impl AllowedMessage {
    /// Whether this allowance covers `message` from a layer of version `layer` (`None`: the
    /// version is not known, and nothing is covered).
    pub fn covers(&self, message: &ValidationMessage, layer: Option<LayerVersion>) -> bool {
        message.id == self.id
            && matches_pattern(&message.text, self.pattern)
            && layer.is_some_and(|v| self.layers.contains(&v))
    }
}

/// Whether `text` contains each `*`-separated piece of `pattern`, in order.
fn matches_pattern(text: &str, pattern: &str) -> bool {
    let mut rest = text;
    pattern.split('*').all(|piece| match rest.find(piece) {
        Some(at) => {
            rest = &rest[at + piece.len()..];
            true
        }
        None => false,
    })
}

/// Layers before 1.4.309 warn, for performance, when a copy reads or writes an image in
/// `GENERAL` rather than in the transfer layout. The specification allows `GENERAL` for every
/// copy, and [`LayoutPolicy::General`](vk_baton::access::LayoutPolicy::General) uses it on
/// purpose (for devices with `VK_KHR_unified_image_layouts`, where it costs nothing); tests and
/// samples of that policy allow the warning. Layer 1.4.309 and newer do not report it.
pub const COPY_IN_GENERAL_LAYOUT: AllowedMessage = AllowedMessage {
    id: "UNASSIGNED-CoreValidation-DrawState-InvalidImageLayout",
    why: "a copy in GENERAL under LayoutPolicy::General: a performance warning of layers \
          before 1.4.309; the specification allows GENERAL for copies",
    pattern: "For optimal performance * layout should be *_OPTIMAL instead of GENERAL.",
    layers: LayerVersion::MIN..LayerVersion::new(1, 4, 309),
};

/// Layer 1.4.309's false positive after a fence wait: when the host waits on a fence, the
/// layer retires the work of that fence's queue alone and forgets that a semaphore chain
/// through it ordered another queue's accesses, so a later write on that other queue is
/// reported as a write-after-read although the chain orders it.
///
/// The pattern: queue C reads T and signals; queue G waits for that, writes T and is fenced;
/// the host waits on the fence; G signals again, and C waits for that and writes T. The
/// layer's words for it are those of any write-after-read found at submit time between two
/// submitted command buffers (`vkQueueSubmit2(): WRITE_AFTER_READ hazard detected. … (from
/// VkCommandBuffer … submitted on the current VkQueue …) writes to …, which was previously
/// read by … (from VkCommandBuffer … submitted on VkQueue …)`). Those words cannot tell the
/// forgotten chain from a missing one, so the allowance covers every such report on its
/// versions. They are the words of Debian 13's 1.4.309 (built from the SDK's 1.4.309.0); a
/// layer built from upstream's older tag v1.4.309 words submit-time hazards otherwise
/// (`Hazard WRITE_AFTER_READ for entry …`), which this does not cover.
///
/// Versions: 1.4.309 is the first seen to report it, on the NVIDIA H200; no older layer that
/// checks across submits has been run on the pattern. Upstream commit f4a49b2da ("Fix fence
/// wait for cross-queue synchronization") fixed it; tag v1.4.340, whose layer reports version
/// 1.4.340, is the first that contains it. `tests/layer_false_positives/fence.rs` shows it
/// firing on these versions and silent on 1.4.340 and newer.
pub const FENCE_WAIT_FORGETS_OTHER_QUEUES: AllowedMessage = AllowedMessage {
    id: "SYNC-HAZARD-WRITE-AFTER-READ",
    why: "layers 1.4.309 up to 1.4.339 retire only the fenced queue's work on a host fence \
          wait and forget a semaphore chain through it that ordered another queue's read \
          before this write; fixed upstream by f4a49b2da, first in 1.4.340",
    pattern: "vkQueueSubmit2(): *WRITE_AFTER_READ hazard detected. * (from VkCommandBuffer * \
              submitted on the current VkQueue *) writes to *, which was previously read by \
              * (from VkCommandBuffer * submitted on VkQueue ",
    layers: LayerVersion::new(1, 4, 309)..LayerVersion::new(1, 4, 340),
};

/// Layer 1.4.363's false positive after a host wait on a timeline semaphore
/// (`vkWaitSemaphores`, or a `vkGetSemaphoreCounterValue` that shows the value): the layer
/// retires the signalling queue's work alone, and a write that an earlier semaphore chain
/// through that queue ordered is then reported as a write-after-write.
///
/// The pattern, with queues X (transfer) and K (compute): X writes C and signals `sT = 1`; K
/// waits for `sT = 1`, copies C and signals `sK = 1`; the host waits for `sK ≥ 1`; X waits for
/// `sK = 1` and writes C again. As for [`FENCE_WAIT_FORGETS_OTHER_QUEUES`], the allowance
/// covers the layer's words for a write-after-write found at submit time between two
/// submitted command buffers (`vkQueueSubmit2(): pSubmits[…].pCommandBufferInfos[…]
/// WRITE_AFTER_WRITE hazard detected. … (from VkCommandBuffer … submitted on the current
/// VkQueue …) writes to …, which was previously written by … (from VkCommandBuffer …
/// submitted on VkQueue …)`).
///
/// Versions: 1.4.363 (Debian forky's) is the first seen to report it; 1.4.309 does not. No
/// upstream fix is known (as of 1.4.360 the layer's host wait on a timeline semaphore still
/// retires one queue). The range holds only the version seen, so that on a newer layer the
/// allowance covers nothing until someone has looked: `tests/layer_false_positives/timeline.rs`
/// shows it firing, and on a version outside the range it fails and says whether to widen
/// the range (the report is still there) or leave it (fixed).
pub const TIMELINE_WAIT_FORGETS_OTHER_QUEUES: AllowedMessage = AllowedMessage {
    id: "SYNC-HAZARD-WRITE-AFTER-WRITE",
    why: "layer 1.4.363 retires only the signalling queue's work on a host wait for a timeline \
          semaphore and forgets a semaphore chain through it that ordered this write after \
          the earlier one; no upstream fix known",
    pattern: "vkQueueSubmit2(): *WRITE_AFTER_WRITE hazard detected. * (from VkCommandBuffer * \
              submitted on the current VkQueue *) writes to *, which was previously written \
              by * (from VkCommandBuffer * submitted on VkQueue ",
    layers: LayerVersion::new(1, 4, 363)..LayerVersion::new(1, 4, 364),
};

/// Layers before 1.3.296 can time out inside a host wait (`vkWaitForFences`,
/// `vkWaitSemaphores`) while another thread signals, from the host, a timeline value that the
/// waited work depends on: the waiting thread holds the layer's lock while it waits for the
/// semaphore's state to move, and the signalling thread needs that lock to move it. After its
/// own timeout (about 10 s) the layer reports this, calling it "most likely a validation bug"
/// (upstream issue 4649; the semaphore tracking was reworked by pull 8519, first in 1.3.296).
/// Debian 12's 1.3.239 shows it in a race, in some runs of the same program.
///
/// The smallest pattern: `tests/layer_false_positives/host_signal.rs`.
pub const HOST_SIGNAL_DURING_FENCE_WAIT: AllowedMessage = AllowedMessage {
    id: "UNASSIGNED-VkSemaphore-state-timeout",
    why: "layers before 1.3.296 deadlock on their own lock between a host wait and a host \
          signal on another thread, then time out; fixed upstream by the semaphore-tracking \
          rework (pull 8519)",
    pattern: "Timeout waiting for timeline semaphore state to update. This is most likely a \
              validation bug.",
    layers: LayerVersion::MIN..LayerVersion::new(1, 3, 296),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, text: &str) -> ValidationMessage {
        ValidationMessage {
            id: id.into(),
            text: text.into(),
            ..Default::default()
        }
    }

    /// An allowance covers its ID with its pattern on its layer versions, and nothing else.
    #[test]
    fn an_allowance_covers_its_id_pattern_and_layer_versions_only() {
        let a = COPY_IN_GENERAL_LAYOUT;
        let old = Some(LayerVersion::new(1, 3, 239));
        let warning = message(
            a.id,
            "vkCmdCopyImageToBuffer: For optimal performance VkImage 0x3[x] layout should be \
             VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL instead of GENERAL.",
        );
        assert!(a.covers(&warning, old));
        // Another version, an unknown version, another text, another ID: not covered.
        assert!(!a.covers(&warning, Some(LayerVersion::new(1, 4, 309))));
        assert!(!a.covers(&warning, None));
        let other_text = message(
            a.id,
            "VkImage 0x3 layout is PRESENT_SRC_KHR but should be GENERAL",
        );
        assert!(!a.covers(&other_text, old));
        // The same ID for another complaint about GENERAL: not this performance warning.
        let not_a_hint = message(a.id, "VkImage 0x3 layout is GENERAL instead of GENERAL.");
        assert!(!a.covers(&not_a_hint, old));
        let other_id = message("SYNC-HAZARD-WRITE-AFTER-WRITE", &warning.text);
        assert!(!a.covers(&other_id, old));
    }

    fn version(patch: u32) -> Option<LayerVersion> {
        Some(LayerVersion::new(1, 4, patch))
    }

    /// A submit-time write-after-read as layer 1.4.309 (Debian 13's) words it.
    const FENCE_REPORT: &str = "vkQueueSubmit2(): WRITE_AFTER_READ hazard detected. \
        vkCmdUpdateBuffer (from VkCommandBuffer 0x7f547dcc5f20[C rewrite] submitted on the \
        current VkQueue 0x7f547c1245b0[async compute]) writes to VkBuffer 0x30000000003[T], \
        which was previously read by vkCmdCopyBuffer (from VkCommandBuffer \
        0x7f547dce9540[C read] submitted on VkQueue 0x7f547c1245b0[async compute]). \n\
        No sufficient synchronization is present to ensure that a write \
        (VK_ACCESS_2_TRANSFER_WRITE_BIT) at VK_PIPELINE_STAGE_2_CLEAR_BIT does not conflict \
        with a prior read (VK_ACCESS_2_TRANSFER_READ_BIT) at VK_PIPELINE_STAGE_2_COPY_BIT.";

    /// A submit-time write-after-write as layer 1.4.363 words it.
    const TIMELINE_REPORT: &str = "vkQueueSubmit2(): pSubmits[0].pCommandBufferInfos[0] \
        WRITE_AFTER_WRITE hazard detected. vkCmdUpdateBuffer (from VkCommandBuffer \
        0x7fb605e9fb90 submitted on the current VkQueue 0x7fb604159200[transfer]) writes to \
        dstBuffer VkBuffer 0x30000000003[c], which was previously written by another \
        vkCmdUpdateBuffer command (from VkCommandBuffer 0x7fb60414aa00 submitted on VkQueue \
        0x7fb604159200[transfer]).";

    /// The fence allowance covers 1.4.309's submit-time write-after-read on 1.4.309 up to
    /// 1.4.339; not on the fixed 1.4.340, nor another hazard, nor one within a command buffer.
    #[test]
    fn the_fence_allowance_covers_its_write_after_read_on_its_versions_only() {
        let a = FENCE_WAIT_FORGETS_OTHER_QUEUES;
        let report = message(a.id, FENCE_REPORT);
        assert!(a.covers(&report, version(309)) && a.covers(&report, version(339)));
        for v in [
            Some(LayerVersion::new(1, 3, 239)),
            version(308),
            version(340),
            None,
        ] {
            assert!(!a.covers(&report, v), "{v:?}");
        }
        let write_after_write = FENCE_REPORT.replace("WRITE_AFTER_READ", "WRITE_AFTER_WRITE");
        assert!(!a.covers(&message(a.id, &write_after_write), version(309)));
        assert!(!a.covers(
            &message("SYNC-HAZARD-WRITE-AFTER-WRITE", FENCE_REPORT),
            version(309)
        ));
        let within_one_command_buffer = "vkCmdUpdateBuffer(): dstBuffer WRITE_AFTER_READ \
            hazard detected. vkCmdUpdateBuffer writes to VkBuffer 0x30000000003[T], which was \
            previously read by vkCmdCopyBuffer.";
        assert!(!a.covers(&message(a.id, within_one_command_buffer), version(309)));
        assert!(!a.covers(&message(a.id, TIMELINE_REPORT), version(309)));
    }

    /// The timeline allowance covers 1.4.363's submit-time write-after-write on 1.4.363, the
    /// one version seen; not on 1.4.309 or a newer layer, nor another hazard, nor one within
    /// a command buffer.
    #[test]
    fn the_timeline_allowance_covers_its_write_after_write_on_its_versions_only() {
        let a = TIMELINE_WAIT_FORGETS_OTHER_QUEUES;
        let report = message(a.id, TIMELINE_REPORT);
        assert!(a.covers(&report, version(363)));
        for v in [version(309), version(362), version(364), None] {
            assert!(!a.covers(&report, v), "{v:?}");
        }
        let read_after_write = TIMELINE_REPORT.replace("WRITE_AFTER_WRITE", "READ_AFTER_WRITE");
        assert!(!a.covers(&message(a.id, &read_after_write), version(363)));
        assert!(!a.covers(
            &message("SYNC-HAZARD-WRITE-AFTER-READ", TIMELINE_REPORT),
            version(363)
        ));
        let within_one_command_buffer = "vkCmdUpdateBuffer(): WRITE_AFTER_WRITE hazard \
            detected. vkCmdUpdateBuffer writes to dstBuffer VkBuffer 0x30000000003[c], which \
            was previously written by another vkCmdUpdateBuffer command.";
        assert!(!a.covers(&message(a.id, within_one_command_buffer), version(363)));
        assert!(!a.covers(&message(a.id, FENCE_REPORT), version(363)));
    }

    /// `*` stands for any text; the other pieces must appear in order.
    #[test]
    fn a_pattern_matches_its_pieces_in_order() {
        assert!(matches_pattern("abc", ""));
        assert!(matches_pattern("xaybzc", "a*b*c"));
        assert!(matches_pattern("ab", "a*b") && matches_pattern("ab", "*a*"));
        assert!(!matches_pattern("ba", "a*b"));
        assert!(!matches_pattern("aXb", "a*c"));
        // A piece found once is not found again for the next piece.
        assert!(!matches_pattern("ab", "a*a"));
    }
}
