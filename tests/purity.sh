#!/usr/bin/env bash
# The pure crates stay pure: `cargo tree -p CRATE -e normal` (what the crate links, not its
# tests or build scripts) lists no async runtime, logging, database, HTTP, Redis or protobuf
# crate. Fails naming the crate and what it reaches.
#
#   bash tests/purity.sh chuhe-league-core chuhe-league ...
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: tests/purity.sh CRATE..." >&2; exit 2; }
# Crate names (as cargo tree prints them) that are IO at the edges, never in a pure core.
IMPURE='tokio|tokio-util|tokio-tungstenite|tungstenite|async-std|smol|futures-util|futures|mio|tracing|tracing-subscriber|tracing-core|log|sqlx|sqlx-core|rusqlite|libsqlite3-sys|postgres|tokio-postgres|axum|hyper|hyper-util|http|tower|tower-service|reqwest|redis|prost|prost-build|pbjson|protox'
status=0
for crate in "$@"; do
  tree=$(cargo tree --locked -p "$crate" -e normal --prefix none --format '{p}') \
    || { echo "purity.sh: FAIL: cargo tree -p $crate" >&2; exit 1; }
  bad=$(awk '{print $1}' <<<"$tree" | grep -Ex "$IMPURE" | sort -u | tr '\n' ' ' || true)
  if [ -n "$bad" ]; then
    echo "purity.sh: FAIL: $crate depends on $bad" >&2
    status=1
  else
    echo "purity: $crate: $(awk '{print $1}' <<<"$tree" | sort -u | wc -l) crates, none of them IO"
  fi
done
exit $status
