#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# win32-instructions.sh: the i386 instructions a Win32 program of the benchmark runs per
# operation, and optionally its memory accesses and simulated L1 cache misses per operation,
# counted by QEMU's plugin interface. For machines that cannot time Win32 code (a
# kernel without 32-bit emulation, where QEMU runs it: scripts/setup-win32-emulation.sh); the
# counts are exact and do not depend on the machine's load, but they are not time
# (docs/experiments/2026-12-06-win32-instruction-counts.md says what they showed and what not).
#
#   bash bench/analysis/win32-instructions.sh WORKLOADS LABEL=DIR:ARGS [LABEL=DIR:ARGS]...
#
#   WORKLOADS       comma-separated workloads of DIR's program (pas_* for
#                   fastmm_pascal_bench.exe, the C workloads for fastmm_bench.exe)
#   LABEL=DIR:ARGS  a column: the program in DIR (fastmm_pascal_bench.exe, else fastmm_bench.exe)
#                   run with ARGS, the words that choose its allocator (`--alloc fastmmc`,
#                   `--alloc fastmm4avx` in FastMM4-AVX's build of the Pascal program; `--alloc
#                   record --lib fastmmc32.dll --sym fastmm_get_memory_manager` for the C one).
#                   The Pascal program loads fastmmc32.dll from DIR: one folder per build.
#
#   bash bench/analysis/win32-instructions.sh pas_memsize,pas_mixed \
#     shipped=build/win32/pascal:"--alloc fastmmc" fm4=OUT/win32:"--alloc fastmm4avx"
#
# Environment:
#   FASTMM_QEMU_I386    a qemu-i386 built with --enable-plugins (Debian's is not:
#                       bench/analysis/build-qemu-plugins.sh builds one and prints these paths)
#   FASTMM_QEMU_INSN    its tests/tcg/plugins/libinsn.so
#   FASTMM_QEMU_MEM     optional: its tests/tcg/plugins/libmem.so. When set, the same runs load it
#                       too and each line gains a fourth column, the memory accesses per
#                       operation: every load and store the guest's instructions make (an
#                       instruction that reads and writes memory counts twice; a repeated
#                       string instruction, each repetition's), by the same difference of two
#                       scales
#   FASTMM_QEMU_CACHE   optional: its contrib/plugins/libcache.so. When set, the same runs load
#                       it too and each line gains the memory accesses (the cache's data
#                       accesses, the same count as libmem.so's, where FASTMM_QEMU_MEM is not set)
#                       and two more columns: L1 data-cache misses and L1 instruction-cache
#                       misses per operation, in the plugin's model (one cache for every thread
#                       in user mode; LRU; no prefetch). Its arguments are
#                       FASTMM_QEMU_CACHE_ARGS, "dcachesize=32768,icachesize=32768" unless set
#                       (32 KiB each, 8 ways of 64-byte lines: the plugin's other defaults)
#   FASTMM_COUNT_SCALES two scales, "0.1 0.2" unless set: the count per operation is the
#                       difference of the two runs' counts over the difference of their
#                       operations, which leaves out Wine's start and exit
#
# Each run is cmake/wine-run.sh with FASTMM_WINE_WRAPPER set to `qemu-i386 -plugin libinsn.so`:
# Wine's 32-bit loader runs under that emulator, told not to re-execute itself (the plugin would
# not follow). Prints one line per workload and column, tab-separated: workload, label,
# instructions per operation; with FASTMM_QEMU_MEM or FASTMM_QEMU_CACHE, memory accesses per
# operation; with FASTMM_QEMU_CACHE, L1 data misses and L1 instruction misses per operation
# ("failed" in the third column when a run gave no count).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() {
  echo "win32-instructions: $*" >&2
  exit 1
}
[ $# -ge 2 ] || die "usage: win32-instructions.sh WORKLOADS LABEL=DIR:ARGS..."
qemu=${FASTMM_QEMU_I386:-}
insn=${FASTMM_QEMU_INSN:-}
[ -x "$qemu" ] || die "FASTMM_QEMU_I386 must name a qemu-i386 built with --enable-plugins"
[ -f "$insn" ] || die "FASTMM_QEMU_INSN must name its tests/tcg/plugins/libinsn.so"
mem=${FASTMM_QEMU_MEM:-}
[ -z "$mem" ] || [ -f "$mem" ] || die "FASTMM_QEMU_MEM must name its tests/tcg/plugins/libmem.so"
cache=${FASTMM_QEMU_CACHE:-}
[ -z "$cache" ] || [ -f "$cache" ] || die "FASTMM_QEMU_CACHE must name its contrib/plugins/libcache.so"
cache_args=${FASTMM_QEMU_CACHE_ARGS:-dcachesize=32768,icachesize=32768}
"$qemu" -h 2>/dev/null | grep -q -- '-plugin' || die "$qemu has no plugin interface"
read -r scale_a scale_b <<<"${FASTMM_COUNT_SCALES:-0.1 0.2}"
workloads=$1
shift

[[ "$qemu$insn$mem$cache$cache_args" != *" "* ]] || die "the emulator's and the plugin's paths must have no spaces"
bash "$repo/cmake/wine-run.sh" --prepare

wrapper="$qemu -plugin $insn,inline=on"
[ -z "$mem" ] || wrapper+=" -plugin $mem,inline=on"
[ -z "$cache" ] || wrapper+=" -plugin $cache${cache_args:+,$cache_args}"
# The counts a run gives: instructions, then accesses, then the two kinds of misses.
n_counts=1
[ -z "$mem$cache" ] || n_counts=2
[ -z "$cache" ] || n_counts=4

# One run: prints "OPS INSTRUCTIONS [ACCESSES [DATA_MISSES INSN_MISSES]]".
count() { # DIR PROGRAM ARGS WORKLOAD SCALE
  local logs out ops counts words
  read -r -a words <<<"$3"
  logs=$(mktemp -d)
  out=$(cd "$1" && QEMU_LOG=plugin QEMU_LOG_FILENAME="$logs/q.%d" \
    FASTMM_WINE_WRAPPER="$wrapper" bash "$repo/cmake/wine-run.sh" "$2" \
    --workload "$4" "${words[@]}" --scale "$5" 2>/dev/null | grep '^{' | tail -n 1) || true
  ops=$(sed -nE 's/.*"ops":([0-9]+).*/\1/p' <<<"$out")
  # One line per log, "INSTRUCTIONS [ACCESSES [DATA_MISSES INSN_MISSES]]", and of them the
  # process with the most instructions: where wine-run.sh ran the program a second time (its
  # first start could not reach the Wine server), the first start's log is there too, and far
  # shorter. The cache plugin's table has a line per simulated core ("0 ACCESSES MISSES RATE
  # ACCESSES MISSES RATE"), and a "sum" line after them when it simulates more than one.
  counts=$(for f in "$logs"/q.*; do
    [ -f "$f" ] || continue
    awk '/^total insns: [0-9]+$/ { i = $3 }
      /^mem accesses: [0-9]+$/ { m = $3 }
      ($1 == "0" || $1 == "sum") && NF == 7 { ca = $2; dm = $3; im = $6 }
      END {
        if (i == "") exit
        if (m == "") m = ca
        print i, m, dm, im
      }' "$f"
  done | sort -n -k 1,1 | tail -n 1)
  rm -rf "$logs"
  [ -n "$ops" ] && [ -n "$counts" ] || return 1
  read -r -a counts <<<"$counts"
  [ "${#counts[@]}" -ge "$n_counts" ] || return 1
  echo "$ops ${counts[*]:0:$n_counts}"
}

for column in "$@"; do
  label=${column%%=*}
  rest=${column#*=}
  dir=${rest%%:*}
  args=${rest#*:}
  [ "$label" != "$column" ] && [ "$dir" != "$rest" ] || die "a column is LABEL=DIR:ARGS: $column"
  if [ -f "$dir/fastmm_pascal_bench.exe" ]; then
    program=fastmm_pascal_bench.exe
  elif [ -f "$dir/fastmm_bench.exe" ]; then
    program=fastmm_bench.exe
  else
    die "$dir has neither fastmm_pascal_bench.exe nor fastmm_bench.exe"
  fi
  for w in ${workloads//,/ }; do
    if a=$(count "$dir" "$program" "$args" "$w" "$scale_a") &&
      b=$(count "$dir" "$program" "$args" "$w" "$scale_b"); then
      if [ "${b%% *}" -gt "${a%% *}" ]; then
        # Every count's difference over the operations' difference.
        awk -v w="$w" -v l="$label" -v a="$a" -v b="$b" 'BEGIN {
          k = split(a, x, " "); split(b, y, " ")
          printf "%s\t%s", w, l
          for (j = 2; j <= k; j++) printf "\t%.2f", (y[j] - x[j]) / (y[1] - x[1])
          printf "\n"
        }'
        continue
      fi
    fi
    printf '%s\t%s\tfailed\n' "$w" "$label"
  done
done
