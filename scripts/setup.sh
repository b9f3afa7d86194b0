#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build, test and fuzz the appliance.
# Idempotent: each step is skipped when its tool is already present.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
apt_packages=(
  ca-certificates
  build-essential  # C compiler and linker: rustc links with cc; zstd, ring and mimalloc build C
  pkg-config
  iproute2   # network namespaces and veth pairs for the receive-path tests
  python3
  python3-venv  # the Python gRPC client test's virtualenv
  openssl       # test certificates for the gRPC TLS test
  chromium         # the operator console's browser test (scripts/console-test.sh), headless
  chromium-driver  # its WebDriver (chromedriver), driven by Selenium
  curl             # the README's archive and insights commands; the client scripts wait for /health with it
)
# promtool (scripts/promtool-check.sh checks /metrics with it) comes in Debian's prometheus package.
if ! command -v promtool >/dev/null 2>&1; then
  apt_packages+=(prometheus)
fi
# Node (>= 18, with npm) runs the @solana/web3.js archive client test; the image usually has it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_packages+=(nodejs npm)
fi
missing=()
for package in "${apt_packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# protoc: the proto crate builds with the vendored protoc of `protoc-bin-vendored` unless PROTOC
# is set, so no system package is needed.

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is required (the machine image provides the Rust toolchain)" >&2
  exit 1
fi

# cargo-fuzz drives the fuzz targets in fuzz/ (stable toolchain, --sanitizer none).
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi
echo "setup: done"
