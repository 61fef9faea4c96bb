# SPDX-License-Identifier: MIT
"""bench/run's command line, its modes, and a run from start to end: choose the platforms,
workloads and targets, check the programs, snapshot them, run the rounds and callgrind, compare,
write the results folder and print the tables."""

import argparse
import datetime
import fnmatch
import json
import os
import shutil
import sys
import tempfile
import time

from . import callgrind, chart, peers, programs, report, runner, stats
from . import suite
from .comparisons import compare, geomean_records
from .errors import BenchError
from .machine import machine_info
from .paths import CALLGRIND_CACHE, RESULTS
from .progress import Progress
from .suite_programs import SUITE
from .targets import PLATFORMS, read_targets
from .workloads import ALL_WORKLOADS, WORKLOAD_CALLGRIND, WORKLOAD_NAMES, threads_of

DEFAULT_PAIRS = 5
WARMUPS = 3
CALLGRIND_SCALE = 0.1

# --quick: a first look in about a minute on 2 cores (bench/README.md): every workload on every
# platform, fastmm-c against the main peer(s) of each platform only, at a fifth of the
# operations, 3 pairs and no warmup round (the preflight run of every target has started the
# program and Wine's server once), no instruction counts. Starting the processes is most of its
# time (about 0.2 s a Win64 run under Wine), so it has as few as still give a median of 3. Its
# intervals are wide; a figure worth quoting comes from the default run or --pairs 100. An
# option given on the command line overrides the quick mode's value.
QUICK = {"pairs": 3, "warmups": 0, "scale": 0.2, "no_callgrind": True,
         "targets": "native:glibc,native-suite:glibc,*:mimalloc,win*:heapalloc,pascal-*:fpc-heap"}


def select(names, patterns, what):
    """The names that match comma-separated fnmatch patterns, in the names' order (all of them
    without patterns)."""
    if not patterns:
        return list(names)
    chosen = []
    for pat in patterns.split(","):
        pat = pat.strip()
        hits = [n for n in names if fnmatch.fnmatch(n, pat)]
        if not hits:
            raise BenchError("no %s matches %r" % (what, pat))
        chosen += [h for h in hits if h not in chosen]
    return [n for n in names if n in chosen]


def help_epilog():
    lines = ["modes:",
             "  bench/run                 default: %d pairs after %d warmups, every workload and "
             "target (bench/README.md says how long it takes)" % (DEFAULT_PAIRS, WARMUPS),
             "  bench/run --quick         a first look in about a minute: %d pairs, no warmup, "
             "scale %g, %s only, no callgrind" % (QUICK["pairs"], QUICK["scale"],
                                                  QUICK["targets"]),
             "  bench/run --pairs 100     confirmation (the seed's count; about 13x the default)",
             "  bench/run --workloads 'realloc_*' --platforms win64 --pairs 100   a subset",
             "", "workloads (bench/README.md describes each):"]
    for name, group, _ in ALL_WORKLOADS:
        n = threads_of(name)
        lines.append("  %-20s %s%s" % (name, group, " (%d threads)" % n if n > 1 else ""))
    lines += ["", "targets (bench/targets.conf; candidate = fastmm-c of each platform):"]
    try:
        for t in read_targets():
            path = t.lib_path()
            state = "" if path is None or os.path.exists(path) else "  [not built]"
            if state and peers.peer_of(t):
                state = "  [bench/run builds it from its source]"
            only = "" if t.workloads == "all" else "  (workloads: %s)" % t.workloads
            lines.append("  %-24s %-9s %-6s %s%s%s" % (t.key, t.role, t.kind, t.lib or "-", only,
                                                      state))
    except (OSError, BenchError) as e:
        lines.append("  (cannot read bench/targets.conf: %s)" % e)
    lines += ["", "output: a table here; results.json, results.md, chart.png, runs.jsonl in "
              "build/bench/results/<time>-<mode>/, whose path is the last line printed."]
    return "\n".join(lines)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench/run", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Paired benchmark of fastmm-c against the other allocators of each platform.",
        epilog=help_epilog())
    ap.add_argument("--quick", action="store_true",
                    help="a first look in about a minute (see modes below); options given with it "
                    "override its values")
    ap.add_argument("--pairs", type=int,
                    help="measured baseline/candidate pairs per comparison (default %d; 100: "
                    "confirmation mode)" % DEFAULT_PAIRS)
    ap.add_argument("--warmups", type=int,
                    help="warmup rounds before them (default %d)" % WARMUPS)
    ap.add_argument("--workloads", help="comma-separated names or patterns (default: all)")
    ap.add_argument("--platforms", help="comma-separated: native, native-suite (mimalloc-bench's "
                    "programs, from --peer-source mimalloc-bench=DIR), win64, win32, "
                    "pascal-win64, pascal-win32, pascal-native (default: all; native-suite only "
                    "with its source given)")
    ap.add_argument("--targets-file", metavar="FILE",
                    help="the targets from FILE (the format of bench/targets.conf) instead of "
                         "bench/targets.conf: e.g. a build of another commit as a baseline, or "
                         "the candidate's library once more as an A/A control")
    ap.add_argument("--targets", help="comma-separated platform:name patterns to keep, e.g. "
                    "'native:mimalloc,win*:heapalloc' (the candidates are always kept)")
    ap.add_argument("--peer-source", action="append", metavar="NAME=DIR",
                    help="build the peer NAME from the source folder DIR: mimalloc (instead "
                    "of the one scripts/fetch-peer-mimalloc.sh fetched from Debian), "
                    "fastmm4avx (FastMM4-AVX in the Pascal program), mimalloc-bench (the "
                    "native-suite platform's programs), rpmalloc or snmalloc (win32, "
                    "win64 and native), which have no other source than a folder given here or "
                    "put in the default one (bench/peers/README.md); repeatable")
    ap.add_argument("--scale", type=float,
                    help="multiplies every workload's operation count (default 1)")
    ap.add_argument("--cpu", type=int, help="the CPU for single-thread runs (default: the last "
                    "one this process may use)")
    ap.add_argument("--emulated-win32", action="store_true",
                    help="run the Win32 platforms even where they run only under an emulator "
                    "of i386 programs (scripts/setup-win32-emulation.sh); the report says so, "
                    "since their times are the emulator's")
    ap.add_argument("--no-callgrind", action="store_true", default=None,
                    help="skip the instruction counts")
    ap.add_argument("--callgrind-scale", type=float, default=CALLGRIND_SCALE,
                    help="workload scale of the callgrind runs (default %g)" % CALLGRIND_SCALE)
    ap.add_argument("--out", help="results folder (default build/bench/results/<time>-<mode>)")
    ap.add_argument("--report", metavar="DIR", help="run nothing: print the tables of an earlier "
                    "run's folder again and rewrite its results.md and chart.png")
    a = ap.parse_args(argv)
    defaults = {"pairs": DEFAULT_PAIRS, "warmups": WARMUPS, "scale": 1.0, "no_callgrind": False,
                "targets": None}
    for key, value in (QUICK if a.quick else defaults).items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    if a.pairs < 1 or a.warmups < 0 or a.scale <= 0:
        ap.error("--pairs must be >= 1, --warmups >= 0, --scale > 0")
    return a


