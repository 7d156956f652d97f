#!/usr/bin/env python3
"""Counts issue 41's structure targets on the core crate's source (`src/`), so that anyone
can repeat them:

    python3 .ci/structure.py [--verbose] [--json] [--why FILE] [--check | --update]
                             [--src src] [--exec exec]

Nothing is compiled: `rust_source.py` reads the source text. Test code never counts: items
under a `#[cfg]` that is false when `test` is (`cfg(test)`, `cfg(all(test, ..))`), `#[test]`
fns, modules named `tests*` and their files. A build is a set of cargo features, with
`debug_assertions` on: its files are those that `mod` declarations reach from `lib.rs` under
a `#[cfg]` that holds, and within them each item, statement, field or match arm under a false
`#[cfg]` is left out (`cfg!()` is not read). A file's lines are its non-blank lines outside
what is left out, comment and doc-comment lines included; "code lines" leave those out.

1. Reading path: the files that `GraphBuilder::insert_pass`, `GraphBuilder::finish`,
   `Planned::execute` and `ExecutionFence::wait` may reach in the default build (every fn
   that a reached fn may call, read from names: an upper bound on purpose), with all their
   lines. Each fn is indexed with its file, module, visibility and `impl` type or trait; in
   a reached fn's signature and body:
   - `Type::name` and `Self::name`, called or passed as a value, reach that type's (or
     trait's) fns named `name`; `module::name`, the free fns named `name`;
   - `name(` and a lone argument `(name)` reach the free fns named `name`, unless the fn
     binds `name` itself (parameter, `let`, `for`, closure parameter);
   - `.name(` reaches every method named `name` (trait dispatch included) whose type or
     trait is in play (below), except when the receiver chain starts at another crate's
     path (`vk::BufferCopy::default().size(..)`) or, unless the receiver is `self`, when
     `name` is one of STD_METHODS (`len`, `push`, `get`, `iter`, ...: taken for std's);
   - only fns that Rust's privacy lets the caller's module name are reached.
   A type is in play once a reached fn belongs to it or names it, or a type in play names
   it in its definition (its fields). Reaching a type's fn also reaches its `Drop::drop`.
   `python3 .ci/structure.py --why src/x.rs` prints how x.rs is reached.
2. Executor's face: the distinct names that code outside the executor module (`src/exec/`)
   takes from it: items it defines visible to the crate (`pub`, `pub(crate)`, `pub(super)`
   in its `mod.rs`) that a path names from outside (`exec::X`, `use crate::exec::{X, ..}`,
   or through a `pub mod` of it: `fence::X`); and their methods and fields that outside
   code names as `Type::name`, in a struct literal or pattern, or as `.name` when no type
   outside the module (nor STD_METHODS) has a method or field of that name. The structs
   whose non-private fields outside code may use are listed too.
3. Feature sites: the `feature = "x"` in non-test code of any build (`cfg`, `cfg_attr`,
   `cfg!`) outside the feature's own module, FEATURE_HOMES.
4. Core lines: the lines of the build with no feature, and its code lines.
5. Locks are not counted here: a test measures them (`graph::tests::
   a_reused_frame_takes_at_most_three_locks`, `cargo test -p vk-baton --lib locks -- --nocapture`
   prints them), through the graph's and executor's one mutex type, `src/sync.rs`.

`--check` fails when a count is above `.ci/structure-baseline.json` (a regression; line
counts may grow by 1 %, since they move with every doc comment) and only
reports the targets not yet met; `--update` writes the counts as the new baseline.
"""
import argparse
import json
import os
import re
import sys
import tomllib

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from rust_source import Build, Crate, Fn, line_counts  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "structure-baseline.json")

# Each feature's own modules, as paths under src/ (the folder `x/` or the file `x.rs`): the
# top-level module named after the feature. A feature whose code sits inside another module
# (`plan/schedule/`) has its sites there counted as outside.
FEATURE_HOMES = {
    "verify": ["verify"],
    "schedule": ["schedule"],
    "transients": ["transients", "transient"],
    "diagram": ["diagram"],
    "timing": ["timing"],
    "parallel-recording": ["parallel_recording"],
    "serde": ["serde", "json"],
}
ENTRIES = [("GraphBuilder", "insert_pass"), ("GraphBuilder", "finish"),
           ("Planned", "execute"), ("ExecutionFence", "wait")]
