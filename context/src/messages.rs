//! Counting debug-utils messages, split by who reported them: the validation layer (a usage
//! error, in the app or in vk-baton) or the driver and loader (an out-of-memory report, say,
//! which an app that handles the error has nothing to fix for).
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context) {
//! assert!(ctx.validation_messages() == 0, "{}", ctx.validation_messages());
//! println!("driver said: {}", ctx.driver_messages());
//! # }
//! ```
//!
//! A test that expects a message the specification allows names it with an
//! [`AllowedMessage`] (its ID, why, a pattern and the layer versions), and checks
//! [`Context::unexpected_messages`](super::Context::unexpected_messages): every other message
//! still fails it.
//!
//! ```no_run
//! # fn f(ctx: &vk_baton_context::Context) {
//! use vk_baton_context::messages::COPY_IN_GENERAL_LAYOUT;
//! ctx.allow_message(COPY_IN_GENERAL_LAYOUT); // copies in GENERAL, on purpose
//! // ... record and run frames under LayoutPolicy::General
//! assert!(ctx.unexpected_messages() == 0, "{}", ctx.unexpected_messages());
//! # }
//! ```
//!
//! The layer's known false positives are allowances too, on the layer versions known to have
//! them ([`FENCE_WAIT_FORGETS_OTHER_QUEUES`], [`TIMELINE_WAIT_FORGETS_OTHER_QUEUES`],
//! [`HOST_SIGNAL_DURING_FENCE_WAIT`]). A test
//! allows one explicitly, where it makes the pattern that provokes it; nothing allows them
//! for every test, so a test that does not name one still fails on it.

mod allowed;
mod of_context;

pub use allowed::{
    AllowedMessage, COPY_IN_GENERAL_LAYOUT, FENCE_WAIT_FORGETS_OTHER_QUEUES,
    HOST_SIGNAL_DURING_FENCE_WAIT, TIMELINE_WAIT_FORGETS_OTHER_QUEUES,
};

use super::requirements::LayerVersion;
use ash::vk;
use std::ffi::{c_void, CStr};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use vk_baton::parking_lot::Mutex;

/// Debug-utils warnings and errors of one kind seen so far (validation-layer messages, or
/// the driver's and loader's own); compares equal to a count.
///
/// ```no_run
/// # fn f(ctx: &vk_baton_context::Context) {
/// let m = ctx.validation_messages();
/// assert!(m == 0, "{m}");
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationMessages {
    /// How many.
    pub count: usize,
    /// Each message, in the order they came.
    pub messages: Vec<ValidationMessage>,
}

/// One debug-utils message: its id, its text, and the objects it names.
///
/// A test that plants an error finds its report by content (the message id and the planted
/// object's handle), not by the wording of one layer version:
///
/// ```no_run
/// # fn f(ctx: &vk_baton_context::Context, buf: &vk_baton::StBuffer) {
/// use ash::vk::Handle;
/// let m = ctx.validation_messages();
/// let hazard = m.messages.iter().any(|x| x.id.starts_with("SYNC-") && x.names(buf.handle().as_raw()));
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationMessage {
    /// The message id name (`VUID-…`, `SYNC-HAZARD-…`), or empty.
    pub id: String,
    /// The message text.
    pub text: String,
    /// The objects the message names: type, handle and debug name, if any.
    pub objects: Vec<(vk::ObjectType, u64, Option<String>)>,
}

impl ValidationMessage {
    /// Whether the message names the object with this raw handle, in its object list or in
    /// its text (as the layer prints handles: `0x…` in lower-case hex).
    ///
    /// ```
    /// use vk_baton_context::ValidationMessage;
    /// let m = ValidationMessage { text: "VkBuffer 0x2a[a]".into(), ..Default::default() };
    /// assert!(m.names(0x2a) && !m.names(0x2));
    /// ```
    pub fn names(&self, handle: u64) -> bool {
        let hex = format!("0x{handle:x}");
        self.objects.iter().any(|o| o.1 == handle)
            || self.text.match_indices(&hex).any(|(at, _)| {
                let next = self.text[at + hex.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_hexdigit())
            })
    }
}

impl PartialEq<usize> for ValidationMessages {
    fn eq(&self, other: &usize) -> bool {
        self.count == *other
    }
}

impl fmt::Display for ValidationMessages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} message(s)", self.count)?;
        for m in &self.messages {
            writeln!(f, "- {}", m.text)?;
        }
        Ok(())
    }
}

