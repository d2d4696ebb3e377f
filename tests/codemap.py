#!/usr/bin/env python3
"""ARCHITECTURE.md's code map against the tree.

    python3 tests/codemap.py [--self-test]

Every path the code map's table names must exist: the paths of a row's first column (with
`{a,b}` alternatives; `…` stands for "and others" and is skipped), and every file or folder its
third column names in backticks (`state.rs`, `core/`, `crates/server/src/time.rs`), looked up
from the repository's root, the row's own folder (a crate's `src/`) and the folders of the row's
first column. And every source file of the crates listed in DIRS (tests excepted) must be named
by some row, itself or through a folder that holds it, so a file added or moved without the map
fails here. `--self-test` runs the check on a fixture map and tree with one stale path and one
file the map misses, and fails unless both are reported.
"""

import os
import re
import sys
import tempfile

# Crates whose every file the map must name.
DIRS = ["crates/game/src", "crates/server/src"]
PATHLIKE = re.compile(r"^[\w.\-/{},…]+$")


def rows(text):
    sec = text.split("## Code map", 1)[1].split("\n## ", 1)[0]
    for line in sec.splitlines():
        if line.startswith("| `") or line.startswith("| ["):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            yield cells[0], cells[2] if len(cells) > 2 else ""


def expand(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [] if "…" in p else [p]
    out = []
    for alt in m.group(1).split(","):
        if alt == "…":
            continue
        out += expand(p[: m.start()] + alt + p[m.end():])
    return out


def ticked(cell):
    return [t for t in re.findall(r"`([^`]+)`", cell) if PATHLIKE.match(t)]


TOP = ("crates/", "docs/", "tests/", "deploy/", "proto/", "migrations/", "load/", "bench/", "src/")


def looks_like_path(t):
    if t.startswith(TOP):
        return True
    return bool(re.search(r"\.(rs|md|toml|sh|proto|py|js|json)$", t) or re.match(r"^\w+/$", t))


def check(root, dirs=DIRS):
    text = open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8").read()
    problems, named = [], set()
    for first, what in rows(text):
        bases = []
        for t in ticked(first):
            for p in expand(t.replace(" + ", "")):
                p = p.rstrip("/")
                full = os.path.join(root, p)
                if not os.path.exists(full):
                    problems.append(f"code map names {p}, which does not exist")
                    continue
                named.add(os.path.normpath(p))
                d = p if os.path.isdir(full) else os.path.dirname(p)
                bases += [d, os.path.join(d, "src")]
        for t in ticked(what):
            if not looks_like_path(t):
                continue
            for p in expand(t):
                p = p.rstrip("/")
                hits = [os.path.normpath(os.path.join(b, p)) for b in [""] + bases
                        if os.path.exists(os.path.join(root, b, p))]
                if not hits:
                    problems.append(f"code map row {first} names {p}, found nowhere")
                named.update(hits)
                # A folder named here is where the names after it are looked up too.
                bases += [h for h in hits if os.path.isdir(os.path.join(root, h))]
    for d in dirs:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if not f.endswith(".rs"):
                    continue
                rel = os.path.normpath(os.path.relpath(os.path.join(dirpath, f), root))
                parts = rel.split(os.sep)
                top = len(os.path.normpath(d).split(os.sep))
                # The file itself, or a folder inside the crate's src/ that holds it.
                crate_root = f in ("lib.rs", "main.rs") and len(parts) == top + 1
                covered = rel in named or any(
                    os.sep.join(parts[:i]) in named for i in range(top + 1, len(parts))
                ) or (crate_root and os.path.dirname(os.path.normpath(d)) in named)
                if not covered:
                    problems.append(f"{rel} is not in the code map")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        for rel in ["crates/a/src/lib.rs", "crates/a/src/one.rs", "crates/a/src/two.rs",
                    "crates/a/src/sub/mod.rs", "crates/a/src/sub/x.rs"]:
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").close()
        with open(os.path.join(root, "ARCHITECTURE.md"), "w") as f:
            f.write("# A\n\n## Code map\n\n| path | package | what |\n|---|---|---|\n"
                    "| `crates/a` | `a` | `one.rs` (one), `gone.rs` (moved away), `sub/` (all) |\n"
                    "\n## Next\n")
        got = check(root, dirs=["crates/a/src"])
        want = ["gone.rs", "crates/a/src/two.rs"]
        ok = all(any(w in g for g in got) for w in want) and len(got) == 2
        print("codemap self-test: " + ("ok" if ok else f"FAILED: {got}"))
        return ok


def main(args):
    if args == ["--self-test"]:
        return 0 if self_test() else 1
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print("ARCHITECTURE.md: " + p)
    if not problems:
        print("ARCHITECTURE.md: the code map names only paths that exist, and every file of "
              + ", ".join(DIRS))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
