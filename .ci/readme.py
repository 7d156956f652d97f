#!/usr/bin/env python3
"""Writes README.md from the crate doc of src/lib.rs (its leading `//!` lines).

    python3 .ci/readme.py           # rewrite README.md
    python3 .ci/readme.py --check   # exit 1, printing a diff, if README.md is not current

The crate doc is the one source: docs.rs's front page and the README say the same thing, and
the README's Rust code is compiled as the crate's doctests. Going from rustdoc to GitHub:

- intra-doc links become code spans: [`Graph::new`] and [`Plan::to_svg`](plan::Plan::to_svg)
  both read as a code span of their text; links to URLs and files (`docs/x.md`, `context/`)
  stay as they are;
- in Rust code blocks (a bare fence, or one whose attributes are rustdoc's: `rust`, `no_run`,
  `ignore`, `should_panic`, `compile_fail`, `editionYYYY`), the hidden lines (`# ...`, `#`)
  go, `## ...` becomes `# ...`, and the fence becomes ```rust;
- a first line says the file is generated.
"""
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LIB = os.path.join(ROOT, "src", "lib.rs")
README = os.path.join(ROOT, "README.md")
HEADER = (
    "<!-- Generated from src/lib.rs by .ci/readme.py: edit the crate doc there, "
    "then run `python3 .ci/readme.py`. -->"
)

RUSTDOC_ATTRS = re.compile(r"^(rust|no_run|ignore|should_panic|compile_fail|test_harness|edition\d+)$")
# A rustdoc path, optionally with a disambiguator (`struct@`, `fn@`, ...) or a `()`/`!` suffix.
# File and URL targets have a `/`, `.` or `#` and never match.
PATH = r"(?:[a-z]+@)?[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:\(\)|!)?"
# [`text`](path): an intra-doc link with a target of its own.
LINK_WITH_TARGET = re.compile(r"\[(`[^`\]]+`)\]\((" + PATH + r")\)")
# [`path`], not followed by `(` or `[` (a link with a target of its own).
SHORTCUT = re.compile(r"\[(`" + PATH + r"`)\](?![(\[])")
REFERENCE_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*" + PATH + r"\s*$")


def crate_doc(path):
    """The leading `//!` lines of `path`, without the `//!` and its one space."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith("//!"):
                break
            text = line[3:]
            lines.append(text[1:] if text.startswith(" ") else text)
    if not lines:
        sys.exit(f"{path}: no `//!` crate doc at the top")
    return lines


def is_rust_fence(info):
    attrs = [a.strip() for a in info.split(",") if a.strip()]
    return all(RUSTDOC_ATTRS.match(a) for a in attrs)


def plain_links(line):
    line = LINK_WITH_TARGET.sub(r"\1", line)
    return SHORTCUT.sub(r"\1", line)


def readme(doc_lines):
    out = [HEADER]
    fence = None  # the open fence's backticks, or None outside a code block
    rust = False
    for line in doc_lines:
        m = re.match(r"^(\s*)(`{3,})(.*)$", line)
        if fence is None and m:
            fence, rust = m.group(2), is_rust_fence(m.group(3))
            out.append(m.group(1) + fence + ("rust" if rust else m.group(3).strip()))
            continue
        if fence is not None:
            if m and m.group(2).startswith(fence) and not m.group(3).strip():
                fence = None
                out.append(line)
                continue
            if rust:
                stripped = line.lstrip()
                if stripped == "#" or stripped.startswith("# "):
                    continue  # a hidden line
                if stripped.startswith("##"):
                    line = line.replace("##", "#", 1)
            out.append(line)
            continue
        if REFERENCE_DEF.match(line):
            continue
        out.append(plain_links(line))
    if fence is not None:
        sys.exit(f"{LIB}: a code block in the crate doc is not closed")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if args not in ([], ["--check"]):
        sys.exit(__doc__)
    want = readme(crate_doc(LIB))
    if args == ["--check"]:
        try:
            with open(README, encoding="utf-8") as f:
                have = f.read()
        except FileNotFoundError:
            have = ""
        if have != want:
            sys.stdout.writelines(
                difflib.unified_diff(
                    have.splitlines(True),
                    want.splitlines(True),
                    "README.md",
                    "README.md (from src/lib.rs)",
                )
            )
            print("README.md is not generated from src/lib.rs: run python3 .ci/readme.py")
            return 1
        return 0
    with open(README, "w", encoding="utf-8") as f:
        f.write(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
