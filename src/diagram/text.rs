//! Text on the picture: how wide it is, cutting it short to fit, and escaping it for XML.
//!
//! There is no font to measure with, so widths are estimated from DejaVu Sans' advance widths
//! (a wide font, the usual fallback), erring wide: an estimate that is too wide leaves a little
//! space, one too narrow would let text spill over its neighbour.

/// The font of every text in the picture.
pub(super) const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

/// How much wider bold text runs.
pub(super) const BOLD: f32 = 1.12;

/// The estimated width of `s` at `size` pixels.
pub(super) fn width(s: &str, size: f32) -> f32 {
    s.chars().map(em).sum::<f32>() * size
}

/// A character's advance in ems: DejaVu Sans' advance widths, rounded up.
fn em(c: char) -> f32 {
    const LOWER: [f32; 26] = [
        0.62, 0.64, 0.56, 0.64, 0.62, 0.36, 0.64, 0.64, 0.28, 0.28, 0.58, 0.28, 0.98, //
        0.64, 0.62, 0.64, 0.64, 0.42, 0.53, 0.40, 0.64, 0.60, 0.82, 0.60, 0.60, 0.53,
    ];
    const UPPER: [f32; 26] = [
        0.69, 0.69, 0.70, 0.77, 0.64, 0.58, 0.78, 0.76, 0.30, 0.30, 0.66, 0.56, 0.87, //
        0.75, 0.79, 0.61, 0.79, 0.70, 0.64, 0.62, 0.74, 0.69, 0.99, 0.69, 0.62, 0.69,
    ];
    match c {
        'a'..='z' => LOWER[c as usize - 'a' as usize],
        'A'..='Z' => UPPER[c as usize - 'A' as usize],
        '0'..='9' => 0.64,
        ' ' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | '`' => 0.34,
        '(' | ')' | '[' | ']' | '{' | '}' | '-' | '"' | '/' | '\\' => 0.46,
        '%' | '<' | '>' | '=' | '+' | '~' | '&' | '@' | '#' => 0.84,
        '_' | '$' | '*' | '?' | '^' => 0.64,
        '…' => 1.0,
        c if c.is_ascii() => 0.7,
        c if is_wide(c) => 1.05,
        _ => 0.8,
    }
}

/// East Asian wide characters and emoji: about one em each.
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD)
}

/// `s` on one line, cut short with `…` so that it fits in `max` pixels at `size`. The flag
/// says whether it was cut (the full text then belongs in a tooltip).
pub(super) fn fit(s: &str, size: f32, max: f32) -> (String, bool) {
    // Line breaks and other control characters would break the line or the XML.
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if width(&one_line, size) <= max {
        return (one_line, false);
    }
    let budget = max - width("…", size);
    let mut used = 0.0;
    let mut out = String::new();
    for c in one_line.chars() {
        used += em(c) * size;
        if used > budget {
            break;
        }
        out.push(c);
    }
    out.push('…');
    (out, true)
}

/// `s` escaped for XML text and attribute values. Characters XML 1.0 cannot hold at all
/// (control characters but tab and line breaks, U+FFFE, U+FFFF) become U+FFFD.
pub(super) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` escaped for a double-quoted DOT string. Backslashes are escape sequences in DOT labels
/// (`\n`, `\l`, `\N`), so each is doubled; a line break becomes `\n`.
pub(super) fn dot(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_long_text_and_keeps_short_text() {
        assert_eq!(fit("draw", 12.0, 100.0), ("draw".to_string(), false));
        let (cut, was_cut) = fit("a very long pass name indeed", 12.0, 80.0);
        assert!(was_cut);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(width(&cut, 12.0) <= 80.0, "{cut}");
        assert!("a very long pass name indeed".starts_with(cut.trim_end_matches('…')));
        // Multi-byte characters are cut between characters, never inside one.
        let (cut, _) = fit("影影影影影影影影影影", 12.0, 40.0);
        assert_eq!(cut, "影影…");
        assert_eq!(fit("a\nb", 12.0, 100.0).0, "a b");
    }

    #[test]
    fn escapes() {
        assert_eq!(
            xml("<a href=\"x\">&'\u{7}\n"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\u{FFFD}\n"
        );
        assert_eq!(dot("say \"hi\"\\n\nnext"), "say \\\"hi\\\"\\\\n\\nnext");
    }
}
