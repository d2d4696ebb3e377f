# The start the single-node bench scripts share (run.sh, window.sh, league-round.sh); sourced, then
# `bench_start NAME sqlite|pg`: sets ROOT, B (the binaries), D (bench-out/NAME, emptied), URL (a
# fresh database: SQLite in D, or PostgreSQL's chuhe_bench — CHUHE_BENCH_DB if set — dropped and
# created), TOKEN (an organizer's) and PORT, and raises the open-file limit to the machine's 20,000.
# Then `bench_serve FLAGS…` starts chuhe on core 0 with that database and port (SP its pid, its log
# in D/serve.log), and `bench_ready` waits up to 10 s for its /healthz.
bench_start() {
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  B=${CHUHE_BENCH_BIN:-$ROOT/target/release}
  D=$ROOT/bench-out/$1; rm -rf "$D"; mkdir -p "$D"
  case $2 in
    pg)
      local db=${CHUHE_BENCH_DB:-chuhe_bench}
      psql -h 127.0.0.1 -U postgres -qc "drop database if exists $db" -c "create database $db" >/dev/null 2>&1
      URL=postgres://postgres@127.0.0.1:5432/$db ;;
    sqlite) URL=sqlite://$D/chuhe.db ;;
    *) echo "database must be sqlite or pg" >&2; exit 1 ;;
  esac
  ulimit -n 20000
  "$B/chuhe" admin --database-url "$URL" create-player --name org --role organizer >"$D/admin.out"
  TOKEN=$("$B/chuhe" admin --database-url "$URL" issue-token --player 1 | sed -E 's/.*"token":"([^"]+)".*/\1/')
  PORT=${CHUHE_BENCH_PORT:-8080}
}

bench_serve() {
  taskset -c 0 "$B/chuhe" serve --database-url "$URL" --listen 127.0.0.1:$PORT "$@" \
    >"$D/serve.log" 2>&1 &
  SP=$!
}

bench_ready() {
  for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && return 0; sleep 0.1; done
  return 0
}
