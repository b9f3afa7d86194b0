#!/usr/bin/env bash
# Real clients against the JSON-RPC archive: starts bench's rpc_fixture_server (the archive frontend
# over the fixture archive in rpc/tests/fixtures/rpc) on a free loopback port, then runs
# @solana/web3.js (Node) and solana-py (Python) against it. Installs pinned client versions once
# (scripts/rpc-clients/js/node_modules, scripts/rpc-clients/.venv); reruns reuse them.
# Needs: node >= 18 with npm, python3 with venv. Exit status is non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
clients="$root/scripts/rpc-clients"

if [ ! -d "$clients/js/node_modules/@solana/web3.js" ]; then
  (cd "$clients/js" && npm install --no-audit --no-fund --silent)
fi
if [ ! -x "$clients/.venv/bin/python" ] || ! "$clients/.venv/bin/python" -c 'import solana' 2>/dev/null; then
  python3 -m venv "$clients/.venv"
  "$clients/.venv/bin/pip" install --quiet -r "$clients/python/requirements.txt"
fi

source scripts/debug-bins.sh
debug_bins bench:rpc_fixture_server appliance:appliance
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$root/target/debug/rpc_fixture_server" --listen "127.0.0.1:$port" > /tmp/rpc-fixture-server.$$.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f /tmp/rpc-fixture-server.$$.log' EXIT
for _ in $(seq 1 100); do
  grep -q "listening on" /tmp/rpc-fixture-server.$$.log 2>/dev/null && break
  sleep 0.1
done
url="http://127.0.0.1:$port"
node "$clients/js/test.mjs" "$url"
"$clients/.venv/bin/python" "$clients/python/test_archive.py" "$url"

# The appliance itself without an archive: POST / is a JSON-RPC error for web3.js too.
bare=""
for _ in 1 2 3 4 5; do
  http_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  grpc_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$root/target/debug/appliance" run --udp 127.0.0.1:0 --grpc "127.0.0.1:$grpc_port" \
    --http "127.0.0.1:$http_port" --data-dir "$root/target/rpc-client/data" > /dev/null 2>&1 &
  bare=$!
  up=0
  for _ in $(seq 1 200); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$http_port/health', timeout=1)" 2>/dev/null; then up=1; break; fi
    kill -0 "$bare" 2>/dev/null || break
    sleep 0.1
  done
  [ "$up" = 1 ] && break
  kill "$bare" 2>/dev/null || true
  bare=""
done
[ -n "$bare" ] || { echo "rpc-client-test: the appliance did not come up" >&2; exit 1; }
trap 'kill $server $bare 2>/dev/null || true; rm -f /tmp/rpc-fixture-server.$$.log' EXIT
node "$clients/js/no-archive.mjs" "http://127.0.0.1:$http_port"
echo "rpc-client-test: web3.js and solana-py passed"
