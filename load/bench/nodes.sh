#!/bin/bash
# Several chuhe nodes against one: a fresh PostgreSQL database, a throwaway Redis of
# its own, N `chuhe serve` nodes sharing both, and chuhe-load spreading games, players and
# spectators over the nodes (--chuhe-url once per node). docs/benchmarks.md, "Several nodes".
#
#   load/bench/nodes.sh NAME NODES -- SCENARIO [chuhe-load flags...]
#   load/bench/nodes.sh fanout-3 3 -- fanout --spectators 3000 --think 500ms --plies 40
#   CHUHE_BENCH_FAULT=kill load/bench/nodes.sh kill-3 3 -- games --games 300 --think 250ms --plies 200
#   load/bench/nodes.sh suite [SCALE]      # the several-node rows of docs/benchmarks.md
#
# CHUHE_BENCH_FAULT=kill|stop strikes node CHUHE_BENCH_FAULT_NODE (default 1) during the games:
# chuhe-load sends it `kill -9` (or SIGSTOP, SIGCONT after CHUHE_BENCH_FAULT_FOR, default 10s)
# CHUHE_BENCH_FAULT_AFTER (default 10s) after the go, its clients follow the liveness rule and
# reconnect to the other nodes, and the report has the failover time (the fault to each game's
# next acknowledged move: all games, and those with a player on the struck node).
#
# `suite` runs, on 3 nodes and on 1 node with Redis: moves/s and ack p99 (3 nodes: with the players
# split across nodes), each against the relay in the same run; on 3 nodes: one board
# to 10,000 spectators (and the same on 1 node, for the 3-against-1 comparison); kill -9 of a
# node; a node frozen. SCALE (default 1) multiplies the sizes: 0.1 is a quick check that it all
# works, not a measurement.
#
# NODES=1 runs one node with Redis (a cluster of one); CHUHE_BENCH_REDIS=0 with NODES=1 runs one
# node without Redis (today's single node), the baseline. CHUHE_BENCH_RELAY=1 runs the bare relay
# first with the same clients (`--target both`, the relay on core 0 as in run.sh), so the report
# has the same-run ratio (chuhe / relay) that run.sh gives for one node (not with a fault). On a
# 2-core machine every node and Redis share core 0 (`taskset -c 0`, as one node does in run.sh)
# and chuhe-load has core 1: the comparison shows what the cross-node work costs, not what more
# machines would add.
#
# Output: bench-out/NAME/{summary.txt,report.json,metrics-nI.txt,nI.log,redis.log,load.err}.
# Needs release builds (cargo build --release -p chuhe -p chuhe-load; CHUHE_BENCH_BIN=DIR for
# others), PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth; drops/creates the database
# chuhe_bench_nodes) and redis-server on PATH.
set -euo pipefail
if [ "${1:-}" = suite ]; then
  SCALE=${2:-1}
  n() { awk -v a="$1" -v s="$SCALE" 'BEGIN { v = int(a * s); print (v < 1 ? 1 : v) }'; }
  ME=$0
  RCS=()
  CHUHE_BENCH_RELAY=1 "$ME" nodes-games-3 3 -- games --games "$(n 1000)" --think 0 --plies 100 \
    || RCS+=("games-3=$?")
  CHUHE_BENCH_RELAY=1 "$ME" nodes-games-1r 1 -- games --games "$(n 1000)" --think 0 --plies 100 \
    || RCS+=("games-1r=$?")
  "$ME" nodes-fanout-3 3 -- fanout --spectators "$(n 10000)" --think 500ms --plies 40 \
    || RCS+=("fanout-3=$?")
  "$ME" nodes-fanout-1 1 -- fanout --spectators "$(n 10000)" --think 500ms --plies 40 \
    || RCS+=("fanout-1=$?")
  CHUHE_BENCH_FAULT=kill "$ME" nodes-kill-3 3 -- games --games "$(n 300)" --think 250ms \
    --plies 200 || RCS+=("kill=$?")
  CHUHE_BENCH_FAULT=stop "$ME" nodes-stop-3 3 -- games --games "$(n 300)" --think 250ms \
    --plies 200 || RCS+=("stop=$?")
  echo "suite done; exit codes other than 0: ${RCS[*]:-none} (2 = errors, expected with a fault)"
  exit 0
