# Sourced by decoder_ab.sh and kernel_ab.sh: builds a throwaway workspace in which `decoder` and
# `gf256` of a git revision (renamed `decoder_old`, `gf256_old`) sit beside the working tree's, so
# that one harness binary links both, and builds that harness.
#
#   ab_build <old revision> <harness source> <harness dependency lines>
#
# Leaves the binary's path in `ab_binary`; the directory goes when the calling script exits.

# A crate's manifest and sources, without its dev-dependencies (tests are not built here).
ab_copy() {
  local from=$1 to=$2
  mkdir -p "$to"
  cp -r "$from/src" "$to/"
  sed '/^\[dev-dependencies\]/,/^\[lints\]/{/^\[lints\]/!d}' "$from/Cargo.toml" >"$to/Cargo.toml"
}

ab_build() {
  local old=$1 harness=$2 dependencies=$3
  ab_work=$(mktemp -d)
  trap 'rm -rf "$ab_work"' EXIT
  mkdir -p "$ab_work/tree"
  git archive "$old" decoder gf256 | tar -x -C "$ab_work/tree"
  ab_copy "$ab_work/tree/decoder" "$ab_work/old/decoder"
  ab_copy "$ab_work/tree/gf256" "$ab_work/old/gf256"
  ab_copy decoder "$ab_work/new/decoder"
  ab_copy gf256 "$ab_work/new/gf256"
  # The old pair under other names, so that both link into one binary.
  sed -i 's/^name = "decoder"/name = "decoder_old"/; s|^gf256.workspace = true|gf256 = { path = "../gf256", package = "gf256_old" }|' \
    "$ab_work/old/decoder/Cargo.toml"
  sed -i 's/^name = "gf256"/name = "gf256_old"/' "$ab_work/old/gf256/Cargo.toml"
  mkdir -p "$ab_work/harness/src"
  cp "$harness" "$ab_work/harness/src/main.rs"
  printf '[package]\nname = "harness"\nversion = "0.0.0"\nedition = "2024"\n\n[dependencies]\n%s\n' \
    "$dependencies" >"$ab_work/harness/Cargo.toml"
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
  } >"$ab_work/Cargo.toml"
  cp Cargo.lock "$ab_work/"
  cargo build -q --release --manifest-path "$ab_work/Cargo.toml" -p harness --target-dir "$ab_work/target"
  ab_binary="$ab_work/target/release/harness"
}