# Method names std types have that code calls on them all the time (`.len()` on a Vec).
STD_METHODS = set("""
new len is_empty push pop get get_mut insert remove contains clear iter iter_mut into_iter
extend take replace clone first last next map as_ref as_mut borrow drain retain truncate
reserve capacity keys values entry lock read write load store set swap split_at sort sort_by
min max resize find position any all count sum fmt eq cmp hash default from into index
with_capacity to_owned to_string copied cloned chain zip rev filter collect unwrap expect
""".split())
TARGETS = {"reading_files": 30, "reading_lines": 9000, "exec_face": 12, "feature_sites": 15,
           "feature_sites_each": 2, "core_lines": 15000}


def calls(src, f, modules):
    """(kind, name, receiver or qualifier) of each use of a fn in `f`'s signature and body:
    "method" (`.name(`, with what `receiver` says of it), "path" (`Q::name`, called or not)
    or "free" (`name(`, unless `f` binds `name`); and ("type", name) for every name."""
    toks, bound = src.toks, bindings(src, f)
    for i in range(f.lo, f.hi):
        t = toks[i]
        if src.dropped[i] or not re.match(r"[A-Za-z_]", t):
            continue
        called = toks[i + 1] == "(" or toks[i + 1:i + 3] == ["::", "<"]
        prev = toks[i - 1]
        if prev == "." and called:
            yield "method", t, receiver(src, i - 1, modules)
        elif prev == "::":
            yield "path", t, toks[i - 2]
        elif (called or prev == "(" and toks[i + 1] == ")") and prev != "fn" and t not in bound:
            yield "free", t, None  # a call, or a fn passed by name: `.map(raw)`
        yield "type", t, None


def bindings(src, f):
    """The names `f` binds: parameters, `let` and `for` patterns, closure parameters."""
    toks, out = src.toks, set()
    for i in range(f.lo, f.hi):
        if toks[i] == ":" and toks[i - 2] in ("(", ",") and i < (f.body or f.hi):
            out.add(toks[i - 1])
        elif toks[i] in ("let", "for", "|") and (toks[i] != "|" or toks[i - 1] in ("(", ",", "=", "move")):
            j = i + 1
            while j < f.hi and toks[j] not in ("=", ":", "in", "|", ";"):
                out.add(toks[j])
                j += 1
    return out


def receiver(src, dot, modules):
    """The receiver of the method call at `dot`: "self" for `self.name(`, "extern" for a
    chain that starts at another crate's path (`vk::BufferCopy::default().size(..)`), else
    None. Steps back over `.field`, `.call(..)`, `[..]` and `?`."""
    toks, match, j = src.toks, src.match, dot - 1
    while j > 0:
        t = toks[j]
        if t in (")", "]") and match[j] is not None:
            j = match[j] - 1
        elif t == "?":
            j -= 1
        elif re.match(r"[A-Za-z_]", t) and toks[j - 1] in (".", "::"):
            j -= 2
        elif re.match(r"[A-Za-z_]", t):
            if toks[j + 1] == "::":
                return None if t in modules or t[0].isupper() else "extern"
            return "self" if t == "self" and j + 1 == dot else None
        else:
            return None
    return None


