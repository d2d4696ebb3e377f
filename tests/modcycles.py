#!/usr/bin/env python3
"""Import cycles between the modules (files) of a Rust crate.

    python3 tests/modcycles.py crates/game/src [SRC ...]
    python3 tests/modcycles.py --known KNOWN crates/server/src
    python3 tests/modcycles.py --self-test

For each source directory (a crate's `src/`), every `.rs` file is a module (`lib.rs`/`main.rs`
the root, `x/mod.rs` the module `x`). A file depends on another when it names it by path:
`crate::a::b`, `super::x`, `self::x`, or a child module of its own by its bare name (`relay::`
in `node/mod.rs`), in a `use` or anywhere in its code. A path names the deepest module that
exists (`crate::league::runner::GameEnd` is `league/runner.rs`; `crate::Env` is the root). A
parent declaring its children (`pub mod x;`) or re-exporting them (`pub use x::Y;`) is not a
dependency on them; a child using an item of its parent is one (`super::Item`).
Test modules (`#[cfg(test)] mod tests { ... }`, files named `tests.rs` or `*_tests.rs`) and
comments are left out: tests may reach anywhere.

Prints every cycle (strongly connected component of more than one file) with the names that tie
it, and exits 1 when there is one. With `--known FILE`, cycles listed there (a line
`SRC: FILE FILE ...` each, the files of one cycle as they stand) are tolerated while they are
taken apart, as a ratchet: it still fails when a cycle appears that is not listed, when a file
joins a listed one, and when a listed file is no longer in a cycle (the list must shrink with
the code). `--self-test` runs the check on fixture trees made in a
temporary directory: one with a cycle (must fail, naming it), one without (must pass).

A script of its own rather than a cargo tool: cargo-modules answers through a rust-analyzer
build of the whole workspace (minutes, and a large tool to install in CI), cargo-cycles is an
early release; this reads the sources as text in well under a second and needs only python3,
which CI already has. Its limit: it reads paths as text, so a module reached only through a
re-export or a glob (`use crate::*`) is not seen.
"""

