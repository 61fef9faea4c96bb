# SPDX-License-Identifier: MIT
"""The tables, results.json/results.md and chart.png of a run (fastmm_bench.report, .chart), on
a made-up result."""

import json
import os
import re
import shutil
import tempfile
import unittest

from fastmm_bench import chart, report


def comparison(target, workload, baseline, gain, mem_kind, base_mem=30e6, cand_mem=20e6):
    return {"workload": workload, "target": target, "baseline": baseline, "candidate": "fastmm-c",
            "group": "", "pairs": 5, "median_gain_pct": gain, "ci_low_pct": gain - 5.0,
            "ci_high_pct": gain + 5.0, "gains_pct": [gain] * 5, "baseline_ns_per_op": 20.0,
            "candidate_ns_per_op": 10.0, "ops": 1000, "mem_kind": mem_kind,
            "baseline_peak_mem": int(base_mem), "candidate_peak_mem": int(cand_mem),
            "baseline_peak_mem_abs": int(base_mem + 5e6),
            "candidate_peak_mem_abs": int(cand_mem + 5e6), "peak_live": int(18e6)}


def result():
    comps = [
        comparison("native", "mixed", "glibc", 10.0, "peak-rss", 19e6, 20e6),
        comparison("native", "mixed", "mimalloc", -12.0, "peak-rss", 22e6, 20e6),
        comparison("native", "small_churn_lifo", "mimalloc", 5.0, "peak-rss"),
        comparison("native", "small_churn_lifo", "glibc", 40.0, "peak-rss"),
        comparison("win64", "small_churn_lifo", "heapalloc", 350.0, "peak-working-set"),
        comparison("win64", "mixed", "heapalloc", 1.0, "peak-working-set"),
        {"workload": "string_append", "target": "win64", "baseline": "heapalloc",
         "candidate": "fastmm-c", "group": "", "pairs": 0, "error": "heapalloc failed: boom"},
    ]
    meta = {"cpu": "test CPU", "cpus": 2, "os": "Debian", "kernel": "6", "commit": "abc1234",
            "mode": "default", "pairs": 5, "warmups": 3, "scale": 1.0, "resamples": 10000,
            "bootstrap_seed": 20240611, "callgrind_scale": None, "single_thread_cpus": [1],
            "two_thread_cpus": [0, 1], "started": "2026-12-01T10:00:00",
            "finished": "2026-12-01T10:03:00", "duration_s": 180.0,
            "phase_durations_s": {"native": 60.0, "win64": 120.0}, "notes": ["a note"]}
    return {"meta": meta, "comparisons": comps}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fastmm-bench-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_the_issue_targets(self):
        checks = {what: (met, fig) for what, met, fig in report.target_checks(result()["comparisons"])}
        met, fig = checks["win64 small_churn_lifo: >= 3x HeapAlloc"]
        self.assertTrue(met)
        self.assertEqual(fig, "4.50x (95% CI 4.45x-4.55x)")
        met, fig = checks["native small_churn_lifo: >= 1.5x glibc"]
        self.assertFalse(met)
        self.assertIn("0.10x short of 1.5x", fig)
        met, fig = checks["native mixed: peak memory no worse than the best peer"]
        self.assertFalse(met)  # glibc's 19 MB beats fastmm-c's 20 MB
        self.assertIn("vs glibc", fig)
        self.assertNotIn("win64 string_append: >= 3x HeapAlloc", checks)  # it failed: no figure

    def test_a_need_below_one_decimal_is_printed_as_set(self):
        # <= 1.2x the C export's time is a ratio of at least 1/1.2: 0.83x, not "0.8x".
        comps = [comparison("pascal-win64", "pas_memsize", "c-export", -30.0, "peak-working-set")]
        checks = {what: (met, fig) for what, met, fig in report.target_checks(comps)}
        met, fig = checks["pascal-win64 pas_memsize: <= 1.2x the C export's time"]
        self.assertFalse(met)
        self.assertIn("0.13x short of 0.83x", fig)

    def test_the_targets_of_the_second_round(self):
        comps = [
            comparison("pascal-win32", "pas_mixed", "fastmm4avx", 5.0, "peak-working-set"),
            comparison("pascal-win64", "pas_realloc_grow", "fastmm4avx", 30.0, "peak-working-set"),
            comparison("win64", "large_alloc_free", "rpmalloc", -40.0, "peak-working-set"),
            comparison("win64", "realloc_inplace", "fastmm-c-purec", 3.0, "peak-working-set"),
            comparison("win32", "realloc_inplace", "fastmm-c-purec", 8.0, "peak-working-set"),
            comparison("win64", "medium_churn", "mimalloc", 80.0, "peak-working-set", 30e6, 20e6),
            comparison("win64", "medium_churn", "rpmalloc", 60.0, "peak-working-set", 15e6, 20e6),
            comparison("win64", "medium_churn", "fastmm-c-unchecked", 0.0, "peak-working-set",
                       10e6, 20e6),
            comparison("native", "fc_mt_alloc_realloc", "mimalloc", -18.0, "peak-rss"),
        ]
        checks = {what: (met, fig) for what, met, fig in report.target_checks(comps)}
        # At most 0.8x FastMM4-AVX's time: a speed ratio of at least 1.25.
        met, fig = checks["pascal-win32 pas_mixed: <= 0.8x FastMM4-AVX's time"]
        self.assertFalse(met)
        self.assertIn("0.20x short of 1.25x", fig)
        self.assertTrue(checks["pascal-win64 pas_realloc_grow: <= 0.8x FastMM4-AVX's time"][0])
        # Within twice rpmalloc's time: 0.60x is met, as 0.49x would not be.
        self.assertTrue(checks["win64 large_alloc_free: <= 2x rpmalloc's time"][0])
        # Measurably faster: the whole interval above 1.0x (the made-up interval is +-5 points).
        met, fig = checks["win64 realloc_inplace: the NASM entry faster than the C path"]
        self.assertFalse(met)
        self.assertIn("the interval reaches 1.0x", fig)
        self.assertTrue(checks["win32 realloc_inplace: the NASM entry faster than the C path"][0])
        self.assertTrue(checks["win64 medium_churn: >= rpmalloc"][0])
        self.assertFalse(checks["native fc_mt_alloc_realloc: >= mimalloc"][0])
        # The peak against the best peer, not against fastmm-c's own yardstick's 10 MB.
        met, fig = checks["win64 medium_churn: peak memory no worse than the best peer"]
        self.assertFalse(met)
        self.assertIn("vs rpmalloc", fig)
        # Nothing measured, nothing reported.
        self.assertNotIn("win32 medium_churn: >= mimalloc", checks)
        self.assertNotIn("win32 medium_churn: peak memory no worse than the best peer", checks)

    def test_every_memory_table_names_its_figure(self):
        r = result()
        checks = report.write_results(self.dir, r)
        with open(os.path.join(self.dir, "results.json")) as f:
            self.assertEqual(json.load(f), r)
        with open(os.path.join(self.dir, "results.md")) as f:
            md = f.read()
        for text in (md, report.terminal_report(r, checks)):
            for platform, kind in (("native", "peak-rss: the peak resident set, VmHWM"),
                                   ("win64", "peak-working-set: PeakWorkingSetSize, which Wine "
                                             "takes from the process's VmHWM")):
                self.assertIn("%s: peak memory above the base (%s)" % (platform, kind), text)
        # The table of every comparison has a column saying which figure each row's is.
        header = next(line for line in md.splitlines() if line.startswith("| target | workload"))
        self.assertIn("| peak mem figure |", header)
        self.assertRegex(md, r"\| win64 \| mixed \| heapalloc \| 5 \|[^\n]*\| peak-working-set \|")
        self.assertRegex(md, r"\| native \| mixed \| glibc \| 5 \|[^\n]*\| peak-rss \|")
        self.assertIn("FAILED: heapalloc failed: boom", md)
        self.assertIn("No instruction counts in this run.", md)

    def test_gain_tables(self):
        text = report.platform_tables(result(), False)
        self.assertRegex(text, r"small_churn_lifo +\+40\.0% \[\+35,\+45\] +n/a +\+5\.0% \[\+0,\+10\]")
        self.assertRegex(text, r"string_append +FAILED")
        md = report.platform_tables(result(), True)
        self.assertIn("| workload | vs glibc | instr | vs mimalloc | instr |", md)

    def test_chart(self):
        path = os.path.join(self.dir, "chart.png")
        note = chart.make_chart(result(), path)
        try:
            import matplotlib  # noqa: F401 (Debian's python3-matplotlib)
        except ImportError:
            self.assertIn("python3-matplotlib is not installed", note)
            return
        self.assertIsNone(note)
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()


