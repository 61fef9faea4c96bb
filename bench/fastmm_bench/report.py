# SPDX-License-Identifier: MIT
"""What a run prints and writes: the issue's targets (reported, not enforced), the tables of
gains and peak memory for the terminal and for results.md, and results.json."""

import json
import math
import os

from .progress import fmt_duration
from .targets import PLATFORMS
from .comparisons import GEOMEAN
from .suite_programs import SUITE, SUITE_NAMES
from .workloads import MEMORY_WORKLOADS, WORKLOAD_NAMES, threads_of

# The rows of the tables: every workload, then the suite's geometric mean.
ROW_ORDER = WORKLOAD_NAMES + [GEOMEAN]

# What each program's peak-memory figure is (its "mem_kind"), said in every table that shows one.
MEM_KIND_LABELS = {
    "peak-rss": "the peak resident set, VmHWM",
    "peak-working-set": "PeakWorkingSetSize, which Wine takes from the process's VmHWM",
    "peak-commit": "the peak commit, PeakPagefileUsage",
    "maxrss": "the process's peak resident set, getrusage's ru_maxrss through /usr/bin/time",
}


PLATFORM_TITLES = {
    "native": "Native Linux (libfastmmc.so)",
    "native-suite": "mimalloc-bench's programs, native Linux, by LD_PRELOAD (libfastmmc-malloc.so)",
    "win64": "Win64 under Wine (fastmmc64.dll)",
    "win32": "Win32 under Wine (fastmmc32.dll)",
    "pascal-win64": "Free Pascal program, Win64 under Wine (FastMMC + fastmmc64.dll)",
    "pascal-win32": "Free Pascal program, Win32 under Wine (FastMMC + fastmmc32.dll)",
    "pascal-native": "Free Pascal program, native Linux (FastMMC + libfastmmc.so, or linked in)",
}


def mem_kind_label(kind):
    return "%s: %s" % (kind, MEM_KIND_LABELS[kind]) if kind in MEM_KIND_LABELS else kind


def ratio_of(c):
    return None if c is None or c.get("error") else 1.0 + c["median_gain_pct"] / 100.0


def find(comps, target, workload, baseline):
    for c in comps:
        if c["target"] == target and c["workload"] == workload and c["baseline"] == baseline:
            return c
    return None


# How a target's figure reads, said where the targets are printed.
SPEED_RATIO_NOTE = ("each figure is a speed ratio, the other's time over fastmm-c's, so a target "
                    "of at most 0.8x its time needs 1.25x")


