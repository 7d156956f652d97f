//! Runs every sample (examples/) for a few frames with validation and synchronization
//! validation on, and asserts on what it prints: its figures, its own checks, exit status 0
//! and zero validation messages. The window and bring-your-own samples run under `xvfb-run`,
//! and their screenshots are compared with the frame recomputed on the host.
//!
//! The sample binaries are the ones `cargo test` (or `cargo test --workspace`) at the root
//! builds next to this test (`target/<profile>/examples/`): they belong to the
//! `vk-baton-examples` and `vk-baton-window-example` packages. `cargo test --test samples` or
//! `cargo test -p vk-baton` alone does not build them, so run `cargo build --examples` first
//! in that case.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Output};
use vk_baton_context::requirements::{Machine, Need};
use vk_baton_context::{Context, ContextOptions};

#[path = "samples/byo.rs"]
mod byo;
#[path = "samples/deferred.rs"]
mod deferred;
#[path = "samples/reference.rs"]
mod reference;
#[path = "report/checks.rs"]
mod report_checks;
#[path = "../examples/deferred/steady.rs"]
mod steady;
use reference::{compare_with_reference, read_rgba};
use report_checks::{assert_parses_as_html5, browser_check};

/// This test binary's path. A runner that starts it through a dynamic loader (CI's
/// `.ci/layer-run`) makes `current_exe` the loader, and passes the path as `argv[0]`.
fn this_test() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    if exe.parent().and_then(|p| p.file_name()) == Some("deps".as_ref()) {
        return exe;
    }
    PathBuf::from(std::env::args_os().next().expect("argv[0]"))
}

/// `target/<profile>/examples/<name>`, from this test binary's own path
/// (`target/<profile>/deps/samples-<hash>`).
fn example_path(name: &str) -> PathBuf {
    let exe = this_test();
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: `cargo test` at the root builds the examples; with a filter such as `--test samples` or `-p vk-baton`, run `cargo build --examples` first",
        path.display()
    );
    path
}

/// The command line that runs sample `name`: through the runner this test runs under, if it
/// asks for that in `VK_BATON_RUNNER` (CI's `.ci/layer-run`, which brings a newer validation
/// layer), so that the samples are validated as the tests are.
fn example_argv(name: &str) -> Vec<OsString> {
    let runner = std::env::var_os("VK_BATON_RUNNER").filter(|r| !r.is_empty());
    runner
        .into_iter()
        .chain([example_path(name).into_os_string()])
        .collect()
}