fi
[ $# -ge 3 ] || { sed -n 2,34p "$0"; exit 1; }
NAME=$1; NODES=$2; shift 2; [ "${1:-}" = "--" ] && shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${CHUHE_BENCH_BIN:-$ROOT/target/release}
D=$ROOT/bench-out/$NAME; rm -rf "$D"; mkdir -p "$D"
WITH_REDIS=${CHUHE_BENCH_REDIS:-1}
WITH_RELAY=${CHUHE_BENCH_RELAY:-0}
[ "$NODES" -ge 1 ] || { echo "NODES must be at least 1" >&2; exit 1; }
[ "$WITH_REDIS" = 1 ] || [ "$NODES" = 1 ] || { echo "several nodes need Redis" >&2; exit 1; }
# The fault's flags would strike a node while the relay's clients run.
[ "$WITH_RELAY" != 1 ] || [ -z "${CHUHE_BENCH_FAULT:-}" ] ||
  { echo "CHUHE_BENCH_RELAY=1 does not go with a fault" >&2; exit 1; }
psql -h 127.0.0.1 -U postgres -qc "drop database if exists chuhe_bench_nodes" \
  -c "create database chuhe_bench_nodes" >/dev/null 2>&1
URL=postgres://postgres@127.0.0.1:5432/chuhe_bench_nodes
ulimit -n 20000
"$B/chuhe" admin --database-url "$URL" create-player --name org --role organizer >"$D/admin.out"
TOKEN=$("$B/chuhe" admin --database-url "$URL" issue-token --player 1 | sed -E 's/.*"token":"([^"]+)".*/\1/')

PIDS=()
cleanup() {
  # A node frozen by a fault that outlived the run is let go first.
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

CLUSTER=()
if [ "$WITH_REDIS" = 1 ]; then
  RPORT=${CHUHE_BENCH_REDIS_PORT:-6399}
  taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no \
    >"$D/redis.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  CLUSTER=(--redis-url "redis://127.0.0.1:$RPORT")
fi

BASE=${CHUHE_BENCH_PORT:-8100}
URLS=()
NODE_PIDS=()
for i in $(seq 0 $((NODES - 1))); do
  PORT=$((BASE + i))
  ID=()
  [ "$WITH_REDIS" = 1 ] && ID=(--node-id "n$i")
  taskset -c 0 "$B/chuhe" serve --database-url "$URL" "${CLUSTER[@]}" "${ID[@]}" \
    --listen 127.0.0.1:$PORT --rate-per-sec 100000 --log warn >"$D/n$i.log" 2>&1 &
  PIDS+=($!)
  NODE_PIDS+=($!)
  [ "$i" = 0 ] && FIRST=$!
  URLS+=("--chuhe-url" "ws://127.0.0.1:$PORT/ws")
done
for i in $(seq 0 $((NODES - 1))); do
  for _ in $(seq 200); do curl -sf http://127.0.0.1:$((BASE + i))/readyz >/dev/null && break; sleep 0.1; done
done
FAULT=()
if [ -n "${CHUHE_BENCH_FAULT:-}" ]; then
  K=${CHUHE_BENCH_FAULT_NODE:-1}
  [ "$K" -lt "$NODES" ] || { echo "CHUHE_BENCH_FAULT_NODE must be below NODES" >&2; exit 1; }
  FAULT=(--fault "$CHUHE_BENCH_FAULT" --fault-pid "${NODE_PIDS[$K]}" --fault-node "$K"
    --fault-after "${CHUHE_BENCH_FAULT_AFTER:-10s}" --fault-for "${CHUHE_BENCH_FAULT_FOR:-10s}")
  # Sample a node that is not struck.
  [ "$K" = 0 ] && FIRST=${NODE_PIDS[1]:-$FIRST}
fi
TARGET=(--target chuhe)
[ "$WITH_RELAY" = 1 ] && TARGET=(--target both --relay-cpus 0)
set +e
taskset -c 1 "$B/chuhe-load" --threads 1 "$@" "${FAULT[@]}" "${TARGET[@]}" --progress 0 "${URLS[@]}" \
  --chuhe-pid "$FIRST" --organizer-token "$TOKEN" --json "$D/report.json" \
  >"$D/summary.txt" 2>"$D/load.err"
RC=$?
for i in $(seq 0 $((NODES - 1))); do
  curl -sf -H "Authorization: Bearer $TOKEN" http://127.0.0.1:$((BASE + i))/metrics \
    >"$D/metrics-n$i.txt" || true
done
cat "$D/summary.txt"
exit $RC
