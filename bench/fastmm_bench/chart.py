# SPDX-License-Identifier: MIT
"""chart.png: per platform, peer time / fastmm-c time of every workload on a log scale, with the
95% interval, one bar per baseline (matplotlib, Debian's python3-matplotlib)."""

from .targets import PLATFORMS
from .comparisons import GEOMEAN
from .workloads import WORKLOAD_NAMES


def make_chart(result, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: python3-matplotlib is not installed (scripts/install-deps.sh)"
    comps = [c for c in result["comparisons"] if not c.get("error")]
    plats = [p for p in PLATFORMS if any(c["target"] == p for c in comps)]
    if not plats:
        return "chart skipped: no comparison succeeded"
    # Per platform, the workloads it ran (the pascal-* platforms have their own).
    shown = {p: [w for w in WORKLOAD_NAMES + [GEOMEAN] if any(c["workload"] == w and c["target"] == p
                                                  for c in comps)] for p in plats}
    most = max(len(ws) for ws in shown.values())
    baselines = []
    for c in comps:
        if c["baseline"] not in baselines:
            baselines.append(c["baseline"])
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f"]
    color = {b: palette[i % len(palette)] for i, b in enumerate(baselines)}
    height = max(6.0, 0.42 * most + 2.0)
    fig, axes = plt.subplots(1, len(plats), figsize=(6.2 * len(plats), height), squeeze=False)
    ratios = [1.0 + c[k] / 100.0 for c in comps for k in ("ci_low_pct", "ci_high_pct")]
    lo = max(0.01, min(ratios + [0.5]) / 1.3)
    hi = max(ratios + [2.0]) * 1.3
    for ax, p in zip(axes[0], plats):
        workloads = shown[p]
        pb = [b for b in baselines if any(c["baseline"] == b and c["target"] == p for c in comps)]
        step = 0.8 / max(1, len(pb))
        for j, b in enumerate(pb):
            ys, xs, xerr_lo, xerr_hi = [], [], [], []
            for i, w in enumerate(workloads):
                c = next((x for x in comps if x["target"] == p and x["workload"] == w
                          and x["baseline"] == b), None)
                if c is None:
                    continue
                r = 1.0 + c["median_gain_pct"] / 100.0
                ys.append(i - 0.4 + step * (j + 0.5))
                xs.append(r)
                xerr_lo.append(max(0.0, r - (1.0 + c["ci_low_pct"] / 100.0)))
                xerr_hi.append(max(0.0, (1.0 + c["ci_high_pct"] / 100.0) - r))
            ax.barh(ys, [x - 1.0 for x in xs], left=1.0, height=step * 0.9, color=color[b],
                    label="vs " + b, xerr=[xerr_lo, xerr_hi], error_kw={"elinewidth": 0.8,
                                                                        "capsize": 1.5})
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(most - 0.5, -0.5)
        ax.set_yticks(range(len(workloads)))
        ax.set_yticklabels(workloads, fontsize=8)
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.set_title({"native": "native Linux", "native-suite": "mimalloc-bench (LD_PRELOAD)",
                      "win64": "Win64 (Wine)", "win32": "Win32 (Wine)",
                      "pascal-win64": "Free Pascal, Win64 (Wine)",
                      "pascal-win32": "Free Pascal, Win32 (Wine)",
                      "pascal-native": "Free Pascal, native Linux"}[p])
        ax.set_xlabel("peer time / fastmm-c time (log; > 1: fastmm-c faster)", fontsize=8)
        ax.legend(fontsize=7, loc="lower right")
    meta = result["meta"]
    fig.suptitle("fastmm-c vs peers: median of %d paired runs, 95%% bootstrap interval; %s, "
                 "%s CPUs; %s" % (meta["pairs"], meta.get("cpu", "?"), meta.get("cpus"),
                                  meta["started"][:10]), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
