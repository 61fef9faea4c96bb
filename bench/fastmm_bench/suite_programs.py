# SPDX-License-Identifier: MIT
"""The programs of the native-suite platform: mimalloc-bench's benchmark programs (its bench/
folder, built by fastmm_bench.suite), each run as its bench.sh runs it, with procs = 2 for this
2-core machine, and a smaller command for the quick mode. Facts read from mimalloc-bench's
bench.sh (the run_test_cmd lines and the relative-time fix-ups after them); no code of it here.

A program's time figure is the wall time of its process, except for the four that run for a
set time or report their own throughput, whose figure is the relative time bench.sh derives
from what they print (larson's "relative time", xmalloc-test's "rtime", 2,000,000 / rptest's
memory ops per CPU second, 10^9 / glibc-thread's iterations). A program whose output does not
depend on time or allocator (cfrac's factors, espresso's (empty: it verifies its own result),
barnes's header without its timing lines) must print under every allocator what it prints under
the C library's malloc."""

import re

SUITE = "native-suite"
PROCS = 2  # bench.sh's procs on this 2-core machine

# Placeholders in the arguments: {procs}, {bench} (the source's bench/ folder), {data} (the
# build's folder of the quick inputs, suite.make_quick_inputs).
ESPRESSO_QUICK_LINES = 300  # the first lines of largest.espresso: about 0.5 s here, not 8 s
BARNES_QUICK_BODIES = 16384  # barnes's bodies in the quick input (bench.sh's has 163840)


def _rel(pattern, scale=None):
    """A time figure read from the program's output: the first number `pattern` captures, or
    `scale` / that number when the program prints a rate."""
    rx = re.compile(pattern, re.M)

    def figure(out):
        m = rx.search(out)
        if not m:
            return None
        v = float(m.group(1))
        if scale is None:
            return v
        return scale / v if v > 0 else None
    figure.pattern = pattern
    return figure


BARNES_TIMING = re.compile(r"^(COMPUTESTART|COMPUTEEND|COMPUTETIME|TRACKTIME|PARTITIONTIME|"
                           r"TREEBUILDTIME|FORCECALCTIME|RESTTIME)\b.*$\n?", re.M)


def whole_output(out):
    return out


def barnes_output(out):
    """barnes's output without the lines that hold times."""
    return BARNES_TIMING.sub("", out)


class Program:
    """One run of mimalloc-bench's: `name` as bench.sh names the test, `exe` the program its
    bench/CMakeLists.txt builds, `args` bench.sh's arguments, `quick` the smaller ones (None:
    no argument makes it smaller, so the quick scale leaves it out), `stdin` the file it reads
    (full, quick), `threads` (more than 1: pinned to the 2-thread workloads' CPUs), `figure` the
    time figure from its output (None: the wall time), `output` the filter of a deterministic
    output compared with the C library's (None: not compared)."""

    def __init__(self, name, exe, args, quick, threads=1, stdin=None, figure=None, output=None,
                 what=""):
        self.name, self.exe, self.args, self.quick = name, exe, args, quick
        self.threads, self.stdin, self.figure, self.output = threads, stdin, figure, output
        self.what = what

    def probe(self):
        """Whether a tiny run of it can show that an allocator loads: it has a quick form, its
        time is the wall's and its output is not compared."""
        return self.quick is not None and self.figure is None and self.output is None

    def command_args(self, scale):
        """(arguments, stdin file or None) at a scale: bench.sh's at 1 and above, the quick ones
        below."""
        quick = scale < 1
        args = self.quick if quick else self.args
        if args is None:
            return None, None
        stdin = None
        if self.stdin:
            stdin = self.stdin[1] if quick else self.stdin[0]
        return list(args), stdin


