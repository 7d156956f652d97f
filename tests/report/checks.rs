//! The two outside checks of a report file, shared by `tests/report.rs` and the deferred
//! sample's test: an HTML5 parse (Python's html5lib, strict) and the browser check
//! (`tests/report/browser.py`). The callers decide whether the machine has what each needs.

use std::path::Path;
use std::process::Command;

/// Panics unless `report` parses as HTML5 without an error.
pub fn assert_parses_as_html5(report: &Path) {
    let check =
        "import html5lib, sys; html5lib.HTMLParser(strict=True).parse(open(sys.argv[1], 'rb'))";
    let out = Command::new("python3")
        .args(["-c", check])
        .arg(report)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", report.display());
}

/// Runs the browser check on frame `frame` of `report` (screenshots into `out_dir`), with
/// the extra strings the clicked barrier's details must hold; panics if it fails. Returns
/// what it printed (the load time and the counts drawn).
pub fn browser_check(report: &Path, frame: usize, out_dir: &Path, expect: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/report/browser.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["--frame", &frame.to_string(), "chromium"])
        .arg(report)
        .arg(out_dir)
        .args(expect)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}{text}", report.display());
    text
}
