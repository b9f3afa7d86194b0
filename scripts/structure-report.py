#!/usr/bin/env python3
"""The house's shape in numbers (issue 40): arrows between the appliance's folders, import
circles between files, production files over 600 lines and functions over 100 lines.

    python3 scripts/structure-report.py            # summary counts and the offenders
    python3 scripts/structure-report.py --check    # exit 1 if any target is missed

Definitions (written down so that the counts can be reproduced):
- A file's imports are the `crate::`, `super::` and `self::` paths it names (in `use` trees,
  expanded, and inline), and bare paths whose first segment is one of its own child modules.
  A path is resolved to the deepest module file that exists along it.
- Folder arrows: between the appliance's top-level modules (`appliance/src/<name>/` or
  `<name>.rs`). An arrow A -> B is "upward" when B also reaches A (both lie on one cycle); a
  two-way pair is A -> B and B -> A.
- Import circles: strongly connected groups of two or more files of one crate in the file
  graph. An arrow from a child module's file to one of its ancestors' files (`super::Type` in
  `fec/pool.rs`, `crate::Error` anywhere) is not counted: the parent declaring and the children
  implementing is Rust's ordinary shape. Circles through siblings, or through a parent and a
  grandchild of another branch, are counted.
- Non-test lines: a file's lines outside `#[cfg(test)]` items; files under `tests/`, `benches/`,
  `bench/`, `fuzz/`, `testkit/`, `parsed-oracle/` and generated tables do not count. A file may
  carry a one-line reason as its first `//!` line: `//! Length: over 600 lines because ...`.
- Function length: from the `fn` line to its closing brace, outside tests and generated tables.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = ["proto", "gf256", "decoder", "capture", "archive", "front", "stream", "rpc", "insights",
          "testkit", "appliance", "xdp-bpf", "bench"]
GENERATED = {"decoder/src/delta/tables.rs"}
NOT_PRODUCTION = ("tests/", "benches/", "bench/", "fuzz/", "testkit/", "parsed-oracle/")
FILE_LIMIT = 600
FILE_REASONS_ALLOWED = 4
FN_LIMIT = 100
REASON = re.compile(r"^//!\s*(Length: )?[Oo]ver 600 lines", re.M)


def strip_comments_and_strings(text):
    """Blanks out comments, string and char literals, keeping line breaks and positions."""
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
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            hashes = m.group(1)
            end = text.find('"' + hashes, i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']{0,9}|[^\\'])'", text[i:i + 14])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, open_pos):
    depth = 0
    for j in range(open_pos, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def test_spans(code):
    """Character spans of `#[cfg(test)]` items (modules and functions)."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        semi = code.find(";", m.end())
        brace = code.find("{", m.end())
        if brace < 0 or (0 <= semi < brace):
            spans.append((m.start(), semi if semi >= 0 else m.end()))
            continue
        spans.append((m.start(), matching_brace(code, brace)))
    return spans


def in_spans(pos, spans):
    return any(a <= pos <= b for a, b in spans)


def rust_files(crate):
    base = os.path.join(ROOT, crate)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules")]
        for f in sorted(filenames):
            if f.endswith(".rs"):
                yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def is_production(rel):
    if rel in GENERATED or "/tests/" in rel or "/benches/" in rel or rel.endswith("/tests.rs"):
        return False
    if rel.endswith("build.rs") and rel.count("/") == 1:
        return True
    return not rel.startswith(NOT_PRODUCTION) and "/src/" in rel


