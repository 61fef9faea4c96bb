# SPDX-License-Identifier: MIT
"""One record of results.json per comparison: a workload on a platform, a baseline against the
candidate, over the pairs both finished (bench/README.md, "Output", lists the fields)."""

import math

from . import stats
from .workloads import WORKLOAD_CALLGRIND, WORKLOAD_GROUP


def mem_above_base(rec):
    """The process's peak memory above its memory when the workload was ready."""
    return max(0, rec["peak_mem"] - rec["base_mem"])


def compare(p, w, cand, base, samples, failures, cg_results, cg_failures):
    c = {"workload": w, "target": p, "baseline": base.name, "candidate": cand.name,
         "group": WORKLOAD_GROUP[w]}
    err = failures.get((p, w, cand.name)) or failures.get((p, w, base.name))
    cs = {r["pair"]: r for r in samples.get((p, w, cand.name), [])}
    bs = {r["pair"]: r for r in samples.get((p, w, base.name), [])}
    both = sorted(set(cs) & set(bs))
    if err or not both:
        who = cand.name if failures.get((p, w, cand.name)) else base.name
        c["error"] = "%s failed: %s" % (who, err) if err else "no pairs"
        c["pairs"] = 0
        return c
    gains = stats.paired_gains([bs[i]["seconds"] for i in both], [cs[i]["seconds"] for i in both])
    lo, hi = stats.bootstrap_median_ci(gains)
    c.update({
        "pairs": len(both),
        "median_gain_pct": stats.median(gains),
        "ci_low_pct": lo,
        "ci_high_pct": hi,
        "gains_pct": [round(g, 3) for g in gains],
        "baseline_ns_per_op": stats.median([bs[i]["ns_per_op"] for i in both]),
        "candidate_ns_per_op": stats.median([cs[i]["ns_per_op"] for i in both]),
        "ops": cs[both[0]]["ops"],
        "mem_kind": cs[both[0]]["mem_kind"],
        "baseline_peak_mem": int(stats.median([mem_above_base(bs[i]) for i in both])),
        "candidate_peak_mem": int(stats.median([mem_above_base(cs[i]) for i in both])),
        "baseline_peak_mem_abs": int(stats.median([bs[i]["peak_mem"] for i in both])),
        "candidate_peak_mem_abs": int(stats.median([cs[i]["peak_mem"] for i in both])),
        "peak_live": max(cs[i]["peak_live"] for i in both),
    })
    if p == "native":
        cb, cc = cg_results.get((base.key, w)), cg_results.get((cand.key, w))
        if cb and cc:
            c["baseline_instructions"] = cb["instructions"]
            c["candidate_instructions"] = cc["instructions"]
            c["instructions_ops"] = cc["ops"]
            c["instr_gain_pct"] = stats.gain(cb["instructions"], cc["instructions"])
        else:
            why = cg_failures.get((base.key, w)) or cg_failures.get((cand.key, w))
            if why:
                c["instr_error"] = why
            elif not WORKLOAD_CALLGRIND[w]:
                c["instr_error"] = "not counted: a spinning thread's instructions are not work"
    return c


# The row of the suite's geometric mean (the native-suite platform, report.py).
GEOMEAN = "geomean"


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geomean_records(comps, platform):
    """Per baseline of `platform`, a record of the geometric mean over its programs that both
    ran: pair i's ratio is the geometric mean of pair i's ratios of every program, and the record
    has the median of those and its bootstrap interval, as a workload's; the times and peaks are
    the geometric means of the programs' medians. `failed_programs` names those left out because
    a run failed."""
    rows = [c for c in comps if c["target"] == platform and c["workload"] != GEOMEAN]
    baselines = []
    for c in rows:
        if c["baseline"] not in baselines:
            baselines.append(c["baseline"])
    out = []
    for b in baselines:
        ok = [c for c in rows if c["baseline"] == b and not c.get("error")]
        failed = [c["workload"] for c in rows if c["baseline"] == b and c.get("error")]
        if not ok:
            continue
        n = min(len(c["gains_pct"]) for c in ok)
        ratios = [geometric_mean([1.0 + c["gains_pct"][i] / 100.0 for c in ok]) for i in range(n)]
        gains = [(r - 1.0) * 100.0 for r in ratios]
        lo, hi = stats.bootstrap_median_ci(gains)

        def geo(key):
            return geometric_mean([max(c[key], 1e-12) for c in ok])
        out.append({
            "workload": GEOMEAN, "target": platform, "baseline": b,
            "candidate": ok[0]["candidate"],
            "group": "geometric mean over %d programs" % len(ok),
            "programs": [c["workload"] for c in ok], "failed_programs": failed,
            "pairs": n, "median_gain_pct": stats.median(gains), "ci_low_pct": lo,
            "ci_high_pct": hi, "gains_pct": [round(g, 3) for g in gains],
            "baseline_ns_per_op": geo("baseline_ns_per_op"),
            "candidate_ns_per_op": geo("candidate_ns_per_op"), "ops": 1,
            "mem_kind": ok[0]["mem_kind"],
            "baseline_peak_mem": int(round(geo("baseline_peak_mem"))),
            "candidate_peak_mem": int(round(geo("candidate_peak_mem"))),
            "baseline_peak_mem_abs": int(round(geo("baseline_peak_mem_abs"))),
            "candidate_peak_mem_abs": int(round(geo("candidate_peak_mem_abs"))),
            "peak_live": 0,
        })
    return out