/// The messages of one kind.
#[derive(Default)]
pub(crate) struct Tally {
    count: AtomicUsize,
    messages: Mutex<Vec<ValidationMessage>>,
}

impl Tally {
    fn push(&self, message: ValidationMessage) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.messages.lock().push(message);
    }

    pub(crate) fn snapshot(&self) -> ValidationMessages {
        ValidationMessages {
            count: self.count.load(Ordering::Relaxed),
            messages: self.messages.lock().clone(),
        }
    }
}

/// Warnings and errors, split by who reported them.
#[derive(Default)]
pub(crate) struct Messages {
    /// From the validation layer: a bug in the app or in vk-baton.
    pub(crate) validation: Tally,
    /// From the driver or the loader (an out-of-memory report, say): not a usage error.
    pub(crate) driver: Tally,
    /// Set once `vkDestroyDevice` has returned.
    pub(crate) device_destroyed: AtomicBool,
    /// The installed validation layer's version, set when the instance is made.
    pub(crate) layer: OnceLock<LayerVersion>,
    /// The messages expected and allowed ([`MessageLog::allow`]).
    allowed: Mutex<Vec<AllowedMessage>>,
}

/// Whether a debug-utils message comes from the validation layer: it says so in its type, or
/// carries one of the layer's message ids (`VUID-…`, `SYNC-…`, `UNASSIGNED-…`). Drivers report
/// their own errors (Mesa's and NVIDIA's out-of-memory messages, say) as GENERAL messages.
fn is_validation_message(types: vk::DebugUtilsMessageTypeFlagsEXT, id_name: Option<&str>) -> bool {
    const LAYER_IDS: [&str; 3] = ["VUID-", "SYNC-", "UNASSIGNED-"];
    types.contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        || id_name.is_some_and(|n| LAYER_IDS.iter().any(|p| n.starts_with(p)))
}

/// The context's debug-utils messages; it stays readable after the [`Context`](super::Context)
/// is dropped, so a test can check what destroying the device reported.
///
/// ```no_run
/// # fn f(ctx: vk_baton_context::Context) {
/// let log = ctx.message_log();
/// drop(ctx);
/// assert!(log.validation() == 0, "{}", log.validation());
/// # }
/// ```
#[derive(Clone)]
pub struct MessageLog(pub(crate) Arc<Messages>);

impl MessageLog {
    /// The validation layer's warnings and errors: usage errors, in the app or in vk-baton.
    ///
    /// ```no_run
    /// # fn f(log: &vk_baton_context::MessageLog) {
    /// assert!(log.validation() == 0);
    /// # }
    /// ```
    pub fn validation(&self) -> ValidationMessages {
        self.0.validation.snapshot()
    }

    /// The driver's and the loader's own warnings and errors (for example the driver's report
    /// of an allocation it could not make), which are not usage errors.
    ///
    /// ```no_run
    /// # fn f(log: &vk_baton_context::MessageLog) {
    /// println!("{}", log.driver());
    /// # }
    /// ```
    pub fn driver(&self) -> ValidationMessages {
        self.0.driver.snapshot()
    }

    /// Allows a message from now on: [`MessageLog::unexpected`] leaves out every message
    /// `allowed` covers on this context's layer version ([`AllowedMessage::covers`]).
    ///
    /// ```no_run
    /// # fn f(log: &vk_baton_context::MessageLog) {
    /// log.allow(vk_baton_context::messages::COPY_IN_GENERAL_LAYOUT);
    /// # }
    /// ```
    pub fn allow(&self, allowed: AllowedMessage) {
        self.0.allowed.lock().push(allowed);
    }

    /// The validation layer's warnings and errors that no allowance covers
    /// ([`MessageLog::allow`]): what a clean run must have none of.
    ///
    /// ```no_run
    /// # fn f(log: &vk_baton_context::MessageLog) {
    /// let m = log.unexpected();
    /// assert!(m == 0, "{m}");
    /// # }
    /// ```
    pub fn unexpected(&self) -> ValidationMessages {
        let layer = self.validation_layer();
        let allowed = self.0.allowed.lock().clone();
        let messages: Vec<ValidationMessage> = self
            .0
            .validation
            .snapshot()
            .messages
            .into_iter()
            .filter(|m| !allowed.iter().any(|a| a.covers(m, layer)))
            .collect();
        ValidationMessages {
            count: messages.len(),
            messages,
        }
    }

