#!/usr/bin/env bash
# The pure cores stay pure: the normal (non-dev, non-build) dependency tree of each package named
# here holds no async runtime, logging, database, HTTP, websocket, Redis or protobuf crate.
# Purity is a property of the package's Cargo.toml; this makes the property checked.
#
#   bash tests/deps.sh [PACKAGE...]      # default: chuhe-game
#
# Before checking, it checks itself: chuhe-server (which has all of those) must fail the same
# test, so a check that cannot fail (a wrong crate-name pattern, an empty tree) fails here.
set -euo pipefail
cd "$(dirname "$0")/.."

# Crate names (whole names; a trailing * matches a family, e.g. tokio-util).
forbidden='^(tokio|tokio-.*|async-std|smol|futures|futures-.*|mio|tracing|tracing-.*|log|env_logger|sqlx|sqlx-.*|rusqlite|libsqlite3-sys|postgres|tokio-postgres|diesel|axum|axum-.*|hyper|hyper-.*|http|http-body|reqwest|tower|tower-.*|tungstenite|tokio-tungstenite|redis|prost|prost-.*|pbjson|pbjson-.*|tonic|chuhe-proto|chuhe-store|chuhe-server|chuhe-cluster)$'

# The forbidden crates in PACKAGE's normal dependency tree, one a line.
offenders() {
  cargo tree --quiet --locked -p "$1" -e normal --prefix none --format '{p}' \
    | awk '{print $1}' | sort -u | grep -E "$forbidden" || true
}

self_test=$(offenders chuhe-server)
if [ -z "$self_test" ]; then
  echo "tests/deps.sh: self-test failed: chuhe-server shows no forbidden crate, so the check cannot fail" >&2
  exit 1
fi

status=0
for pkg in "${@:-chuhe-game}"; do
  found=$(offenders "$pkg")
  if [ -n "$found" ]; then
    echo "tests/deps.sh: $pkg depends on crates a pure core must not: $(echo $found)" >&2
    status=1
  else
    echo "tests/deps.sh: $pkg: no async, logging, database, HTTP, Redis or protobuf crate"
  fi
done
exit $status
