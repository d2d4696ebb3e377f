#!/bin/bash
# Reruns the commands of docs/benchmarks.md's table and prints each figure beside the one
# recorded in docs/bench/table.json, with their ratio; a figure that moved the wrong way by
# more than the noise (the figure's, the row's or the table's `noise`, a fraction of the
# recorded value: see docs/benchmarks.md) is flagged WORSE, and the script then exits 1.
# A benchmark, not a test: it needs release builds and a quiet machine (run.sh's needs).
#
#   load/bench/compare.sh [--only NAME[,NAME…]] [--reports DIR] [--out DIR] [--record] [--table FILE]
#
#   --only     rows of the table to run (their names: games-sqlite, idle-pg, …); default all
#   --reports  compare the reports already in DIR (NAME.json, or NAME-1.json… for rows of
#              several runs, as suite.sh writes them) instead of running anything
#   --out      where the new reports go (default bench-out/compare-DATE)
#   --record   write the figures measured now into the table as the recorded ones
#   --table    the table (default docs/bench/table.json)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TABLE=$ROOT/docs/bench/table.json
OUT=$ROOT/bench-out/compare-$(date +%F-%H%M)
ONLY="" REPORTS="" RECORD=0
while [ $# -gt 0 ]; do
  case $1 in
    --only) ONLY=$2; shift 2 ;;
    --reports) REPORTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --record) RECORD=1; shift ;;
    --table) TABLE=$2; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "compare.sh needs jq" >&2; exit 2; }
jq -e '.rows | length > 0' "$TABLE" >/dev/null || { echo "no rows in $TABLE" >&2; exit 2; }
[ -n "$REPORTS" ] && OUT=$REPORTS
mkdir -p "$OUT"

# values.json: {"ROW": {"FIGURE INDEX": [value per run, …]}}
VALUES=$OUT/values.json
echo '{}' >"$VALUES"
mapfile -t NAMES < <(jq -r '.rows[].name' "$TABLE")
for name in "${NAMES[@]}"; do
  if [ -n "$ONLY" ] && ! [[ ",$ONLY," == *",$name,"* ]]; then continue; fi
  row=$(jq -c --arg n "$name" '.rows[] | select(.name == $n)' "$TABLE")
  db=$(jq -r .db <<<"$row"); runs=$(jq -r '.runs // 1' <<<"$row"); args=$(jq -r .args <<<"$row")
  for i in $(seq "$runs"); do
    run_name=$name; [ "$runs" -gt 1 ] && run_name=$name-$i
    report=$OUT/$run_name.json
    if [ -z "$REPORTS" ]; then
      echo "== $run_name: load/bench/run.sh $run_name $db -- $args" >&2
      # shellcheck disable=SC2086 # the row's arguments are words
      "$ROOT/load/bench/run.sh" "$run_name" "$db" -- $args >/dev/null 2>&1
      cp "$ROOT/bench-out/$run_name/report.json" "$report" 2>/dev/null || echo "   (no report)" >&2
    fi
    [ -f "$report" ] || { echo "   no report $report" >&2; continue; }
    nfig=$(jq '.figures | length' <<<"$row")
    for f in $(seq 0 $((nfig - 1))); do
      expr=$(jq -r ".figures[$f].jq" <<<"$row")
      # A report of one target (--target chuhe) is chuhe's part alone.
      v=$(jq "(if has(\"chuhe\") then . else {chuhe: .} end) | $expr" "$report" 2>/dev/null | head -1)
      [[ "$v" =~ ^-?[0-9.eE+-]+$ ]] || v=null
      jq --arg n "$name" --arg f "$f" --argjson v "$v" \
        '.[$n][$f] = ((.[$n][$f] // []) + (if $v == null then [] else [$v] end))' \
        "$VALUES" >"$VALUES.tmp" && mv "$VALUES.tmp" "$VALUES"
    done
  done
done

# The comparison: the median of each figure's runs against the median recorded.
jq -r --slurpfile vals "$VALUES" '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[(length - 1) / 2]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def fmt: if . == null then "-" elif (. | fabs) >= 100 then (. | round | tostring)
    else ((. * 1000 | round) / 1000 | tostring) end;
  def span: if length > 1 then " (\(min | fmt)–\(max | fmt))" else "" end;
  .noise as $tn | $vals[0] as $v
  | ["row", "figure", "recorded", "now", "now/recorded", "verdict"],
    (.rows[] | . as $row | select($v[$row.name] != null)
      | .figures | to_entries[] | .key as $k | .value as $fig
      | ($fig.recorded // []) as $rec | ($v[$row.name][$k | tostring] // []) as $now
      | ($rec | median) as $r | ($now | median) as $n
      | ($fig.noise // $row.noise // $tn) as $noise
      | (if $n == null then "no figure"
         elif $fig.better == "zero" then (if $n > 0 then "WORSE (not 0)" else "ok" end)
         elif $r == null then "new"
         elif $fig.better == "higher" then
           (if $n < $r * (1 - $noise) then "WORSE"
            elif $n > $r * (1 + $noise) then "better" else "ok" end)
         else
           (if $n > $r * (1 + $noise) then "WORSE"
            elif $n < $r * (1 - $noise) then "better" else "ok" end)
         end) as $verdict
      | [$row.name, $fig.what, "\($r | fmt)\($rec | span)", "\($n | fmt)\($now | span)",
         (if $r != null and $n != null and $r != 0 then ($n / $r | fmt) else "-" end),
         (if $fig.better == "zero" then $verdict
          else "\($verdict) (noise ±\($noise * 100 | round) %)" end)])
  | @tsv' "$TABLE" | column -t -s $'\t' | tee "$OUT/compare.txt"

if [ "$RECORD" = 1 ]; then
  jq --slurpfile vals "$VALUES" --arg at "$(date -u +%F), commit $(git -C "$ROOT" rev-parse --short HEAD), $OUT" '
    $vals[0] as $v | .recorded_at = $at
    | .rows |= map(. as $row | if $v[$row.name] == null then . else
        .figures |= (to_entries | map(.value + (if ($v[$row.name][.key | tostring] // []) | length > 0
          then {recorded: ($v[$row.name][.key | tostring] | map(. * 1000 | round / 1000))} else {} end))) end)' \
    "$TABLE" >"$TABLE.tmp" && mv "$TABLE.tmp" "$TABLE"
  echo "recorded into $TABLE" >&2
fi
! grep -q WORSE "$OUT/compare.txt"