class CallGraph:
    """What the entry fns may reach; see the module doc."""

    def __init__(self, crate):
        self.fns = crate.fns()
        self.modules = crate.modules | {"crate", "super", "self", "Self"}
        items = [i for src in crate.files for i in src.items]
        self.traits = {i.name for i in items if i.kind == "trait"}
        self.mentions = {}
        for i in items:
            if i.mentions is not None:
                self.mentions.setdefault(i.name, set()).update(i.mentions)
        self.types = set(self.mentions) | self.traits | {f.owner for f in self.fns if f.owner}
        self.named = {}
        for f in self.fns:
            self.named.setdefault(f.name, []).append(f)
        self.reached, self.in_play, self.waiting, self.work, self.via = [], set(), {}, [], {}

    def targets(self, f, kind, name, q):
        fns = self.named.get(name, [])
        if kind == "free":
            return [g for g in fns if g.owner is None]
        if kind == "method" and q == "self":
            return [g for g in fns if f.owner in (g.owner, g.trait)] or [g for g in fns if g.owner]
        if kind == "method" and (q == "extern" or name in STD_METHODS):
            return []  # another crate's builder; an untyped `.len()`, taken for std's
        if kind == "method":
            return [g for g in fns if g.owner is not None]
        if q == "Self":
            in_trait = f.trait is not None and f.owner == f.trait
            return [g for g in fns if (g.trait if in_trait else g.owner) == f.owner]
        if q in self.traits:
            return [g for g in fns if q in (g.trait, g.owner)]
        if q in self.types:
            return [g for g in fns if g.owner == q]
        if q in ("crate", "super", "self") or q[:1].islower():
            return [g for g in fns if g.owner is None]
        return []

    def reach(self, g, via=None):
        if g not in self.reached:
            self.via[id(g)] = via
            self.reached.append(g)
            self.work.append(g)
            self.play(g.owner)
            for d in self.named.get("drop", []):
                if d.owner == g.owner and d.trait == "Drop":
                    self.reach(d, "drop")

    def play(self, t):
        if t not in self.types or t in self.in_play:
            return
        self.in_play.add(t)
        for g, via in self.waiting.pop(t, []):
            self.reach(g, via)
        for u in sorted(self.mentions.get(t, ())):
            self.play(u)

    def run(self, entries):
        for owner, name in entries:
            found = [f for f in self.named.get(name, []) if f.owner == owner]
            if not found:
                sys.exit("structure.py: entry %s::%s not found" % (owner, name))
            for f in found:
                self.reach(f)
        while self.work:
            f = self.work.pop(0)
            for kind, name, q in calls(f.file, f, self.modules):
                if kind == "type":
                    self.play(f.owner if name == "Self" else name)
                    continue
                for g in self.targets(f, kind, name, q):
                    if not g.seen_from(f.module):
                        continue
                    typed = q == "self" and g.owner == f.owner
                    if kind == "method" and not typed and g.owner not in self.in_play and g.trait not in self.in_play:
                        self.waiting.setdefault(g.owner, []).append((g, f))
                        self.waiting.setdefault(g.trait, []).append((g, f))
                    else:
                        self.reach(g, f)
        return self.reached


def reading_path(src_dir, features):
    crate = Crate(src_dir, Build(features))
    graph = CallGraph(crate)
    reached = graph.run(ENTRIES)
    files = sorted({f.file.path: f.file for f in reached}.items())
    return [(path, line_counts(src)[0]) for path, src in files], graph


def chain(graph, f):
    """How `f` was reached: entry -> ... -> f."""
    out = []
    while isinstance(f, Fn):
        out.append("%s::%s (%s)" % (f.owner or "", f.name, f.file.path) if f.owner else "%s (%s)" % (f.name, f.file.path))
        f = graph.via.get(id(f))
    return " <- ".join(out) + ("" if f is None else " <- " + f)


def exec_face(crate, module):
    """(names the rest of the crate takes from `module`, the non-private fields it sees of
    the structs among them); see the module doc."""
    inside = [src for src in crate.files if src.module[:1] == (module,)]
    outside = [src for src in crate.files if src.module[:1] != (module,)]
    public = {src.module[1] for src in inside if len(src.module) == 2 and is_pub_mod(crate, src)}
    named, members, paths = set(), set(), set()
    for src in outside:
        toks = src.toks
        for i, t in enumerate(toks[:-2]):
            if src.dropped[i]:
                continue
            if toks[i - 1] == "." and re.match(r"[A-Za-z_]", t):
                members.add(t)
            if toks[i + 1] == "::" and toks[i + 2] != "{":
                paths.add((t, toks[i + 2]))
            if toks[i + 1] == "{" and t[:1].isupper() and toks[i - 1] not in ("impl", "for", "struct"):
                body = toks[i + 2:src.match[i + 1]]  # a struct literal or pattern: its fields
                paths.update((t, f) for n, f in enumerate(body[:-1]) if body[n + 1] in (":", ",")
                             and (n == 0 or body[n - 1] == ","))
            from_here = t == module or t in public and (toks[i - 1] != "::" or toks[i - 2] in ("crate", module))
            if from_here and toks[i + 1] == "::":
                group = toks[i + 2:src.match[i + 2]] if toks[i + 2] == "{" else toks[i + 2:i + 3]
                named.update(g for n, g in enumerate(group) if group[n + 1:n + 2] in ([], [","], ["}"], ["as"]))
    elsewhere = STD_METHODS | {i.name for src in outside for i in src.items if i.kind in ("method", "field")}

    def visible(item):
        return item.vis in ("pub", "pub(crate)") or item.vis == "pub(super)" and item.file.module == (module,)

    items = [i for src in inside for i in src.items if visible(i)]
    face = {i.name: "%s %s (%s)" % (i.kind, i.name, i.file.path) for i in items
            if i.owner is None and i.name in named}
    fields = {}
    for i in items:
        if i.owner not in face or i.kind not in ("method", "field"):
            continue
        if (i.owner, i.name) in paths or i.name in members and i.name not in elsewhere:
            face.setdefault(i.name, "%s %s::%s (%s)" % (i.kind, i.owner, i.name, i.file.path))
        if i.kind == "field":
            fields.setdefault(i.owner, []).append(i.name)
    return face, fields


