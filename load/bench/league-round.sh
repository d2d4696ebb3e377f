#!/bin/bash
# The league-round benchmark as recorded in docs/benchmarks.md: a fresh database, chuhe pinned to
# core 0, chuhe-load pinned to core 1 (one tokio worker), the machine's load average before and
# after.
#
#   load/bench/league-round.sh NAME sqlite|pg [chuhe-load league-round flags...]
#   load/bench/league-round.sh lr-500 sqlite --boards 500 --boards-per-match 50
#
# Output: bench-out/NAME/{summary.txt,report.json,serve.log,load.err,loadavg.txt}. Needs release
# builds (cargo build --release -p chuhe -p chuhe-load); `pg` needs PostgreSQL on 127.0.0.1:5432
# (user postgres, trust auth) and drops/creates the database chuhe_bench.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,10p "$0"; exit 1; }
NAME=$1; DB=$2; shift 2
. "$(dirname "$0")/common.sh"
bench_start "$NAME" "$DB"
# --write-queue: the league's stream subscriber gets every board's game_created entry of the round
# in one burst (one frame per board). A connection's queue holds its write queue plus a league's
# 512-entry replay ring, so 500 boards fit by default now; the larger queue keeps the figures
# comparable with the recorded runs and lets rounds of more boards be measured.
bench_serve --log warn --write-queue "${CHUHE_BENCH_WRITE_QUEUE:-4096}"
trap 'kill -INT $SP 2>/dev/null; wait $SP 2>/dev/null || true' EXIT
bench_ready
echo "before: $(cat /proc/loadavg)" >"$D/loadavg.txt"
set +e
taskset -c 1 "$B/chuhe-load" --threads 1 league-round "$@" --chuhe-url ws://127.0.0.1:$PORT/ws \
  --organizer-token "$TOKEN" --json "$D/report.json" >"$D/summary.txt" 2>"$D/load.err"
RC=$?
echo "after: $(cat /proc/loadavg)" >>"$D/loadavg.txt"
cat "$D/summary.txt" "$D/loadavg.txt"
exit $RC