import os
import re
import sys
import tempfile

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
BRACES = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def strip_test_modules(text):
    """Removes `#[cfg(test)]` items (a module with a body, or a `mod x;` line)."""
    out = []
    i = 0
    while True:
        j = text.find("#[cfg(test)]", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = j + len("#[cfg(test)]")
        semi = text.find(";", k)
        brace = text.find("{", k)
        if brace < 0 or (0 <= semi < brace):
            i = semi + 1 if semi >= 0 else len(text)
            continue
        depth = 0
        m = brace
        while m < len(text):
            if text[m] == "{":
                depth += 1
            elif text[m] == "}":
                depth -= 1
                if depth == 0:
                    break
            m += 1
        i = m + 1


def modules(src):
    """Maps module paths (tuples) to files, for every .rs file under src."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("lib", "main") and len(parts) == 1:
                parts = []
            elif parts[-1] == "mod":
                parts = parts[:-1]
            if f == "tests.rs" or f.endswith("_tests.rs"):
                continue
            mods[tuple(parts)] = rel
    return mods


def resolve(mods, base, segs):
    """The deepest existing module of base + segs (None if the path leaves the crate)."""
    path = list(base)
    best = tuple(path)
    for s in segs:
        path.append(s)
        if tuple(path) in mods:
            best = tuple(path)
        else:
            break
    return best


def edges(src):
    mods = modules(src)
    deps = {}
    for mod, rel in mods.items():
        text = open(os.path.join(src, rel), encoding="utf-8").read()
        text = strip_test_modules(strip_comments(text))
        children = set(MOD_DECL.findall(text))
        found = {}

        def add(base, segs, name):
            target = resolve(mods, base, segs)
            if target != mod:
                found.setdefault(target, set()).add(name)

        def start(kind, n_super):
            if kind == "crate":
                return ()
            if kind == "self":
                return mod
            return mod[: max(0, len(mod) - n_super)]

        def split(kind, tail):
            segs = [s for s in tail.split("::") if s]
            n_super = 1 if kind == "super" else 0
            while segs and segs[0] == "super":
                n_super += 1
                segs = segs[1:]
            return start(kind, n_super), segs

        for m in BRACES.finditer(text):
            base, segs = split(m.group(1), m.group(2))
            for item in re.split(r",", re.sub(r"\{[^{}]*\}", "", m.group(3))):
                item = item.strip().split(" as ")[0].strip()
                if not item or item == "self":
                    add(base, segs, "::".join(segs) or m.group(1))
                    continue
                sub = [s for s in item.split("::") if s]
                add(base, segs + sub, sub[-1])
        for m in PATH.finditer(text):
            base, segs = split(m.group(1), m.group(2))
            add(base, segs, segs[-1] if segs else m.group(1))
        # Bare paths to the file's own child modules (`relay::spawn` in node/mod.rs).
        # Re-exports (`pub use relay::Relay;`) are the parent's face, not a use of the child.
        body = re.sub(r"^\s*pub(?:\([^)]*\))?\s+use\s[^;]*;", "", text, flags=re.M)
        for child in children:
            if mod + (child,) in mods and re.search(r"(?<![:\w])" + child + r"::", body):
                found.setdefault(mod + (child,), set()).add(child)
        # A parent declaring its children is not a dependency on them; using them is.
        deps[mod] = found
    return mods, deps


def cycles(deps):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in deps.get(v, {}):
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

    sys.setrecursionlimit(10000)
    for v in list(deps):
        if v not in index:
            visit(v)
    return out


def read_known(path):
    known = {}
    if path is None:
        return known
    for line in open(path, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if not line:
            continue
        src, _, files = line.partition(":")
        known.setdefault(os.path.normpath(src.strip()), []).append(set(files.split()))
    return known


def check(src, quiet=False, known=None):
    say = (lambda *_: None) if quiet else print
    mods, deps = edges(src)
    found = cycles(deps)
    groups = (known or {}).get(os.path.normpath(src), [])
    if groups:
        ok = True
        seen = set()
        for comp in found:
            names = {mods[m] for m in comp}
            seen |= names
            if not any(names <= g for g in groups):
                ok = False
                extra = sorted(min((names - g for g in groups), key=len))
                say(f"{src}: a cycle not in the known list (new files: {', '.join(extra)}):")
                print_cycle(src, mods, deps, comp, say)
        stale = sorted(set().union(*groups) - seen)
        if stale:
            ok = False
            say(f"{src}: no longer in a cycle, to remove from the known list: {', '.join(stale)}")
        if ok:
            n = len(set().union(*groups))
            say(f"{src}: no new import cycle ({n} files in known cycles being taken apart)")
        return ok
    for comp in found:
        print_cycle(src, mods, deps, comp, say)
    if not found:
        say(f"{src}: no import cycle between its {len(mods)} modules")
    return not found


def print_cycle(src, mods, deps, comp, say):
    names = [mods[m] for m in comp]
    say(f"{src}: import cycle of {len(comp)} files: {', '.join(names)}")
    inside = set(comp)
    for a in comp:
        for b, why in sorted(deps[a].items()):
            if b in inside:
                say(f"  {mods[a]} -> {mods[b]}: {', '.join(sorted(why))}")


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as d:
        def tree(name, files):
            root = os.path.join(d, name)
            for rel, text in files.items():
                p = os.path.join(root, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text)
            return root

        good = tree("acyclic", {
            "lib.rs": "pub mod a;\npub mod b;\npub mod net;\npub struct Env;\n",
            "a.rs": "use crate::b::Thing;\n// crate::net::X in a comment is no dependency\n",
            "b.rs": "pub struct Thing;\n#[cfg(test)]\nmod tests { use crate::a; }\n",
            "net/mod.rs": "pub mod relay;\npub use relay::Relay;\n",
            "net/relay.rs": "use super::super::b::Thing;\npub struct Relay;\n",
        })
        bad = tree("cyclic", {
            "lib.rs": "pub mod a;\npub mod b;\npub mod net;\npub struct Env { r: net::Relay }\n",
            "a.rs": "use crate::b::Thing;\n",
            "b.rs": "pub struct Thing;\npub fn f(_: &crate::net::relay::Relay) {}\n",
            "net/mod.rs": "pub mod relay;\npub use relay::Relay;\n",
            "net/relay.rs": "use crate::{a, b::Thing};\npub struct Relay;\n",
        })
        if not check(good, quiet=True):
            print("self-test: a tree without a cycle was reported", file=sys.stderr)
            ok = False
        _, deps = edges(bad)
        found = cycles(deps)
        want = [("b",), ("net", "relay")]
        if not any(all(w in comp for w in want) for comp in found):
            print(f"self-test: the cycle b -> net/relay -> b was not found: {found}",
                  file=sys.stderr)
            ok = False
        if check(bad, quiet=True):
            print("self-test: a tree with a cycle passed", file=sys.stderr)
            ok = False
        rel = os.path.normpath(bad)
        if not check(bad, quiet=True, known={rel: [{"a.rs", "b.rs", "net/relay.rs"}]}):
            print("self-test: a known cycle was not tolerated", file=sys.stderr)
            ok = False
        if check(bad, quiet=True, known={rel: [{"a.rs", "b.rs"}]}):
            print("self-test: a file joining a known cycle passed", file=sys.stderr)
            ok = False
        if check(good, quiet=True, known={os.path.normpath(good): [{"a.rs", "b.rs"}]}):
            print("self-test: a stale known cycle passed", file=sys.stderr)
            ok = False
    print("modcycles self-test: " + ("ok" if ok else "FAILED"))
    return ok


def main(args):
    if args == ["--self-test"]:
        return 0 if self_test() else 1
    known = None
    if args[:1] == ["--known"] and len(args) > 1:
        known = read_known(args[1])
        args = args[2:]
    if not args:
        print(__doc__)
        return 2
    ok = all([check(src, known=known) for src in args])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
