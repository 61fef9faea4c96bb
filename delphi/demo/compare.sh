#!/usr/bin/env bash
# compare.sh <folder> [runs]: the Pascal demo's comparison. Runs demo_fpcheap.exe (Free
# Pascal's own heap) and demo_fastmmc.exe (FastMMC installed: the DLL beside it) in turns,
# <runs> times each (default 3), under Wine, and prints per phase the best time of each and
# their ratio, and the peak memory (the process's peak commit; the highest of the runs).
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
    if (f["peak_kb"] + 0 > peak[m]) peak[m] = f["peak_kb"] + 0
  }
  BEGIN { phases[1] = "strings"; phases[2] = "objects"; phases[3] = "threads"
          label["strings"] = "strings"; label["objects"] = "objects"
          label["threads"] = "4 threads"; label["total"] = "total" }
  function row(name, a, b, unit) {
    printf "  %-12s %12s %12s %10.2f\n", name, sprintf("%.1f %s", a, unit), sprintf("%.1f %s", b, unit),
           (a > 0 ? b / a : 0)
  }
  END {
    printf "  %d runs of each, in turns; best time of each, highest peak\n", runs
    printf "  %-12s %12s %12s %10s\n", "", "FPC heap", "fastmm-c", "ratio"
    for (p = 1; p <= 3; p++) row(label[phases[p]], best["fpc-heap", phases[p]], best["fastmm-c", phases[p]], "ms")
    row("total", best["fpc-heap", "total"], best["fastmm-c", "total"], "ms")
    row("peak memory", peak["fpc-heap"] / 1024, peak["fastmm-c"] / 1024, "MB")
    printf "  (ratio = fastmm-c / FPC heap: below 1 is faster or smaller with fastmm-c)\n"
  }' "$results"
