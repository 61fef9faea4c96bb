#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_peer.sh EXE PLATFORM OUT: the bench_peer_mimalloc test. Builds the mimalloc peer from
# the source scripts/fetch-peer-mimalloc.sh fetched (bench/peers/README.md) into OUT and runs
# the 2-thread workloads once with it in fastmm_bench under Wine, where they check every byte
# they read back. Exit 77 (the test's skip code) when that source is not there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exe=$1
platform=$2
out=$3
src=${FASTMM_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/peers}/mimalloc
if [ ! -d "$src" ]; then
  echo "skipped: no mimalloc source in $src (bash scripts/fetch-peer-mimalloc.sh)"
  exit 77
fi
bash "$here/build.sh" mimalloc "$src" "$out" "$platform"
dll=$(cd "$out/$platform" && pwd)/mimalloc.dll
for w in mt_prodcons mt_churn fc_mt_alloc_realloc fc_string_threads fc_short_threads; do
  bash "$here/../../cmake/wine-run.sh" "$exe" --workload "$w" --alloc malloc \
    --lib "Z:${dll//\//\\}" --sym mi_ --scale 0.05 ||
    { echo "bench_peer_mimalloc: $w failed with mimalloc on $platform" >&2; exit 1; }
done