def module_of(rel):
    """(crate, module path) of a src file, e.g. ('appliance', ('pipeline', 'ring'))."""
    crate, rest = rel.split("/", 1)
    if not rest.startswith("src/"):
        return crate, None
    parts = rest[len("src/"):][:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    if rest.startswith("src/bin/"):
        return crate, None
    return crate, tuple(parts)


def expand_use_tree(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        brace = t.find("{")
        if brace < 0:
            out.append(prefix + t)
            return
        head, body = t[:brace], t[brace + 1:-1]
        depth, start = 0, 0
        for k, ch in enumerate(body + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                part = body[start:k]
                if part:
                    walk(prefix + head, part)
                start = k + 1

    walk("", tree)
    return out


def paths_in(code):
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        paths.extend(expand_use_tree(m.group(1)))
    for m in re.finditer(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)", code):
        paths.append(m.group(1))
    return paths


def resolve(module, path, modules, children):
    segs = [s.split(" as ")[0] for s in path.split("::")]
    segs = [s for s in segs if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = module
        rest = segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif segs[0] in children.get(module, ()):
        base, rest = module, segs
    else:
        return None
    target = base
    for s in rest:
        if base + tuple([]) is not None and target + (s,) in modules:
            target = target + (s,)
        else:
            break
    return target


def file_graph(crate):
    files = {}
    for rel in rust_files(crate):
        c, mod = module_of(rel)
        if mod is None or not is_production(rel) and rel not in GENERATED:
            continue
        files[mod] = rel
    modules = set(files)
    children = {}
    for m in modules:
        if m:
            children.setdefault(m[:-1], set()).add(m[-1])
    edges = {m: set() for m in modules}
    for mod, rel in files.items():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            code = strip_comments_and_strings(fh.read())
        spans = test_spans(code)
        kept = "".join(ch if not in_spans(k, spans) else " " for k, ch in enumerate(code)) if spans else code
        for p in paths_in(kept):
            t = resolve(mod, p, modules, children)
            # A child naming an item of one of its ancestors' files is Rust's ordinary shape
            # (the parent declares, the children implement): only other arrows can close a circle.
            if t is not None and t != mod[: len(t)]:
                edges[mod].add(t)
    return files, edges


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def folder_arrows():
    files, edges = file_graph("appliance")
    top = {}
    for a, targets in edges.items():
        for b in targets:
            if a and b and a[0] != b[0]:
                top.setdefault(a[0], set()).add(b[0])
    nodes = {m[0] for m in files if m}
    comps = sccs(nodes, top)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    upward = sorted((a, b) for a, bs in top.items() for b in bs if comp_of[a] == comp_of[b])
    two_way = sorted((a, b) for a, bs in top.items() for b in bs if a < b and a in top.get(b, ()))
    return upward, two_way


def import_circles():
    circles = []
    for crate in CRATES:
        files, edges = file_graph(crate)
        for comp in sccs(set(files), edges):
            if len(comp) > 1:
                circles.append(sorted(files[m] for m in comp))
    return circles


def long_files():
    out = []
    for crate in CRATES:
        for rel in rust_files(crate):
            if not is_production(rel):
                continue
            with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
                text = fh.read()
            code = strip_comments_and_strings(text)
            spans = test_spans(code)
            test_lines = sum(code[a:b + 1].count("\n") + 1 for a, b in spans)
            lines = text.count("\n") - test_lines
            if lines > FILE_LIMIT:
                out.append((lines, rel, bool(REASON.search(text[:2000]))))
    return sorted(out, reverse=True)


FN = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"C\")\s+)*fn\s+(\w+)", re.M)


def long_functions():
    out = []
    for crate in CRATES:
        for rel in rust_files(crate):
            if rel in GENERATED or "/tests/" in rel or rel.endswith("/tests.rs") or "/benches/" in rel:
                continue
            with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
                code = strip_comments_and_strings(fh.read())
            spans = test_spans(code)
            for m in FN.finditer(code):
                if in_spans(m.start(), spans):
                    continue
                brace, semi = code.find("{", m.end()), code.find(";", m.end())
                if brace < 0 or (0 <= semi < brace):
                    continue
                end = matching_brace(code, brace)
                lines = code[m.start():end].count("\n") + 1
                if lines > FN_LIMIT:
                    line = code[: m.start()].count("\n") + 1
                    out.append((lines, f"{rel}:{line}", m.group(1)))
    return sorted(out, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = ap.parse_args()
    upward, two_way = folder_arrows()
    circles = import_circles()
    files = long_files()
    fns = long_functions()
    reasoned = [f for f in files if f[2]]
    print(f"appliance folders: {len(upward)} upward arrows, {len(two_way)} two-way pairs")
    for a, b in upward:
        print(f"  {a} -> {b}{'  (two-way)' if (min(a, b), max(a, b)) in two_way else ''}")
    print(f"import circles between files: {len(circles)}")
    for c in circles:
        print("  " + " <-> ".join(c))
    print(f"production files over {FILE_LIMIT} non-test lines: {len(files)} ({len(reasoned)} with a reason)")
    for lines, rel, why in files:
        print(f"  {lines:5d} {rel}{'  (reason given)' if why else ''}")
    print(f"functions over {FN_LIMIT} lines: {len(fns)}")
    for lines, where, name in fns:
        print(f"  {lines:5d} {where} {name}")
    missed = (upward or two_way or circles or fns or len(reasoned) > FILE_REASONS_ALLOWED
              or any(not why for _, _, why in files))
    if args.check and missed:
        print("structure-report: targets missed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
