#!/usr/bin/env bash
# Renders a score sheet (计分表) of the example season in headless Chromium and keeps the
# screenshot under docs/. Also prints the sheets to PDF and checks one A4 page per match.
#
# Needs: Debian's chromium (apt-get install -y chromium) and a CJK font
# (apt-get install -y fonts-noto-cjk). Run from anywhere: scripts/sheet-screenshot.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
cargo build -q -p chuhe
chuhe="$root/target/debug/chuhe"
season="crates/league/examples/season.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-background-networking
  --no-first-run --disable-component-update --disable-sync --user-data-dir="$work/profile")

# Round 1, table 1: a slow win, a fast-game win, an armageddon drawn and scored for Black, a foul.
"$chuhe" league sheet "$season" --round 1 --table 1 --format html > "$work/sheet.html"
# A4 landscape at 96 dpi: 1123 x 794 CSS pixels.
"${chrome[@]}" --hide-scrollbars --window-size=1123,794 --force-device-scale-factor=1 \
  --screenshot="$root/docs/league-score-sheet.png" "file://$work/sheet.html" 2>/dev/null
# A blank sheet for round 3 (from the schedule, before it is played).
"$chuhe" league sheet "$season" --round 2 --table 2 --blank --format html > "$work/blank.html"
"${chrome[@]}" --hide-scrollbars --window-size=1123,794 --force-device-scale-factor=1 \
  --screenshot="$root/docs/league-score-sheet-blank.png" "file://$work/blank.html" 2>/dev/null

# Every match of the season printed: one A4 page each.
"$chuhe" league sheet "$season" --format html > "$work/all.html"
"${chrome[@]}" --no-pdf-header-footer --print-to-pdf="$work/all.pdf" "file://$work/all.html" 2>/dev/null
matches=$("$chuhe" league sheet "$season" | tail -n +2 | cut -d, -f2,4 | sort -u | wc -l)
pages=$(grep -aoE '/Type ?/Page([^s]|$)' "$work/all.pdf" | wc -l)
echo "matches: $matches, printed pages: $pages"
if [ "$matches" != "$pages" ]; then
  echo "error: expected one A4 page per match" >&2
  exit 1
fi
echo "wrote docs/league-score-sheet.png and docs/league-score-sheet-blank.png"