def is_pub_mod(crate, src):
    """Whether `src`'s module is declared `pub mod` (or `pub(crate) mod`) by its parent."""
    parent = next(p for p in crate.files if p.module == src.module[:-1])
    name = src.module[-1]
    return any(parent.toks[k:k + 3] == ["mod", name, ";"] and parent.toks[k - 1] in ("pub", ")")
               for k in range(1, len(parent.toks) - 2))


def feature_sites(crate, root, features):
    """feature -> [file, ...], one entry per `feature = "x"` outside the feature's home."""
    sites = {f: [] for f in features}
    for src in crate.files:
        rel = os.path.relpath(src.path, root)
        for i, t in enumerate(src.toks):
            if t != "feature" or src.dropped[i] or src.toks[i + 1] != "=":
                continue
            m = re.match(r'\s*"([^"]*)"', src.raw[src.offs[i + 1] + 1:])
            name = m.group(1) if m else None
            homes = FEATURE_HOMES.get(name, [name.replace("-", "_")] if name else [])
            if name in sites and not any(rel == h + ".rs" or rel.startswith(h + "/") for h in homes):
                sites[name].append(src.path)
    return sites


def measure(root, module):
    with open(os.path.join(os.path.dirname(root) or ".", "Cargo.toml"), "rb") as f:
        features = tomllib.load(f)["features"]
    default = set(features.get("default", []))
    reading, graph = reading_path(root, default)
    any_build = Crate(root, Build(None))
    face, fields = exec_face(any_build, module)
    sites = feature_sites(any_build, root, sorted(set(features) - {"default"}))
    core = [line_counts(src) for src in Crate(root, Build(set())).files]
    counts = {
        "reading_files": len(reading),
        "reading_lines": sum(n for _, n in reading),
        "exec_face": len(face),
        "feature_sites": sum(len(v) for v in sites.values()),
        "core_lines": sum(n for n, _ in core),
        "core_code_lines": sum(c for _, c in core),
    }
    counts.update({"feature_sites.%s" % f: len(v) for f, v in sites.items()})
    details = {"reading_path": dict(reading), "exec_face": face, "exec_fields": fields,
               "feature_sites": sites, "graph": graph}
    return counts, details


