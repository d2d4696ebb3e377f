#!/usr/bin/env bash
# The README as a newcomer follows it: every ```sh block of README.md, then of docs/league.md,
# in order, as written there (read from the files, not copied here), in one shell whose state
# (`cd`, `export`, variables) carries from line to line, in a temporary directory; what each
# line prints is checked. A line without a check here fails, so a README line that changes
# without this file fails, and so does one whose output no longer matches. At the end the count
# of blocks run (and skipped) is checked against the count of ```sh blocks in each file.
#
#   bash tests/readme.sh                                  # builds chuhe in release, as the README says
#   CHUHE_BIN=$PWD/target/debug/chuhe bash tests/readme.sh   # uses a binary already built
#
# Needs only curl and python3 beside the binary (and cargo without CHUHE_BIN); the PostgreSQL
# example is skipped with a line saying so when no PostgreSQL answers on 127.0.0.1:5432 (a
# database `chuhe` it creates is dropped again).
#
# How the blocks run:
# - A block right after `<!-- readme.sh: skip (REASON) -->` is for a person (e.g. the demo that
#   serves until Ctrl-C): not run, counted as skipped, the reason printed.
# - Each file's first block starts in the repository's root (README.md's block that gets
#   `chuhe` runs there; docs/league.md's quick start says so); the next blocks carry on in the
#   directory and with the variables the one before left, as a reader's shell does. `mktemp -d` in a block makes its
#   directory inside this script's temporary directory, removed at the end.
# - With CHUHE_BIN set, the block that gets `chuhe` does not build it: its `cargo build` line is
#   reported as skipped and its PATH line puts CHUHE_BIN's directory on PATH instead.
# - `chuhe serve` (until Ctrl-C) and `chuhe serve &` (in the background) are started here on a
#   free port, through the README's own variables CHUHE_LISTEN and CHUHE_SERVER (so a busy 8080
#   does not matter; `127.0.0.1:8080` in a line means that port), and are ready once /readyz
#   answers 200 (polled, no fixed sleep). The first is stopped with Ctrl-C (SIGINT) at once,
#   the second at the end of its block; either must exit 0 and leave only chuhe.db (no -wal or
#   -shm file).
# - `chuhe_…` in a line stands for the first token the latest command that printed tokens
#   printed ("the token just printed").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILES=(README.md docs/league.md)

