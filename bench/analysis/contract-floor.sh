#!/bin/sh
# SPDX-License-Identifier: MIT
# The validation contract's floor: what the one step every validating design must make costs.
#
# Before a manager may read the header word of a pointer a program hands it, it must know the
# word's address is memory it owns, or a foreign pointer faults instead of being refused. That is
# one page map lookup here (snmalloc's pagemap, mimalloc's segment map). This script builds three
# DLLs per platform from this tree, all with the C fast paths (FASTMM_PURE_C on Windows, so the
# three differ in their C alone):
#   checked    the shipped contract;
#   floor      the page map lookup, then the header word trusted (FASTMM_CONTRACT_FLOOR);
#   unchecked  the header word trusted, no lookup (FASTMM_UNCHECKED, the yardstick);
# and runs bench/run on them with the checked build as the candidate, so its report prices the
# contract against the unchecked build as every run does, and the floor's row says how much of
# that price the lookup alone is. Arguments go on to bench/run (default: 10 pairs, 1 warmup, the
# single-thread workloads, every platform). The main presets must be built (bench/run's programs).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/contract-floor

build() { # platform variant
  dir=$out/$1-$2
  set -- "$1" "$2" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTMM_WERROR=ON
  case $1 in
  win32) set -- "$@" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-mingw-i686.cmake" -DFASTMM_PURE_C=ON ;;
  win64) set -- "$@" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-mingw-x86_64.cmake" -DFASTMM_PURE_C=ON ;;
  esac
  case $2 in
  floor) set -- "$@" -DCMAKE_C_FLAGS=-DFASTMM_CONTRACT_FLOOR=1 ;;
  unchecked) set -- "$@" -DFASTMM_UNCHECKED=ON ;;
  esac
  shift 2
  cmake -S "$root" -B "$dir" "$@" >/dev/null
  cmake --build "$dir" --target fastmmc >/dev/null
}

for platform in native win32 win64; do
  for variant in checked floor unchecked; do
    echo "contract-floor: building $platform $variant"
    build "$platform" "$variant"
  done
done

targets=$out/targets.conf
: >"$targets"
for platform in native win32 win64; do
  case $platform in
  native) lib=libfastmmc.so ;;
  win32) lib=fastmmc32.dll ;;
  win64) lib=fastmmc64.dll ;;
  esac
  kinds="$platform"
  [ "$platform" != native ] && kinds="$platform pascal-$platform"
  for kind in $kinds; do
    case $kind in
    pascal-*) how=pascal sym=fastmmc ;;
    *) how=record sym=fastmm_get_memory_manager ;;
    esac
    printf '%s candidate fastmm-c %s %s %s all\n' "$kind" "$how" "$out/$platform-checked/bin/$lib" "$sym" >>"$targets"
    printf '%s baseline contract-floor %s %s %s all\n' "$kind" "$how" "$out/$platform-floor/bin/$lib" "$sym" >>"$targets"
    printf '%s baseline fastmm-c-unchecked %s %s %s all\n' "$kind" "$how" "$out/$platform-unchecked/bin/$lib" "$sym" >>"$targets"
  done
done

single='realloc_*,large_alloc_free,small_churn_*,object_churn,string_append,array_setlength,mixed,medium_churn'
single=$single',fc_realloc_*,fc_downsize,fc_small_upsize,fc_addr_creep,fc_fragmentation,fc_size_spread,fc_access_speed'
single=$single',pas_string_grow,pas_realloc_*,pas_memsize,pas_getmem_freemem,pas_mixed'
exec "$root/bench/run" --targets-file "$targets" --pairs 10 --warmups 1 --no-callgrind \
  --workloads "$single" --out "$out/results" "$@"