def report(counts, details, module, verbose):
    """The human-readable report: each count next to its target."""
    n = "{:,}".format
    met = lambda ok: "met" if ok else "not yet met"
    sites = {k.split(".", 1)[1]: v for k, v in counts.items() if k.startswith("feature_sites.")}
    over = [f for f, v in sites.items() if v > TARGETS["feature_sites_each"]]
    print("reading path (an upper bound): %d files, %s lines (target <= %d files, <= %s lines): %s" % (
        counts["reading_files"], n(counts["reading_lines"]), TARGETS["reading_files"],
        n(TARGETS["reading_lines"]), met(target_met(counts, "reading_files", "reading_lines"))))
    by_module = {}
    for path, lines in details["reading_path"].items():
        top = path.split(os.sep)[1].removesuffix(".rs")
        files, total = by_module.get(top, (0, 0))
        by_module[top] = (files + 1, total + lines)
    print("    " + "; ".join("%s %d/%s" % (m, f, n(t)) for m, (f, t) in sorted(by_module.items())))
    if verbose:
        for path, lines in details["reading_path"].items():
            print("    %6s  %s" % (n(lines), path))
    print("executor's face (src/%s/): %d names (target <= %d): %s" % (
        module, counts["exec_face"], TARGETS["exec_face"], met(target_met(counts, "exec_face"))))
    if verbose:
        for name in sorted(details["exec_face"]):
            print("    " + details["exec_face"][name])
    for struct, fields in sorted(details["exec_fields"].items()):
        print("    fields the rest sees: %s { %s }" % (struct, ", ".join(fields)))
    print("feature sites outside their features' modules: %d (target <= %d per feature, ~%d in all): %s" % (
        counts["feature_sites"], TARGETS["feature_sites_each"], TARGETS["feature_sites"],
        met(not over and target_met(counts, "feature_sites"))))
    for feature, files in sorted(details["feature_sites"].items()):
        where = ", ".join("%s x%d" % (f, files.count(f)) for f in sorted(set(files))) if verbose else ""
        print(("    %-20s %3d  %s" % (feature, len(files), where)).rstrip())
    print("core lines, no default feature: %s (%s without comment lines) (target <= %s): %s" % (
        n(counts["core_lines"]), n(counts["core_code_lines"]), n(TARGETS["core_lines"]),
        met(target_met(counts, "core_lines"))))
    print("locks: not counted here (measured by the unit test "
          "graph::tests::a_reused_frame_takes_at_most_three_locks)")


def target_met(counts, *keys):
    return all(counts[k] <= TARGETS[k] for k in keys)


# Line counts move with every doc comment: they may grow this much over the baseline before
# it counts as a regression. Files, names and sites may not grow at all.
LINE_SLACK = 0.01


def allowed(key, base):
    return base + int(base * LINE_SLACK) if key.endswith("lines") else base


def check(counts):
    """The keys whose count went above the baseline's (line counts: by more than 1 %)."""
    with open(BASELINE) as f:
        base = json.load(f)
    worse = [k for k in sorted(counts) if k in base and counts[k] > allowed(k, base[k])]
    for k in worse:
        print("REGRESSION: %s is %d, above the baseline's %d (allowed: %d)"
              % (k, counts[k], base[k], allowed(k, base[k])))
    for k in sorted(set(counts) - set(base)):
        print("new count %s = %d (not in the baseline: run --update)" % (k, counts[k]))
    return worse


def main():
    ap = argparse.ArgumentParser(description="Issue 41's structure counts; see the module doc.")
    ap.add_argument("--src", default="src", help="the crate's source folder, from the repository root (default src)")
    ap.add_argument("--exec", default="exec", help="the executor's module (default exec)")
    ap.add_argument("--verbose", action="store_true", help="list files, names and sites")
    ap.add_argument("--json", action="store_true", help="print the counts and lists as JSON")
    ap.add_argument("--why", metavar="FILE", help="how the reading path reaches FILE")
    ap.add_argument("--check", action="store_true", help="fail if a count is above the baseline")
    ap.add_argument("--update", action="store_true", help="write the counts as the baseline")
    args = ap.parse_args()
    os.chdir(os.path.dirname(HERE))  # paths are the repository root's
    counts, details = measure(os.path.normpath(args.src), args.exec)
    graph = details.pop("graph")
    if args.why:
        found = [f for f in graph.reached if os.path.normpath(f.file.path) == os.path.normpath(args.why)]
        print(chain(graph, found[0]) if found else "%s: not on the reading path" % args.why)
        return 0
    if args.json:
        print(json.dumps({"counts": counts, "targets": TARGETS, **details}, indent=1, sort_keys=True))
    else:
        report(counts, details, args.exec, args.verbose)
    if args.update:
        with open(BASELINE, "w") as f:
            json.dump(counts, f, indent=1, sort_keys=True)
            f.write("\n")
        print("baseline written: " + os.path.relpath(BASELINE))
    if args.check:
        if check(counts):
            return 1
        print("no count above the baseline (%s)" % os.path.relpath(BASELINE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