    /// The installed `VK_LAYER_KHRONOS_validation`'s version (its `spec_version` from
    /// `vkEnumerateInstanceLayerProperties`), or `None` without the layer.
    pub fn validation_layer(&self) -> Option<LayerVersion> {
        self.0.layer.get().copied()
    }

    /// Whether the context's device has been destroyed: it is, once the context and every
    /// queue, resource and graph made through it have dropped, in any order. `false` while
    /// one is alive, and for good if the device had to be leaked (an error is logged then).
    ///
    /// ```no_run
    /// # fn f(ctx: vk_baton_context::Context) -> vk_baton::Result<()> {
    /// let log = ctx.message_log();
    /// let buf = ctx.buffer(vk_baton::BufferDesc::new(64, ash::vk::BufferUsageFlags::TRANSFER_DST), "buf")?;
    /// drop(ctx);
    /// assert!(!log.device_destroyed()); // the buffer keeps it alive
    /// drop(buf);
    /// assert!(log.device_destroyed());
    /// # Ok(()) }
    /// ```
    pub fn device_destroyed(&self) -> bool {
        self.0.device_destroyed.load(Ordering::Acquire)
    }
}

impl fmt::Debug for MessageLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageLog")
            .field(
                "validation",
                &self.0.validation.count.load(Ordering::Relaxed),
            )
            .field("driver", &self.0.driver.count.load(Ordering::Relaxed))
            .field("device_destroyed", &self.device_destroyed())
            .finish()
    }
}