def target_checks(comps):
    """The issue's targets: (description, met?, figure) for each one that this run measured."""
    checks = []

    def measured(target, workload, baseline):
        """(ratio, interval's low end, figure) of one comparison, or None if not measured."""
        c = find(comps, target, workload, baseline)
        r = ratio_of(c)
        if r is None:
            return None
        lo = 1.0 + c["ci_low_pct"] / 100.0
        hi = 1.0 + c["ci_high_pct"] / 100.0
        return r, lo, "%.2fx (95%% CI %.2fx-%.2fx)" % (r, lo, hi)

    def throughput(target, workload, baseline, need, what):
        m = measured(target, workload, baseline)
        if m is None:
            return
        r, _, fig = m
        met = r >= need
        if not met:
            # The need as set: 1/1.2 is 0.83x, not the 0.8x one decimal would print.
            shown = "%.1f" % need if abs(need * 10 - round(need * 10)) < 1e-9 else "%.2f" % need
            fig += ", %.2fx short of %sx" % (need - r, shown)
        checks.append(("%s %s: %s" % (target, workload, what), met, fig))

    def faster(target, workload, baseline, what):
        """Measurably faster: the whole interval of the ratio above 1."""
        m = measured(target, workload, baseline)
        if m is None:
            return
        _, lo, fig = m
        if lo <= 1.0:
            fig += ", the interval reaches 1.0x"
        checks.append(("%s %s: %s" % (target, workload, what), lo > 1.0, fig))

    for t in ("win32", "win64"):
        for w in ("small_churn_lifo", "small_churn_random", "string_append"):
            throughput(t, w, "heapalloc", 3.0, ">= 3x HeapAlloc")
    for w in ("small_churn_lifo", "small_churn_random", "object_churn", "string_append"):
        throughput("native", w, "mimalloc", 1.0, ">= mimalloc")
        throughput("native", w, "glibc", 1.5, ">= 1.5x glibc")
    throughput("native", "mt_prodcons", "mimalloc", 1.0, ">= mimalloc")
    # Issue 14: large blocks and growth.
    for w in ("fc_realloc_large", "fc_addr_creep", "realloc_medium", "array_setlength"):
        throughput("native", w, "mimalloc", 1.0, ">= mimalloc")
    for w in ("array_setlength",):
        throughput("native", w, "glibc", 1.0, ">= glibc")
    # Issue 14, the Pascal path: the in-place ReallocMem and MemSize of a Free Pascal program
    # (through the RTL's routines, as a program calls them) cost at most 1.2x the C export's
    # called from the same program: a ratio of at least 1/1.2.
    for t in ("pascal-win32", "pascal-win64"):
        for w in ("pas_realloc_inplace", "pas_memsize"):
            throughput(t, w, "c-export", 1 / 1.2, "<= 1.2x the C export's time")
        for w in ("pas_string_grow", "pas_realloc_grow", "pas_getmem_freemem"):
            throughput(t, w, "fpc-heap", 1.0, ">= Free Pascal's heap")
    round_two_checks(throughput, faster)
    checks += contract_checks(comps)
    # The malloc drop-in on mimalloc-bench's programs: the geometric mean over the suite at least
    # glibc's speed and within 10% of mimalloc's time, its peak within 10% of mimalloc's.
    throughput(SUITE, GEOMEAN, "glibc", 1.0, ">= glibc")
    throughput(SUITE, GEOMEAN, "mimalloc", 1 / 1.1, "<= 1.1x mimalloc's time")
    checks += suite_checks(comps)
    mixed = [c for c in comps if c["target"] == "native" and c["workload"] == "mixed"
             and not c.get("error")]
    if mixed:
        live = mixed[0]["peak_live"]
        cand = mixed[0]["candidate_peak_mem"] / live
        met = cand <= 1.2
        checks.append(("native mixed: peak memory <= 1.2x peak live bytes", met,
                       "%.3fx (%s above base, %s live)" % (cand, mb(mixed[0]["candidate_peak_mem"]),
                                                           mb(live))))
    for platform, workload in (("native", "mixed"), ("win32", "medium_churn"),
                               ("win64", "medium_churn"), ("native", "medium_churn")):
        peak_check(checks, comps, platform, workload)
    return checks


def round_two_checks(throughput, faster):
    """The targets set once the contract was priced, each a time ratio of one paired run (the
    need is the ratio peer time / fastmm-c time, so "at most 0.8x its time" is at least 1.25)."""
    # Through a Free Pascal program, both bitnesses: the seed's string and raw ReallocMem phases,
    # the in-place resize and the mixed program, single-threaded and on 4 threads.
    for t in ("pascal-win32", "pascal-win64"):
        for w in ("pas_string_grow", "pas_realloc_grow", "pas_realloc_inplace", "pas_mixed",
                  "pas_mixed_mt4"):
            throughput(t, w, "fastmm4avx", 1.25, "<= 0.8x FastMM4-AVX's time")
    # Under Wine: at least mimalloc's speed on the small churns, medium blocks and the mix; the
    # medium blocks ahead of every peer; a 1 MB pair within twice rpmalloc's time (its path is a
    # cache pop and push); the seed's in-place resize at most snmalloc's time; the NASM
    # ReallocMem entry measurably faster than the C path it replaces.
    for t in ("win32", "win64"):
        for w in ("small_churn_random", "object_churn", "medium_churn", "mixed"):
            throughput(t, w, "mimalloc", 1.0, ">= mimalloc")
        for peer in ("rpmalloc", "snmalloc"):
            throughput(t, "medium_churn", peer, 1.0, ">= %s" % peer)
        throughput(t, "large_alloc_free", "rpmalloc", 0.5, "<= 2x rpmalloc's time")
        throughput(t, "realloc_inplace", "snmalloc", 1.0, "<= snmalloc's time")
        faster(t, "realloc_inplace", "fastmm-c-purec", "the NASM entry faster than the C path")
    # Natively: the mix and the multi-thread churns at least mimalloc's speed (small_churn_random
    # is among the checks above).
    for w in ("mixed", "mt_churn", "fc_mt_alloc_realloc"):
        throughput("native", w, "mimalloc", 1.0, ">= mimalloc")


