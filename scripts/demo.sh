#!/usr/bin/env bash
# Shows fastmm-c at work: installs what is missing, builds the Win32 and Win64 DLLs and the
# native library, and runs the demo program (demo/demo.c) with each: fastmmc32.dll and
# fastmmc64.dll under Wine, then libfastmmc.so natively. Arguments go to the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

if [ ! -f demo/CMakeLists.txt ]; then
  echo "demo.sh: demo/CMakeLists.txt is missing: there is no demo to build yet" >&2
  exit 1
fi

build() {
  local preset=$1 targets=("${@:2}") log=build/logs/demo-$1.log
  [ ${#targets[@]} -gt 0 ] || targets=(fastmm_demo)
  mkdir -p build/logs
  echo "demo.sh: building the $preset preset (log: $log)"
  if ! { cmake --preset "$preset" && cmake --build --preset "$preset" --target "${targets[@]}"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "demo.sh: the $preset build failed" >&2
    exit 1
  fi
}

for preset in win32 win64 native; do
  build "$preset"
done

run() {
  local title=$1
  shift
  echo
  echo "===== $title ====="
  "$@"
}

run "Win32: fastmmc32.dll under Wine" cmake/wine-run.sh build/win32/bin/fastmm_demo.exe "$@"
run "Win64: fastmmc64.dll under Wine" cmake/wine-run.sh build/win64/bin/fastmm_demo.exe "$@"
run "Native Linux: libfastmmc.so" build/native/bin/fastmm_demo "$@"

# The Pascal demo (delphi/demo): one string- and object-heavy program, with FastMMC first in its
# uses clause and on Free Pascal's own heap, run in turns; a table compares time and peak memory.
if [ -f delphi/demo/compare.sh ]; then
  for preset in win64 win32; do
    build "$preset" fastmmc_pascal_demo
  done
  run "Pascal, Win64: FastMMC (fastmmc64.dll) against Free Pascal's own heap" \
    bash delphi/demo/compare.sh build/win64/pascal
  run "Pascal, Win32: FastMMC (fastmmc32.dll) against Free Pascal's own heap" \
    bash delphi/demo/compare.sh build/win32/pascal
fi

# The quick benchmark (bench/README.md): fastmm-c against the other allocators of each platform
# (and against its pure-C ReallocMem where those presets exist), a few minutes; its summary
# table ends the demo and the results folder is the last line. FASTMM_DEMO_BENCH=0 skips it.
if [ "${FASTMM_DEMO_BENCH:-1}" != 0 ] && [ -x bench/run ]; then
  for preset in win32 win64 native; do
    build "$preset" fastmm_bench
  done
  presets=$(cmake --list-presets 2>/dev/null || true)
  for preset in win32-purec win64-purec; do
    if [[ $presets == *"\"$preset\""* ]]; then
      build "$preset" fastmmc
    fi
  done
  echo
  echo "===== Quick benchmark: bench/run ====="
  bench/run
fi