/// A NUL-terminated string the layer owns during the callback, or `None` for null.
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string that lives for the call.
unsafe fn layer_str(p: *const std::ffi::c_char) -> Option<String> {
    // SAFETY: non-null, so a NUL-terminated string alive for the call (the caller's promise).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The objects a message names, from its callback data.
///
/// # Safety
///
/// `d` is callback data the layer passed for the current call: `p_objects` is null or points
/// to `object_count` entries whose names are null or NUL-terminated strings.
unsafe fn objects_of(
    d: &vk::DebugUtilsMessengerCallbackDataEXT<'_>,
) -> Vec<(vk::ObjectType, u64, Option<String>)> {
    if d.p_objects.is_null() || d.object_count == 0 {
        return Vec::new();
    }
    // SAFETY: `object_count` valid entries at `p_objects` (this function's contract).
    let objects = unsafe { std::slice::from_raw_parts(d.p_objects, d.object_count as usize) };
    objects
        .iter()
        // SAFETY: each name is null or a NUL-terminated string (this function's contract).
        .map(|o| {
            (o.object_type, o.object_handle, unsafe {
                layer_str(o.p_object_name)
            })
        })
        .collect()
}

pub(crate) unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes valid callback data for the duration of the call (or null).
    let data = unsafe { data.as_ref() };
    // SAFETY: the message and its id are null or NUL-terminated strings owned by the layer
    // during the call.
    let text = data
        .and_then(|d| unsafe { layer_str(d.p_message) })
        .unwrap_or_default();
    // SAFETY: as above.
    let id = data.and_then(|d| unsafe { layer_str(d.p_message_id_name) });
    use vk::DebugUtilsMessageSeverityFlagsEXT as S;
    if severity.intersects(S::ERROR | S::WARNING) {
        // SAFETY: `user` is the `Messages` the context keeps alive until after the
        // messenger is destroyed (or leaks, with the messenger).
        if let Some(m) = unsafe { (user as *const Messages).as_ref() } {
            let tally = if is_validation_message(types, id.as_deref()) {
                &m.validation
            } else {
                &m.driver
            };
            tally.push(ValidationMessage {
                id: id.unwrap_or_default(),
                text: text.clone(),
                // SAFETY: the layer's callback data for this call.
                objects: data.map(|d| unsafe { objects_of(d) }).unwrap_or_default(),
            });
        }
    }
    if severity.contains(S::ERROR) {
        log::error!("[vulkan {types:?}] {text}");
    } else if severity.contains(S::WARNING) {
        log::warn!("[vulkan {types:?}] {text}");
    } else if severity.contains(S::INFO) {
        log::debug!("[vulkan {types:?}] {text}");
    } else {
        log::trace!("[vulkan {types:?}] {text}");
    }
    vk::FALSE
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::DebugUtilsMessageTypeFlagsEXT as T;

    #[test]
    fn layer_messages_are_told_from_driver_messages() {
        assert!(is_validation_message(T::VALIDATION, None));
        assert!(is_validation_message(
            T::VALIDATION | T::PERFORMANCE,
            Some("x")
        ));
        assert!(is_validation_message(
            T::GENERAL,
            Some("VUID-vkDestroyDevice-device-00378")
        ));
        assert!(is_validation_message(
            T::GENERAL,
            Some("SYNC-HAZARD-WRITE-AFTER-WRITE")
        ));
        assert!(is_validation_message(
            T::PERFORMANCE,
            Some("UNASSIGNED-BestPractices-x")
        ));
        // Mesa's vk_error and NVIDIA's own reports: GENERAL, no layer id.
        assert!(!is_validation_message(T::GENERAL, None));
        assert!(!is_validation_message(T::GENERAL, Some("Loader Message")));
        assert!(!is_validation_message(T::PERFORMANCE, Some("")));
    }

    #[test]
    fn tallies_count_apart() {
        let text = |t: &str| ValidationMessage {
            text: t.into(),
            ..Default::default()
        };
        let m = Messages::default();
        m.validation.push(text("a"));
        m.driver.push(text("b"));
        m.driver.push(text("c"));
        let log = MessageLog(Arc::new(m));
        assert_eq!(
            log.validation(),
            ValidationMessages {
                count: 1,
                messages: vec![text("a")]
            }
        );
        assert_eq!(
            log.driver(),
            ValidationMessages {
                count: 2,
                messages: vec![text("b"), text("c")]
            }
        );
    }

    /// `unexpected` leaves out what an allowance covers on the log's layer version, and
    /// keeps every other message; `validation` keeps them all.
    #[test]
    fn allowed_messages_are_left_out_of_the_unexpected_ones_only() {
        let message = |id: &str, t: &str| ValidationMessage {
            id: id.into(),
            text: t.into(),
            ..Default::default()
        };
        let warning = message(
            COPY_IN_GENERAL_LAYOUT.id,
            "vkCmdCopyBuffer: For optimal performance VkImage 0x1 layout should be VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL instead of GENERAL.",
        );
        let hazard = message("SYNC-HAZARD-WRITE-AFTER-WRITE", "instead of GENERAL");
        let m = Messages::default();
        m.validation.push(warning.clone());
        m.validation.push(hazard.clone());
        let log = MessageLog(Arc::new(m));
        log.allow(COPY_IN_GENERAL_LAYOUT);
        // The layer's version is not known yet: nothing is covered.
        assert_eq!(log.unexpected().count, 2);
        log.0.layer.set(LayerVersion::new(1, 3, 239)).unwrap();
        assert_eq!(log.unexpected().messages, [hazard]);
        assert_eq!(log.validation().count, 2);
        // On a layer the allowance does not name, the warning is unexpected again.
        let newer = MessageLog(Arc::new(Messages::default()));
        newer.0.layer.set(LayerVersion::new(1, 4, 363)).unwrap();
        newer.0.validation.push(warning.clone());
        newer.allow(COPY_IN_GENERAL_LAYOUT);
        assert_eq!(newer.unexpected().messages, [warning]);
    }

    /// A handle is named by the object list, or by the text as a whole hex number.
    #[test]
    fn a_message_names_a_handle_in_its_objects_or_its_text() {
        let m = ValidationMessage {
            id: "SYNC-HAZARD-WRITE-AFTER-WRITE".into(),
            text: "Hazard for VkBuffer 0xab12[scratch] in VkCommandBuffer 0x7f".into(),
            objects: vec![(vk::ObjectType::QUEUE, 0x99, None)],
        };
        assert!(m.names(0x99) && m.names(0xab12) && m.names(0x7f));
        assert!(!m.names(0xab1) && !m.names(0x12) && !m.names(0x98));
    }
}
