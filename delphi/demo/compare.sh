#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare.sh <folder> [runs]: the Pascal demo's comparison. Runs demo_fpcheap.exe (Free
# Pascal's own heap) and demo_fastmmc.exe (FastMMC installed: the DLL beside it) in turns,
# <runs> times each (default 3), under Wine, and prints per phase the best time of each and
# their ratio, then the memory, the highest of the runs (each figure is what the program
# reads from GetProcessMemoryInfo; StringsAndObjects.pas says which field):
#   peak working set   PeakWorkingSetSize: the process's peak resident memory, Wine's own
#                      (about 14 MB) included; Wine reads it from Linux's VmHWM, a real peak
#   above the start    that peak less the working set when the program's main block began:
#                      what the workload added at its peak
#   private at exit    PagefileUsage at the end, memory still held when the work is done. Wine
#                      reports resident anonymous memory there, and the same figure as
#                      PeakPagefileUsage, which is therefore not a peak under Wine
#     after release    fastmm-c only: the same once FastMMC_ReleaseFreeMemory gave back what the
#                      DLL keeps for reuse (Free Pascal's heap has no such call)
# Timings on a shared machine drift: the ratio from runs in turns is what to read.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runner=$here/../../cmake/wine-run.sh
dir=${1:?usage: compare.sh <folder with demo_fastmmc.exe and demo_fpcheap.exe> [runs]}
runs=${2:-3}

for exe in demo_fpcheap.exe demo_fastmmc.exe; do
  [ -f "$dir/$exe" ] || { echo "compare.sh: $dir/$exe is missing (build the fastmmc_pascal_demo target)" >&2; exit 1; }
done

results=$(mktemp)
trap 'rm -f "$results"' EXIT
cd "$dir"
for ((i = 1; i <= runs; i++)); do
  for exe in demo_fpcheap.exe demo_fastmmc.exe; do
    line=$("$runner" "./$exe" | grep '^RESULT ') || { echo "compare.sh: $exe failed" >&2; exit 1; }
    echo "$line" >>"$results"
  done
done

awk -v runs="$runs" '
  {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    m = f["manager"]
    for (p = 1; p <= 3; p++) {
      ph = phases[p]
      t = f[ph "_ms"] + 0
      if (!((m, ph) in best) || t < best[m, ph]) best[m, ph] = t
    }
    tot = f["strings_ms"] + f["objects_ms"] + f["threads_ms"]
    if (!((m, "total") in best) || tot < best[m, "total"]) best[m, "total"] = tot
    if (f["peak_ws_kb"] + 0 > peak[m]) peak[m] = f["peak_ws_kb"] + 0
    if (f["peak_ws_kb"] - f["start_ws_kb"] > added[m]) added[m] = f["peak_ws_kb"] - f["start_ws_kb"]
    if (f["private_exit_kb"] + 0 > atexit[m]) atexit[m] = f["private_exit_kb"] + 0
    if (f["private_released_kb"] + 0 > released[m]) released[m] = f["private_released_kb"] + 0
  }
  BEGIN { phases[1] = "strings"; phases[2] = "objects"; phases[3] = "threads"
          label["strings"] = "strings"; label["objects"] = "objects"
          label["threads"] = "4 threads"; label["total"] = "total" }
  function row(name, a, b, unit) {
    printf "  %-17s %12s %12s %10.2f\n", name, sprintf("%.1f %s", a, unit), sprintf("%.1f %s", b, unit),
           (a > 0 ? b / a : 0)
  }
  END {
    printf "  %d runs of each, in turns; best time of each; memory: the highest of the runs\n", runs
    printf "  %-17s %12s %12s %10s\n", "", "FPC heap", "fastmm-c", "ratio"
    for (p = 1; p <= 3; p++) row(label[phases[p]], best["fpc-heap", phases[p]], best["fastmm-c", phases[p]], "ms")
    row("total", best["fpc-heap", "total"], best["fastmm-c", "total"], "ms")
    row("peak working set", peak["fpc-heap"] / 1024, peak["fastmm-c"] / 1024, "MB")
    row("  above start", added["fpc-heap"] / 1024, added["fastmm-c"] / 1024, "MB")
    row("private at exit", atexit["fpc-heap"] / 1024, atexit["fastmm-c"] / 1024, "MB")
    printf "  %-17s %12s %12s\n", "  after release", "-", sprintf("%.1f MB", released["fastmm-c"] / 1024)
    printf "  (ratio = fastmm-c / FPC heap: below 1 is faster or smaller with fastmm-c)\n"
    printf "  (peak working set: PeakWorkingSetSize, the real peak of resident memory, Wine included;\n"
    printf "   private at exit: PagefileUsage when the work is done, not a peak: see compare.sh;\n"
    printf "   part of the fastmm-c figure is kept for reuse: the large-block cache and spare spans,\n"
    printf "   which the idle thread of the DLL gives back after an idle spell;\n"
    printf "   after release: the same figure once FastMMC_ReleaseFreeMemory gave it back at once)\n"
  }' "$results"
