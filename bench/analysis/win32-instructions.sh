#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# win32-instructions.sh: the i386 instructions a Win32 program of the benchmark runs per
# operation, counted by QEMU's plugin interface. For machines that cannot time Win32 code (a
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
#   FASTMM_QEMU_I386    a qemu-i386 built with --enable-plugins (Debian's is not; the
#                       experiment file gives the configure line)
#   FASTMM_QEMU_INSN    its tests/tcg/plugins/libinsn.so
#   FASTMM_COUNT_SCALES two scales, "0.1 0.2" unless set: the count per operation is the
#                       difference of the two runs' counts over the difference of their
#                       operations, which leaves out Wine's start and exit
#
# Each run is cmake/wine-run.sh with FASTMM_WINE_WRAPPER set to `qemu-i386 -plugin libinsn.so`:
# Wine's 32-bit loader runs under that emulator, told not to re-execute itself (the plugin would
# not follow). Prints one line per workload and column: workload, label, instructions per
# operation.
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
"$qemu" -h 2>/dev/null | grep -q -- '-plugin' || die "$qemu has no plugin interface"
read -r scale_a scale_b <<<"${FASTMM_COUNT_SCALES:-0.1 0.2}"
workloads=$1
shift

[[ "$qemu$insn" != *" "* ]] || die "the emulator's and the plugin's paths must have no spaces"
bash "$repo/cmake/wine-run.sh" --prepare

# One run: prints "OPS INSTRUCTIONS".
count() { # DIR PROGRAM ARGS WORKLOAD SCALE
  local logs out ops insns args
  read -r -a args <<<"$3"
  logs=$(mktemp -d)
  out=$(cd "$1" && QEMU_LOG=plugin QEMU_LOG_FILENAME="$logs/q.%d" \
    FASTMM_WINE_WRAPPER="$qemu -plugin $insn,inline=on" bash "$repo/cmake/wine-run.sh" "$2" \
    --workload "$4" "${args[@]}" --scale "$5" 2>/dev/null | grep '^{' | tail -n 1) || true
  ops=$(sed -nE 's/.*"ops":([0-9]+).*/\1/p' <<<"$out")
  # The largest count: where wine-run.sh ran the program a second time (its first start could not
  # reach the Wine server), the first start's log is there too, and far shorter.
  insns=$(cat "$logs"/q.* 2>/dev/null | sed -nE 's/^total insns: ([0-9]+)$/\1/p' | sort -n |
    tail -n 1)
  rm -rf "$logs"
  [ -n "$ops" ] && [ -n "$insns" ] || return 1
  echo "$ops $insns"
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
      read -r ops_a insns_a <<<"$a"
      read -r ops_b insns_b <<<"$b"
      if [ "$ops_b" -gt "$ops_a" ]; then
        awk -v w="$w" -v l="$label" -v d="$((insns_b - insns_a))" -v n="$((ops_b - ops_a))" \
          'BEGIN { printf "%s\t%s\t%.2f\n", w, l, d / n }'
        continue
      fi
    fi
    printf '%s\t%s\tfailed\n' "$w" "$label"
  done
done
