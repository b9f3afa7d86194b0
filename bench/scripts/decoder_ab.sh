#!/usr/bin/env bash
# The decode path (`decoder` + `gf256`) of a git revision against the working tree's, in one
# process, pass after pass alternately (bench/scripts/decoder_ab.rs says why and how). Not part
# of CI; builds a throwaway workspace in a temporary directory (fat LTO, 3–5 minutes here).
#
#   bench/scripts/decoder_ab.sh <old revision> [order (lossy)] [mode (unauthenticated)] [passes (400)]
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: decoder_ab.sh <old revision> [lossy|full] [unauthenticated|unchecked] [passes]}
order=${2:-lossy}
mode=${3:-unauthenticated}
passes=${4:-400}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A crate's manifest and sources, without its dev-dependencies (tests are not built here).
copy() {
  local from=$1 to=$2
  mkdir -p "$to"
  cp -r "$from/src" "$to/"
  sed '/^\[dev-dependencies\]/,/^\[lints\]/{/^\[lints\]/!d}' "$from/Cargo.toml" >"$to/Cargo.toml"
}
mkdir -p "$work/tree"
git archive "$old" decoder gf256 | tar -x -C "$work/tree"
copy "$work/tree/decoder" "$work/old/decoder"
copy "$work/tree/gf256" "$work/old/gf256"
copy decoder "$work/new/decoder"
copy gf256 "$work/new/gf256"
# The old pair under other names, so that both link into one binary.
sed -i 's/^name = "decoder"/name = "decoder_old"/; s|^gf256.workspace = true|gf256 = { path = "../gf256", package = "gf256_old" }|' \
  "$work/old/decoder/Cargo.toml"
sed -i 's/^name = "gf256"/name = "gf256_old"/' "$work/old/gf256/Cargo.toml"
mkdir -p "$work/harness/src"
cp bench/scripts/decoder_ab.rs "$work/harness/src/main.rs"
cat >"$work/harness/Cargo.toml" <<TOML
[package]
name = "decoder_ab"
version = "0.0.0"
edition = "2024"

[dependencies]
decoder = { path = "../new/decoder" }
decoder_old = { path = "../old/decoder" }
TOML
# The workspace: the repository's package fields, external dependencies, lints and profiles.
{
  echo '[workspace]'
  echo 'resolver = "3"'
  echo 'members = ["harness", "old/decoder", "old/gf256", "new/decoder", "new/gf256"]'
  echo
  sed -n '/^\[workspace.package\]/,/^$/p' Cargo.toml
  echo '[workspace.dependencies]'
  echo 'gf256 = { path = "new/gf256" }'
  sed -n '/^\[workspace.dependencies\]/,/^\[/p' Cargo.toml | grep -v '^\[' | grep -v 'path = '
  sed -n '/^\[workspace.lints/,$p' Cargo.toml
} >"$work/Cargo.toml"
cp Cargo.lock "$work/"
cargo build -q --release --manifest-path "$work/Cargo.toml" -p decoder_ab --target-dir "$work/target"
"$work/target/release/decoder_ab" decoder/tests/fixtures/shreds "$order" "$mode" "$passes"
