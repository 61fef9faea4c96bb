#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shows fastmm-c at work: installs what is missing, builds the Win32 and Win64 DLLs and the
# native library, and runs
#   - the C demo (demo/demo.c) with each: fastmmc32.dll and fastmmc64.dll under Wine, then
#     libfastmmc.so natively (arguments to demo.sh go to it);
#   - the Pascal demo (delphi/demo) for Win64 and Win32: one program built with FastMMC first in
#     its uses clause and on Free Pascal's own heap, run in turns, time and memory side by side.
# It builds only what the demos need; the benchmark is a command of its own (printed at the end).
# Each step's time is printed, and the total after the install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

start=$SECONDS
mkdir -p build/logs

# The Wine prefix (once per machine, about 10-30 s) is made while the native build runs.
prefix_log=build/logs/demo-wine-prefix.log
cmake/wine-run.sh --prepare >"$prefix_log" 2>&1 &
prefix_pid=$!

build() {
  local preset=$1 log=build/logs/demo-$1.log t0=$SECONDS
  shift
  if ! { cmake --preset "$preset" && cmake --build --preset "$preset" --target "$@"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "demo.sh: the $preset build failed (log: $log)" >&2
    exit 1
  fi
  echo "demo.sh: built $* ($preset preset, $((SECONDS - t0)) s; log: $log)"
}

run() {
  local title=$1 t0=$SECONDS
  shift
  echo
  echo "===== $title ====="
  "$@"
  echo "($((SECONDS - t0)) s)"
}

build native fastmm_demo
# The Win64 build makes the Free Pascal cross compilers the first time (scripts/build-fpc.sh,
# cached for later builds).
build win64 fastmm_demo fastmmc_pascal_demo
build win32 fastmm_demo fastmmc_pascal_demo
if ! wait "$prefix_pid"; then
  cat "$prefix_log" >&2
  echo "demo.sh: the Wine prefix could not be made" >&2
  exit 1
fi

# A machine whose kernel runs no 32-bit programs cannot run Win32 ones under Wine: the Win32
# DLL and demos are built, and not run.
no_win32=""
# Exit 1: the kernel runs no 32-bit programs. Anything else (Wine or its 32-bit loader
# missing) is an install problem, which the Win32 runs then report as failures.
probe=0
why=$(cmake/wine-run.sh --can-run-win32 2>&1) || probe=$?
if [ "$probe" = 1 ]; then
  no_win32=${why#wine-run: }
fi
# Under QEMU's i386 emulator (scripts/setup-win32-emulation.sh) the Win32 runs are real runs,
# and their times are the emulator's, not a 32-bit CPU's: their headings say so.
emulated=""
if emulator=$(cmake/wine-run.sh --win32-emulator 2>/dev/null); then
  emulated=" [emulated by ${emulator%% (*}: its times are not a 32-bit CPU's]"
fi
skipped() {
  echo
  echo "===== $1 ====="
  echo "not run: $no_win32 (built: $2)"
}

if [ -z "$no_win32" ]; then
  run "Win32: fastmmc32.dll under Wine$emulated" cmake/wine-run.sh build/win32/bin/fastmm_demo.exe "$@"
else
  skipped "Win32: fastmmc32.dll under Wine" build/win32/bin/fastmm_demo.exe
fi
run "Win64: fastmmc64.dll under Wine" cmake/wine-run.sh build/win64/bin/fastmm_demo.exe "$@"
run "Native Linux: libfastmmc.so" build/native/bin/fastmm_demo "$@"
run "Pascal, Win64: FastMMC (fastmmc64.dll) against Free Pascal's own heap" \
  bash delphi/demo/compare.sh build/win64/pascal
if [ -z "$no_win32" ]; then
  run "Pascal, Win32: FastMMC (fastmmc32.dll) against Free Pascal's own heap$emulated" \
    bash delphi/demo/compare.sh build/win32/pascal
else
  skipped "Pascal, Win32: FastMMC (fastmmc32.dll) against Free Pascal's own heap" build/win32/pascal
fi

cat <<EOF

demo.sh: done in $((SECONDS - start)) s after the install.
Next:
  bash scripts/test-all.sh   # every test of every preset (README: "The two commands")
  bench/run                  # the benchmark, fastmm-c against each platform's allocators; it
                             # measures the builds test-all makes (bench/README.md)
EOF
