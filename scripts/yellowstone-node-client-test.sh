#!/usr/bin/env bash
# Runs the Yellowstone Node client test against the appliance's embedded default: installs the
# published @triton-one/yellowstone-grpc SDK (a napi-rs native addon with prebuilt binaries; pinned,
# scripts/yellowstone-node-client/package-lock.json) under
# scripts/yellowstone-node-client/node_modules, starts `appliance run` (debug build), runs
# scripts/yellowstone-node-client/client_test.mjs against geyser.Geyser/SubscribeDeshred on the
# gRPC port, and stops the appliance with SIGTERM (it must exit 0). Needs node >= 20.18 with npm
# on linux-x64 (glibc or musl) or macOS.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd scripts/yellowstone-node-client && npm ci --no-audit --no-fund --silent)
source scripts/debug-bins.sh
debug_bins appliance:appliance
mkdir -p target/yellowstone-node-client
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
grpc_port=$(free_port)
http_port=$(free_port)
target/debug/appliance run --grpc "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" \
    --data-dir target/yellowstone-node-client/data \
    >target/yellowstone-node-client/appliance.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
# The listener comes up after the replay's first sets are decoded: wait for it.
for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$grpc_port") 2>/dev/null; then break; fi
    sleep 0.1
done
if ! node scripts/yellowstone-node-client/client_test.mjs "http://127.0.0.1:$grpc_port"; then
    echo "yellowstone node client test: the client failed; the appliance's log:" >&2
    cat target/yellowstone-node-client/appliance.log >&2
    exit 1
fi
kill -TERM "$pid"
if wait "$pid"; then
    echo "yellowstone node client test: appliance stopped cleanly"
else
    echo "yellowstone node client test: appliance exited with status $?" >&2
    cat target/yellowstone-node-client/appliance.log >&2
    exit 1
fi
trap - EXIT
