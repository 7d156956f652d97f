#!/usr/bin/env python3
"""Prints the import cycles among sibling modules, at every folder level of a Rust crate.

    python3 .ci/import-cycles.py [SRC] [--why]

For each module folder (SRC itself, and each folder under it, e.g. `src/plan`,
`src/plan/diagram`), the sibling modules are its files `x.rs` and its folders `x/` (the files
under `x/` count as `x`); `lib.rs`, `main.rs` and `mod.rs` are the folder's own module, the
parent, which may use its children freely. A sibling that names another sibling through a
path, `crate::a::b::…`, `super::…` (any number of them) or `self::…`, including groups such as
`use super::{a, b}` and `crate::x::{y, z::w}`, depends on it; a name the parent imports
(`use self::b::Thing;` in `mod.rs`) counts as the module it comes from, so `super::Thing`
depends on `b`, and so do the names a `use super::*` brings in (a module's private imports
are seen only from inside it). Comments, doc comments too (their links import nothing), and
string literals do not count. Modules are found by their files; `#[path]` is not read.

Test code is ignored: files `tests*.rs`, folders `tests*/`, modules declared under a
`#[cfg(...test...)]` attribute, and items (such as `mod tests { ... }` blocks) under one.

Prints each cycle (a strongly connected set of siblings) as `folder: a <-> b <-> c` and exits 1;
prints nothing and exits 0 when there is none. `--why` also prints, for each cycle, the
references that make its edges (`file:line a -> b`).
"""
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text):
    """Blanks comments (doc comments too), string and char literals, keeping line breaks and
    offsets."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 8]) and not re.match(r"[A-Za-z0-9_]", text[i - 1] if i else " "):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]*\}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(text, i):
    """The index after the brace that closes the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


CFG_TEST = re.compile(r"#\[cfg\(([^\]]*)\)\]")


def is_test_cfg(pred):
    return re.search(r"\btest\b", pred) is not None and "not(test)" not in pred


def drop_test_items(text):
    """Blanks each item under a `#[cfg(...test...)]` attribute; returns the text and the names
    of the `mod x;` declarations among them (test modules in their own files)."""
    test_mods = set()
    pos = 0
    while True:
        m = CFG_TEST.search(text, pos)
        if not m:
            return text, test_mods
        if not is_test_cfg(m.group(1)):
            pos = m.end()
            continue
        j = m.end()
        while True:  # further attributes
            a = re.compile(r"\s*#\[").match(text, j)
            if not a:
                break
            k, depth = a.end() - 1, 0
            while k < len(text):
                depth += {"[": 1, "]": -1}.get(text[k], 0)
                k += 1
                if depth == 0:
                    break
            j = k
        d = re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;").match(text, j)
        if d:
            test_mods.add(d.group(1))
        k = j
        while k < len(text) and text[k] not in ";{":
            k += 1
        end = k + 1 if k < len(text) and text[k] == ";" else matching(text, k)
        text = text[: m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]
        pos = end


def parse_tree(text, i):
    """Parses a use-tree from `i` (just after a `::`): returns ([(segments, alias)], end)."""
    ws = re.compile(r"\s*")
    i = ws.match(text, i).end()
    if i < len(text) and text[i] == "{":
        out, i = [], i + 1
        while True:
            i = ws.match(text, i).end()
            if i >= len(text) or text[i] == "}":
                return out, i + 1
            sub, i = parse_path(text, i)
            out += sub
            i = ws.match(text, i).end()
            if i < len(text) and text[i] == ",":
                i += 1
    if i < len(text) and text[i] == "*":
        return [(["*"], None)], i + 1
    return parse_path(text, i)


def parse_path(text, i):
    """Parses `seg::seg::…` (ending in a group or `*` or a name, with `as alias`)."""
    m = re.compile(IDENT).match(text, i)
    if not m:
        if i < len(text) and text[i] in "{*":
            return parse_tree(text, i)
        return [], i
    seg, i = m.group(0), m.end()
    sep = re.compile(r"\s*::\s*").match(text, i)
    if sep:
        subs, j = parse_tree(text, sep.end())
        if subs:
            return [([seg] + s, a) for s, a in subs], j
    alias = re.compile(r"\s+as\s+(" + IDENT + ")").match(text, i)
    if alias:
        return [([seg], alias.group(1))], alias.end()
    return [([seg], None)], i


