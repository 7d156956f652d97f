//! The deferred sample: transient aliasing, the hand-written frame beside the library's, and
//! the frame in `GENERAL` layouts.

use super::*;

/// The number before ` bytes` in the line that starts with `prefix`.
fn bytes_in(out: &str, prefix: &str) -> u64 {
    number_after(line(out, prefix), prefix) as u64
}

#[test]
fn deferred_aliases_transients_within_the_targets_and_renders_the_same_without() {
    let dir = std::env::temp_dir().join(format!("vk-baton-deferred-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png_path = dir.join("deferred.png");
    let (_, out) = run(example("deferred")
        .args(["--frames", "4", "--width", "320", "--height", "180"])
        .arg("--png")
        .arg(&png_path));
    let transients = number_after(line(&out, "transients:"), "transients:");
    assert!(transients >= 15.0, "{out}");
    let with = bytes_in(&out, "transient memory with aliasing:");
    let without = bytes_in(&out, "transient memory without aliasing:");
    let bound = bytes_in(&out, "live-set lower bound:");
    // The targets, from the printed bytes: at most 1.05x the lower bound, at least 30 %
    // below no aliasing.
    assert!(
        bound > 0 && bound <= with && with * 100 <= bound * 105,
        "{out}"
    );
    assert!(with * 10 <= without * 7, "{out}");
    assert!(
        line(&out, "with aliasing:").contains("(target at most 1.05x: OK)"),
        "{out}"
    );
    // What one execution's heap set really holds: the plan's heaps, each rounded up to the
    // device's bufferImageGranularity, and each transient in memory of its own without.
    let allocated = line(&out, "allocated for one execution:");
    let (a, b) = (
        number_after(allocated, "execution:") as u64,
        number_after(allocated, "with aliasing,") as u64,
    );
    assert!(with <= a && a < with + 64 * 1024, "{allocated}");
    assert!(without <= b && a < b, "{allocated}");
    // Frames 2 and 3 steady, or one of them if it made the heap set of the second frame in
    // flight (the first two frames did not overlap; the sample says which).
    let steady = line(&out, "steady frames:");
    let frames = number_after(steady, "steady frames:") as u32;
    assert!(
        (1..=2).contains(&frames)
            && steady.contains("(frames 2 to 3")
            && steady.contains(&format!("); plans reused {frames},"))
            && steady.ends_with("heaps allocated 0, Vulkan objects created 0 (OK)"),
        "{out}"
    );
    assert!(
        out.contains("check: frame 3 without aliasing is identical bit for bit (230400 bytes)"),
        "{out}"
    );
    // The picture: the right size, not blank, and the reference frame.
    let (w, h, rgba) = read_rgba(&png_path);
    assert_eq!((w, h), (320, 180));
    let mut colours: Vec<[u8; 3]> = rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 1000,
        "only {} distinct colours",
        colours.len()
    );
    if line(&out, "device:").contains("llvmpipe") {
        compare_with_reference(&rgba, &png_path);
    } else {
        println!("not lavapipe: the picture is not compared with the reference (made on lavapipe)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sample's steady frames, from the graph's stats around each frame: as on an H200 that
/// finished frames 0 to 2 each before the next bound, so that frame 3, the last, made the
/// heap set of the second frame in flight. The sample counted steady frames from a snapshot
/// taken before each frame, so it missed that the last frame's objects were such a set, and
/// failed ("heaps allocated 1, Vulkan objects created 36 (MISSED)").
#[test]
fn deferred_steady_frames_leave_out_a_late_heap_set_of_a_frame_in_flight() {
    let stats = |sets, heaps, objects| {
        let mut s = vk_baton::TransientStats::default();
        (s.sets, s.heap_allocations, s.objects_created) = (sets, heaps, objects);
        s
    };
    let one_set = stats(1, 1, 53);
    let two_sets = stats(2, 2, 89);
    let frame = |late_set_at: u32| {
        let mut steady = steady::Steady::new(2);
        let mut before = vk_baton::TransientStats::default();
        for n in 0..4 {
            let after = if n == 0 || n < late_set_at {
                one_set
            } else {
                two_sets
            };
            steady.frame(
                n,
                (&before, &after),
                n > 1,
                std::time::Duration::from_millis(1),
            );
            before = after;
        }
        steady
    };
    for late in [2, 3] {
        let steady = frame(late);
        assert!(steady.ok(), "set at frame {late}");
        assert_eq!((steady.frames, steady.reused, steady.made), (1, 1, (0, 0)));
        assert_eq!(steady.late_sets, [late]);
        assert_eq!(steady.time, std::time::Duration::from_millis(1));
        assert_eq!(
            steady.which(4),
            format!("frames 2 to 3 but {late}, which made the heap set of a frame in flight")
        );
    }
    // Both sets made by the first two frames: both later frames steady.
    let steady = frame(1);
    assert!(steady.ok() && steady.frames == 2 && steady.late_sets.is_empty());
    // A third set, or objects without a new set, are what a steady frame must not make.
    let mut steady = steady::Steady::new(2);
    steady.frame(2, (&two_sets, &stats(3, 3, 125)), true, Default::default());
    assert!(!steady.ok() && steady.made == (1, 36));
    let mut steady = steady::Steady::new(2);
    steady.frame(2, (&two_sets, &stats(2, 2, 90)), true, Default::default());
    assert!(!steady.ok());
    // A frame that did not reuse its plan is not steady either; nor is a run with no steady frame.
    let mut steady = steady::Steady::new(2);
    steady.frame(2, (&two_sets, &two_sets), false, Default::default());
    assert!(!steady.ok());
    assert!(!steady::Steady::new(2).ok());
}

/// The deferred frame written by hand beside the library's (`--compare`), briefly: both sides
/// run under validation, with the layer's shader-access heuristic on (`Context` sets it), so
/// that hazards through descriptors (the compute passes' storage buffers and images, which the
/// layer does not check by default) are reported too; the hand-written frame gives the
/// library's picture bit for bit; every timed library frame reuses its plan; both sides' times
/// are printed. Five times:
/// the hand side's one-queue frame, then (`--hand-split`) its two-queue frame on the one queue
/// lavapipe has, so that its semaphores and the barriers around them are validated too, then
/// (`--held`) the library side executing a held plan, which no timed frame re-plans, then with
/// `--replay`: the builder loop's frames and then the held plan's submit their recordings
/// again (the held plan's timestamp passes key on the slot; `tests/replay/keys.rs` shows the
/// refresh of a held plan's keys alone).
#[test]
fn deferred_compare_runs_the_hand_written_frame_correctly_with_the_same_picture() {
    for split in [
        &[][..],
        &["--hand-split"][..],
        &["--held"][..],
        &["--replay"][..],
        &["--held", "--replay"][..],
    ] {
        // With replay, 6 timed frames: all but one replay where a frame that misses keeps
        // its recording beside the others (1 of 6 when it recorded over them).
        let replay = split.contains(&"--replay");
        let frames = if replay { "6" } else { "3" };
        let (_, out) = run(example("deferred")
            .args([
                "--compare",
                "--frames",
                frames,
                "--width",
                "160",
                "--height",
                "90",
            ])
            .args(["--shadow", "256"])
            .args(split));
        let check = line(&out, "check: frame");
        assert!(
            check.contains("hand-written side is identical bit for bit to the library's"),
            "{out}"
        );
        assert!(
            line(&out, "library plans reused:").starts_with(&format!(
                "library plans reused: {frames} of {frames} timed frames (OK)"
            )),
            "{out}"
        );
        let held = split.contains(&"--held");
        let mode = line(&out, "library side:");
        assert!(
            mode.starts_with(if held {
                "library side: held plan"
            } else {
                "library side: builder loop"
            }),
            "{out}"
        );
        if held {
            assert!(
                line(&out, "library held plan:")
                    .ends_with(&format!("0 of them in the {frames} timed frames")),
                "{out}"
            );
        }
        if replay {
            // The timed frames submit the warm-up's recordings again, but for at most one
            // per frame in flight (see deferred/compare.rs).
            let replayed = line(&out, "library frames replayed:");
            let n = number_after(replayed, "library frames replayed:") as u32;
            assert!(
                (4..=6).contains(&n) && replayed.ends_with("(target: all but at most 2: OK)"),
                "{out}"
            );
            // The floor: the hand-written frame's recordings submitted again, the same
            // picture.
            assert!(
                line(&out, "check: frame 10 of the hand replay side")
                    .contains("identical bit for bit to the library's"),
                "{out}"
            );
            line(&out, "hand replay cpu per frame");
        }
        for side in ["library", "hand   "] {
            for what in ["cpu", "gpu"] {
                let l = line(&out, &format!("{side} {what} per frame"));
                assert!(number_after(l, "median") > 0.0, "{out}");
            }
        }
        line(&out, "ratios library / hand: cpu");
    }
}

/// `--replay`, with the builder loop and with a held plan: each frame's passes give replay keys
/// (the frame number is in memory the host writes), so after the first frame on each heap set
/// the frames submit their recordings again. Frame 3, a replay, is the reference picture (the
/// frame number moves the point lights: a stale number would show), under validation.
#[test]
fn deferred_replays_steady_frames_with_the_reference_picture() {
    for held in [false, true] {
        let dir = std::env::temp_dir().join(format!(
            "vk-baton-deferred-replay-{held}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let png_path = dir.join("deferred.png");
        let (_, out) = run(example("deferred")
            .args(["--frames", "4", "--width", "320", "--height", "180"])
            .arg("--replay")
            .args(if held { &["--held"][..] } else { &[][..] })
            .arg("--png")
            .arg(&png_path));
        // Frame 0 (its own plan: it waits for the upload) and the first frame on each heap
        // set record; every other frame replays.
        let replay = line(&out, "replay: replayed");
        let replayed = number_after(replay, "replay: replayed") as u32;
        let sets = number_after(replay, "; ") as u32;
        assert!(
            replay.ends_with("heap set(s)) (OK)")
                && (1..=3).contains(&sets)
                && replayed > 0
                && replayed >= 4 - 1 - sets,
            "{out}"
        );
        assert!(
            out.contains("check: frame 3 without aliasing is identical bit for bit"),
            "{out}"
        );
        let (w, h, rgba) = read_rgba(&png_path);
        assert_eq!((w, h), (320, 180));
        if line(&out, "device:").contains("llvmpipe") {
            compare_with_reference(&rgba, &png_path);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The deferred frame with every image use in `GENERAL` (`--general-layouts`): frame 3 is the
/// reference picture, under validation with synchronization validation.
#[test]
fn deferred_in_general_layouts_renders_the_reference_picture() {
    let dir = std::env::temp_dir().join(format!("vk-baton-general-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png_path = dir.join("deferred.png");
    let (_, out) = run(example("deferred")
        .args(["--frames", "4", "--width", "320", "--height", "180"])
        .arg("--general-layouts")
        .arg("--png")
        .arg(&png_path));
    assert_eq!(
        line(&out, "image layouts:"),
        "image layouts: General",
        "{out}"
    );
    let (w, h, rgba) = read_rgba(&png_path);
    assert_eq!((w, h), (320, 180));
    if line(&out, "device:").contains("llvmpipe") {
        compare_with_reference(&rgba, &png_path);
    } else {
        println!("not lavapipe: the picture is not compared with the reference (made on lavapipe)");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--report FILE.html`: the report of the upload and the last frames, with GPU times and no
/// findings, parses as HTML5 and loads in Chromium, where a click on a barrier of the last
/// frame shows its stages, layouts and cause (`tests/report/browser.py`). Screenshots go to
/// `target/tmp/deferred-report/`.
#[test]
fn deferred_writes_a_frame_report_that_a_browser_draws() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("deferred-report");
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("deferred.html");
    let (_, out) = run(example("deferred")
        .args(["--frames", "4", "--width", "320", "--height", "180"])
        .arg("--report")
        .arg(&report)
        .arg("--png")
        .arg(dir.join("deferred.png")));
    assert!(
        out.contains("(report of the upload and the last 3 frames"),
        "{out}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    // The upload and frames 1 to 3, each timed, none with a finding.
    for label in ["upload", "frame 1", "frame 2", "frame 3"] {
        assert!(html.contains(&format!("\"label\":\"{label}\"")), "{label}");
    }
    assert_eq!(html.matches("\"axis\":\"measured\"").count(), 4);
    assert_eq!(html.matches("\"findings\":[]").count(), 4);
    let machine = machine();
    if !machine.skips_part("html5lib", &[Need::PythonModule("html5lib".into())]) {
        assert_parses_as_html5(&report);
    }
    if !machine.skips_part("chromium", &[Need::Program("chromium".into())]) {
        // The last frame (the upload, first, has no barrier on a single queue).
        let text = browser_check(&report, 3, &dir, &[]);
        println!("deferred report: {text}");
    }
}
