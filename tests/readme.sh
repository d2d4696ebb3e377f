#!/usr/bin/env bash
# The README as a newcomer follows it: builds `chuhe` and puts it on PATH the way the README
# says, then runs the README's quick examples *as written there* (read from README.md, not
# copied here) in a temporary directory and checks what each prints. A README example that
# changes without this file fails here, and so does one whose output no longer matches.
#
#   bash tests/readme.sh            # from anywhere; needs cargo, curl, and for the PostgreSQL
#                                   # example a PostgreSQL on 127.0.0.1:5432 (user postgres)
#
# The serve examples run in the background until /healthz answers, then get Ctrl-C (SIGINT).
# They listen on a free port given by CHUHE_LISTEN (the README's own configuration variable),
# so the default 8080 of a busy machine does not matter. The PostgreSQL example is skipped with
# a line saying so when no PostgreSQL answers; a database `chuhe` it created is dropped again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
README=$ROOT/README.md

fail() { printf 'readme.sh: FAIL: %s\n' "$*" >&2; exit 1; }
passed=0
skipped=0
ok() { printf 'readme.sh: ok: %s\n' "$*"; passed=$((passed + 1)); }

# The fenced block after a line starting with $1, without the fences.
block_after() {
  awk -v start="$1" '
    index($0, start) == 1 { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$README"
}

# A README line's command: the text before its comment (two spaces and `#`), trailing blanks cut.
command_of() { sed -E 's/[[:space:]]+#[[:space:]].*$//; s/[[:space:]]+$//' <<<"$1"; }

WORK=$(mktemp -d)
SERVER=
cleanup() {
  if [ -n "$SERVER" ]; then kill -INT "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- Getting the `chuhe` command, as the README says (run from the repository's root).
get=$(block_after 'To type `chuhe` as in the examples below')
[ -n "$get" ] || fail "README: no block after 'To type \`chuhe\` as in the examples below'"
printf 'readme.sh: getting chuhe:\n%s\n' "$get"
( cd "$ROOT" && while IFS= read -r line; do
    cmd=$(command_of "$line"); [ -n "$cmd" ] || continue
    [[ $cmd == export\ PATH=* ]] && continue # applied below, in this shell
    bash -c "$cmd" || exit 1
  done <<<"$get" ) || fail "getting chuhe as the README says"
exports=$(grep -E '^export PATH=' <<<"$get" || true)
[ -n "$exports" ] || fail "README: the block that gets chuhe sets no PATH"
cd "$ROOT"
eval "$(command_of "$exports")"
[ "$(command -v chuhe)" = "$ROOT/target/release/chuhe" ] || fail "chuhe on PATH is $(command -v chuhe), not target/release/chuhe"
ok "chuhe is $(command -v chuhe)"

# --- The quick examples, in a temporary directory.
mapfile -t lines < <(block_after 'Quick examples')
[ "${#lines[@]}" -gt 0 ] || fail "README: no block after 'Quick examples'"
cd "$WORK"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Runs a serve command in the background and checks it serves; SIGINT must stop it cleanly.
serve_check() {
  local cmd=$1 port out err page
  port=$(free_port)
  out=$WORK/serve.out; err=$WORK/serve.err
  CHUHE_LISTEN=127.0.0.1:$port bash -c "exec $cmd" >"$out" 2>"$err" &
  SERVER=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    kill -0 "$SERVER" 2>/dev/null || { cat "$out" "$err" >&2; fail "$cmd: exited before serving"; }
    sleep 0.1
  done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "$cmd: /healthz never answered"
  page=$(curl -sf "http://127.0.0.1:$port/") || fail "$cmd: / did not answer"
  grep -q '<html' <<<"$page" || fail "$cmd: / is not the page"
  grep -q "chuhe serving on http://127.0.0.1:$port" "$out" || { cat "$out" >&2; fail "$cmd: no 'chuhe serving on' line on stdout"; }
  if grep -q $'\e\[' "$err"; then fail "$cmd: ANSI colour codes in logs that go to a file"; fi
  kill -INT "$SERVER"
  wait "$SERVER" || fail "$cmd: did not exit 0 on Ctrl-C (SIGINT)"
  SERVER=
}

pg_up() { command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; }
pg_has_chuhe() { psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname = 'chuhe'" 2>/dev/null | grep -q 1; }

examples=0
for line in "${lines[@]}"; do
  cmd=$(command_of "$line")
  [ -n "$cmd" ] || continue
  examples=$((examples + 1))
  case $cmd in
    'chuhe rules perft startpos 3')
      out=$(bash -c "$cmd")
      [ "$(tail -n1 <<<"$out")" = 79666 ] || fail "$cmd: total is not 79666"
      [ "$(wc -l <<<"$out")" -eq 45 ] || fail "$cmd: expected 44 move lines and the total"
      grep -qx 'h2e2 [0-9]*' <<<"$out" || fail "$cmd: no line for h2e2"
      ;;
    "echo '{\"fen\":\"startpos\",\"moves\":[\"h2e2\",\"h9g7\"]}' | chuhe rules batch")
      out=$(bash -c "$cmd")
      [ "$(wc -l <<<"$out")" -eq 1 ] || fail "$cmd: expected one line"
      python3 - "$out" <<'PY' || fail "$cmd: unexpected answer: $out"
import json, sys
a = json.loads(sys.argv[1])
assert a["fen"].startswith("rnbakab1r/9/1c4nc1/"), a["fen"]
assert "h0g2" in a["legal"] and a["in_check"] is False and a["result"] == "ongoing", a
PY
      ;;
    'chuhe league schedule --teams 6 --format table')
      out=$(bash -c "$cmd")
      [ "$(grep -c '^Round ' <<<"$out")" -eq 5 ] || fail "$cmd: expected 5 rounds: $out"
      grep -qx 'Round 1: 1-6, 2-5, 3-4' <<<"$out" || fail "$cmd: round 1 is not 1-6, 2-5, 3-4: $out"
      ;;
    'chuhe admin create-player --name Alice')
      out=$(bash -c "$cmd")
      [ "$out" = '{"id":"1","displayName":"Alice","role":"ROLE_PLAYER"}' ] || fail "$cmd: $out"
      [ -f chuhe.db ] || fail "$cmd: no ./chuhe.db"
      ;;
    'chuhe admin issue-token --player 1')
      out=$(bash -c "$cmd")
      grep -Eq '^\{"token":"chuhe_[0-9a-f]{64}","tokenId":"1"\}$' <<<"$out" || fail "$cmd: $out"
      ;;
    'chuhe serve')
      serve_check "$cmd"
      ;;
    'chuhe serve --database-url postgres://postgres@127.0.0.1:5432/chuhe')
      if ! pg_up; then
        echo "readme.sh: skipped: $cmd (no PostgreSQL on 127.0.0.1:5432)"
        skipped=$((skipped + 1))
        continue
      fi
      existed=no; pg_has_chuhe && existed=yes
      serve_check "$cmd"
      pg_has_chuhe || fail "$cmd: the database chuhe does not exist afterwards"
      if [ $existed = no ]; then
        psql -h 127.0.0.1 -U postgres -qc 'drop database chuhe with (force)' >/dev/null
      fi
      ;;
    *)
      fail "README quick example without a check here: $cmd"
      ;;
  esac
  ok "$cmd"
done
[ $((passed + skipped)) -eq $((examples + 1)) ] || fail "$passed checks passed and $skipped were skipped of $((examples + 1))"
echo "readme: $passed passed, 0 failed, $skipped skipped"