def mode_of(args):
    if args.quick:
        return "quick"
    if args.pairs == DEFAULT_PAIRS and args.scale == 1.0:
        return "default"
    return "pairs%d" % args.pairs


def report_again(out_dir):
    """--report: the tables, results.md and chart.png again from a folder's results.json."""
    with open(os.path.join(out_dir, "results.json")) as f:
        result = json.load(f)
    checks = report.write_markdown(out_dir, result)
    note = chart.make_chart(result, os.path.join(out_dir, "chart.png"))
    print(report.terminal_report(result, checks))
    if note:
        print("note: " + note)
    print(os.path.abspath(out_dir))
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.report:
        return report_again(args.report)
    targets = read_targets(args.targets_file) if args.targets_file else read_targets()
    sources = peers.parse_peer_sources(args.peer_source)
    platforms = select(PLATFORMS, args.platforms, "platform")
    if not args.platforms and suite.SOURCE not in sources:
        # The suite runs for about an hour and a half: a default run takes it only when its
        # source is named.
        platforms = [p for p in platforms if p != SUITE]
    workloads = select(WORKLOAD_NAMES, args.workloads, "workload")
    if args.targets:
        keep = select([t.key for t in targets], args.targets, "target")
        # The candidate of a platform is always kept: every comparison needs it.
        targets = [t for t in targets if t.key in keep or t.role == "candidate"]
    notes = []
    targets = peers.prepare(targets, platforms, sources, notes)
    suite.prepare(platforms, sources, notes)
    workloads = suite.select(workloads, args.scale, notes)
    allowed = sorted(os.sched_getaffinity(0))
    cpu = args.cpu if args.cpu is not None else allowed[-1]
    if cpu not in allowed:
        raise BenchError("CPU %d is not available to this process (available: %s)" % (cpu, allowed))
    single_cpus = {cpu}
    multi_cpus = set(allowed[-2:]) if len(allowed) >= 2 else {cpu}
    mode = mode_of(args)
    started = datetime.datetime.now()
    out_dir = args.out or os.path.join(RESULTS, started.strftime("%Y%m%d-%H%M%S") + "-" + mode)
    os.makedirs(out_dir, exist_ok=True)

    print("bench/run: %d pairs after %d warmups, scale %g, single-thread runs on CPU %d, "
          "2-thread runs on CPUs %s" % (args.pairs, args.warmups, args.scale, cpu,
                                        ",".join(map(str, sorted(multi_cpus)))), file=sys.stderr)
    if any(programs.under_wine(p) for p in platforms):
        programs.prepare_wine()
        programs.keep_wineserver()
    snapshot = tempfile.mkdtemp(prefix="fastmm-bench-")
    try:
        active = choose_targets(platforms, targets, snapshot, single_cpus, notes,
                                args.emulated_win32)
        for n in notes:
            print("bench/run: " + n, file=sys.stderr)
        if not active:
            raise BenchError("nothing to run")
        return measure(args, platforms, workloads, active, notes, single_cpus, multi_cpus, mode,
                       started, out_dir)
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def choose_targets(platforms, targets, snapshot, cpus, notes, emulated_win32=False):
    """Per platform, the targets that run: the program is there and lists the workloads
    bench/run knows, a candidate and a baseline can run. Each platform's program and libraries
    are copied into `snapshot` first (programs.take_snapshot), so that the preflight run starts
    the copies the measured runs start."""
    active = {}
    for p in platforms:
        problem = programs.check_program(p, emulated_win32)
        if problem:
            notes.append("%s skipped: %s" % (p, problem))
            continue
        if p.endswith("win32") and emulated_win32:
            emulator = programs.win32_emulator()
            if emulator:
                notes.append("%s ran under %s: its times and ratios are the emulator's, not a "
                             "32-bit CPU's" % (p, emulator))
        pts = [t for t in targets if t.platform == p]
        if not any(t.role == "candidate" for t in pts):
            notes.append("%s skipped: no candidate in bench/targets.conf" % p)
            continue
        # A library that is not built is not copied; the preflight says so.
        programs.take_snapshot(p, [t for t in pts if t.lib_path() is None or
                                   os.path.exists(t.lib_path())], snapshot)
        ts = []
        for t in pts:
            why = runner.preflight(t, cpus)
            if why:
                notes.append("%s skipped: %s" % (t.key, why))
                if t.role == "candidate":
                    ts = []
                    break
                continue
            ts.append(t)
        if ts and len(ts) > 1:
            active[p] = ts
        elif ts:
            notes.append("%s skipped: no baseline left to compare with" % p)
    return active


