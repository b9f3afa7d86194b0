#!/usr/bin/env bash
# The project's test command (README): the whole workspace's tests, then every fuzz target for a
# bounded time. FUZZ_SECONDS sets the time per target (default 20; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --all-targets
fuzz_seconds="${FUZZ_SECONDS:-20}"
if [ "$fuzz_seconds" -gt 0 ] && [ -x scripts/fuzz.sh ]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
