//! The page: the viewer's markup, stylesheet and scripts around the report's data.

use super::json::{string, Strings};

const BODY: &str = include_str!("viewer/body.html");
const STYLE: &str = include_str!("viewer/viewer.css");
/// The viewer's scripts, in the order they run (`viewer/README.md`).
const SCRIPTS: &[&str] = &[
    include_str!("viewer/viewer.js"),
    include_str!("viewer/timeline.js"),
    include_str!("viewer/panels.js"),
    include_str!("viewer/resources.js"),
];

/// The whole HTML file of a report titled `title`, of `frames` (JSON objects) whose strings are
/// in `strings`.
pub(super) fn html(title: &str, strings: &Strings, frames: &[String]) -> String {
    let data: usize = frames.iter().map(String::len).sum();
    let mut out = String::with_capacity(BODY.len() + STYLE.len() + data + 4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>");
    escape(&mut out, title);
    out.push_str("</title>\n<style>\n");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(BODY);
    out.push_str("<script type=\"application/json\" id=\"report-data\">{\"title\":");
    string(&mut out, title);
    out.push_str(",\"strings\":");
    strings.write(&mut out);
    out.push_str(",\"frames\":[");
    out.push_str(&frames.join(",\n"));
    out.push_str("]}</script>\n");
    for script in SCRIPTS {
        out.push_str("<script>\n");
        out.push_str(script);
        out.push_str("</script>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Appends `s` as HTML text.
fn escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}
