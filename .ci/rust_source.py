"""Reads a Rust crate's source for the counts of `structure.py`: tokens (comments and
literals blanked by `import-cycles.py`'s `strip`), `#[cfg]` under a set of features, the
items (fns with their `impl` type or trait, structs and their fields, `use`s, `mod`s) and
the modules `mod` declarations reach from `lib.rs`. Not a parser: enough of Rust's item
syntax for source formatted by rustfmt.
"""
import bisect
import importlib.util
import os
import re
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))


def load_strip():
    """The comment and literal blanker of `import-cycles.py` (one of it in .ci)."""
    spec = importlib.util.spec_from_file_location("cycles", os.path.join(HERE, "import-cycles.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.strip


strip = load_strip()
TOKEN = re.compile(r"'?[A-Za-z_][A-Za-z0-9_]*|\d[A-Za-z0-9_]*|::|->|=>|\S")
OPEN, CLOSE = set("([{"), set(")]}")
QUALIFIERS = {"unsafe", "async", "const", "extern", "default"}
ITEM_KINDS = {"fn", "mod", "impl", "trait", "struct", "enum", "union", "use", "const",
              "static", "type", "macro_rules"}
BLOCK_KINDS = {"fn", "mod", "impl", "trait", "struct", "enum", "union", "macro_rules"}


class Build:
    """A cfg environment: features on (None: any feature predicate is unknown, kept)."""

    def __init__(self, features):
        self.features = features

    def cfg(self, pred):
        """Three-valued: True, False or None (unknown, kept)."""
        toks = re.findall(r'[A-Za-z_][A-Za-z0-9_]*|"[^"]*"|[(),=]', pred)
        pos = 0

        def expr():
            nonlocal pos
            name = toks[pos]
            pos += 1
            if name in ("all", "any", "not") and pos < len(toks) and toks[pos] == "(":
                pos, args = pos + 1, []
                while toks[pos] != ")":
                    args.append(expr())
                    pos += toks[pos] == ","
                pos += 1
                if name == "not":
                    return None if args[0] is None else not args[0]
                hit, miss = (False, True) if name == "all" else (True, False)
                return hit if hit in args else (None if None in args else miss)
            if pos < len(toks) and toks[pos] == "=":
                value, pos = toks[pos + 1].strip('"'), pos + 2
                if name == "feature" and self.features is not None:
                    return value in self.features
                return None
            return {"test": False, "doc": False, "debug_assertions": True}.get(name)

        return expr() if toks else None

    def drops(self, attr):
        """Whether an attribute's item is left out of this build (or is a test)."""
        attr = attr.strip()
        if attr == "test":
            return True
        m = re.fullmatch(r"cfg\s*\((.*)\)", attr, re.S)
        return bool(m) and self.cfg(m.group(1)) is False


@dataclass(eq=False)
class Fn:
    name: str
    owner: str  # the impl's type, the trait of a default method, or None for a free fn
    trait: str
    file: "Source"
    lo: int  # token range of the signature and body
    hi: int
    body: int  # token index of the body's `{`, or None
    vis: str
    module: tuple  # the module it is in: ("graph", "prepare")

    def seen_from(self, module):
        """Whether code in `module` may name it (Rust's privacy; trait methods are public)."""
        if self.trait is not None or self.vis in ("pub", "pub(crate)"):
            return True
        scope = self.module[:-1] if self.vis == "pub(super)" else self.module
        if self.vis.startswith("pub(in"):
            scope = tuple(self.vis[6:-1].split("::")[1:])
        return module[:len(scope)] == scope


@dataclass
class Item:
    kind: str
    name: str
    vis: str
    owner: str
    file: "Source"
    mentions: set = None  # a type's: the names in its definition (its fields' types)


@dataclass
class Source:
    path: str
    raw: str
    module: tuple
    toks: list = field(default_factory=list)
    offs: list = field(default_factory=list)
    match: list = field(default_factory=list)
    dropped: list = field(default_factory=list)  # token flags: left out of the build
    fns: list = field(default_factory=list)
    items: list = field(default_factory=list)
    mods: list = field(default_factory=list)  # (name, #[path] or None, inline module path)

    def text(self, lo, hi):
        return self.raw[self.offs[lo]:self.offs[hi]]


def tokenize(src):
    stripped = strip(src.raw)
    for m in TOKEN.finditer(stripped):
        src.toks.append(m.group(0))
        src.offs.append(m.start())
    src.offs.append(len(src.raw))
    src.match, stack = [None] * len(src.toks), []
    for i, t in enumerate(src.toks):
        if t in OPEN:
            stack.append(i)
        elif t in CLOSE and stack:
            j = stack.pop()
            src.match[i], src.match[j] = j, i
    src.dropped = [False] * len(src.toks)


def attributes(src, i):
    """The attributes from token `i`: ([their text], index after them)."""
    toks, out = src.toks, []
    while i + 1 < len(toks) and toks[i] == "#" and toks[i + 1] in ("[", "!"):
        j = i + 2 if toks[i + 1] == "!" else i + 1
        if j >= len(toks) or toks[j] != "[" or src.match[j] is None:
            break
        out.append(src.text(j + 1, src.match[j]))
        i = src.match[j] + 1
    return out, i


def item_start(toks, i):
    """(kind, index of the kind's keyword) of an item starting at `i` (after attributes)."""
    if i < len(toks) and toks[i] == "pub":
        i += 1
        if i < len(toks) and toks[i] == "(":
            i += 1
            while i < len(toks) and toks[i] != ")":
                i += 1
            i += 1
    while i + 1 < len(toks) and toks[i] in QUALIFIERS and (toks[i + 1] in ITEM_KINDS or toks[i + 1] in QUALIFIERS):
        i += 1
    if i + 1 < len(toks) and toks[i + 1] == "!" and re.match(r"[A-Za-z_]", toks[i]):
        return "macro", i
    return (toks[i], i) if i < len(toks) and toks[i] in ITEM_KINDS else (None, i)


def item_end(src, kind, i):
    """The token index after an item (or statement, field, arm) whose first token is `i`."""
    toks, match, j = src.toks, src.match, i
    block = kind in BLOCK_KINDS or kind == "macro"
    statement_block = kind is None and toks[i] in ("{", "if", "match", "for", "while", "loop", "unsafe")
    typed = kind is None and toks[i + 1:i + 2] == [":"]  # a field: `a: HashMap<K, V>,`
    angle = 0
    while j < len(toks):
        t = toks[j]
        angle += typed and {"<": 1, ">": -1}.get(t, 0)
        if t in CLOSE:
            return j  # the end of the enclosing group
        if t == ";" or t == "," and not block and angle == 0:
            return j + 1
        if t in OPEN and match[j] is not None:
            after = match[j] + 1
            if t == "{" and (block or statement_block or toks[j - 1] == "=>"):
                if after < len(toks) and toks[after] == "else":
                    j = after
                    continue
                return after + (after < len(toks) and toks[after] in (";", ","))
            j = after
            continue
        j += 1
    return j


def mark_dropped(src, build):
    """Flags the tokens of everything under an attribute that leaves it out of `build`
    (items, statements, fields, match arms), and of test modules."""
    toks, i = src.toks, 0
    while i < len(toks):
        attrs, j = attributes(src, i)
        kind, k = item_start(toks, j)
        test_mod = kind == "mod" and k + 1 < len(toks) and toks[k + 1].startswith("tests")
        if (attrs and any(build.drops(a) for a in attrs)) or test_mod:
            if toks[i:i + 2] == ["#", "!"] and i == 0:
                end = len(toks)  # an inner `#![cfg(..)]`: the whole file
            else:
                end = item_end(src, kind, k)
            for t in range(i, end):
                src.dropped[t] = True
            i = max(end, i + 1)
        else:
            i = j if attrs else i + 1


def parse_items(src, lo, hi, owner=None, trait=None, inline=()):
    """Indexes the fns, items and `mod` declarations in tokens [lo, hi) of a module or impl."""
    toks, i = src.toks, lo
    while i < hi:
        if src.dropped[i]:
            i += 1
            continue
        attrs, j = attributes(src, i)
        kind, k = item_start(toks, j)
        if kind is None or k >= hi:
            i = max(j, i + 1)
            continue
        end = min(item_end(src, kind, k), hi)
        vis = visibility(src, j, k)
        name = toks[k + 1] if k + 1 < hi else ""
        if kind == "mod" and toks[k + 2] == ";":
            path = next((m.group(1) for a in attrs for m in [re.fullmatch(r'path\s*=\s*"(.*)"', a)] if m), None)
            src.mods.append((name, path, inline))
        elif kind == "mod":
            parse_items(src, k + 3, end - 1, inline=inline + (name,))
        elif kind == "impl":
            body = next(t for t in range(k, end) if toks[t] == "{")
            of, tr = impl_header(toks[k + 1:body])
            parse_items(src, body + 1, end - 1, of, tr, inline)
        elif kind == "trait":
            body = next(t for t in range(k, end) if toks[t] == "{")
            src.items.append(Item("trait", name, vis, None, src))
            parse_items(src, body + 1, end - 1, name, name, inline)
        elif kind == "fn":
            body = next((t for t in range(k, end) if toks[t] == "{"), None)
            src.fns.append(Fn(name, owner, trait, src, k, end, body, vis, src.module + inline))
            src.items.append(Item("method" if owner else "fn", name, vis, owner, src))
        elif kind == "use":  # the names it brings in: `a::{b, c as d}` -> b, d
            tree = toks[k + 1:end - 1] + [","]
            for n, t in enumerate(tree[:-1]):
                if re.match(r"[A-Za-z_]", t) and tree[n + 1] in (",", "}"):
                    src.items.append(Item("use", t, vis, owner, src))
        else:
            names = None
            if kind in ("struct", "enum", "union", "type"):
                names = {t for n, t in enumerate(toks[k + 2:end], k + 2) if not src.dropped[n] and t[:1].isupper()}
            src.items.append(Item(kind, name, vis, owner, src, names))
            if kind == "struct" and toks[end - 1] == "}":
                parse_fields(src, name, k, end)
        i = end


def visibility(src, j, k):
    if src.toks[j] != "pub":
        return ""
    return "pub" + ("(%s)" % "".join(src.toks[j + 2:src.match[j + 1]]) if src.toks[j + 1] == "(" else "")


def parse_fields(src, struct, k, end):
    body = next(t for t in range(k, end) if src.toks[t] == "{")
    i = body + 1
    while i < end - 1:
        if src.dropped[i]:
            i += 1
            continue
        _, j = attributes(src, i)
        vis_end = j
        if src.toks[j] == "pub":
            vis_end = src.match[j + 1] + 1 if src.toks[j + 1] == "(" else j + 1
        if vis_end + 1 < end and src.toks[vis_end + 1] == ":":
            src.items.append(Item("field", src.toks[vis_end], visibility(src, j, vis_end), struct, src))
        i = item_end(src, None, vis_end)


def impl_header(toks):
    """(type, trait) of `impl<..> Trait for Type<..> where ..`."""
    depth, parts, cur = 0, [], []
    for n, t in enumerate(toks):
        if t == "<" and (n == 0 and not parts and not cur or depth):
            depth += 1
            continue
        if depth:
            depth += {"<": 1, ">": -1}.get(t, 0)
            continue
        if t == "where":
            break
        if t == "for" and not parts:
            parts.append(cur)
            cur = []
            continue
        cur.append(t)
    parts.append(cur)
    names = [type_name(p) for p in parts]
    return (names[-1], names[0]) if len(names) == 2 else (names[0], None)


def type_name(toks):
    """The last path segment before generic arguments: `&'a mut a::B<C>` -> `B`."""
    name = None
    for t in toks:
        if t == "<":
            break
        if re.match(r"[A-Za-z_]", t) and t not in ("mut", "dyn"):
            name = t
    return name


class Crate:
    """The modules of one build, from `src/lib.rs` through `mod` declarations."""

    def __init__(self, root, build):
        self.root, self.build, self.files, self.modules = root, build, [], set()
        self.visit(os.path.join(root, "lib.rs"), root, ())

    def visit(self, path, child_dir, module):
        with open(path, encoding="utf-8", errors="replace") as f:
            src = Source(os.path.relpath(path, os.path.dirname(self.root)), f.read(), module)
        tokenize(src)
        mark_dropped(src, self.build)
        parse_items(src, 0, len(src.toks))
        self.files.append(src)
        self.modules.update(module)
        for name, at, inline in src.mods:
            here = os.path.join(child_dir, *inline)
            if at:
                found = os.path.join(os.path.dirname(path), *inline, at)
            else:
                found = next((p for p in (os.path.join(here, name + ".rs"),
                              os.path.join(here, name, "mod.rs")) if os.path.exists(p)), None)
            if found and os.path.exists(found):
                sub = os.path.dirname(found) if found.endswith("mod.rs") else found[:-3]
                self.visit(found, sub, module + inline + (name,))

    def fns(self):
        return [f for src in self.files for f in src.fns]


def line_counts(src):
    """(lines, code lines) of a file: non-blank and not left out; code lines hold a token.
    A comment line counts with the next token: left out with the item it documents. A `//!`
    line documents the file (or module) itself and always counts."""
    starts = [0] + [m.end() for m in re.finditer("\n", src.raw)]
    code, dropped = [False] * len(starts), [False] * len(starts)
    for t, off in enumerate(src.offs[:-1]):
        n = bisect.bisect_right(starts, off) - 1
        if src.dropped[t]:
            dropped[n] = True
        else:
            code[n] = True
    lines = code_lines = 0
    for n, text in enumerate(src.raw.split("\n")):
        inner_doc = text.lstrip().startswith("//!")
        if not text.strip() or not (code[n] or inner_doc) and (
            dropped[n] or next_dropped(src, starts[n])
        ):
            continue
        lines += 1
        code_lines += code[n]
    return lines, code_lines


def next_dropped(src, off):
    t = bisect.bisect_left(src.offs, off, 0, len(src.toks))
    return t < len(src.toks) and src.dropped[t]
