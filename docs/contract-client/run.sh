#!/usr/bin/env bash
# The contract client check (docs/CONTRACT.md): openapi-typescript generates
# types from the /api/openapi.json a real `portal serve` publishes, tsc
# type-checks client.ts against them, and Node runs it through the
# registration flow on that server (SQLite, demo data, a free 127.0.0.1 port).
#
# Usage: run.sh PORTAL_BINARY. Skips, saying so, when node or the npm
# packages (npm ci in this folder) are missing, unless
# PORTAL_CONTRACT_CLIENT=required, which CI sets: then it fails.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 PORTAL_BINARY" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
portal=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

skip() {
  if [ "${PORTAL_CONTRACT_CLIENT:-}" = required ]; then
    echo "contract-client: FAILED: $1, and PORTAL_CONTRACT_CLIENT=required" >&2
    exit 1
  fi
  echo "contract-client: SKIPPED the TypeScript client check: $1"
  exit 0
}
command -v node >/dev/null 2>&1 || skip "node is not installed"
for tool in openapi-typescript tsc; do
  [ -x "$here/node_modules/.bin/$tool" ] || skip "its npm packages are not installed (run: cd docs/contract-client && npm ci)"
done

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

port=$(node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
secret="contract-client-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export PORTAL_HASH_SECRET="$secret" PORTAL_COOKIE_SECURE=false PORTAL_PAYMENT_PROVIDER=test PORTAL_ADDR="127.0.0.1:$port" \
  PORTAL_DATABASE_URL="sqlite:$tmp/portal.db" PORTAL_LOG_LEVEL=warn
"$portal" seed demo >/dev/null
"$portal" serve >"$tmp/serve.log" 2>&1 &
pid=$!

# Wait for the listener, polling with a deadline of 15 s.
up=""
for _ in $(seq 1 150); do
  if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$up" ]; then
  cat "$tmp/serve.log" >&2
  echo "contract-client: FAILED: portal serve did not listen on 127.0.0.1:$port" >&2
  exit 1
fi

base="http://127.0.0.1:$port"
cd "$here"
rm -rf generated build
node_modules/.bin/openapi-typescript "$base/api/openapi.json" --output generated/schema.ts --silent
node_modules/.bin/tsc -p tsconfig.json
if ! PORTAL_URL="$base" node build/client.js; then
  echo "contract-client: the server's log:" >&2
  cat "$tmp/serve.log" >&2
  exit 1
fi
