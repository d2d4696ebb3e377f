#!/bin/bash
# One benchmark run as recorded in docs/benchmarks.md: a fresh database, chuhe pinned to core 0,
# chuhe-load pinned to core 1 (one tokio worker), the bare relay started by chuhe-load on core 0.
#
#   load/bench/run.sh NAME sqlite|pg -- SCENARIO [chuhe-load flags...]
#   load/bench/run.sh games-sqlite sqlite -- games --target both --games 1000 --think 0 --plies 100
#
# Output: bench-out/NAME/{summary.txt,report.json,metrics.txt,serve.log,load.err}. Needs release builds
# (cargo build --release -p chuhe -p chuhe-load; CHUHE_BENCH_BIN=DIR runs the binaries in DIR instead,
# for paired runs of two builds); `pg` needs PostgreSQL on 127.0.0.1:5432
# (user postgres, trust auth) and drops/creates the database chuhe_bench. The disk's own flush
# latency is probed beside every run (`--disk-probe`) in bench-out/NAME, or in
# CHUHE_BENCH_DISK_PROBE=DIR (put it on the database's file system).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,9p "$0"; exit 1; }
NAME=$1; DB=$2; shift 2; [ "${1:-}" = "--" ] && shift
. "$(dirname "$0")/common.sh"
bench_start "$NAME" "$DB"
bench_serve --rate-per-sec 100000 --log warn
trap 'kill -INT $SP 2>/dev/null; wait $SP 2>/dev/null || true' EXIT
bench_ready
set +e
taskset -c 1 "$B/chuhe-load" --threads 1 "$@" --progress 0 --chuhe-url ws://127.0.0.1:$PORT/ws \
  --disk-probe "${CHUHE_BENCH_DISK_PROBE:-$D}" \
  --chuhe-pid $SP --organizer-token "$TOKEN" --relay-cpus 0 --json "$D/report.json" \
  >"$D/summary.txt" 2>"$D/load.err"
RC=$?
curl -sf -H "Authorization: Bearer $TOKEN" http://127.0.0.1:$PORT/metrics >"$D/metrics.txt" || true
cat "$D/summary.txt"
exit $RC
