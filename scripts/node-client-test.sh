#!/usr/bin/env bash
# Runs the Node gRPC client test against the appliance's embedded default: installs @grpc/grpc-js
# and @grpc/proto-loader (pinned, scripts/node-client/package-lock.json) under
# scripts/node-client/node_modules, starts `appliance run` (debug build), runs
# scripts/node-client/client_test.mjs with proto/stream.proto loaded at run time, and stops the
# appliance with SIGTERM (it must exit 0). Needs node >= 18 with npm.
set -euo pipefail
cd "$(dirname "$0")/.."
(cd scripts/node-client && npm ci --no-audit --no-fund --silent)
source scripts/debug-bins.sh
debug_bins appliance:appliance
mkdir -p target/node-client
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
grpc_port=$(free_port)
http_port=$(free_port)
target/debug/appliance run --grpc "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" \
    --data-dir target/node-client/data \
    >target/node-client/appliance.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
# The listener comes up after the replay's first sets are decoded: wait for it.
for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$grpc_port") 2>/dev/null; then break; fi
    sleep 0.1
done
node scripts/node-client/client_test.mjs proto/stream.proto "127.0.0.1:$grpc_port"
kill -TERM "$pid"
if wait "$pid"; then
    echo "node client test: appliance stopped cleanly"
else
    echo "node client test: appliance exited with status $?" >&2
    cat target/node-client/appliance.log >&2
    exit 1
fi
trap - EXIT
