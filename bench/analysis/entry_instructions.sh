#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# entry_instructions.sh: instructions per call of the hot entry points (the C exports and Free
# Pascal's and Delphi's records), natively under callgrind: runs
# build/native/bin/fastmm_entry_instructions (bench/analysis/entry_instructions.c) and prints, per case,
# each entry point's instructions per call with the loop's own (the baseline case) taken off.
# Exact and repeatable; not time (bench/README.md, "Instructions per entry point").
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${1:-$repo/build/native/bin/fastmm_entry_instructions}
[ -x "$exe" ] || { echo "entry_instructions.sh: $exe is missing (cmake --build --preset native)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "entry_instructions.sh: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" "$exe" >"$out/stdout" 2>"$out/stderr" ||
  { cat "$out/stderr" >&2; exit 1; }
calls=$(sed -n 's/^\([0-9]*\) calls per case.*/\1/p' "$out/stdout")
python3 - "$calls" "$out" <<'PY'
import glob, re, sys
calls, folder = int(sys.argv[1]), sys.argv[2]
counts = {}
for f in glob.glob(folder + "/cg.*"):
    text = open(f).read()
    m = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
    t = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    if m and t:
        counts[m.group(1).strip()] = int(t.group(1))
cases = []
for name in counts:
    case, who = name.rsplit(" ", 1)
    if case not in cases:
        cases.append(case)
print("%-18s %10s %10s %8s %12s %8s" % ("instructions/call", "C export", "FPC entry", "ratio",
                                       "Delphi entry", "ratio"))
for case in sorted(cases):
    base = counts.get(case + " baseline", 0)
    c = (counts.get(case + " c_export", 0) - base) / calls
    f = (counts.get(case + " fpc_entry", 0) - base) / calls
    row = "%-18s %10.1f %10.1f %8.2f" % (case, c, f, f / c if c else float("nan"))
    if case + " delphi_entry" in counts:  # the Delphi record has no MemSize
        d = (counts[case + " delphi_entry"] - base) / calls
        row += " %12.1f %8.2f" % (d, d / c if c else float("nan"))
    print(row)
PY
