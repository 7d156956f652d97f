//! Debug names and labels as tools see them. RenderDoc and Nsight read the same
//! `VK_EXT_debug_utils` names and labels that the validation layer attaches to its messages, so
//! the test provokes one validation error inside a pass on purpose and reads, with a messenger
//! of its own, what the layer reports with it: the command buffer's name and the label regions
//! open at the faulty command, with their colours.
//!
//! The error: `vkCmdFillBuffer` into a buffer made without `TRANSFER_DST` usage (256 bytes, in
//! bounds of its own memory: the usage flag is the only thing wrong, so no driver writes
//! anywhere it should not).

mod common;

use std::ffi::{c_void, CStr};
use std::sync::Mutex;
use vk_baton::ash::{self, vk};
use vk_baton::{Access, BufferDesc};

/// What the test's messenger saw: per message, its ID, its objects' names and its command
/// buffer labels (name and colour), innermost first as the layer reports them.
struct Seen {
    id: String,
    objects: Vec<String>,
    labels: Vec<(String, [f32; 4])>,
}

static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// # Safety
///
/// Called by the validation layer with valid callback data (or null) for the call's duration.
unsafe extern "system" fn capture(
    _severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: valid for the call, or null (this function's contract).
    let Some(d) = (unsafe { data.as_ref() }) else {
        return vk::FALSE;
    };
    let text = |p: *const std::ffi::c_char| {
        // SAFETY: the layer's strings are NUL-terminated and live for the call.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    /// An array the layer passes, empty where its pointer is null.
    ///
    /// # Safety
    ///
    /// `p` is null or points to `n` valid elements for the call.
    unsafe fn array<'a, T>(p: *const T, n: u32) -> &'a [T] {
        if p.is_null() {
            return &[];
        }
        // SAFETY: non-null, so `n` valid elements (this function's contract).
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
    // SAFETY: the layer passes arrays of the counts it gives (or null), valid for the call.
    let (objects, labels) = unsafe {
        (
            array(d.p_objects, d.object_count),
            array(d.p_cmd_buf_labels, d.cmd_buf_label_count),
        )
    };
    let seen = Seen {
        id: text(d.p_message_id_name).unwrap_or_default(),
        objects: objects
            .iter()
            .filter_map(|o| text(o.p_object_name))
            .collect(),
        labels: labels
            .iter()
            .map(|l| (text(l.p_label_name).unwrap_or_default(), l.color))
            .collect(),
    };
    SEEN.lock().unwrap().push(seen);
    vk::FALSE
}

#[test]
fn the_layer_reports_the_batch_name_and_the_pass_label_in_its_colour() {
    let ctx = common::ctx();
    assert!(ctx.debug().is_some(), "the test contexts have debug utils");
    let loader = ash::ext::debug_utils::Instance::new(ctx.entry(), ctx.instance());
    let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        .message_type(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        .pfn_user_callback(Some(capture));
    // SAFETY: the context's instance has VK_EXT_debug_utils; the messenger is destroyed below,
    // before the context drops.
    let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }.unwrap();

    let usage = vk::BufferUsageFlags::TRANSFER_DST;
    let buf = ctx.buffer(BufferDesc::new(256, usage), "buf").unwrap();
    let no_dst = vk::BufferUsageFlags::TRANSFER_SRC;
    let wrong = ctx.buffer(BufferDesc::new(256, no_dst), "wrong").unwrap();
    let graph = ctx.graph().unwrap();
    let fill = |r: &mut vk_baton::Recorder<'_>| {
        // SAFETY: the buffer is alive and in the declared state.
        unsafe { r.device().cmd_fill_buffer(r.cmd(), buf.handle(), 0, 256, 1) };
        Ok(())
    };
    let write = |d: &mut vk_baton::Declare<'_>| {
        d.uses(&buf, Access::TRANSFER_WRITE);
    };
    // Four frames: the second plans again (the buffer is written now); the third reuses that
    // plan, keeps its labels with it and records them, as the fourth does.
    let mut reused = Vec::new();
    for _ in 0..4 {
        let planned = graph
            .record()
            .insert_fn("first fill", ctx.graphics(), write, fill)
            // A barrier command comes between the two: its label must be closed again.
            .insert_fn("faulty fill", ctx.graphics(), write, |r| {
                r.begin_label("inner");
                // SAFETY: the error on purpose (see the module's docs): `wrong` lacks
                // TRANSFER_DST, and is otherwise a live buffer of 256 bytes.
                unsafe {
                    r.device()
                        .cmd_fill_buffer(r.cmd(), wrong.handle(), 0, 256, 1)
                };
                // SAFETY: closes the label just opened.
                unsafe { r.end_label() };
                Ok(())
            })
            .finish()
            .unwrap();
        reused.push(planned.reused());
        planned.execute().unwrap().wait().unwrap();
    }
    assert_eq!(reused, [false, false, true, true]);
    drop(graph);
    // SAFETY: made above from this loader; nothing uses it any more.
    unsafe { loader.destroy_debug_utils_messenger(messenger, None) };

    let seen = std::mem::take(&mut *SEEN.lock().unwrap());
    let ids: Vec<&str> = seen.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids, ["VUID-vkCmdFillBuffer-dstBuffer-00029"; 4],
        "only the planted error, once per frame"
    );
    // Labels kept with a reused plan are the ones built for a new one.
    for (frame, later) in seen.iter().enumerate().skip(1) {
        assert_eq!(
            (&later.objects, &later.labels),
            (&seen[0].objects, &seen[0].labels),
            "frame {frame}"
        );
    }
    let s = &seen[0];
    assert_eq!(s.objects, ["graphics batch 0", "wrong"]);
    // Innermost first. This layer reports each open label twice, so the test asks for the
    // order and for as many of each: the pass's label opened once, like the pass's own.
    let names: Vec<&str> = s.labels.iter().map(|(n, _)| n.as_str()).collect();
    let inner = names.iter().take_while(|n| **n == "inner").count();
    assert!(inner >= 1, "{names:?}");
    assert_eq!(names[inner..], vec!["faulty fill"; inner], "{names:?}");
    // The pass's colour is its queue's in the plan diagram: planner queue 0, blue #2f6db5.
    let blue = [0x2f, 0x6d, 0xb5].map(|c| c as f32 / 255.0);
    for (_, [r, g, b, a]) in &s.labels[inner..] {
        assert_eq!(([*r, *g, *b], *a), (blue, 1.0));
    }

    let m = ctx.validation_messages();
    assert_eq!(m.count, 4, "{m}");
    // The context's own messenger keeps the same objects, names included.
    let names: Vec<Option<&str>> = m.messages[0]
        .objects
        .iter()
        .map(|o| o.2.as_deref())
        .collect();
    assert_eq!(names, [Some("graphics batch 0"), Some("wrong")], "{m}");
}