PROGRAMS = [
    Program("cfrac", "cfrac", ["17545186520507317056371138836327483792789528"],
            ["17545186520507317056371138836327"], output=whole_output,
            what="factoring by continued fractions (many small bignum blocks)"),
    Program("espresso", "espresso", ["{bench}/espresso/largest.espresso"],
            ["{data}/espresso-quick.espresso"], output=whole_output,
            what="logic minimizer (small blocks, realloc)"),
    Program("barnes", "barnes", [], [], stdin=("{bench}/barnes/input", "{data}/barnes-quick.input"),
            output=barnes_output, what="n-body simulation (few allocations)"),
    Program("larsonN", "larson", ["5", "8", "1000", "5000", "100", "4141", "{procs}"],
            ["1", "8", "1000", "5000", "100", "4141", "{procs}"], threads=PROCS,
            figure=_rel(r"relative time: ([0-9.]+)s"),
            what="server: threads free each other's blocks"),
    Program("larsonN-sized", "larson-sized", ["5", "8", "1000", "5000", "100", "4141", "{procs}"],
            ["1", "8", "1000", "5000", "100", "4141", "{procs}"], threads=PROCS,
            figure=_rel(r"relative time: ([0-9.]+)s"), what="larson with C++ sized delete"),
    Program("mstressN", "mstress", ["{procs}", "50", "25"], ["{procs}", "50", "5"],
            threads=PROCS, what="threads allocating and freeing blocks of many sizes"),
    Program("rptestN", "rptest", ["{procs}", "0", "1", "2", "500", "1000", "100", "8", "16000"],
            ["{procs}", "0", "1", "2", "50", "1000", "100", "8", "16000"], threads=PROCS,
            figure=_rel(r"\.\.\.([0-9]+) memory ops", 2000000.0),
            what="rpmalloc's test: random sizes 8-16000, cross-thread frees"),
    Program("xmalloc-testN", "xmalloc-test", ["-w", "{procs}", "-t", "5", "-s", "64"],
            ["-w", "{procs}", "-t", "1", "-s", "64"], threads=PROCS,
            figure=_rel(r"rtime: ([0-9.]+)"),
            what="producer threads, consumer threads freeing their blocks"),
    Program("cache-scratch1", "cache-scratch", ["1", "1000", "1", "2000000", "{procs}"],
            ["1", "100", "1", "2000000", "{procs}"], what="passive false sharing, 1 thread"),
    Program("cache-scratchN", "cache-scratch", ["{procs}", "1000", "1", "2000000", "{procs}"],
            ["{procs}", "100", "1", "2000000", "{procs}"], threads=PROCS,
            what="passive false sharing"),
    Program("cache-thrash1", "cache-thrash", ["1", "1000", "1", "2000000", "{procs}"],
            ["1", "100", "1", "2000000", "{procs}"], what="active false sharing, 1 thread"),
    Program("cache-thrashN", "cache-thrash", ["{procs}", "1000", "1", "2000000", "{procs}"],
            ["{procs}", "100", "1", "2000000", "{procs}"], threads=PROCS,
            what="active false sharing"),
    Program("glibc-simple", "glibc-simple", [], [], what="glibc's malloc benchmark, one thread"),
    Program("glibc-thread", "glibc-thread", ["{procs}"], ["{procs}"], threads=PROCS,
            figure=_rel(r"^([0-9]+) iterations", 1e9),
            what="glibc's malloc benchmark, threads for 2 s"),
    Program("mleak10", "mleak", ["5"], ["2"], threads=10, what="threads that leave blocks unfreed"),
    Program("mleak100", "mleak", ["50"], ["5"], threads=10,
            what="threads that leave blocks unfreed, longer"),
    Program("alloc-test1", "alloc-test", ["1"], None, what="alloc-test, 1 thread (16 s here)"),
    Program("alloc-testN", "alloc-test", ["{procs}"], None, threads=PROCS,
            what="alloc-test on the threads"),
    Program("malloc-large", "malloc-large", [], None,
            what="large blocks, 5-25 MB (25 s and 530 MB here)"),
]
PROGRAM_BY_NAME = {p.name: p for p in PROGRAMS}
SUITE_NAMES = [p.name for p in PROGRAMS]
# The programs mimalloc-bench lists that are not here, and why (bench/README.md says it too).
LEFT_OUT = ("sh6bench, sh8bench", "their source is not in mimalloc-bench's repository (its build "
            "downloads it)")
