#!/usr/bin/env bash
# Runs the Python gRPC client test against the appliance's embedded default: installs grpcio and
# grpcio-tools into a virtualenv under target/, generates the stubs from proto/stream.proto,
# starts `appliance run` (debug build), runs scripts/python-client/client_test.py, and stops the
# appliance with SIGTERM (it must exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-client/venv
stubs=target/python-client/stubs
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r scripts/python-client/requirements.txt
mkdir -p "$stubs"
"$venv/bin/python" -m grpc_tools.protoc -I proto --python_out="$stubs" --grpc_python_out="$stubs" proto/stream.proto
source scripts/debug-bins.sh
debug_bins appliance:appliance
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
grpc_port=$(free_port)
http_port=$(free_port)
target/debug/appliance run --grpc "127.0.0.1:$grpc_port" --http "127.0.0.1:$http_port" \
    --data-dir target/python-client/data \
    >target/python-client/appliance.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
PYTHONPATH="$stubs" "$venv/bin/python" scripts/python-client/client_test.py "127.0.0.1:$grpc_port"
kill -TERM "$pid"
if wait "$pid"; then
    echo "python client test: appliance stopped cleanly"
else
    echo "python client test: appliance exited with status $?" >&2
    cat target/python-client/appliance.log >&2
    exit 1
fi
trap - EXIT
