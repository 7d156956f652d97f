//! The bring-your-own-Vulkan sample (examples/byo.rs) under Xvfb: its app render pass drawing a
//! scene that the stock blit copies to the swapchain, and (`--direct`) drawing straight into
//! the swapchain image with `finalLayout` PRESENT_SRC_KHR.

use super::{example_argv, line, machine, number_after, run};
use std::path::Path;
use std::process::Command;
use vk_baton_context::requirements::Need;

/// The host's copy of `expected_pixel` in examples/byo/scene.rs: frame `t`'s background and bar.
fn expected_pixel(x: u32, y: u32, w: u32, h: u32, t: u32) -> [u8; 4] {
    let x0 = (t * 24) % (w - 64);
    if x >= x0 && x < x0 + 64 && y >= h / 4 && y < 3 * h / 4 {
        return [255, 255, 255, 255];
    }
    let r = (t * 16) & 255;
    [r as u8, 64, 255 - r as u8, 255]
}

/// Runs the sample under Xvfb for `frames` frames with `extra` options and a screenshot of the
/// last one, checks what every run prints, and the screenshot: frame `frames - 1` exactly, and
/// not its neighbour. Returns the sample's output.
fn run_and_check_the_screenshot(frames: u32, extra: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!(
        "vk-baton-byo{}-{}",
        extra.concat(),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("shot.png");
    let (_, out) = run(Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .args(example_argv("byo"))
        .args(["--frames", &frames.to_string(), "--screenshot"])
        .arg(&shot)
        .args(extra));
    assert!(out.contains("swapchain: 640x480"), "{out}");
    assert!(out.contains(&format!("rendered {frames} frames")), "{out}");
    let t = number_after(line(&out, "screenshot:"), "frame") as u32;
    assert_eq!(t, frames - 1);
    check_frame(&shot, t);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The PNG at `path` is frame `t` exactly, and not frame `t + 1`.
fn check_frame(path: &Path, t: u32) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("the screenshot exists"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let (w, h) = (info.width, info.height);
    let rgba = &buf[..info.buffer_size()];
    let wrong = |t: u32| {
        (0..w * h)
            .filter(|&p| {
                let i = (p * 4) as usize;
                rgba[i..i + 4] != expected_pixel(p % w, p / w, w, h, t)
            })
            .count()
    };
    assert_eq!(wrong(t), 0, "the screenshot is not frame {t}");
    assert!(wrong(t + 1) > (w * h / 2) as usize);
}

/// The image barriers of each frame's plan, from `image barriers by frame: 0, 0, 2`.
fn image_barriers_by_frame(out: &str) -> Vec<usize> {
    let l = line(out, "image barriers by frame: ");
    let list = &l["image barriers by frame: ".len()..];
    list.split(", ").map(|n| n.parse().unwrap()).collect()
}

#[test]
fn bring_your_own_vulkan_under_xvfb_presents_and_screenshots_the_expected_frame() {
    if machine().skips(&[Need::XVFB]) {
        return;
    }
    let out = run_and_check_the_screenshot(6, &[]);
    // The app's render pass left the scene in TRANSFER_SRC_OPTIMAL: the blit only orders.
    assert!(
        out.contains("`scene` mips 0+1 layers 0+1: TRANSFER_SRC_OPTIMAL -> TRANSFER_SRC_OPTIMAL"),
        "{out}"
    );
}

/// Issue 40, 2.3 and 2.4: the app's own render pass draws into the acquired swapchain image,
/// declared `.initial_layout(UNDEFINED).final_layout(PRESENT_SRC_KHR)`, and the graph presents
/// it. The render pass moves the image to PRESENT_SRC_KHR in its dependency to
/// `VK_SUBPASS_EXTERNAL`, outside the draw's stages: a present signalled at those stages alone
/// is a present after an unordered write (layer 1.4.309 and newer report
/// SYNC-HAZARD-PRESENT-AFTER-WRITE on every frame; 1.3.239 sees nothing), so the graph signals
/// it at ALL_COMMANDS. And the graph moves the image nowhere first, as the render pass does:
/// the acquire's wait at COLOR_ATTACHMENT_OUTPUT chains with the render pass's incoming
/// external dependency, so a frame has no image barrier at all (it had one, UNDEFINED ->
/// COLOR_ATTACHMENT_OPTIMAL, which the render pass then repeated). The last frame also
/// downloads the swapchain image for the screenshot: to TRANSFER_SRC_OPTIMAL and back.
///
/// Run under CI's `.ci/layer-run` (layer 1.4.363), the zero-message check is what catches a
/// narrow signal.
#[test]
fn bring_your_own_render_pass_into_the_swapchain_presents_after_its_final_transition() {
    if machine().skips(&[Need::XVFB]) {
        return;
    }
    let frames = 6;
    let out = run_and_check_the_screenshot(frames, &["--direct"]);
    let plan = &out[out.find("plan of frame 0:").expect("the plan")..];
    let plan = &plan[..plan.find("rendered ").expect("the plan's end")];
    // The present's binary signal takes in the move to PRESENT_SRC_KHR.
    let passes =
        "    pass   `acquire`\n    pass   `scene (app render pass)`\n    pass   `present`\n";
    assert!(plan.contains(passes), "{plan}");
    let signal = line(plan, "    signal binary");
    assert!(signal.ends_with(" at ALL_COMMANDS"), "{plan}");
    assert!(!plan.contains("barrier"), "{plan}");
    let mut barriers = image_barriers_by_frame(&out);
    assert_eq!(barriers.len(), frames as usize, "{out}");
    // The screenshot frame: PRESENT_SRC_KHR -> TRANSFER_SRC_OPTIMAL -> PRESENT_SRC_KHR.
    assert_eq!(barriers.pop(), Some(2), "{out}");
    assert!(barriers.iter().all(|&n| n == 0), "{barriers:?}\n{out}");
}

/// The same with a render pass that has only its incoming external dependency, as many
/// swapchain render passes do (no screenshot: a barrier after the render pass would not chain
/// from its move to PRESENT_SRC_KHR). The present's ALL_COMMANDS signal is then all that orders
/// that move before the present. With the signal at COLOR_ATTACHMENT_OUTPUT, as the planner
/// made it before issue 40, 2.3, layers 1.4.309 and 1.4.363 report on every frame:
/// `SYNC-HAZARD-PRESENT-AFTER-WRITE`, "vkQueuePresentKHR presents swapchain image 0 (...),
/// which was previously written during an image layout transition initiated by
/// vkCmdEndRenderPass2[scene (app render pass)]". Layer 1.3.239 sees nothing either way: this
/// test catches it under CI's `.ci/layer-run`.
#[test]
fn bring_your_own_render_pass_without_an_outgoing_dependency_presents_in_order() {
    if machine().skips(&[Need::XVFB]) {
        return;
    }
    let frames = 4;
    let (_, out) = run(Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .args(example_argv("byo"))
        .args(["--frames", &frames.to_string()])
        .args(["--direct", "--no-outgoing-dependency"]));
    assert!(out.contains(&format!("rendered {frames} frames")), "{out}");
    assert!(
        line(&out, "    signal binary").ends_with(" at ALL_COMMANDS"),
        "{out}"
    );
    assert_eq!(image_barriers_by_frame(&out), [0; 4], "{out}");
}
