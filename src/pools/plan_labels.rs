//! [`PlanLabels`]: the debug labels of one plan's passes and barrier commands, kept with the
//! plan (inside its [`super::PlanBarriers`]) so that a reused or held plan opens each label
//! region without building or copying its text again.

use std::ffi::CStr;
use std::ops::Range;

/// One barrier command's label.
struct BarrierLabel {
    /// Its text with the NUL after it, in `PlanLabels::text`.
    text: Range<usize>,
    color: [f32; 4],
    /// The pass whose name the text holds: a reused plan's passes may be named otherwise in a
    /// later frame, and then the label is built again.
    pass: Option<usize>,
}

/// Every pass's name and every barrier command's label (in recording order), as C strings;
/// built for the plan they travel with, or not at all.
#[derive(Default)]
pub(crate) struct PlanLabels {
    built: bool,
    /// Every string, each followed by its NUL (and holding none).
    text: Vec<u8>,
    /// Per pass (by index): its name in `text`, without the NUL.
    passes: Vec<Range<usize>>,
    barriers: Vec<BarrierLabel>,
}

impl PlanLabels {
    /// Whether the labels were built for the plan they travel with.
    pub(crate) fn built(&self) -> bool {
        self.built
    }

    /// Builds them anew: `each` pushes every pass's name by index, then every barrier
    /// command's label in recording order.
    pub(crate) fn rebuild(&mut self, each: impl FnOnce(&mut Self)) {
        self.built = false;
        self.text.clear();
        self.passes.clear();
        self.barriers.clear();
        each(self);
        self.built = true;
    }

    /// Appends the next pass's name. A NUL, which a C string cannot hold, becomes `?` as in
    /// [`crate::DebugUtils::begin_label`]; such a name never matches itself in [`Self::pass`],
    /// so its label is built each time, the way it always was.
    pub(crate) fn push_pass(&mut self, name: &str) {
        let start = self.text.len();
        self.text
            .extend(name.bytes().map(|b| if b == 0 { b'?' } else { b }));
        let end = self.text.len();
        // The NUL before the range: a range is only ever recorded for a whole string.
        self.text.push(0);
        self.passes.push(start..end);
    }

    /// Appends the next barrier command's label: `text`, drawn in `color`, naming pass `pass`
    /// (its name pushed already) if any.
    pub(crate) fn push_barrier(&mut self, text: &CStr, color: [f32; 4], pass: Option<usize>) {
        let start = self.text.len();
        self.text.extend_from_slice(text.to_bytes_with_nul());
        self.barriers.push(BarrierLabel {
            text: start..self.text.len(),
            color,
            pass,
        });
    }

    /// Pass `p`'s label, if it is still named `name` and the labels were built for this plan.
    pub(crate) fn pass(&self, p: usize, name: &str) -> Option<&CStr> {
        let range = self.passes.get(p).filter(|_| self.built)?;
        (name.as_bytes() == &self.text[range.clone()]).then(|| self.c_str(range.start, range.end))
    }

    /// Barrier command `k`'s label, unless the pass it names is named otherwise now (`name`: a
    /// pass's name by its index), or the labels were not built for this plan.
    pub(crate) fn barrier<'n>(
        &self,
        k: usize,
        name: impl Fn(usize) -> &'n str,
    ) -> Option<(&CStr, [f32; 4])> {
        let label = self.barriers.get(k).filter(|_| self.built)?;
        if let Some(p) = label.pass {
            self.pass(p, name(p))?;
        }
        let text = self.c_str(label.text.start, label.text.end - 1);
        Some((text, label.color))
    }

    /// The string at `start..end` of `text`, whose byte at `end` is its NUL.
    fn c_str(&self, start: usize, end: usize) -> &CStr {
        let bytes = &self.text[start..=end];
        debug_assert!(bytes[end - start] == 0 && !bytes[..end - start].contains(&0));
        // SAFETY: a range is recorded only after its string was appended whole with its NUL
        // after it and no NUL inside (`push_pass` replaces them, `push_barrier` copies a
        // `CStr`); `text` is otherwise only appended to, or cleared together with the ranges
        // (`rebuild`). Checking would scan each label once per frame, which keeping them saves.
        unsafe { CStr::from_bytes_with_nul_unchecked(bytes) }
    }

    /// Drops the claim that the labels belong to the plan they travel with, keeping the
    /// allocations.
    pub(crate) fn forget(&mut self) {
        self.built = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_labels_are_given_while_their_passes_keep_their_names() {
        let mut labels = PlanLabels::default();
        assert_eq!(labels.pass(0, "a"), None, "nothing built yet");
        let grey = [0.5, 0.5, 0.5, 1.0];
        labels.rebuild(|l| {
            l.push_pass("a");
            l.push_pass("b\0c");
            l.push_barrier(c"barriers before `a`", grey, Some(0));
            l.push_barrier(c"barriers", grey, None);
        });
        let names = ["a", "b\0c"];
        assert_eq!(labels.pass(0, "a"), Some(c"a"));
        // A name with a NUL is kept as `b?c` and never matches: built every time.
        assert_eq!(labels.pass(1, "b\0c"), None);
        assert_eq!(labels.pass(1, "b?c"), Some(c"b?c"));
        assert_eq!(labels.pass(2, "a"), None, "past the last pass");
        let barrier = |k, names: &[&'static str; 2]| labels.barrier(k, |p| names[p]);
        assert_eq!(barrier(0, &names), Some((c"barriers before `a`", grey)));
        assert_eq!(barrier(1, &names), Some((c"barriers", grey)));
        assert_eq!(barrier(2, &names), None, "past the last");
        // Pass 0 is named otherwise in this frame: its labels must be built again.
        let renamed = ["renamed", "b"];
        assert_eq!(labels.pass(0, "renamed"), None);
        assert_eq!(barrier(0, &renamed), None);
        assert_eq!(barrier(1, &renamed), Some((c"barriers", grey)));
        labels.forget();
        assert_eq!(
            labels.barrier(1, |p| names[p]),
            None,
            "forgotten with a new plan"
        );
        assert_eq!(labels.pass(0, "a"), None);
        // Built again, for a plan with no barrier command and one pass.
        labels.rebuild(|l| l.push_pass("only"));
        assert_eq!(labels.pass(0, "only"), Some(c"only"));
        assert_eq!(
            (labels.pass(1, "b?c"), labels.barrier(0, |_| "only")),
            (None, None)
        );
        // And for nothing at all.
        labels.rebuild(|_| {});
        assert!(labels.built());
        assert_eq!(labels.pass(0, "only"), None);
    }
}
