#!/bin/bash
# The server's instructions per move, counted by callgrind: unlike seconds, the count does not
# depend on what else the machine is doing, so two builds can be compared on a busy machine.
#
#   load/bench/callgrind.sh BIN_DIR [GAMES] [SHORT_PLIES] [LONG_PLIES]
#   load/bench/callgrind.sh target/release 20 20 100
#
# Runs `BIN_DIR/chuhe serve` (a fresh SQLite database) under `valgrind --tool=callgrind` twice:
# GAMES games of SHORT_PLIES plies, then of LONG_PLIES plies, played by chuhe-load
# (CHUHE_LOAD_BIN, default target/release/chuhe-load) with no think time, then stops it with
# SIGINT. Everything but the moves (start-up, migrations, accounts, game creation, connections,
# shutdown) is the same in both runs, so
#   instructions per move = (Ir(long) - Ir(short)) / (GAMES * (LONG_PLIES - SHORT_PLIES)).
# Prints one line per run and the result; CHUHE_CG_KEEP=DIR keeps the callgrind files;
# CHUHE_CG_SERVE_FLAGS adds flags to `chuhe serve` (`--scheduler single`: the benchmark's
# scheduler, as `run.sh` gets on its one core). Needs valgrind and curl.
#   CHUHE_CG_SERVE_FLAGS="--scheduler single" load/bench/callgrind.sh target/release 300 20 60
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,16p "$0"; exit 1; }
B=$(cd "$1" && pwd); G=${2:-20}; S=${3:-20}; L=${4:-100}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOAD=${CHUHE_LOAD_BIN:-$ROOT/target/release/chuhe-load}
PORT=${CHUHE_BENCH_PORT:-18181}

run() { # plies -> total instructions (Ir) of the server
  local plies=$1 d url token sp
  d=$(mktemp -d)
  url=sqlite://$d/chuhe.db
  "$B/chuhe" admin --database-url "$url" create-player --name org --role organizer >/dev/null
  token=$("$B/chuhe" admin --database-url "$url" issue-token --player 1 |
    sed -E 's/.*"token":"([^"]+)".*/\1/')
  valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" \
    "$B/chuhe" serve --database-url "$url" --listen 127.0.0.1:$PORT \
    --rate-per-sec 100000 --log warn ${CHUHE_CG_SERVE_FLAGS:-} >"$d/serve.log" 2>&1 &
  sp=$!
  for _ in $(seq 600); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.2; done
  "$LOAD" --threads 1 games --target chuhe --games "$G" --plies "$plies" --think 0 \
    --progress 0 --chuhe-url ws://127.0.0.1:$PORT/ws --organizer-token "$token" \
    --join-timeout 120s --connect-timeout 60s >"$d/summary.txt" 2>"$d/load.err" ||
    { cat "$d/load.err" >&2; kill -INT $sp; wait $sp || true; exit 1; }
  kill -INT $sp
  wait $sp || true
  local ir
  ir=$(sed -n 's/^summary: //p' "$d/cg.out")
  echo "$(basename "$B"): $G games x $plies plies: $ir instructions (server)" >&2
  # CHUHE_CG_KEEP=DIR keeps each run's callgrind.out (for callgrind_annotate).
  if [ -n "${CHUHE_CG_KEEP:-}" ]; then cp "$d/cg.out" "$CHUHE_CG_KEEP/$(basename "$B")-$plies.cg"; fi
  rm -rf "$d"
  echo "$ir"
}

short=$(run "$S")
long=$(run "$L")
echo "$B: $(( (long - short) / (G * (L - S)) )) instructions per move" \
  "($G games, $S and $L plies)"