/// A command that runs sample `name` (see [`example_argv`]).
fn example(name: &str) -> Command {
    let argv = example_argv(name);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

fn run(cmd: &mut Command) -> (Output, String) {
    let out = cmd
        .env("VK_BATON_VALIDATION", "1")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the sample");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("--- stdout\n{stdout}--- stderr\n{stderr}");
    assert!(
        out.status.success(),
        "the sample failed with {}:\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("validation: 0 message(s) (layer on"),
        "validation must be on and silent:\n{stdout}"
    );
    (out, stdout)
}

fn line<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with `{prefix}` in:\n{stdout}"))
}

/// The first number after `after` in `text`.
fn number_after(text: &str, after: &str) -> f64 {
    let i = text
        .find(after)
        .unwrap_or_else(|| panic!("`{after}` not in `{text}`"))
        + after.len();
    let s: String = text[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    s.parse()
        .unwrap_or_else(|_| panic!("no number after `{after}` in `{text}`"))
}

#[test]
fn async_compute_runs_checks_and_reports_overlap() {
    let (_, out) =
        run(example("async_compute").args(["--frames", "6", "--size", "4", "--iters", "500"]));
    assert!(out.contains("check: simulation state after 6 steps: OK"));
    assert!(out.contains("check: render of frame 5: OK"));
    let times = line(&out, "per-queue GPU time per frame:");
    assert!(number_after(times, "graphics") > 0.0, "{times}");
    assert!(number_after(times, "async compute") > 0.0, "{times}");
    assert!(number_after(line(&out, "frame time:"), "frame time:") > 0.0);
    let overlap = line(&out, "overlap: serial/wall =");
    let achieved = number_after(overlap, "serial/wall =");
    let ideal = number_after(overlap, "ideal sum/max =");
    assert!(achieved > 0.0 && (1.0..=2.0).contains(&ideal), "{overlap}");
    if line(&out, "queues:").contains("single-queue device") {
        assert!(out.contains("no overlap: single-queue device"), "{out}");
    } else {
        assert!(out.contains("overlap achieved:"), "{out}");
    }
    // The steady-state plan is printed, with its per-queue batches.
    assert!(out.contains("plan of a steady-state frame"));
    let plan = &out[out.find("plan of a steady-state frame").unwrap()..];
    assert!(plan.contains("    pass   `simulate step N+1`\n"), "{plan}");
    assert!(plan.contains("    pass   `render frame N`\n"), "{plan}");
}

/// Headless writes its image and the plan's diagram where it runs, and prints each pass's GPU
/// time from the graph's timestamps.
#[test]
fn headless_writes_its_files_and_prints_per_pass_gpu_times() {
    let dir = std::env::temp_dir().join(format!("vk-baton-headless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = example("headless")
        .current_dir(&dir)
        .env("VK_BATON_VALIDATION", "1")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the sample");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!(
        "--- stdout\n{stdout}--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}", out.status);
    assert!(stdout.contains("validation: on (with synchronization validation)\n0 message(s)"));
    let gpu = &stdout[stdout.find("\ngpu times:\n").expect("the GPU times")..];
    for pass in ["draw mandelbrot", "download", "host read"] {
        let row = line(gpu, &format!("  {pass} "));
        // A duration (number_after fails without one), then the queue.
        number_after(row, pass);
        assert!(row.contains(" ms  on "), "{row}");
    }
    assert!(number_after(line(gpu, "  draw mandelbrot"), "draw mandelbrot") > 0.0);
    for file in ["headless.png", "plan.svg"] {
        let len = std::fs::metadata(dir.join(file)).map(|m| m.len());
        assert!(len.as_ref().is_ok_and(|&l| l > 0), "{file}: {len:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The cells of the results-table row that starts with `| label |`.
fn table_row<'a>(out: &'a str, label: &str) -> Vec<&'a str> {
    line(out, &format!("| {label} |"))
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Checks one row of the streaming table: its batching, positive throughputs, ratios that are
/// the medians of the run-by-run ratios printed for the stream (`runs` of them), and all
/// `consumed` batch executions (warm-ups included) verified on both sides.
fn check_stream_row(out: &str, label: &str, batching: &str, runs: usize, consumed: usize) {
    let row = table_row(out, label);
    assert_eq!(row.len(), 9, "{row:?}");
    assert_eq!(row[1], batching, "{row:?}");
    let gib = |cell: &str| number_after(cell, "");
    let (hand, up, hand_both, both) = (gib(row[2]), gib(row[3]), gib(row[5]), gib(row[6]));
    assert!(
        hand > 0.0 && up > 0.0 && hand_both > 0.0 && both > 0.0,
        "{row:?}"
    );
    // "LABEL: vk-baton / hand-written, run by run: uploads only A, B, C %; with the consumer D, E, F %"
    let by_run = line(
        out,
        &format!("{label}: vk-baton / hand-written, run by run: "),
    );
    let (uploads, consumer) = by_run
        .split_once("; with the consumer ")
        .unwrap_or_else(|| panic!("{by_run}"));
    let percents = |s: &str| -> Vec<f64> {
        let list = s.rsplit_once("only ").map_or(s, |(_, l)| l);
        let list = list.trim_end_matches(" %");
        let mut v: Vec<f64> = list.split(", ").map(|x| x.parse().unwrap()).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    for (ratio, cell_runs) in [(row[4], percents(uploads)), (row[7], percents(consumer))] {
        assert_eq!(cell_runs.len(), runs, "{by_run}");
        assert!(cell_runs.iter().all(|&p| p > 0.0), "{by_run}");
        assert!(ratio.ends_with('%'), "{row:?}");
        let pct = number_after(ratio, "");
        let n = cell_runs.len();
        let median = if n % 2 == 1 {
            cell_runs[n / 2]
        } else {
            (cell_runs[n / 2 - 1] + cell_runs[n / 2]) / 2.0
        };
        // Both printed to one decimal.
        assert!(
            (pct - median).abs() <= 0.051,
            "{pct} vs {median}: {row:?}, {by_run}"
        );
    }
    assert_eq!(
        row[8],
        format!("{consumed}/{consumed}, {consumed}/{consumed}"),
        "{row:?}"
    );
}

#[test]
fn streaming_upload_verifies_every_batch_and_reports_throughput() {
    let (_, out) = run(example("streaming_upload").args([
        "--count",
        "12",
        "--kib",
        "256",
        "--batch-mib",
        "1",
        "--fixed-cost",
        "4",
        "--min-ms",
        "5",
    ]));
    // Each timed run goes round the stream R times to last 5 ms (R from the machine's speed).
    // Best of 3 runs, each with a warm-up of 3 batches (once around the 3 slots) and the 3 R
    // timed ones: 3 (3 + 3 R) consumed batches per side.
    let batching = table_row(&out, "12 x 256 KiB")[1];
    let rounds: usize = (batching.strip_prefix("3 x 4 x "))
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("batches x items x rounds: {batching}"));
    assert!(
        line(&out, "12 x 256 KiB: ").contains(&format!(", {rounds} time(s) round per timed run;")),
        "{out}"
    );
    check_stream_row(&out, "12 x 256 KiB", batching, 3, 3 * (3 + 3 * rounds));
    assert!(
        out.contains("check: every consumed batch verified by the compute checksum on both sides"),
        "{out}"
    );
    // One upload pass carries the batch's four pieces, then the consumer.
    let plan = &out[out
        .find("plan of one batch with its consumer:")
        .expect("plan")..];
    assert_eq!(plan.matches("    pass   `upload`\n").count(), 1, "{plan}");
    assert_eq!(plan.matches("    pass   `verify`\n").count(), 1, "{plan}");
    let fixed = line(&out, "  upload only: vk-baton");
    assert!(number_after(fixed, "vk-baton") > 0.0, "{fixed}");
    assert!(number_after(fixed, "hand-written") > 0.0, "{fixed}");
    assert!(
        number_after(
            line(&out, "  stock UploadBuffer"),
            "a new staging buffer per upload):"
        ) > 0.0
    );
}

#[test]
fn streaming_upload_checks_every_mip_of_every_image() {
    let (_, out) = run(example("streaming_upload").args([
        "--images",
        "5",
        "--size",
        "64",
        "--batch-mib",
        "1",
        "--min-ms",
        "0",
    ]));
    // 3 runs of a 1-batch warm-up and the 1 timed batch (once round the stream).
    check_stream_row(&out, "5 images 64x64 RGBA8 + mips", "1 x 5 x 1", 3, 6);
    let plan = &out[out
        .find("plan of one batch with its consumer:")
        .expect("plan")..];
    assert_eq!(plan.matches("    pass   `upload`\n").count(), 1, "{plan}");
    assert_eq!(
        plan.matches("    pass   `copy back`\n").count(),
        5,
        "{plan}"
    );
    // The copies back follow one barrier command for all five images, back to back.
    assert!(
        plan.contains(&"    pass   `copy back`\n".repeat(5)),
        "{plan}"
    );
}

#[test]
fn streaming_upload_reuses_the_plan_on_every_slot() {
    // 5 batches of 48 images on 3 slots, after a warm-up of 4: the slots are alike, so once
    // each has been used with the consumer, every batch declares what the last one did, on
    // resources in the same states, and `finish()` reuses the last plan.
    let (_, out) = run(example("streaming_upload").args([
        "--images",
        "240",
        "--size",
        "64",
        "--batch-mib",
        "1",
        "--repeat",
        "1",
        "--min-ms",
        "0",
    ]));
    check_stream_row(&out, "240 images 64x64 RGBA8 + mips", "5 x 48 x 1", 1, 9);
    let line = line(&out, "240 images 64x64 RGBA8 + mips: ");
    // vk-baton's phases, then the hand-written side's.
    let (host, hand) = line.split_at(line.find("; hand-written host time").expect("hand phases"));
    assert!(hand.contains("record + submit"), "{line}");
    let (uploads, consumer) = host.split_at(host.find("with the consumer").expect("phases"));
    assert!(uploads.ends_with(" 5/5 plans reused; "), "{host}");
    assert!(consumer.ends_with(" 5/5 plans reused"), "{host}");
}

#[test]
fn incremental_hands_state_back_and_forth() {
    let (_, out) = run(example("incremental").args(["--frames", "2"]));
    assert_eq!(
        out.matches("check: 2048 of 2048 texels correct (OK)")
            .count(),
        2,
        "{out}"
    );
    // The download graph transitions from the GENERAL layout of the app's compute write.
    assert!(out.contains("GENERAL -> TRANSFER_SRC_OPTIMAL"), "{out}");
    // Graph -> app -> graph through the handoff: on one family, no wait (the upload went
    // to the same queue) and two barriers; across families, one wait (on the transfer
    // queue's release) and the buffer's acquire. The graphics timeline gets the app's value
    // per frame, and across families also the download's release of the image.
    let one_family = out.contains("graphics = family 0, transfer = family 0");
    let (waits, acquire, values) = if one_family {
        (0, "", [2, 5])
    } else {
        (
            1,
            " (the buffer's acquire from the transfer family)",
            [1, 3],
        )
    };
    for value in values {
        let line = format!(
            "  handoff: {waits} wait(s), 2 barrier(s){acquire}, signals `graphics` timeline value {value}\n"
        );
        assert!(out.contains(&line), "{line}\n{out}");
    }
    assert_eq!(
        out.matches(
            "the app's image is in GENERAL, owned by family Some(0): the next graph starts there"
        )
        .count(),
        2,
        "{out}"
    );
}

/// The host's copy of `shaders/anim.comp` (and of `expected_pixel` in examples/window.rs).
fn expected_pixel(x: u32, y: u32, w: u32, h: u32, t: u32) -> [u8; 4] {
    let dx = x as i32 - (w / 2) as i32;
    let dy = y as i32 - (h / 2) as i32;
    let d2 = (dx * dx + dy * dy) as u32;
    let r = ((d2 >> 5).wrapping_add(t.wrapping_mul(6))) & 255;
    let g = ((x ^ y).wrapping_add(t.wrapping_mul(3))) & 255;
    let b = (((x.wrapping_add(t.wrapping_mul(2))) >> 3) * 16 + (y >> 4) * 8) & 255;
    [r as u8, g as u8, b as u8, 255]
}

/// Pixels (of `w`×`h` RGBA) differing from frame `t` by more than 1 in any channel.
fn mismatches(rgba: &[u8], w: u32, h: u32, t: u32) -> usize {
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let i = ((y * w + x) * 4) as usize;
            let want = expected_pixel(x, y, w, h, t);
            (0..4).any(|c| rgba[i + c].abs_diff(want[c]) > 1)
        })
        .count()
}

/// What this machine's validation layer and device report: the samples run on that device.
/// A machine without a Vulkan device fails here.
fn machine() -> Machine {
    let opts = ContextOptions {
        validation: false,
        ..Default::default()
    };
    Context::with_options(opts)
        .expect("the samples need a Vulkan 1.3 device")
        .machine()
}

/// The window sample under Xvfb (Debian/Ubuntu: `apt-get install xvfb xauth`; it skips
/// without `xvfb-run`). Its presents signal fences where the device has
/// `VK_EXT_swapchain_maintenance1` (Mesa 25 and newer), and the recreation waits for them.
#[test]
fn window_under_xvfb_presents_and_screenshots_the_expected_frame() {
    let machine = machine();
    if machine.skips(&[Need::XVFB]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("vk-baton-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("shot.png");
    let frames = 10u32;
    let (_, out) = run(Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .args(example_argv("window"))
        .args([
            "--frames",
            &frames.to_string(),
            "--resize-at",
            "3",
            "--screenshot",
        ])
        .arg(&shot));
    let fences = Need::device_extension("VK_EXT_swapchain_maintenance1");
    if machine.skips_part("present fences on", &[fences]) {
        assert!(out.contains("present fences: off"), "{out}");
    } else {
        assert!(out.contains("present fences: on"), "{out}");
    }
    // The first swapchain, then the one recreated for the resized window.
    assert!(out.contains("swapchain: 640x480"), "{out}");
    assert!(
        out.contains("requested a resize to 800x600 after frame 3"),
        "{out}"
    );
    assert!(out.contains("swapchain: 800x600"), "{out}");
    assert!(out.contains(&format!("rendered {frames} frames")), "{out}");
    let shot_line = line(&out, "screenshot:");
    let t = number_after(shot_line, "animation frame") as u32;
    assert_eq!(t, frames - 1, "{shot_line}");

    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("the screenshot exists"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let (w, h) = (info.width, info.height);
    let rgba = &buf[..info.buffer_size()];
    // Not blank: many distinct colours.
    let mut colours: Vec<[u8; 3]> = rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 1000,
        "only {} distinct colours",
        colours.len()
    );
    // The expected frame, exactly (±1 per channel), and not its neighbours.
    assert_eq!(
        mismatches(rgba, w, h, t),
        0,
        "the screenshot is not frame {t}"
    );
    assert!(mismatches(rgba, w, h, t + 1) > (w * h / 2) as usize);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The window sample with `--replay` under Xvfb: frames whose passes and swapchain image came
/// before submit their recording again; the animation, whose frame number the host writes
/// into a buffer, is still exactly the frame's.
#[test]
fn window_under_xvfb_replays_and_screenshots_the_expected_frame() {
    let machine = machine();
    if machine.skips(&[Need::XVFB]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("vk-baton-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shot = dir.join("shot.png");
    let frames = 40u32;
    let (_, out) = run(Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x768x24"])
        .args(example_argv("window"))
        .args(["--frames", &frames.to_string(), "--replay", "--screenshot"])
        .arg(&shot));
    assert!(out.contains(&format!("rendered {frames} frames")), "{out}");
    // Each pairing of a swapchain image with a frame-in-flight slot records once, the first
    // frame's plan (from fresh states) once more, and the last frame its screenshot.
    let images = number_after(line(&out, "swapchain:"), "640x480,") as u32;
    let replayed = number_after(line(&out, "replayed"), "replayed") as u32;
    assert!(
        replayed >= frames - 1 - 2 * images && replayed < frames,
        "{replayed} of {frames} frames replayed with {images} images: {out}"
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("the screenshot exists"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let rgba = &buf[..info.buffer_size()];
    assert_eq!(mismatches(rgba, info.width, info.height, frames - 1), 0);
    let _ = std::fs::remove_dir_all(&dir);
}
