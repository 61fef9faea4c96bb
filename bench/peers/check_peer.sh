#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_peer.sh NAME PLATFORM OUT [EXE]: the bench_peer_<NAME> tests. Builds the peer NAME from
# its source in the default folder (${FASTMM_PEERS_DIR:-~/.cache/fastmm-c/peers}/NAME,
# bench/peers/README.md) into OUT with bench/peers/build.sh and runs it (under Wine for win32 and
# win64), where the workloads check every byte they read back:
#   mimalloc, rpmalloc, snmalloc
#               the 2-thread workloads once with the library in fastmm_bench (EXE); rpmalloc
#               and snmalloc on PLATFORM native too
#   fastmm4avx  every workload of the Pascal program built with FastMM4 first, at 2% of the
#               operations; that build must refuse any other --alloc (natively too)
#   mormot2     the same with mORMot 2's fpcx64mm first (--alloc fpcx64mm), natively
# Exit 77 (the tests' skip code) when that source is not there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=$1
platform=$2
out=$3
wine_run=$here/../../cmake/wine-run.sh
src=${FASTMM_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fastmm-c/peers}/$name
if [ ! -d "$src" ]; then
  case $name in
    mimalloc) how="bash scripts/fetch-peer-mimalloc.sh" ;;
    rpmalloc | snmalloc) how="a source folder of its tag there (bench/peers/README.md)" ;;
    *) how="an unchanged source folder of the peer there, or FASTMM_PEERS_DIR" ;;
  esac
  echo "skipped: no $name source in $src ($how)"
  exit 77
fi
bash "$here/build.sh" "$name" "$src" "$out" "$platform"
case $name in
  mimalloc | rpmalloc | snmalloc)
    exe=$4
    case $name/$platform in
      mimalloc/*) sym=mi_ ;;
      rpmalloc/native) sym=rpw_ ;;
      rpmalloc/*) sym=rp ;;
      snmalloc/*) sym=sn_ ;;
    esac
    for w in mt_prodcons mt_churn fc_mt_alloc_realloc fc_string_threads fc_short_threads; do
      if [ "$platform" = native ]; then
        "$exe" --workload "$w" --alloc malloc --lib "$(cd "$out/native" && pwd)/lib$name.so" \
          --sym "$sym" --scale 0.05
      else
        dll=$(cd "$out/$platform" && pwd)/$name.dll
        bash "$wine_run" "$exe" --workload "$w" --alloc malloc \
          --lib "Z:${dll//\//\\}" --sym "$sym" --scale 0.05
      fi || { echo "bench_peer_$name: $w failed with $name on $platform" >&2; exit 1; }
    done
    ;;
  fastmm4avx | mormot2)
    alloc=fastmm4avx
    [ "$name" != mormot2 ] || alloc=fpcx64mm
    if [ "$platform" = native ]; then
      exe=$out/native/fastmm_pascal_bench
      run=()
    else
      exe=$out/$platform/fastmm_pascal_bench.exe
      run=(bash "$wine_run")
    fi
    listed=$("${run[@]}" "$exe" --list | grep -c .)
    ran=$("${run[@]}" "$exe" --workload all --alloc "$alloc" --scale 0.02 |
      grep -c "\"alloc\":\"$alloc\"") ||
      { echo "bench_peer_$name: a workload failed with $alloc on $platform" >&2; exit 1; }
    [ "$ran" -eq "$listed" ] ||
      { echo "bench_peer_$name: $ran of $listed workloads ran on $platform" >&2; exit 1; }
    if "${run[@]}" "$exe" --workload pas_memsize --alloc fpcheap >/dev/null 2>&1; then
      echo "bench_peer_$name: the $alloc build ran --alloc fpcheap" >&2
      exit 1
    fi
    ;;
  *)
    echo "check_peer.sh: no check for the peer '$name'" >&2
    exit 1
    ;;
esac
echo "bench_peer_$name: the $name peer ran on $platform"
