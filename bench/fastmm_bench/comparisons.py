# SPDX-License-Identifier: MIT
"""One record of results.json per comparison: a workload on a platform, a baseline against the
candidate, over the pairs both finished (bench/README.md, "Output", lists the fields)."""

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
