//! The frame report (feature `report`): what the file holds, its size, that it parses as HTML5,
//! and that a real browser draws it and explains a barrier when one is clicked.
//!
//! The browser and parser checks need Chromium and Python's html5lib; each skips, naming what
//! is missing, where the machine lacks it (CI installs both and requires them).

#[path = "report/checks.rs"]
mod checks;

use checks::{assert_parses_as_html5, browser_check};
use std::path::{Path, PathBuf};
use vk_baton::ash::vk;
use vk_baton::plan::*;
use vk_baton::Access;
use vk_baton_context::requirements::{Machine, Need};

const GCT: vk::QueueFlags = vk::QueueFlags::from_raw(
    vk::QueueFlags::GRAPHICS.as_raw()
        | vk::QueueFlags::COMPUTE.as_raw()
        | vk::QueueFlags::TRANSFER.as_raw(),
);

fn queues() -> Vec<QueueDecl> {
    vec![
        QueueDecl::new("graphics", 0, GCT),
        QueueDecl::new(
            "compute",
            1,
            vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
        ),
        QueueDecl::new("transfer", 2, vk::QueueFlags::TRANSFER),
    ]
}

fn pass(name: &str, queue: usize, uses: &[(usize, Access)]) -> PassDecl {
    (uses.iter()).fold(PassDecl::new(name, queue), |p, &(r, a)| {
        p.with_use(UseDecl::new(r, a))
    })
}

