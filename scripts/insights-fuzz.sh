#!/usr/bin/env bash
# Fuzzes the insights API (/v1) with schemathesis, driven by its OpenAPI document: random and
# boundary query parameters on every endpoint; fails on any 5xx and on responses that do not match
# the document. Runs the real `appliance` binary, its upstream being the STAND-IN JSON-RPC server
# (bench binary `insights_load standin`, serving insights/tests/fixtures/insights). Takes ~1-2 min
# once built. Installs schemathesis with pip into a virtualenv (INSIGHTS_FUZZ_VENV, default
# target/insights-fuzz-venv). MAX_EXAMPLES (default 150) sets examples per operation.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${INSIGHTS_FUZZ_VENV:-target/insights-fuzz-venv}
MAX_EXAMPLES=${MAX_EXAMPLES:-150}
if [ ! -x "$VENV/bin/schemathesis" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet -r scripts/insights/requirements.txt
fi

source scripts/debug-bins.sh
debug_bins appliance:appliance bench:insights_load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
WORK=$(mktemp -d)
UPSTREAM_PORT=$(free_port)
HTTP_PORT=$(free_port)
GRPC_PORT=$(free_port)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

target/debug/insights_load standin --port "$UPSTREAM_PORT" >"$WORK/standin.log" 2>&1 &
PIDS+=($!)
target/debug/appliance run --udp 127.0.0.1:0 --grpc "127.0.0.1:$GRPC_PORT" --http "127.0.0.1:$HTTP_PORT" \
    --upstream "http://127.0.0.1:$UPSTREAM_PORT" --insights-db "$WORK/insights.redb" --insights-poll 20ms --data-dir "$WORK/data" \
    >"$WORK/appliance.log" 2>&1 &
PIDS+=($!)

BASE="http://127.0.0.1:$HTTP_PORT"
for _ in $(seq 1 300); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/block50")" = 200 ]; then break; fi
    sleep 0.2
done
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/block50")" != 200 ]; then
    echo "insights window never filled" >&2
    cat "$WORK/appliance.log" >&2
    exit 1
fi

"$VENV/bin/schemathesis" run "$BASE/v1/openapi.json" \
    --url "$BASE" \
    --checks not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance \
    --max-examples "$MAX_EXAMPLES" \
    --seed 8 \
    --suppress-health-check all
echo "insights fuzz: no 5xx, every response matches the OpenAPI document"
