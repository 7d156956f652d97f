//! The report's data as compact JSON, written by hand: a few kinds of value, no dependency.
//! Repeated strings (stage and access masks, layouts, ranges) go once into a table that the
//! values name by index, which keeps a 1,000-pass frame small.

use std::collections::HashMap;
use std::fmt::Write;

/// Strings written once and named by index (`S` in the viewer's schema).
#[derive(Default)]
pub(super) struct Strings {
    list: Vec<String>,
    index: HashMap<String, usize>,
}

impl Strings {
    /// The index of `s`, added if new.
    pub(super) fn of(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), self.list.len() - 1);
        self.list.len() - 1
    }

    /// The table as a JSON array.
    pub(super) fn write(&self, out: &mut String) {
        out.push('[');
        for (i, s) in self.list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(out, s);
        }
        out.push(']');
    }
}

/// Appends `s` as a JSON string. `<` and `>` are escaped too, so that the text can never
/// close the `<script>` element it sits in.
pub(super) fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends a number, or `null` for `None`.
pub(super) fn number(out: &mut String, n: Option<u64>) {
    match n {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.push_str("null"),
    }
}

/// Appends an index, or `-1` for `None` (the schema's "none" for indices).
pub(super) fn index(out: &mut String, i: Option<usize>) {
    match i {
        Some(i) => {
            let _ = write!(out, "{i}");
        }
        None => out.push_str("-1"),
    }
}

/// Appends `items` as a JSON array, each written by `each`.
pub(super) fn array<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut String, T),
) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_what_would_end_a_script_element() {
        let mut out = String::new();
        string(&mut out, "a \"b\"\\</script>\n\u{1}");
        assert_eq!(out, r#""a \"b\"\\\u003c/script\u003e\n\u0001""#);
    }

    #[test]
    fn a_repeated_string_is_written_once() {
        let mut s = Strings::default();
        assert_eq!((s.of("COPY"), s.of("NONE"), s.of("COPY")), (0, 1, 0));
        let mut out = String::new();
        s.write(&mut out);
        assert_eq!(out, r#"["COPY","NONE"]"#);
    }
}
