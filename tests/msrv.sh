#!/usr/bin/env bash
# The minimum Rust version the README states, checked against the code: the highest
# `rust-version` any package in the build (dependencies and dev-dependencies, e.g. criterion for
# the benches the test command compiles) declares, for this machine's target. Fails when the
# workspace's `rust-version` is not that version, or when the README states a lower one.
#
#   bash tests/msrv.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
host=$(rustc -vV | sed -n 's/^host: //p')
cargo metadata --format-version 1 --locked --filter-platform "$host" | python3 -c '
import json, re, sys
m = json.load(sys.stdin)
def key(v):
    return tuple(int(x) for x in (v.split(".") + ["0", "0"])[:3])
ids = {n["id"] for n in m["resolve"]["nodes"]}
need, who = "0", "nothing"
for p in m["packages"]:
    v = p.get("rust_version")
    # Our own packages declare the workspace version: what they need is what their dependencies need.
    if p["id"] in ids and p["source"] is not None and v and key(v) > key(need):
        need, who = v, p["name"] + " " + p["version"]
ws = re.search(r"^rust-version\s*=\s*\"([0-9.]+)\"", open("Cargo.toml").read(), re.M)
readme = re.search(r"Rust toolchain \(([0-9.]+) or newer\)", open("README.md").read())
if not ws or not readme:
    sys.exit("msrv.sh: FAIL: no rust-version in Cargo.toml or no \"Rust toolchain (X or newer)\" in README.md")
ws, readme = ws.group(1), readme.group(1)
print(f"msrv: the build needs Rust {need} ({who}); Cargo.toml says {ws}, README.md {readme}")
if key(ws) != key(need):
    sys.exit(f"msrv.sh: FAIL: the workspace rust-version is {ws}, the build needs {need} ({who})")
if key(readme) < key(need):
    sys.exit(f"msrv.sh: FAIL: README.md states Rust {readme}, the build needs {need} ({who})")
'
