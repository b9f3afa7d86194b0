#!/usr/bin/env bash
# A/B of two builds of one criterion bench, alternated case by case and round by round, so that
# the host's slow drifts (this VM's throughput moves by ±20 % over minutes) fall on both builds
# alike. Prints each run's throughput (thousands of elements per second), then per case the medians and the median of the per-round
# new/old ratios (the figure bench/README.md reports).
#
#   bench/ab_alternate.sh OLD_BINARY NEW_BINARY ROUNDS SECONDS CASE...
#
# OLD_BINARY and NEW_BINARY: bench executables (`cargo bench -p bench --bench X --no-run` prints
# their paths; copy them aside before rebuilding). CASE: a criterion filter such as
# `turbine/merkle`; it is also exported as STEADY_CASE, which makes `pipeline_steady` set up only
# the cases it names (and their batch-wise twins) instead of all eighteen. SECONDS: measurement
# time per run.
set -euo pipefail

if [[ $# -lt 5 ]]; then
    sed -n '2,13p' "$0" >&2
    exit 2
fi
old=$1 new=$2 rounds=$3 seconds=$4
shift 4
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for case in "$@"; do
    for round in $(seq 1 "$rounds"); do
        for side in old new; do
            binary=$old
            [[ $side == new ]] && binary=$new
            STEADY_CASE=$case "$binary" --bench --warm-up-time 0.5 --measurement-time "$seconds" "$case" 2>/dev/null |
                awk -v side="$side" -v round="$round" '
                    /^[a-z_]+\/[a-z_\/]+/ && !/%/ { name = $1 }
                    /thrpt:/ && name != "" {
                        value = $4
                        if ($5 ~ /^Melem/) value *= 1000
                        if ($5 ~ /^elem/) value /= 1000
                        print round, side, name, value; name = "" }' |
                tee -a "$out"
        done
    done
done

python3 - "$out" <<'EOF'
import collections, statistics, sys

runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    round_, side, name, value = line.split()
    runs[(name, side)][int(round_)] = float(value)
old_names = sorted(name for name, side in runs if side == "old")
print()
for name, side in sorted(runs):
    values = runs[(name, side)]
    line = f"{side} {name}: median {statistics.median(values.values()):.0f} over {len(values)} runs"
    # The same case of the old build; failing that, the case it extends (a renamed variant).
    twin = name if name in old_names else next(
        (o for o in old_names if name.startswith(o + "/")), None)
    if side == "new" and twin:
        base = runs[(twin, "old")]
        ratios = [values[r] / base[r] for r in values if r in base]
        line += f", new/old ({twin}) median of paired ratios {statistics.median(ratios):.3f}"
    print(line)
EOF