class ContractPriceTest(unittest.TestCase):
    """The validation contract's price against the unchecked yardstick: the geometric mean of the
    single-thread workloads' time ratios, and the worst workload with its interval."""

    def test_geomean_and_worst(self):
        # fastmm-c 2% and 8% slower on two single-thread workloads (gain = 1/cost - 1), and a
        # two-thread workload that counts only for the worst case.
        comps = [
            comparison("win32", "small_churn_lifo", "fastmm-c-unchecked", (1 / 1.02 - 1) * 100,
                       "peak-working-set"),
            comparison("win32", "mixed", "fastmm-c-unchecked", (1 / 1.08 - 1) * 100,
                       "peak-working-set"),
            comparison("win32", "mt_churn", "fastmm-c-unchecked", 0.0, "peak-working-set"),
        ]
        checks = report.contract_checks(comps)
        self.assertEqual(len(checks), 2)
        geo, worst = checks
        self.assertIn("geometric mean of 2 single-thread", geo[0])
        self.assertEqual(geo[2], "%+.1f%%" % (((1.02 * 1.08) ** 0.5 - 1) * 100))
        self.assertFalse(geo[1])  # +5.0% > 3%
        self.assertFalse(worst[1])
        self.assertTrue(worst[2].startswith("worst mixed +8.0% ["), worst[2])

    def test_no_yardstick_no_check(self):
        self.assertEqual(report.contract_checks(
            [comparison("native", "mixed", "mimalloc", 5.0, "peak-rss")]), [])
