#!/usr/bin/env bash
# Runs every decoder fuzz target (fuzz/fuzz_targets/) for a bounded time, one after the other.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]      (default 30 s, all targets; CI: 20)
#
# Stable toolchain: `--sanitizer none` (ASan needs nightly; the decoder is `forbid(unsafe_code)`,
# so the checks that matter are Rust's own bounds checks, overflow checks and the targets'
# assertions, all active because cargo-fuzz builds with debug assertions). Each target starts from
# the committed seeds in fuzz/seeds/<target>/ plus whatever fuzz/corpus/<target>/ (gitignored)
# gathered in earlier runs; new inputs go to the latter. A crash, failed assertion, timeout or
# out-of-memory leaves its input in fuzz/artifacts/<target>/ and makes this script exit 1 after
# the remaining targets ran. Logs: fuzz/artifacts/logs/<target>.log.
set -euo pipefail

seconds="${1:-30}"
shift || true
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [seconds-per-target] [target...]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Longest input per target: past the 1,232-byte packet limit for single datagrams, a few entry
# batches' worth for the batch parsers, and a full FEC set (64 shreds, ~78 KB) for the decoder.
declare -A max_len=(
    [shred_parse]=1500
    [transaction]=2048
    [entry_batch]=16384
    [framing]=8192
    [shred_decoder]=81920
    [dex_instruction]=1232
    [delta_route]=1232
    [lookup_table_account]=8248
    [block_markers]=16384
    [incremental_deshred]=16384
)
# Extra build options. shred_decoder spends most of each run in `ShredDecoder::new` (building the
# Reed-Solomon coder inverts a 32x32 matrix); comparison tracing there made it ~6x slower (about
# 200 against 1,200 exec/s) for no coverage gain, so it is built without it, in its own target
# directory so the two builds do not invalidate each other.
declare -A build_options=(
    [shred_decoder]="--no-trace-compares --target-dir fuzz/target/no-trace-compares"
    [incremental_deshred]="--no-trace-compares --target-dir fuzz/target/no-trace-compares"
)
all_targets=(shred_parse transaction entry_batch framing shred_decoder dex_instruction delta_route
    lookup_table_account block_markers incremental_deshred)
if (($# > 0)); then targets=("$@"); else targets=("${all_targets[@]}"); fi

toolchain=()
if command -v rustup >/dev/null 2>&1; then toolchain=(+stable); fi

if ! cargo "${toolchain[@]}" fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz (about 3 minutes)"
    cargo "${toolchain[@]}" install --locked cargo-fuzz
fi

for target in "${targets[@]}"; do
    if [[ -z "${max_len[$target]:-}" ]]; then
        echo "fuzz.sh: unknown target $target (known: ${all_targets[*]})" >&2
        exit 2
    fi
done

mkdir -p fuzz/artifacts/logs
failed=()
for target in "${targets[@]}"; do
    # Word splitting is intended: the options are plain words without spaces.
    # shellcheck disable=SC2206
    options=(--sanitizer none ${build_options[$target]:-})
    build_log="fuzz/artifacts/logs/$target.build.log"
    if ! cargo "${toolchain[@]}" fuzz build "${options[@]}" "$target" >"$build_log" 2>&1; then
        cat "$build_log" >&2
        echo "fuzz.sh: $target does not build" >&2
        exit 1
    fi
    mkdir -p "fuzz/corpus/$target"
    log="fuzz/artifacts/logs/$target.log"
    status=0
    cargo "${toolchain[@]}" fuzz run "${options[@]}" "$target" \
        "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len="${max_len[$target]}" -print_final_stats=1 >"$log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    coverage="$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)"
    if ((status == 0)); then
        printf 'fuzz.sh: %-14s ok     %10s runs  %8s exec/s  %s\n' \
            "$target" "${runs:-?}" "${speed:-?}" "${coverage:-}"
    else
        printf 'fuzz.sh: %-14s FAILED (exit %d), log %s\n' "$target" "$status" "$log"
        grep -E 'panicked at|^==[0-9]+== ERROR|SUMMARY|Test unit written to' "$log" | head -n 20 || true
        failed+=("$target")
    fi
done

if ((${#failed[@]} > 0)); then
    echo "fuzz.sh: failing targets: ${failed[*]}; inputs in fuzz/artifacts/<target>/" >&2
    exit 1
fi
echo "fuzz.sh: all ${#targets[@]} target(s) ran ${seconds} s without a failure"
