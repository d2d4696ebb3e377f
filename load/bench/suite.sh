#!/bin/bash
# Every benchmark of docs/benchmarks.md, both backends, one after another; each report.json is
# copied to OUT (default docs/bench/DATE). Needs release builds and PostgreSQL (see run.sh).
#
#   load/bench/suite.sh [OUT]
#   load/bench/suite.sh --compare [compare.sh flags…]   (the table's commands, each figure beside
#                                                         the recorded one: see compare.sh)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" = "--compare" ]; then shift; exec "$ROOT/load/bench/compare.sh" "$@"; fi
OUT=${1:-$ROOT/docs/bench/$(date +%F)}
mkdir -p "$OUT"
run() { # NAME DB -- SCENARIO...
  local name=$1 db=$2; shift 3
  echo "== $name"
  "$ROOT/load/bench/run.sh" "$name" "$db" -- "$@" | grep -E "against|moves:|move ack|opponent|fanout all|joined|missing|errors|B/connection|disk flush|outside the disk" || true
  cp "$ROOT/bench-out/$name/report.json" "$OUT/$name.json" 2>/dev/null || echo "   (no report)"
}
for db in sqlite pg; do
  for i in 1 2 3; do run games-$db-$i $db -- games --target both --games 1000 --think 0 --plies 100; done
  run realistic-$db $db -- games --target both --games 5000 --think exp:2s --plies 30
  run fanout-$db $db -- fanout --target both --spectators 10000 --think 500ms --plies 40
  run idle-$db $db -- idle --target both --games 9000 --hold 10s
  run round-$db $db -- round-start --target both --boards 500 --spectators 4 --window 5s --plies 20 --think 1s
  run storm-$db $db -- reconnect-storm --target both --games 1000 --spectators 2 --fraction 0.3 --storm-after 5s --think exp:1s --plies 30
done
