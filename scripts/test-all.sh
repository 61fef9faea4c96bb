#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every test of fastmm-c: installs what is missing (scripts/install-deps.sh), then runs
# each test preset's workflow (CMakePresets.json: configure, build, test)
# for native, native-asan, native-tsan, win32, win64, win32-purec, win64-purec. The Windows
# tests run under Wine. ctest writes each preset's results to build/junit/<preset>.xml; the
# summary counts come from those files. Exits non-zero if anything failed. The last lines are
# each preset's result and the total: "N passed, N failed"; before them, when a test failed, the
# end of its output.
#
#   bash scripts/test-all.sh                   # every preset
#   FASTMM_PRESETS="native win64" bash scripts/test-all.sh
#
# Each workflow's whole output: build/logs/<preset>.log
#
# On a machine whose kernel runs no 32-bit programs (its 32-bit emulation off: Wine's 32-bit
# loader fails with "Exec format error"), install-deps.sh sets up QEMU's i386 emulator for them
# (scripts/setup-win32-emulation.sh) and the Win32 tests run under it; their lines say so. Where
# that cannot be done either, the Win32 presets are configured and built, and their tests are
# counted as skipped, with the reason, in their line and at the end. FASTMM_REQUIRE_WIN32=1
# makes that a failure instead.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a presets <<<"${FASTMM_PRESETS:-native native-asan native-tsan win32 win64 win32-purec win64-purec}"

if ! bash scripts/install-deps.sh; then
  echo "test-all: scripts/install-deps.sh failed" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

# A Windows test that ends with exit code 1 and nothing on standard error, as Wine now and then
# ends a process on a loaded machine, runs once more (cmake/wine-run.sh says when).
export FASTMM_WINE_RERUN_SILENT_EXIT=1

logs=build/logs
junit=build/junit
mkdir -p "$logs" "$junit"
total_passed=0
total_failed=0
total_skipped=0
declare -A result
no_win32=""

# junit_counts FILE: prints "passed failed skipped failed-names" from a ctest JUnit file. A test
# ctest could not start (no executable) is "notrun" there, like a skipped one: it counts as
# failed, as in ctest's own summary; only SKIP_RETURN_CODE/SKIP_REGULAR_EXPRESSION and disabled
# tests count as skipped.
junit_counts() {
  python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
passed, failed, skipped, names = 0, 0, 0, []
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    status = case.get("status")
    skip = case.find("skipped")
    if status == "run":
        passed += 1
    elif status == "disabled" or (status == "notrun" and skip is not None
                                  and skip.get("message", "").startswith("SKIP_")):
        skipped += 1
    else:
        failed += 1
        names.append(case.get("name"))
print(passed, failed, skipped, ",".join(names) or "-")
EOF
}

