#!/usr/bin/env bash
# The decode path (`decoder` + `gf256`) of a git revision against the working tree's, in one
# process, pass after pass alternately (bench/scripts/decoder_ab.rs says why and how). Not part
# of CI; builds a throwaway workspace (ab_workspace.sh) in a temporary directory.
#
#   bench/scripts/decoder_ab.sh <old revision> [order (lossy)] [mode (unauthenticated)] [passes (400)]
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: decoder_ab.sh <old revision> [lossy|full] [unauthenticated|unchecked] [passes]}
source bench/scripts/ab_workspace.sh
ab_build "$old" bench/scripts/decoder_ab.rs \
  $'decoder = { path = "../new/decoder" }\ndecoder_old = { path = "../old/decoder" }'
"$ab_binary" decoder/tests/fixtures/shreds "${2:-lossy}" "${3:-unauthenticated}" "${4:-400}"
