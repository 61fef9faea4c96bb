#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compares the fast paths of two builds instruction by instruction: GetMem, FreeMem, ReallocMem,
# AllocMem and MemSize, the C exports, the Delphi record's entries (Win32: the NASM register
# entry) and the first slot of the Free Pascal record's,
# disassembled from each build's library with addresses, jump targets and immediates masked, so
# only a change of instructions shows. Then the immediates that differ, for the record.
#
#   scripts/compare-fast-paths.sh BUILD_A BUILD_B      # e.g. a build of main and build/native
#
# Each BUILD is a preset's build folder (native, win64 or win32); both must be of the same preset.
# Exits 0 when the instructions are the same.
set -eu
a=$1
b=$2

if [ -f "$a/bin/libfastmmc.so" ]; then
  lib=bin/libfastmmc.so objdump=objdump
  funcs="fastmm_getmem fastmm_freemem fastmm_reallocmem fastmm_allocmem fastmm_usable_size delphi_get_mem delphi_free_mem delphi_realloc_mem delphi_alloc_mem fastmm_fpc_get_mem_0 fastmm_fpc_free_mem_0 fastmm_fpc_realloc_mem_0 fastmm_fpc_mem_size_0"
elif [ -f "$a/bin/fastmmc64.dll" ]; then
  lib=bin/fastmmc64.dll objdump=x86_64-w64-mingw32-objdump
  funcs="fastmm_getmem fastmm_freemem fastmm_reallocmem fastmm_reallocmem.stays fastmm_reallocmem.not_small fastmm_allocmem fastmm_usable_size delphi_get_mem delphi_free_mem delphi_alloc_mem fastmm_fpc_get_mem_0 fastmm_fpc_free_mem_0 fastmm_fpc_realloc_mem_0 fastmm_fpc_mem_size_0"
elif [ -f "$a/bin/fastmmc32.dll" ]; then
  lib=bin/fastmmc32.dll objdump=i686-w64-mingw32-objdump
  funcs="_fastmm_getmem _fastmm_freemem _fastmm_reallocmem _fastmm_reallocmem.slow _fastmm_allocmem _fastmm_usable_size _delphi_get_mem _delphi_free_mem _fastmm_delphi_realloc_mem _fastmm_delphi_realloc_mem.slow _delphi_alloc_mem _fastmm_fpc_get_mem_0 _fastmm_fpc_free_mem_0 _fastmm_fpc_realloc_mem_0 _fastmm_fpc_mem_size_0"
else
  echo "compare-fast-paths: no library in $a/bin" >&2
  exit 2
fi

# disasm LIB MASK_IMMEDIATES: every function of $funcs, one instruction a line.
disasm() {
  local all
  all=$(mktemp)
  $objdump -d --no-show-raw-insn -M intel "$1" >"$all"
  for f in $funcs; do
    echo "== $f"
    awk -v f="<$f>:" '$0 ~ f"$" {on=1; next} on && /^$/ {exit} on {sub(/^ *[0-9a-f]+:\t/, ""); print}' "$all" |
      sed -E 's/<[^>]*>//g; s/# *[0-9a-f]+/# ADDR/g; s/^((j[a-z]+|call) +)[0-9a-f]+/\1ADDR/; s/[[:space:]]+/ /g; s/ $//' |
      if [ "$2" = 1 ]; then sed -E 's/0x[0-9a-f]+/IMM/g'; else grep -v 'rip\|# ADDR\|ds:\|0x[0-9a-f]\{6,\}'; fi
  done
  rm -f "$all"
}

status=0
if diff <(disasm "$a/$lib" 1) <(disasm "$b/$lib" 1); then
  echo "compare-fast-paths: the same instructions ($lib: $funcs)"
else
  echo "compare-fast-paths: the instructions differ (above)"
  status=1
fi
echo "compare-fast-paths: immediates that differ (addresses left out):"
diff <(disasm "$a/$lib" 0) <(disasm "$b/$lib" 0) || true
exit $status
