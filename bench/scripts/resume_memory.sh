#!/usr/bin/env bash
# Memory of the recent-slot buffer (issue 22): runs the appliance on the embedded replay at each
# rate for RUN_SECONDS (default 60) with bounds large enough to keep everything, then reads the
# buffer's own accounting from /metrics (slots, updates, bytes of their shared encodings) and the process's resident memory, and prints a markdown row per rate.
# PROFILE=release (default) or debug selects the build (the buffer's bytes do not depend on it).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${RUN_SECONDS:-60}"
rates="${RATES:-5000 100000}"
profile="${PROFILE:-release}"
if [ "$profile" = release ]; then
    cargo build --release -q -p appliance
    binary=target/release/appliance
else
    cargo build -q -p appliance
    binary=target/debug/appliance
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v name="$2" '$1 == name { print $2 }'; }
rss_kib() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
echo "| shreds/s | seconds | slots kept | updates kept | counted bytes | counted per update | counted MiB per minute | RSS before → after (MiB) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for rate in $rates; do
    work=$(mktemp -d)
    config="$work/appliance.toml"
    printf '[grpc]\nrecent_slots = 100000\nrecent_bytes = 17179869184\n' >"$config"
    http=$(free_port)
    "$binary" run --config "$config" --grpc "127.0.0.1:$(free_port)" --http "127.0.0.1:$http" \
        --replay-rate "$rate" --samples off --data-dir "$work/data" >"$work/log" 2>&1 &
    pid=$!
    until curl -sf -o /dev/null "http://127.0.0.1:$http/health"; do sleep 0.2; done
    sleep 2
    before=$(rss_kib "$pid")
    sleep "$seconds"
    slots=$(metric "$http" appliance_resume_buffer_slots)
    bytes=$(metric "$http" appliance_resume_buffer_bytes)
    after=$(rss_kib "$pid")
    kept=$(metric "$http" appliance_resume_buffer_updates)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -rf "$work"
    awk -v rate="$rate" -v s="$seconds" -v slots="$slots" -v bytes="$bytes" -v kept="${kept:-0}" \
        -v before="$before" -v after="$after" 'BEGIN {
        per = (kept > 0) ? sprintf("%.0f", bytes / kept) : "—";
        printf "| %d | %d | %d | %s | %d | %s | %.1f | %.0f → %.0f |\n", rate, s, slots, (kept > 0 ? kept : "—"), bytes, per, bytes / 1048576 * 60 / (s + 2), before / 1024, after / 1024
    }'
done
