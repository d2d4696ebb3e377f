#!/bin/bash
# chuhe alone, measured over a window of its steady state: what docs/benchmarks.md's paired runs
# read (Method). A fresh database, chuhe pinned to core 0 and chuhe-load to core 1 as in run.sh;
# once MOVES moves have been made (after the setup of players, tokens and games), a window of
# SECONDS: moves/s, and per move the CPU and run-queue wait of each of chuhe's threads (and of
# PostgreSQL's writer backends with `pg`), and the system calls chuhe makes if `perf` can count
# them. PERF_RECORD="-g" (any `perf record` flags) also records a profile of chuhe over the
# window, in bench-out/NAME/perf.data.
#
#   load/bench/window.sh NAME sqlite|pg [-- SCENARIO [chuhe-load flags...]]
#   load/bench/window.sh w1 sqlite
#   CHUHE_BENCH_BIN=/tmp/other-build load/bench/window.sh w2 pg
#
# The scenario defaults to `games --games 1000 --think 0 --plies 300` (long enough for the window
# to fall in the moves). MOVES (default 20000) and WINDOW_S (default 4) move the window. Output:
# bench-out/NAME/{window.txt,summary.txt,serve.log,load.err}. Needs release builds and, for `pg`,
# PostgreSQL as run.sh does; a benchmark, not a test.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,17p "$0"; exit 1; }
NAME=$1; DB=$2; shift 2; [ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || set -- games --games 1000 --think 0 --plies 300
MOVES=${MOVES:-20000}; WINDOW_S=${WINDOW_S:-4}
. "$(dirname "$0")/common.sh"
bench_start "$NAME" "$DB"
bench_serve --rate-per-sec 100000 --log warn
LP=
trap 'kill $LP 2>/dev/null || true; kill -INT $SP 2>/dev/null || true; wait $SP 2>/dev/null || true' EXIT
bench_ready
taskset -c 1 "$B/chuhe-load" --threads 1 "$1" --target chuhe "${@:2}" --progress 0 \
  --chuhe-url ws://127.0.0.1:$PORT/ws --organizer-token "$TOKEN" \
  >"$D/summary.txt" 2>"$D/load.err" &
LP=$!

moves() { # chuhe_moves_total, summed over its labels
  curl -sf -H "Authorization: Bearer $TOKEN" http://127.0.0.1:$PORT/metrics |
    awk '/^chuhe_moves_total/ { s += $2 } END { printf "%d\n", s }'
}
ticks() { # utime+stime of each of chuhe's threads: "tid name ticks"
  for t in /proc/$SP/task/*; do
    [ -r "$t/stat" ] || continue
    # The name is in parentheses and may hold spaces: read the fields after it.
    sed -E 's/^([0-9]+) \((.*)\) [A-Za-z] (.*)$/\1 \2|\3/' "$t/stat" |
      awk -F'|' '{ split($2, f, " "); n = $1; sub(/ /, "\t", n); print n "\t" f[11] + f[12] }'
  done
}
waits() { # run-queue wait (ns) of each of chuhe's threads and PostgreSQL's writers: "id wait"
  for t in /proc/$SP/task/*; do
    [ -r "$t/schedstat" ] && echo "$(basename "$t") $(cut -d' ' -f2 "$t/schedstat")"
  done
  for p in $PGW; do
    [ -r "/proc/$p/schedstat" ] && echo "pg$p $(cut -d' ' -f2 "/proc/$p/schedstat")"
  done
  return 0
}
pg_cpu() { # utime+stime ticks of PostgreSQL's writer backends: "id ticks"
  for p in $PGW; do
    [ -r "/proc/$p/stat" ] && echo "pg$p $(awk '{ print $14 + $15 }' "/proc/$p/stat")"
  done
  return 0
}

for _ in $(seq 3000); do
  kill -0 $LP 2>/dev/null || { echo "chuhe-load ended before $MOVES moves" >&2; cat "$D/load.err" >&2; exit 1; }
  M=$(moves || echo 0)
  [ "$M" -ge "$MOVES" ] && break
  sleep 0.1
done
PGW=
if [ "$DB" = pg ]; then
  PGW=$(psql -h 127.0.0.1 -U postgres -d "${CHUHE_BENCH_DB:-chuhe_bench}" -Atc \
    "select pid from pg_stat_activity where application_name like 'chuhe-writer-%'" 2>/dev/null || true)
fi
HZ=$(getconf CLK_TCK)
T1=$(ticks); W1=$(waits); C1=$(pg_cpu); M1=$(moves); S1=$(date +%s.%N)
SYS=
if [ -n "${PERF_RECORD:-}" ]; then
  # shellcheck disable=SC2086 # the flags are words
  perf record $PERF_RECORD -p $SP -o "$D/perf.data" -- sleep "$WINDOW_S" 2>/dev/null
elif perf stat -e 'syscalls:sys_enter_sendto' -p $SP -- true >/dev/null 2>&1; then
  SYS=$(perf stat -x, -e 'syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_write,syscalls:sys_enter_futex' \
    -p $SP -- sleep "$WINDOW_S" 2>&1 >/dev/null | awk -F, '{ print $3, $1 }')
else
  sleep "$WINDOW_S"
fi
T2=$(ticks); W2=$(waits); C2=$(pg_cpu); M2=$(moves); S2=$(date +%s.%N)

{
  N=$((M2 - M1))
  echo "window: $N moves in $(echo "$S2 - $S1" | bc) s = $(echo "$N / ($S2 - $S1)" | bc) moves/s (from move $M1)"
  echo "per move, each of chuhe's threads (and PostgreSQL's writers): CPU, run-queue wait, µs"
  join -t $'\t' <(echo "$T1" | sort) <(echo "$T2" | sort) |
    awk -F'\t' -v n="$N" -v hz="$HZ" '{ d = $5 - $3; if (d > 0) printf "  %-6s %-18s cpu %6.2f\n", $1, $2, d * 1e6 / hz / n }'
  join <(echo "$W1" | sort) <(echo "$W2" | sort) |
    awk -v n="$N" '{ d = $3 - $2; if (d > 0) printf "  %-25s wait %6.2f\n", $1, d / 1e3 / n }'
  if [ -n "$PGW" ]; then
    join <(echo "$C1" | sort) <(echo "$C2" | sort) |
      awk -v n="$N" -v hz="$HZ" '{ d = $3 - $2; printf "  %-25s cpu %6.2f\n", $1, d * 1e6 / hz / n }'
  fi
  if [ -n "$SYS" ]; then
    echo "system calls per move:"
    echo "$SYS" | awk -v n="$N" '$2 ~ /^[0-9]+$/ { sub(/syscalls:sys_enter_/, "", $1); printf "  %-12s %6.2f\n", $1, $2 / n }'
  fi
  if [ -n "${PERF_RECORD:-}" ]; then echo "profile: $D/perf.data"; fi
} | tee "$D/window.txt"
wait $LP || true
