#!/usr/bin/env bash
# Validates deploy/ with the offline checkers of the tools themselves (the Rust test
# crates/cli/tests/it/deploy.rs checks the files against chuhe; this checks them against
# Kubernetes' schemas, Caddy, docker compose and systemd):
#   - kubernetes-validate --strict (PyPI; the API schemas ship in the package): every manifest,
#     unknown fields included. Installed into a venv on first use (--install) or taken from PATH.
#   - caddy validate, docker compose config (or docker-compose), systemd-analyze verify: each
#     when installed, else one `skipped:` line.
# Usage: bash deploy/check.sh [--install]     (exit 1 if any check fails)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
install=no
[ "${1:-}" = "--install" ] && install=yes
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

kv=$(command -v kubernetes-validate || true)
if [ -z "$kv" ] && [ "$install" = yes ]; then
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/chuhe-deploy-check"
  if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'kubernetes-validate==1.37.0'
  fi
  kv="$venv/bin/kubernetes-validate"
fi
if [ -n "$kv" ]; then
  manifests=()
  for f in "$here"/kubernetes/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f")
  done
  if "$kv" --quiet --strict "${manifests[@]}"; then
    echo "ok: kubernetes-validate --strict (${#manifests[@]} manifests)"
  else
    echo "FAILED: kubernetes-validate"; failed=1
  fi
else
  echo "skipped: kubernetes-validate (not installed; --install puts it in a venv)"
fi

if command -v caddy >/dev/null; then
  if SITE_ADDRESS=chess.example.org caddy validate --adapter caddyfile --config "$here/Caddyfile" >"$tmp/caddy.log" 2>&1; then
    echo "ok: caddy validate"
  else
    cat "$tmp/caddy.log"; echo "FAILED: caddy validate"; failed=1
  fi
else
  echo "skipped: caddy validate (caddy is not installed)"
fi

compose=()
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null; then compose=(docker-compose); fi
if [ ${#compose[@]} -gt 0 ]; then
  if (cd "$here" && POSTGRES_PASSWORD=check "${compose[@]}" -f compose.yaml config --quiet) 2>"$tmp/compose.log"; then
    echo "ok: ${compose[*]} config"
  else
    cat "$tmp/compose.log"; echo "FAILED: ${compose[*]} config"; failed=1
  fi
else
  echo "skipped: docker compose config (neither docker compose nor docker-compose is installed)"
fi

if command -v systemd-analyze >/dev/null; then
  # verify wants ExecStart's binary to exist: point it at one that does.
  sed "s#^ExecStart=/usr/local/bin/chuhe #ExecStart=$(command -v true) #" \
    "$here/systemd/chuhe.service" >"$tmp/chuhe.service"
  if systemd-analyze verify "$tmp/chuhe.service" >"$tmp/unit.log" 2>&1 && [ ! -s "$tmp/unit.log" ]; then
    echo "ok: systemd-analyze verify"
  else
    cat "$tmp/unit.log"; echo "FAILED: systemd-analyze verify"; failed=1
  fi
else
  echo "skipped: systemd-analyze verify (not installed)"
fi
exit $failed