def measure(args, platforms, workloads, active, notes, single_cpus, multi_cpus, mode, started,
            out_dir):
    plan = runner.make_plan(platforms, workloads, active)
    total_runs = sum((args.warmups + args.pairs) * len(ts) for _, _, ts in plan)
    cg_jobs = []
    if not args.no_callgrind and "native" in active and shutil.which("valgrind"):
        for p, w, ts in plan:
            if p == "native" and WORKLOAD_CALLGRIND[w]:
                cg_jobs += [(t, w) for t in ts]
    elif not args.no_callgrind and "native" in active:
        notes.append("callgrind skipped: valgrind is not installed")
    progress = Progress(total_runs + len(cg_jobs))

    with open(os.path.join(out_dir, "runs.jsonl"), "w") as raw:
        samples, failures, phases = runner.run_rounds(
            plan, args.warmups, args.pairs, args.scale, single_cpus, multi_cpus, raw, progress,
            notes)
    cg_results, cg_failures = {}, {}
    if cg_jobs:
        cg_start = time.monotonic()
        cg_results, cg_failures = callgrind.run_callgrind(
            cg_jobs, args.callgrind_scale, single_cpus | multi_cpus, CALLGRIND_CACHE, progress)
        phases["callgrind"] = round(time.monotonic() - cg_start, 1)
    progress.finish()
    finished = datetime.datetime.now()

    comparisons = []
    for p, w, ts in plan:
        cand = next(t for t in ts if t.role == "candidate")
        for b in [t for t in ts if t.role != "candidate"]:
            comparisons.append(compare(p, w, cand, b, samples, failures, cg_results, cg_failures))
    comparisons += geomean_records(comparisons, SUITE)

    meta = machine_info()
    meta.update({
        "mode": mode, "pairs": args.pairs, "warmups": args.warmups, "scale": args.scale,
        "resamples": stats.RESAMPLES, "bootstrap_seed": stats.BOOTSTRAP_SEED,
        "callgrind_scale": args.callgrind_scale if cg_jobs else None,
        "single_thread_cpus": sorted(single_cpus), "two_thread_cpus": sorted(multi_cpus),
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "duration_s": round((finished - started).total_seconds(), 1),
        "phase_durations_s": phases,
        "notes": notes,
        "targets": [{"platform": t.platform, "name": t.name, "role": t.role, "kind": t.kind,
                     "lib": t.lib, "sym": t.sym} for p in active for t in active[p]],
    })
    result = {"meta": meta, "comparisons": comparisons}
    checks = report.write_results(out_dir, result)
    chart_note = chart.make_chart(result, os.path.join(out_dir, "chart.png"))
    if chart_note:
        notes.append(chart_note)

    print(report.terminal_report(result, checks))
    bad = [c for c in comparisons if c.get("error")]
    if bad:
        print("%d comparison(s) failed; see results.md" % len(bad))
    print(out_dir)
    return 1 if bad else 0


def run(argv=None):
    """bench/run's entry point: the exit status (0 ok, 1 a comparison failed, 2 the run could
    not go on, 130 interrupted)."""
    try:
        return main(argv)
    except BenchError as e:
        print("bench/run: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nbench/run: interrupted", file=sys.stderr)
        return 130
