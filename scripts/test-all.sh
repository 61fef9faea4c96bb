#!/usr/bin/env bash
# Runs every test of fastmm-c: installs what is missing (scripts/install-deps.sh), then for
# each preset (native, native-asan, native-tsan, win32, win64, win32-purec, win64-purec)
# configures, builds and runs ctest. The Windows tests run under Wine. Exits non-zero if
# anything failed. The last lines are each preset's ctest summary and a total:
# "N passed, N failed".
#
#   bash scripts/test-all.sh                   # every preset
#   FASTMM_PRESETS="native win64" bash scripts/test-all.sh
#
# Logs of each step: build/logs/<preset>-{configure,build,test}.log
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a presets <<<"${FASTMM_PRESETS:-native native-asan native-tsan win32 win64 win32-purec win64-purec}"

if ! bash scripts/install-deps.sh; then
  echo "test-all: scripts/install-deps.sh failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

logs=build/logs
mkdir -p "$logs"
total_passed=0
total_failed=0
declare -A result closing

# step PRESET NAME COMMAND...: runs a step, its output to the log; on failure shows the end.
step() {
  local preset=$1 name=$2
  shift 2
  local log="$logs/$preset-$name.log"
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    echo "test-all: $preset: $name ok ($((SECONDS - t0)) s)"
    return 0
  fi
  echo "test-all: $preset: $name FAILED ($((SECONDS - t0)) s); the end of $log:"
  tail -n 60 "$log" | sed 's/^/    /'
  return 1
}

for p in "${presets[@]}"; do
  echo
  echo "===== $p ====="
  if [[ $p == win* ]] && [ -z "${wine_ready:-}" ]; then
    # The Wine prefix, made once here rather than inside the first test's time.
    wine_ready=1
    cmake/wine-run.sh --prepare || echo "test-all: the Wine prefix could not be made" >&2
    # The Free Pascal cross compilers for the Pascal tests (cached; the build would make them
    # too), made here so their time and log are a step of their own.
    step "$p" fpc bash scripts/build-fpc.sh || echo "test-all: the Free Pascal toolchain could not be built" >&2
  fi
  if ! step "$p" configure cmake --preset "$p"; then
    result[$p]="configure failed"
    total_failed=$((total_failed + 1))
    continue
  fi
  if ! step "$p" build cmake --build --preset "$p"; then
    result[$p]="build failed"
    total_failed=$((total_failed + 1))
    continue
  fi
  log="$logs/$p-test.log"
  t0=$SECONDS
  ctest --preset "$p" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$summary" ]; then
    failed=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$summary")
    total=$(sed -E 's/.* tests failed out of ([0-9]+).*/\1/' <<<"$summary")
    passed=$((total - failed))
    if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
  else
    passed=0
    failed=1
    summary="(no ctest summary; ctest exited with $rc)"
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  closing[$p]="$summary"$'\n'"$(grep -E '^Total Test time' "$log" | tail -n 1)"
  result[$p]="$passed passed, $failed failed ($((SECONDS - t0)) s)"
done

echo
echo "===== summary ====="
for p in "${presets[@]}"; do
  printf '%-12s %s\n' "$p" "${result[$p]}"
done
for p in "${presets[@]}"; do
  if [ -n "${closing[$p]:-}" ]; then
    echo
    echo "ctest --preset $p:"
    echo "${closing[$p]}"
  fi
done
echo
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" = 0 ]
