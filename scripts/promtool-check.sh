#!/usr/bin/env bash
# `promtool check metrics` on the /metrics of a running appliance with every family present: the
# real binary serving the epoch-0 CAR pieces of archive/tests/fixtures (indexed here with
# `appliance archive index`), insights ingesting from the STAND-IN upstream (bench binary
# `insights_load standin`), the embedded replay feeding the stream. A few JSON-RPC calls (one
# over the rate limit) give the labelled families samples first. promtool comes from Debian's
# `prometheus` package (scripts/setup.sh installs it). Exit status non-zero when promtool finds
# any problem.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
    echo "promtool-check: promtool missing (scripts/setup.sh installs Debian's prometheus package)" >&2
    exit 1
fi
source scripts/debug-bins.sh
debug_bins appliance:appliance bench:insights_load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/archive"
cp archive/tests/fixtures/epoch-0-1.car archive/tests/fixtures/epoch-0-2.car "$WORK/archive/"
target/debug/appliance archive index --no-progress "$WORK/archive"/*.car >"$WORK/index.log" 2>&1

UPSTREAM_PORT=$(free_port)
target/debug/insights_load standin --port "$UPSTREAM_PORT" >"$WORK/standin.log" 2>&1 &
PIDS+=($!)
# Ports picked here may be taken before the appliance binds them: retry on fresh ones.
BASE=""
for _ in 1 2 3 4 5; do
    HTTP_PORT=$(free_port)
    GRPC_PORT=$(free_port)
    target/debug/appliance run --grpc "127.0.0.1:$GRPC_PORT" --http "127.0.0.1:$HTTP_PORT" \
        --archive "$WORK/archive" --upstream "http://127.0.0.1:$UPSTREAM_PORT" --stream on \
        --insights-db "$WORK/insights.redb" --insights-poll 20ms --data-dir "$WORK/data" \
        >"$WORK/appliance.log" 2>&1 &
    APPLIANCE=$!
    for _ in $(seq 1 300); do
        if curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/health"; then
            BASE="http://127.0.0.1:$HTTP_PORT"
            break
        fi
        kill -0 "$APPLIANCE" 2>/dev/null || break
        sleep 0.2
    done
    if [ -n "$BASE" ]; then PIDS+=("$APPLIANCE"); break; fi
    kill "$APPLIANCE" 2>/dev/null || true
done
if [ -z "$BASE" ]; then
    echo "promtool-check: the appliance did not come up" >&2
    cat "$WORK/appliance.log" >&2
    exit 1
fi

rpc() { curl -s -o /dev/null -H 'Content-Type: application/json' -d "$1" "$BASE/"; }
rpc '{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[1,{"transactionDetails":"signatures"}]}'
rpc '{"jsonrpc":"2.0","id":2,"method":"getSlot"}'
batch=$(python3 -c 'import json; print(json.dumps([{"jsonrpc":"2.0","id":i,"method":"getSlot"} for i in range(120)]))')
rpc "$batch"

# Wait until the stream has published (the stage-latency histograms have samples).
for _ in $(seq 1 300); do
    if curl -s "$BASE/metrics" | grep -q '^appliance_updates_published_total [1-9]'; then break; fi
    sleep 0.2
done
curl -s "$BASE/metrics" >"$WORK/metrics.txt"
families=$(grep -c '^# TYPE ' "$WORK/metrics.txt")
if ! promtool check metrics <"$WORK/metrics.txt"; then
    echo "promtool-check: promtool refused /metrics (${families} families); the text is above" >&2
    exit 1
fi
for needed in appliance_rpc_calls_total appliance_archive_epochs_served appliance_archive_http_cache_hits_total appliance_stage_latency_seconds; do
    grep -q "^# HELP $needed " "$WORK/metrics.txt" || { echo "promtool-check: no $needed family" >&2; exit 1; }
done
# One prefix for every family (README, "Metric names").
if grep '^# TYPE ' "$WORK/metrics.txt" | grep -v '^# TYPE appliance_'; then
    echo "promtool-check: the families above lack the appliance_ prefix" >&2
    exit 1
fi
echo "promtool-check: /metrics passes promtool check metrics (${families} families, all appliance_*)"

# A relay of that appliance (docs/relay.md): its own families, once it has relayed updates.
RELAY_HTTP=$(free_port)
target/debug/appliance run --relay "http://127.0.0.1:$GRPC_PORT" --grpc "127.0.0.1:$(free_port)" \
    --http "127.0.0.1:$RELAY_HTTP" --data-dir "$WORK/relay-data" >"$WORK/relay.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do
    if curl -s "http://127.0.0.1:$RELAY_HTTP/metrics" 2>/dev/null | grep -q '^appliance_relay_published_total [1-9]'; then break; fi
    sleep 0.2
done
curl -s "http://127.0.0.1:$RELAY_HTTP/metrics" >"$WORK/relay-metrics.txt"
grep -q '^appliance_relay_published_total [1-9]' "$WORK/relay-metrics.txt" || {
    echo "promtool-check: the relay published nothing" >&2; cat "$WORK/relay.log" >&2; exit 1; }
promtool check metrics <"$WORK/relay-metrics.txt" || {
    echo "promtool-check: promtool refused the relay's /metrics" >&2; exit 1; }
if grep '^# TYPE ' "$WORK/relay-metrics.txt" | grep -v '^# TYPE appliance_'; then
    echo "promtool-check: the relay's families above lack the appliance_ prefix" >&2
    exit 1
fi
echo "promtool-check: the relay's /metrics passes too ($(grep -c '^# TYPE ' "$WORK/relay-metrics.txt") families)"