def suite_checks(comps):
    """The suite's peak memory against mimalloc's (geometric means), and that no program failed
    or changed its output under fastmm-c."""
    checks = []
    rows = [c for c in comps if c["target"] == SUITE]
    if not rows:
        return checks
    geo = find(comps, SUITE, GEOMEAN, "mimalloc")
    if geo is not None:
        r = geo["candidate_peak_mem"] / max(1, geo["baseline_peak_mem"])
        checks.append(("%s %s: peak memory <= 1.1x mimalloc's" % (SUITE, GEOMEAN), r <= 1.1,
                       "%.3fx (%s vs %s)" % (r, mb(geo["candidate_peak_mem"]),
                                             mb(geo["baseline_peak_mem"]))))
    cand = rows[0]["candidate"]
    programs = sorted({c["workload"] for c in rows if c["workload"] != GEOMEAN})
    bad = sorted({c["workload"] for c in rows if c.get("error") and
                  c["error"].startswith(cand + " failed")})
    checks.append(("%s: every program runs, with the C library's output, under %s" % (SUITE, cand),
                   not bad, "%d programs, all ran" % len(programs) if not bad else
                   "FAILED: %s" % ", ".join(bad)))
    return checks


def peak_check(checks, comps, platform, workload):
    """fastmm-c's peak memory no worse than the best peer's (the peers, not fastmm-c's own
    builds: debug mode, the yardsticks)."""
    rows = [c for c in comps if c["target"] == platform and c["workload"] == workload
            and not c.get("error")]
    peers = [c for c in rows if not c["baseline"].startswith("fastmm-c")]
    if not peers:
        return
    live = rows[0]["peak_live"]
    cand = rows[0]["candidate_peak_mem"] / live
    best = min(peers, key=lambda c: c["baseline_peak_mem"])
    bratio = best["baseline_peak_mem"] / live
    met = cand <= bratio
    fig = "%.3fx vs %s %.3fx" % (cand, best["baseline"], bratio)
    if not met:
        fig += ", %.1f%% more" % ((cand / bratio - 1) * 100)
    checks.append(("%s %s: peak memory no worse than the best peer" % (platform, workload), met,
                   fig))


# The validation contract's price: fastmm-c's time over the unchecked yardstick build's
# (bench/targets.conf), at most CONTRACT_GEOMEAN over a platform's single-thread workloads and
# at most CONTRACT_ANY on any workload.
CONTRACT_BASELINE = "fastmm-c-unchecked"
CONTRACT_GEOMEAN = 1.03
CONTRACT_ANY = 1.06


def contract_checks(comps):
    """(description, met?, figure) per platform that ran the yardstick: the geometric mean of
    the single-thread workloads' time ratios and the worst workload's ratio with its interval."""
    checks = []
    for platform in PLATFORMS:
        rows = [c for c in comps if c["target"] == platform and c["baseline"] == CONTRACT_BASELINE
                and not c.get("error")]
        if not rows:
            continue
        # time ratio = 1 / (peer time / fastmm-c time); the interval's ends swap.
        cost = {c["workload"]: 1.0 / ratio_of(c) for c in rows}
        single = [cost[c["workload"]] for c in rows if threads_of(c["workload"]) == 1]
        if single:
            g = math.exp(sum(math.log(x) for x in single) / len(single))
            checks.append(("%s: the validation contract costs <= %+.0f%% (geometric mean of %d "
                           "single-thread workloads' time over %s)" % (
                               platform, (CONTRACT_GEOMEAN - 1) * 100, len(single),
                               CONTRACT_BASELINE), g <= CONTRACT_GEOMEAN, "%+.1f%%" % ((g - 1) * 100)))
        worst = max(rows, key=lambda c: cost[c["workload"]])
        w = cost[worst["workload"]]
        lo = 1.0 / (1.0 + worst["ci_high_pct"] / 100.0)
        hi = 1.0 / (1.0 + worst["ci_low_pct"] / 100.0)
        checks.append(("%s: the validation contract costs <= %+.0f%% on every workload" % (
            platform, (CONTRACT_ANY - 1) * 100), w <= CONTRACT_ANY,
            "worst %s %+.1f%% [%+.1f,%+.1f]" % (worst["workload"], (w - 1) * 100, (lo - 1) * 100,
                                                (hi - 1) * 100)))
    return checks


def mb(n):
    return "%.1f MB" % (n / 1e6)


def fmt_gain(c, with_ci=True):
    if c is None:
        return ""
    if c.get("error"):
        return "FAILED"
    s = "%+.1f%%" % c["median_gain_pct"]
    if with_ci:
        s += " [%+.0f,%+.0f]" % (c["ci_low_pct"], c["ci_high_pct"])
    return s


def fmt_instr(c):
    if c is None or "instr_gain_pct" not in c:
        return "n/a"
    return "%+.0f%%" % c["instr_gain_pct"]


