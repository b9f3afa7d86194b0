#!/usr/bin/env bash
# Issue 24's ratio measured side by side: the reference decode path (bench/reference, Agave
# `solana-ledger` 4.0.0) and ours (`decode_pass`, unauthenticated) over the same fixture files,
# run alternately so that both see the same machine. Prints each run's JSON line, then the median
# of each side's median passes and of its best passes, and the ratios. Not part of CI: the
# reference takes 20–60 minutes to build (bench/reference/Cargo.toml).
#
#   bench/scripts/reference_side_by_side.sh [rounds (6)] [passes per run (200)] [order (lossy)]
#
# OURS=<path> runs another build of `decode_pass` (an older revision's) instead of this tree's.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-6}
passes=${2:-200}
order=${3:-lossy}
ours=${OURS:-target/release/decode_pass}
[ -n "${OURS:-}" ] || cargo build --release -q -p bench --bin decode_pass
cargo build --release -q --manifest-path bench/reference/Cargo.toml
reference=bench/reference/target/release/reference_pass
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
  local side=$1
  shift
  local line
  line=$("$@" --order "$order" --passes "$passes")
  echo "$side $line" | tee -a "$log"
}
for round in $(seq "$rounds"); do
  # Alternate which side goes first, so neither always runs on a warmer or cooler machine.
  if [ $((round % 2)) -eq 1 ]; then
    run reference "$reference"
    run ours "$ours"
  else
    run ours "$ours"
    run reference "$reference"
  fi
done
python3 - "$log" <<'EOF'
import json, statistics, sys
runs = {"ours": [], "reference": []}
for line in open(sys.argv[1]):
    side, _, text = line.partition(" ")
    runs[side].append(json.loads(text))
medians = {side: statistics.median(r["median_shreds_per_s"] for r in rs) for side, rs in runs.items()}
bests = {side: statistics.median(r["best_shreds_per_s"] for r in rs) for side, rs in runs.items()}
transactions = {side: {r["transactions"] for r in rs} for side, rs in runs.items()}
if transactions["ours"] != transactions["reference"]:
    sys.exit(f"transactions per pass differ: {transactions}")
for side in ("reference", "ours"):
    spread = [r["median_shreds_per_s"] for r in runs[side]]
    print(f"{side}: median of median passes {medians[side]:,.0f} shreds/s (runs {min(spread):,.0f}-{max(spread):,.0f})")
    print(f"{side}: median of best passes {bests[side]:,.0f} shreds/s")
print(f"ratio ours/reference: {medians['ours'] / medians['reference']:.2f} (median passes), "
      f"{bests['ours'] / bests['reference']:.2f} (best passes)")
# Each round ran both sides back to back: the ratio within a round is the least touched by the
# host's drift over the run.
paired = sorted(o["median_shreds_per_s"] / r["median_shreds_per_s"]
                for o, r in zip(runs["ours"], runs["reference"]))
quartile = lambda q: paired[int((len(paired) - 1) * q)]
print(f"ratio within each round (median passes): median {statistics.median(paired):.2f}, "
      f"quartiles {quartile(0.25):.2f}-{quartile(0.75):.2f}, {len(paired)} rounds")
EOF