/// A small frame over three families: an upload on the transfer queue, async compute, two
/// transients that share memory, and a draw that samples what compute wrote.
///
/// ```text
/// transfer:  [upload] --release-.
/// compute:        '---acquire-> [simulate] --release--.
/// graphics:  [shadow] [gbuffer]      ...acquire-> [light] [post]
/// ```
fn frame() -> PlanInput {
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::SAMPLED;
    let color = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
    let memory = TransientMemory::image(1 << 20, 256, 1);
    PlanInput {
        queues: queues(),
        resources: vec![
            ResourceDecl::buffer(
                "particles",
                4096,
                vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
            ),
            ResourceDecl::image("lit", 1, 1, storage),
            ResourceDecl::image(
                "shadow map",
                1,
                1,
                vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
            )
            .aspect(vk::ImageAspectFlags::DEPTH),
            ResourceDecl::image("gbuffer", 1, 1, color).transient(memory),
            ResourceDecl::image("bloom", 1, 1, color).transient(memory),
            ResourceDecl::image("frame", 1, 1, color | vk::ImageUsageFlags::TRANSFER_SRC),
        ],
        passes: vec![
            pass("upload", 2, &[(0, Access::COPY_WRITE)]),
            pass("shadow", 0, &[(2, Access::DEPTH_ATTACHMENT_WRITE)]),
            pass("gbuffer", 0, &[(3, Access::COLOR_ATTACHMENT_WRITE)]),
            pass(
                "simulate",
                1,
                &[
                    (0, Access::COMPUTE_SHADER_READ),
                    (1, Access::COMPUTE_SHADER_WRITE),
                ],
            ),
            pass(
                "light",
                0,
                &[
                    (1, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    (2, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    (3, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    (5, Access::COLOR_ATTACHMENT_WRITE),
                ],
            ),
            pass(
                "bloom",
                0,
                &[
                    (5, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    (4, Access::COLOR_ATTACHMENT_WRITE),
                ],
            ),
            pass(
                "post",
                0,
                &[
                    (4, Access::FRAGMENT_SHADER_SAMPLED_READ),
                    (5, Access::COLOR_ATTACHMENT_WRITE),
                ],
            ),
        ],
    }
}

/// `n` passes on three queues over 48 buffers, in runs of ten per queue: pass `i` reads buffer
/// `i` and writes buffer `i + 1` (mod 48), so each pass needs a barrier after the one before
/// it on its queue, and each run waits for the last. Buffers are concurrent: no ownership
/// transfers, as in a renderer that shares them.
fn many(n: usize) -> PlanInput {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::STORAGE_BUFFER;
    let buffers = 48;
    let buffer = |i| ResourceDecl::buffer(&format!("buffer {i}"), 1024, usage).concurrent();
    PlanInput {
        queues: queues(),
        resources: (0..buffers).map(buffer).collect(),
        passes: (0..n)
            .map(|i| {
                let q = (i / 10) % 3;
                let (read, write) = match q {
                    2 => (Access::COPY_READ, Access::COPY_WRITE),
                    _ => (Access::COMPUTE_SHADER_READ, Access::COMPUTE_SHADER_WRITE),
                };
                let uses = [(i % buffers, read), ((i + 1) % buffers, write)];
                pass(&format!("pass {i}"), q, &uses)
            })
            .collect(),
    }
}

/// Where a test writes the files a person looks at: `target/report/NAME`.
fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report")
        .join(name);
    std::fs::create_dir_all(&dir).expect("the output folder");
    dir
}

fn write(name: &str, html: &str) -> PathBuf {
    let path = out_dir(name).join("report.html");
    std::fs::write(&path, html).expect("the report is written");
    path
}

/// The frame's data names each barrier entry's cause, its layouts and the ownership
/// transfers; the page carries no reference to anything outside it.
#[test]
fn the_report_holds_each_barrier_and_its_cause_and_nothing_from_outside() {
    let p = plan(&frame()).unwrap();
    let html = p.to_html(None, &[]);
    for text in [
        "for `simulate`, after `upload`",
        "for `light`, after `simulate`",
        "for `post`, after `bloom`",
        "SHADER_READ_ONLY_OPTIMAL",
        "\"axis\":\"order\"",
    ] {
        assert!(html.contains(text), "the report lacks {text:?}");
    }
    // Shared memory: two transients in one heap.
    assert!(
        html.contains("\"memory\":{\"heaps\":"),
        "the transients' heap map"
    );
    // Only SVG's namespace name, which is never fetched, and references within the page.
    let outside = html
        .replace("\"http://www.w3.org/2000/svg\"", "")
        .replace("url(#", "");
    for refers in ["http://", "https://", "src=", "@import", "url(", "//fonts"] {
        assert!(
            !outside.contains(refers),
            "the report refers outside itself: {refers:?}"
        );
    }
}

/// The same plan gives the same file, byte for byte; a frame added to a report adds its data.
#[test]
fn the_same_plan_gives_the_same_file() {
    let p = plan(&frame()).unwrap();
    assert_eq!(p.to_html(None, &[]), p.to_html(None, &[]));
    let mut report = vk_baton::report::Report::new("two frames");
    report.add_frame("frame 0", &p, None, &[]);
    report.add_frame("frame 1", &plan(&many(30)).unwrap(), None, &[]);
    assert_eq!(report.frames(), 2);
    let html = report.to_html();
    assert!(html.contains("\"label\":\"frame 0\"") && html.contains("\"label\":\"frame 1\""));
}

/// The report of 1,000 passes on three queues stays under 1 MB.
#[test]
fn a_report_of_1000_passes_on_three_queues_is_at_most_1_mb() {
    let p = plan(&many(1000)).unwrap();
    let (barriers, waits) = (p.barrier_commands(), p.semaphore_waits());
    assert!(
        barriers > 800 && waits >= 99,
        "a busy frame: {barriers} barrier commands, {waits} waits"
    );
    let html = p.to_html(None, &[]);
    write("many", &html);
    assert!(html.len() <= 1 << 20, "{} bytes", html.len());
}

/// Each report parses as HTML5 without an error (Python's html5lib, strict).
#[test]
fn reports_parse_as_html5() {
    if Machine::default().skips(&[Need::PythonModule("html5lib".into())]) {
        return;
    }
    for (name, input) in [("frame", frame()), ("many", many(1000))] {
        assert_parses_as_html5(&write(name, &plan(&input).unwrap().to_html(None, &[])));
    }
}

/// Chromium loads the report with no script error or failed request, draws lanes, passes,
/// barriers and waits, and a click on an ownership transfer's barrier shows its stages,
/// layouts, families and cause. Screenshots (light, clicked, dark) go to
/// `target/tmp/report/{frame,many}/`.
#[test]
fn chromium_draws_the_report_and_a_click_explains_a_barrier() {
    if Machine::default().skips(&[Need::Program("chromium".into())]) {
        return;
    }
    let cases = [
        ("frame", frame(), vec!["family 1 → 0", "acquire", "GENERAL"]),
        ("many", many(1000), vec!["COMPUTE_SHADER", "after `pass"]),
    ];
    for (name, input, expect) in cases {
        let path = write(name, &plan(&input).unwrap().to_html(None, &[]));
        let text = browser_check(&path, 0, &out_dir(name), &expect);
        println!("{name}: {text}");
    }
}

/// A plan the verifier rejects is still reported, each finding where it is: the barrier that
/// moves the shadow map to where `light` samples it is taken out, and Chromium draws a marker
/// for every finding `Plan::verify` gives (`tests/report/browser.py` counts them against the
/// data). Screenshots go to `target/tmp/report/broken/`.
#[test]
fn a_plan_the_verifier_rejects_shows_its_findings() {
    let mut p = plan(&frame()).unwrap();
    let shadow = 2;
    let mut removed = 0;
    for b in p.queues.iter_mut().flat_map(|q| &mut q.batches) {
        for c in &mut b.commands {
            if let vk_baton::plan::Command::Barrier(bar) = c {
                let before = bar.images.len();
                bar.images.retain(|e| {
                    !(e.resource == shadow
                        && e.new_layout == vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
                });
                removed += before - bar.images.len();
            }
        }
    }
    assert_eq!(removed, 1, "one barrier entry taken out");
    let findings = p
        .verify()
        .expect_err("the verifier finds the missing barrier");
    let html = p.to_html(None, &findings);
    assert!(
        html.contains("on `shadow map`"),
        "the findings name the resource"
    );
    let path = write("broken", &html);
    if Machine::default().skips_part("chromium", &[Need::Program("chromium".into())]) {
        return;
    }
    let text = browser_check(&path, 0, &out_dir("broken"), &[]);
    assert!(
        text.contains(&format!("\"findings\": {}", findings.len())),
        "{text}"
    );
}
