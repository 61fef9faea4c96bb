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
  local preset=$1 log=build/logs/demo-$1.log
  mkdir -p build/logs
  echo "demo.sh: building the $preset preset (log: $log)"
  if ! { cmake --preset "$preset" && cmake --build --preset "$preset" --target fastmm_demo; } >"$log" 2>&1; then
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