def table(headers, rows, markdown_style=False):
    if markdown_style:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])
                                   for i, c in enumerate(cells))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def platform_tables(result, markdown_style):
    comps = result["comparisons"]
    out = []
    for p in PLATFORMS:
        pc = [c for c in comps if c["target"] == p]
        if not pc:
            continue
        baselines = []
        for c in pc:
            if c["baseline"] not in baselines:
                baselines.append(c["baseline"])
        headers = ["workload"]
        for b in baselines:
            headers.append("vs %s" % b)
            if p == "native":
                headers.append("instr")
        rows = []
        for w in ROW_ORDER:
            wc = [c for c in pc if c["workload"] == w]
            if not wc:
                continue
            row = [w]
            for b in baselines:
                c = next((x for x in wc if x["baseline"] == b), None)
                row.append(fmt_gain(c) if c else "-")
                if p == "native":
                    row.append(fmt_instr(c) if c else "-")
            rows.append(row)
        title = PLATFORM_TITLES[p]
        out.append(("### " if markdown_style else "== ") + title +
                   ("" if markdown_style else " =="))
        out.append("")
        out.append(table(headers, rows, markdown_style))
        out.append("")
    return "\n".join(out)


def memory_table(result, markdown_style, workloads=None):
    comps = result["comparisons"]
    out = []
    for p in PLATFORMS:
        pc = [c for c in comps if c["target"] == p and not c.get("error")]
        if not pc:
            continue
        names = [pc[0]["candidate"]]
        for c in pc:
            if c["baseline"] not in names:
                names.append(c["baseline"])
        shown = [w for w in ROW_ORDER if workloads is None or w in workloads]
        names = [n for n in names if n == names[0] or any(
            c["baseline"] == n and c["workload"] in shown for c in pc)]
        rows = []
        for w in shown:
            wc = [c for c in pc if c["workload"] == w]
            if not wc:
                continue
            live = wc[0]["peak_live"]
            row = [w, mb(live) if live else "-"]
            for n in names:
                if n == wc[0]["candidate"]:
                    v = wc[0]["candidate_peak_mem"]
                else:
                    c = next((x for x in wc if x["baseline"] == n), None)
                    v = c["baseline_peak_mem"] if c else None
                row.append("-" if v is None else
                           ("%.2fx" % (v / live) if live > 0 else mb(v)))
            rows.append(row)
        if rows:
            kind = pc[0]["mem_kind"]
            if p == SUITE:
                out.append("%s: peak memory of each program's process (%s)" %
                           (p, mem_kind_label(kind)))
            else:
                out.append("%s: peak memory above the base (%s) / the workload's peak live bytes" %
                           (p, mem_kind_label(kind)))
            out.append("")
            out.append(table(["workload", "live"] + names, rows, markdown_style))
            out.append("")
    return "\n".join(out)


def checks_text(checks, markdown_style):
    if not checks:
        return ""
    lines = []
    for what, met, fig in checks:
        mark = "met" if met else "MISSED"
        lines.append(("- **%s**: %s: %s" if markdown_style else "  %-7s %s: %s") %
                     ((mark, what, fig) if markdown_style else (mark, what, fig)))
    return "\n".join(lines)


def header_text(meta):
    return ("%s, %s; %s pairs after %s warmups (mode %s, scale %s); bootstrap %d resamples, "
            "seed %d; commit %s; %s" % (
                meta.get("cpu", "?"), "%s CPUs" % meta.get("cpus"), meta["pairs"], meta["warmups"],
                meta["mode"], meta["scale"], meta["resamples"], meta["bootstrap_seed"],
                meta.get("commit", "?"), meta["started"]))


def terminal_report(result, checks):
    meta = result["meta"]
    out = ["", "fastmm-c throughput gain over each peer: median of (peer time / fastmm-c time - 1) "
           "x 100, [95% bootstrap interval]; 'instr' = the same from callgrind's instruction "
           "counts. Positive = fastmm-c faster.", header_text(meta), ""]
    out.append(platform_tables(result, False))
    out.append(memory_table(result, False, MEMORY_WORKLOADS + SUITE_NAMES + [GEOMEAN]))
    if checks:
        out.append("The issue's targets (reported, not enforced; %s):" % SPEED_RATIO_NOTE)
        out.append(checks_text(checks, False))
        out.append("")
    for n in meta["notes"]:
        out.append("note: " + n)
    for c in result["comparisons"]:
        if c.get("error"):
            out.append("FAILED %s %s vs %s: %s" % (c["target"], c["workload"], c["baseline"],
                                                    c["error"]))
    return "\n".join(out)