for p in "${presets[@]}"; do
  echo
  echo "===== $p ====="
  if [[ $p == win* ]] && [ -z "${wine_ready:-}" ]; then
    # The Wine prefix and the Free Pascal cross compilers (both cached; the first test or the
    # build would make them too), made once here so their time is not inside a test's.
    wine_ready=1
    t0=$SECONDS
    cmake/wine-run.sh --prepare || echo "test-all: the Wine prefix could not be made" >&2
    if bash scripts/build-fpc.sh >"$logs/fpc.log" 2>&1; then
      echo "test-all: Wine prefix and Free Pascal toolchain ready ($((SECONDS - t0)) s)"
    else
      echo "test-all: the Free Pascal toolchain could not be built; the end of $logs/fpc.log:" >&2
      tail -n 40 "$logs/fpc.log" | sed 's/^/    /' >&2
    fi
  fi
  log="$logs/$p.log"
  xml="$junit/$p.xml"
  rm -f "$xml"
  t0=$SECONDS
  if [[ $p == win32* ]] && [ -z "${win32_checked:-}" ]; then
    win32_checked=1
    # Exit 1: the kernel runs no 32-bit programs. Anything else (Wine or its 32-bit loader
    # missing) is an install problem, which the Win32 runs then report as failures.
    probe=0
    why=$(cmake/wine-run.sh --can-run-win32 2>&1) || probe=$?
    if [ "$probe" = 1 ]; then
      no_win32=${why#wine-run: }
    else
      win32_emulator=$(cmake/wine-run.sh --win32-emulator 2>/dev/null) || win32_emulator=""
    fi
  fi
  if [[ $p == win32* ]] && [ -n "$no_win32" ]; then
    # Built, so that the Win32 code still compiles and links without a warning; not run.
    if { cmake --preset "$p" && cmake --build --preset "$p"; } >"$log" 2>&1; then
      count=$(ctest --preset "$p" -N 2>/dev/null | sed -n 's/^Total Tests: *//p')
      count=${count:-0}
      echo "test-all: $p: built; its $count tests not run: $no_win32"
      if [ "${FASTMM_REQUIRE_WIN32:-0}" = 1 ]; then
        result[$p]="0 passed, 1 failed: built, tests not run (FASTMM_REQUIRE_WIN32=1) ($((SECONDS - t0)) s)"
        total_failed=$((total_failed + 1))
      else
        result[$p]="built; 0 passed, 0 failed, $count skipped: this machine cannot run Win32 programs ($((SECONDS - t0)) s)"
        total_skipped=$((total_skipped + count))
      fi
    else
      echo "test-all: $p: configure or build failed; the end of $log:"
      tail -n 40 "$log" | sed 's/^/    /'
      result[$p]="0 passed, 1 failed: configure or build failed ($((SECONDS - t0)) s)"
      total_failed=$((total_failed + 1))
    fi
    continue
  fi
  # The whole output goes to the log; the terminal gets the test lines and any error, not
  # configure's and Ninja's progress.
  cmake --workflow --preset "$p" 2>&1 | tee "$log" |
    grep --line-buffered -vE '^(-- |\[[0-9]+/[0-9]+\] |Executing workflow step|Preset CMake variables:|  [A-Z_]+(:[A-Z]+)?="| +Start +[0-9]+: |$)'
  rc=${PIPESTATUS[0]}
  secs=$((SECONDS - t0))
  if [ ! -f "$xml" ]; then
    # No test ran: configure or build failed.
    echo "test-all: $p: the workflow stopped before its tests (exit $rc); the end of $log:"
    tail -n 40 "$log" | sed 's/^/    /'
    result[$p]="0 passed, 1 failed: configure or build failed ($secs s)"
    total_failed=$((total_failed + 1))
    continue
  fi
  read -r passed failed skipped names < <(junit_counts "$xml")
  if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
    failed=1 # ctest failed without a failed test case (e.g. no tests found)
    names="(ctest exited with $rc)"
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))
  result[$p]="$passed passed, $failed failed"
  [ "$skipped" = 0 ] || result[$p]+=", $skipped skipped"
  [ "$failed" = 0 ] || result[$p]+=": $names"
  result[$p]+=" ($secs s)"
  if [[ $p == win32* ]] && [ -n "${win32_emulator:-}" ]; then
    result[$p]+=", under emulation"
  fi
done

# A failed test's own output, its last lines, so that a failure seen only in the last lines of
# a run (a CI log's tail) can be told apart: a failed check names itself, a crash or an exit with
# nothing written shows as such. The whole output is in the preset's log.
failed_output() {
  python3 - "$1" "$2" "$3" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
preset = sys.argv[2]
try:
    log = open(sys.argv[3], errors="replace").read()
except OSError:
    log = ""
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    status = case.get("status")
    skip = case.find("skipped")
    if status == "run" or status == "disabled" or (
            status == "notrun" and skip is not None
            and skip.get("message", "").startswith("SKIP_")):
        continue
    out = case.findtext("system-out") or ""
    lines = out.rstrip("\n").split("\n") if out.strip() else []
    # ctest's own word on it (Failed, ***Exception: SegFault, ***Timeout), from the preset's log.
    said = re.findall(r"Test +#\d+: " + re.escape(case.get("name")) + r" \.*\s*(.*?)\s+[0-9.]+ sec", log)
    print(f"--- {preset} {case.get('name')}: {said[-1] if said else status}, "
          f"{float(case.get('time') or 0):.2f} s, {len(out.encode())} bytes of output"
          + (", the last 20 lines:" if lines else ""))
    for line in lines[-20:]:
        print("    " + line[:300])
EOF
}
if [ "$total_failed" != 0 ]; then
  echo
  echo "===== the failed tests' output (from $junit/*.xml) ====="
  for p in "${presets[@]}"; do
    [ -f "$junit/$p.xml" ] && failed_output "$junit/$p.xml" "$p" "$logs/$p.log"
  done
fi

echo
echo "===== summary (from $junit/*.xml) ====="
for p in "${presets[@]}"; do
  printf '%-12s %s\n' "$p" "${result[$p]}"
done
if [ -n "$no_win32" ]; then
  echo
  echo "test-all: the Win32 tests did not run: $no_win32."
  echo "test-all: they were built; run them on a machine that can run 32-bit programs."
fi
if [ -n "${win32_emulator:-}" ]; then
  echo
  echo "test-all: this kernel runs no 32-bit programs: the Win32 tests ran under $win32_emulator"
  echo "test-all: (scripts/setup-win32-emulation.sh), which runs them as a 32-bit CPU would."
fi
echo
if [ "$total_skipped" = 0 ]; then
  echo "$total_passed passed, $total_failed failed"
else
  echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
fi
[ "$total_failed" = 0 ]