fail() { printf 'readme.sh: FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf 'readme.sh: %s\n' "$*"; }
command -v curl >/dev/null || fail "needs curl"
command -v python3 >/dev/null || fail "needs python3"

if [ -n "${CHUHE_BIN:-}" ]; then
  CHUHE_BIN=$(cd "$(dirname "$CHUHE_BIN")" && pwd)/$(basename "$CHUHE_BIN")
  [ -x "$CHUHE_BIN" ] || fail "CHUHE_BIN=$CHUHE_BIN is not an executable"
  [ "$(basename "$CHUHE_BIN")" = chuhe ] || fail "CHUHE_BIN must be a file named chuhe (the README types \`chuhe\`)"
fi
# The newcomer's shell has none of chuhe's settings.
for v in $(compgen -e | grep '^CHUHE_' || true); do
  [ "$v" = CHUHE_BIN ] || unset "$v"
done

WORK=$(mktemp -d)
export TMPDIR=$WORK
SERVER=
SERVER_DB_DIR=
cleanup() {
  if [ -n "$SERVER" ]; then kill -INT "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  cd /
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- the blocks ---------------------------------------------------------------------------------
# $WORK/blocks: per block a line `@@ FILE LINE SKIP-REASON` (reason `-` when run), then its lines
# (a line ending in `\` joined with the next).
python3 - "$ROOT" "${FILES[@]}" >"$WORK/blocks" <<'PY'
import re, sys
root, files = sys.argv[1], sys.argv[2:]
for f in files:
    lines = open(f"{root}/{f}", encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == "```sh":
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            m = re.fullmatch(r"<!-- readme\.sh: skip \((.+)\) -->", lines[j].strip()) if j >= 0 else None
            print(f"@@ {f} {i + 1} {m.group(1) if m else '-'}")
            i += 1
            pending = ""
            while i < len(lines) and not lines[i].startswith("```"):
                line = lines[i]
                if line.endswith("\\"):
                    pending += line[:-1]
                else:
                    print(pending + line)
                    pending = ""
                i += 1
        i += 1
PY

# A line's command: the text before its comment (blanks and `# `), trailing blanks cut.
command_of() { sed -E 's/[[:space:]]+#[[:space:]].*$//; s/^#.*$//; s/[[:space:]]+$//' <<<"$1"; }
# The comment of a line (after `# `), if any.
comment_of() { sed -nE 's/^.*[[:space:]]#[[:space:]](.*)$/\1/p' <<<"$1"; }

TOKEN=
PORT=
OUT=
# Runs $1 (already substituted) in this shell; stdout in OUT. $2: the line as written.
run() {
  local status=0
  eval "$1" </dev/null >"$WORK/out" 2>"$WORK/err" || status=$?
  OUT=$(cat "$WORK/out")
  if [ $status -ne 0 ]; then
    cat "$WORK/out" "$WORK/err" >&2
    fail "$2: exit status $status"
  fi
  local t
  t=$(grep -oE 'chuhe_[0-9a-f]{64}' <<<"$OUT" | head -n1 || true)
  if [ -n "$t" ]; then TOKEN=$t; fi
}

# Python assertions on OUT parsed as JSON (`v`).
json_is() {
  python3 - "$OUT" "$1" <<'PY' || fail "$2: unexpected answer: $(head -c 600 <<<"$OUT")"
import json, sys
v = json.loads(sys.argv[1])
assert eval(sys.argv[2]), sys.argv[2]
PY
}

# The files of the current directory, one line, sorted.
files_here() { ls -A | grep -vx examples | tr '\n' ' ' | sed 's/ $//'; }

# Starts `$1` (a serve command) in the background on PORT; returns once /readyz answers 200.
start_server() {
  local cmd=$1 page
  [ -z "$SERVER" ] || fail "$cmd: a server from this block is running already"
  bash -c "exec $cmd" </dev/null >"$WORK/serve.out" 2>"$WORK/serve.err" &
  SERVER=$!
  SERVER_DB_DIR=$PWD
  until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
    kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.out" "$WORK/serve.err" >&2; SERVER=; fail "$cmd: exited before it was ready"; }
    sleep 0.05
  done
  grep -q "chuhe serving on http://127.0.0.1:$PORT" "$WORK/serve.out" || { cat "$WORK/serve.out" >&2; fail "$cmd: no 'chuhe serving on' line on stdout"; }
  if grep -q $'\e\[' "$WORK/serve.err"; then fail "$cmd: ANSI colour codes in logs that go to a file"; fi
  page=$(curl -sf -H 'Accept: text/html' "http://127.0.0.1:$PORT/") || fail "$cmd: / did not answer"
  grep -q '<html' <<<"$page" || fail "$cmd: / is not the page"
  # Without a browser, / names the JSON routes.
  page=$(curl -sf "http://127.0.0.1:$PORT/") || fail "$cmd: curl / did not answer"
  grep -q '/api/v1/games' <<<"$page" || fail "$cmd: curl / does not name /api/v1/games"
}

# Ctrl-C to the server: it must exit 0 and, on SQLite, leave only its chuhe.db.
stop_server() {
  local what=$1 sqlite=$2 left
  kill -INT "$SERVER"
  wait "$SERVER" || { cat "$WORK/serve.err" >&2; SERVER=; fail "$what: did not exit 0 on Ctrl-C (SIGINT)"; }
  SERVER=
  if [ "$sqlite" = sqlite ]; then
    left=$(cd "$SERVER_DB_DIR" && ls -A | grep '^chuhe\.db' | tr '\n' ' ' | sed 's/ $//')
    [ "$left" = chuhe.db ] || fail "$what: after Ctrl-C the database is not just chuhe.db: $left"
  fi
}

pg_up() { command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; }
pg_has_chuhe() { psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname = 'chuhe'" 2>/dev/null | grep -q 1; }

# ---- one line ----------------------------------------------------------------------------------
line_checks=0
line_skips=0
run_line() {
  local line=$1 written cmd comment id
  written=$(command_of "$line")
  [ -n "$written" ] || return 0
  comment=$(comment_of "$line")
  cmd=$written
  if [[ $cmd == *chuhe_…* ]]; then
    [ -n "$TOKEN" ] || fail "$written: no token was printed before"
    cmd=${cmd//chuhe_…/$TOKEN}
  fi
  cmd=${cmd//127.0.0.1:8080/127.0.0.1:$PORT}
  case $written in
    # -- getting chuhe (README), in the repository's root
    'cargo build --release -p chuhe')
      if [ -n "${CHUHE_BIN:-}" ]; then
        say "skipped line: $written (CHUHE_BIN=$CHUHE_BIN)"
        line_skips=$((line_skips + 1))
        return 0
      fi
      run "$cmd" "$written"
      [ -x "$ROOT/target/release/chuhe" ] || fail "$written: no target/release/chuhe"
      ;;
    'export PATH="$PWD/target/release:$PATH"')
      if [ -n "${CHUHE_BIN:-}" ]; then
        export PATH="$(dirname "$CHUHE_BIN"):$PATH"
        [ "$(command -v chuhe)" = "$CHUHE_BIN" ] || fail "chuhe on PATH is $(command -v chuhe), not $CHUHE_BIN"
        say "instead of: $written: PATH starts with $(dirname "$CHUHE_BIN") (CHUHE_BIN)"
      else
        run "$cmd" "$written"
        [ "$(command -v chuhe)" = "$ROOT/target/release/chuhe" ] || fail "chuhe on PATH is $(command -v chuhe), not target/release/chuhe"
      fi
      ;;
    'REPO=$PWD')
      run "$cmd" "$written"
      [ "$REPO" = "$ROOT" ] || fail "$written: REPO is $REPO, not the repository's root"
      ;;
    'cd "$(mktemp -d)"' | 'REPO=$PWD && cd "$(mktemp -d)"')
      run "$cmd" "$written"
      [[ $PWD == "$WORK"/* ]] || fail "$written: in $PWD, not a new temporary directory"
      [ -z "$(ls -A)" ] || fail "$written: $PWD is not empty"
      if [[ $written == REPO=* ]]; then [ "$REPO" = "$ROOT" ] || fail "$written: REPO is $REPO"; fi
      ;;
    # -- offline tools
    'chuhe rules perft startpos 3')
      run "$cmd" "$written"
      [ "$(tail -n1 <<<"$OUT")" = 79666 ] || fail "$written: total is not 79666"
      [ "$(wc -l <<<"$OUT")" -eq 45 ] || fail "$written: expected 44 move lines and the total"
      grep -qx 'h2e2 [0-9]*' <<<"$OUT" || fail "$written: no line for h2e2"
      ;;
    "echo '{\"fen\":\"startpos\",\"moves\":[\"h2e2\",\"h9g7\"]}' | chuhe rules batch")
      run "$cmd" "$written"
      [ "$(wc -l <<<"$OUT")" -eq 1 ] || fail "$written: expected one line"
      json_is 'v["fen"].startswith("rnbakab1r/9/1c4nc1/") and "h0g2" in v["legal"] and v["in_check"] is False and v["result"] == "ongoing"' "$written"
      ;;
    'chuhe league schedule --teams 6 --format table')
      run "$cmd" "$written"
      [ "$(grep -c '^Round ' <<<"$OUT")" -eq 5 ] || fail "$written: expected 5 rounds: $OUT"
      grep -qx 'Round 1: 1-6, 2-5, 3-4' <<<"$OUT" || fail "$written: round 1 is not 1-6, 2-5, 3-4: $OUT"
      ;;
    # -- accounts and tokens straight on ./chuhe.db
    'chuhe admin create-player --name Alice' | 'chuhe admin create-player --name 赛事组织者 --role organizer')
      run "$cmd" "$written"
      # The id the line's comment promises ({"id":"N",…}) is the one printed.
      id=$(grep -oE '\{"id":"[0-9]+"' <<<"$comment" | head -n1 | grep -oE '[0-9]+' || true)
      [ -n "$id" ] || fail "$written: its comment names no id ({\"id\":\"N\",…})"
      json_is "v['id'] == '$id' and v['role'] in ('ROLE_PLAYER', 'ROLE_ORGANIZER')" "$written (the comment says id $id)"
      [ "$(files_here)" = chuhe.db ] || fail "$written: left $(files_here), not just chuhe.db"
      ;;
    'chuhe admin issue-token --player 1' | 'chuhe admin issue-token --player 2')
      run "$cmd" "$written"
      grep -Eq '^\{"token":"chuhe_[0-9a-f]{64}","tokenId":"[0-9]+"\}$' <<<"$OUT" || fail "$written: $OUT"
      [ "$(files_here)" = chuhe.db ] || fail "$written: left $(files_here), not just chuhe.db"
      ;;
    # -- the server
    'chuhe serve')
      start_server "$cmd"
      stop_server "$written" sqlite
      ;;
    'chuhe serve &')
      start_server "${cmd% &}"
      ;;
    'chuhe serve --database-url postgres://postgres@127.0.0.1:5432/chuhe')
      if ! pg_up; then
        say "skipped line: $written (no PostgreSQL on 127.0.0.1:5432)"
        line_skips=$((line_skips + 1))
        return 0
      fi
      local existed=no
      pg_has_chuhe && existed=yes
      start_server "$cmd"
      stop_server "$written" postgres
      pg_has_chuhe || fail "$written: the database chuhe does not exist afterwards"
      if [ $existed = no ]; then
        psql -h 127.0.0.1 -U postgres -qc 'drop database chuhe with (force)' >/dev/null
      fi
      ;;
    'export CHUHE_TOKEN=chuhe_…')
      run "$cmd" "$written"
      [ "$CHUHE_TOKEN" = "$TOKEN" ] || fail "$written: CHUHE_TOKEN is not the token just printed"
      ;;
    'export CHUHE_SERVER=http://127.0.0.1:8080 CHUHE_TOKEN=chuhe_…')
      run "$cmd" "$written"
      [ "$CHUHE_TOKEN" = "$TOKEN" ] && [ "$CHUHE_SERVER" = "http://127.0.0.1:$PORT" ] || fail "$written: CHUHE_TOKEN or CHUHE_SERVER not set"
      ;;
    'CAPTAIN=chuhe_…' | 'ARBITER=chuhe_…')
      run "$cmd" "$written"
      local name=${written%%=*}
      [ "${!name}" = "$TOKEN" ] || fail "$written: not the token printed first just above"
      ;;
    # -- the league service on the running server
    'chuhe league event check "$REPO"/examples/league-event.toml --roster "$REPO"/examples/league-roster.csv')
      run "$cmd" "$written"
      json_is 'len(v["teams"]) == 9 and v["boards"] == 4' "$written: 8 teams and 湖南队 from the roster, 4 boards"
      ;;
    'chuhe league event create "$REPO"/examples/league-event.toml --roster "$REPO"/examples/league-roster.csv')
      run "$cmd" "$written"
      json_is 'v["id"] == "1" and len(v["teams"]) == 9 and v["boards"] == 4' "$written: league 1, 9 teams (8 and the roster's 湖南队), 4 boards"
      ;;
    'chuhe league event publish 1')
      run "$cmd" "$written"
      json_is 'v["ok"] is True' "$written"
      ;;
    'chuhe league event tokens 1 --for captains')
      run "$cmd" "$written"
      json_is 'len(v["tokens"]) == 9 and all(t["role"] == "captain" for t in v["tokens"]) and v["tokens"][0]["team"] == 0 and v["tokens"][0]["name"] == "北京队 教练"' "$written: 9 captains, 北京队's first"
      ;;
    'chuhe league event tokens 1 --for arbiters')
      run "$cmd" "$written"
      json_is '[t["name"] for t in v["tokens"]] == ["裁判长 高明", "执台裁判 林静"]' "$written: the two arbiters, 裁判长 高明 first"
      ;;
    'chuhe league event standings 1')
      run "$cmd" "$written"
      grep -q '北京队' <<<"$OUT" && grep -q '湖南队' <<<"$OUT" || fail "$written: no standings of the 9 teams: $OUT"
      ;;
    'curl -s http://127.0.0.1:8080/api/v1/games')
      run "$cmd" "$written"
      json_is 'v == {} or isinstance(v["games"], list)' "$written: the live games as JSON"
      ;;
    'chuhe league event reschedule 1 --round 3 --start 2027-03-20T19:00:00+08:00')
      run "$cmd" "$written"
      json_is 'v["ok"] is True' "$written"
      ;;
    'chuhe league event lineup 1 --token "$CAPTAIN" --round 2 --table 4 --team 0 赵建国 钱立新 孙卫东 李晓峰')
      run "$cmd" "$written"
      json_is 'v["ok"] is True' "$written: the captain's lineup accepted"
      ;;
    'chuhe league event command 1 --token "$ARBITER" --reason "丁三 absent (21.4)" set-board --round 1 --table 1 --board 2 --forfeit second')
      run "$cmd" "$written"
      json_is 'v["ok"] is True and v["entries"] == 1' "$written: the arbiter's decision logged"
      ;;
    'chuhe league event standings 1 --format html > standings.html' | 'chuhe league event sheet 1 --round 1 --table 1 > sheet.html')
      run "$cmd" "$written"
      local file=${written##*> }
      grep -q '<html' "$file" || fail "$written: $file is not a page"
      ;;
    'chuhe league event export 1 > season.json && chuhe league standings season.json')
      run "$cmd" "$written"
      python3 -c 'import json,sys; json.load(open("season.json"))' || fail "$written: season.json is not JSON"
      grep -q '北京队' <<<"$OUT" && grep -q '湖南队' <<<"$OUT" || fail "$written: no standings offline: $OUT"
      ;;
    *)
      fail "a line without a check in tests/readme.sh: $written"
      ;;
  esac
  line_checks=$((line_checks + 1))
  say "ok: $written"
}

# ---- every block, in order ---------------------------------------------------------------------
declare -A ran=() skipped=()
current=
end_block() {
  [ -n "$current" ] || return 0
  if [ -n "$SERVER" ]; then stop_server "the server of $current" sqlite; fi
  ran[$current_file]=$(( ${ran[$current_file]:-0} + 1 ))
  say "block $current: done"
  current=
}
while IFS= read -r line <&3; do
  if [[ $line == '@@ '* ]]; then
    end_block
    read -r _ file fence reason <<<"$line"
    if [ "$reason" != - ]; then
      skipped[$file]=$(( ${skipped[$file]:-0} + 1 ))
      say "skipped block $file:$fence ($reason)"
      skip_rest=yes
      continue
    fi
    skip_rest=no
    current="$file:$fence"
    # A file's first block starts in the repository's root; the next ones carry on where the
    # one before left (its directory, its variables), as a reader's shell does.
    if [ "${current_file:-}" != "$file" ]; then cd "$ROOT"; fi
    current_file=$file
    PORT=$(free_port)
    export CHUHE_LISTEN=127.0.0.1:$PORT CHUHE_SERVER=http://127.0.0.1:$PORT
    say "block $current (in $PWD, the server's port $PORT):"
    continue
  fi
  [ "$skip_rest" = yes ] && continue
  run_line "$line"
done 3<"$WORK/blocks"
end_block

total_run=0
for f in "${FILES[@]}"; do
  n=$(grep -c '^```sh[[:space:]]*$' "$ROOT/$f" || true)
  r=${ran[$f]:-0} s=${skipped[$f]:-0}
  say "$f: $r sh blocks run, $s skipped, of $n"
  [ $((r + s)) -eq "$n" ] || fail "$f has $n sh blocks but $r were run and $s skipped"
  total_run=$((total_run + r))
done
echo "readme: $total_run blocks run ($line_checks lines checked, $line_skips lines skipped), 0 failed, $(( ${skipped[README.md]:-0} + ${skipped[docs/league.md]:-0} )) blocks skipped"
