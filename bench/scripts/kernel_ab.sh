#!/usr/bin/env bash
# The Reed-Solomon kernel (`gf256::dot_products`) of a git revision against the working tree's, in
# one process (bench/scripts/kernel_ab.rs says why and how). Not part of CI.
#
#   bench/scripts/kernel_ab.sh <old revision> [sets,outputs ...]   (default: 1,10 200,10 200,16 200,5)
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: kernel_ab.sh <old revision> [sets,outputs ...]}
shift
cases=("${@:-1,10}")
[ $# -gt 0 ] || cases=(1,10 200,10 200,16 200,5)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A standalone copy of the crate under another name (no workspace keys, no tests).
copy() {
  local name=$1 source=$2
  mkdir -p "$work/$name"
  cp -r "$source/src" "$work/$name/"
  printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\n' "$name" >"$work/$name/Cargo.toml"
}
mkdir -p "$work/old-tree"
git archive "$old" gf256 | tar -x -C "$work/old-tree"
copy gf_old "$work/old-tree/gf256"
copy gf_new gf256
mkdir -p "$work/harness/src"
cp bench/scripts/kernel_ab.rs "$work/harness/src/main.rs"
cat >"$work/harness/Cargo.toml" <<TOML
[package]
name = "kernel_ab"
version = "0.0.0"
edition = "2024"

[dependencies]
gf_old = { path = "../gf_old" }
gf_new = { path = "../gf_new" }

[profile.release]
codegen-units = 1
lto = "fat"
TOML
cargo build -q --release --manifest-path "$work/harness/Cargo.toml" --target-dir "$work/target"
for case in "${cases[@]}"; do
  "$work/target/release/kernel_ab" "${case%,*}" "${case#*,}"
done
