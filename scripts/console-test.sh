#!/usr/bin/env bash
# The operator console (GET /) in a real headless browser: Debian's chromium driven by its
# chromedriver through Selenium (pinned in scripts/console/requirements.txt, installed into a
# virtualenv under target/). Two runs of the real binary:
#   1. everything on: the embedded replay (--stream on), the epoch-0 CAR pieces of
#      archive/tests/fixtures as the JSON-RPC archive, insights from the stand-in upstream
#      (bench binary `insights_load standin`), one `appliance subscribe` client; the test makes a
#      few JSON-RPC calls a second while it waits;
#   2. the embedded replay alone, its bundled samples off (and one subscriber): the archive and
#      insights sections must say they are not running.
# Each run: every chart of a running product drawn (canvas pixel data and a PNG screenshot,
# target/console-test/*.png), no browser console warning or error, nothing from another origin.
# Needs: chromium and chromium-driver (scripts/setup.sh), python3 with venv.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in chromium chromedriver; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "console-test: $tool missing (scripts/setup.sh installs Debian's chromium and chromium-driver)" >&2
        exit 1
    fi
done
OUT=target/console-test
venv=$OUT/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r scripts/console/requirements.txt
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

# Starts `appliance run ARGS...` on free ports (retried: a port picked here may be taken before
# the appliance binds it); sets BASE and GRPC, or exits.
start_appliance() {
    local log=$1
    shift
    BASE=""
    for _ in 1 2 3 4 5; do
        local http_port grpc_port pid
        http_port=$(free_port)
        grpc_port=$(free_port)
        target/debug/appliance run --grpc "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" \
            "$@" >"$log" 2>&1 &
        pid=$!
        for _ in $(seq 1 300); do
            if curl -sf -o /dev/null "http://127.0.0.1:$http_port/health"; then
                BASE="http://127.0.0.1:$http_port"
                GRPC="http://127.0.0.1:$grpc_port"
                break
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if [ -n "$BASE" ]; then PIDS+=("$pid"); LAST=$pid; return; fi
        kill "$pid" 2>/dev/null || true
    done
    echo "console-test: the appliance did not come up" >&2
    cat "$log" >&2
    exit 1
}

mkdir -p "$OUT" "$WORK/archive"
cp archive/tests/fixtures/epoch-0-1.car archive/tests/fixtures/epoch-0-2.car "$WORK/archive/"
target/debug/appliance archive index --no-progress "$WORK/archive"/*.car >"$WORK/index.log" 2>&1
UPSTREAM_PORT=$(free_port)
target/debug/insights_load standin --port "$UPSTREAM_PORT" >"$WORK/standin.log" 2>&1 &
PIDS+=($!)

# 1. Every product running, one subscriber.
start_appliance "$WORK/full.log" --archive "$WORK/archive" --upstream "http://127.0.0.1:$UPSTREAM_PORT" \
    --stream on --insights-db "$WORK/insights.redb" --insights-poll 20ms --data-dir "$WORK/full"
FULL=$LAST
target/debug/appliance subscribe --endpoint "$GRPC" --compact >/dev/null 2>"$WORK/subscribe.log" &
PIDS+=($!)
"$venv/bin/python" scripts/console/console_test.py "$BASE" --expect full --screenshot "$OUT/full.png"
kill "$FULL" 2>/dev/null || true

# 2. The embedded replay alone (the samples off): no archive, no insights.
start_appliance "$WORK/bare.log" --samples off --data-dir "$WORK/bare"
target/debug/appliance subscribe --endpoint "$GRPC" --compact >/dev/null 2>"$WORK/subscribe-bare.log" &
PIDS+=($!)
"$venv/bin/python" scripts/console/console_test.py "$BASE" --expect stream-only --screenshot "$OUT/stream-only.png"
echo "console-test: the console passed in headless $(chromium --version 2>/dev/null | head -1)"
