#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a Win64 Pascal benchmark program spends its time: the share of the memory manager
against the rest (the program, the RTL, the kernel), from `perf record -e cpu-clock` samples of
the program's main thread under Wine. It answers whether a whole-program target against another
manager can be met at all: if the rest alone takes more than the target's time, no manager can.

  python3 bench/analysis/pascal_time_split.py --program DIR/fastmm_pascal_bench.exe --alloc fastmmc \\
      --workload pas_mixed [--scale 60] [--runs 3] \\
      [--mm-dll fastmmc64.dll] [--mm-unit FASTMM4 --mm-after 'OBJPAS_$$_finalize$']

The memory manager's samples are those in --mm-dll (fastmm-c's DLL) or in the functions of the
Pascal unit --mm-unit compiled into the program (FastMM4-AVX's build, bench/peers/build.sh).
--mm-after names a symbol whose code runs on into the unit's own assembly routines, which Free
Pascal leaves without symbols: in FastMM4-AVX's Win64 build that is the code after OBJPAS's
finalization routine, up to the unit's first symbol (its lock bytes 0x6B/0x6D and its CPUID
probe show whose it is). The program's symbols are read with MinGW's nm; the program loads at its
preferred base. Prints, per run, the workload's ns per operation and the shares, then the
medians. perf must be allowed to sample the process (root, or perf_event_paranoid at most 1).
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

from pe_symbols import symbol_at, text_symbols, unit_of

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WINE_RUN = os.path.join(REPO, "cmake", "wine-run.sh")


def classify(args, syms):
    """A function from (ip, dso) to a group: "manager", "program and RTL", "kernel", "other"."""
    addrs = [a for a, _ in syms]
    if args.mm_after and args.mm_after not in (n for _, n in syms):
        sys.exit("pascal_time_split: no symbol %s in %s" % (args.mm_after, args.program))

    def group(ip, dso):
        if "kernel" in dso:
            return "kernel"
        if args.mm_dll and dso.endswith("/" + args.mm_dll):
            return "manager"
        if "perf-" in dso or dso.endswith(os.path.basename(args.program)):
            # The --mm-after symbol's own body (a finalization stub of a few instructions) is
            # counted with the unlabelled routines after it.
            found = symbol_at(syms, addrs, ip)
            name = found[0] if found else ""
            if name == args.mm_after or (args.mm_unit and unit_of(name) == args.mm_unit):
                return "manager"
            return "program and RTL"
        return "other"

    return group


def one_run(args, group, workdir):
    data = os.path.join(workdir, "perf.data")
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-o", data,
           "--", "bash", WINE_RUN, os.path.basename(args.program), "--workload", args.workload,
           "--alloc", args.alloc, "--scale", str(args.scale)]
    run = subprocess.run(cmd, cwd=os.path.dirname(os.path.abspath(args.program)),
                         capture_output=True, text=True)
    line = [l for l in run.stdout.splitlines() if l.startswith("{")]
    if run.returncode != 0 or not line:
        sys.exit("pascal_time_split: the run failed (%d): %s" % (run.returncode,
                                                                 run.stderr[-500:]))
    ns = json.loads(line[-1])["ns_per_op"]
    out = subprocess.run(["perf", "script", "-i", data, "-F", "tid,ip,dso"], capture_output=True,
                         text=True, check=True).stdout
    rows = [l.split() for l in out.splitlines() if len(l.split()) >= 3]
    # The main thread: the one with the most samples (the workload is single-threaded).
    main = collections.Counter(r[0] for r in rows).most_common(1)[0][0]
    counts = collections.Counter(group(int(r[1], 16), r[2].strip("()")) for r in rows
                                 if r[0] == main)
    total = sum(counts.values())
    return ns, {g: 100.0 * c / total for g, c in counts.items()}, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--alloc", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--scale", type=float, default=60.0,
                    help="long enough that Wine's start is a small part (default 60)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--frequency", type=int, default=2000)
    ap.add_argument("--mm-dll")
    ap.add_argument("--mm-unit")
    ap.add_argument("--mm-after")
    args = ap.parse_args()
    if not (args.mm_dll or args.mm_unit):
        sys.exit("pascal_time_split: say where the manager is: --mm-dll or --mm-unit")
    group = classify(args, text_symbols(args.program, "x86_64-w64-mingw32-nm"))
    groups = ("manager", "program and RTL", "kernel", "other")
    results = []
    with tempfile.TemporaryDirectory(prefix="fastmm-split-") as workdir:
        for i in range(args.runs):
            ns, shares, total = one_run(args, group, workdir)
            results.append((ns, shares))
            print("run %d: %.1f ns/op, %d samples: %s" % (
                i + 1, ns, total, ", ".join("%s %.1f%%" % (g, shares.get(g, 0.0))
                                            for g in groups)))
    ns = statistics.median(r[0] for r in results)
    med = {g: statistics.median(r[1].get(g, 0.0) for r in results) for g in groups}
    print("median: %.1f ns/op; %s; the manager %.1f ns/op, the rest %.1f ns/op" % (
        ns, ", ".join("%s %.1f%%" % (g, med[g]) for g in groups), ns * med["manager"] / 100,
        ns * (100 - med["manager"]) / 100))


if __name__ == "__main__":
    main()