START = re.compile(r"(?<![A-Za-z0-9_:])\$?(crate|super|self)\s*::")


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}  # module path (tuple) -> (file, stripped text)
        self.children = {}  # module path -> set of child names
        self.test = set()  # module paths of test modules
        self.folder = {}  # module path -> folder on disk
        self.walk(root, ())

    def walk(self, folder, path):
        self.folder[path] = folder
        kids = self.children.setdefault(path, set())
        for name in sorted(os.listdir(folder)):
            p = os.path.join(folder, name)
            if os.path.isdir(p):
                kids.add(name)
                self.walk(p, path + (name,))
            elif name.endswith(".rs"):
                if name in ("lib.rs", "main.rs", "mod.rs"):
                    own = path if name == "mod.rs" or folder == self.root else None
                    if own is not None:
                        self.load(p, own)
                else:
                    kids.add(name[:-3])
                    self.load(p, path + (name[:-3],))

    def load(self, f, path):
        text = open(f, encoding="utf-8", errors="replace").read()
        text, test_mods = drop_test_items(strip(text))
        self.files[path] = (f, text)
        for t in test_mods:
            self.test.add(path + (t,))

    def is_test(self, path):
        return any(n.startswith("tests") for n in path) or any(path[:k] in self.test for k in range(1, len(path) + 1))

    def inline_mods(self, text):
        """(start, end, name) of each inline `mod x { ... }` (test ones are already blank)."""
        out = []
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", text):
            out.append((m.end() - 1, matching(text, m.end() - 1), m.group(1)))
        return out

    def references(self, path):
        """(line, absolute path, alias, is_use) for each path in the module's file: the
        `crate::`/`super::`/`self::` paths anywhere, and the `use` declarations (which may
        also start at a child module); `is_use` is "pub" or "private" for a name a `use` at the
        module's top level brings into its scope (under `alias` when it has one), else None."""
        f, text = self.files[path]
        inline = self.inline_mods(text)

        def scope(at):
            return list(path) + [name for s, e, name in inline if s < at < e]

        def absolute(here, segs):
            base, rest = list(here), list(segs)
            if rest and rest[0] == "crate":
                base, rest = [], rest[1:]
            elif rest and rest[0] in ("super", "self"):
                while rest and rest[0] in ("super", "self"):
                    if rest[0] == "super":
                        base = base[:-1]
                    rest = rest[1:]
            elif rest and rest[0] in self.children.get(tuple(here), ()):
                pass  # a child module, relative to `here`
            else:
                return None  # another crate
            if rest and rest[-1] == "self":
                rest = rest[:-1]
            return tuple(base + rest)

        uses = set()
        for m in re.finditer(r"\buse\s+(?:::)?", text):
            here = scope(m.start())
            line = text.count("\n", 0, m.start()) + 1
            trees, end = parse_tree(text, m.end())
            uses.update(range(m.start(), end))
            for segs, alias in trees:
                t = absolute(here, segs)
                if t is not None:
                    top = len(here) == len(path)
                    before = text[max(0, m.start() - 40): m.start()]
                    public = re.search(r"\bpub\s*(?:\([^)]*\))?\s*$", before)
                    yield line, t, alias, ("pub" if public else "private") if top else None
        for m in START.finditer(text):
            if m.start() in uses:
                continue
            here = scope(m.start())
            line = text.count("\n", 0, m.start()) + 1
            trees, _ = parse_path(text, m.start() + (1 if text[m.start()] == "$" else 0))
            for segs, alias in trees:
                t = absolute(here, segs)
                if t is not None:
                    yield line, t, None, False

    def imports(self, path, viewer, seen=None):
        """The names a module's `use` declarations bring in that module `viewer` sees: name ->
        absolute path. Private ones are seen by the module and those inside it; a glob
        `use x::*` brings in what `x` shows the module, and `x`'s child modules when the
        module is inside `x`."""
        if path not in self.files:
            return {}
        inside = viewer[: len(path)] == path
        names = {}
        for _, target, alias, is_use in self.references(path):
            if not is_use or not target or (is_use != "pub" and not inside):
                continue
            if target[-1] == "*":
                src = target[:-1]
                seen = (seen or set()) | {path}
                if src not in seen:
                    for k, v in self.imports(src, path, seen).items():
                        names.setdefault(k, v)
                if path[: len(src)] == src:
                    for child in self.children.get(src, ()):
                        names.setdefault(child, src + (child,))
            else:
                names[alias or target[-1]] = target
        return names

    def resolve(self, target, viewer, depth=0):
        """Follows a path (named in module `viewer`) through the imports of the modules on
        it, to the module it names, as far as the modules go."""
        for k in range(len(target)):
            head, name = target[:k], target[k]
            if name in self.children.get(head, ()):
                continue
            via = self.imports(head, viewer).get(name) if depth < 8 else None
            if via and via != target[: k + 1]:
                return self.resolve(via + target[k + 1:], viewer, depth + 1)
            return target[:k]
        return target

    def edges(self):
        """(folder path, a, b) -> [evidence] for each sibling dependency a -> b."""
        out = {}
        for path, (f, text) in sorted(self.files.items()):
            if self.is_test(path):
                continue
            refs = [(line, t[:-1] if t[-1] == "*" else t) for line, t, _, _ in self.references(path) if t]
            for line, t, _, _ in self.references(path):  # names a glob brings in
                if t and t[-1] == "*":
                    words = set(re.findall(IDENT, text))
                    for name, via in self.imports(t[:-1], path).items():
                        if name in words:
                            refs.append((line, via))
            for line, t in refs:
                t = self.resolve(t, path)
                k = 0
                while k < min(len(path), len(t)) and path[k] == t[k]:
                    k += 1
                if k < len(path) and k < len(t) and t[k] in self.children.get(path[:k], ()):
                    if self.is_test(t[: k + 1]):
                        continue
                    key = (path[:k], path[k], t[k])
                    out.setdefault(key, []).append("%s:%d %s -> %s" % (f, line, path[k], "::".join(t)))
        return out


def cycles(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    why = "--why" in sys.argv
    root = os.path.normpath(args[0] if args else "src")
    crate = Crate(root)
    edges = crate.edges()
    by_folder = {}
    for (folder, a, b) in edges:
        by_folder.setdefault(folder, {}).setdefault(a, set()).add(b)
    found = False
    for folder in sorted(by_folder):
        for comp in cycles(by_folder[folder]):
            found = True
            print("%s: %s" % (crate.folder[folder], " <-> ".join(comp)))
            if why:
                for a in comp:
                    for b in comp:
                        for e in edges.get((folder, a, b), []):
                            print("    " + e)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
