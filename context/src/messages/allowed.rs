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
/// contains, and the validation layer versions it applies to. Register it with
/// [`Context::allow_message`](super::super::Context::allow_message); the checks that a test
/// ran clean ([`Context::unexpected_messages`](super::super::Context::unexpected_messages))
/// then leave out every message it covers, and only those.
///
/// ```
/// use vk_baton_context::messages::AllowedMessage;
/// use vk_baton_context::requirements::LayerVersion;
/// use vk_baton_context::ValidationMessage;
/// const FENCE_FALSE_POSITIVE: AllowedMessage = AllowedMessage {
///     id: "SYNC-HAZARD-WRITE-AFTER-READ",
///     why: "layer 1.4.309 forgets other queues' semaphore chains after a fence wait",
///     pattern: "vkQueueSubmit2",
///     layers: LayerVersion::new(1, 4, 309)..LayerVersion::new(1, 4, 341),
/// };
/// let m = ValidationMessage {
///     id: "SYNC-HAZARD-WRITE-AFTER-READ".into(),
///     text: "vkQueueSubmit2(): Hazard WRITE_AFTER_READ ...".into(),
///     ..Default::default()
/// };
/// assert!(FENCE_FALSE_POSITIVE.covers(&m, Some(LayerVersion::new(1, 4, 309))));
/// assert!(!FENCE_FALSE_POSITIVE.covers(&m, Some(LayerVersion::new(1, 4, 341))));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedMessage {
    /// The message ID, exactly (`UNASSIGNED-…`, `SYNC-HAZARD-…`).
    pub id: &'static str,
    /// Why the specification allows what it reports (or why the layer is wrong).
    pub why: &'static str,
    /// Text the message contains (`""`: any text of that ID).
    pub pattern: &'static str,
    /// The validation layer versions it applies to: `from..before`.
    pub layers: Range<LayerVersion>,
}

impl AllowedMessage {
    /// Whether this allowance covers `message` from a layer of version `layer` (`None`: the
    /// version is not known, and nothing is covered).
    pub fn covers(&self, message: &ValidationMessage, layer: Option<LayerVersion>) -> bool {
        message.id == self.id
            && message.text.contains(self.pattern)
            && layer.is_some_and(|v| self.layers.contains(&v))
    }
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
    pattern: "instead of GENERAL",
    layers: LayerVersion::MIN..LayerVersion::new(1, 4, 309),
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
        let other_id = message("SYNC-HAZARD-WRITE-AFTER-WRITE", &warning.text);
        assert!(!a.covers(&other_id, old));
    }
}
