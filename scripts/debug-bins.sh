#!/usr/bin/env bash
# Sourced by the client scripts: `debug_bins package:binary ...` makes sure those debug binaries
# in target/debug are current.
#
# Under scripts/test.sh (which exports DEBUG_BINS_FROM_TESTS=1 after its workspace test step) the
# test build has already built every workspace binary there, with the feature set of the whole
# workspace and its dev-dependencies; `cargo test --no-run` of the same targets is then a one-second
# fingerprint check that keeps them current. A `cargo build -p` of one package would resolve
# features differently (dev-dependencies widen tonic, futures, regex, solana-pubkey, ...) and
# rebuild much of the dependency graph: minutes of CI per script (README, Building and testing).
# Run on their own, the scripts build just the binaries they name.
debug_bins() {
    if [ "${DEBUG_BINS_FROM_TESTS:-0}" = 1 ]; then
        cargo test --workspace --all-targets --no-run --quiet
        return
    fi
    local spec
    for spec in "$@"; do
        cargo build --quiet -p "${spec%%:*}" --bin "${spec#*:}"
    done
}
