#!/usr/bin/env bash
# The Reed-Solomon kernel (`gf256::dot_products`) of a git revision against the working tree's, in
# one process (bench/scripts/kernel_ab.rs says why and how). Not part of CI; builds a throwaway
# workspace (ab_workspace.sh) in a temporary directory.
#
#   bench/scripts/kernel_ab.sh <old revision> [sets,outputs ...]   (default: 1,10 200,10 200,16 200,5)
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: kernel_ab.sh <old revision> [sets,outputs ...]}
shift
cases=("$@")
[ $# -gt 0 ] || cases=(1,10 200,10 200,16 200,5)
source bench/scripts/ab_workspace.sh
ab_build "$old" bench/scripts/kernel_ab.rs \
  $'gf_old = { path = "../old/gf256", package = "gf256_old" }\ngf_new = { path = "../new/gf256", package = "gf256" }'
for case in "${cases[@]}"; do
  "$ab_binary" "${case%,*}" "${case#*,}"
done