def markdown(result, checks):
    meta = result["meta"]
    out = ["# fastmm-c benchmark results", ""]
    out.append("Machine: %s (%s CPUs), %s, kernel %s, %s, %s. Commit %s. Started %s, took %s." % (
        meta.get("cpu", "?"), meta.get("cpus"), meta.get("os", "?"), meta.get("kernel", "?"),
        meta.get("wine", "no wine"), meta.get("valgrind", "no valgrind"), meta.get("commit", "?"),
        meta["started"], fmt_duration(meta["duration_s"])) +
        (" Phases: %s." % ", ".join("%s %s" % (k, fmt_duration(v)) for k, v in
                                     meta.get("phase_durations_s", {}).items())
         if meta.get("phase_durations_s") else ""))
    out.append("")
    out.append("Method: %d alternating baseline/candidate process pairs after %d warmup rounds, "
               "single-thread runs pinned to CPU %s, 2-thread runs to CPUs %s; gain per pair = "
               "(baseline time / candidate time - 1) x 100; the median of the pairs' gains and "
               "its 95%% percentile bootstrap interval (%d resamples, seed %d). Candidate: "
               "fastmm-c. %s Positive = fastmm-c faster." % (
                   meta["pairs"], meta["warmups"], meta["single_thread_cpus"],
                   meta["two_thread_cpus"], meta["resamples"], meta["bootstrap_seed"],
                   "`instr`: the same formula on callgrind's instruction counts of the timed "
                   "region (native, scale %s)." % meta["callgrind_scale"]
                   if meta["callgrind_scale"] is not None else
                   "No instruction counts in this run."))
    out.append("")
    out.append("![chart](chart.png)")
    out.append("")
    out.append("## Throughput gain of fastmm-c over each peer")
    out.append("")
    out.append(platform_tables(result, True))
    if checks:
        out.append("## The issue's targets (reported, not enforced)")
        out.append("")
        out.append(SPEED_RATIO_NOTE[0].upper() + SPEED_RATIO_NOTE[1:] + ".")
        out.append("")
        out.append(checks_text(checks, True))
        out.append("")
    out.append("## Peak memory")
    out.append("")
    out.append("Peak process memory above the base taken when the workload was ready, divided "
               "by the most bytes the workload itself held at once. Native: the peak resident "
               "set (VmHWM); under Wine: the peak working set (PeakWorkingSetSize, which Wine "
               "takes from the process's VmHWM; Wine's PeakPagefileUsage is not a peak, it "
               "equals the current commit); on Windows proper: the peak commit "
               "(PeakPagefileUsage). Each table names its figure. Workloads that write only the "
               "ends of large blocks can show less than 1x. The native-suite programs (mimalloc-"
               "bench's) show the whole process's peak resident set (ru_maxrss), in MB.")
    out.append("")
    out.append(memory_table(result, True))
    out.append("## Every comparison")
    out.append("")
    rows = []
    for c in result["comparisons"]:
        if c.get("error"):
            rows.append([c["target"], c["workload"], c["baseline"], "0", "FAILED: " +
                         c["error"][:80].replace("|", "/"), "", "", "", "", "", ""])
            continue
        rows.append([c["target"], c["workload"], c["baseline"], str(c["pairs"]),
                     "%+.2f%%" % c["median_gain_pct"],
                     "%+.2f%% .. %+.2f%%" % (c["ci_low_pct"], c["ci_high_pct"]),
                     fmt_instr(c) if c["target"] == "native" else "",
                     # The suite's programs are one operation each: their time in seconds.
                     "%.3f s / %.3f s" % (c["baseline_ns_per_op"] / 1e9,
                                          c["candidate_ns_per_op"] / 1e9)
                     if c["target"] == SUITE else
                     "%.2f / %.2f" % (c["baseline_ns_per_op"], c["candidate_ns_per_op"]),
                     "%s / %s" % (mb(c["baseline_peak_mem"]), mb(c["candidate_peak_mem"])),
                     c["mem_kind"], mb(c["peak_live"]) if c["peak_live"] else "-"])
    out.append(table(["target", "workload", "baseline", "pairs", "median gain", "95% interval",
                      "instr gain", "ns/op base / fastmm-c", "peak mem base / fastmm-c",
                      "peak mem figure", "peak live"], rows, True))
    out.append("")
    if meta["notes"]:
        out.append("## Notes")
        out.append("")
        out += ["- " + n for n in meta["notes"]]
        out.append("")
    return "\n".join(out)


def write_results(out_dir, result):
    """results.json and results.md into `out_dir`; returns the issue's targets' checks."""
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    return write_markdown(out_dir, result)


def write_markdown(out_dir, result):
    checks = target_checks(result["comparisons"])
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(markdown(result, checks))
    return checks
