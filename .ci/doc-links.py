#!/usr/bin/env python3
"""Checks that the docs point at things that exist.

In README.md, ARCHITECTURE.md and docs/*.md (or the Markdown files given as arguments): every relative Markdown link `[text](path#anchor)` must resolve from
the file's folder, and every repository path named in backticks (`src/plan/planner.rs`,
`tests/gpu/`, `.ci/run`) must exist from the repository root. Globs (`tests/*.rs`), braces
and placeholders (`<name>`) are not paths and are skipped. Prints each broken reference as
`file:line: what` and exits 1 if there is any.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`([^`\n]+)`")
# The repository's top-level folders and files that a path in backticks starts with.
TOP = ("src/", "tests/", "docs/", "examples/", "passes/", "context/", "shaders/", "benches/",
       ".ci/", "api/", "peers/", "samples/")
TOP_FILES = ("README.md", "ARCHITECTURE.md", "CHANGELOG.md", "Cargo.toml")


def default_files():
    files = ["README.md", "ARCHITECTURE.md"]
    docs = os.path.join(ROOT, "docs")
    files += sorted(os.path.join("docs", f) for f in os.listdir(docs) if f.endswith(".md"))
    return files


def is_path(token):
    """Whether a backticked token names a repository path (not code, a glob or a command)."""
    if any(c in token for c in " *{}<>$|(),;=\"'") or token.endswith("::"):
        return False
    if token.startswith(TOP):
        return True
    return token in TOP_FILES


def check(rel):
    broken = []
    path = os.path.join(ROOT, rel)
    folder = os.path.dirname(path)
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                    continue  # a URL or an anchor in the same file
                file_part = target.split("#", 1)[0]
                if not os.path.exists(os.path.join(folder, file_part)):
                    broken.append(f"{rel}:{n}: link to `{target}`, which does not exist")
            for token in CODE.findall(line):
                token = re.sub(r":\d+(-\d+)?$", "", token)  # `src/x.rs:42`
                if is_path(token) and not os.path.exists(os.path.join(ROOT, token)):
                    broken.append(f"{rel}:{n}: names `{token}`, which does not exist")
    return broken


def main():
    files = sys.argv[1:] or default_files()
    broken = [b for rel in files for b in check(rel)]
    for b in broken:
        print(b)
    if broken:
        print(f"{len(broken)} broken reference(s) in the docs", file=sys.stderr)
        return 1
    print(f"doc links: {len(files)} file(s), every link and path resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
