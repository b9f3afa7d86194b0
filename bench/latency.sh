#!/usr/bin/env bash
# The latency matrix of the gRPC stream (issue 6): 1, 100 and 1,000 subscribers at the mainnet
# replay rate (5,000 shreds/s) and at 20x (100,000 shreds/s). Builds the release appliance and the
# harness, runs bench/src/bin/latency_harness.rs once per cell and prints a markdown table to
# stdout (progress goes to stderr). Cells are microseconds "p50 / p99 / max".
#
# Environment: SECONDS_PER_RUN (default 20), SUBSCRIBERS ("1 100 1000"), RATES ("5000 100000"),
# HARNESS_ARGS (extra harness flags, e.g. "--burst" or "--client-threads 2"), JSON_DIR (also write
# each run's JSON summary there, as latency-<subscribers>-<rate>.json), AUTOGROUP_NICE (e.g. -10:
# run each cell in its own session whose scheduler autogroup gets this nice value; root only).
#
# AUTOGROUP_NICE matters on a shared machine: with kernel.sched_autogroup_enabled=1 (the default)
# CPU time is split between sessions first, so a plain `nice` does not lift the appliance above
# builds running in other terminals. The appliance and the harness share the cell's group.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${SECONDS_PER_RUN:-20}"
subscribers="${SUBSCRIBERS:-1 100 1000}"
rates="${RATES:-5000 100000}"
extra="${HARNESS_ARGS:-}"

echo "building release appliance and latency_harness..." >&2
cargo build --release -q -p appliance -p bench --bin appliance --bin latency_harness >&2

echo "| subscribers | shreds/s | deliveries | capture_done − first_read | subscriber_recv − publish | **first_read → subscriber_recv** | capture_done → subscriber_recv | gRPC hop (client − subscriber_recv) | client − first_read | updates (all / median per sub / subs with any) | dropped | CPU cores appliance / harness | load average |"
echo "| ---: | ---: | ---: | --- | --- | --- | --- | --- | --- | --- | ---: | --- | --- |"
for rate in $rates; do
    for n in $subscribers; do
        echo "running: $n subscribers at $rate shreds/s for $seconds s" >&2
        json=()
        if [[ -n "${JSON_DIR:-}" ]]; then
            mkdir -p "$JSON_DIR"
            json=(--json-out "$JSON_DIR/latency-$n-$rate.json")
        fi
        # shellcheck disable=SC2086 # HARNESS_ARGS is a list of flags.
        cell=(target/release/latency_harness --subscribers "$n" --rate "$rate"
            --seconds "$seconds" --markdown-row "${json[@]}" $extra)
        if [[ -n "${AUTOGROUP_NICE:-}" ]]; then
            # shellcheck disable=SC2016 # $$ and $0 expand in the inner shell.
            setsid --wait bash -c 'echo "$0" >"/proc/$$/autogroup" && exec "$@"' \
                "$AUTOGROUP_NICE" "${cell[@]}"
        else
            "${cell[@]}"
        fi
    done
done
echo
echo "Machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
    "autogroup nice ${AUTOGROUP_NICE:-unchanged}; harness flags '${extra}'; $(date -u +%Y-%m-%dT%H:%MZ)."
